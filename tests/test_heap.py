"""gengap.heap: the command line keeps freed memory for the next block (glibc), bytes unchanged."""

from __future__ import annotations

import platform
import sys

import pytest

from gengap import heap
from gengap.cli import main
from tests.test_startup import modules_after


def test_glibc_takes_the_settings() -> None:
    glibc = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"
    assert heap.keep_freed_memory() is glibc


def test_only_jobs_of_several_blocks_tune_the_heap(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    calls: list[int] = []
    monkeypatch.setattr(heap, "keep_freed_memory", lambda: calls.append(1) or True)
    assert main(["generate", "parity_check", "--n", "5", "--out", str(tmp_path / "small.jsonl")]) == 0
    assert calls == []
    assert main(["generate", "parity_check", "--n", "20001", "--out", str(tmp_path / "large.jsonl")]) == 0
    assert calls == [1]


def test_small_jobs_do_not_import_the_tuning(tmp_path) -> None:
    assert "gengap.ground.heap" not in modules_after("generate", "parity_check", "--n", "1")
    assert "gengap.ground.heap" in modules_after("generate", "parity_check", "--n", "20001", "--out", str(tmp_path / "out.jsonl"))


UNTUNED = """
import sys
import gengap.heap
gengap.heap.keep_freed_memory = lambda: False
from gengap.entry import run
run(sys.argv[1:])
"""


def test_the_bytes_do_not_depend_on_the_heap(tmp_path) -> None:
    """The same file from a process that keeps glibc's defaults and from one tuned, with 2 workers."""
    import subprocess

    args = ["generate", "parity_check", "--n", "20001", "--seed", "4"]
    subprocess.run([sys.executable, "-c", UNTUNED, *args, "--out", str(tmp_path / "plain.jsonl")], check=True)
    assert main([*args, "--workers", "2", "--out", str(tmp_path / "tuned.jsonl")]) == 0
    assert (tmp_path / "tuned.jsonl").read_bytes() == (tmp_path / "plain.jsonl").read_bytes()
