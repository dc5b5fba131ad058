"""Plain verify cross-checks what the manifest states against the files (issue 38, item 6), and
sees a forged structure in a release (item 4): every forgery here recomputes every hash
(tests/forgery.py), so only these checks can catch it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gengap.cli import main
from gengap.release import write_release
from gengap.suite import parse_suite
from tests.forgery import edit_records, rehash, restate

SUITE = """\
name: crossed
version: 0.0.1
seed: 5
license: mit
created: "2026-01-01"
entries:
  - {task: parity_check, split: length, train_range: [1, 6], test_range: [7, 9], sizes: {train: 20, validation: 5, test: 20}}
  - {task: letter_analogy, split: iid, pool: {n: 40}, params: {max_depth: 2}}
  - {task: even_pairs, split: iid_cue, strategy: iid, pool: {n: 60}, cue: {train: 0.9, test: 0.5}}
  - {task: even_pairs, split: length, strategy: length, pool: {n: 200}, options: {train_max: 6}}
"""
LENGTH = "data/parity_check-length"


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("crossed") / "release"
    write_release(parse_suite(SUITE, "<crossed>"), root)
    return root


@pytest.fixture()
def copy(release: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(release, tmp_path / "release"))


def verify(root: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["verify", str(root)])
    return code, capsys.readouterr().err


def test_the_release_as_built_verifies(release: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert verify(release, capsys) == (0, "")


def test_train_and_test_swapped_with_every_hash_recomputed_fail_plain_verify(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's case: the sizes are equal here (20 and 20), so only what the report states
    about the parts' lengths (and the split's ranges) shows the swap."""
    train, test = (copy / LENGTH / "train.jsonl"), (copy / LENGTH / "test.jsonl")
    a, b = train.read_bytes(), test.read_bytes()
    train.write_bytes(b)
    test.write_bytes(a)
    rehash(copy)
    code, err = verify(copy, capsys)
    assert code == 1
    assert "report describes its train part otherwise than data/parity_check-length/train.jsonl holds" in err


def test_a_swap_with_the_report_restated_still_breaks_the_splits_ranges(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A forger who swaps train and test of a length split and rewrites sizes, summaries,
    divergences and novelty to match: the split's own facts (train_range, test_range) remain."""
    folder = copy / "data/even_pairs-length"
    a, b = (folder / "train.jsonl").read_bytes(), (folder / "test.jsonl").read_bytes()
    (folder / "train.jsonl").write_bytes(b)
    (folder / "test.jsonl").write_bytes(a)
    restate(copy)
    rehash(copy)
    code, err = verify(copy, capsys)
    assert code == 1 and "data/even_pairs-length/train.jsonl line 1: input_length=" in err and "lies outside the report's train_range [0, 6]" in err


def test_a_dropped_record_with_every_hash_recomputed_fails_plain_verify(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit_records(copy / LENGTH / "test.jsonl", lambda records: records.pop())
    rehash(copy)
    code, err = verify(copy, capsys)
    assert code == 1 and "report gives sizes {'train': 20, 'validation': 5, 'test': 20}, its files give" in err
    restate(copy)  # a forger who rewrites the report too: generation.sizes still asks for 20 (issue 55, case 2)
    rehash(copy)
    code, err = verify(copy, capsys)
    assert code == 1 and "generation.sizes asks for 20 test records, data/parity_check-length/test.jsonl holds 19" in err


def test_a_changed_novelty_and_a_lie_about_bytes_fail_plain_verify(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def bump(records: list[dict]) -> None:
        records[0]["novelty"] = {**records[0]["novelty"], "unseen_atoms": records[0]["novelty"]["unseen_atoms"] + 1}

    edit_records(copy / LENGTH / "test.jsonl", bump)
    rehash(copy, lambda m: m["configs"][0]["files"]["train"].update(bytes=1))
    code, err = verify(copy, capsys)
    assert code == 1
    assert "data/parity_check-length/test.jsonl line 1: its novelty is not the one relative to the config's train part" in err
    assert "report summarizes the novelty of its test part otherwise than its records" in err


def test_a_cue_outside_the_reports_answer_set_fails_plain_verify(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rehash(copy, lambda m: m["configs"][2]["report"]["cue"].update(answers=["0"]))
    code, err = verify(copy, capsys)
    assert code == 1 and "cues name '1', which is not in its report's cue answers" in err


def test_a_forged_structure_in_a_release_fails_plain_verify(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Item 4 in a release: four reverses in place of a record's composition (splits read it)."""
    reverse: object = "standard"
    for _ in range(4):
        reverse = ["T -> reverse T", reverse]

    def forge(records: list[dict]) -> None:
        records[0]["structure"] = reverse
        records[0]["meta"]["max_depth"] = 4

    edit_records(copy / "data/letter_analogy-iid/train.jsonl", forge)
    rehash(copy)
    code, err = verify(copy, capsys)
    assert code == 1 and "data/letter_analogy-iid/train.jsonl line 1: " in err
    assert "structure composes 4 transformations; the record allows at most 2" in err or "structure is a composition that does not give" in err or "target" in err


def test_remembered_atoms_and_compounds_are_those_of_each_records_content() -> None:
    """verify works each record's atoms and compounds out once, across the configs that share
    records; a record that differs in its structure or meta is worked out on its own."""
    import numpy as np

    from gengap.generators import get_task
    from gengap.splits.atoms import record_atoms, record_compounds, remembered

    first, second = get_task("scan").generate(np.random.default_rng(0), 2, get_task("scan").default_params()).records("scan")
    forged = {**first, "structure": second["structure"]}
    plain = [record_compounds(r) for r in (first, second, forged)] + [record_atoms(forged)]
    cache: dict = {}
    with remembered(cache):
        assert [record_compounds(r) for r in (first, second, forged)] + [record_atoms(forged)] == plain
        assert record_compounds(dict(first)) is record_compounds(first)  # a copy (another config's record): worked out once
    assert plain[2] != plain[0] and cache
