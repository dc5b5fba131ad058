"""Split contracts one by one: boundaries, defaults, error messages and pinned outputs.

Written from the mutants mutmut left alive in splits/ (docs/mutation-testing.md): each test
states a rule of the documented behaviour with values worked out by hand, or pins an
output that releases depend on (a split is a fixed function of pool, options and seed).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from typing import Any

import numpy as np
import pytest
from hypothesis import given, strategies as st

from gengap.generators import get_task
from gengap.splits import SplitError, generate_records, sample_length_split, sample_level_split, split
from gengap.splits.api import get_strategy, make_options, parse_options, records_of_batch, sample_split, space_warnings
from gengap.splits.atoms import atoms_source, record_atoms, record_compounds
from gengap.splits.base import build_report, carve_validation, divergence_report, input_groups, part_summary
from gengap.splits.divergence import chernoff_coefficient
from gengap.splits.mcd import TEST, TRAIN, UNUSED, search
from gengap.splits.novelty import annotate, bucket, novelty_summary, record_novelty, seen_items

from tests.test_guarantees import _rare_atom_pool, toy


def digest(records: list[dict[str, Any]]) -> str:
    return hashlib.sha256("\n".join(r["id"] + " " + r["input"] for r in records).encode()).hexdigest()[:16]


def lengths_pool(values: list[int]) -> list[dict[str, Any]]:
    """Toy records with the given feature f (and input "w<i> x" so every input differs)."""
    return [toy(i, f"w{i} x", f=v) for i, v in enumerate(values)]


# -- iid, length, difficulty, holdout ------------------------------------------------------


def test_iid_takes_exactly_its_fraction_of_distinct_inputs() -> None:
    pool = [toy(i, f"w{i} x") for i in range(10)]
    result = split(pool, "iid", {"test_fraction": 0.3, "validation_fraction": 0}, seed=2)
    assert (len(result.train), len(result.test)) == (7, 3)


def test_thresholds_are_inclusive_and_the_rest_is_unused() -> None:
    pool = lengths_pool([1, 2, 3, 4, 5, 6, 7, 8, 9])
    result = split(pool, "difficulty", {"feature": "f", "train_min": 2, "train_max": 4, "test_min": 6, "test_max": 8, "validation_fraction": 0})
    assert sorted(r["difficulty"]["f"] for r in result.train) == [2, 3, 4]
    assert sorted(r["difficulty"]["f"] for r in result.test) == [6, 7, 8]
    assert result.report["unused"] == 3  # 1, 5 and 9
    assert (result.report["feature"], result.report["train_range"], result.report["test_range"]) == ("f", [2, 4], [6, 8])
    unbounded = split(pool, "difficulty", {"feature": "f", "train_max": 4, "validation_fraction": 0})
    assert (unbounded.report["train_range"], unbounded.report["test_range"]) == ([None, 4], [5, None])
    assert sorted(r["difficulty"]["f"] for r in unbounded.test) == [5, 6, 7, 8, 9]  # test_min = train_max + 1


def test_length_defaults_and_a_zero_bound() -> None:
    pool = [toy(i, " ".join(["t"] * (i + 1)), f=0) for i in range(8)]  # input lengths 1..8
    result = split(pool, "length", {"train_max": 3, "validation_fraction": 0})
    assert sorted(r["difficulty"]["input_length"] for r in result.test) == [4, 5, 6, 7, 8]
    below = split(pool, "length", {"train_min": 6, "train_max": 8, "test_min": 0, "test_max": 2, "validation_fraction": 0})
    assert sorted(r["difficulty"]["input_length"] for r in below.test) == [1, 2]
    nothing = split(pool, "length", {"train_max": 0, "validation_fraction": 0})
    assert nothing.train == [] and len(nothing.test) == 8
    with pytest.raises(SplitError, match=r"^length split needs option train_max \(or train_ranges\)$"):
        split(pool, "length", {})


def test_range_checks_by_hand() -> None:
    pool = lengths_pool([1, 2, 3, 4])
    equal = split(pool, "difficulty", {"feature": "f", "train_min": 2, "train_max": 2, "test_min": 4, "test_max": 4, "validation_fraction": 0})
    assert (len(equal.train), len(equal.test)) == (1, 1)  # one-value ranges are ranges
    for options, message in [
        ({"train_min": 3, "train_max": 2}, "^train_max=2 is below train_min=3$"),
        ({"train_max": 2, "test_min": 4, "test_max": 3}, "^test_max=3 is below test_min=4$"),
        ({"train_max": 3, "test_min": 3}, "^train range -1000000000..3 and test range 3..1000000000 overlap$"),
        ({"train_min": 3, "train_max": 4, "test_min": 1, "test_max": 3}, "^train range 3..4 and test range 1..3 overlap$"),
    ]:
        with pytest.raises(SplitError, match=message):
            split(pool, "difficulty", {"feature": "f", **options})
    with pytest.raises(SplitError, match=r"^difficulty split needs option train_max or train_ranges \(or level_max with a generated task\)$"):
        split(pool, "difficulty", {"feature": "f"})
    level_max = (
        "level_max splits generate each side from its levels: use a suite entry with level_max "
        "(gengap release) or gengap.splits.sample_level_split; a pool is split by a feature (train_max)"
    )
    with pytest.raises(SplitError, match=f"^{re.escape(level_max)}$"):
        split(pool, "difficulty", {"feature": "f", "level_max": 2})
    with pytest.raises(SplitError, match="has no difficulty feature 'g'"):
        split(pool, "difficulty", {"feature": "g", "train_max": 2})


def test_holdout_by_template_and_its_errors() -> None:
    task = get_task("pcfg_set")
    pool = generate_records("pcfg_set", task.default_params(), 300, 1)
    template = "X -> reverse X(X -> reverse X(_))"
    held = [r for r in pool if template in task.compounds(r)]
    assert 0 < len(held) < len(pool)
    result = split(pool, "holdout", {"template": template, "validation_fraction": 0})
    assert [r["id"] for r in result.test] == [r["id"] for r in held]
    assert len(result.train) == len(pool) - len(held)
    assert result.report["held_out"] == template
    for options, message in [
        ({}, "^holdout needs exactly one of the options atom and template$"),
        ({"atom": "a", "template": template}, "^holdout needs exactly one of the options atom and template$"),
        ({"atom": "no_such_atom"}, "^no example contains 'no_such_atom'$"),
        ({"template": template, "primitive_repeats": 2}, r"^primitive_repeats needs option primitive \(the bare primitive's input\)$"),
    ]:
        with pytest.raises(SplitError, match=message):
            split(pool, "holdout", options)


def test_holdout_atoms_must_co_occur() -> None:
    pool = [toy(i, text) for i, text in enumerate(["a b", "a c", "b c", "a b c"])]
    result = split(pool, "holdout", {"atom": "a+c", "validation_fraction": 0})
    assert sorted(r["input"] for r in result.test) == ["a b c", "a c"]
    with pytest.raises(SplitError, match="^no held-out example has input 'a'$"):
        split(pool, "holdout", {"atom": "a", "primitive_repeats": 1})


# -- entry points ---------------------------------------------------------------------------


def test_options_errors_speak_of_options() -> None:
    iid = get_strategy("iid")
    with pytest.raises(SplitError, match=r"^iid: option test_fraction='x' is not a valid float$"):
        parse_options(iid, {"test_fraction": "x"})
    with pytest.raises(SplitError, match=r"^iid: option test_fraction=2.0 is out of range \[0.0, 0.99\]$"):
        parse_options(iid, {"test_fraction": "2"})
    with pytest.raises(SplitError, match=r"^iid: unknown option 'bogus'"):
        make_options(iid, {"bogus": 1})
    assert parse_options(iid, {"test_fraction": "0.5"}).test_fraction == 0.5
    with pytest.raises(SplitError, match=r"^unknown split strategy 'nope'; known: category, difficulty, facts, gotu, holdout, iid, length, local_holdout, mcd, rule_holdout, task_holdout$"):
        get_strategy("nope")
    with pytest.raises(SplitError, match="^the pool is empty$"):
        split([], "iid")


def test_sampled_split_sizes_are_checked() -> None:
    parity = get_task("parity_check")
    one = [parity.with_size(1, 4)]
    for part in ("train", "validation", "test"):
        sizes = {"train": 5, "validation": 1, "test": 5, part: -1}
        with pytest.raises(SplitError, match=f"^size of {part} must be non-negative, got -1$"):
            sample_split("parity_check", one, one, sizes, 0, "length", {})
    for sizes in ({"train": 0, "validation": 0, "test": 3}, {"train": 3, "test": 0}, {"train": 3}, {"test": 3}):
        with pytest.raises(SplitError, match="^a sampled split needs at least one train and one test example$"):
            sample_split("parity_check", one, one, sizes, 0, "length", {})
    small = sample_split("parity_check", one, [parity.with_size(20, 20)], {"train": 1, "test": 1}, 0, "length", {})
    assert (len(small.train) + len(small.validation), len(small.test)) == (1, 1)  # validation defaults to 0
    assert small.report["options"]["validation_fraction"] == 0.0


def test_sides_spread_evenly_over_their_settings() -> None:
    """7 train-side records over levels 1..3: 3, 2, 2 (the remainder goes to the first ones)."""
    result = sample_level_split("parity_check", 3, {"train": 7, "validation": 0, "test": 5}, seed=4)
    bands = Counter(1 if len(r["input"].split()) <= 5 else 2 if len(r["input"].split()) <= 10 else 3 for r in result.train)
    assert bands == Counter({1: 3, 2: 2, 3: 2})
    assert result.report["options"] == {"by": "level", "level_max": 3, "test_levels": [4, 5, 6, 7, 8, 9, 10], "validation_fraction": 0.0}
    assert sorted({len(r["input"].split()) > 20 for r in result.test}) == [True]


def test_sampled_splits_are_pinned() -> None:
    """The sampled sides are fixed functions of (seed, side, setting): releases depend on it."""
    length = sample_length_split("parity_check", (1, 8), (9, 12), {"train": 30, "validation": 5, "test": 10}, seed=3)
    assert [digest(p) for p in (length.train, length.validation, length.test)] == [
        "bfcf751794bda812", "ef55f621977d8d42", "d78481fc5f32e74b",
    ]  # fmt: skip
    level = sample_level_split("addition", 2, {"train": 20, "validation": 4, "test": 8}, seed=5, test_levels=[3, 4])
    assert [digest(p) for p in (level.train, level.validation, level.test)] == [
        "168c5f903b3601a3", "be2c663ed52491eb", "4e3174510eb20d9d",
    ]  # fmt: skip
    assert length.report["options"] == {
        "by": "size", "size_knob": get_task("parity_check").size_knob, "train_range": [1, 8], "test_range": [9, 12],
        "validation_fraction": 0.142857,
    }  # fmt: skip


def test_sampled_split_argument_errors() -> None:
    sizes = {"train": 5, "test": 5}
    with pytest.raises(SplitError, match=r"^train range \(1, 8\) and test range \(8, 12\) overlap$"):
        sample_length_split("parity_check", (1, 8), (8, 12), sizes)
    with pytest.raises(SplitError, match="^parity_check: parameter max_length=20000 is out of range"):
        sample_length_split("parity_check", (1, 8), (9, 20000), sizes)
    for level_max in (0, 10):
        with pytest.raises(SplitError, match=f"^level_max must be in 1..9, got {level_max}$"):
            sample_level_split("parity_check", level_max, sizes)
    with pytest.raises(SplitError, match=r"^test levels must lie in 4..10, got \[3\]$"):
        sample_level_split("parity_check", 3, sizes, test_levels=[3])
    with pytest.raises(SplitError, match=r"^test levels must lie in 4..10, got \[11\]$"):
        sample_level_split("parity_check", 3, sizes, test_levels=[11])


def test_space_warnings_by_hand() -> None:
    """parity_check lengths 1..3 have 2 + 4 + 8 = 14 distinct inputs."""
    setting = [get_task("parity_check").with_size(1, 3)]
    assert space_warnings("parity_check", setting, 15, "side") == ["side: 15 examples drawn from only 14 distinct inputs: duplicates are certain"]
    assert space_warnings("parity_check", setting, 14, "side") == ["side: 14 examples drawn from 14 distinct inputs: expect many duplicates"]
    assert space_warnings("parity_check", setting, 2, "side") == ["side: 2 examples drawn from 14 distinct inputs: expect many duplicates"]
    assert space_warnings("parity_check", setting, 1, "side") == []  # 1 <= 14 // 10
    wide = [get_task("parity_check").with_size(1, 6)]  # 126 inputs: 12 <= 126 // 10 = 12 < 13
    assert space_warnings("parity_check", wide, 12, "s") == [] and space_warnings("parity_check", wide, 13, "s") != []
    assert space_warnings("pcfg_set", [get_task("pcfg_set").make_params({"max_functions": 100, "max_depth": 16})], 10**9, "s") == []  # size unknown (None): no warning


def test_records_of_batch() -> None:
    task = get_task("parity_check")
    batch = task.generate(np.random.default_rng(0), 3, task.default_params())
    assert records_of_batch(batch, "parity_check") == list(batch.records("parity_check"))


# -- the frame: groups, validation, summaries, reports ----------------------------------------


def test_input_groups_keep_first_seen_order() -> None:
    records = [toy(i, text) for i, text in enumerate(["b", "a", "b", "c", "a"])]
    assert input_groups(records) == {"b": [0, 2], "a": [1, 4], "c": [3]}


def test_carve_validation_edges() -> None:
    side = [toy(i, f"w{i}") for i in range(10)]
    rng = np.random.default_rng(0)
    assert carve_validation(side, 0.0, rng)[0] == side and carve_validation(side, 0.0, rng)[1].records == []
    assert carve_validation([], 0.5, rng)[1].records == []
    train, validation = carve_validation(side, 0.25, rng)  # round(2.5) = 2 (half to even)
    assert (len(train), len(validation.records)) == (8, 2)
    train, validation = carve_validation(side, 0.35, rng)  # round(3.5) = 4
    assert (len(train), len(validation.records)) == (6, 4)
    big = [toy(i, "same") for i in range(6)] + [toy(10 + i, f"v{i}") for i in range(4)]
    train, validation = carve_validation(big, 0.5, np.random.default_rng(1))  # "same" occurs 6 times: never carved
    assert len(validation.records) == 4 and [r["input"] for r in train] == ["same"] * 6
    assert validation.info["requested"] == 5 and validation.info["size"] == 4
    assert validation.warnings == ["validation: 4 of the 5 records asked for; input length 1 could not give its share "
                                   "(1 record: too few of its inputs occur only once on the train side)"]


def test_part_summary_tracks_both_ends() -> None:
    records = [toy(i, "a b", f=v) for i, v in enumerate([5, 3, 7, 4, 7])]
    summary = part_summary(records)
    assert summary["ranges"]["f"] == [3, 7] and summary["ranges"]["input_length"] == [2, 2]
    assert (summary["size"], summary["duplicate_inputs"], summary["tasks"]) == (5, 4, {"toy": 5})
    assert summary["input_lengths"] == {"2": 5}
    assert part_summary([]) == {"size": 0, "tasks": {}, "ranges": {}, "input_lengths": {}, "duplicate_inputs": 0}


def test_divergence_report_edges() -> None:
    train = [toy(0, "a b")]
    assert divergence_report([], train) == {"atom_divergence": None, "compound_divergence": None, "unseen_atoms": [], "unseen_atom_count": 0}
    assert divergence_report(train, [])["compound_divergence"] is None
    many = [toy(i, f"u{i:03d} v{i:03d}") for i in range(60)]
    report = divergence_report(train, many)
    assert report["unseen_atom_count"] == 120 and len(report["unseen_atoms"]) == 50
    assert report["unseen_atoms"] == sorted(report["unseen_atoms"]) and report["unseen_atoms"][0] == "u000"
    assert (report["atom_divergence"], report["compound_divergence"], report["atoms_source"]) == (1.0, 1.0, "tokens")


def test_reports_name_how_compounds_were_counted_and_warn_on_an_empty_test() -> None:
    pool = [toy(i, " ".join(["t"] * (i + 1))) for i in range(4)]
    structural = split(pool, "length", {"train_max": 2, "abstract_lexical": True, "validation_fraction": 0})
    assert structural.report["compounds"] == "structural (lexical items abstracted)"
    lexical = split(pool, "length", {"train_max": 9, "validation_fraction": 0})
    assert lexical.report["compounds"] == "lexical"
    assert lexical.report["warnings"] == ["the test part is empty"] and lexical.report["sizes"]["test"] == 0


# -- atoms, novelty, divergence ---------------------------------------------------------------


def test_atoms_fall_back_to_tokens_and_pairs() -> None:
    record = toy(0, "a b a")
    assert record_atoms(record) == Counter({"a": 2, "b": 1})
    assert record_compounds(record) == Counter({"a b": 1, "b a": 1})
    scan = next(iter(get_task("scan").enumerate(get_task("scan").make_params({"max_actions": 1})).records("scan")))
    assert atoms_source([record]) == "tokens" and atoms_source([scan]) == "derivation"
    assert atoms_source([scan, record]) == "mixed" and atoms_source([]) == "tokens"
    assert record_compounds(scan, abstract_lexical=True) != record_compounds(scan)


def test_novelty_buckets_and_summary_by_hand() -> None:
    assert [bucket(k) for k in (0, 1, 2, 3, 4, 9)] == ["0", "1", "2", "3+", "3+", "3+"]
    assert novelty_summary([toy(0, "a")]) is None
    parts = annotate({"train": [toy(0, "a b")], "validation": [], "test": [toy(1, "a b c d e")]})
    assert parts["test"][0]["novelty"] == {"unseen_compounds": 3, "unseen_atoms": 3}
    assert novelty_summary(parts["test"])["unseen_compounds_histogram"] == {"0": 0, "1": 0, "2": 0, "3+": 1}
    stale = dict(toy(2, "a b"), novelty={"unseen_compounds": 9, "unseen_atoms": 9})
    again = annotate({"train": [stale], "test": [stale]})
    assert "novelty" not in again["train"][0] and again["test"][0]["novelty"] == {"unseen_compounds": 0, "unseen_atoms": 0}
    assert stale["novelty"]["unseen_compounds"] == 9  # inputs are never modified


def test_chernoff_coefficient_by_hand() -> None:
    # p = (1/2, 1/2) over {a, b}, q = (1/4, 3/4) over {b, c}: C_0.5 = sqrt(1/2 * 1/4)
    assert chernoff_coefficient({"a": 1, "b": 1}, {"b": 1, "c": 3}, 0.5) == pytest.approx(0.5**0.5 * 0.25**0.5, abs=1e-15)
    assert chernoff_coefficient({"b": 1, "c": 3}, {"a": 1, "b": 1}, 0.5) == pytest.approx(0.25**0.5 * 0.5**0.5, abs=1e-15)
    assert chernoff_coefficient({"a": 2, "b": 2, "c": 2}, {"a": 1}, 0.1) == pytest.approx((1 / 3) ** 0.1, abs=1e-15)
    with pytest.raises(ValueError, match="^divergence of an empty distribution$"):
        chernoff_coefficient({}, {"a": 1}, 0.5)
    with pytest.raises(ValueError, match="^divergence of an empty distribution$"):
        chernoff_coefficient({"a": 1}, {"a": 0}, 0.5)


def test_chernoff_coefficient_at_its_limits() -> None:
    """Only items on both sides count: at alpha = 1 the coefficient is P's mass on Q's support,
    at alpha = 0 Q's mass on P's support (the limits of p^a q^(1-a), where 0^0 would give 1).
    P = (1/2, 1/2) over {a, b}, Q = (1/4, 3/4) over {b, c}; then P' = (1/4, 1/4, 1/2) over
    {a, b, d}, so that the smaller mapping, the one iterated, is Q."""
    p, q, p3 = {"a": 1, "b": 1}, {"b": 1, "c": 3}, {"a": 1, "b": 1, "d": 2}
    assert chernoff_coefficient(p, q, 1.0) == 0.5 and chernoff_coefficient(p, q, 0.0) == 0.25
    assert chernoff_coefficient(p3, q, 1.0) == 0.25 and chernoff_coefficient(p3, q, 0.0) == 0.25


@given(
    st.dictionaries(st.sampled_from("abcdefghijk"), st.integers(1, 9), min_size=1),
    st.dictionaries(st.sampled_from("abcdefghijk"), st.integers(1, 9), min_size=1),
    st.sampled_from([0.1, 0.5]),
)
def test_chernoff_coefficient_stays_in_the_unit_interval(p: dict[str, int], q: dict[str, int], alpha: float) -> None:
    """Also where the float sum overshoots 1: for two halves each term is 0.5000000000000001."""
    assert 0.0 <= chernoff_coefficient(p, q, alpha) <= 1.0
    assert chernoff_coefficient({"a": 1, "b": 1}, {"a": 1, "b": 1}, 0.5) == 1.0


# -- MCD ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pool() -> list[dict[str, Any]]:
    return _rare_atom_pool()


def test_mcd_output_is_pinned(pool: list[dict[str, Any]]) -> None:
    """MCD is a deterministic function of (pool, options, seed): releases depend on the exact
    trajectory of the search (candidates, refreshes, acceptance), so it is pinned."""
    options = {"train_size": 150, "test_size": 60, "steps": 6000, "validation_fraction": 0, "atom_divergence_max": 0.05}
    result = split(pool, "mcd", options, seed=7)
    assert (digest(result.train), digest(result.test)) == ("7ba764f290862cc7", "5b3b99ae86d5fedf")
    assert (result.report["atom_divergence"], result.report["compound_divergence"]) == (0.049124, 0.459999)
    assert result.report["search"] == {
        "objective": "maximize",
        "steps": 6000,  # over all chains
        "accepted": 236,  # by the chain kept
        "chains": 4,
        "chain_kept": 1,
        "pool_unique_inputs": 262,
    }
    target = split(pool, "mcd", {**options, "steps": 20000, "compound_divergence": 0.45}, seed=7)
    assert (digest(target.train), digest(target.test)) == ("3e2c12b17f8dd137", "6f3678b96bba431f")
    assert target.report["compound_divergence"] == 0.450476  # within 0.01 / 2 of the target: the search stops
    assert target.report["search"] == {"objective": "target 0.45", "steps": 2284, "accepted": 192, "pool_unique_inputs": 262}


def test_mcd_can_aim_below_a_random_split(pool: list[dict[str, Any]]) -> None:
    """A target below the random start's D_C (0.049513 for seed 3): the search moves down,
    ranking candidates the other way; pinned like any MCD output."""
    options = {"train_size": 150, "test_size": 60, "validation_fraction": 0, "atom_divergence_max": 0.05}
    # one step of a search for a high target fails, naming the D_C of its random start
    with pytest.raises(SplitError, match=r"got 0\.0495 after 1 steps"):
        split(pool, "mcd", {**options, "steps": 1, "compound_divergence": 0.9}, seed=3)
    low = split(pool, "mcd", {**options, "steps": 20000, "compound_divergence": 0.02}, seed=3)
    assert low.report["compound_divergence"] == 0.024955
    assert (digest(low.train), digest(low.test)) == ("9318d56daf00ecf2", "e646368007ac0ff4")
    assert low.report["search"] == {"objective": "target 0.02", "steps": 258, "accepted": 57, "pool_unique_inputs": 262}


def test_search_arguments_and_progress(pool: list[dict[str, Any]]) -> None:
    atoms = [record_atoms(r) for r in pool]
    compounds = [record_compounds(r) for r in pool]
    rng = np.random.default_rng(0)
    with pytest.raises(SplitError, match=f"^train_size \\+ test_size = {len(pool) + 1} exceeds the pool of {len(pool)}$"):
        search(atoms, compounds, len(pool), 1, 0.05, rng)
    for train_size, test_size in ((0, 5), (5, 0)):
        with pytest.raises(SplitError, match="^MCD needs train_size >= 1 and test_size >= 1$"):
            search(atoms, compounds, train_size, test_size, 0.05, rng)
    whole = search(atoms, compounds, len(pool) - 1, 1, 1.0, np.random.default_rng(0), steps=50)
    assert sorted(Counter(whole.assignment.tolist()).items()) == [(TRAIN, len(pool) - 1), (TEST, 1)]
    seen: list[tuple[int, float, float]] = []
    result = search(atoms, compounds, 150, 60, 0.05, np.random.default_rng(1), steps=4000, progress=lambda *a: seen.append(a))
    assert len(seen) == result.accepted // 1000 and all(0 <= dc <= 1 and 0 <= da <= 1 for _, dc, da in seen)
    assert [s for s, _, _ in seen] == sorted(s for s, _, _ in seen) and result.steps == 4000
    assert sorted(Counter(result.assignment.tolist()).items()) == [(UNUSED, len(pool) - 210), (TRAIN, 150), (TEST, 60)]


def test_unreachable_targets_are_errors(pool: list[dict[str, Any]]) -> None:
    options = {"train_size": 150, "test_size": 60, "steps": 200, "validation_fraction": 0, "atom_divergence_max": 0.05}
    with pytest.raises(SplitError, match=r"^compound divergence target 0.99 not reached within \+-0.01: got 0\.\d{4} after 200 steps \(targets range"):
        split(pool, "mcd", {**options, "compound_divergence": 0.99}, seed=0)


def test_maximizing_search_continues_the_best_screened_chain(pool: list[dict[str, Any]], monkeypatch) -> None:
    """CHAINS chains each run SCREEN_SHARE * steps / CHAINS moves; the one with the best
    objective then (and only it) runs the rest; the result is that chain's split."""
    from gengap.splits import mcd

    calls: list[tuple[int, int, float]] = []  # (chain, moves asked, objective after)
    chains: list[Any] = []
    original = mcd._Chain.run

    def recording_run(self, steps, progress=None, cooling=False):  # noqa: ANN001
        original(self, steps, progress, cooling)
        if self not in chains:
            chains.append(self)
        calls.append((chains.index(self), steps, cooling, self.score))

    monkeypatch.setattr(mcd._Chain, "run", recording_run)
    atoms = [record_atoms(r) for r in pool]
    compounds = [record_compounds(r) for r in pool]
    result = search(atoms, compounds, 150, 60, 0.05, np.random.default_rng(5), steps=8000)
    screen = int(8000 * mcd.SCREEN_SHARE) // mcd.CHAINS
    assert [(c, s, cool) for c, s, cool, _ in calls[: mcd.CHAINS]] == [(i, screen, False) for i in range(mcd.CHAINS)]
    scores = [score for _, _, _, score in calls[: mcd.CHAINS]]
    best = max(range(mcd.CHAINS), key=lambda i: (scores[i], -i))
    assert calls[mcd.CHAINS:] == [(best, 8000 - screen * mcd.CHAINS, True, chains[best].score)]
    assert all(c.temperature == mcd.TEMPERATURE / 60 for c in chains)
    assert result.chain == best and result.steps == 8000
    assert len({c.rng.bit_generator.random_raw() for c in chains}) == mcd.CHAINS  # independent streams
    assert np.array_equal(result.assignment, chains[best].assignment)
    assert result.compound_divergence == pytest.approx(chains[best].compound_side.current())


