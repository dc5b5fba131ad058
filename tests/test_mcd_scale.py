"""The compact MCD search state equals the straightforward one it replaced, bit for bit.

The search keeps per-example atoms and compounds as CSR arrays of interned ids and its
per-item counts in flat buffers (gengap.splits.mcd), and derivation compounds are memoized per
tree (gengap.generators.derivation); these tests recompute the same quantities the plain way
(dicts and per-item Python loops) and require identical floats, and check that the D_C /
D_A a search reports equal an independent recomputation from the parts it returns.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gengap.generators import get_task
from gengap.generators.derivation import tree_subgraphs
from gengap.splits import generate_records
from gengap.splits.atoms import record_atoms, record_compounds
from gengap.splits.divergence import ATOM_ALPHA, COMPOUND_ALPHA, atom_divergence, compound_divergence
from gengap.splits.mcd import TEST, TRAIN, UNUSED, _first_seen_ids, _Side, _smallest, _SparseRows, search


def _plain_side(counters: list[dict[str, float]], alpha: float, assignment: np.ndarray) -> tuple[dict, float, float, float]:
    """Per-item train/test counts (by item name), Chernoff sum over items in first-seen
    order, and totals, with Python loops over dicts."""
    order: dict[str, None] = {}
    for counter in counters:
        for key in sorted(counter):
            order.setdefault(key)
    train = dict.fromkeys(order, 0.0)
    test = dict.fromkeys(order, 0.0)
    train_total = test_total = 0.0
    for counter, where in zip(counters, assignment.tolist()):
        if where == UNUSED:
            continue
        for key, value in counter.items():
            (train if where == TRAIN else test)[key] += value
        if where == TRAIN:
            train_total += sum(counter.values())
        else:
            test_total += sum(counter.values())
    terms = [train[k] ** alpha * test[k] ** (1 - alpha) if train[k] > 0 and test[k] > 0 else 0.0 for k in order]
    return {k: (train[k], test[k]) for k in order}, sum(terms), train_total, test_total


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), vocabulary=st.integers(1, 30), alpha=st.sampled_from([ATOM_ALPHA, COMPOUND_ALPHA]))
def test_side_state_equals_the_plain_recomputation(seed: int, vocabulary: int, alpha: float) -> None:
    rng = np.random.default_rng(seed)
    counters = [
        {f"k{int(k)}": int(rng.integers(1, 5)) for k in rng.choice(vocabulary, size=int(rng.integers(1, min(5, vocabulary) + 1)), replace=False)}
        for _ in range(30)
    ]
    rows = _SparseRows(iter(counters))  # built from a generator: mappings read once
    assignment = rng.choice(np.array([UNUSED, TRAIN, TEST], dtype=np.int8), size=30)
    side = _Side(rows, alpha, assignment)
    per_item, chernoff_sum, train_total, test_total = _plain_side(counters, alpha, assignment)
    assert side.chernoff_sum == chernoff_sum  # exactly: same terms added in the same order
    assert (side.train_total, side.test_total) == (train_total, test_total)
    assert [(side.train[i], side.test[i]) for i in range(rows.size)] == list(per_item.values())
    assert side.unseen_test_items() == sum(1 for c, d in per_item.values() if d > 0 and c <= 0)
    # rows: ids in first-seen order, each row's items sorted by name
    names = list(per_item)
    for example, counter in enumerate(counters):
        assert [(names[k], v) for k, v in rows.pairs(example)] == sorted(counter.items())


@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.integers(-3, 3).map(float), min_size=0, max_size=200), count=st.integers(1, 70))
def test_smallest_equals_a_stable_argsort_prefix(values: list[float], count: int) -> None:
    array = np.asarray(values, dtype=np.float64)
    assert _smallest(array, count).tolist() == np.argsort(array, kind="stable")[:count].tolist()


def _plain_rooted(node: list[Any], budget: int, abstract_lexical: bool) -> list[tuple[str, int]]:
    """Rooted connected subgraphs without memoization (the definition, spelled out)."""
    partial: list[tuple[list[str], int]] = [([], 1)]
    for child in node[1:]:
        grown = []
        for parts, size in partial:
            if isinstance(child, str):
                grown.append((parts + ["*" if abstract_lexical else child], size))
                continue
            grown.append((parts + ["_"], size))
            if size < budget:
                grown.extend((parts + [text], size + extra) for text, extra in _plain_rooted(child, budget - size, abstract_lexical))
        partial = grown
    return [(f"{node[0]}({','.join(parts)})" if parts else str(node[0]), size) for parts, size in partial]


def _plain_subgraphs(tree: Any, abstract_lexical: bool) -> Counter[str]:
    found: Counter[str] = Counter()
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            continue
        stack.extend(reversed(node[1:]))
        found.update(text for text, size in _plain_rooted(node, 5, abstract_lexical) if size >= 2)
    return found


def test_memoized_compounds_equal_the_definition() -> None:
    for task in ("pcfg_set", "cogs", "scan"):
        for record in generate_records(task, get_task(task).default_params(), 40, 3):
            tree = get_task(task).structure_of(record)
            for abstract in (False, True):
                assert tree_subgraphs(tree, 5, 2, abstract) == _plain_subgraphs(tree, abstract)


def test_reported_divergences_equal_a_recomputation_from_the_parts() -> None:
    pool = generate_records("pcfg_set", get_task("pcfg_set").default_params(), 400, 5)
    atoms = [record_atoms(r) for r in pool]
    compounds = [record_compounds(r) for r in pool]
    result = search(iter(atoms), iter(compounds), 160, 40, 0.05, np.random.default_rng(2), steps=3000)
    parts = {side: [i for i, where in enumerate(result.assignment.tolist()) if where == side] for side in (TRAIN, TEST)}

    def total(items: list[Counter[str]], side: int) -> Counter[str]:
        found: Counter[str] = Counter()
        for i in parts[side]:
            found.update(items[i])
        return found

    assert abs(result.compound_divergence - compound_divergence(total(compounds, TRAIN), total(compounds, TEST))) < 1e-9
    assert abs(result.atom_divergence - atom_divergence(total(atoms, TRAIN), total(atoms, TEST))) < 1e-9


def test_first_seen_ids_tell_apart_digests_that_share_64_bits() -> None:
    keys = np.array([[5, 1], [3, 7], [5, 2], [3, 7], [5, 1], [9, 0]], dtype=np.uint64)
    ids, size = _first_seen_ids(keys)
    assert ids.tolist() == [0, 1, 2, 1, 0, 3] and size == 4
    plain, size = _first_seen_ids(keys[[1, 3, 5]])
    assert plain.tolist() == [0, 0, 1] and size == 2
    assert _first_seen_ids(np.zeros((0, 2), dtype=np.uint64))[1] == 0


def test_marginal_costs_in_blocks_equal_one_pass(monkeypatch) -> None:
    from gengap.splits import mcd

    rng = np.random.default_rng(4)
    counters = [{f"k{int(k)}": int(rng.integers(1, 4)) for k in rng.choice(12, size=int(rng.integers(1, 5)), replace=False)} for _ in range(50)]
    rows = _SparseRows(counters)
    assignment = rng.choice(np.array([UNUSED, TRAIN, TEST], dtype=np.int8), size=50)
    whole = _Side(rows, COMPOUND_ALPHA, assignment).marginal_costs(assignment)
    monkeypatch.setattr(mcd, "MARGINAL_BLOCK", 7)
    assert len(mcd._row_blocks(rows.shared().indptr, 7)) > 5
    blocked = _Side(rows, COMPOUND_ALPHA, assignment).marginal_costs(assignment)
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(whole, blocked))
    assert mcd._row_blocks(np.array([0]), 7) == [(0, 0)]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), vocabulary=st.integers(1, 60), largest=st.sampled_from([1, 3]))
def test_marginal_costs_equal_the_sums_over_every_item(seed: int, vocabulary: int, largest: int) -> None:
    """The costs sum only the items shared by two examples (and every item of a test example
    for joining train); they equal, bit for bit, the sums over every item of every row with
    numpy's powers of the counts (joining test: for the examples not in train)."""
    rng = np.random.default_rng(seed)
    counters = [
        {f"k{int(k)}": int(rng.integers(1, largest + 1)) for k in rng.choice(vocabulary, size=int(rng.integers(1, min(6, vocabulary) + 1)), replace=False)}
        for _ in range(60)
    ]
    rows = _SparseRows(counters)
    assignment = rng.choice(np.array([UNUSED, TRAIN, TEST], dtype=np.int8), size=60)
    side = _Side(rows, COMPOUND_ALPHA, assignment)
    to_test, to_train = side.marginal_costs(assignment)
    a = COMPOUND_ALPHA
    c, d = side.train_array, side.test_array
    item_test = c**a * ((d + 1.0) ** (1.0 - a) - d ** (1.0 - a))
    item_train = d ** (1.0 - a) * ((c + 1.0) ** a - c**a)
    norm = side.train_total**a * side.test_total ** (1.0 - a)
    coefficient = side.chernoff_sum / norm
    items, counts = rows.flat_indices, rows.flat_values
    full_test = np.bincount(rows.flat_rows, counts * item_test[items], minlength=60) / norm - coefficient * (1.0 - a) * rows.row_totals / side.test_total
    full_train = np.bincount(rows.flat_rows, counts * item_train[items], minlength=60) / norm - coefficient * a * rows.row_totals / side.train_total
    assert np.array_equal(to_train, full_train)
    outside = assignment != TRAIN
    assert np.array_equal(to_test[outside], full_test[outside]) and np.isnan(to_test[~outside]).all()


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), vocabulary=st.integers(1, 30), alpha=st.sampled_from([ATOM_ALPHA, COMPOUND_ALPHA]))
def test_swaps_keep_the_state_a_recount_gives(seed: int, vocabulary: int, alpha: float) -> None:
    """After applied swaps the counts and terms equal a fresh recount (they are exact), and
    resum gives the totals and Chernoff sum of that recount without recounting."""
    rng = np.random.default_rng(seed)
    counters = [
        {f"k{int(k)}": int(rng.integers(1, 4)) for k in rng.choice(vocabulary, size=int(rng.integers(1, min(5, vocabulary) + 1)), replace=False)}
        for _ in range(30)
    ]
    rows = _SparseRows(counters)
    assignment = rng.choice(np.array([UNUSED, TRAIN, TEST], dtype=np.int8), size=30)
    side = _Side(rows, alpha, assignment)
    for _ in range(40):
        x, y = (int(i) for i in rng.choice(30, size=2, replace=False))
        first, second = int(assignment[x]), int(assignment[y])
        to_train = (second == TRAIN) - (first == TRAIN)
        to_test = (second == TEST) - (first == TEST)
        side.apply(*side.evaluate_swap(x, y, to_train, to_test)[1:])
        assignment[x], assignment[y] = second, first
    fresh = _Side(rows, alpha, assignment)
    assert (side.train_array.tolist(), side.test_array.tolist()) == (fresh.train_array.tolist(), fresh.test_array.tolist())
    assert list(side.terms) == list(fresh.terms)
    side.resum(assignment)
    assert (side.chernoff_sum, side.train_total, side.test_total) == (fresh.chernoff_sum, fresh.train_total, fresh.test_total)


# Searches pinned to the output of the search before its per-step speedups (same pool, seed
# and options => the same assignment, bit for bit): sha256 of the assignment bytes.
PINNED_SEARCHES = [
    ("pcfg_set", False, 0, 30000, None, 0.4, 0.05, "683d4f48fb848f12"),
    ("cogs_like", True, 1, 20000, 0.4, 0.5, 0.1, "989b8f341932b51b"),
]


def test_searches_equal_their_pinned_assignments() -> None:
    import hashlib

    for task, abstract, seed, steps, target, train, test, digest in PINNED_SEARCHES:
        pool = generate_records(task, get_task(task).default_params(), 3000, 1 if task == "pcfg_set" else 2)
        atoms = [record_atoms(r) for r in pool]
        compounds = [record_compounds(r, abstract) for r in pool]
        n = len(pool)
        result = search(atoms, compounds, int(train * n), int(test * n), 0.02, np.random.default_rng(seed), steps=steps, target=target)
        assert hashlib.sha256(result.assignment.tobytes()).hexdigest()[:16] == digest, (task, seed)
