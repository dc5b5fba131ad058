"""Measurements of one training step of a model, for the tests of the GPU path and benchmarks/gpu_check.py.

- :func:`dtypes_of_a_step`: the dtypes of every floating activation (each submodule's output),
  of the gradient flowing back into each, and of the parameters' gradients, over one forward
  and backward pass under bf16 autocast;
- :func:`step_on_meta`: whether a whole training step (batch, forward, backward, clipping,
  AdamW, schedule) runs on the meta device, where reading a tensor's value is an error: a step
  that does queues its work on CUDA without waiting for the GPU;
- :func:`count_operations`: the aten operations a call dispatches (on CUDA nearly one kernel
  launch each: the per-step cost of a small model is about this count times the host's cost
  of one eager operation).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from gengap.baselines.architectures import build
from gengap.baselines.settings import TrainSettings
from gengap.baselines.tokenizer import Tokenizer

Dtypes = tuple[set[torch.dtype], set[torch.dtype], set[torch.dtype], torch.dtype]


def dtypes_of_a_step(model: torch.nn.Module, ids: torch.Tensor) -> Dtypes:
    """(activation dtypes, activation-gradient dtypes, parameter-gradient dtypes, logits dtype) of one
    forward and backward pass of ids under bf16 autocast on their device (the gradients are left in
    the model's parameters)."""
    activations: set[torch.dtype] = set()
    gradients: set[torch.dtype] = set()

    def record(module: torch.nn.Module, inputs: Any, output: Any) -> None:
        for tensor in output if isinstance(output, tuple) else (output,):
            if isinstance(tensor, torch.Tensor) and tensor.is_floating_point():
                activations.add(tensor.dtype)
                if tensor.requires_grad:
                    tensor.register_hook(lambda grad: gradients.add(grad.dtype))

    handles = [m.register_forward_hook(record) for m in model.modules()]
    try:
        with torch.autocast(ids.device.type, dtype=torch.bfloat16):
            logits = model(ids)
        logits.float().logsumexp(-1).mean().backward()
    finally:
        for handle in handles:
            handle.remove()
    return activations, gradients, {p.grad.dtype for p in model.parameters() if p.grad is not None}, logits.dtype


def step_on_meta(arch: str, pos: str, steps: int = 2) -> str | None:
    """None when ``steps`` training steps of a small ``arch`` model run on the meta device, else the
    error's first line (a read of a tensor's value, say)."""
    from gengap.baselines.training import EncodedTrain, Trainer

    records = [{"input": "a b c", "target": "c b a"}, {"input": "b", "target": "b"}, {"input": "a c b a", "target": "a b c a"}] * 3
    tokenizer = Tokenizer.build([text for r in records for text in (r["input"], r["target"])])
    settings = TrainSettings(arch=arch, pos=pos, preset="tiny", steps=steps + 1, layers=1, d_model=16, heads=2,
                             iterations=2 if arch == "looped" else None, fused=False, precision="fp32").resolve()
    meta = torch.device("meta")
    model = build(settings.spec, len(tokenizer), 16, tokenizer.pad_id, tokenizer.sep_id).to(meta)
    data = EncodedTrain(records, tokenizer, meta)
    trainer = Trainer(model, data, settings, meta, compile_model=False)
    try:
        for step in range(1, steps + 1):
            ids, labels, _ = data.batch(np.arange(step, step + 4))
            trainer.step(ids, labels, step)
    except (RuntimeError, NotImplementedError) as err:
        return str(err).splitlines()[0] if str(err) else type(err).__name__
    return None


class _Counter(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        self.count += 1
        return func(*args, **(kwargs or {}))


def count_operations(call: Callable[[], Any]) -> int:
    """The aten operations call() dispatches (forward, backward and optimizer alike)."""
    with _Counter() as counter:
        call()
    return counter.count
