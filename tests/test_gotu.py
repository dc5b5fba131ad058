"""The gotu split: frozen coordinates on the train side, the unseen region on the test side; options
from the command line and from suite YAML; clear errors where records expose no coordinates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from gengap.generators import dumps_record, get_task
from gengap.cli import main, suite_split
from gengap.suite import SuiteError, parse_suite
from gengap.splits import SplitError, generate_records, make_options, parse_options, split
from gengap.splits.api import get_strategy

BOOLEAN = get_task("boolean_function")


def pool(n: int = 400, dimension: int = 8, seed: int = 1, **values) -> list[dict]:
    return generate_records("boolean_function", BOOLEAN.make_params({"n": dimension, **values}), n, seed)


def bits(record: dict) -> list[int]:
    return [int(token) for token in record["input"].split()]


@given(
    frozen=st.dictionaries(st.integers(0, 7), st.integers(0, 1), min_size=1, max_size=3),
    fraction=st.sampled_from([0.0, 0.1, 0.3]),
    seed=st.integers(0, 1000),
)
def test_no_frozen_coordinate_violation_in_train_and_every_test_record_is_unseen(frozen: dict[int, int], fraction: float, seed: int) -> None:
    records = pool(300, seed=seed + 1, function="majority", k=5)
    spelled = ",".join(f"{i}={v}" for i, v in frozen.items())
    result = split(records, "gotu", {"frozen": spelled, "validation_fraction": fraction}, seed=seed)
    inside = lambda r: all(bits(r)[i] == v for i, v in frozen.items())  # noqa: E731
    assert all(inside(r) for r in result.train + result.validation)  # the train side: frozen region only
    assert all(not inside(r) for r in result.test)  # the test side: the unseen region
    assert len(result.train) + len(result.validation) + len(result.test) == len(records)  # nothing lost
    assert sum(inside(r) for r in records) == len(result.train) + len(result.validation)
    assert result.report["frozen"] == {str(i): v for i, v in frozen.items()}
    assert result.report["overlap"] == 0 and result.report["removed_overlap"] == 0
    if fraction:
        assert result.validation and all("novelty" in r for r in result.validation + result.test)


def test_value_option_list_and_mapping_spellings_agree() -> None:
    records = pool()
    by_value = split(records, "gotu", {"frozen": "0,3", "value": 1})
    by_pairs = split(records, "gotu", {"frozen": "0=1,3=1"})
    by_mapping = split(records, "gotu", {"frozen": {0: 1, 3: 1}})
    assert by_value.report["frozen"] == {"0": 1, "3": 1} == by_pairs.report["frozen"]
    assert [r["id"] for r in by_value.test] == [r["id"] for r in by_pairs.test] == [r["id"] for r in by_mapping.test]
    zero = split(records, "gotu", {"frozen": [2]})
    assert zero.report["frozen"] == {"2": 0} and all(bits(r)[2] == 0 for r in zero.train)
    assert make_options(get_strategy("gotu"), {"frozen": [0, 5]}).frozen == "0,5"  # what the manifest keeps
    assert 0.4 < len(zero.test) / len(records) < 0.6  # one free bit: half the cube is unseen


def test_any_task_whose_inputs_are_coordinates() -> None:
    parity = generate_records("parity_check", get_task("parity_check").make_params({"min_length": 6, "max_length": 9}), 200, 2)
    result = split(parity, "gotu", {"frozen": "0=1,5=0"})
    assert all(bits(r)[0] == 1 and bits(r)[5] == 0 for r in result.train + result.validation)
    assert all(bits(r)[0] == 0 or bits(r)[5] == 1 for r in result.test) and result.test


def test_records_without_the_coordinates_are_refused() -> None:
    short = generate_records("parity_check", get_task("parity_check").make_params({"min_length": 1, "max_length": 4}), 50, 3)
    with pytest.raises(SplitError, match=r"input tokens, no coordinate 4 \(gotu reads coordinate i as input token i\)"):
        split(short, "gotu", {"frozen": "4"})
    moves = generate_records("cycle_navigation", get_task("cycle_navigation").default_params(), 20, 3)
    with pytest.raises(SplitError, match="not a coordinate value"):
        split(moves, "gotu", {"frozen": "0"})
    with pytest.raises(SplitError, match="gotu needs option frozen"):
        split(pool(), "gotu", {})
    with pytest.raises(SplitError, match="the train side is empty"):
        split(pool(), "gotu", {"frozen": "0=7"})
    strategy = get_strategy("gotu")
    for bad, message in (("a", "'a' is not i or i=v"), ("1,1", "names coordinate 1 twice"), ("-1", "'-1' is not i"), ("0=x", "'0=x'"), ("0=", "'0=' is not i or i=v")):
        with pytest.raises(SplitError, match=message):
            parse_options(strategy, {"frozen": bad})


def test_command_line_split(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pool.jsonl"
    path.write_text("".join(dumps_record(r) + "\n" for r in pool(200)))
    out = tmp_path / "gotu"
    assert main(["split", str(path), "--strategy", "gotu", "--option", "frozen=0,1", "--option", "value=1", "--out", str(out)]) == 0
    train = [json.loads(line) for line in (out / "train.jsonl").read_text().splitlines()]
    test = [json.loads(line) for line in (out / "test.jsonl").read_text().splitlines()]
    assert train and test and all(bits(r)[:2] == [1, 1] for r in train) and all(bits(r)[:2] != [1, 1] for r in test)
    report = json.loads((out / "report.json").read_text())
    assert report["strategy"] == "gotu" and report["options"]["frozen"] == "0,1" and report["novelty"]["test"]
    capsys.readouterr()
    assert main(["split", str(path), "--strategy", "gotu", "--option", "frozen=0;1", "--out", str(tmp_path / "bad")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "gotu: option frozen='0;1'" in err and not (tmp_path / "bad").exists()


SUITE = """\
name: unseen
version: 0.0.1
seed: 11
license: mit
created: "2026-12-01"
entries:
  - {task: boolean_function, split: gotu, params: {n: 10, function: parity, k: 3}, pool: {n: 400}, options: {frozen: [0, 1]}}
  - {task: prefix_sums, split: frozen_head, strategy: gotu, params: {min_length: 8, max_length: 8}, pool: {n: 300}, options: {frozen: {0: 1}}}
