"""What a run actually executes: whether the model is compiled and in which precision it computes.

A run records these as they ran, not as they were asked for (``results.json``: ``compiled``,
``precision`` and ``execution``, gengap.baselines.training):

- **compile**: ``torch.compile`` applies to the transformer and the looped model (a forward
  pass of fixed structure). It is declined, with the reason recorded, for ``rnn`` and
  ``lstm`` (TorchDynamo does not trace ``nn.RNN`` / ``nn.LSTM`` modules: it would run them
  eagerly behind a graph break, so a "compiled" run would be an eager one) and for
  ``stack_rnn`` and ``tape_rnn`` (their per-token Python loop unrolls into one graph per
  sequence length: a recompilation for every new length, eager after TorchDynamo's recompile
  limit). Default: compiled on CUDA for the transformer only (as before).
- **precision**: ``bf16`` (and ``auto`` on CUDA) runs the transformer and the looped model
  under bf16 autocast (fp32 weights, gradients, optimizer state and loss; matrix products in
  bf16). The recurrent models (rnn, lstm, stack_rnn, tape_rnn) compute in fp32 whatever the
  setting: their recurrence runs with autocast disabled (gengap.baselines.sequence_model),
  because CUDA autocast casts cuDNN RNNs to fp16 whichever dtype is asked for, with no loss
  scaling, and would round the stack and the tape to bf16 at every token. They are bound by
  kernel launches, not arithmetic, so fp32 costs them little.

This module imports neither torch nor gengap's training code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

RECURRENT_FAMILY = ("rnn", "lstm", "stack_rnn", "tape_rnn")  # computed in fp32, outside autocast
COMPILE_DECLINED = {
    "rnn": "TorchDynamo does not trace nn.RNN modules (it would run them eagerly behind a graph break)",
    "lstm": "TorchDynamo does not trace nn.LSTM modules (it would run them eagerly behind a graph break)",
    "stack_rnn": "the per-token loop unrolls into one graph per sequence length (a recompilation per length, eager past the recompile limit)",
    "tape_rnn": "the per-token loop unrolls into one graph per sequence length (a recompilation per length, eager past the recompile limit)",
}
BF16_AUTOCAST, FP32 = "bf16-autocast", "fp32"


@dataclass(frozen=True)
class Execution:
    """How a run executes on its device (see the module doc)."""

    compile_requested: bool | None  # the setting: None is the default
    compiled: bool  # the model ran through torch.compile
    compile_note: str | None  # why a requested compile was declined
    precision_requested: str
    precision: str  # BF16_AUTOCAST or FP32: what the model computes in

    def to_json(self) -> dict[str, Any]:
        return {"compile_requested": self.compile_requested, "compiled": self.compiled, "compile_note": self.compile_note,
                "precision_requested": self.precision_requested, "precision": self.precision}


def autocast_on(precision: str, device_type: str) -> bool:
    """Whether the precision setting asks for bf16 autocast on this device type."""
    return precision == "bf16" or (precision == "auto" and device_type == "cuda")


def execution_of(arch: str, compile_setting: bool | None, precision: str, device_type: str) -> Execution:
    """What a run of ``arch`` executes with these settings on this device type."""
    wanted = compile_setting if compile_setting is not None else (device_type == "cuda" and arch == "transformer")
    declined = COMPILE_DECLINED.get(arch) if wanted else None
    ran = FP32 if arch in RECURRENT_FAMILY or not autocast_on(precision, device_type) else BF16_AUTOCAST
    return Execution(compile_setting, wanted and declined is None, declined, precision, ran)
