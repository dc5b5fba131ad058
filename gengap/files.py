"""The output discipline of every command that writes a file or a directory.

1. Check up front: an existing destination is refused unless ``force``; with ``force``
   only a regular file (for a file output) or a directory of regular files and
   directories that gengap could have written (it holds ``marker``, e.g. manifest.json)
   is replaced; a symlink, named pipe, device or socket never is; nor is a destination
   that contains one of the command's inputs.
2. Take the destination's lock (gengap.locking): a concurrent writer fails at once.
3. Remove staging left beside it by dead processes (gengap.staging), then write the
   output under a fresh staging name in the same directory.
4. Publish only if the destination is still what was checked: a new destination appears
   by a rename that cannot replace anything (a hard link for files; for directories a
   rename that fails on a non-empty directory); a forced replacement is checked again
   after the old destination is moved aside, and put back if anything changed.

On any error or interrupt the staging is removed and the destination is left as it was.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator

from gengap.errors import UsageError
from gengap.locking import destination_lock
from gengap.signals import signals_deferred
from gengap.staging import remove, remove_stale, staging_path

Entry = tuple[str, int, int, int, int]  # relative path, file type bits, size, mtime_ns, inode
_LINK_UNSUPPORTED = {errno.EPERM, errno.EXDEV, errno.EMLINK, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP}


@dataclass(frozen=True)
class Snapshot:
    """What was at a destination when it was checked: nothing, a file or a directory tree."""

    kind: str  # "absent", "file" or "directory"
    inode: int = 0
    entries: tuple[Entry, ...] = ()


def _what(mode: int) -> str:
    """A phrase naming a file type that gengap never replaces."""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise UsageError(f"cannot inspect {str(path)!r}: {err.strerror}") from None


def _check_parent(target: Path, label: str) -> None:
    """UsageError unless target's parent directory exists and is writable."""
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"{label} {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{label} {str(parent)!r} is not writable")


def write_error(target: Path, err: OSError) -> UsageError:
    """The one-line error of a failed write of target (ENOSPC, EIO, a read-only file system, ...)."""
    return UsageError(f"cannot write {str(target)!r}: {err.strerror or err}; nothing was left behind")


def _changed(target: Path) -> UsageError:
    return UsageError(
        f"{str(target)!r} changed while gengap was writing it (something was created, removed or replaced there): "
        "it was left as it is and the new output was discarded"
    )


# -- files ---------------------------------------------------------------------------------


def _file_snapshot(target: Path) -> Snapshot:
    st = _lstat(target)
    if st is None:
        return Snapshot("absent")
    return Snapshot("file", st.st_ino, (("", stat.S_IFMT(st.st_mode), st.st_size, st.st_mtime_ns, st.st_ino),))


def check_writable_file(path: str | os.PathLike[str], force: bool = False) -> Path:
    """The target path; UsageError unless it is absent (or, with force, a regular file)
    and its directory exists and is writable."""
    target = Path(path)
    st = _lstat(target)
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise UsageError(f"output path {str(target)!r} is a directory")
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"output path {str(target)!r} is {_what(st.st_mode)}: gengap only writes regular files")
        if not force:
            raise UsageError(f"output file {str(target)!r} exists (use --force to replace it)")
    _check_parent(target, "output directory")
    return target


def _publish_file(staging: Path, target: Path, before: Snapshot) -> None:
    if _file_snapshot(target) != before:
        raise _changed(target)
    if before.kind == "file":
        os.replace(staging, target)
        return
    try:
        os.link(staging, target)  # fails if anything appeared at target
    except FileExistsError:
        raise _changed(target) from None
    except OSError as err:
        if err.errno not in _LINK_UNSUPPORTED:
            raise
        if os.path.lexists(target):
            raise _changed(target) from None
        os.rename(staging, target)
        return
    os.unlink(staging)


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike[str], force: bool = False) -> Iterator[BinaryIO]:
    """A binary file that appears at path only if the block completes without error."""
    target = check_writable_file(path, force)
    with destination_lock(target):
        remove_stale(target.parent)
        before = _file_snapshot(check_writable_file(target, force))
        staging = staging_path(target)
        fd = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        try:
            with os.fdopen(fd, "wb") as handle:
                yield handle
            os.chmod(staging, 0o644)
            with signals_deferred():
                _publish_file(staging, target, before)
        except OSError as err:
            remove(staging)
            raise write_error(target, err) from None
        except BaseException:
            remove(staging)
            raise


# -- directories ---------------------------------------------------------------------------