"""


def test_suite_entries(tmp_path: Path) -> None:
    path = tmp_path / "unseen.yaml"
    path.write_text(SUITE)
    boolean = suite_split(str(path), "boolean_function-gotu")
    assert all(bits(r)[:2] == [0, 0] for r in boolean.train + boolean.validation)
    assert all(bits(r)[:2] != [0, 0] for r in boolean.test) and len(boolean.test) > len(boolean.train)
    assert boolean.report["options"]["frozen"] == "0,1"
    head = suite_split(str(path), "prefix_sums-frozen_head")
    assert all(bits(r)[0] == 1 for r in head.train) and all(bits(r)[0] == 0 for r in head.test)
    with pytest.raises(SuiteError, match=r"line 7: entries\[0\]\.options: gotu: option frozen='0=2=1'"):
        parse_suite(SUITE.replace("frozen: [0, 1]", "frozen: '0=2=1'"))
    with pytest.raises(SuiteError, match="strategy"):
        parse_suite(SUITE.replace("strategy: gotu", "strategy: gotuu"))


def test_gengap_list_documents_the_new_tasks_and_strategies(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    text = capsys.readouterr().out
    tasks, strategies = text.split("\nsplit strategies")
    assert "\nmaze  [structured]" in tasks and "levels: 1: min_size=5,max_size=5;" in tasks and "loops = 0.0 range 0.0..1.0" in tasks
    assert "\nboolean_function  [reasoning]" in tasks and "levels: 1: n=4; 2: n=6;" in tasks
    assert "one of parity, majority, monomial" in tasks and "one of first, seeded" in tasks
    assert "\ngotu  generalization on the unseen" in strategies and "    frozen = ''" in strategies and "    value = 0 >= 0" in strategies
    assert {line.split()[0] for line in strategies.splitlines()[1:] if not line.startswith(" ")} == {
        "category", "difficulty", "facts", "gotu", "holdout", "iid", "length", "local_holdout", "mcd", "rule_holdout", "task_holdout"
    }


def test_cards_cite_the_works_the_new_configs_follow() -> None:
    from gengap.data_cards.references import BIBTEX, config_references

    assert config_references({"task": "boolean_function", "split": {"strategy": "gotu"}}) == ["abbe2023generalization"]
    assert config_references({"task": "parity_check", "split": {"strategy": "gotu"}}) == ["deletang2023neural", "abbe2023generalization"]
    assert config_references({"task": "maze", "split": {"strategy": "difficulty"}}) == ["schwarzschild2021can"]
    assert "Generalization on the Unseen" in BIBTEX["abbe2023generalization"]
