"""Forgeries that plain ``gengap verify`` must catch (issue 55, cases 1-6): every forgery here
recomputes every hash (tests/forgery.py), so only what verify checks beyond the hashes can
see it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gengap.cli import main
from gengap.generators.reading import ReadError, json_value
from gengap.release import write_release
from gengap.suite import parse_suite
from tests.forgery import edit_records, rehash, restate

SUITE = """\
name: round5
version: 0.0.1
seed: 5
license: mit
created: "2026-01-01"
entries:
  - {task: parity_check, split: length, train_range: [1, 6], test_range: [7, 9], sizes: {train: 20, validation: 5, test: 10}}
  - {task: even_pairs, split: length, strategy: length, pool: {n: 200}, options: {train_max: 6}}
  - {task: scan, split: jump, strategy: holdout, params: {max_actions: 8}, pool: all, options: {atom: jump, primitive_repeats: 3}}
"""
LENGTH = "data/parity_check-length"
JUMP = "data/scan-jump"


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("round5") / "release"
    write_release(parse_suite(SUITE, "<round5>"), root)
    return root


@pytest.fixture()
def copy(release: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(release, tmp_path / "release"))


def verify(root: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    code = main(["verify", str(root), *extra])
    return code, capsys.readouterr().err


def test_the_release_as_built_verifies(release: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert verify(release, capsys) == (0, "")


# -- case 3: a key twice in one object ------------------------------------------------------------


def test_the_reader_refuses_a_key_twice_at_any_depth() -> None:
    for text in ('{"target": "1", "target": "0"}', '{"a": [{"k": 1, "k": 1}]}'):
        with pytest.raises(ReadError, match="twice"):
            json_value(text)
    assert json_value('{"a": {"k": 1}, "b": {"k": 2}}') == {"a": {"k": 1}, "b": {"k": 2}}


def test_a_record_with_two_targets_fails_check_and_verify(copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = copy / LENGTH / "train.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    record = json.loads(lines[0])
    wrong = "0" if record["target"] == "1" else "1"
    lines[0] = lines[0].replace('"target":', f'"target":"{wrong}","target":', 1)  # a first-wins reader sees the wrong answer
    path.write_text("".join(lines), encoding="utf-8")
    single = tmp_path / "one.jsonl"
    single.write_text(lines[0], encoding="utf-8")
    assert main(["check", str(single)]) == 1
    assert "key 'target' twice" in capsys.readouterr().err
    rehash(copy)
    code, err = verify(copy, capsys)
    assert code == 1 and f"record: {LENGTH}/train.jsonl line 1: an object has the key 'target' twice" in err


# -- case 4: a path twice in SHA256SUMS ---------------------------------------------------------


def test_a_path_listed_twice_in_sha256sums_fails_verify(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sums = copy / "SHA256SUMS"
    text = sums.read_text(encoding="utf-8")
    wrong = f"{'0' * 64}  {LENGTH}/test.jsonl\n"
    sums.write_text(wrong + text, encoding="utf-8")  # the right line follows: a last-wins reader passes
    code, err = verify(copy, capsys)
    assert code == 1 and f"lists {LENGTH}/test.jsonl again (a path is listed once" in err


# -- cases 1 and 2: each part against the split's stated contract --------------------------------


def parity_records(lo: int, hi: int, n: int, avoid: set[str]) -> list[dict]:
    import numpy as np

    from gengap.generators import get_task

    task = get_task("parity_check")
    found = [r for r in task.generate(np.random.default_rng(7), 200, task.with_size(lo, hi)).records("parity_check") if r["input"] not in avoid]
    unique = list({r["input"]: r for r in found}.values())
    return unique[:n]


def test_an_in_distribution_test_part_fails_the_splits_settings(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Case 1: lengths 4-6 in the test part of a split whose test_range is [7, 9], every figure restated."""
    seen = {json.loads(line)["input"] for part in ("train", "validation") for line in (copy / LENGTH / f"{part}.jsonl").read_text().splitlines()}
    edit_records(copy / LENGTH / "test.jsonl", lambda records: records.__setitem__(slice(None), parity_records(4, 6, len(records), seen)))
    restate(copy)
    rehash(copy)
    code, err = verify(copy, capsys)
    assert code == 1 and f"record: {LENGTH}/test.jsonl line 1: input_length=" in err
    assert "lies outside every setting of the report's test_params (input_length 7..9)" in err