@pytest.mark.parametrize("bound", [0.002, 0.01, 0.05])
def test_atom_divergence_never_ends_above_its_bound(pool: list[dict[str, Any]], bound: float) -> None:
    """The bound is hard once met: a move that would raise D_A above it is rejected (a penalty
    alone lets a small overshoot buy compound divergence). Checked unrounded, with the
    divergence recomputed from the final sides by the reference formula."""
    atoms = [record_atoms(r) for r in pool]
    compounds = [record_compounds(r) for r in pool]
    for target in (None, 0.3):
        result = search(atoms, compounds, 150, 60, bound, np.random.default_rng(11), steps=6000, target=target)
        train = Counter()
        test = Counter()
        for counts, where in zip(atoms, result.assignment.tolist()):
            (train if where == TRAIN else test if where == TEST else Counter()).update(counts)
        reference = 1.0 - chernoff_coefficient(train, test, 0.5)
        assert result.atom_divergence == pytest.approx(reference, abs=1e-12)
        assert reference <= bound + 1e-12, (target, reference)


# -- survivors of the issue 17 mutation run (docs/mutation-testing.md) ---------------------------


@pytest.fixture(scope="module")
def scan_records() -> dict[str, dict[str, Any]]:
    """The 102 single-command SCAN records, by input."""
    task = get_task("scan")
    return {r["input"]: r for r in task.enumerate(task.make_params({"max_conjuncts": 1})).records("scan")}


