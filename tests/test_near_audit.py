"""`gengap audit` (gengap.near_audit): per-config near-duplicate counts of a release or a split
directory, equal to comparing every test input with every train input of its task."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gengap.cli import main
from gengap.generators.markers import bare_input
from gengap.near_audit import audit_directory
from gengap.release import write_release
from gengap.splits.near_duplicates import NearOptions, grams
from gengap.suite import parse_suite
from tests.test_near_duplicates import levenshtein

SUITE = """\
name: audit-tests
version: 0.1.0
seed: 5
license: mit
created: "2026-12-01"
entries:
  - {task: parity_check, split: length, train_range: [1, 6], test_range: [7, 9], sizes: {train: 60, validation: 10, test: 30}}
  - {task: addition, split: iid, params: {max_digits_a: 2, max_digits_b: 2}, pool: {n: 200}}
"""


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("audit") / "release"
    write_release(parse_suite(SUITE), root, cards=False)
    return root


def brute_row(train: list[dict], test: list[dict], k: int, t: float, n: int) -> dict:
    """Counts by comparing every pair of the same task, with json-read records."""
    exact = edit = jac = near = 0
    for record in test:
        mine = tuple(bare_input(record["input"]).split())
        others = [tuple(bare_input(r["input"]).split()) for r in train if r.get("task", "") == record.get("task", "")]
        distance = min((levenshtein(o, mine) for o in others), default=k + 1)
        a = grams(mine, n)
        similarity = max((len(a & grams(o, n)) / len(a | grams(o, n)) for o in others), default=0.0)
        exact += distance == 0
        edit += distance <= k
        jac += similarity >= t
        near += distance <= k or similarity >= t
    return {"exact": exact, "within_edit_distance": edit, "within_jaccard": jac, "near": near}


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize(("k", "t", "n"), [(2, 0.8, 3), (1, 0.5, 2), (0, 1.0, 1)])
def test_a_release_audit_matches_every_pair(release: Path, k: int, t: float, n: int) -> None:
    report = audit_directory(release, NearOptions(edit_distance=k, jaccard=t, ngram=n, examples=3))
    manifest = json.loads((release / "manifest.json").read_text())
    assert report["source"] == {"kind": "release", "path": str(release), "name": "audit-tests", "fingerprint": f"sha256:{manifest['fingerprint']}"}
    assert [row["config"] for row in report["configs"]] == ["parity_check-length", "addition-iid"]
    for row in report["configs"]:
        train, test = (jsonl(release / "data" / row["config"] / f"{part}.jsonl") for part in ("train", "test"))
        assert (row["train"], row["test"]) == (len(train), len(test))
        assert {key: row[key] for key in ("exact", "within_edit_distance", "within_jaccard", "near")} == brute_row(train, test, k, t, n)
        assert row["near_share"] == pytest.approx(row["near"] / len(test), abs=1e-6)
        for example in row["examples"]:  # the lines named hold the inputs shown, and they are as near as said
            assert test[example["test_line"] - 1]["input"] == example["test"] and train[example["train_line"] - 1]["input"] == example["train"]
            if example["edit_distance"] is not None:
                assert levenshtein(tuple(example["test"].split()), tuple(example["train"].split())) == example["edit_distance"] <= k
        assert len(row["examples"]) == min(3, row["near"])
    assert report["total"]["near"] == sum(row["near"] for row in report["configs"])


def test_a_split_directory_of_plain_records_by_hand(tmp_path: Path) -> None:
    (tmp_path / "train.jsonl").write_text("".join(json.dumps({"input": text, "target": "x"}) + "\n" for text in
                                                  ["jump twice", "walk left twice", "look around right thrice"]))
    (tmp_path / "test.jsonl").write_text("".join(json.dumps({"input": text, "target": "x"}) + "\n" for text in
                                                 ["jump thrice", "run", "look around right twice", "walk left twice"]))
    row = audit_directory(tmp_path, NearOptions(edit_distance=1, jaccard=0.5, ngram=2))["configs"][0]
    # jump thrice ~ jump twice (1 edit); look around right twice ~ ... thrice (1 edit, 2-gram J 2/4); the copy is exact
    assert (row["exact"], row["within_edit_distance"], row["within_jaccard"], row["near"]) == (1, 3, 2, 3)
    assert [e["test_line"] for e in row["examples"]] == [1, 3, 4] and row["examples"][1]["jaccard"] == 0.5


def test_only_the_same_task_is_compared_and_cues_are_set_aside(tmp_path: Path) -> None:
    train = [{"task": "parity_check", "input": "1 0 1 1 0 0 1"}, {"task": "reverse_string", "input": "0 0 0 0 1 1 1"}]
    test = [{"task": "reverse_string", "input": "1 0 1 1 0 0 1"}, {"task": "parity_check", "input": "cue:1 1 0 1 1 0 0 1"}]
    for part, rows in (("train", train), ("test", test)):
        (tmp_path / f"{part}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    row = audit_directory(tmp_path, NearOptions(edit_distance=1, jaccard=1.0))["configs"][0]
    assert (row["exact"], row["near"]) == (1, 1) and row["examples"][0]["test_line"] == 2


def test_the_command_line(release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "audit.json"
    assert main(["audit", str(release), "--config", "addition-iid", "--edit-distance", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert printed.out.splitlines()[0].split()[:4] == ["config", "train", "test", "exact"] and "addition-iid" in printed.out
    assert "test records near a train record" in printed.err
    written = json.loads(out.read_text())
    assert written == audit_directory(release, NearOptions(edit_distance=1), ["addition-iid"])
    assert main(["audit", str(release), "--config", "addition-iid", "--edit-distance", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == written
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "train.jsonl").write_text('{"input": "a b"}\n')
    (bad / "test.jsonl").write_text('{"input": "a b"}\n{"target": "c"}\n')
    for argv, fragment in (
        (["audit", str(bad)], "test.jsonl: line 2: not a record with an input string"),
        (["audit", str(bad), "--config", "x"], "--config names a config of a release"),
        (["audit", str(release), "--config", "nope"], "has no config 'nope'"),
        (["audit", str(tmp_path)], "it has no regular file train.jsonl"),
        (["audit", str(release), "--jaccard", "0"], "--jaccard=0.0 is out of range"),
        (["audit", str(release), "--out", str(out)], "exists (use --force to replace it)"),
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("gengap: error: ") and err.count("\n") == 1 and fragment in err, err
