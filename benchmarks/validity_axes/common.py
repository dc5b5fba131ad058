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


# What the fourth edition measured for each claim (docs/validity.json at 6e1e418), shown beside
# the fifth edition's verdict; a claim new in the fifth edition has none.
EDITION4 = {
    "divergence": "holds (ρ = -0.961 over 12 points)",
    "novelty": "does not hold (mean difference 0.192 over 2 splits; 3 needed)",
    "gap:reverse_string": "holds (ID 0.984, OOD 0.039)",
    "gap:parity_check": "holds (ID 0.996, OOD 0.564; 1/2 seeds learned)",
    "gap:bucket_sort": "holds (ID 0.999, OOD 0.394)",
    "gap:addition": "holds (ID 0.987, OOD 0.000)",
    "positions": "holds (rope OOD 0.039; alibi, nope not learned)",
    "traces": "does not hold (OOD answer EM: answer-only 0.564, fine 0.242)",
    "inductive": "does not hold (OOD answer EM: answer-only 0.564, fine 0.242, inductive 0.326)",
    "randomized": "not learned (reverse_string randomized ID 0.53 at the 4,000-step cap)",
    "abacus": "not learned (abacus ID 0.31; operands written most significant digit first)",
    "regular:parity_check": "holds (lstm 1.000; transformer not learned)",
    "regular:even_pairs": "holds (lstm 1.000, transformer 0.649)",
    "regular:cycle_navigation": "does not hold (lstm 0.362, transformer 0.426)",
    "context_free:reverse_string": "holds (stack_rnn 1.000; lstm not learned, transformer 0.571)",
    "context_free:stack_manipulation": "holds (stack_rnn 1.000; lstm, transformer not learned)",
    "reversal": "holds (forward 0.997, reversed 0.007, chance 0.010)",
    "diversity": "not learned (ID 0.56-0.87 at the 3,000-step cap, 2,000 train records; OOD 0.10 → 0.31)",
    "monotone": "holds (effect 0.5: -0.003, 0.8: 0.055, 0.95: 0.415, 1: 0.469; 2 seeds)",
    "size": "holds (effect at rho 1: 0.469; 2 seeds)",
    "interpolation:reverse_string": "not learned (ID 0.48, 0.19 at the 4,000-step cap)",
    "interpolation:parity_check": "holds (between 0.972, beyond 0.644)",
    "delay": "does not hold (f=0.5: held-out never ≥ 0.95 within 5,000 steps)",
    "fraction": "does not hold (f=0.7 ended at 0.9497 held-out, one pair short of 0.95)",
}