def test_abstract_lexical_reaches_novelty_and_templates(scan_records: dict[str, dict[str, Any]]) -> None:
    """"walk around right" has six compounds; beside "walk around left" and "walk left" in train,
    five are unseen as written (all but C -> S(S -> V(_))) and none once lexical items are *."""
    pool = [scan_records[text] for text in ("walk around left", "walk around right", "walk left")]
    options = {"atom": "right", "validation_fraction": 0}
    lexical = split(pool, "holdout", options)
    structural = split(pool, "holdout", {**options, "abstract_lexical": True})
    assert [r["input"] for r in structural.test] == ["walk around right"]
    assert lexical.test[0]["novelty"] == {"unseen_compounds": 5, "unseen_atoms": 1}
    assert structural.test[0]["novelty"] == {"unseen_compounds": 0, "unseen_atoms": 1}
    assert annotate({"train": pool[:1], "test": pool[1:2]}, True)["test"][0]["novelty"]["unseen_compounds"] == 0
    assert annotate({"train": pool[:1], "test": pool[1:2]})["test"][0]["novelty"]["unseen_compounds"] == 5  # lexical by default
    assert record_novelty(pool[0], *seen_items(pool[:1])) == {"unseen_compounds": 0, "unseen_atoms": 0}  # lexical on both sides
    assert "V -> D[1] around D[2](U -> walk(walk),around,left)" in seen_items(pool[:1])[1]  # lexical by default
    report = build_report("x", {}, None, {"train": pool[:1], "validation": [], "test": pool[1:2]})
    assert report["compounds"] == "lexical"  # abstract_lexical defaults to False
    lexical_dc = divergence_report(pool[:1], pool[1:2], False)["compound_divergence"]
    assert divergence_report(pool[:1], pool[1:2])["compound_divergence"] == lexical_dc
    assert divergence_report(pool[:1], pool[1:2], True)["compound_divergence"] != lexical_dc
    template = {"template": "V -> D[1] around D[2](U -> walk(*),*,*)", "abstract_lexical": True, "validation_fraction": 0}
    held = split(pool, "holdout", template)
    assert ([r["input"] for r in held.train], [r["input"] for r in held.test]) == (["walk left"], ["walk around left", "walk around right"])


