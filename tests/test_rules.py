"""Rule-in-context tasks (string_rewrite, regex_match) and the rule_holdout split."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from gengap.generators import BlockPlan, batch_to_jsonl, get_task
from gengap.generators.params import ParamError
from gengap.generators.tasks import _regex
from gengap.generators.tasks.rules import SYMBOLS, parse_regex_input
from gengap.splits import SplitError, generate_records, split
from tests.conftest import random_params

TASKS = ("string_rewrite", "regex_match")


def _records(name: str, seed: int, n: int, **values: object) -> list[dict]:
    task = get_task(name)
    params = task.make_params(values) if values else random_params(task, random.Random(seed))
    return list(task.generate(np.random.default_rng(seed), n, params).records(name))


def _wrong_rewrite(target: str) -> list[str]:
    tokens = target.split()
    flipped = ["b" if t == "a" else "a" for t in tokens] if tokens != ["_"] else ["a"]
    return [" ".join(flipped), "_" if tokens != ["_"] else "a a", " ".join(tokens + ["a"])]


@pytest.mark.parametrize("name", TASKS)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 30))
def test_every_record_passes_its_checker_and_wrong_answers_fail(name: str, seed: int, n: int) -> None:
    task = get_task(name)
    try:
        records = _records(name, seed, n)
    except ParamError as err:  # random parameters no string admits (e.g. only deleting rules, 1 symbol, >= 2 steps)
        assume("never admit" not in str(err))
        raise
    for record in records:
        assert task.check(record, record["target"]), record
        assert task.derive(record) == record["structure"]
        assert all(record["difficulty"][k] == v for k, v in task.measure(record).items())
        wrong = ["no" if record["target"] == "yes" else "yes"] if name == "regex_match" else _wrong_rewrite(record["target"])
        for answer in wrong:
            assert not task.check(record, answer), (record, answer)


def test_rewrite_runs_as_a_markov_algorithm() -> None:
    task = get_task("string_rewrite")
    record = {"input": "a b -> b a ; c -> _ : a c b"}
    assert task.solve(record) == "b a"  # a c b -> a b -> b a: the first rule applies once c is gone
    assert task.derive(record) == ["c -> _", ["a b -> b a", "halt"]]
    assert task.solve({"input": "a -> _ : a a"}) == "_"  # the empty result is written _
    assert task.solve({"input": "b -> a ; a b -> c : a b b"}) == "a a a"  # the first rule in order, leftmost
    assert task.rule_system({"input": "a  b -> b a ;  c -> _ : a"}) == "a b -> b a ; c -> _"


@pytest.mark.parametrize("text", ["a -> b", ": a", "a -> b : ", "a b : a", "a -> -> b : a", "a -> : a", "a -> b ; : a",
                                  "a -> x : a", "a -> b : a : b", "b -> b : b", "a -> a a : a"])
def test_rewrite_checker_rejects_malformed_and_non_halting_inputs(text: str) -> None:
    task = get_task("string_rewrite")
    assert not task.check({"input": text}, "a")


def test_rewrite_levels_raise_rules_length_and_steps() -> None:
    task = get_task("string_rewrite")
    means = {}
    for k in (1, 5, 10):
        columns = BlockPlan("string_rewrite", task.level(k), 150, 3).generate_block(0).difficulty()
        means[k] = [float(columns[f].mean()) for f in ("rules", "string_length", "steps")]
    assert all(a < b for a, b in zip(means[1], means[10])), means


def test_rewrite_halts_within_the_step_range() -> None:
    for record in _records("string_rewrite", 5, 200, min_steps=3, max_steps=5, max_length=8):
        assert 3 <= record["difficulty"]["steps"] <= 5


def test_impossible_rewrite_parameters_are_one_error() -> None:
    task = get_task("string_rewrite")
    with pytest.raises(ParamError, match="max_rules"):
        task.make_params({"alphabet_size": 2, "max_lhs": 1, "max_rules": 3, "min_rules": 3})
    params = task.make_params({"max_rhs": 0, "min_steps": 50, "max_steps": 60, "max_length": 4, "min_length": 1})
    with pytest.raises(ParamError, match="no string_rewrite record"):
        task.generate(np.random.default_rng(0), 1, params)


# -- regular expressions ------------------------------------------------------------------


def _python_re(record: dict) -> bool:
    regex, word = record["input"].split(" : ")
    return re.fullmatch(regex.replace(" ", ""), word.replace(" ", "")) is not None


@given(seed=st.integers(0, 2**32 - 1))
def test_regex_answers_agree_with_python_re(seed: int) -> None:
    for record in _records("regex_match", seed, 30, max_depth=4, min_depth=1, max_length=10, alphabet_size=3):
        assert (record["target"] == "yes") == _python_re(record), record


@given(seed=st.integers(0, 2**32 - 1))
def test_the_two_matchers_agree_on_random_strings(seed: int) -> None:
    rng = random.Random(seed)
    for record in _records("regex_match", seed, 10, max_depth=5, min_depth=2, max_length=8):
        tree, _ = parse_regex_input(record["input"])
        nfa = _regex.Nfa(tree, SYMBOLS[:2])
        for _ in range(10):
            word = [rng.randrange(2) for _ in range(rng.randrange(0, 9))]
            assert nfa.accepts(word) == _regex.matches(tree, [SYMBOLS[c] for c in word])


def test_regex_answers_are_balanced_and_levels_deepen() -> None:
    task = get_task("regex_match")
    records = list(BlockPlan("regex_match", task.level(3), 600, 1).generate_block(0).records("regex_match"))
    share = sum(r["target"] == "yes" for r in records) / len(records)
    assert 0.43 < share < 0.57
    assert {r["difficulty"]["depth"] for r in records} == {3}


def test_regex_syntax_round_trips_and_canonical_form() -> None:
    alphabet = frozenset("ab")
    for text in ["a", "a b | b *", "( a | b ) * a", "( a b ) + ?", "a ( b | a b ) ?"]:
        assert " ".join(_regex.show(_regex.parse(text.split(), alphabet))) == text
    canonical = lambda text: _regex.canonical(_regex.parse(text.split(), alphabet))  # noqa: E731
    assert canonical("b | a") == canonical("a | b | a") == "a | b"
    assert canonical("( a * ) *") == canonical("( a ? ) +") == "a *"
    assert canonical("a ( b c )".replace("c", "a")) == "a b a"
    assert canonical("a a *") != canonical("a +")  # language equivalence is not decided
    for bad in ["", "( a", "a )", "| a", "a | | b", "* a", "c"]:
        with pytest.raises(ValueError):
            _regex.parse(bad.split(), alphabet)


@pytest.mark.parametrize("text", ["a * : b", "a : a : a", "( a : a", "a", ": a", "a | : a"])
def test_regex_checker_rejects_malformed_inputs_or_answers_from_its_own_automaton(text: str) -> None:
    task = get_task("regex_match")
    if text == "a * : b":
        assert task.solve({"input": text}) == "no" and task.check({"input": text}, "no")
    else:
        assert not task.check({"input": text}, "yes") and not task.check({"input": text}, "no")


# -- universes of systems and determinism ----------------------------------------------------


@pytest.mark.parametrize("name", TASKS)
def test_a_universe_is_shared_by_every_block_and_fixed_by_system_seed(name: str) -> None:
    task = get_task(name)
    params = task.make_params({"systems": 5, "system_seed": 11})

    def systems_of(seed: int) -> set[str]:
        records = [r for b in BlockPlan(name, params, 300, seed).batches() for r in b.records(name)]
        return {task.rule_system(r) for r in records}

    first, second = systems_of(1), systems_of(2)
    assert 1 < len(first) <= 5 and first == second
    other = {task.rule_system(r) for r in _records(name, 1, 100, systems=5, system_seed=12)}
    assert other != first


@pytest.mark.parametrize("name", TASKS)
def test_same_seed_same_bytes(name: str) -> None:
    params = get_task(name).make_params({"systems": 20})
    render = lambda seed: b"".join(batch_to_jsonl(b, name) for b in BlockPlan(name, params, 200, seed).batches())  # noqa: E731
    assert render(4) == render(4) != render(5)


# -- rule_holdout ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rewrite_pool() -> list[dict]:
    params = get_task("string_rewrite").make_params({"systems": 30, "system_seed": 3, "max_steps": 4})
    return generate_records("string_rewrite", params, 1500, 9)


def _systems(records: list[dict]) -> set[str]:
    return {get_task(r["task"]).rule_system(r) for r in records}


@settings(max_examples=8)
@given(seed=st.integers(0, 2**16), n=st.integers(1, 20))
def test_rule_holdout_tests_only_unseen_systems(rewrite_pool: list[dict], seed: int, n: int) -> None:
    result = split(rewrite_pool, "rule_holdout", {"train_systems": n, "test_fraction": 0.25}, seed=seed)
    train, validation, test = _systems(result.train), _systems(result.validation), _systems(result.test)
    assert test and not test & (train | validation)
    assert validation <= train and len(train) == n
    assert result.report["systems"]["train_side"] == n and result.report["systems"]["test"] == len(test)
    assert result.report["overlap"] == 0


def test_rule_holdout_sweep_keeps_the_test_systems_and_nests_the_train_ones(rewrite_pool: list[dict]) -> None:
    results = {n: split(rewrite_pool, "rule_holdout", {"train_systems": n, "train_records": 150}, seed=2) for n in (4, 8, 16)}
    assert _systems(results[4].test) == _systems(results[8].test) == _systems(results[16].test)
    sides = {n: _systems(r.train) | _systems(r.validation) for n, r in results.items()}
    assert sides[4] < sides[8] < sides[16]
    assert {len(r.train) + len(r.validation) for r in results.values()} == {150}
    again = split(rewrite_pool, "rule_holdout", {"train_systems": 8, "train_records": 150}, seed=2)
    assert again.train == results[8].train and again.test == results[8].test and again.report == results[8].report


def test_rule_holdout_on_regexes_compares_normalized_trees() -> None:
    params = get_task("regex_match").make_params({"systems": 25, "max_depth": 2})
    pool = generate_records("regex_match", params, 600, 1)
    pool.append({**pool[0], "input": "b | a : a", "target": "yes", "id": "regex_match-x1"})
    pool.append({**pool[0], "input": "a | b : b", "target": "yes", "id": "regex_match-x2"})
    result = split(pool, "rule_holdout", {"test_records": 100}, seed=0)
    assert not _systems(result.test) & _systems(result.train + result.validation)
    assert len(result.test) <= 100
    placed = {r["input"]: part for part, records in result.parts().items() for r in records}
    pair = {placed.get("b | a : a"), placed.get("a | b : b")}
    assert pair <= {"train", "validation"} or pair == {"test"}  # the same system: never on both sides


def test_rule_holdout_errors_are_one_line(rewrite_pool: list[dict]) -> None:
    parity = generate_records("parity_check", get_task("parity_check").default_params(), 10, 0)
    with pytest.raises(SplitError, match="rule-in-context task"):
        split(parity, "rule_holdout")
    with pytest.raises(SplitError, match="train_systems=99 exceeds"):
        split(rewrite_pool, "rule_holdout", {"train_systems": 99})
    with pytest.raises(SplitError, match="at least 2 distinct"):
        split(rewrite_pool[:1], "rule_holdout")


# -- suites: a sweep of train_systems -------------------------------------------------------

SUITE = """name: rules-sweep
version: 0.1.0
seed: 3
license: cc-by-4.0
entries:
  - {task: string_rewrite, split: rule_holdout, params: {systems: 24, max_steps: 4}, pool: {n: 900}, options: {train_systems: [16, 2, 8], train_records: 60}}
