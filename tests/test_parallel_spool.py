"""Several workers (gengap.parallel) write a regular file in place (each block at its offset) and
spool each block to a private temporary directory for any other output: the bytes are those
of one worker either way, and the spool directory is gone afterwards, also when a worker fails."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import gengap.parallel as parallel
from gengap.cli import main
from gengap.generators import BlockPlan, get_task
from gengap.generators.blocks import BLOCK_SIZE


@pytest.fixture
def spool_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


def test_spooled_blocks_match_one_worker_and_leave_nothing(tmp_path: Path, spool_root: Path) -> None:
    n = 3 * BLOCK_SIZE + 7
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    assert main(["generate", "parity_check", "--n", str(n), "--workers", "1", "--out", str(one)]) == 0
    assert main(["generate", "parity_check", "--n", str(n), "--workers", "2", "--out", str(two)]) == 0
    assert one.read_bytes() == two.read_bytes()
    assert list(spool_root.iterdir()) == []


def test_a_failing_worker_leaves_no_spool_and_no_output(tmp_path: Path, spool_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = parallel.render_block

    def fails_on_block_two(plan, block):
        if block == 2:
            raise RuntimeError("boom in a worker")
        return real(plan, block)

    monkeypatch.setattr(parallel, "render_block", fails_on_block_two)  # the forked workers inherit it
    out = tmp_path / "x.jsonl"
    with pytest.raises(RuntimeError, match="boom in a worker"):  # written in place
        main(["generate", "parity_check", "--n", str(4 * BLOCK_SIZE), "--workers", "2", "--out", str(out)])
    assert not out.exists()
    plan = BlockPlan("parity_check", get_task("parity_check").with_size(5, 9), 4 * BLOCK_SIZE, 0)
    with pytest.raises(RuntimeError, match="boom in a worker"):  # spooled
        list(parallel.write_blocks(plan, 2, io.BytesIO()))
    assert list(spool_root.iterdir()) == []


def test_blocks_are_written_in_place_into_a_regular_file(tmp_path: Path, spool_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "_spool_block", None)  # the spooling path would fail
    plan = BlockPlan("reverse_string", get_task("reverse_string").with_size(1, 30), 3 * BLOCK_SIZE + 11, 8)
    expected = b"".join(parallel.render_block(plan, block)[0] for block in range(plan.num_blocks))
    with open(tmp_path / "x.jsonl", "wb") as handle:
        handle.write(b"head\n")
        assert [block for block, _ in parallel.write_blocks(plan, 2, handle)] == [0, 1, 2, 3]
        assert handle.tell() == 5 + len(expected)
        handle.write(b"tail\n")
    assert (tmp_path / "x.jsonl").read_bytes() == b"head\n" + expected + b"tail\n"


def test_write_blocks_to_a_handle_without_a_file_descriptor() -> None:
    params = get_task("reverse_string").with_size(5, 9)
    plan = BlockPlan("reverse_string", params, 2 * BLOCK_SIZE + 1, 3)
    memory, spooled = io.BytesIO(), io.BytesIO()
    assert [block for block, _ in parallel.write_blocks(plan, 1, memory)] == [0, 1, 2]
    assert [block for block, _ in parallel.write_blocks(plan, 2, spooled)] == [0, 1, 2]
    assert memory.getvalue() == spooled.getvalue()


def test_two_workers_through_a_pipe() -> None:
    argv = [sys.executable, "-m", "gengap", "generate", "reverse_string", "--n", str(2 * BLOCK_SIZE + 5), "--seed", "4"]
    one = subprocess.run(argv + ["--workers", "1"], capture_output=True, check=True).stdout
    two = subprocess.run(argv + ["--workers", "2"], capture_output=True, check=True).stdout
    assert one == two and one.count(b"\n") == 2 * BLOCK_SIZE + 5


def test_a_spooling_run_removes_the_spools_of_dead_owners_only(tmp_path: Path, spool_root: Path) -> None:
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    dead = spool_root / f"{parallel.SPOOL_PREFIX}{int(ended.stdout)}-abc"
    live = spool_root / f"{parallel.SPOOL_PREFIX}{os.getpid()}-def"
    other = spool_root / "someone-elses"
    for folder in (dead, live, other):
        folder.mkdir()
        (folder / "0.jsonl").write_bytes(b"{}\n")
    plan = BlockPlan("parity_check", get_task("parity_check").with_size(5, 9), 2 * BLOCK_SIZE, 0)
    list(parallel.write_blocks(plan, 2, io.BytesIO()))  # spooled: no file descriptor
    assert sorted(p.name for p in spool_root.iterdir()) == sorted([live.name, other.name])