def test_holdout_of_co_occurring_atoms_has_no_default_primitive() -> None:
    pool = [toy(1, "a b"), toy(2, "a"), toy(3, "b c")]
    with pytest.raises(SplitError, match="^primitive_repeats needs option primitive"):
        split(pool, "holdout", {"atom": "a+b", "primitive_repeats": 1})


def test_mcd_defaults_and_an_exact_atom_bound() -> None:
    """test_size defaults to a tenth of the distinct inputs; D_A = 0 exactly meets a bound of 0
    (one atom everywhere: no warning)."""
    pool = [toy(i, " ".join(["a"] * (i + 1))) for i in range(20)]
    result = split(pool, "mcd", {"train_size": 10, "steps": 50, "atom_divergence_max": 0.0, "validation_fraction": 0})
    assert (len(result.train), len(result.test)) == (10, 2)
    assert result.report["atom_divergence"] == 0.0 and result.report["warnings"] == []


def test_sampled_splits_report_their_strategy() -> None:
    length = sample_length_split("parity_check", (1, 4), (5, 6), {"train": 6, "validation": 0, "test": 3}, seed=0)
    level = sample_level_split("parity_check", 2, {"train": 6, "validation": 0, "test": 3}, seed=0)
    assert (length.report["strategy"], level.report["strategy"]) == ("length", "difficulty")



