"""Vectorized evaluation of many candidate swaps at once, for the MCD local search.

A swap exchanges example x of one set with example y of another (see ``gengap.splits.mcd``). For
a batch of B swaps against the same current counts, :meth:`SwapScreen.evaluate` returns the
divergence each swap alone would give and, optionally, how many test items would lose their
last train occurrence minus how many would gain one. It gathers the items of every x and y,
merges the two rows of each pair (one sort of (pair, item, weight) codes packed into int64),
and looks the Chernoff terms c^a d^(1-a) up in power tables, so its cost is a few numpy
calls per batch instead of a Python loop per swap.

Counts must be integers (atoms and compounds are occurrence counts): the tables are indexed
by count. The result is a screen, not a decision: floating-point rounding differs from the
exact per-swap evaluation (``_Side.evaluate``) by far less than SCREEN_MARGIN, and callers
confirm every candidate the screen passes with that exact evaluation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

SCREEN_MARGIN = 1e-9  # a swap passes the screen when its estimated gain is above -margin


def row_positions(indptr: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(index into rows, flat position) of every item of the given CSR rows, in row order."""
    starts = indptr[rows]
    lengths = indptr[rows + 1] - starts
    owner = np.repeat(np.arange(len(rows)), lengths)
    return owner, np.arange(int(lengths.sum())) + np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)


class SwapScreen:
    """Rows of one kind of item (atoms or compounds) in CSR form, with power tables."""

    def __init__(self, rows: Any, alpha: float) -> None:
        """rows: per-example sparse vectors with ``indptr``, ``flat_indices``, ``flat_values``,
        ``row_totals``, ``size`` and ``numpy_powers`` (``gengap.splits.mcd._SparseRows``)."""
        self.indptr = rows.indptr
        self.items = rows.flat_indices
        flat = rows.flat_values
        self.weights = flat.astype(np.int32, copy=False)
        if not np.array_equal(self.weights, flat) or (self.weights < 0).any():
            raise ValueError("atom and compound counts must be non-negative integers")
        self.row_totals = rows.row_totals
        self.size = size = rows.size
        self.alpha = alpha
        largest = int(self.weights.max()) if len(self.weights) else 0
        self.weight_bits = max(1, (2 * largest).bit_length())  # codes hold weights in [-largest, largest]
        self.offset = 1 << (self.weight_bits - 1)
        self.train_power, self.test_power = rows.numpy_powers(alpha)  # indexed by count, up to the largest item total + 1

    def evaluate(
        self,
        train: np.ndarray,
        test: np.ndarray,
        chernoff_sum: float,
        train_total: float,
        test_total: float,
        xs: np.ndarray,
        ys: np.ndarray,
        to_train: int,
        to_test: int,
        count_unseen: bool = False,
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Divergence after each swap i (x_i changes train count by ``to_train`` and test by
        ``to_test`` times its weights; y_i the opposite), and with ``count_unseen`` the change
        in the number of items with test count > 0 and train count 0."""
        pairs = len(xs)
        owner, at = row_positions(self.indptr, np.concatenate((xs, ys)))
        weights = self.weights[at]
        y_from = int(np.searchsorted(owner, pairs))  # the items of the ys follow those of the xs
        owner[y_from:] -= pairs
        np.negative(weights[y_from:], out=weights[y_from:])
        span = self.size
        codes = ((owner * span + self.items[at]) << self.weight_bits) + (self.offset + weights)
        codes.sort()
        keys = codes >> self.weight_bits
        net = (codes & ((1 << self.weight_bits) - 1)) - self.offset
        starts = np.empty(len(keys), dtype=bool)
        starts[:1] = True
        np.not_equal(keys[1:], keys[:-1], out=starts[1:])
        first = np.flatnonzero(starts)
        net = np.add.reduceat(net, first) if len(first) else net
        keys = keys[first]
        owner = keys // span
        item = keys - owner * span
        old_train = train[item]
        old_test = test[item]
        new_train = old_train + to_train * net
        new_test = old_test + to_test * net
        change = self.train_power[new_train] * self.test_power[new_test] - self.train_power[old_train] * self.test_power[old_test]
        sums = chernoff_sum + np.bincount(owner, change, minlength=pairs)
        moved = self.row_totals[xs] - self.row_totals[ys]
        p = train_total + to_train * moved
        q = test_total + to_test * moved
        alpha = self.alpha
        valid = (p > 0) & (q > 0)
        if valid.all():
            coefficient = sums / (p**alpha * q ** (1.0 - alpha))
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                coefficient = np.where(valid, sums / (p**alpha * q ** (1.0 - alpha)), 0.0)
        divergence = np.minimum(np.maximum(1.0 - np.minimum(coefficient, 1.0), 0.0), 1.0)
        if not count_unseen:
            return divergence, None
        unseen = ((new_test > 0) & (new_train <= 0)).astype(np.int64) - ((old_test > 0) & (old_train <= 0))
        return divergence, np.bincount(owner, unseen, minlength=pairs)
