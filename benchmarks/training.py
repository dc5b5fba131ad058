"""Training throughput of the baselines loop against a plain hand-written PyTorch loop.

    python benchmarks/training.py                        # tiny and small presets, available device
    python benchmarks/training.py --presets tiny --steps 500 --device cpu
    python benchmarks/training.py --archs all --presets tiny --device cpu   # every architecture

For each architecture and preset: one model object and one stream of batches (reverse_string,
lengths 1..--max-length). The baselines loop (``Run.run_seed`` of ``gengap.baselines.training``, as
``gengap train`` runs it, with evaluation only at the end and outside the timing) and a plain
loop (forward, masked cross-entropy, backward, clipping, AdamW, LR schedule; batches built
before the clock starts) train the same model object on the same batches; each is timed
twice after a warm-up and the better figure kept. Prints tokens/s (non-padding tokens) and
the ratio baselines / plain (>= 0.9 expected). On the CPU both run on one thread in fp32; on
CUDA both use bf16 autocast, fused AdamW and the same (compiled unless --no-compile) module.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from gengap.baselines.architectures import ARCHITECTURES  # noqa: E402
from gengap.baselines.data import load_split  # noqa: E402
from gengap.baselines.training import (  # noqa: E402
    IGNORE,
    DataOrder,
    Run,
    TrainSettings,
    Trainer,
    device_name,
    lr_factor,
    pick_device,
)
from gengap.generators.seeding import data_seed_of, init_seed_of  # noqa: E402
from gengap.splits import sample_length_split  # noqa: E402

DEFAULT_STEPS = {"cpu": {"tiny": 300, "small": 40, "base": 10}, "cuda": {"tiny": 1000, "small": 1000, "base": 500}}
SLOW_ON_CPU = {"stack_rnn": 4, "tape_rnn": 4, "looped": 4}  # default steps divided by this (a Python loop per token or iteration)


def plain_loop(model: torch.nn.Module, forward, batches, settings: TrainSettings, device: torch.device) -> float:
    """tokens/s of a straightforward loop over prepared batches."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.lr, betas=(0.9, 0.95), weight_decay=settings.weight_decay,
                                  **({"fused": True} if device.type == "cuda" else {}))
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda i: lr_factor(i, settings.warmup, settings.steps, settings.min_lr_ratio))
    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda" else torch.autocast("cpu", enabled=False)
    tokens = sum(count for _, _, count in batches)
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for ids, labels, _ in batches:
        with autocast:
            logits = forward(ids)
        loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=IGNORE)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), settings.grad_clip)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad(set_to_none=True)
    if device.type == "cuda":
        torch.cuda.synchronize()
    return tokens / (time.perf_counter() - start)


def bench(arch: str, preset: str, steps: int, data, device: torch.device, compile_model: bool | None) -> dict:
    settings = TrainSettings(arch=arch, preset=preset, steps=steps, eval_every=steps, eval_examples=4, eval_limit=4,
                             device=str(device), compile=compile_model).resolve()
    run = Run(data, settings, device, None, progress=False, callback=None)
    model = run.new_model(init_seed_of(0))
    order = DataOrder(run.train.size, settings.batch_size, data_seed_of(0))
    batches = [run.train.batch(order.indices(step)) for step in range(1, steps + 1)]
    forward = Trainer(model, run.train, settings, device, run.compile).forward  # the same module object
    plain_loop(model, forward, batches[: min(20, steps)], settings, device)  # warm-up (and compilation)
    ours, plain = [], []
    for _ in range(2):
        result = run.run_seed(0, resume=False, model=model)
        ours.append(result["tokens_per_s"])
        plain.append(plain_loop(model, forward, batches, settings, device))
    return {"arch": arch, "preset": preset, "steps": steps, "parameters": model.n_parameters(), "batch": settings.batch_size,
            "ours": max(ours), "plain": max(plain)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", default="tiny,small", help="comma-separated presets (default tiny,small)")
    parser.add_argument("--archs", default="transformer", help=f"comma-separated architectures, or all (default transformer): {', '.join(ARCHITECTURES)}")
    parser.add_argument("--steps", type=int, help="timed steps per loop (default: per device and preset)")
    parser.add_argument("--max-length", type=int, default=16, help="longest training input (default 16)")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--compile", action=argparse.BooleanOptionalAction, default=None, help="torch.compile (default: on CUDA)")
    args = parser.parse_args()

    device = pick_device(args.device)
    if device.type == "cpu":
        torch.set_num_threads(1)
    split = sample_length_split("reverse_string", (1, args.max_length), (args.max_length + 1, args.max_length + 4),
                                {"train": 4000, "validation": 8, "test": 8}, seed=0)
    data = load_split(split, "reverse_string")
    print(f"device {device_name(device)}, threads {torch.get_num_threads()}, reverse_string lengths 1..{args.max_length}")
    archs = ARCHITECTURES if args.archs == "all" else tuple(args.archs.split(","))
    print(f"{'arch':<12} {'preset':<7} {'params':>9} {'batch':>5} {'steps':>6} {'baselines tok/s':>16} {'plain tok/s':>12} {'ratio':>6}")
    for arch in archs:
        for preset in args.presets.split(","):
            default = DEFAULT_STEPS["cuda" if device.type == "cuda" else "cpu"].get(preset, 50)
            steps = args.steps or max(10, default // (SLOW_ON_CPU.get(arch, 1) if device.type == "cpu" else 1))
            row = bench(arch, preset, steps, data, device, args.compile)
            print(f"{row['arch']:<12} {row['preset']:<7} {row['parameters']:>9,} {row['batch']:>5} {row['steps']:>6} {row['ours']:>16,.0f} "
                  f"{row['plain']:>12,.0f} {row['ours'] / row['plain']:>6.2f}", flush=True)


if __name__ == "__main__":
    main()