def test_sampled_split_reports_by_hand() -> None:
    """parity_check has 2 + 4 inputs of lengths 1 and 2 (8 drawn: duplicates certain) and 8 of
    length 3 (3 drawn: more than a tenth of them)."""
    sizes = {"train": 8, "validation": 0, "test": 3}
    report = sample_length_split("parity_check", (1, 2), (3, 3), sizes, seed=5).report
    assert (report["sampled"], report["seed"]) == (True, 5)
    assert report["train_params"] == [{"min_length": 1, "max_length": 2}]
    assert report["test_params"] == [{"min_length": 3, "max_length": 3}]
    assert report["warnings"] == [
        "train side: 8 examples drawn from only 6 distinct inputs: duplicates are certain",
        "test side: 3 examples drawn from 8 distinct inputs: expect many duplicates",
    ]
    for train_range, test_range in (((3, 4), (1, 3)), ((1, 4), (2, 3))):  # touching or inside: overlap
        with pytest.raises(SplitError, match="overlap"):
            sample_length_split("parity_check", train_range, test_range, sizes)
    seeds = [digest(sample_length_split("parity_check", (1, 4), (5, 6), sizes, **s).train) for s in ({}, {"seed": 0})]
    assert seeds[0] == seeds[1]  # the default seed is 0
    levels = [sample_level_split("parity_check", m, sizes).report["options"]["level_max"] for m in (1, 9)]
    assert levels == [1, 9] and digest(sample_level_split("parity_check", 1, sizes).train) == digest(
        sample_level_split("parity_check", 1, sizes, seed=0).train
    )


