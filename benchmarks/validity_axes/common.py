"""Shared pieces of the axis specs: building arms, the learned rules, small statistics."""

from __future__ import annotations

import math
from typing import Any, Sequence

from validity_engine import Arm, Build, Learned, frozen

LEARNED = Learned(threshold=0.95, extra=0.25)  # the protocol's learned rule, unless a claim states another
EXACT = Learned(threshold=0.99, extra=0.25)  # the Deletang axis: the paper trains to (near) perfect train accuracy
BUILDERS = "validity_axes.builders"


def build(function: str, **args: Any) -> Build:
    return Build.of(f"{BUILDERS}:{function}", **args)


def arm(label: str, config: str, split: Build, seeds: Sequence[int], cost: float = 1.0, preset: str = "tiny", **train: Any) -> Arm:
    return Arm(label, config, split, frozen(train), tuple(seeds), preset=preset, cost=cost)


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    from gengap.baselines.report import spearman as rank_correlation

    return rank_correlation(list(xs), list(ys))


def permutation_p(xs: Sequence[float], ys: Sequence[float], observed: float, draws: int = 20000, seed: int = 0) -> float:
    """One-sided p-value of a Spearman correlation at or below ``observed`` under random pairing
    (ys permuted; a fixed seed, so the figure is reproducible)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    ys = list(ys)
    hits = 0
    for _ in range(draws):
        value = spearman(xs, [ys[i] for i in rng.permutation(len(ys))])
        hits += value is not None and value <= observed + 1e-12
    return (hits + 1) / (draws + 1)


def mean(values: Sequence[float]) -> float | None:
    values = [v for v in values if v is not None and not math.isnan(v)]
    return sum(values) / len(values) if values else None


def f3(value: Any) -> str:
    return "n/a" if value is None else f"{value:.3f}"
