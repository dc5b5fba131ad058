"""Recognizable staging names beside an output, and removal of those left by dead processes.

Everything gengap writes is first written under a staging name in the destination's
directory and renamed into place when complete. A staging name says which process owns it:

    .<destination name>.gengap-<role>-<host>-<pid>-<token>

role is ``staging`` (the output being written) or ``trash`` (a destination being replaced
with --force, between the two renames). A process killed before it could clean up (SIGKILL,
power loss) leaves its staging behind; ``remove_stale`` (run by every later writer in that
directory) removes staging of processes of this host that no longer run, and puts back a
trashed destination whose name is free again.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import socket
import tempfile
from pathlib import Path
from typing import Iterator

ROLES = ("staging", "trash")
_NAME = re.compile(r"^\.(?P<target>.+)\.gengap-(?P<role>staging|trash)-(?P<host>[A-Za-z0-9]+)-(?P<pid>[0-9]+)-[0-9a-f]{8}$", re.DOTALL)


def host_tag() -> str:
    """This host's name reduced to letters and digits (at most 24 characters)."""
    tag = re.sub(r"[^A-Za-z0-9]", "", socket.gethostname())[:24]
    return tag or "host"


def staging_path(target: Path, role: str = "staging") -> Path:
    """A fresh staging path for target, in target's directory (nothing is created)."""
    if role not in ROLES:
        raise ValueError(f"unknown staging role {role!r}")
    name = f".{target.name}.gengap-{role}-{host_tag()}-{os.getpid()}-{secrets.token_hex(4)}"
    return target.parent / name


def parse_staging_name(name: str) -> tuple[str, str, str, int] | None:
    """(target name, role, host, pid) of a staging name; None for any other name."""
    match = _NAME.fullmatch(name)
    if match is None:
        return None
    return match["target"], match["role"], match["host"], int(match["pid"])


def process_alive(pid: int) -> bool:
    """Whether a process with this pid exists on this host (zombies count as ended)."""
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


def remove(path: Path) -> None:
    """Remove a file or a directory tree; a missing path is fine."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def remove_stale(directory: Path) -> list[str]:
    """Remove staging of dead processes of this host in directory; return the names handled.

    A trashed destination (a --force replacement interrupted between its two renames) is
    renamed back to its name when that name is free; otherwise it is removed.
    """
    handled: list[str] = []
    try:
        names = os.listdir(directory)
    except OSError:
        return handled
    host = host_tag()
    for name in sorted(names):
        parsed = parse_staging_name(name)
        if parsed is None:
            continue
        target, role, owner_host, pid = parsed
        if owner_host != host or process_alive(pid):
            continue
        path = directory / name
        if role == "trash" and not os.path.lexists(directory / target):
            with contextlib.suppress(OSError):
                os.rename(path, directory / target)
                handled.append(name)
                continue
        remove(path)
        handled.append(name)
    return handled


@contextlib.contextmanager
def scratch_directory(label: str) -> Iterator[Path]:
    """A fresh private directory in the system temp directory, under a staging name: removed
    when the block ends, or by a later gengap if this process is killed."""
    base = Path(tempfile.gettempdir())
    remove_stale(base)
    path = staging_path(base / label)
    os.mkdir(path, 0o700)
    try:
        yield path
    finally:
        remove(path)