def _tree(root: Path) -> tuple[Entry, ...]:
    """Every entry under root (not following links), sorted by relative path."""
    entries: list[Entry] = []
    pending = [("", root)]
    while pending:
        prefix, directory = pending.pop()
        with os.scandir(directory) as scan:
            for item in scan:
                st = item.stat(follow_symlinks=False)
                relative = prefix + item.name
                entries.append((relative, stat.S_IFMT(st.st_mode), st.st_size, st.st_mtime_ns, st.st_ino))
                if stat.S_ISDIR(st.st_mode):
                    pending.append((relative + "/", Path(item.path)))
    return tuple(sorted(entries))


def _directory_snapshot(target: Path) -> Snapshot:
    st = _lstat(target)
    if st is None:
        return Snapshot("absent")
    if not stat.S_ISDIR(st.st_mode):
        return Snapshot("file", st.st_ino)
    try:
        return Snapshot("directory", st.st_ino, _tree(target))
    except OSError as err:
        raise UsageError(f"cannot read {str(target)!r}: {err.strerror}") from None


def _inside(path: Path, directory: Path) -> bool:
    try:
        return path.resolve().is_relative_to(directory.resolve())
    except (OSError, RuntimeError):
        return False


def check_output_directory(
    path: str | os.PathLike[str], force: bool = False, inputs: Iterable[str | os.PathLike[str]] = (), marker: str | None = None
) -> Path:
    """The target directory; UsageError if it is anything but absent or an empty directory,
    unless force and it is a directory gengap could have written (see the module doc)
    that holds none of the inputs; or if its parent is missing or not writable."""
    target = Path(path)
    st = _lstat(target)
    if st is not None:
        if not stat.S_ISDIR(st.st_mode):
            what = "a file" if stat.S_ISREG(st.st_mode) else _what(st.st_mode)
            raise UsageError(f"output path {str(target)!r} exists and is {what}, not a directory")
        for name in inputs:
            if str(name) != "-" and _inside(Path(name), target):
                raise UsageError(f"input {str(name)!r} lies inside the output directory {str(target)!r}: choose another --out")
        snapshot = _directory_snapshot(target)
        if snapshot.entries:
            if not force:
                raise UsageError(f"output directory {str(target)!r} is not empty (use --force to replace it)")
            _check_replaceable(target, st, snapshot, marker)
    _check_parent(target, "output directory's parent")
    return target


def _check_replaceable(target: Path, st: os.stat_result, snapshot: Snapshot, marker: str | None) -> None:
    """UsageError unless target holds only regular files and directories (and the marker file)."""
    for relative, kind, *_ in snapshot.entries:
        if kind not in (stat.S_IFREG, stat.S_IFDIR):
            raise UsageError(
                f"refusing to replace {str(target)!r}: {relative!r} in it is {_what(kind)} "
                "(gengap replaces only directories of regular files it could have written)"
            )
    with contextlib.suppress(OSError):
        for root, dirs, _files in os.walk(target):
            for name in dirs:
                if os.lstat(os.path.join(root, name)).st_dev != st.st_dev:
                    raise UsageError(f"refusing to replace {str(target)!r}: it contains a mount point ({name})")
    if marker is not None and (marker, stat.S_IFREG) not in {(e[0], e[1]) for e in snapshot.entries}:
        raise UsageError(
            f"refusing to replace {str(target)!r}: it has no {marker}, so it is not something gengap wrote "
            "(remove it yourself or choose another --out)"
        )


def _publish_directory(staging: Path, target: Path, before: Snapshot) -> None:
    if _directory_snapshot(target) != before:
        raise _changed(target)
    if not before.entries:  # absent or empty: a rename that fails on a non-empty directory
        try:
            os.rename(staging, target)
        except OSError as err:
            if err.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
                raise _changed(target) from None
            raise
        return
    trash = staging_path(target, "trash")
    os.rename(target, trash)
    try:
        if os.lstat(trash).st_ino != before.inode or _tree(trash) != before.entries:
            raise _changed(target)
        os.rename(staging, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.rename(trash, target)
        raise
    remove(trash)


@contextlib.contextmanager
def atomic_directory(
    path: str | os.PathLike[str], force: bool = False, inputs: Iterable[str | os.PathLike[str]] = (), marker: str | None = None
) -> Iterator[Path]:
    """A staging directory that replaces path only if the block completes without error
    and path is still what was checked (see the module doc)."""
    inputs = list(inputs)
    target = check_output_directory(path, force, inputs, marker)
    with destination_lock(target):
        remove_stale(target.parent)
        before = _directory_snapshot(check_output_directory(target, force, inputs, marker))
        staging = staging_path(target)
        os.mkdir(staging, 0o700)
        try:
            yield staging
            staging.chmod(0o755)
            with signals_deferred():
                _publish_directory(staging, target, before)
        except OSError as err:
            remove(staging)
            raise write_error(target, err) from None
        except BaseException:
            remove(staging)
            raise
