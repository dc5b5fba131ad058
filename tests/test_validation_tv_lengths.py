"""validation.tv_lengths: how far validation's input lengths are from train's (total variation over
(task, input length)), and the warning above TV_LENGTHS_MAX that names every exhausted length
(gengap.splits.validation)."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Sequence

import pytest
from hypothesis import given, strategies as st

from gengap.generators import get_task
from gengap.splits import SplitResult, generate_records, sample_length_split, split
from gengap.splits.validation import (
    TV_LENGTHS_MAX, apportion, exhausted, input_length, task_input, total_variation, tv_lengths, tv_warnings,
)

TV_WARNING = "in total variation from train's"


def toy(index: int, length: int, task: str = "toy") -> dict[str, Any]:
    return {"id": f"{task}-{index:016x}", "task": task, "input": " ".join(["t"] * length) + f" w{index}",
            "target": "x", "difficulty": {"input_length": length, "output_length": 1}}


def tv_of(train: dict[str, int], validation: dict[str, int]) -> float:
    """0.5 x sum |p - q| of two histograms, in floats (the test's own recomputation)."""
    a, b = sum(train.values()), sum(validation.values())
    return 0.5 * sum(abs(train.get(k, 0) / a - validation.get(k, 0) / b) for k in set(train) | set(validation))


def named_lengths(warning: str) -> set[int]:
    """The lengths a warning names after 'input length(s)' in its 'could not fill' clause: '1-7, 9' -> {1..7, 9}."""
    match = re.search(r"could not fill input lengths? ([0-9, -]+) in train's proportions", warning)
    assert match, warning
    out: set[int] = set()
    for item in match.group(1).split(", "):
        lo, _, hi = item.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def water_level(total: int, weights: Sequence[int], caps: Sequence[int]) -> float:
    """The level r at which sum(min(cap, r x weight)) = total (infinite when the caps cannot reach it), by bisection."""
    if sum(caps) < total:
        return float("inf")
    lo, hi = 0.0, max(c / w for c, w in zip(caps, weights)) + 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if sum(min(c, mid * w) for c, w in zip(caps, weights)) < total else (lo, mid)
    return hi


def tv_warning(result: SplitResult) -> list[str]:
    return [w for w in result.report["warnings"] if TV_WARNING in w]


# -- the reference case: even_pairs 1..10, a pool of 6,000, iid --------------------------------------


@pytest.fixture(scope="module")
def even_pairs() -> SplitResult:
    pool = generate_records("even_pairs", get_task("even_pairs").with_size(1, 10), 6000, 13)
    return split(pool, "iid", {}, seed=13)


def test_tv_lengths_of_even_pairs_is_large_and_recomputes(even_pairs: SplitResult) -> None:
    report = even_pairs.report
    tv = report["validation"]["tv_lengths"]
    assert tv > 0.7
    histograms = {part: report["parts"][part]["input_lengths"] for part in ("train", "validation")}
    assert abs(tv - tv_of(histograms["train"], histograms["validation"])) <= 0.5e-4 + 1e-12
    assert tv == round(tv, 4)
    records = {part: Counter(str(input_length(r)) for r in even_pairs.parts()[part]) for part in ("train", "validation")}
    assert abs(tv - tv_of(records["train"], records["validation"])) <= 0.5e-4 + 1e-12
    shares = {part: histograms[part]["10"] / sum(histograms[part].values()) for part in histograms}
    assert shares["validation"] > 0.5 > 0.1 > shares["train"]  # length 10 holds most of validation


def test_warning_names_every_exhausted_length(even_pairs: SplitResult) -> None:
    """Every length whose validation count is below its share at the proportional level (its
    single-occurrence inputs all taken) is named, not only those short of their first share."""
    report = even_pairs.report
    side = [*even_pairs.train, *even_pairs.validation]
    counts = Counter(task_input(r) for r in side)
    weights = Counter(input_length(r) for r in side)
    singles = Counter(input_length(r) for r in side if counts[task_input(r)] == 1)
    held = Counter(input_length(r) for r in even_pairs.validation)
    lengths = sorted(weights)
    level = water_level(report["validation"]["requested"], [weights[k] for k in lengths], [singles[k] for k in lengths])
    expected = {k for k in lengths if held[k] < level * weights[k]}
    assert all(held[k] == singles[k] for k in expected)  # validation holds every input they could give
    assert expected == set(range(1, 10))
    [warning] = tv_warning(even_pairs)
    assert f"{report['validation']['tv_lengths']:.4f}" in warning and str(TV_LENGTHS_MAX) in warning
    assert named_lengths(warning) == expected
    assert "input lengths 1-9 " in warning
    short = {int(k) for k in report["validation"]["short"]}
    assert short < expected and {8, 9} <= expected - short  # 8-9 met their first share, then ran out
    [shortfall] = [w for w in report["warnings"] if "could not give" in w]
    assert "lengths 8-9 ran out giving them too" in shortfall


# -- small when validation can follow train -------------------------------------------------------------


def test_sampled_length_split_with_room_has_small_tv_and_no_warning() -> None:
    result = sample_length_split("parity_check", (8, 20), (21, 40), {"train": 2000, "validation": 200, "test": 200}, seed=1)
    tv = result.report["validation"]["tv_lengths"]
    assert tv is not None and tv < TV_LENGTHS_MAX
    assert not tv_warning(result)


def test_sampled_length_split_from_length_one_is_warned() -> None:
    """parity_check 1..20: train holds every input of lengths 1-5 (2-32 inputs each), so validation misses ~23 %."""
    result = sample_length_split("parity_check", (1, 20), (21, 40), {"train": 2000, "validation": 200, "test": 200}, seed=1)
    report = result.report
    assert report["validation"]["tv_lengths"] > TV_LENGTHS_MAX
    [warning] = tv_warning(result)
    assert {int(k) for k in report["validation"]["short"]} <= named_lengths(warning)


def test_pool_split_of_long_inputs_has_small_tv() -> None:
    pool = generate_records("even_pairs", get_task("even_pairs").with_size(12, 20), 3000, 2)
    result = split(pool, "iid", {}, seed=2)
    assert result.report["validation"]["tv_lengths"] < TV_LENGTHS_MAX and not tv_warning(result)


def test_tv_lengths_is_none_without_validation() -> None:
    pool = generate_records("even_pairs", get_task("even_pairs").with_size(1, 10), 500, 1)
    result = split(pool, "iid", {"validation_fraction": 0}, seed=1)
    assert result.report["validation"]["tv_lengths"] is None and not tv_warning(result)
    assert tv_lengths([toy(0, 3)], []) is None and tv_lengths([], [toy(0, 3)]) is None


# -- the pieces ---------------------------------------------------------------------------------------


def test_tv_lengths_strata_are_task_and_length() -> None:
    """Same length histogram, different task mix: the distance is the task mix's."""
    train = [toy(i, 2, "a") for i in range(3)] + [toy(3 + i, 2, "b") for i in range(1)]
    validation = [toy(10 + i, 2, "a") for i in range(1)] + [toy(20 + i, 2, "b") for i in range(1)]
    assert tv_lengths(train, validation) == 0.25
    assert tv_lengths(train, train) == 0.0


def test_tv_warnings_by_hand() -> None:
    assert tv_warnings(None, [1]) == [] and tv_warnings(TV_LENGTHS_MAX, [1]) == []
    assert tv_warnings(0.5, [1, 2, 3, 5, 8, 9]) == [
        "validation: its input lengths are 0.5000 in total variation from train's, above the bound 0.2; "
        "validation could not fill input lengths 1-3, 5, 8-9 in train's proportions (it holds all they could give)"]
    assert "input length 4 in" in tv_warnings(0.3, [4])[0]
    assert tv_warnings(0.3, [])[0].endswith("; no input length ran out")


def test_exhausted_by_hand() -> None:
    assert exhausted(10, [1, 1, 2], [1, 9, 9]) == [True, False, False]  # level 3: the first's cap 1 < 3
    assert exhausted(10, [1, 1, 1], [0, 2, 20]) == [True, True, False]  # length 1 gives 0, length 2 runs out at 2
    assert exhausted(10, [1, 1], [2, 3]) == [True, True]  # the caps cannot reach the total
    assert exhausted(10, [0, 3], [0, 20]) == [False, False]
    assert exhausted(4, [1, 1], [2, 2]) == [False, False]  # exactly filled at the level


@given(st.integers(0, 300), st.lists(st.tuples(st.integers(0, 40), st.integers(0, 60)), min_size=1, max_size=10))
def test_short_entries_are_exhausted(total: int, pairs: list[tuple[int, int]]) -> None:
    weights, caps = [w for w, _ in pairs], [c for _, c in pairs]
    flags = exhausted(total, weights, caps)
    free = apportion(total, weights)
    assert all(flags[i] for i in range(len(pairs)) if weights[i] and caps[i] < free[i])
    assert not any(flags[i] for i in range(len(pairs)) if weights[i] == 0)


histograms = st.dictionaries(st.integers(1, 12), st.integers(0, 30), min_size=1, max_size=8).filter(lambda h: sum(h.values()) > 0)


@given(histograms, histograms)
def test_total_variation_is_a_bounded_symmetric_distance(p: dict[int, int], q: dict[int, int]) -> None:
    tv = total_variation(Counter(p), Counter(q))
    assert 0.0 <= tv <= 1.0
    assert tv == total_variation(Counter(q), Counter(p))
    assert total_variation(Counter(p), Counter(p)) == 0.0
    assert total_variation(Counter(p), Counter({k: 3 * v for k, v in p.items()})) == 0.0  # proportions, not counts
    assert abs(tv - tv_of({str(k): v for k, v in p.items()}, {str(k): v for k, v in q.items()})) <= 0.5e-4 + 1e-12
    if not set(k for k, v in p.items() if v) & set(k for k, v in q.items() if v):
        assert tv == 1.0  # disjoint supports
