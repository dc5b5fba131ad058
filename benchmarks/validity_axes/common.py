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


# What the ninth edition measured for each claim (docs/validity.json at a7774e0), shown beside the tenth edition's verdict.
PREVIOUS = {
    "divergence": "holds (ρ = -0.933 over 12 points, p = 0.0000)",
    "novelty": "does not hold (mean difference 0.180 over 2 splits (smallest 0.045))",
    "gap:reverse_string": "holds (ID 0.983, OOD 0.031, gap 0.952)",
    "gap:parity_check": "holds (ID 0.958, OOD 0.572, gap 0.386)",
    "gap:bucket_sort": "holds (ID 0.969, OOD 0.327, gap 0.642)",
    "gap:addition": "holds (ID 0.997, OOD 0.000, gap 0.997)",
    "positions": "holds (OOD exact match: rope 0.031, alibi 0.000 (not learned), nope 0.000 (not learned))",
    "traces": "does not hold (OOD answer EM: answer-only 0.572, fine 0.273, difference -0.299)",
    "inductive": "does not hold (OOD answer EM: answer-only 0.572, fine 0.273, inductive 0.146, margin -0.426)",
    "randomized": "holds (length score: reverse_string: randomized 0.724, rope 0.674, nope 0.593 (not learned); parity_check: randomized 0.753, rope 0.578, nope 0.677)",
    "abacus": "does not hold (OOD exact match: rope 0.000, abacus 0.032 (ID 0.962), difference 0.032)",
    "regular:parity_check": "holds (length score: lstm 1.000, transformer 0.504 (not learned))",
    "regular:even_pairs": "holds (length score: lstm 1.000, transformer 0.494)",
    "regular:cycle_navigation": "does not hold (length score: lstm 0.366, transformer 0.305)",
    "context_free:reverse_string": "holds (length score: stack_rnn 1.000, lstm 0.657 (not learned), transformer 0.566)",
    "context_free:stack_manipulation": "holds (length score: stack_rnn 1.000, lstm 0.691 (not learned), transformer 0.561 (not learned))",
    "reversal": "holds (forward 1.000, reversed 0.010, chance 0.010)",
    "diversity": "not learned (OOD 0.099 / 0.142 / 0.246 / 0.336 for N=4, N=12, N=36, N=78; ρ = 0.973, gain 0.237)",
    "monotone": "holds (effect by rho 0.5: -0.015, 0.8: 0.019, 0.95: 0.411, 1: 0.458; ρ = 0.922)",
    "size": "holds (effect at rho 1: 0.458)",
    "interpolation:reverse_string": "holds (between 0.793, beyond 0.011, difference 0.783)",
    "interpolation:parity_check": "does not hold (between 1.000, beyond 0.876, difference 0.124)",
    "delay": "does not hold (no seed's held-out pairs reached 0.95 within 5,000 steps)",
    "fraction": "holds (first step held-out ≥ 0.95: f=0.3: never, f=0.5: never, f=0.7: 4,650)",
    "fresh:same": "holds (OOD exact match: cited 0.422, fresh 0.404, difference -0.018)",
    "local:unseen": "does not hold (exact match: no unseen local structure 0.957 (1426 records), ≥ 1 0.923 (664), difference 0.033)",
    "diverse:template": "holds (OOD exact match: random 0.140, diverse 0.173)",
    "cfq:mcd": "not learned (OOD exact match: random 0.849, mcd1-3 0.342 / 0.340 / 0.283 (mean 0.322), drop 0.527)",
    "cfq:divergence": "not learned (ρ = -0.857 over 7 configs, p = 0.012)",
    "fresh:memorized": "not learned (OOD exact match: cited (seen in training) 0.618, fresh 0.674, drop -0.056; the contaminated model fit the cited part it trained on only to 0.618)",
}

# -- edition 10: equal seeds and budgets, the selected checkpoint, intervals over seeds ---------

SEEDS = (0, 1, 2)  # every arm of a claim, losing arms included
CHEAP_SEEDS = (0, 1, 2, 3, 4)  # claims whose every run costs under 2 CPU min
LEVEL = 0.95  # the level of every interval (validity_stats.bootstrap)
SELECTED = Learned(threshold=0.95, stop=False, select=True, over="train_lengths")  # edition 10's learned rule
SELECTED_EXACT = Learned(threshold=0.99, stop=False, select=True, over="train_lengths")  # the Deletang axis: (near) perfect
SMOKE_SEEDS = (0, 1, 2)


def groups(figures: Any, key: Any, labels: Sequence[str] | None = None, learned_only: bool = True) -> dict[str, list[float]]:
    """label -> the figure ``key`` of each (learned) seed of that arm (all seeds when none learned)."""
    return {label: figures[label].values(key, learned_only) for label in (labels if labels is not None else list(figures))}


def paired(figures: Any, a: str, b: str, key_a: Any, key_b: Any = None) -> list[float]:
    """Per seed that learned in both arms (all common seeds when none did), key_a of arm a minus key_b of arm b
    (the same model scored two ways, or two arms of one seed)."""
    key_b = key_b if key_b is not None else key_a
    pick = lambda key, seed: key(seed) if callable(key) else seed.get(key)  # noqa: E731
    fa, fb = figures[a], figures[b]
    learned = {s["seed"] for s in fa.learned_seeds} & {s["seed"] for s in fb.learned_seeds}
    common = learned or ({s["seed"] for s in fa.seeds} & {s["seed"] for s in fb.seeds})
    by_a = {s["seed"]: pick(key_a, s) for s in fa.seeds}
    by_b = {s["seed"]: pick(key_b, s) for s in fb.seeds}
    return [float(by_a[s]) - float(by_b[s]) for s in sorted(common) if by_a.get(s) is not None and by_b.get(s) is not None]


def stat_text(name: str, interval: Any) -> str:
    """``name value [low, high]`` of an Interval."""
    return f"{name} {interval.text()}"


def compare(figures: Any, key: Any, a: str, b: str) -> tuple[Any, float | None, float | None]:
    """(the 95 % interval of mean(a) - mean(b) over the arms' learned seeds, mean(a), mean(b)) of a figure ``key``."""
    from validity_stats import bootstrap, difference, mean as mean_of

    values = groups(figures, key, [a, b])
    return bootstrap(values, difference(a, b), LEVEL), mean_of(values[a]), mean_of(values[b])
