"""gengap export, bounded and honest (issue 55): every count that multiplies the output is
bounded up front (case 12); undecodable bytes in --pause-token are one line, not a traceback
(case 17); a pause token that prompts, replies or the records use is refused, and the data
is checked against the manifest before its fingerprint is stamped on the export (case 18)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gengap.cli import main
from gengap.harnesses.prompts import Pause

SUITE = """\
name: paused
version: 0.0.1
seed: 5
license: mit
created: "2026-01-01"
entries:
  - {task: parity_check, split: length, train_range: [1, 6], test_range: [7, 9], sizes: {train: 20, validation: 5, test: 20}}
"""
CONFIG = "data/parity_check-length"


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("paused")
    (root / "suite.yaml").write_text(SUITE, encoding="utf-8")
    assert main(["release", str(root / "suite.yaml"), "--out", str(root / "release"), "--workers", "1"]) == 0
    return root / "release"


def refused(argv: list[str], capsys: pytest.CaptureFixture[str], fragment: str, out: Path) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("gengap: error: ") and err.count("\n") == 1 and fragment in err, err
    assert not out.exists() and not [p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}")]


@pytest.mark.parametrize("extra, fragment", [
    (["--pause", "100000000"], "pause count may be at most 4,096"),
    (["--pause", "18446744073709551616"], "pause count may be at most 4,096"),
    (["--pause-per-token", "17"], "pause per_token may be at most 16"),
    (["--shots", "100000"], "--shots must be in 0..256"),
    (["--pause", "2", "--pause-token", "x" * 65], "at most 64 characters"),
    (["--pause", "2", "--pause-token", "1"], "the pause token '1' is a token of the records"),
    (["--pause", "2", "--pause-token", "Answer:"], "a token prompts or replies use"),
    (["--pause", "2", "--pause-token", "=>"], "a token prompts or replies use"),
    (["--pause", "2", "--pause-token", "}"], "a token prompts or replies use"),
])
def test_export_refuses_unbounded_or_ambiguous_pauses(release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], fragment: str) -> None:
    out = tmp_path / "export"
    refused(["export", str(release), "--to", "chat", "--out", str(out), *extra], capsys, fragment, out)


def test_undecodable_bytes_in_the_pause_token_are_one_line(release: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    argv = [sys.executable, "-m", "gengap", "export", str(release), "--to", "chat", "--out", str(out), "--pause", "2", "--pause-token"]
    result = subprocess.run([os.fsencode(a) for a in argv] + [b"\xff\xfe"], capture_output=True, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(b"gengap: error: --pause: the pause token must be printable UTF-8") and result.stderr.count(b"\n") == 1
    assert not out.exists()


def test_a_pause_token_of_its_own_is_accepted() -> None:
    assert Pause(2, 0, "<pause>").token == "<pause>" and Pause(1, 2, "...").length({"input": "a b"}) == 5


def test_export_refuses_data_the_manifest_does_not_list(release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = Path(shutil.copytree(release, tmp_path / "release"))
    test = copy / CONFIG / "test.jsonl"
    test.write_text("".join(test.read_text(encoding="utf-8").splitlines(keepends=True)[:3]), encoding="utf-8")  # truncated
    out = tmp_path / "export"
    refused(["export", str(copy), "--to", "chat", "--out", str(out)], capsys, f"{CONFIG}/test.jsonl is not the file manifest.json lists", out)


def test_export_refuses_a_manifest_whose_fingerprint_is_not_its_data(release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = Path(shutil.copytree(release, tmp_path / "release"))
    manifest = json.loads((copy / "manifest.json").read_text(encoding="utf-8"))
    manifest["fingerprint"] = "0" * 64
    (copy / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    out = tmp_path / "export"
    refused(["export", str(copy), "--to", "chat", "--out", str(out)], capsys, "its fingerprint is not that of its data files", out)
