"""The vectorized swap screen agrees with the exact one-swap evaluation of the MCD search."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gengap.splits.mcd import TEST, TRAIN, UNUSED, _Side, _SparseRows
from gengap.splits.swap_screen import SCREEN_MARGIN, SwapScreen

KINDS = [(TEST, UNUSED), (TRAIN, UNUSED), (TRAIN, TEST)]


def _rows(rng: np.random.Generator, n: int, vocabulary: int, largest: int) -> list[dict[str, float]]:
    """n examples, each with 1-6 items drawn from the vocabulary and counts 1..largest."""
    rows = []
    for _ in range(n):
        items = rng.choice(vocabulary, size=int(rng.integers(1, min(6, vocabulary) + 1)), replace=False)
        rows.append({f"k{int(k)}": int(rng.integers(1, largest + 1)) for k in items})
    return rows


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    vocabulary=st.integers(2, 40),
    largest=st.sampled_from([1, 3, 40]),
    alpha=st.sampled_from([0.1, 0.5]),
)
def test_screen_equals_the_exact_evaluation_of_each_swap(seed: int, vocabulary: int, largest: int, alpha: float) -> None:
    rng = np.random.default_rng(seed)
    n = 40
    counters = _rows(rng, n, vocabulary, largest)
    rows = _SparseRows(counters)
    assignment = rng.permutation(np.repeat(np.array([UNUSED, TRAIN, TEST], dtype=np.int8), [10, 20, 10]))
    side = _Side(rows, alpha, assignment)
    screen = SwapScreen(rows, alpha)
    for first, second in KINDS:
        xs = rng.choice(np.flatnonzero(assignment == first), size=25)
        ys = rng.choice(np.flatnonzero(assignment == second), size=25)
        to_train = (second == TRAIN) - (first == TRAIN)
        to_test = (second == TEST) - (first == TEST)
        divergence, unseen = screen.evaluate(
            side.train_array, side.test_array, side.chernoff_sum, side.train_total, side.test_total,
            xs, ys, to_train, to_test, count_unseen=True,
        )
        for i, (x, y) in enumerate(zip(xs.tolist(), ys.tolist())):
            exact, _, _, _, touched = side.evaluate_swap(x, y, to_train, to_test)
            assert abs(divergence[i] - exact) < SCREEN_MARGIN / 100
            assert unseen[i] == side.unseen_change(touched)


def test_screen_of_an_empty_batch_and_a_swap_of_identical_rows() -> None:
    rows = _SparseRows([{"a": 2, "b": 1}, {"a": 2, "b": 1}, {"c": 1}, {"a": 1, "c": 3}])
    assignment = np.array([TRAIN, TEST, TRAIN, TEST], dtype=np.int8)
    side = _Side(rows, 0.1, assignment)
    screen = SwapScreen(rows, 0.1)
    state = (side.train_array, side.test_array, side.chernoff_sum, side.train_total, side.test_total)
    empty = np.array([], dtype=np.int64)
    divergence, unseen = screen.evaluate(*state, empty, empty, -1, 1, count_unseen=True)
    assert divergence.shape == (0,) and unseen is not None and unseen.shape == (0,)
    divergence, _ = screen.evaluate(*state, np.array([0]), np.array([1]), -1, 1)  # same items both ways: no change
    assert divergence[0] == pytest.approx(side.current(), abs=1e-12)


def test_counts_must_be_non_negative_integers() -> None:
    for bad in ({"a": 1.5}, {"a": -1}):
        rows = _SparseRows([{"b": 1}, bad])
        with pytest.raises(ValueError, match="non-negative integers"):
            SwapScreen(rows, 0.5)
