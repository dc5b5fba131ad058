"""gengap.splits.mcd.search_test: the MCD search with the train side held fixed (fresh MCD test parts)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from gengap.generators import get_task
from gengap.generators.seeding import split_rng
from gengap.splits import SplitError
from gengap.splits.atoms import record_atoms, record_compounds
from gengap.splits.mcd import TARGET_TOLERANCE, TEST, TRAIN, UNUSED, search_test
from tests.test_graded_mcd import measured


@pytest.fixture(scope="module")
def sides() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """1,000 SCAN commands as the fixed train part and 1,000 others as candidates."""
    scan = get_task("scan")
    pool = list(scan.enumerate(scan.default_params()).records("scan"))
    return pool[::10][:1000], pool[5::10][:1000]


def _run(train: list[dict], candidates: list[dict], test_size: int, seed: int = 3, **kwargs: Any):
    return search_test(
        [record_atoms(r) for r in train], [record_compounds(r) for r in train],
        [record_atoms(r) for r in candidates], [record_compounds(r) for r in candidates],
        test_size, 0.05, split_rng(seed, "fresh-test"), **kwargs,
    )


def test_train_stays_and_test_has_its_size(sides) -> None:
    train, candidates = sides
    result = _run(train, candidates, 150, steps=3000)
    assert (result.assignment[: len(train)] == TRAIN).all()
    rest = result.assignment[len(train):]
    assert int((rest == TEST).sum()) == 150 and set(rest.tolist()) <= {TEST, UNUSED}
    test = [r for r, where in zip(candidates, rest.tolist()) if where == TEST]
    da, dc, unseen = measured(train, test)
    assert result.atom_divergence == pytest.approx(da, abs=1e-12)
    assert result.compound_divergence == pytest.approx(dc, abs=1e-12)
    assert result.unseen_test_atoms == unseen


def test_maximizing_never_ends_below_its_random_start(sides) -> None:
    train, candidates = sides
    start = _run(train, candidates, 150, steps=1)
    longer = _run(train, candidates, 150, steps=4000)
    assert longer.compound_divergence >= start.compound_divergence
    assert longer.accepted > 0


def test_a_target_is_met_and_the_search_stops(sides) -> None:
    train, candidates = sides
    start = _run(train, candidates, 150, steps=1)
    target = round(start.compound_divergence + 0.05, 3)
    result = _run(train, candidates, 150, steps=20000, target=target)
    assert abs(result.compound_divergence - target) <= TARGET_TOLERANCE / 2
    assert result.steps < 20000 and result.atom_divergence <= 0.05 and result.unseen_test_atoms == 0


def test_same_seed_same_choice_other_seed_other_start(sides) -> None:
    train, candidates = sides
    a, b = _run(train, candidates, 150, steps=2000), _run(train, candidates, 150, steps=2000)
    assert np.array_equal(a.assignment, b.assignment)
    c = _run(train, candidates, 150, seed=4, steps=1)
    assert not np.array_equal(_run(train, candidates, 150, steps=1).assignment, c.assignment)


def test_every_candidate_in_test_leaves_nothing_to_move(sides) -> None:
    train, candidates = sides
    result = _run(train, candidates[:30], 30, steps=1000)
    assert (result.assignment[len(train):] == TEST).all() and result.steps == 0


def test_sizes_are_checked(sides) -> None:
    train, candidates = sides
    with pytest.raises(SplitError, match="exceeds the 30 candidates"):
        _run(train, candidates[:30], 31)
    with pytest.raises(SplitError, match="test_size >= 1"):
        _run(train, candidates, 0)