def test_train_and_test_swapped_and_restated_fail_the_stated_sizes(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Case 2: generation.sizes (20 train, 10 test) contradicts the swapped parts."""
    train, test = copy / LENGTH / "train.jsonl", copy / LENGTH / "test.jsonl"
    a, b = train.read_bytes(), test.read_bytes()
    train.write_bytes(b)
    test.write_bytes(a)
    restate(copy)
    rehash(copy)
    code, err = verify(copy, capsys)
    assert code == 1 and "config parity_check-length's generation.sizes asks for 20 train records, data/parity_check-length/train.jsonl holds 10" in err


@pytest.mark.parametrize("change", ["drop", "duplicate"])
def test_a_dropped_or_duplicated_record_restated_fails_the_stated_sizes(copy: Path, capsys: pytest.CaptureFixture[str], change: str) -> None:
    edit_records(copy / LENGTH / "train.jsonl", lambda records: records.pop() if change == "drop" else records.append(records[0]))
    restate(copy)
    rehash(copy)
    held = 19 if change == "drop" else 21
    code, err = verify(copy, capsys)
    assert code == 1 and f"generation.sizes asks for 20 train records, data/parity_check-length/train.jsonl holds {held}" in err


def test_held_out_records_moved_into_train_fail_the_holdout(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Case 2: a scan jump holdout with its jump records moved into train, every figure restated."""
    test = [json.loads(line) for line in (copy / JUMP / "test.jsonl").read_text().splitlines()]
    edit_records(copy / JUMP / "train.jsonl", lambda records: records.extend(test[5:]))
    edit_records(copy / JUMP / "test.jsonl", lambda records: records.__setitem__(slice(None), test[:5]))
    restate(copy)
    rehash(copy)
    code, err = verify(copy, capsys)
    assert code == 1 and f"record: {JUMP}/train.jsonl line " in err and "it holds 'jump', which the split holds out of train" in err


def test_a_duplicated_record_of_a_pool_of_every_example_fails(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit_records(copy / JUMP / "train.jsonl", lambda records: records.append(next(r for r in records if r["input"] != "jump")))
    restate(copy)
    rehash(copy)
    code, err = verify(copy, capsys)
    assert code == 1 and "config scan-jump is a pool of every example, but the input" in err and "occurs 2 times in its parts" in err


# -- case 5: fresh.json edited --------------------------------------------------------------------


def test_an_edited_fresh_json_fails_verify(release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fresh = tmp_path / "fresh"
    assert main(["fresh", str(release), "--config", "parity_check-length", "--n", "5", "--seed", "3", "--out", str(fresh)]) == 0
    assert main(["verify", str(fresh), "--release", str(release)]) == 0
    capsys.readouterr()
    marker = fresh / "fresh.json"
    document = json.loads(marker.read_text(encoding="utf-8"))
    marker.write_text(marker.read_text(encoding="utf-8").replace(f'"seed": {document["seed"]},', f'"seed": {document["seed"] + 1},', 1), encoding="utf-8")
    assert main(["verify", str(fresh), "--release", str(release)]) == 1
    err = capsys.readouterr().err
    assert "fresh.json was edited since gengap wrote it" in err and "its derived seed" in err


# -- case 6: a pin of every file ------------------------------------------------------------------


def test_expect_sums_pins_the_license_and_the_cards(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import hashlib

    cited = hashlib.sha256((copy / "SHA256SUMS").read_bytes()).hexdigest()
    assert verify(copy, capsys, "--expect-sums", f"sha256:{cited}")[0] == 0
    card = copy / "README.md"
    card.write_text(card.read_text(encoding="utf-8").replace("mit", "proprietary"), encoding="utf-8")  # the terms rewritten
    from gengap.release import write_checksums

    write_checksums(copy)
    fingerprint = json.loads((copy / "manifest.json").read_text())["fingerprint"]
    assert verify(copy, capsys, "--expect-fingerprint", fingerprint)[0] == 0  # the data files are the cited ones
    code, err = verify(copy, capsys, "--expect-sums", cited)
    assert code == 1 and f"not the expected sha256:{cited} (a file differs from the cited release" in err


def test_verify_refuses_a_negative_worker_count(release: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(release), "--regenerate", "--workers", "-1"]) == 2
    assert "--workers must be at least 1, got -1" in capsys.readouterr().err
