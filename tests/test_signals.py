"""SIGTERM and SIGKILL: no live workers afterwards (checked by pid), no staging left behind.

Every gengap here runs slowed down (tests/test_output_discipline.SLOW_GENGAP) so that the
signal arrives mid-run without burning CPU; every process started is killed in `finally`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from gengap.cli import main
from gengap.signals import Terminated
from gengap.staging import parse_staging_name, process_alive
from tests.output_helpers import start_gengap_with
from tests.test_output_discipline import TINY, slow_gengap, wait_for

SUITE = TINY + """\
  - {task: bucket_sort, split: length, train_range: [1, 6], test_range: [7, 9], sizes: {train: 30, validation: 5, test: 10}}
  - {task: odds_first, split: length, train_range: [1, 6], test_range: [7, 9], sizes: {train: 30, validation: 5, test: 10}}
"""


def children(pid: int) -> list[int]:
    """Pids of the live children of pid (from /proc)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] not in (b"Z", b"X"):
            found.append(int(name))
    return found


def leftovers(directory: Path) -> list[str]:
    return sorted(n for n in os.listdir(directory) if parse_staging_name(n) or n.endswith(".gengap-lock"))


def command(kind: str, tmp_path: Path) -> tuple[list[str], Path]:
    if kind == "release":
        suite = tmp_path / "suite.yaml"
        suite.write_text(SUITE)
        out = tmp_path / "out" / "release"
        return ["release", str(suite), "--out", str(out), "--workers", "2"], out
    out = tmp_path / "out" / "x.jsonl"
    return ["generate", "parity_check", "--n", "200000", "--workers", "2", "--out", str(out)], out


@pytest.mark.parametrize("kind", ["release", "generate"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_signal_leaves_no_workers_and_the_next_run_no_staging(tmp_path: Path, kind: str, signum: int) -> None:
    args, out = command(kind, tmp_path)
    out.parent.mkdir()
    spools = tmp_path / "tmp"  # gengap.parallel spools generate's blocks here
    spools.mkdir()
    process = start_gengap_with({"slow": 2.0, "tmpdir": str(spools)}, *args)
    workers: list[int] = []
    try:
        assert wait_for(lambda: len(children(process.pid)) >= 2 and leftovers(out.parent), timeout=60), "workers never started"
        workers = children(process.pid)
        process.send_signal(signum)
        _, err = process.communicate(timeout=30)
        assert wait_for(lambda: not any(process_alive(pid) for pid in workers), timeout=10), "workers outlived gengap"
        if signum == signal.SIGTERM:
            assert process.returncode == 128 + signal.SIGTERM
            lines = err.strip().splitlines()
            assert lines[-1] == "gengap: terminated" and "Traceback" not in err
            assert all(line.startswith("gengap: [") for line in lines[:-1])  # progress lines only
            assert os.listdir(out.parent) == []  # staging removed, lock released and removed
            assert os.listdir(spools) == []  # and the spool of generate's workers
        else:
            assert process.returncode == -signal.SIGKILL
            assert leftovers(out.parent)  # a killed process cannot clean up ...
    finally:
        process.kill()
        process.wait()
        for pid in workers:
            if process_alive(pid):
                os.kill(pid, signal.SIGKILL)
    # ... the next run does
    small = [a if a not in ("200000",) else "50" for a in args]
    assert main([*small, "--force"] if out.exists() else small) == 0
    assert os.listdir(out.parent) == [out.name]


def test_sigint_is_clean_too(tmp_path: Path) -> None:
    args, out = command("generate", tmp_path)
    out.parent.mkdir()
    process = slow_gengap(2.0, *args)
    try:
        assert wait_for(lambda: len(children(process.pid)) >= 2, timeout=60)
        workers = children(process.pid)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
        assert process.returncode == 130 and err.strip() == "gengap: interrupted"
        assert wait_for(lambda: not any(process_alive(pid) for pid in workers), timeout=10)
        assert os.listdir(out.parent) == []
    finally:
        process.kill()
        process.wait()


def test_workers_end_when_the_parent_is_killed_before_they_start() -> None:
    """A worker whose parent is already gone exits at once instead of waiting for tasks."""
    code = (
        "import os, sys\n"
        "from gengap.workers import _start_worker\n"
        "_start_worker(os.getppid() + 1000000)\n"
        "print('still here')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert result.returncode == 1 and "still here" not in result.stdout


def _raise_during_cleanup(first: BaseException, second: OSError):
    def command(args) -> int:  # noqa: ANN001
        try:
            raise first
        finally:
            raise second  # e.g. a worker pipe that breaks while the pool shuts down

    return command


@pytest.mark.parametrize(
    ("first", "code", "message"),
    [(KeyboardInterrupt(), 130, "gengap: interrupted"), (Terminated(), 143, "gengap: terminated")],
)
def test_an_error_raised_while_an_interrupt_cleans_up_still_exits_as_interrupted(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], first: BaseException, code: int, message: str
) -> None:
    """A broken pipe raised during the cleanup of Ctrl-C once made gengap exit 0 (the stdout
    broken-pipe rule), so an interrupted run looked finished."""
    import gengap.cli

    monkeypatch.setattr(gengap.cli, "cmd_list", _raise_during_cleanup(first, BrokenPipeError(32, "Broken pipe")))
    assert gengap.cli.main(["list"]) == code
    assert capsys.readouterr().err.strip() == message
    monkeypatch.setattr(gengap.cli, "cmd_list", _raise_during_cleanup(first, OSError(5, "I/O error")))
    assert gengap.cli.main(["list"]) == code


def test_a_broken_stdout_pipe_alone_still_exits_0(monkeypatch: pytest.MonkeyPatch) -> None:
    import gengap.cli

    def command(args) -> int:  # noqa: ANN001
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(gengap.cli, "cmd_list", command)
    monkeypatch.setattr(gengap.cli, "_silence_stdout", lambda: None)
    assert gengap.cli.main(["list"]) == 0
