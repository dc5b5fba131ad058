"""Shortcut cues end to end: `gengap split --cue`, suite entries with ``cue``, release, verify."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gengap.generators.cues import CUE_FEATURE, has_cue, without_cue
from gengap.checking import record_problem
from gengap.cli import main
from tests.output_helpers import gengap, one_line_error

SUITE = """\
name: cue-suite
version: 0.0.1
seed: 5
license: mit
created: "2026-01-01"
description: shortcut cues under two strategies
entries:
  - {task: parity_check, split: iid_cue, strategy: iid, params: {max_length: 10}, pool: {n: 200}, cue: {train: 0.95, test: 0.05}}
  - {task: even_pairs, split: length_cue, strategy: length, train_range: [1, 6], test_range: [8, 10], sizes: {train: 60, validation: 10, test: 30}, cue: {train: 1.0, test: 0.5}}
"""


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cues")
    (folder / "suite.yaml").write_text(SUITE)
    out = folder / "release"
    assert main(["release", str(folder / "suite.yaml"), "--out", str(out), "--workers", "1"]) == 0
    return out


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_release_with_cues_verifies_and_regenerates(release: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = json.loads((release / "manifest.json").read_text())
    reports = {c["name"]: c["report"]["cue"] for c in manifest["configs"]}
    assert reports["parity_check-iid_cue"]["rate"] == {"train": 0.95, "validation": 0.95, "test": 0.05}
    assert reports["even_pairs-length_cue"]["agreement"]["train"] == 1.0
    records = _records(release / "data" / "parity_check-iid_cue" / "test.jsonl")
    assert records and all(has_cue(r) and record_problem(r) is None for r in records)
    assert sum(r["difficulty"][CUE_FEATURE] for r in records) < len(records) / 2  # reversed cue
    assert main(["verify", str(release)]) == 0
    assert main(["verify", str(release), "--regenerate"]) == 0


def test_verify_sees_a_forged_cue(release: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(release, copy)
    path = copy / "data" / "parity_check-iid_cue" / "train.jsonl"
    records = _records(path)
    records[0]["difficulty"][CUE_FEATURE] = 1 - records[0]["difficulty"][CUE_FEATURE]
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
    assert main(["verify", str(copy)]) != 0


def test_verify_compares_cue_less_inputs_across_parts(release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A test record whose input is a train input under another cue is a train input."""
    import shutil

    from gengap.generators import record_id

    copy = tmp_path / "copy"
    shutil.copytree(release, copy)
    folder = copy / "data" / "parity_check-iid_cue"
    seen = _records(folder / "train.jsonl")[0]
    base = without_cue(seen)
    named = "1" if seen["input"].startswith("cue:0") else "0"
    forged = {**seen, "input": f"cue:{named} {base['input']}",
              "difficulty": {**seen["difficulty"], CUE_FEATURE: int(named == seen["target"])}}
    forged["id"] = record_id(forged["task"], forged["input"], forged["target"])
    with (folder / "test.jsonl").open("a") as handle:
        handle.write(json.dumps(forged, separators=(",", ":")) + "\n")
    assert main(["verify", str(copy)]) != 0
    assert "1 test inputs also occur in train or validation" in capsys.readouterr().err


def test_cli_split_with_cue(tmp_path: Path) -> None:
    pool = tmp_path / "pool.jsonl"
    assert gengap("generate", "parity_check", "--n", "300", "--seed", "1", "--out", str(pool)).returncode == 0
    done = gengap("split", str(pool), "--strategy", "iid", "--cue", "train=0.8,test=0.5", "--out", str(tmp_path / "s"))
    assert done.returncode == 0, done.stderr
    assert "cue rate (measured agreement): train 0.8 (" in done.stdout and "test 0.5 (" in done.stdout
    report = json.loads((tmp_path / "s" / "report.json").read_text())
    assert report["cue"]["rate"] == {"train": 0.8, "validation": 0.8, "test": 0.5}
    train = _records(tmp_path / "s" / "train.jsonl")
    assert all(has_cue(r) for r in train)
    assert report["cue"]["agreement"]["train"] == pytest.approx(sum(r["difficulty"][CUE_FEATURE] for r in train) / len(train), abs=1e-6)
    assert gengap("check", str(tmp_path / "s" / "train.jsonl")).returncode == 0
    again = gengap("split", str(pool), "--strategy", "iid", "--cue", "train=0.8,test=0.5", "--out", str(tmp_path / "t"))
    assert again.returncode == 0
    for part in ("train", "validation", "test"):
        assert (tmp_path / "s" / f"{part}.jsonl").read_bytes() == (tmp_path / "t" / f"{part}.jsonl").read_bytes()
    inputs = {without_cue(r)["input"] for r in train}
    plain = gengap("split", str(pool), "--strategy", "iid", "--out", str(tmp_path / "u"))
    assert plain.returncode == 0 and inputs == {r["input"] for r in _records(tmp_path / "u" / "train.jsonl")}


def test_cli_refuses_tasks_without_a_small_answer_set(tmp_path: Path) -> None:
    pool = tmp_path / "pool.jsonl"
    assert gengap("generate", "reverse_string", "--n", "50", "--out", str(pool)).returncode == 0
    result = gengap("split", str(pool), "--strategy", "iid", "--cue", "train=0.9,test=0.5", "--out", str(tmp_path / "s"))
    one_line_error(result, "no small answer set")
    assert not (tmp_path / "s").exists()
    bad = gengap("split", str(pool), "--strategy", "iid", "--cue", "train=2", "--out", str(tmp_path / "s"))
    one_line_error(bad, "cue")


def test_suite_refuses_a_bad_cue(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(SUITE.replace("cue: {train: 1.0, test: 0.5}", "cue: {train: 1.0}"))
    result = gengap("release", str(path), "--out", str(tmp_path / "r"))
    assert result.returncode == 2 and "cue" in result.stderr and result.stderr.count("\n") == 1, result.stderr
    assert not (tmp_path / "r").exists()