"""


def test_suite_sweeps_train_systems_into_one_config_per_count() -> None:
    from gengap.release import build_entry
    from gengap.suite import parse_suite

    suite = parse_suite(SUITE)
    names = [e["name"] for e in suite["entries"]]
    assert names == ["string_rewrite-rule_holdout_n0016", "string_rewrite-rule_holdout_n0002", "string_rewrite-rule_holdout_n0008"]
    assert [e["options"]["train_systems"] for e in suite["entries"]] == [16, 2, 8]
    results = [build_entry(entry, suite["seed"]) for entry in suite["entries"]]
    assert [r.report["systems"]["train_side"] for r in results] == [16, 2, 8]
    for result in results:
        assert not _systems(result.test) & _systems(result.train + result.validation)
    # one test set for the whole curve (the configs share the unswept config's seed), nested train systems
    assert [r["id"] for r in results[0].test] == [r["id"] for r in results[1].test] == [r["id"] for r in results[2].test]
    sides = [_systems(r.train) | _systems(r.validation) for r in results]
    assert sides[1] < sides[2] < sides[0]


@pytest.mark.parametrize("counts, message", [("[]", "non-empty list of integers"), ("[2, 2.5]", "integers in"), ("[4, 4]", "must differ")])
def test_bad_train_system_sweeps_name_the_line(counts: str, message: str) -> None:
    from gengap.suite import SuiteError, parse_suite

    with pytest.raises(SuiteError, match=f"line 6: .*train_systems: .*{message}"):
        parse_suite(SUITE.replace("[16, 2, 8]", counts))


def test_capped_sides_keep_every_chosen_system(rewrite_pool: list[dict]) -> None:
    result = split(rewrite_pool, "rule_holdout", {"train_systems": 20, "train_records": 25, "test_records": 8, "validation_fraction": 0.0}, seed=4)
    assert len(result.train) == 25 and len(_systems(result.train)) == 20
    assert len(result.test) == 8 and len(_systems(result.test)) == result.report["systems"]["test"]
    with pytest.raises(SplitError, match="train_records=5 cannot hold"):
        split(rewrite_pool, "rule_holdout", {"train_systems": 20, "train_records": 5})
    with pytest.raises(SplitError, match="test_records=1 cannot hold"):
        split(rewrite_pool, "rule_holdout", {"test_records": 1, "test_fraction": 0.5})