def test_report_overlap_counts_test_records_seen_in_train_or_validation() -> None:
    test = [toy(3, "a x"), toy(4, "b x"), toy(5, "b x"), toy(6, "c x")]
    parts = {"train": [toy(1, "a x")], "validation": [toy(2, "b x")], "test": test}
    assert build_report("x", {}, 0, parts)["overlap"] == 3


def test_split_seed_defaults_to_zero() -> None:
    pool = [toy(i, f"w{i} x") for i in range(20)]
    default, zero = split(pool, "iid", {"validation_fraction": 0}), split(pool, "iid", {"validation_fraction": 0}, seed=0)
    assert digest(default.test) == digest(zero.test) and default.report["seed"] == 0


def test_mcd_searches_report_every_proposed_move(pool: list[dict[str, Any]]) -> None:
    """Inside reporting_steps a search reports each batch's proposals; they sum to its steps
    (fewer than the budget when a target stops it early); outside, nothing is reported."""
    from gengap.splits.mcd import reporting_steps

    options = {"train_size": 150, "test_size": 60, "validation_fraction": 0, "atom_divergence_max": 0.05}
    seen: list[int] = []
    with reporting_steps(seen.append):
        result = split(pool, "mcd", {**options, "steps": 4000}, seed=2)
    assert sum(seen) == 4000 == result.report["search"]["steps"]
    assert len(seen) > 4 and all(n > 0 for n in seen)
    seen.clear()
    with reporting_steps(seen.append):
        target = split(pool, "mcd", {**options, "steps": 20000, "compound_divergence": 0.45}, seed=7)
    assert sum(seen) == target.report["search"]["steps"] < 20000
    seen.clear()
    split(pool, "mcd", {**options, "steps": 500}, seed=2)
    assert seen == []


def test_gengap_split_shows_the_mcd_search_progress_on_a_terminal(pool: list[dict[str, Any]], tmp_path, capsys, monkeypatch) -> None:
    import json
    import sys

    from gengap.cli import main

    source = tmp_path / "pool.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in pool))
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    args = ["split", str(source), "--strategy", "mcd", "--out", str(tmp_path / "out")]
    for option in ("train_size=150", "test_size=60", "steps=3000", "atom_divergence_max=0.05"):
        args += ["--option", option]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "mcd search" in err and "100%" in err
