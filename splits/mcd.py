"""Compound-divergence splits by stochastic local search: maximum (MCD) or a target value.

Goal (Keysers et al. 2020): choose train and test sets of given sizes from a pool so that
the compound divergence D_C(train||test) is as large as possible (or, with a target, within
TARGET_TOLERANCE of it) while the atom divergence D_A stays at or below a bound and every
atom of the test set occurs in train.

Search: a chain starts from a random split (train, test, and the rest of the pool unused),
then proposes moves that exchange one example between two of the three sets (test<->unused,
train<->unused, train<->test). The objective is D_C - ATOM_PENALTY * max(0, D_A - bound) -
(test atoms unseen in train), with -|D_C - target| in place of D_C when a target is given
(the search then stops once within half the tolerance). A move that would add a test atom
unseen in train, or raise D_A above its bound (or further above it, from a start outside
the bound), is rejected, so D_A ends within its bound whenever it starts or gets there.
Otherwise a move is accepted when its gain in the objective is at least T * ln(u), u
uniform (Metropolis at temperature T; T = 0 accepts exactly the moves that do not lower the
objective). A share GUIDED_SHARE of the proposals pairs candidates ranked by a first-order
estimate of the change of the compound Chernoff coefficient (recomputed after every
max(32, test size / 4) accepted moves, and at least every REFRESH_STEPS proposals); the
rest are uniform. (90 % guided proposals did worse than 60 % and 30 %; ranking outgoing
examples by the exact cost of leaving, coordinated moves that take every train holder of a
compound out at once, and a greedy construction of the starting split did not help.)

Proposals are drawn in batches of one move kind and screened together against the current
counts (``gengap.splits.swap_screen``); those that pass are evaluated exactly, one after another,
against the counts as they are by then. Screening costs about 3 microseconds a proposal on
SCAN, against about 30 for the exact evaluation, so a search proposes millions of moves.

A greedy chain (T = 0) stalls at a local optimum that depends on its random start (on SCAN
at 8,365 / 1,045, 1,000,000 steps: D_C 0.703-0.761 over seeds 0-4). Annealed chains end
higher but still vary by seed (8,000,000 steps at T = 1e-5: 0.741-0.801 over seeds 5-12),
and their order after a fifth of their steps mostly holds. A maximizing search therefore runs CHAINS
independent chains at T = TEMPERATURE / test size for SCREEN_SHARE of its steps in all
(1,500,000 each by default), then continues only the best one while T falls linearly to 0;
a search with a target runs one greedy chain. On SCAN seeds 5-12 this ends at D_C
0.767-0.803; the benchmark seeds 0-4 reach 0.765-0.790 (README).

Compounds are counted by occurrence, or with ``compound_weighting=cfq`` (the default for
cfq_like: ``task``) weighted as CFQ weighs them, over the pool's distinct inputs
(gengap.splits.compound_weights), in integer hundredths; the report then names the measure.

:func:`search_test` runs the same search with the train side held fixed (a fresh test part
chosen against a released train part, gengap.fresh): one greedy chain whose moves exchange
examples between test and the unused candidates only.

Each move is evaluated exactly in time proportional to the number of atoms and compounds of
the examples it moves: with unnormalized counts c (train) and d (test) and totals P, Q,
C_a = sum_k c_k^a d_k^(1-a) / (P^a Q^(1-a)), so only the touched terms of the sum and the
totals change; a term is read from a table of Python's float powers by the item's integer
counts, and an item whose counts a move leaves alone is skipped (its term stays). Counts and
terms are exact, so every few thousand accepted moves only the running sums are added up
afresh from them, to keep rounding from drifting. The guided-candidate costs sum, per
example, only the items that can contribute (those shared by two or more examples, and every
item of a test example), which is where a refresh spends its time. The search is a
deterministic function of its inputs and the random generator.

Memory: per pool example, the search holds its atom and compound rows in CSR arrays of
interned ids and int32 counts (about 12 bytes per (example, item) pair, and 12 more for each
pair whose item another example shares; the item texts are not kept, see ``_SparseRows``)
and 17 bytes of assignment and membership per chain; per distinct item, a running chain
holds 16 bytes (integer counts, float terms) and a waiting one 8. The counts, terms and
sums are the same floats the per-item Python lists of earlier versions computed, so the
search takes the same path for the same seed.
"""

from __future__ import annotations

import time
from array import array
from hashlib import blake2b
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from gengap.generators.batch import Record
from gengap.generators.params import knob
from gengap.generators.seeding import chain_rngs
from gengap.splits.atoms import record_atoms, record_compounds
from gengap.splits.base import Partition, SplitError, SplitOptions, Strategy
from gengap.splits.compound_weights import CFQ, TASK_DEFAULT, UNWEIGHTED, WEIGHTINGS, cfq_weights, describe, quantized, resolve
from gengap.splits.divergence import ATOM_ALPHA, COMPOUND_ALPHA
from gengap.splits.swap_screen import SCREEN_MARGIN, SwapScreen, row_positions

