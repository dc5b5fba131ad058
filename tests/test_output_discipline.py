"""The output discipline: never replace what was not checked, refuse what gengap did not write,
one writer per destination, staging of dead processes removed by the next writer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gengap.cli import main
from gengap.errors import UsageError
from gengap.files import atomic_directory, atomic_output
from gengap.locking import destination_lock, lock_path
from gengap.ownership import SPLIT
from gengap.release import write_release
from gengap.staging import parse_staging_name, remove_stale, staging_path
from gengap.suite import parse_suite
from tests.output_helpers import gengap, start_gengap_with

TINY = """\
name: tiny
version: 0.0.1
seed: 1
license: mit
created: "2026-01-01"
entries:
  - {task: parity_check, split: length, train_range: [1, 6], test_range: [7, 9], sizes: {train: 30, validation: 5, test: 10}}
  - {task: even_pairs, split: length, train_range: [1, 6], test_range: [7, 9], sizes: {train: 30, validation: 5, test: 10}}
"""

# holds the lock of the destination argv[1] until killed
HOLD_LOCK = """\
import sys, time
from pathlib import Path
from gengap.locking import destination_lock
with destination_lock(Path(sys.argv[1])):
    print("locked", flush=True)
    time.sleep(600)
"""


def slow_gengap(seconds: float, *args: str) -> subprocess.Popen[str]:
    """gengap with every config (release) or block (generate) slowed down by seconds, so that a
    test can act while it runs; workers are forked, so they are slowed down too."""
    return start_gengap_with({"slow": seconds}, *args)


def wait_for(condition, timeout: float = 60.0, step: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(step)
    return condition()


@pytest.fixture()
def suite_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY)
    return path


def staging_names(directory: Path) -> list[str]:
    return sorted(n for n in os.listdir(directory) if parse_staging_name(n) or n.endswith(".gengap-lock"))


# -- problem 1: a file created in the destination while gengap writes survives --------------


@pytest.mark.parametrize("start", ["absent", "empty"])
def test_file_created_in_destination_during_release_survives(tmp_path: Path, start: str) -> None:
    out = tmp_path / "release"
    if start == "empty":
        out.mkdir()

    def user_writes(name: str) -> None:
        out.mkdir(exist_ok=True)
        (out / "notes.txt").write_text("mine")

    with pytest.raises(UsageError, match="changed while gengap was writing"):
        write_release(parse_suite(TINY), out, on_done=user_writes, cards=False)
    assert (out / "notes.txt").read_text() == "mine"
    assert sorted(os.listdir(out)) == ["notes.txt"]
    assert staging_names(tmp_path) == []


def test_forced_replacement_keeps_a_file_created_meanwhile(tmp_path: Path) -> None:
    out = tmp_path / "release"
    write_release(parse_suite(TINY), out, cards=False)
    old_manifest = (out / "manifest.json").read_bytes()

    def user_writes(name: str) -> None:
        (out / "data" / "notes.txt").write_text("mine")

    with pytest.raises(UsageError, match="changed while gengap was writing"):
        write_release(parse_suite(TINY), out, force=True, on_done=user_writes, cards=False)
    assert (out / "data" / "notes.txt").read_text() == "mine"
    assert (out / "manifest.json").read_bytes() == old_manifest
    assert staging_names(tmp_path) == []


def test_file_output_appearing_meanwhile_is_not_replaced(tmp_path: Path) -> None:
    out = tmp_path / "x.jsonl"
    with pytest.raises(UsageError, match="changed while gengap was writing"):
        with atomic_output(out) as handle:
            handle.write(b"new\n")
            out.write_text("mine")
    assert out.read_text() == "mine"
    assert sorted(os.listdir(tmp_path)) == ["x.jsonl"]


def test_forced_directory_replacement_succeeds_when_nothing_changed(tmp_path: Path) -> None:
    out = tmp_path / "split"
    assert main(["generate", "parity_check", "--n", "40", "--out", str(tmp_path / "pool.jsonl")]) == 0
    assert main(["split", str(tmp_path / "pool.jsonl"), "--strategy", "iid", "--out", str(out)]) == 0
    with atomic_directory(out, force=True, product=SPLIT) as staging:
        (staging / "report.json").write_text('{"new": 1}')
    assert sorted(os.listdir(out)) == ["report.json"]
    assert json.loads((out / "report.json").read_text()) == {"new": 1}
    assert sorted(os.listdir(tmp_path)) == ["pool.jsonl", "split"]


# -- problem 1: concurrent writers ----------------------------------------------------------------


def test_a_held_lock_makes_a_second_writer_fail_at_once(tmp_path: Path) -> None:
    out = tmp_path / "release"
    with destination_lock(out):
        started = time.monotonic()
        with pytest.raises(UsageError, match="another gengap process is writing"):
            write_release(parse_suite(TINY), out, cards=False)
        assert time.monotonic() - started < 5
        assert not out.exists()
    assert not lock_path(out).exists()  # removed by its holder


def test_concurrent_releases_one_fails(tmp_path: Path, suite_file: Path) -> None:
    out = tmp_path / "release"
    args = ("release", str(suite_file), "--out", str(out), "--workers", "1")
    first, second = slow_gengap(1.5, *args), slow_gengap(1.5, *args)
    try:
        results = [p.communicate(timeout=120) + (p.returncode,) for p in (first, second)]
    finally:
        for process in (first, second):
            process.kill()
            process.wait()
    codes = sorted(code for _, _, code in results)
    assert codes == [0, 2], results
    loser = next(err for _, err, code in results if code == 2)
    assert "another gengap process is writing" in loser and loser.count("\n") == 1
    assert main(["verify", str(out)]) == 0
    assert sorted(os.listdir(tmp_path)) == ["release", "tiny.yaml"]


# -- problem 1: --force never deletes an input, nor what gengap did not write -------------------


def test_force_refuses_when_the_suite_lies_inside_the_destination(tmp_path: Path) -> None:
    out = tmp_path / "release"
    write_release(parse_suite(TINY), out, cards=False)
    suite = out / "my-suite.yaml"
    suite.write_text(TINY)
    result = gengap("release", str(suite), "--out", str(out), "--force", "--workers", "1")
    assert result.returncode == 2
    assert "lies inside the output directory" in result.stderr and result.stderr.count("\n") == 1
    assert suite.read_text() == TINY and (out / "manifest.json").is_file()


def test_force_refuses_when_the_pool_lies_inside_the_destination(tmp_path: Path) -> None:
    out = tmp_path / "split"
    assert main(["generate", "parity_check", "--n", "50", "--out", str(tmp_path / "pool.jsonl")]) == 0
    assert main(["split", str(tmp_path / "pool.jsonl"), "--strategy", "iid", "--out", str(out)]) == 0
    pool = out / "pool.jsonl"
    os.replace(tmp_path / "pool.jsonl", pool)
    before = pool.read_bytes()
    result = gengap("split", str(pool), "--strategy", "iid", "--out", str(out), "--force")
    assert result.returncode == 2 and "lies inside the output directory" in result.stderr
    assert pool.read_bytes() == before


def test_force_refuses_a_directory_gengap_did_not_write(tmp_path: Path, suite_file: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "thesis.tex").write_text("years of work")
    result = gengap("release", str(suite_file), "--out", str(home), "--force")
    assert result.returncode == 2 and "has no manifest.json" in result.stderr
    assert (home / "thesis.tex").read_text() == "years of work"


def test_force_refuses_a_release_holding_a_symlink(tmp_path: Path, suite_file: Path) -> None:
    out = tmp_path / "release"
    write_release(parse_suite(TINY), out, cards=False)
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("keep")
    (out / "link").symlink_to(elsewhere)
    result = gengap("release", str(suite_file), "--out", str(out), "--force")
    assert result.returncode == 2 and "is a symbolic link" in result.stderr
    assert (out / "link").is_symlink() and elsewhere.read_text() == "keep"


# -- problem 1: generate --out ------------------------------------------------------------------


def test_generate_refuses_an_existing_file_unless_forced(tmp_path: Path) -> None:
    out = tmp_path / "x.jsonl"
    out.write_text("mine\n")
    result = gengap("generate", "parity_check", "--n", "5", "--out", str(out))
    assert result.returncode == 2 and "exists (use --force" in result.stderr
    assert out.read_text() == "mine\n"
    assert gengap("generate", "parity_check", "--n", "5", "--out", str(out), "--force").returncode == 0
    assert len(out.read_text().splitlines()) == 5


@pytest.mark.parametrize("kind", ["fifo", "symlink", "device"])
def test_generate_never_replaces_a_special_file(tmp_path: Path, kind: str) -> None:
    if kind == "fifo":
        out = tmp_path / "pipe"
        os.mkfifo(out)
        message = "is a named pipe"
    elif kind == "symlink":
        target = tmp_path / "target.jsonl"
        target.write_text("keep\n")
        out = tmp_path / "link.jsonl"
        out.symlink_to(target)
        message = "is a symbolic link"
    else:
        out = Path("/dev/null")
        message = "is a device"
    before = os.lstat(out)
    for force in ([], ["--force"]):
        result = gengap("generate", "parity_check", "--n", "5", "--out", str(out), *force)
        assert result.returncode == 2, result.stderr
        assert message in result.stderr and result.stderr.count("\n") == 1
    after = os.lstat(out)
    assert (after.st_mode, after.st_ino, after.st_rdev) == (before.st_mode, before.st_ino, before.st_rdev)
    if kind == "symlink":
        assert (tmp_path / "target.jsonl").read_text() == "keep\n"
    if kind != "device":
        assert sorted(os.listdir(tmp_path)) == sorted({out.name, "target.jsonl"} & set(os.listdir(tmp_path)))


# -- staging names and stale staging ----------------------------------------------------------


@given(st.text(alphabet=st.characters(blacklist_characters="/\x00"), min_size=1, max_size=60).filter(lambda n: n not in (".", "..")))
def test_staging_names_are_recognizable(name: str) -> None:
    target = Path("/some/dir") / name
    for role in ("staging", "trash"):
        parsed = parse_staging_name(staging_path(target, role).name)
        assert parsed is not None
        assert parsed[0] == name and parsed[1] == role and parsed[3] == os.getpid()
    if ".gengap-" not in name:
        assert parse_staging_name(name) is None


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_remove_stale_removes_staging_no_live_lock_holds(tmp_path: Path) -> None:
    """The lock is the truth: staging whose destination's lock is held stays, whatever pid its
    name carries (a live writer in another PID namespace looks dead to kill(pid, 0))."""
    dead = dead_pid()
    held = tmp_path / staging_path(tmp_path / "out").name.replace(f"-{os.getpid()}-", f"-{dead}-")
    held.mkdir()
    (held / "big.jsonl").write_text("x" * 1000)
    stale_dir = tmp_path / staging_path(tmp_path / "old").name.replace(f"-{os.getpid()}-", f"-{dead}-")
    stale_dir.mkdir()
    (stale_dir / "big.jsonl").write_text("x" * 1000)
    stale_file = tmp_path / staging_path(tmp_path / "x.jsonl").name  # this (live) process's pid, but no lock held
    stale_file.write_text("partial")
    bystander = tmp_path / ".out.gengap-staging-not-a-pid"
    bystander.write_text("not ours")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(tmp_path / "out")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        removed = remove_stale(tmp_path)
    finally:
        holder.kill()
        holder.wait()
    assert sorted(removed) == sorted([stale_dir.name, stale_file.name])
    assert held.is_dir() and bystander.is_file()
    assert not stale_dir.exists() and not stale_file.exists()
    assert not (tmp_path / ".old.gengap-lock").exists() and not (tmp_path / ".x.jsonl.gengap-lock").exists()
    assert remove_stale(tmp_path) == [held.name]  # its holder died: now it is stale


def test_remove_stale_puts_back_a_trashed_destination(tmp_path: Path) -> None:
    trash = tmp_path / staging_path(tmp_path / "release", "trash").name.replace(f"-{os.getpid()}-", f"-{dead_pid()}-")
    trash.mkdir()
    (trash / "manifest.json").write_text("{}")
    remove_stale(tmp_path)
    assert (tmp_path / "release" / "manifest.json").read_text() == "{}"
    assert os.listdir(tmp_path) == ["release"]


def test_without_flock_support_writing_still_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Some network file systems refuse flock: gengap writes without the lock, publishing stays safe."""
    import errno
    import fcntl

    def no_locks(fd: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    monkeypatch.setattr(fcntl, "flock", no_locks)
    out = tmp_path / "x.jsonl"
    with atomic_output(out) as handle:
        handle.write(b"data\n")
    assert out.read_bytes() == b"data\n"
    assert os.listdir(tmp_path) == ["x.jsonl"]


# -- publish last (issue 38, item 13) -------------------------------------------------------------


def _out_of_memory(*args: object, **kwargs: object) -> object:
    raise MemoryError


@pytest.mark.parametrize("command", ["split", "generate"])
def test_memory_running_out_after_the_work_publishes_nothing(tmp_path: Path, command: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Under `ulimit -v`, split exited 2 "out of memory" after its output directory was published:
    what the command says afterwards (repeat warnings, the summary) is now worked out before."""
    import gengap.cli as cli

    pool = tmp_path / "pool.jsonl"
    assert main(["generate", "parity_check", "--n", "40", "--out", str(pool)]) == 0
    monkeypatch.setattr(cli, "repeated", _out_of_memory)
    out = tmp_path / "out"
    argv = ["split", str(pool), "--strategy", "iid", "--out", str(out)] if command == "split" else ["generate", "parity_check", "--n", "40", "--out", str(out)]
    capsys.readouterr()
    assert main(argv) == 2
    assert capsys.readouterr().err == "gengap: error: out of memory (see the record limits in the README)\n"
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["pool.jsonl"]


FULL_SPOOL = """\
import sys
import gengap.parallel as parallel
parallel._spool_path = lambda spool, block: "/dev/full"  # every spool write: ENOSPC, as in a full TMPDIR
from gengap.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_temporary_directory_is_named_not_taken_for_standard_output(tmp_path: Path) -> None:
    """Issue 38, item 19: generate with workers spools blocks to TMPDIR; a full TMPDIR was reported
    as "cannot write to standard output"."""
    from tests.output_helpers import _environment

    done = subprocess.run(
        [sys.executable, "-c", FULL_SPOOL, "generate", "parity_check", "--n", "25000", "--workers", "2"],
        capture_output=True, text=True, timeout=300, env=_environment(),
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.startswith("gengap: error: ") and done.stderr.count("\n") == 1, done.stderr[-2000:]
    assert "standard output" not in done.stderr and "temporary directory" in done.stderr and "No space left on device" in done.stderr
