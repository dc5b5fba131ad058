"""Recognizable staging names beside an output, and removal of those no live writer holds.

Everything gengap writes is first written under a staging name in the destination's
directory and renamed into place when complete. A staging name says what it belongs to:

    .<destination name>.gengap-<role>-<host>-<pid>-<token>

role is ``staging`` (the output being written) or ``trash`` (a destination being replaced
with --force, between the two renames). A writer creates staging only while it holds its
destination's lock (gengap.locking) and removes it before releasing the lock, so staging
whose destination's lock no process holds was left by a killed writer (SIGKILL, power
loss). ``remove_stale`` (run by every later writer in that directory) takes that lock,
removes such staging, puts back a trashed destination whose name is free again, and
releases the lock. The lock is the truth, not the process id in the name: a process id
means nothing across PID namespaces (containers, ``unshare --pid``), where a live writer's
pid can look dead. Staging of another host is left alone (on some network file systems a
lock is not visible from other hosts), and so is staging wherever flock is not supported.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import socket
import tempfile
from pathlib import Path
from typing import Iterator

from gengap.generators.safe_files import open_directory, remove_at
from gengap.ground.locking import destination_lock, held_if_free

ROLES = ("staging", "trash")
_NAME = re.compile(r"^\.(?P<target>.+)\.gengap-(?P<role>staging|trash)-(?P<host>[A-Za-z0-9]+)-(?P<pid>[0-9]+)-[0-9a-f]{8}$", re.DOTALL)


def host_tag() -> str:
    """This host's name reduced to letters and digits (at most 24 characters)."""
    tag = re.sub(r"[^A-Za-z0-9]", "", socket.gethostname())[:24]
    return tag or "host"


def staging_name(target_name: str, role: str = "staging") -> str:
    """A fresh staging name for the destination called target_name (nothing is created)."""
    if role not in ROLES:
        raise ValueError(f"unknown staging role {role!r}")
    return f".{target_name}.gengap-{role}-{host_tag()}-{os.getpid()}-{secrets.token_hex(4)}"


def staging_path(target: Path, role: str = "staging") -> Path:
    """A fresh staging path for target, in target's directory (nothing is created)."""
    return target.parent / staging_name(target.name, role)


def parse_staging_name(name: str) -> tuple[str, str, str, int] | None:
    """(target name, role, host, pid) of a staging name; None for any other name."""
    match = _NAME.fullmatch(name)
    if match is None:
        return None
    return match["target"], match["role"], match["host"], int(match["pid"])


def process_alive(pid: int) -> bool:
    """Whether a process with this pid exists in this PID namespace (zombies count as ended)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError):
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rsplit(b")", 1)[1].split()[0]
            return state not in (b"Z", b"X")
    return True


def _clean(dir_fd: int, target: str, names: list[tuple[str, str]]) -> list[str]:
    """Remove the staging names of target (the caller holds target's lock); put a trash back
    under target's name when that name is free."""
    handled = []
    for name, role in names:
        if role == "trash":
            try:
                os.stat(target, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                with contextlib.suppress(OSError):
                    os.rename(name, target, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
                    handled.append(name)
                    continue
            except OSError:
                continue
        try:
            remove_at(dir_fd, name)
        except OSError:
            continue
        handled.append(name)
    return handled


def remove_stale(directory: Path, own: str | None = None, dir_fd: int | None = None) -> list[str]:
    """Remove the staging in directory that no live writer holds; return the names handled.

    own: the name of a destination whose lock the caller holds (its staging is stale);
    dir_fd: a descriptor of directory (default: opened here). A trashed destination (a
    --force replacement interrupted between its two renames) is renamed back to its name
    when that name is free; otherwise it is removed.
    """
    try:
        fd = open_directory(directory) if dir_fd is None else dir_fd
    except OSError:
        return []
    try:
        try:
            names = os.listdir(fd)
        except OSError:
            return []
        host = host_tag()
        by_target: dict[str, list[tuple[str, str]]] = {}
        for name in sorted(names):
            parsed = parse_staging_name(name)
            if parsed is not None and parsed[2] == host:
                by_target.setdefault(parsed[0], []).append((name, parsed[1]))
        handled: list[str] = []
        for target, staged in sorted(by_target.items()):
            if target == own:
                handled += _clean(fd, target, staged)
                continue
            with held_if_free(fd, target) as free:
                if free:
                    handled += _clean(fd, target, staged)
        return handled
    finally:
        if dir_fd is None:
            os.close(fd)


@contextlib.contextmanager
def scratch_directory(label: str) -> Iterator[Path]:
    """A fresh private directory in the system temp directory, under a staging name and its own
    lock: removed when the block ends, or by a later gengap if this process is killed."""
    base = Path(tempfile.gettempdir())
    target = f"{label}-{secrets.token_hex(4)}"
    dir_fd = open_directory(base)
    try:
        with destination_lock(base / target, dir_fd):
            remove_stale(base, own=target, dir_fd=dir_fd)
            name = staging_name(target)
            os.mkdir(name, 0o700, dir_fd=dir_fd)
            try:
                yield base / name
            finally:
                remove_at(dir_fd, name)
    finally:
        os.close(dir_fd)