UNUSED, TRAIN, TEST = 0, 1, 2
Numeric = float | np.ndarray
REFRESH_STEPS = 20_000  # most proposals between recomputations of the guided candidates
REFRESH_ACCEPTED = 32  # or after max(32, test size // 4) accepted moves, but no sooner than
REFRESH_GAP = 500  # this many proposals after the last
CANDIDATES = 64  # guided candidates per side and move kind
GUIDED_SHARE = 0.6  # share of proposals drawn from the guided candidates (the rest: uniform)
ATOM_PENALTY = 20.0  # objective weight of atom divergence above its bound
DEFAULT_STEPS = 8_000_000
MAX_STEPS = 1_000_000_000  # 125x the default (about 1.5 hours on SCAN on one core): a bound, not a budget
CHAINS = 4  # independent chains of a maximizing search
SCREEN_SHARE = 0.75  # share of the steps spent running every chain before the best one continues
TEMPERATURE = 0.01  # a maximizing chain's temperature times the test size
BATCH_MIN, BATCH_MAX = 8, 1024  # swaps drawn and screened together
TARGET_TOLERANCE = 0.01  # a target compound divergence is met within +- this
MARGINAL_BLOCK = 1 << 20  # (example, item) pairs per block of the guided-candidate costs


_step_reporter: ContextVar[Callable[[int], object] | None] = ContextVar("mcd_step_reporter", default=None)


@contextmanager
def reporting_steps(callback: Callable[[int], object]) -> Iterator[None]:
    """Within this context every MCD search calls ``callback(n)`` after each batch with the n
    moves it just proposed (the calls of one search sum to its ``steps``), e.g. a progress
    bar's ``update``."""
    token = _step_reporter.set(callback)
    try:
        yield
    finally:
        _step_reporter.reset(token)


@dataclass(frozen=True)
class McdOptions(SplitOptions):
    train_size: int = knob(0, lo=0, doc="examples on the train side (train + validation); 0 = 80% of the pool")
    test_size: int = knob(0, lo=0, doc="test examples; 0 = 10% of the pool")
    atom_divergence_max: float = knob(0.02, lo=0.0, hi=1.0, doc="bound on atom divergence")
    steps: int = knob(DEFAULT_STEPS, lo=1, hi=MAX_STEPS, doc="local-search moves proposed, over all chains (the search is deterministic given the seed)")
    compound_divergence: float = knob(
        0.0, lo=0.0, hi=1.0, doc="target compound divergence, met within +-0.01 (0 = maximize)"
    )
    compound_weighting: str = knob(
        TASK_DEFAULT, choices=(TASK_DEFAULT, *WEIGHTINGS), added=True,
        doc="compound measure of the search: unweighted (occurrence counts), cfq (CFQ's weights, "
            "gengap.splits.compound_weights) or task (cfq for cfq_like, else unweighted)",
    )

    def check_consistency(self) -> None:
        super().check_consistency()
        self.require(self.compound_weighting != CFQ or self.compounds == "derivation",
                     "compound_weighting=cfq weighs derivation compounds: it does not combine with compounds=local")


class _SparseRows:
    """Per-example sparse vectors over a vocabulary, in CSR form.

    Items are interned to integer ids in the order first seen (an example's items in sorted
    order), and each row holds (id, count) pairs in that order. The rows are built from an
    iterable of count mappings read one at a time, and items are identified by a 128-bit
    BLAKE2b digest of their text rather than kept as strings, so memory grows with the
    number of (example, item) pairs, not with the length of the item texts; ids are assigned
    from the first 64 bits (one vectorized ``np.unique``) and any two items that share those
    but not the other 64 bits are told apart (``_first_seen_ids``). ``flat_indices`` /
    ``flat_values`` are numpy views of the compact ``array`` buffers that the exact
    evaluation reads one row at a time. Counts are stored as int32 when all of them are
    non-negative integers (atoms and compounds: the only counts the search accepts), else
    as float64.
    """

    def __init__(self, counters: Iterable[Mapping[str, float]]) -> None:
        digests = bytearray()
        values = array("d")
        totals = array("d")
        lengths = array("q")
        for counter in counters:
            row_total = 0.0
            for key, value in sorted(counter.items()):
                digests += blake2b(key.encode(), digest_size=16).digest()
                values.append(float(value))
                row_total += float(value)
            totals.append(row_total)
            lengths.append(len(counter))
        keys = np.frombuffer(digests, dtype="<u8").reshape(-1, 2) if digests else np.zeros((0, 2), np.uint64)
        ids, self.size = _first_seen_ids(keys)
        del keys, digests
        floats = np.frombuffer(values, dtype=np.float64) if len(values) else np.zeros(0)
        if ((floats >= 0) & (floats < 2**31) & (floats == np.floor(floats))).all():  # counts: stored as int32
            values = array("i", floats.astype(np.int32).tobytes())
        del floats
        self.indices_buffer, self.values_buffer = array("i", ids.astype(np.int32).tobytes()), values
        self.totals = totals  # Python floats per example, for the exact evaluation
        self.indptr = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(np.frombuffer(lengths, dtype=np.int64) if len(lengths) else np.zeros(0, np.int64), out=self.indptr[1:])
        self.starts = array("q", self.indptr.tobytes())  # indptr, read as Python ints
        self.flat_indices = np.frombuffer(self.indices_buffer, dtype=np.int32) if len(ids) else np.zeros(0, np.int32)
        value_type = np.int32 if values.typecode == "i" else np.float64
        self.flat_values = np.frombuffer(values, dtype=value_type) if len(values) else np.zeros(0, value_type)
        self.flat_rows = np.repeat(np.arange(len(lengths), dtype=np.int32), np.diff(self.indptr))
        self.row_totals = np.frombuffer(totals, dtype=np.float64) if len(totals) else np.zeros(0)
        self.largest_total = int(np.bincount(self.flat_indices, self.flat_values).max()) if len(values) else 0
        self._powers: dict[tuple[str, float], tuple] = {}
        self._shared: _SharedPairs | None = None

    def __len__(self) -> int:
        return len(self.totals)

    def pairs(self, example: int) -> Iterator[tuple[int, float]]:
        """(item id, count) of one example, in row order."""
        start, end = self.starts[example], self.starts[example + 1]
        return zip(self.indices_buffer[start:end], self.values_buffer[start:end])

    def shared(self) -> _SharedPairs:
        """The (example, item) pairs whose item occurs in two or more examples (computed once)."""
        if self._shared is None:
            examples_holding = np.bincount(self.flat_indices, minlength=self.size)
            at = np.flatnonzero(examples_holding[self.flat_indices] >= 2)
            ids, items = np.unique(self.flat_indices[at], return_inverse=True)
            rows = self.flat_rows[at]
            indptr = np.zeros(len(self) + 1, dtype=np.int64)
            np.cumsum(np.bincount(rows, minlength=len(self)), out=indptr[1:])
            self._shared = _SharedPairs(rows, items.astype(np.int32), self.flat_values[at], ids.astype(np.int32), indptr)
        return self._shared

    def exact_powers(self, alpha: float) -> tuple[array, array]:
        """(k**alpha, k**(1 - alpha)) in Python floats for k = 0 .. largest column total + 1:
        the values of Python's float power, which the exact evaluation and the Chernoff terms
        use (numpy's vectorized power may differ in the last bit); computed once per alpha."""
        key = ("exact", alpha)
        if key not in self._powers:
            train = array("d", [float(k) ** alpha for k in range(self.largest_total + 2)])
            test = train if alpha == 0.5 else array("d", [float(k) ** (1.0 - alpha) for k in range(self.largest_total + 2)])
            self._powers[key] = (train, test)
        return self._powers[key]

    def numpy_powers(self, alpha: float) -> tuple[np.ndarray, np.ndarray]:
        """(k**alpha, k**(1 - alpha)) for k = 0 .. largest column total + 1, by numpy's power:
        the values the swap screen and the guided-candidate costs use (numpy's power of an
        integer count array equals the table entry); computed once per alpha."""
        key = ("numpy", alpha)
        if key not in self._powers:
            counts = np.arange(self.largest_total + 2, dtype=np.float64)
            self._powers[key] = (counts**alpha, counts ** (1.0 - alpha))
        return self._powers[key]


