"""Outputs that would overwrite or mix with what they are made from (issue 55): an output that
is, or lies inside, an input is refused whatever --force says (case 8); a run directory has one
writer (case 9); --resume into a directory with no run and an empty --out are errors, not a
silent fresh start or nothing written (case 18)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gengap.cli import main
from gengap.locking import destination_lock

TINY_RUN = ["--preset", "tiny", "--steps", "2", "--eval-every", "2", "--eval-examples", "2", "--layers", "1", "--d-model", "16", "--heads", "2"]


@pytest.fixture(scope="module")
def split(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("round5-outputs")
    assert main(["generate", "parity_check", "--n", "60", "--seed", "1", "--out", str(root / "pool.jsonl")]) == 0
    assert main(["split", str(root / "pool.jsonl"), "--strategy", "iid", "--out", str(root / "s")]) == 0
    return root / "s"


def listing(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def refused(argv: list[str], capsys: pytest.CaptureFixture[str], fragment: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("gengap: error: ") and err.count("\n") == 1 and fragment in err, err


@pytest.mark.parametrize("out, force", [("train.jsonl", True), ("a.json", False), ("a.json", True)])
def test_audit_never_writes_into_what_it_audits(split: Path, capsys: pytest.CaptureFixture[str], out: str, force: bool) -> None:
    before = listing(split)
    refused(["audit", str(split), "--out", str(split / out), *(["--force"] if force else [])], capsys, "lies inside the input")
    assert listing(split) == before


def test_audit_with_an_empty_out_is_a_usage_error(split: Path, capsys: pytest.CaptureFixture[str]) -> None:
    refused(["audit", str(split), "--out", ""], capsys, "--out is empty")


def test_train_never_writes_a_run_inside_the_split_it_trains_on(split: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = listing(split)
    refused(["train", str(split), *TINY_RUN, "--out", str(split / "run")], capsys, "lies inside the input")
    assert listing(split) == before


def test_resume_into_a_directory_with_no_run_is_an_error(split: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    refused(["train", str(split), *TINY_RUN, "--out", str(tmp_path / "none"), "--resume"], capsys, "holds no run to continue")
    (tmp_path / "empty").mkdir()
    refused(["train", str(split), *TINY_RUN, "--out", str(tmp_path / "empty"), "--resume"], capsys, "holds no run to continue")
    assert not (tmp_path / "none").exists() and not any((tmp_path / "empty").iterdir())


def test_a_run_being_written_refuses_a_second_writer(split: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    run = tmp_path / "run"
    assert main(["train", str(split), *TINY_RUN, "--out", str(run)]) == 0
    capsys.readouterr()
    before = listing(run)
    with destination_lock(run):  # another process training this run holds its lock (flock: per open file, so in-process too)
        refused(["train", str(split), *TINY_RUN, "--out", str(run), "--resume"], capsys, "another gengap process is writing")
    assert listing(run) == before
    assert main(["train", str(split), *TINY_RUN, "--out", str(run), "--resume"]) == 0  # the lock is gone with its holder
    assert not list(tmp_path.glob(".*gengap-lock"))
