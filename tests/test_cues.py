"""Shortcut cues (gengap.generators.cues, gengap.splits.cues): rates, checker blindness, determinism, refusals."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gengap.generators import get_task
from gengap.generators.cues import (
    CUE_FEATURE,
    CueError,
    add_cues,
    answer_set,
    cue_answer,
    cue_problem,
    has_cue,
    without_cue,
)
from gengap.generators.seeding import cue_rng
from gengap.checking import record_problem
from gengap.schema import record_errors
from gengap.harnesses.scoring import score_output_checked
from gengap.splits import SplitError, split
from gengap.splits.api import generate_records
from gengap.splits.cues import apply_cue, cue_option, parse_cue

SMALL_TASKS = ("parity_check", "even_pairs", "cycle_navigation", "modular_arithmetic")
FAST = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def pool(task: str, n: int = 300, seed: int = 0) -> list[dict]:
    spec = get_task(task)
    return generate_records(task, spec.default_params(), n, seed)


def binomial_ok(hits: int, n: int, p: float, sigmas: float = 5.0) -> bool:
    """hits within `sigmas` standard deviations of n*p (exact at p in {0, 1})."""
    return abs(hits - n * p) <= sigmas * math.sqrt(n * p * (1 - p)) + 1e-9


def test_cue_stream_is_pinned() -> None:
    assert [int(v) for v in cue_rng(3, "test").bit_generator.random_raw(2)] == [
        int(v) for v in cue_rng(3, "test").bit_generator.random_raw(2)
    ]
    assert cue_rng(3, "train").random() != cue_rng(3, "test").random() != cue_rng(4, "test").random()
    assert [int(v) for v in cue_rng(3, "test").bit_generator.random_raw(2)] == PINNED_CUE


PINNED_CUE = [14984016192217255858, 6196978379366936991]  # SeedSequence(3, spawn_key=labels_key("cue", "test"))


@FAST
@given(task=st.sampled_from(SMALL_TASKS), rho=st.floats(0.0, 1.0), seed=st.integers(0, 2**32))
def test_agreement_rate_within_binomial_tolerance(task: str, rho: float, seed: int) -> None:
    records = pool(task, 400)
    answers = answer_set(records)
    cued = add_cues(records, rho, answers, cue_rng(seed, "train"))
    hits = sum(r["difficulty"][CUE_FEATURE] for r in cued)
    assert binomial_ok(hits, len(cued), rho)
    for record, base in zip(cued, records):
        assert (cue_answer(record) == base["target"]) == bool(record["difficulty"][CUE_FEATURE])
        assert cue_answer(record) in answers


def test_disagreeing_cues_name_the_other_answers_uniformly() -> None:
    records = pool("modular_arithmetic", 3000)
    answers = answer_set(records)
    assert len(answers) > 2
    cued = add_cues(records, 0.0, answers, cue_rng(1, "test"))
    counts: dict[int, int] = {}
    for record in cued:  # rank of the named answer among the others of its record
        others = [a for a in answers if a != record["target"]]
        rank = others.index(cue_answer(record))
        counts[rank] = counts.get(rank, 0) + 1
    k = len(answers) - 1
    expected = len(cued) / k
    chi2 = sum((counts.get(i, 0) - expected) ** 2 / expected for i in range(k))
    assert chi2 < k + 6 * math.sqrt(2 * k)  # far inside the chi-square(k-1) tail


@FAST
@given(task=st.sampled_from(SMALL_TASKS), rho=st.sampled_from([0.0, 0.5, 1.0]), seed=st.integers(0, 2**32))
def test_checker_ignores_the_cue(task: str, rho: float, seed: int) -> None:
    records = pool(task, 60, seed % 1000)
    answers = answer_set(records)
    spec = get_task(task)
    for record, base in zip(add_cues(records, rho, answers, cue_rng(seed, "test")), records):
        assert has_cue(record) and record_errors(record) == []
        assert record_problem(record) is None
        assert without_cue(record) == base
        for prediction in answers + ("",):
            assert spec.check(record, prediction) == spec.check(base, prediction)
            assert spec.check_parts(record, prediction) == spec.check_parts(base, prediction)
        wrong = next(a for a in answers if a != base["target"])
        assert not spec.check(record, wrong)
        assert score_output_checked(record, f"Answer: {wrong}").correct is False
        assert score_output_checked(record, f"Answer: {base['target']}").correct is True


def eligible_tasks() -> list[str]:
    """Every registered task whose default records have a small answer set."""
    from gengap.generators import task_names

    names = []
    for name in task_names():
        try:
            answer_set(pool(name, 100))
        except CueError:
            continue
        names.append(name)
    return names


def test_every_task_with_a_small_answer_set_checks_cued_records_as_cue_less() -> None:
    names = eligible_tasks()
    assert set(SMALL_TASKS) <= set(names) and "reverse_string" not in names
    for name in names:
        records = pool(name, 40)
        answers = answer_set(records)
        spec = get_task(name)
        for record, base in zip(add_cues(records, 0.5, answers, cue_rng(0, "test")), records):
            assert record_problem(record) is None, (name, record_problem(record))
            assert [spec.check(record, a) for a in answers] == [spec.check(base, a) for a in answers]


def test_checker_rejects_a_wrong_target_or_a_forged_cue() -> None:
    records = pool("parity_check", 40)
    cued = add_cues(records, 0.5, answer_set(records), cue_rng(0, "train"))
    record = cued[0]
    flipped = {**record, "difficulty": {**record["difficulty"], CUE_FEATURE: 1 - record["difficulty"][CUE_FEATURE]}}
    assert "cue_agrees" in record_problem(flipped)
    wrong = {**record, "target": "1" if record["target"] == "0" else "0"}
    from gengap.generators import record_id

    wrong["id"] = record_id(wrong["task"], wrong["input"], wrong["target"])
    wrong["difficulty"] = {**wrong["difficulty"], CUE_FEATURE: int(cue_answer(wrong) == wrong["target"])}
    assert "is wrong" in record_problem(wrong)
    no_token = {**records[0], "difficulty": {**records[0]["difficulty"], CUE_FEATURE: 1}}
    assert "no cue:" in cue_problem(no_token)
    doubled = {**record, "input": "cue:1 " + record["input"]}
    assert cue_problem(doubled) is not None


def test_same_seed_same_bytes_and_parts_have_their_own_streams() -> None:
    base = split(pool("parity_check", 400), "iid", {}, seed=3)
    first = apply_cue(base, {"train": 0.9, "test": 0.5}, 7)
    again = apply_cue(base, {"train": 0.9, "test": 0.5}, 7)
    assert json.dumps(first.parts()) == json.dumps(again.parts()) and first.report == again.report
    other = apply_cue(base, {"train": 0.9, "test": 0.5}, 8)
    assert json.dumps(first.parts()) != json.dumps(other.parts())
    assert [without_cue(r) for r in first.test] == base.test  # the cue-less split is untouched


def test_split_report_states_rates_and_measured_agreement() -> None:
    base = split(pool("parity_check", 1000), "iid", {"test_fraction": 0.3}, seed=0)
    result = apply_cue(base, {"train": 0.95, "test": 0.05}, 0)
    cue = result.report["cue"]
    assert cue["rate"] == {"train": 0.95, "validation": 0.95, "test": 0.05}
    assert cue["answers"] == ["0", "1"] and cue["token"] == "cue:<answer>"
    for part, records in result.parts().items():
        hits = sum(r["difficulty"][CUE_FEATURE] for r in records)
        assert cue["agreement"][part] == pytest.approx(hits / len(records), abs=1e-6)
        assert binomial_ok(hits, len(records), cue["rate"][part])
    assert result.report["parts"]["test"]["ranges"][CUE_FEATURE][0] == 0


@pytest.mark.parametrize("task", ["reverse_string", "addition", "duplicate_string"])
def test_tasks_without_a_small_answer_set_are_refused(task: str) -> None:
    base = split(pool(task, 100), "iid", {}, seed=0)
    with pytest.raises(SplitError, match="no small answer set") as err:
        apply_cue(base, {"train": 0.9, "test": 0.5}, 0)
    assert "\n" not in str(err.value)


def test_refusals_of_bad_options_and_cued_pools() -> None:
    with pytest.raises(SplitError, match="test rate"):
        cue_option({"train": 0.9})
    with pytest.raises(SplitError, match="out of range"):
        cue_option({"train": 1.5, "test": 0.5})
    with pytest.raises(SplitError, match="unknown rate"):
        cue_option({"train": 0.5, "test": 0.5, "validation": 0.1})
    with pytest.raises(SplitError):
        parse_cue("0.9")
    assert parse_cue("train=0.9,test=0.1") == {"train": 0.9, "test": 0.1}
    records = pool("parity_check", 50)
    cued = add_cues(records, 1.0, answer_set(records), cue_rng(0, "train"))
    with pytest.raises(CueError, match="already carries a cue"):
        answer_set(cued)
    with pytest.raises(CueError, match="at least 2"):
        answer_set([r for r in records if r["target"] == "0"])
