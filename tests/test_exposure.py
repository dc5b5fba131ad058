"""Exposure (gengap.splits.exposure): `exposure: k` moves exactly k documented test-side examples (or k
copies of one) into train and out of test, deterministically, for every strategy; a suite list
of k values gives one config per k, sharing the unswept config's seed."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gengap.generators import get_task
from gengap.release import build_entry, entry_seed
from gengap.suite import SuiteError, parse_suite
from gengap.splits import SplitError, generate_records, split

PARITY = get_task("parity_check")
LENGTH = {"train_max": 8}


@pytest.fixture(scope="module")
def pool() -> list[dict]:
    return generate_records("parity_check", PARITY.with_size(1, 16), 600, 7)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 40), st.booleans(), st.integers(0, 2**32))
def test_exposure_moves_exactly_k_documented_examples(pool: list[dict], k: int, copies: bool, seed: int) -> None:
    base = split(pool, "length", LENGTH, seed=seed)
    result = split(pool, "length", {**LENGTH, "exposure": k, "exposure_copies": copies}, seed=seed)
    if k == 0:
        drop = lambda report: {key: value for key, value in report.items() if key != "options"}  # noqa: E731
        assert result.parts() == base.parts() and drop(result.report) == drop(base.report) and "exposed" not in result.report
        return
    exposed = result.report["exposed"]
    assert exposed["count"] == k and exposed["copies"] == copies
    assert len(exposed["ids"]) == (1 if copies else k) == len(set(exposed["ids"]))
    by_id = {r["id"]: r for r in base.test}
    inputs = {by_id[i]["input"] for i in exposed["ids"]}  # every exposed example came from the test side
    train_ids = Counter(r["id"] for r in result.train)
    assert all(train_ids[i] == (k if copies else 1) for i in exposed["ids"])
    assert not any(r["id"] in exposed["ids"] for r in result.validation)  # pinned to train
    assert result.test == [r for r in base.test if r["input"] not in inputs]
    assert exposed["removed_from_test"] == len(base.test) - len(result.test)
    assert result.validation == base.validation  # the rest of the split is untouched
    assert [r for r in result.train if r["id"] not in exposed["ids"]] == base.train
    again = split(pool, "length", {**LENGTH, "exposure": k, "exposure_copies": copies}, seed=seed)
    assert again.parts() == result.parts() and again.report == result.report


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 20), st.integers(1, 20), st.integers(0, 2**32))
def test_a_smaller_k_exposes_a_subset_of_a_larger_ones(pool: list[dict], a: int, b: int, seed: int) -> None:
    small, large = sorted((a, b))
    ids = [split(pool, "length", {**LENGTH, "exposure": k}, seed=seed).report["exposed"]["ids"] for k in (small, large)]
    assert ids[0] == ids[1][:small]


def test_too_many_is_a_one_line_error(pool: list[dict]) -> None:
    distinct = len({r["input"] for r in split(pool, "length", LENGTH).test})
    with pytest.raises(SplitError, match=f"exposure {distinct + 1} needs {distinct + 1} distinct test inputs, the test side has {distinct}"):
        split(pool, "length", {**LENGTH, "exposure": distinct + 1})
    assert split(pool, "length", {**LENGTH, "exposure": distinct + 1, "exposure_copies": True}).report["exposed"]["count"] == distinct + 1


def test_holdout_exposure_leaks_held_out_examples() -> None:
    texts = ["jump", "jump twice", "walk", "walk twice", "jump and walk", "run", "jump left", "run twice"]
    records = [
        {"id": f"x-{i}", "task": "unknown_task", "input": t, "target": "t", "difficulty": {"input_length": len(t.split()), "output_length": 1}}
        for i, t in enumerate(texts)
    ]
    result = split(records, "holdout", {"atom": "jump", "exposure": 2, "validation_fraction": 0.0}, seed=0)
    exposed = [r for r in result.train if r["id"] in result.report["exposed"]["ids"]]
    assert len(exposed) == 2 and all("jump" in r["input"] for r in exposed)
    assert len(result.test) == 2 and not {r["input"] for r in result.test} & {r["input"] for r in exposed}


def test_mcd_and_category_take_exposure() -> None:
    addition = get_task("addition")
    records = generate_records("addition", addition.make_params({"max_digits_a": 3, "max_digits_b": 3}), 400, 3)
    options = {"train_size": 300, "test_size": 60, "steps": 200}
    base = split(records, "mcd", options, seed=2)
    mcd = split(records, "mcd", {**options, "exposure": 3}, seed=2)
    assert len(mcd.report["exposed"]["ids"]) == 3
    assert {r["id"] for r in base.test} >= set(mcd.report["exposed"]["ids"])
    cogs = get_task("cogs")
    pool = list(cogs.generate(np.random.default_rng(2020), 600, cogs.make_params({"gen_share": 0.6})).records("cogs"))
    category = split(pool, "category", {"category": "all", "exposure": 4}, seed=1)
    assert len(category.report["exposed"]["ids"]) == 4 and isinstance(category.report["exposure"], list)  # COGS's own exposure kept
    assert all(cogs.category(r) for r in category.train if r["id"] in category.report["exposed"]["ids"])


HEAD = "name: t\nversion: 1.0.0\nseed: 1\nlicense: mit\nentries:\n"
SWEEP = "  - {task: parity_check, split: length, params: {max_length: 16}, pool: {n: 300}, options: {train_max: 8, exposure: %s}}\n"


def test_a_suite_list_of_k_gives_one_config_per_k_on_one_seed() -> None:
    entries = parse_suite(HEAD + SWEEP % "[0, 2, 5]")["entries"]
    assert [e["name"] for e in entries] == ["parity_check-length_k0000", "parity_check-length_k0002", "parity_check-length_k0005"]
    assert {e["seed_of"] for e in entries} == {"parity_check-length"}
    assert [e["options"].get("exposure", 0) for e in entries] == [0, 2, 5]
    plain = parse_suite(HEAD + SWEEP % "0")["entries"][0]
    assert "seed_of" not in plain and entry_seed(entries[0], 1) == entry_seed(plain, 1)
    results = [build_entry(e, 1) for e in entries]
    assert results[0].parts() == build_entry(plain, 1).parts()  # k = 0 is the unswept split
    two, five = (r.report["exposed"]["ids"] for r in results[1:])
    assert five[:2] == two
    assert results[2].validation == results[0].validation


@pytest.mark.parametrize(
    "value, message",
    [("[1, 1]", "exposure counts must differ"), ("[-1, 2]", "non-empty list of integers in \\[0, 1,000,000\\]"),
     ("[1.5]", "non-empty list of integers"), ("[]", "non-empty list")],
)
def test_bad_exposure_sweeps_are_one_line_errors(value: str, message: str) -> None:
    with pytest.raises(SuiteError, match=message) as err:
        parse_suite(HEAD + SWEEP % value)
    assert "\n" not in str(err.value) and "line 6" in str(err.value)


def _exposed_in_train(result) -> None:
    ids = result.report["exposed"]["ids"]
    train = {r["id"] for r in result.train}
    assert set(ids) <= train and not set(ids) & {r["id"] for r in result.test + result.validation}


def test_the_new_splits_take_exposure_too() -> None:
    """facts, rule_holdout and task_holdout go through the same frame: k held-out examples move into train."""
    from gengap.splits.tasks import PoolTask, generate_task_pool

    facts = get_task("fact_reverse")
    world = list(facts.enumerate(facts.make_params({"n_entities": 20})).records("fact_reverse"))
    result = split(world, "facts", {"by": "direction", "exposure": 3}, seed=1)
    assert len(result.report["exposed"]["ids"]) == 3
    _exposed_in_train(result)

    rules = get_task("string_rewrite")
    pool = generate_records("string_rewrite", rules.make_params({"systems": 30, "system_seed": 1}), 600, 1)
    result = split(pool, "rule_holdout", {"train_systems": 8, "exposure": 2}, seed=0)
    assert len(result.report["exposed"]["ids"]) == 2
    _exposed_in_train(result)

    mixed = generate_task_pool([PoolTask("parity_check", PARITY.with_size(1, 12), 200),
                                PoolTask("reverse_string", get_task("reverse_string").with_size(1, 12), 200)], seed=3)
    result = split(mixed, "task_holdout", {"test_tasks": "reverse_string", "exposure": 5}, seed=0)
    assert len(result.report["exposed"]["ids"]) == 5
    _exposed_in_train(result)
    assert {r["task"] for r in result.test} == {"reverse_string"}
