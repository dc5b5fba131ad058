"""Whether a fresh test part's input lengths follow the cited part's (a two-sample KS statistic).

A fresh part excludes every input of the release, so where the release already holds most of
the short inputs a task can make (cfq_like's short questions), the fresh part is longer, and
harder, than the part it stands in for. :func:`length_shift` compares the input lengths (tokens,
``difficulty.input_length``) of the two parts by the two-sample Kolmogorov-Smirnov statistic D
(the largest gap between their empirical distribution functions) and flags a shift when D
exceeds the larger of two bounds fixed before any measurement: ``LENGTH_KS_BOUND`` (0.1: a
tenth of the records moved across some length), and the KS test's critical value at level
``LENGTH_KS_ALPHA`` (0.01) for the two sizes, ``c(alpha) sqrt((n + m) / (n m))`` with
``c(alpha) = sqrt(-ln(alpha / 2) / 2)``, so that small parts are not flagged for sampling noise
alone. :func:`shift_warning` is the one-line warning (fresh.json's ``warnings``, the console).
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping, Sequence

LENGTH_KS_BOUND = 0.1
LENGTH_KS_ALPHA = 0.01


def input_lengths(records: Iterable[Mapping[str, Any]]) -> list[int]:
    """Each record's input length in tokens (its measured ``difficulty.input_length`` when it has one)."""
    found = []
    for record in records:
        difficulty = record.get("difficulty")
        length = difficulty.get("input_length") if isinstance(difficulty, Mapping) else None
        found.append(int(length) if isinstance(length, int) else len(str(record.get("input", "")).split()))
    return found


def ks_statistic(a: Sequence[int], b: Sequence[int]) -> float:
    """The two-sample Kolmogorov-Smirnov statistic: max over x of |F_a(x) - F_b(x)| (0.0 if a side is empty)."""
    if not a or not b:
        return 0.0
    xs, ys = sorted(a), sorted(b)
    i = j = 0
    best = 0.0
    for value in sorted(set(xs) | set(ys)):
        while i < len(xs) and xs[i] <= value:
            i += 1
        while j < len(ys) and ys[j] <= value:
            j += 1
        best = max(best, abs(i / len(xs) - j / len(ys)))
    return best


def critical_value(n: int, m: int, alpha: float = LENGTH_KS_ALPHA) -> float:
    """The KS test's asymptotic critical value at level alpha for sizes n and m."""
    return math.sqrt(-math.log(alpha / 2) / 2) * math.sqrt((n + m) / (n * m)) if n and m else math.inf


def _summary(lengths: Sequence[int]) -> dict[str, float]:
    ordered = sorted(lengths)
    middle = len(ordered) // 2
    median = (ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2) if ordered else 0
    return {"n": len(ordered), "mean": sum(ordered) / len(ordered) if ordered else 0.0, "median": median}


def length_shift(cited: Iterable[Mapping[str, Any]], fresh: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """fresh.json's ``length_shift``: D, the bound it is held to, whether it exceeds it, and each part's lengths in brief."""
    a, b = input_lengths(fresh), input_lengths(cited)
    statistic = ks_statistic(a, b)
    bound = max(LENGTH_KS_BOUND, critical_value(len(a), len(b)))
    return {"statistic": "two-sample KS of input lengths", "ks": statistic, "bound": bound if math.isfinite(bound) else None,
            "exceeds": bool(math.isfinite(bound) and statistic > bound), "fresh": _summary(a), "cited": _summary(b)}


def shift_warning(shift: Mapping[str, Any]) -> str | None:
    """The one-line warning of a length shift that exceeds its bound; None otherwise."""
    if not shift.get("exceeds"):
        return None
    fresh, cited = shift["fresh"], shift["cited"]
    return (f"input lengths differ from the cited part's: two-sample KS {shift['ks']:.3f} > bound {shift['bound']:.3f} "
            f"(fresh: mean {fresh['mean']:.2f}, median {fresh['median']:g} tokens, n {fresh['n']:,}; "
            f"cited: mean {cited['mean']:.2f}, median {cited['median']:g} tokens, n {cited['n']:,}): "
            f"the fresh part may be harder or easier than the cited one")
