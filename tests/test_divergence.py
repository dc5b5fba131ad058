"""Chernoff-coefficient divergences: published values and properties."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from gengap.splits.divergence import atom_divergence, chernoff_coefficient, compound_divergence, divergence

counts = st.dictionaries(st.sampled_from("abcdefgh"), st.integers(1, 50), min_size=1)


def test_published_example_and_its_reverse() -> None:
    train = {"a": 1, "b": 2, "c": 3}
    test = {"b": 4, "c": 5, "d": 6}
    assert divergence(train, test, 0.1) == pytest.approx(0.38018936998557706, abs=1e-15)
    assert divergence(test, train, 0.1) == pytest.approx(0.1938901600895815, abs=1e-15)
    assert compound_divergence(train, test) == pytest.approx(0.38018936998557706, abs=1e-15)


@given(counts, st.sampled_from([0.1, 0.5, 0.9]))
def test_identical_distributions_give_zero(p: dict[str, int], alpha: float) -> None:
    assert abs(divergence(p, dict(p), alpha)) < 1e-12


@given(counts, st.floats(0.01, 0.99))
def test_disjoint_distributions_give_one(p: dict[str, int], alpha: float) -> None:
    q = {k.upper(): v for k, v in p.items()}
    assert divergence(p, q, alpha) == 1.0


@given(counts, counts, st.floats(0.01, 0.99))
def test_bounds(p: dict[str, int], q: dict[str, int], alpha: float) -> None:
    assert 0.0 <= divergence(p, q, alpha) <= 1.0


@given(counts, counts, st.integers(2, 1000), st.integers(2, 1000))
def test_invariant_to_scaling_the_counts(p: dict[str, int], q: dict[str, int], s: int, t: int) -> None:
    scaled_p = {k: v * s for k, v in p.items()}
    scaled_q = {k: v * t for k, v in q.items()}
    assert divergence(scaled_p, scaled_q, 0.1) == pytest.approx(divergence(p, q, 0.1), abs=1e-12)


@given(counts, counts)
def test_atom_divergence_is_symmetric_compound_divergence_is_not_in_general(p: dict[str, int], q: dict[str, int]) -> None:
    assert atom_divergence(p, q) == pytest.approx(atom_divergence(q, p), abs=1e-12)
    assert chernoff_coefficient(p, q, 0.1) == pytest.approx(chernoff_coefficient(q, p, 0.9), abs=1e-12)


def test_empty_distribution_is_an_error() -> None:
    with pytest.raises(ValueError):
        divergence({}, {"a": 1}, 0.5)
