"""Shared pools (``pool: {n: N, shared: LABEL}``): the one-task pool entries of a task that name
one label split one pool, drawn from the label's seed, each with its own split seed; entries
without a label keep their own pool (the same bytes as before); entries that disagree on what
the pool holds are refused before anything is built."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gengap.cli import main
from gengap.release import build_entry, entry_seed, pool_plan, pool_seed, shared_pool_stream
from gengap.generators.seeding import config_seed
from gengap.splits import generate_records
from gengap.generators import get_task
from gengap.suite import SuiteError, parse_suite

HEAD = "name: shared\nversion: 1.0.0\nseed: 11\nlicense: mit\nentries:\n"
PARITY = "{task: parity_check, params: {max_length: 12}, pool: {n: 400, shared: main}"


def suite_of(*entries: str) -> str:
    return HEAD + "".join(f"  - {entry}\n" for entry in entries)


def ids(rows: list[dict]) -> set[str]:
    return {r["id"] for r in rows}


def test_entries_that_share_a_pool_split_the_same_records_with_their_own_seeds() -> None:
    suite = parse_suite(suite_of(
        f"{{task: parity_check, split: random, strategy: iid, params: {{max_length: 12}}, pool: {{n: 400, shared: main}}, options: {{test_fraction: 0.2}}}}",
        f"{{task: parity_check, split: random2, strategy: iid, params: {{max_length: 12}}, pool: {{n: 400, shared: main}}, options: {{test_fraction: 0.2}}}}",
        f"{{task: parity_check, split: length, params: {{max_length: 12}}, pool: {{n: 400, shared: main}}, options: {{train_max: 6}}}}",
    ), "<shared>")
    entries = suite["entries"]
    seed = suite["seed"]
    assert {pool_seed(e, seed) for e in entries} == {config_seed(seed, shared_pool_stream("parity_check", "main"))}
    assert len({entry_seed(e, seed) for e in entries}) == 3  # each config its own split seed
    pool = generate_records("parity_check", get_task("parity_check").make_params({"max_length": 12}), 400, pool_seed(entries[0], seed))
    in_pool = ids(pool)
    results = [build_entry(e, seed) for e in entries]
    for result in results:
        drawn = ids(result.train) | ids(result.validation) | ids(result.test)
        assert drawn <= in_pool and len(drawn) == len(in_pool)  # the whole pool, split
    # the two random splits split one pool differently (their own seeds)
    assert ids(results[0].test) != ids(results[1].test)
    assert pool_plan(entries[0], seed).seed == pool_seed(entries[0], seed)  # the Ray path's blocks too


def test_an_entry_without_a_label_keeps_its_own_pool() -> None:
    suite = parse_suite(suite_of(
        "{task: parity_check, split: own, strategy: iid, params: {max_length: 12}, pool: {n: 400}}",
        f"{{task: parity_check, split: shares, strategy: iid, params: {{max_length: 12}}, pool: {{n: 400, shared: main}}}}",
    ), "<shared>")
    own, shares = suite["entries"]
    assert pool_seed(own, suite["seed"]) == entry_seed(own, suite["seed"])
    assert pool_seed(shares, suite["seed"]) != entry_seed(shares, suite["seed"])
    assert pool_plan(own, suite["seed"]).seed == entry_seed(own, suite["seed"])


def test_a_divergence_sweep_over_a_shared_pool_grades_one_pool() -> None:
    suite = parse_suite(suite_of(
        "{task: scan, split: mcd, params: {max_actions: 12}, pool: {n: 300, shared: s}, options: {compound_divergence: [0.2, 0.4], train_size: 150, test_size: 30, steps: 300}}",
    ), "<sweep>")
    names = [e["name"] for e in suite["entries"]]
    assert names == ["scan-mcd_dc0200", "scan-mcd_dc0400"]
    assert len({pool_seed(e, suite["seed"]) for e in suite["entries"]}) == 1
    assert len({entry_seed(e, suite["seed"]) for e in suite["entries"]}) == 2


@pytest.mark.parametrize("second, wrong", [
    ("{task: parity_check, split: b, strategy: iid, params: {max_length: 12}, pool: {n: 401, shared: main}}", "other n"),
    ("{task: parity_check, split: b, strategy: iid, params: {max_length: 10}, pool: {n: 400, shared: main}}", "other params"),
])
def test_entries_that_disagree_on_a_shared_pool_are_refused_at_the_label(second: str, wrong: str) -> None:
    text = suite_of(f"{{task: parity_check, split: a, strategy: iid, params: {{max_length: 12}}, pool: {{n: 400, shared: main}}}}", second)
    with pytest.raises(SuiteError) as err:
        parse_suite(text, "suite.yaml")
    message = str(err.value)
    assert "line 7" in message and "entries[1].pool.shared" in message and wrong in message and "\n" not in message


def test_a_lexicon_sweep_over_a_shared_pool_renders_one_pool_in_each_lexicon() -> None:
    suite = parse_suite(suite_of(
        "{task: scan, split: random, strategy: iid, params: {max_actions: 12, lexicon: [0, 2]}, pool: {n: 200, shared: s}}",
    ), "<lexicons>")
    zero, two = suite["entries"]
    assert pool_seed(zero, suite["seed"]) == pool_seed(two, suite["seed"])
    first, second = (build_entry(e, suite["seed"]) for e in (zero, two))
    assert [r["meta"].get("lexicon", 0) for r in second.test[:1]] == [2]
    assert len(first.test) == len(second.test) and [r["input"] for r in first.test] != [r["input"] for r in second.test]


def test_the_same_label_for_two_tasks_names_two_pools() -> None:
    suite = parse_suite(suite_of(
        "{task: parity_check, split: a, strategy: iid, params: {max_length: 12}, pool: {n: 400, shared: main}}",
        "{task: reverse_string, split: a, strategy: iid, pool: {n: 300, shared: main}}",
    ), "<two tasks>")
    seeds = [pool_seed(e, suite["seed"]) for e in suite["entries"]]
    assert seeds[0] != seeds[1]


def test_a_multitask_entry_refuses_a_shared_pool() -> None:
    text = suite_of("{tasks: [{task: parity_check}, {task: even_pairs}], split: mix, strategy: iid, pool: {n: 50, shared: main}}")
    with pytest.raises(SuiteError, match=r"entries\[0\]\.pool\.shared: a shared pool is one task's"):
        parse_suite(text, "suite.yaml")


def test_a_label_that_is_not_an_identifier_is_refused_by_the_schema() -> None:
    text = suite_of("{task: parity_check, split: a, strategy: iid, pool: {n: 40, shared: Main Pool}}")
    with pytest.raises(SuiteError, match=r"pool"):
        parse_suite(text, "suite.yaml")


def test_a_release_with_a_shared_pool_records_its_seed_verifies_and_regenerates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(suite_of(
        "{task: parity_check, split: own, strategy: iid, params: {max_length: 12}, pool: {n: 300}}",
        f"{{task: parity_check, split: a, strategy: iid, params: {{max_length: 12}}, pool: {{n: 300, shared: main}}}}",
        f"{{task: parity_check, split: b, strategy: iid, params: {{max_length: 12}}, pool: {{n: 300, shared: main}}, options: {{test_fraction: 0.3}}}}",
    ))
    fingerprints = []
    for workers in ("1", "2"):
        out = tmp_path / f"release-{workers}"
        assert main(["release", str(suite), "--out", str(out), "--workers", workers]) == 0
        fingerprints.append(json.loads((out / "manifest.json").read_text())["fingerprint"])
    assert fingerprints[0] == fingerprints[1]
    out = tmp_path / "release-1"
    configs = {c["name"]: c for c in json.loads((out / "manifest.json").read_text())["configs"]}
    assert "pool_seed" not in configs["parity_check-own"]  # an unshared entry's manifest is as before
    assert configs["parity_check-a"]["pool_seed"] == configs["parity_check-b"]["pool_seed"] != configs["parity_check-a"]["seed"]
    assert configs["parity_check-a"]["generation"]["pool"] == {"n": 300, "shared": "main"}
    rows = {name: [json.loads(line) for part in ("train", "validation", "test")
                   for line in (out / "data" / name / f"{part}.jsonl").read_text().splitlines()] for name in configs}
    assert ids(rows["parity_check-a"]) == ids(rows["parity_check-b"]) != ids(rows["parity_check-own"])
    card = (out / "README.md").read_text()
    row = {line.split("|")[1].strip(): line for line in card.splitlines() if line.startswith("| `parity_check-")}
    pool_seed_text = f"the shared pool `main` (pool seed {configs['parity_check-a']['pool_seed']})"
    assert pool_seed_text in row["`parity_check-a`"] and pool_seed_text in row["`parity_check-b`"]
    assert "shared pool" not in row["`parity_check-own`"] and "The configs of a shared pool split the same generated records" in card
    assert main(["verify", str(out), "--regenerate"]) == 0


def test_a_refused_shared_pool_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(suite_of(
        "{task: parity_check, split: a, strategy: iid, pool: {n: 300, shared: main}}",
        "{task: parity_check, split: b, strategy: iid, pool: {n: 200, shared: main}}",
    ))
    out = tmp_path / "release"
    assert main(["release", str(suite), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "pool.shared" in err and "other n" in err and len(err.strip().splitlines()) == 1
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["suite.yaml"]
