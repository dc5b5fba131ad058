"""An exclusive, non-blocking lock per destination, so concurrent writers fail fast.

The lock is ``flock`` on ``.<destination name>.gengap-lock`` in the destination's
directory. The kernel releases it when the holder dies (even by SIGKILL), so a lock is
never stale, and whether it is held is the truth about a live writer (gengap.staging
removes staging only when its destination's lock is free). The file is created
exclusively and never through a link (``O_EXCL | O_NOFOLLOW``, relative to a descriptor of
the directory); a file left by a killed holder is taken over only if it is a small regular
file with one link holding a process id, as gengap leaves them: a symbolic link (dangling or
not), a hard link, a named pipe or a file with other content at the lock's name is refused
and left as it is. The holder removes the file on release (through the directory's
descriptor, so even from a directory renamed meanwhile); acquiring checks that the locked
file is still the one at the name, so removing it cannot let two writers hold it at once.
Where the file system does not support ``flock`` the writer goes on without the lock (the
publish step of gengap.files still never replaces output it did not check).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import stat
import time
from pathlib import Path
from typing import Iterator

from gengap.generators.safe_files import CLOEXEC, NOFOLLOW, create_new, open_directory
from gengap.ground.errors import UsageError

_NO_LOCKING = {errno.ENOLCK, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP}
_BUSY = {errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES}
_CONTENT = re.compile(rb"[0-9]{0,20}\n?")
CONTENTION_WAIT = 0.25  # seconds a writer retries a busy lock: a stale-staging probe holds one for microseconds


class NoLocking(OSError):
    """The file system does not support flock."""


def lock_name(target_name: str) -> str:
    return f".{target_name}.gengap-lock"


def lock_path(target: Path) -> Path:
    return target.parent / lock_name(target.name)


def _what(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a directory"
    if not stat.S_ISREG(mode):
        return "not a regular file"
    return "a file gengap did not make"


def _foreign(name: str, what: str) -> UsageError:
    return UsageError(
        f"refusing to use the lock file {name!r}: it is {what} (gengap creates its lock files itself); "
        "nothing was written: remove it if no gengap is running"
    )


def _open_existing(dir_fd: int, name: str) -> int | None:
    """A descriptor on the lock file left at name, if it is one gengap made; None if it is gone."""
    try:
        fd = os.open(name, os.O_RDWR | os.O_NONBLOCK | NOFOLLOW | CLOEXEC, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as err:  # ELOOP: a symbolic link; EISDIR, ENXIO, ...
        try:
            found = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        if stat.S_ISREG(found.st_mode):
            raise UsageError(f"cannot open the lock file {name!r}: {err.strerror}") from None
        raise _foreign(name, _what(found.st_mode)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _foreign(name, _what(info.st_mode))
        if info.st_nlink != 1:
            raise _foreign(name, "a hard link to another file")
        if info.st_size > 21 or not _CONTENT.fullmatch(os.pread(fd, 32, 0)):
            raise _foreign(name, "a file gengap did not make")
    except BaseException:
        os.close(fd)
        raise
    return fd


def _try_lock(dir_fd: int, name: str) -> int | None:
    """An fd holding the lock file name in dir_fd, or None when another process holds it.

    Raises NoLocking where flock is not supported (after removing a file it created)."""
    for _ in range(20):  # the file can be removed by its holder between open and flock
        created = True
        try:
            fd = create_new(name, 0o644, dir_fd=dir_fd)
        except FileExistsError:
            created = False
            fd = _open_existing(dir_fd, name)
            if fd is None:
                continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            os.close(fd)
            if err.errno in _BUSY:
                return None
            if created:
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=dir_fd)
            if err.errno in _NO_LOCKING:
                raise NoLocking(err.errno, err.strerror) from None
            raise
        try:
            same = os.fstat(fd).st_ino == os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_ino
        except FileNotFoundError:
            same = False
        if same:
            if created:
                os.write(fd, f"{os.getpid()}\n".encode())
            return fd
        os.close(fd)
    return None


def _release(dir_fd: int, name: str, fd: int) -> None:
    """Remove the lock file (if it is still the one held) and drop the lock."""
    with contextlib.suppress(OSError):
        if os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_ino == os.fstat(fd).st_ino:
            os.unlink(name, dir_fd=dir_fd)
    os.close(fd)


@contextlib.contextmanager
def held_if_free(dir_fd: int, target_name: str) -> Iterator[bool | None]:
    """Hold the lock of target_name for the block if no process holds it (yields True), else
    yield False; None where the lock cannot tell (no flock support, or a foreign lock file)."""
    name = lock_name(target_name)
    try:
        fd = _try_lock(dir_fd, name)
    except (OSError, UsageError):
        yield None
        return
    if fd is None:
        yield False
        return
    try:
        yield True
    finally:
        _release(dir_fd, name, fd)


@contextlib.contextmanager
def destination_lock(target: Path, dir_fd: int | None = None) -> Iterator[None]:
    """Hold the lock of target for the block; UsageError at once if another process holds it.

    dir_fd: a descriptor of target's directory (default: target.parent, opened here)."""
    own_fd = dir_fd is None
    if own_fd:
        try:
            dir_fd = open_directory(target.parent if str(target.parent) else Path("."))
        except OSError as err:
            raise UsageError(f"cannot lock {str(target)!r}: {err.strerror}") from None
    assert dir_fd is not None
    name = lock_name(target.name)
    try:
        fd = _acquire(target, dir_fd, name)
        try:
            yield
        finally:
            if fd is not None:
                _release(dir_fd, name, fd)
    finally:
        if own_fd:
            os.close(dir_fd)


def _acquire(target: Path, dir_fd: int, name: str) -> int | None:
    """The held lock's fd; None where flock is not supported (e.g. some network file systems:
    publishing still never replaces unchecked output); UsageError if another process holds it."""
    deadline = time.monotonic() + CONTENTION_WAIT
    while True:
        try:
            fd = _try_lock(dir_fd, name)
        except NoLocking:
            return None
        except OSError as err:
            raise UsageError(f"cannot lock {str(target)!r}: {err.strerror}") from None
        if fd is not None:
            return fd
        if time.monotonic() > deadline:
            raise UsageError(f"another gengap process is writing {str(target)!r} (it holds {name}); try again when it is done")
        time.sleep(0.01)