@dataclass(frozen=True)
class _SharedPairs:
    """Pairs of items that occur in two or more examples, in CSR order: the example of each
    pair (``rows``, nondecreasing; ``indptr`` delimits each example's pairs), the item as an
    index into ``ids`` (the item ids, ascending) and its count."""

    rows: np.ndarray
    items: np.ndarray
    counts: np.ndarray
    ids: np.ndarray
    indptr: np.ndarray


def _row_blocks(indptr: np.ndarray, pairs: int) -> list[tuple[int, int]]:
    """[first, last) row ranges covering every row, each holding about `pairs` entries."""
    n = len(indptr) - 1
    cuts = np.searchsorted(indptr, np.arange(pairs, int(indptr[-1]), pairs)) if n else np.zeros(0, np.int64)
    bounds = [0, *sorted({int(c) for c in cuts if 0 < c < n}), n]
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a] or [(0, n)]


def _first_seen_ids(keys: np.ndarray) -> tuple[np.ndarray, int]:
    """(id of each row of keys, number of distinct rows): ids 0, 1, ... in order of first
    occurrence. keys: (n, 2) uint64 digests; the first column decides unless two distinct
    rows share it, then both columns do."""
    if not len(keys):
        return np.zeros(0, dtype=np.int64), 0
    _, first, inverse = np.unique(keys[:, 0], return_index=True, return_inverse=True)
    if not np.array_equal(keys[first, 1][inverse], keys[:, 1]):  # a 64-bit collision: use all 128 bits
        _, first, inverse = np.unique(np.ascontiguousarray(keys).view("V16").ravel(), return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[inverse.ravel()], len(first)


class _Side:
    """Train and test totals of one kind of item (atoms or compounds) and the Chernoff sum.

    ``train`` and ``test`` are integer counts in ``array('i')`` buffers and ``terms`` the
    per-item Chernoff terms c**a * d**b in an ``array('d')`` (16 bytes an item in all; scalar
    reads give Python numbers); ``train_array`` / ``test_array`` are numpy views of the same
    memory, so they are always up to date. Every term is read from tables of Python's float
    powers (``_SparseRows.exact_powers``), so a term is a function of its item's two integer
    counts alone: the same float however the counts were reached."""

    def __init__(self, rows: _SparseRows, alpha: float, assignment: np.ndarray) -> None:
        self.rows = rows
        self.alpha = alpha
        self.train_power, self.test_power = rows.exact_powers(alpha)
        self.recompute(assignment)

    def recompute(self, assignment: np.ndarray) -> None:
        """Exact counts, totals and Chernoff sum of an assignment. Counts are sums of integers
        (exact in any order); each term is c**a * d**b in Python floats and the sum adds
        them in item order, as a per-item loop would."""
        rows, size = self.rows, self.rows.size
        where = assignment[rows.flat_rows] if len(rows.flat_rows) else np.zeros(0, dtype=np.int8)
        counts = {}
        for side in (TRAIN, TEST):
            mask = where == side
            counts[side] = np.bincount(rows.flat_indices[mask], rows.flat_values[mask], minlength=size).astype(np.float64)
        self.train = array("i", counts[TRAIN].astype(np.int32).tobytes())
        self.test = array("i", counts[TEST].astype(np.int32).tobytes())
        self.train_array = np.frombuffer(self.train, dtype=np.int32) if size else np.zeros(0, np.int32)
        self.test_array = np.frombuffer(self.test, dtype=np.int32) if size else np.zeros(0, np.int32)
        self._sum_totals(assignment)
        self.chernoff_sum = sum(self._build_terms(), 0.0)

    def _sum_totals(self, assignment: np.ndarray) -> None:
        self.train_total = float(self.rows.row_totals[assignment == TRAIN].sum())
        self.test_total = float(self.rows.row_totals[assignment == TEST].sum())

    def resum(self, assignment: np.ndarray) -> None:
        """What :meth:`recompute` gives, without recounting: the counts and terms the moves
        kept are exact (integers, and terms that follow from them), so only the totals and
        the Chernoff sum, which the moves update by float additions, are summed afresh."""
        self._sum_totals(assignment)
        terms = np.frombuffer(self.terms, dtype=np.float64) if self.rows.size else np.zeros(0)
        self.chernoff_sum = sum(terms[terms != 0].tolist(), 0.0)  # the terms with both counts positive, in item order

    def _build_terms(self) -> list[float]:
        """Set ``terms`` from the counts (c**a * d**b where both are positive, in Python
        floats: the values the exact evaluation computes); the nonzero terms in item order."""
        both = np.flatnonzero((self.train_array > 0) & (self.test_array > 0))
        train_power = np.frombuffer(self.train_power, dtype=np.float64)
        test_power = np.frombuffer(self.test_power, dtype=np.float64)
        values = train_power[self.train_array[both]] * test_power[self.test_array[both]]
        terms = np.zeros(self.rows.size)
        terms[both] = values
        self.terms = array("d", terms.tobytes())
        return values.tolist()

    def park(self) -> None:
        """Drop the per-item terms while the chain waits (they follow from the counts)."""
        self.terms = None

    def unpark(self) -> None:
        """Rebuild the per-item terms after :meth:`park`: the same floats as before, since each
        term is a function of the item's integer counts."""
        if self.terms is None:
            self._build_terms()

    def divergence(self, chernoff_sum: float, train_total: float, test_total: float) -> float:
        if train_total <= 0 or test_total <= 0:
            return 1.0
        value = chernoff_sum / (train_total**self.alpha * test_total ** (1.0 - self.alpha))
        return max(0.0, 1.0 - min(value, 1.0))

    def current(self) -> float:
        return self.divergence(self.chernoff_sum, self.train_total, self.test_total)

    def unseen_test_items(self) -> int:
        """Items with a test count and no train count."""
        return int(np.count_nonzero((self.test_array > 0) & (self.train_array <= 0)))

    def marginal_costs(self, assignment: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Approximate change of the Chernoff coefficient if each example joined test / train.

        Positive = the coefficient grows (divergence falls). First-order in one example,
        using unit increments per item and the change of the normalizing totals. The cost of
        joining test is NaN for examples in train (no move of the search uses it).

        Per item the first-order terms are c**a * ((d + 1)**(1 - a) - d**(1 - a)) (joining
        test) and d**(1 - a) * ((c + 1)**a - c**a) (joining train), in numpy's powers; an
        example's cost sums its items' terms times its counts in row order. An item that
        occurs in one example only has c = 0 unless that example is in train and d = 0
        unless it is in test, so its terms vanish except in those cases: the sums run over
        the items shared by two or more examples, and over every item of the test examples
        for joining train (adding a zero term changes no sum, so each sum is the float the
        full row would give).
        """
        a = self.alpha
        rows = self.rows
        norm = self.train_total**a * self.test_total ** (1.0 - a)
        coefficient = self.chernoff_sum / norm
        train_power, test_power = rows.numpy_powers(a)
        shared = rows.shared()
        c, d = self.train_array[shared.ids], self.test_array[shared.ids]
        per_item_test = train_power[c] * (test_power[d + 1] - test_power[d])
        per_item_train = test_power[d] * (train_power[c + 1] - train_power[c])
        n = len(rows)
        to_test, to_train = np.zeros(n), np.zeros(n)
        # blocks of whole rows, so temporaries stay small and each row sums in the same order
        for first, last in _row_blocks(shared.indptr, MARGINAL_BLOCK):
            a_, b_ = shared.indptr[first], shared.indptr[last]
            owner, items, counts = shared.rows[a_:b_] - first, shared.items[a_:b_], shared.counts[a_:b_]
            to_test[first:last] = np.bincount(owner, counts * per_item_test[items], minlength=last - first)
            to_train[first:last] = np.bincount(owner, counts * per_item_train[items], minlength=last - first)
        test_rows = np.flatnonzero(assignment == TEST)
        owner, at = row_positions(rows.indptr, test_rows)
        c, d = self.train_array[rows.flat_indices[at]], self.test_array[rows.flat_indices[at]]
        to_train[test_rows] = np.bincount(owner, rows.flat_values[at] * (test_power[d] * (train_power[c + 1] - train_power[c])), minlength=len(test_rows))
        to_test[assignment == TRAIN] = np.nan
        to_test = to_test / norm - coefficient * (1.0 - a) * rows.row_totals / self.test_total
        to_train = to_train / norm - coefficient * a * rows.row_totals / self.train_total
        return to_test, to_train

    def evaluate_swap(self, x: int, y: int, to_train: int, to_test: int) -> tuple[float, float, float, float, list]:
        """(divergence, chernoff sum, train total, test total, touched) after example x changes
        its train count by ``to_train`` and its test count by ``to_test`` times its counts and
        example y the opposite; touched lists (item, new train, new test, new term) for each
        item whose counts change, x's items first, in row order."""
        rows = self.rows
        indices, values, starts = rows.indices_buffer, rows.values_buffer, rows.starts
        x_start, x_end, y_start, y_end = starts[x], starts[x + 1], starts[y], starts[y + 1]
        net = dict(zip(indices[x_start:x_end], values[x_start:x_end]))  # item -> x's count minus y's
        get = net.get
        for k, v in zip(indices[y_start:y_end], values[y_start:y_end]):
            net[k] = get(k, 0) - v
        train, test, terms = self.train, self.test, self.terms
        train_power, test_power = self.train_power, self.test_power
        total = self.chernoff_sum
        touched = []
        for k, v in net.items():
            if v:  # an item with the same count in x and y keeps its counts and term
                c = train[k] + to_train * v
                d = test[k] + to_test * v
                term = train_power[c] * test_power[d]  # 0.0 when either count is 0
                total += term - terms[k]
                touched.append((k, c, d, term))
        x_weight, y_weight = rows.totals[x], rows.totals[y]
        train_total = self.train_total + to_train * x_weight - to_train * y_weight
        test_total = self.test_total + to_test * x_weight - to_test * y_weight
        return self.divergence(total, train_total, test_total), total, train_total, test_total, touched

    def unseen_change(self, touched: list) -> int:
        """Change in the number of items with a test count and no train count, if touched applied."""
        train, test = self.train, self.test
        return sum((d > 0 and c <= 0) - (test[k] > 0 and train[k] <= 0) for k, c, d, _ in touched)

    def apply(self, chernoff_sum: float, train_total: float, test_total: float, touched: list) -> None:
        train, test, terms = self.train, self.test, self.terms
        for k, c, d, term in touched:
            train[k] = c
            test[k] = d
            terms[k] = term
        self.chernoff_sum, self.train_total, self.test_total = chernoff_sum, train_total, test_total


@dataclass
class SearchResult:
    assignment: np.ndarray
    atom_divergence: float
    compound_divergence: float
    steps: int
    accepted: int
    seconds: float
    unseen_test_atoms: int = 0
    chain: int = 0  # the chain kept (maximizing search)


def search(
    atoms: Iterable[Mapping[str, float]],
    compounds: Iterable[Mapping[str, float]],
    train_size: int,
    test_size: int,
    atom_bound: float,
    rng: np.random.Generator,
    steps: int = DEFAULT_STEPS,
    progress: Callable[[int, float, float], None] | None = None,
    target: float | None = None,
    tolerance: float = TARGET_TOLERANCE,
) -> SearchResult:
    """Local search for an assignment with D_A <= atom_bound and every test atom seen in train.

    Without target: maximize D_C. CHAINS independent chains (generators from
    :func:`gengap.generators.seeding.chain_rngs`) each run SCREEN_SHARE * steps / CHAINS moves at
    temperature TEMPERATURE / test_size; the chain with the best objective then runs the
    remaining moves while its temperature falls linearly to 0 (ties: the lowest index).
    With target: one chain at temperature 0 brings D_C to within tolerance / 2 of target and
    stops. The result states the D_A / D_C reached and the unseen test atoms; callers decide
    whether that is good enough. ``steps`` is the total of moves proposed over all chains.
    """
    start = time.perf_counter()
    atom_rows, compound_rows = _SparseRows(atoms), _SparseRows(compounds)
    n = len(atom_rows)
    if len(compound_rows) != n:
        raise SplitError(f"MCD: {n} atom rows but {len(compound_rows)} compound rows")
    if train_size + test_size > n:
        raise SplitError(f"train_size + test_size = {train_size + test_size} exceeds the pool of {n}")
    if train_size < 1 or test_size < 1:
        raise SplitError("MCD needs train_size >= 1 and test_size >= 1")
    try:
        screens = (
            SwapScreen(atom_rows, ATOM_ALPHA),
            SwapScreen(compound_rows, COMPOUND_ALPHA),
        )
    except ValueError as error:
        raise SplitError(f"MCD: {error}") from None
    if target is not None:
        chain = _Chain(atom_rows, compound_rows, screens, train_size, test_size, atom_bound, rng, target, tolerance)
        chain.run(steps, progress)
        return chain.result(time.perf_counter() - start, chain.steps)
    temperature = TEMPERATURE / test_size
    chains = []
    for chain_rng in chain_rngs(rng, CHAINS):  # a chain not running keeps only its counts
        chains.append(_Chain(atom_rows, compound_rows, screens, train_size, test_size, atom_bound, chain_rng, None, tolerance, temperature))
        chains[-1].park()
    screen = int(steps * SCREEN_SHARE) // CHAINS
    for chain in chains:
        chain.run(screen, progress)
        chain.park()
    best = max(range(CHAINS), key=lambda i: (chains[i].score, -i))
    chain = chains[best]
    chain.run(steps - screen * CHAINS, progress, cooling=True)
    return chain.result(time.perf_counter() - start, sum(c.steps for c in chains), best)


def search_test(
    train_atoms: Iterable[Mapping[str, float]],
    train_compounds: Iterable[Mapping[str, float]],
    atoms: Iterable[Mapping[str, float]],
    compounds: Iterable[Mapping[str, float]],
    test_size: int,
    atom_bound: float,
    rng: np.random.Generator,
    steps: int = DEFAULT_STEPS,
    target: float | None = None,
    tolerance: float = TARGET_TOLERANCE,
) -> SearchResult:
    """The MCD search with the train side held fixed: choose test_size of the candidates (atoms,
    compounds) against the given train records (train_atoms, train_compounds), by moves between
    test and the unused candidates only, under the same objective and rejections as
    :func:`search`. One chain at temperature 0, from a random choice of the candidates: with
    target it stops within tolerance / 2 of it, else it maximizes D_C. The result's assignment
    covers the train records first, then the candidates."""
    start = time.perf_counter()
    train_atom_rows = list(train_atoms)
    atom_rows = _SparseRows([*train_atom_rows, *atoms])
    compound_rows = _SparseRows([*train_compounds, *compounds])
    fixed, n = len(train_atom_rows), len(atom_rows)
    if len(compound_rows) != n:
        raise SplitError(f"MCD: {n} atom rows but {len(compound_rows)} compound rows")
    if fixed < 1 or test_size < 1:
        raise SplitError("MCD needs at least one train record and test_size >= 1")
    if fixed + test_size > n:
        raise SplitError(f"test_size {test_size} exceeds the {n - fixed} candidates")
    try:
        screens = (SwapScreen(atom_rows, ATOM_ALPHA), SwapScreen(compound_rows, COMPOUND_ALPHA))
    except ValueError as error:
        raise SplitError(f"MCD: {error}") from None
    assignment = np.full(n, UNUSED, dtype=np.int8)
    assignment[:fixed] = TRAIN
    assignment[fixed + rng.permutation(n - fixed)[:test_size]] = TEST
    chain = _Chain(atom_rows, compound_rows, screens, fixed, test_size, atom_bound, rng, target, tolerance, start=assignment)
    chain.run(steps)
    return chain.result(time.perf_counter() - start, chain.steps)


class _Chain:
    """One local-search chain: an assignment of the pool to unused / train / test, the running
    sums of both sides, and the objective; :meth:`run` proposes moves in batches.

    A batch draws up to BATCH_MAX swaps of one move kind, screens them all against the current
    counts at once (:class:`gengap.splits.swap_screen.SwapScreen`), and evaluates the ones that pass
    exactly, in the order drawn, against the counts as they are by then. A swap is accepted when
    its exact gain in the objective is at least T * ln(u), u uniform in [0, 1) (Metropolis at
    temperature T; at T = 0: when it does not lower the objective). The batch size follows the
    recent acceptance rate, so that about two swaps of a batch pass."""

    def __init__(
        self,
        atom_rows: _SparseRows,
        compound_rows: _SparseRows,
        screens: tuple[SwapScreen, SwapScreen],
        train_size: int,
        test_size: int,
        atom_bound: float,
        rng: np.random.Generator,
        target: float | None,
        tolerance: float,
        temperature: float = 0.0,
        start: np.ndarray | None = None,
    ) -> None:
        """start: the initial assignment, whose train part the chain then never changes (only
        test/unused moves); None: a random split of train_size / test_size, all moves."""
        n = len(atom_rows)
        self.rng, self.target, self.tolerance, self.atom_bound = rng, target, tolerance, atom_bound
        self.temperature = temperature
        self.atom_screen, self.compound_screen = screens
        if start is None:
            assignment = np.zeros(n, dtype=np.int8)
            order = rng.permutation(n)
            assignment[order[:train_size]] = TRAIN
            assignment[order[train_size : train_size + test_size]] = TEST
        else:
            assignment = start.astype(np.int8, copy=True)
        self.assignment = assignment
        self.atom_side = _Side(atom_rows, ATOM_ALPHA, assignment)
        self.compound_side = _Side(compound_rows, COMPOUND_ALPHA, assignment)
        self.members = {where: np.flatnonzero(assignment == where) for where in (UNUSED, TRAIN, TEST)}
        self.position = np.zeros(n, dtype=np.int64)
        for items in self.members.values():
            self.position[items] = np.arange(len(items))
        self.unseen = self.atom_side.unseen_test_items()
        self.score = self.objective(self.compound_side.current(), self.atom_side.current(), self.unseen)
        if start is not None:
            self.kinds = [(TEST, UNUSED)] if len(self.members[UNUSED]) else []
        else:
            self.kinds = [(TEST, UNUSED), (TRAIN, UNUSED), (TRAIN, TEST)] if len(self.members[UNUSED]) else [(TRAIN, TEST)]
        # with a target below a random split's D_C the search aims lower
        self.lower = target is not None and self.compound_side.current() > target
        self.refresh_accepted = max(REFRESH_ACCEPTED, test_size // 4)
        self.last_refresh = (-REFRESH_STEPS, 0)  # (steps, accepted) when the guided candidates were computed
        self.rate = 0.5  # running acceptance rate of proposals, which sets the batch size
        self.steps = 0
        self.accepted = 0
        self.guided: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}

    def objective(self, dc: Numeric, da: Numeric, unseen_atoms: Numeric) -> Numeric:
        """The objective of one state (floats) or of many candidates at once (arrays)."""
        fit = dc if self.target is None else -abs(dc - self.target)
        return fit - ATOM_PENALTY * np.maximum(0.0, da - self.atom_bound) - unseen_atoms

    def park(self) -> None:
        """Drop what :meth:`run` rebuilds exactly (see :meth:`_Side.park`)."""
        self.atom_side.park()
        self.compound_side.park()

    def reached(self) -> bool:
        return (
            self.target is not None
            and abs(self.compound_side.current() - self.target) <= self.tolerance / 2
            and self.atom_side.current() <= self.atom_bound
            and self.unseen == 0
        )

    def run(self, steps: int, progress: Callable[[int, float, float], None] | None = None, cooling: bool = False) -> None:
        """Propose up to `steps` moves (fewer when a target is reached), continuing where the
        last call stopped. With ``cooling`` the temperature falls linearly from the chain's
        temperature to 0 over these moves."""
        self.atom_side.unpark()
        self.compound_side.unpark()
        end = self.steps + steps
        report = _step_reporter.get()
        while self.kinds and self.steps < end and not self.reached():
            since = self.steps - self.last_refresh[0]
            if since >= REFRESH_STEPS or (since >= REFRESH_GAP and self.accepted - self.last_refresh[1] >= self.refresh_accepted):
                self.guided = _guided_candidates(self.compound_side, self.assignment, self.kinds, self.lower)
                self.last_refresh = (self.steps, self.accepted)
            size = min(end - self.steps, int(min(max(2.0 / max(self.rate, 1e-6), BATCH_MIN), BATCH_MAX)))
            temperature = self.temperature * (end - self.steps) / steps if cooling else self.temperature
            before = self.steps
            accepted = self._batch(size, temperature, progress)
            self.rate = 0.9 * self.rate + 0.1 * accepted / size
            if report is not None:
                report(self.steps - before)

    def _batch(self, size: int, temperature: float, progress: Callable[[int, float, float], None] | None) -> int:
        """Draw, screen and try `size` swaps of one kind; the number accepted."""
        rng, assignment, members = self.rng, self.assignment, self.members
        first, second = self.kinds[int(rng.integers(len(self.kinds)))]
        guided = rng.random(size) < GUIDED_SHARE
        outgoing, incoming = self.guided[(first, second)]
        xs = np.where(guided, outgoing[rng.integers(len(outgoing), size=size)], members[first][rng.integers(len(members[first]), size=size)])
        ys = np.where(guided, incoming[rng.integers(len(incoming), size=size)], members[second][rng.integers(len(members[second]), size=size)])
        thresholds = temperature * np.log(rng.random(size)) if temperature > 0 else np.zeros(size)
        batch_start = self.steps
        self.steps += size
        to_train = (second == TRAIN) - (first == TRAIN)
        to_test = (second == TEST) - (first == TEST)
        atom_side, compound_side = self.atom_side, self.compound_side
        live = np.flatnonzero((assignment[xs] == first) & (assignment[ys] == second))  # guided ones may be stale
        da, change = self.atom_screen.evaluate(
            atom_side.train_array, atom_side.test_array, atom_side.chernoff_sum, atom_side.train_total,
            atom_side.test_total, xs[live], ys[live], to_train, to_test, count_unseen=True,
        )
        current_da = atom_side.current()
        keep = (change <= 0) & ~((da > self.atom_bound) & (da > current_da))
        live, da, change = live[keep], da[keep], change[keep]
        dc, _ = self.compound_screen.evaluate(
            compound_side.train_array, compound_side.test_array, compound_side.chernoff_sum,
            compound_side.train_total, compound_side.test_total, xs[live], ys[live], to_train, to_test,
        )
        gain = self.objective(dc, da, self.unseen + change) - self.score
        accepted = 0
        for j in live[gain >= thresholds[live] - SCREEN_MARGIN].tolist():
            x, y = int(xs[j]), int(ys[j])
            if assignment[x] != first or assignment[y] != second:
                continue  # an earlier swap of this batch moved it
            if self._try(x, y, first, second, float(thresholds[j]), progress, batch_start + j + 1):
                accepted += 1
                if self.reached():
                    self.steps = batch_start + j + 1
                    break
        return accepted

    def _try(
        self, x: int, y: int, first: int, second: int, threshold: float,
        progress: Callable[[int, float, float], None] | None, step: int,
    ) -> bool:
        """Evaluate swapping x (in first) with y (in second) exactly; apply it when allowed and
        its gain is at least threshold."""
        atom_side, compound_side = self.atom_side, self.compound_side
        to_train = (second == TRAIN) - (first == TRAIN)
        to_test = (second == TEST) - (first == TEST)
        da, a_sum, a_train, a_test, a_touched = atom_side.evaluate_swap(x, y, to_train, to_test)
        change = atom_side.unseen_change(a_touched)
        if change > 0:
            return False  # a test atom would become unseen in train
        if da > self.atom_bound and da > atom_side.current():
            return False  # D_A would rise above its bound (or further above it)
        dc, c_sum, c_train, c_test, c_touched = compound_side.evaluate_swap(x, y, to_train, to_test)
        new_score = float(self.objective(dc, da, self.unseen + change))
        if new_score - self.score < threshold:
            return False
        atom_side.apply(a_sum, a_train, a_test, a_touched)
        compound_side.apply(c_sum, c_train, c_test, c_touched)
        self.unseen += change
        self.assignment[x], self.assignment[y] = second, first
        members, position = self.members, self.position
        ix, iy = position[x], position[y]
        members[first][ix], members[second][iy] = y, x
        position[x], position[y] = iy, ix
        self.score = new_score
        self.accepted += 1
        if self.accepted % 5000 == 0:
            atom_side.resum(self.assignment)
            compound_side.resum(self.assignment)
            self.score = float(self.objective(compound_side.current(), atom_side.current(), self.unseen))
        if progress is not None and self.accepted % 1000 == 0:
            progress(step, compound_side.current(), atom_side.current())
        return True

    def result(self, seconds: float, steps: int, chain: int = 0) -> SearchResult:
        self.atom_side.recompute(self.assignment)
        self.compound_side.recompute(self.assignment)
        return SearchResult(
            self.assignment,
            self.atom_side.current(),
            self.compound_side.current(),
            steps,
            self.accepted,
            seconds,
            self.atom_side.unseen_test_items(),
            chain,
        )


def _guided_candidates(
    side: _Side, assignment: np.ndarray, kinds: list[tuple[int, int]], lower: bool = False
) -> dict[tuple[int, int], tuple[np.ndarray, np.ndarray]]:
    """For each move kind (first, second): members of first that hurt most where they are,
    and members of second that would help most in first's place (CANDIDATES each), both
    ranked by the first-order cost of joining first; with ``lower`` the ranking is
    reversed (the aim is a lower D_C)."""
    to_test, to_train = side.marginal_costs(assignment)
    sign = -1.0 if lower else 1.0
    cost_in = {TEST: sign * to_test, TRAIN: sign * to_train}
    found = {}
    for first, second in kinds:
        cost = cost_in[first]
        outgoing = np.flatnonzero(assignment == first)
        incoming = np.flatnonzero(assignment == second)
        worst = outgoing[_smallest(-cost[outgoing], CANDIDATES)]
        best = incoming[_smallest(cost[incoming], CANDIDATES)]
        found[(first, second)] = (worst, best)
    return found


def _smallest(values: np.ndarray, count: int) -> np.ndarray:
    """Positions of the `count` smallest values, smallest first, ties by position: the same as
    ``np.argsort(values, kind="stable")[:count]``, in time linear in len(values)."""
    if len(values) <= count or np.isnan(values).any():
        return np.argsort(values, kind="stable")[:count]
    bound = np.partition(values, count - 1)[count - 1]
    within = np.flatnonzero(values <= bound)
    return within[np.argsort(values[within], kind="stable")[:count]]


def _check_target(result: SearchResult, target: float, options: McdOptions) -> None:
    """SplitError unless the search met the target within tolerance, D_A within its bound and
    every test atom seen in train."""
    if abs(result.compound_divergence - target) > TARGET_TOLERANCE:
        raise SplitError(
            f"compound divergence target {target} not reached within +-{TARGET_TOLERANCE}: got "
            f"{result.compound_divergence:.4f} after {result.steps} steps (targets range from a random "
            "split's divergence up to the maximum; try more steps or another target)"
        )
    if result.atom_divergence > options.atom_divergence_max:
        raise SplitError(
            f"target {target}: atom divergence {result.atom_divergence:.4f} exceeds its bound {options.atom_divergence_max}"
        )
    if result.unseen_test_atoms:
        raise SplitError(f"target {target}: {result.unseen_test_atoms} test atoms never occur in train")


class Mcd(Strategy):
    name = "mcd"
    description = "maximum compound divergence subject to an atom-divergence bound (local search)"
    options_type = McdOptions
    samples_train = False

    def partition(self, records: Sequence[Record], options: McdOptions, rng: np.random.Generator) -> Partition:
        unique: dict[str, int] = {}
        for index, record in enumerate(records):
            unique.setdefault(record["input"], index)
        pool = [records[i] for i in unique.values()]
        train_size = options.train_size or int(0.8 * len(pool))
        test_size = options.test_size or max(1, int(0.1 * len(pool)))
        target = options.compound_divergence or None
        local = options.compounds != "derivation"  # local structures are not weighed (task default: unweighted)
        weighting = UNWEIGHTED if local else resolve(options.compound_weighting, {r.get("task") for r in pool})
        if weighting == CFQ:
            compounds: Iterable[Mapping[str, float]] = (quantized(w) for w in cfq_weights(pool, options.abstract_lexical))
        else:
            compounds = (record_compounds(r, options.abstract_lexical, options.compound_definition()) for r in pool)
        result = search(
            (record_atoms(r) for r in pool),
            compounds,
            train_size,
            test_size,
            options.atom_divergence_max,
            rng,
            steps=options.steps,
            target=target,
        )
        if target is not None:
            _check_target(result, target, options)
        train = [r for r, where in zip(pool, result.assignment.tolist()) if where == TRAIN]
        test = [r for r, where in zip(pool, result.assignment.tolist()) if where == TEST]
        notes: dict = {
            "search": {
                "objective": "maximize" if target is None else f"target {target}",
                "steps": result.steps,
                "accepted": result.accepted,
                **({"chains": CHAINS, "chain_kept": result.chain} if target is None else {}),
                "pool_unique_inputs": len(pool),
            }
        }
        if weighting == CFQ:  # an unweighted split's report names no measure (as before the option)
            notes["search"]["compound_measure"] = describe(CFQ)
            notes["search"]["compound_divergence"] = result.compound_divergence  # train side vs test, weighted
            notes["search"]["atom_divergence"] = result.atom_divergence
            notes["compound_measure"] = f"{describe(UNWEIGHTED)}; the search's: {CFQ} (search.compound_divergence)"
        warnings = []
        if result.atom_divergence > options.atom_divergence_max:
            warnings.append(
                f"MCD: atom divergence {result.atom_divergence:.4f} exceeds its bound {options.atom_divergence_max}"
            )
        if result.unseen_test_atoms:
            warnings.append(f"MCD: {result.unseen_test_atoms} test atoms never occur in train")
        if warnings:
            notes["warnings"] = warnings
        return Partition(train, test, unused=len(records) - len(train) - len(test), notes=notes, atom_bound=options.atom_divergence_max)
