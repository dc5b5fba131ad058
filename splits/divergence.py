"""Atom and compound divergence (Keysers et al. 2020).

For frequency distributions P (train) and Q (test) over the same kind of items, the
Chernoff coefficient is C_a(P||Q) = sum_k p_k^a q_k^(1-a) and the divergence is
1 - C_a. Atom divergence uses a = 0.5 (symmetric), compound divergence a = 0.1 (train
first: a test compound that never occurs in train counts fully, a train compound that
never occurs in test barely). Counts are normalized to sum 1; empty distributions are an
error.
"""

from __future__ import annotations

from typing import Mapping

ATOM_ALPHA = 0.5
COMPOUND_ALPHA = 0.1


def chernoff_coefficient(train: Mapping[str, float], test: Mapping[str, float], alpha: float) -> float:
    """C_alpha(P||Q) of the normalized count mappings; P = train."""
    p_total = float(sum(train.values()))
    q_total = float(sum(test.values()))
    if p_total <= 0 or q_total <= 0:
        raise ValueError("divergence of an empty distribution")
    total = 0.0
    for key in train if len(train) <= len(test) else test:
        p = train.get(key, 0.0)
        q = test.get(key, 0.0)
        if p > 0 and q > 0:
            total += (p / p_total) ** alpha * (q / q_total) ** (1.0 - alpha)
    return min(total, 1.0)


def divergence(train: Mapping[str, float], test: Mapping[str, float], alpha: float) -> float:
    """1 - C_alpha(train || test), in [0, 1]."""
    return max(0.0, 1.0 - chernoff_coefficient(train, test, alpha))


def atom_divergence(train: Mapping[str, float], test: Mapping[str, float]) -> float:
    return divergence(train, test, ATOM_ALPHA)


def compound_divergence(train: Mapping[str, float], test: Mapping[str, float]) -> float:
    return divergence(train, test, COMPOUND_ALPHA)
