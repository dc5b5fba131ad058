"""CFQ's weighted compounds (gengap.splits.compound_weights) and the MCD option compound_weighting."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gengap.cli import main
from gengap.generators import get_task
from gengap.generators.derivation import tree_compounds
from gengap.splits.api import generate_records, get_strategy, make_options, split
from gengap.splits.base import SplitError
from gengap.splits.compound_weights import (
    CFQ,
    UNWEIGHTED,
    example_weights,
    occurrence_counts,
    conditional_maxima,
    quantized,
    resolve,
    tree_occurrences,
)

# A: S -> X -> Y(a), a chain of three rules; B: X -> Y(a).
TREE_A = ["S", ["X", ["Y", "a"]]]
TREE_B = ["X", ["Y", "a"]]


def test_hand_computed_weights_of_two_derivations() -> None:
    # Occurrences (2..5 rule nodes): A has S(X(_)) = {S,X}, X(Y(a)) = {X,Y}, S(X(Y(a))) = {S,X,Y};
    # B has X(Y(a)). N(X(Y(a))) = 2, of which 1 (A's) lies inside S(X(Y(a))): p = 1/2.
    # N(S(X(_))) = 1, inside S(X(Y(a))) once: p = 1. So in A: S(X(_)) weighs 1 - 1 = 0 (left out),
    # X(Y(a)) weighs 1 - 1/2 = 0.5, S(X(Y(a))) (no super-compound) 1; in B X(Y(a)) weighs 1.
    occurrences = [tree_occurrences(TREE_A), tree_occurrences(TREE_B)]
    assert sorted(t for t, _ in occurrences[0]) == ["S(X(Y(a)))", "S(X(_))", "X(Y(a))"]
    totals, within = occurrence_counts(occurrences)
    assert totals == Counter({"X(Y(a))": 2, "S(X(_))": 1, "S(X(Y(a)))": 1})
    p = conditional_maxima(totals, within)
    assert p == {("X(Y(a))", "S(X(Y(a)))"): 0.5, ("S(X(_))", "S(X(Y(a)))"): 1.0}
    assert example_weights(occurrences[0], p) == {"X(Y(a))": 0.5, "S(X(Y(a)))": 1.0}
    assert example_weights(occurrences[1], p) == {"X(Y(a))": 1.0}
    assert quantized({"X(Y(a))": 0.5, "S(X(Y(a)))": 1.0, "Z": 0.004}) == Counter({"X(Y(a))": 50, "S(X(Y(a)))": 100})


def test_an_example_weighs_a_compound_by_its_best_occurrence() -> None:
    # G occurs twice: at nodes {0,1} inside H = {0,1,2} (p(H|G) = 0.75: weight 0.25) and at {2,3}
    # alone (weight 1); the example's weight for G is the larger, 1. Without the second: 0.25.
    p = {("G", "H"): 0.75}
    assert example_weights([("G", 0b0011), ("G", 0b1100), ("H", 0b0111)], p) == {"G": 1.0, "H": 1.0}
    assert example_weights([("G", 0b0011), ("H", 0b0111)], p) == {"G": 0.25, "H": 1.0}


_RULES = st.sampled_from(["A", "B", "C"])
_TREES = st.recursive(
    st.sampled_from(["x", "y"]),
    lambda children: st.tuples(_RULES, st.lists(children, min_size=1, max_size=3)).map(lambda t: [t[0], *t[1]]),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_TREES, min_size=1, max_size=5))
def test_occurrences_are_the_compounds_and_weights_lie_in_0_1(trees: list) -> None:
    occurrences = [tree_occurrences(t) if isinstance(t, list) else [] for t in trees]
    for tree, found in zip(trees, occurrences):
        if isinstance(tree, list):
            assert Counter(text for text, _ in found) == tree_compounds(tree)
    totals, within = occurrence_counts(occurrences)
    p = conditional_maxima(totals, within)
    assert all(0 < v <= 1 for v in p.values())
    for found in occurrences:
        weights = example_weights(found, p)
        assert set(weights) <= {text for text, _ in found}
        assert all(0 < w <= 1 for w in weights.values())
        # a compound no other contains keeps weight 1: the largest occurrences always do
        if found:
            largest = max(bin(mask).count("1") for _, mask in found)
            assert all(weights[t] == 1.0 for t, mask in found if bin(mask).count("1") == largest)


def test_resolve_picks_the_task_default() -> None:
    assert resolve("task", {"cfq_like"}) == CFQ
    assert resolve("task", {"scan"}) == UNWEIGHTED
    assert resolve("unweighted", {"cfq_like"}) == UNWEIGHTED
    with pytest.raises(ValueError, match="unknown compound_weighting"):
        resolve("bogus", {"cfq_like"})


@pytest.fixture(scope="module")
def cfq_pool() -> list:
    task = get_task("cfq_like")
    return generate_records("cfq_like", task.params_type(max_depth=1), 300, 5)


OPTIONS = {"train_size": 150, "test_size": 30, "steps": 4000}


def test_cfq_like_mcd_weighs_compounds_by_default_and_names_the_measure(cfq_pool: list) -> None:
    default = split(cfq_pool, "mcd", OPTIONS, seed=3)
    assert "compound_weighting" not in default.report["options"]  # an added knob at its default
    assert default.report["search"]["compound_measure"].startswith("cfq weighted")
    assert 0 <= default.report["search"]["compound_divergence"] <= 1
    assert default.report["compound_measure"].startswith("unweighted")
    explicit = split(cfq_pool, "mcd", {**OPTIONS, "compound_weighting": "cfq"}, seed=3)
    assert [r["id"] for r in explicit.test] == [r["id"] for r in default.test]
    plain = split(cfq_pool, "mcd", {**OPTIONS, "compound_weighting": "unweighted"}, seed=3)
    assert "compound_measure" not in plain.report and "compound_measure" not in plain.report["search"]
    assert plain.report["options"]["compound_weighting"] == "unweighted"


def test_other_tasks_stay_unweighted_by_default() -> None:
    task = get_task("scan")
    records = generate_records("scan", task.params_type(), 300, 1)
    result = split(records, "mcd", {"train_size": 150, "test_size": 30, "steps": 2000}, seed=1)
    assert "compound_measure" not in result.report and "compound_measure" not in result.report["search"]


def test_same_seed_same_bytes(cfq_pool: list) -> None:
    runs = [split(cfq_pool, "mcd", {**OPTIONS, "compound_weighting": "cfq"}, seed=11) for _ in range(2)]
    texts = [json.dumps({**r.parts(), "report": r.report}, sort_keys=True) for r in runs]
    assert texts[0] == texts[1]


def test_a_bad_option_value_is_a_one_line_error() -> None:
    with pytest.raises(SplitError) as caught:
        make_options(get_strategy("mcd"), {"compound_weighting": "bogus"})
    assert "compound_weighting" in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(SplitError, match="does not combine with compounds=local"):
        make_options(get_strategy("mcd"), {"compound_weighting": "cfq", "compounds": "local"})


def _write_pool(path: Path, records: list) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def test_the_option_through_the_cli(cfq_pool: list, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pool = tmp_path / "pool.jsonl"
    _write_pool(pool, cfq_pool)
    base = ["split", str(pool), "--strategy", "mcd", "--option", "train_size=150", "--option", "test_size=30",
            "--option", "steps=4000", "--seed", "3"]
    assert main([*base, "--option", "compound_weighting=cfq", "--out", str(tmp_path / "w")]) == 0
    report = json.loads((tmp_path / "w" / "report.json").read_text())
    assert report["options"]["compound_weighting"] == "cfq"
    assert report["search"]["compound_measure"].startswith("cfq weighted")
    capsys.readouterr()
    assert main([*base, "--option", "compound_weighting=bogus", "--out", str(tmp_path / "x")]) != 0
    err = capsys.readouterr().err.strip()
    assert "compound_weighting" in err and len(err.splitlines()) == 1


def test_the_shipped_cfq_suite_3_searches_on_the_weighted_measure_by_default() -> None:
    from gengap.suite import load_suite
    from tests.test_cfq_suite import SUITE

    suite = load_suite(SUITE)
    assert suite["version"] == "3.0.0"
    for entry in suite["entries"]:
        if entry["strategy"] == "mcd":
            assert "compound_weighting" not in entry["options"]  # the task's default: cfq
            assert resolve(make_options(get_strategy("mcd"), entry["options"]).compound_weighting, {entry["task"]}) == CFQ
