"""The GPU protocol's running time from per-step arithmetic (benchmarks/gpu_protocol.py --estimate;
benchmarks/gpu_check.py puts its measured costs in the same formulas).

The models of the protocols are small: a training step is a few hundred to tens of thousands of
small eager operations (the recurrent models loop over tokens in Python), each nearly one CUDA
kernel. So a step costs, in one process,

    host  = operations x H          (H: the host's cost of one eager operation, Python and dispatch)
    gpu   = operations x K + FLOPs / F   (K: a small kernel's time on the GPU; F: bf16 matmul throughput)
    step  = max(host, gpu)

and W processes sharing the GPU (no step synchronises, so each queues ahead) take, for the
protocol's steps, ``max(sum(steps x step) / W, sum(steps x gpu), the longest run's steps x step)``:
the host side divides among the workers until the GPU is busy with the kernels of all of them,
and no run goes faster than its own steps one after another. Evaluation and the
split building come on top (stated per protocol). The operation counts are counted on the CPU
(gengap.baselines.probes.count_operations) at the protocol's sequence lengths; H, K and F are
assumptions until gpu_check.py measures them: ``ASSUMED`` below.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class Costs:
    """Per-operation costs (seconds) and matmul throughput (FLOP/s) of a GPU machine."""

    host: float  # H: one eager operation on the host
    kernel: float  # K: one small kernel on the GPU
    flops: float  # F: bf16 matrix-product throughput at these sizes


# Assumed for one H200 and its host, never measured (gpu_check.py measures H and the concurrent
# throughput): eager PyTorch costs 6-12 us of host time per operation, a small kernel 2-3 us of
# GPU time, small bf16 matrix products reach ~100 TFLOP/s.
ASSUMED = (Costs(host=6e-6, kernel=2e-6, flops=1e14), Costs(host=12e-6, kernel=3e-6, flops=1e14))


@dataclass(frozen=True)
class StepLoad:
    """One kind of run of a protocol: its operations and FLOPs per step, and its steps in all."""

    name: str
    operations: int
    flops: float
    steps: int  # summed over every run of this kind
    runs: int = 0  # how many runs share those steps (0: enough to keep every worker busy)


def step_seconds(load: StepLoad, costs: Costs) -> tuple[float, float]:
    """(seconds of one step in one process, seconds of GPU work of one step)."""
    gpu = load.operations * costs.kernel + load.flops / costs.flops
    return max(load.operations * costs.host, gpu), gpu


def training_seconds(loads: Sequence[StepLoad], workers: int, costs: Costs) -> float:
    """Seconds to train every step of loads with ``workers`` processes sharing one GPU."""
    alone = sum(load.steps * step_seconds(load, costs)[0] for load in loads)
    busy = sum(load.steps * step_seconds(load, costs)[1] for load in loads)
    longest = max((load.steps / load.runs * step_seconds(load, costs)[0] for load in loads if load.runs), default=0.0)
    return max(alone / max(workers, 1), busy, longest)  # no run goes faster than its own steps one after another


def matmul_flops(parameters: int, tokens: int) -> float:
    """FLOPs of a training step's matrix products: 6 x parameters x tokens (forward and backward)."""
    return 6.0 * parameters * tokens
