"""I/O and decoding failures are one line `gengap: error: ...` with exit 2, never a traceback."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gengap.cli import main
from tests.test_output_discipline import TINY


def gengap(*args: str, stdout=subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gengap.cli", *args], stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120)


def assert_one_line_error(result: subprocess.CompletedProcess[str], message: str = "") -> None:
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("gengap: error: ") and result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr and message in result.stderr


def test_non_utf8_suite(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(TINY.replace("name: tiny", "name: tiny\ndescription: caf\xe9").encode("latin-1"))
    result = gengap("release", str(path), "--out", str(tmp_path / "out"))
    assert_one_line_error(result, "line 2: not UTF-8 text")
    assert sorted(os.listdir(tmp_path)) == ["latin1.yaml"]


@pytest.mark.parametrize("path", ["/proc/gengap-test.jsonl", "/sys/gengap-test.jsonl"])
def test_unwritable_special_path_for_a_file(path: str) -> None:
    assert_one_line_error(gengap("generate", "parity_check", "--n", "5", "--out", path))
    assert not os.path.lexists(path)


def test_unwritable_special_path_for_a_release(tmp_path: Path) -> None:
    suite = tmp_path / "tiny.yaml"
    suite.write_text(TINY)
    assert_one_line_error(gengap("release", str(suite), "--out", "/proc/gengap-test-release"))
    assert not os.path.lexists("/proc/gengap-test-release")


@pytest.mark.parametrize(
    "args",
    [
        ["generate", "parity_check", "--n", "100000"],
        ["generate", "scan", "--all"],
        ["list"],
    ],
)
def test_full_standard_output(args: list[str]) -> None:
    with open("/dev/full", "w") as full:
        result = gengap(*args, stdout=full)
    assert_one_line_error(result, "No space left on device")


class _FullDisk:
    """A binary file whose writes fail with ENOSPC after `room` bytes."""

    def __init__(self, handle, room: int) -> None:
        self.handle, self.room = handle, room

    def write(self, data: bytes) -> int:
        if len(data) > self.room:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.room -= len(data)
        return self.handle.write(data)

    def __getattr__(self, name: str):
        return getattr(self.handle, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.handle.close()


def test_no_space_left_while_generating_to_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    real_fdopen = os.fdopen
    monkeypatch.setattr(os, "fdopen", lambda fd, mode="r", *a, **k: _FullDisk(real_fdopen(fd, mode, *a, **k), 100_000))
    out = tmp_path / "x.jsonl"
    assert main(["generate", "parity_check", "--n", "30000", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gengap: error: cannot write") and "No space left on device" in err and err.count("\n") == 1
    assert os.listdir(tmp_path) == []


def test_no_space_left_while_releasing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    suite = tmp_path / "tiny.yaml"
    suite.write_text(TINY)
    real_write_bytes = Path.write_bytes

    def full(self: Path, data: bytes) -> int:
        if self.suffix == ".jsonl" and "even_pairs" in str(self):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write_bytes(self, data)

    monkeypatch.setattr(Path, "write_bytes", full)
    assert main(["release", str(suite), "--out", str(tmp_path / "out"), "--workers", "1"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[-1].startswith("gengap: error: cannot write") and "No space left on device" in lines[-1]
    assert all(line.startswith("gengap: [") for line in lines[:-1])  # progress lines only
    assert os.listdir(tmp_path) == ["tiny.yaml"]


BOGUS_TASK = '''
from gengap.generators.registry import register
from gengap.generators.tasks.regular import ParityCheck


@register
class Bogus(ParityCheck):
    name = "bogus"
    family = "no_such_family"
'''

BOGUS_SUITE = """\
name: bogus
version: 0.0.1
seed: 1
license: mit
created: "2026-01-01"
entries:
  - {task: bogus, split: length, train_range: [1, 6], test_range: [7, 9], sizes: {train: 30, validation: 5, test: 10}}
"""


# generate looks up its task by the registry's name table (only that module is imported), so it
# meets the bogus module when it asks for a task the table does not name.
@pytest.mark.parametrize("command", [["list"], ["generate", "bogus", "--n", "2"], ["release", "extra/suite.yaml", "--out", "never"]])
def test_a_task_of_an_unknown_family_is_one_line_for_every_command(tmp_path: Path, command: list[str]) -> None:
    """A task module (one new file in generators/tasks/) that declares an unknown family: one line naming it, no traceback."""
    (tmp_path / "extra").mkdir()
    (tmp_path / "extra" / "bogus.py").write_text(BOGUS_TASK)
    (tmp_path / "extra" / "suite.yaml").write_text(BOGUS_SUITE)
    code = (f"import sys, gengap.generators.tasks as t; t.__path__.append({str(tmp_path / 'extra')!r}); "
            "from gengap.entry import run; sys.exit(run(sys.argv[1:]))")
    result = subprocess.run([sys.executable, "-c", code, *command], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert_one_line_error(result, "task bogus (gengap.generators.tasks.bogus): unknown family 'no_such_family'; known: regular, ")
    assert result.stdout == "" and sorted(os.listdir(tmp_path)) == ["extra"]
