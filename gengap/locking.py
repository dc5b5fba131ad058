"""An exclusive, non-blocking lock per destination, so concurrent writers fail fast.

The lock is ``flock`` on ``.<destination name>.gengap-lock`` in the destination's
directory. The kernel releases it when the holder dies (even by SIGKILL), so a lock is
never stale; the file itself is removed by its holder on release, and a file left by a
killed holder is taken over (and removed) by the next writer of that destination.
Acquiring checks that the locked file is still the one at the path, so removing it on
release cannot let two writers hold it at once. Where the file system does not support
``flock`` the writer goes on without the lock (the publish step of gengap.files still
never replaces output it did not check).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from pathlib import Path
from typing import Iterator

from gengap.errors import UsageError


_NO_LOCKING = {errno.ENOLCK, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP}


def lock_path(target: Path) -> Path:
    return target.parent / f".{target.name}.gengap-lock"


def _try_lock(path: Path) -> int | None:
    """An fd holding the lock on path, or None when another process holds it."""
    for _ in range(20):  # the file can be removed by its holder between open and flock
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            os.close(fd)
            if err.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                return None
            raise
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)
    return None


@contextlib.contextmanager
def destination_lock(target: Path) -> Iterator[None]:
    """Hold the lock of target for the block; UsageError at once if another process holds it."""
    path = lock_path(target)
    try:
        fd = _try_lock(path)
    except OSError as err:
        if err.errno in _NO_LOCKING:  # e.g. some network file systems: publishing still never replaces unchecked output
            with contextlib.suppress(OSError):
                os.unlink(path)
            yield
            return
        raise UsageError(f"cannot lock {str(target)!r}: {err.strerror}") from None
    if fd is None:
        raise UsageError(f"another gengap process is writing {str(target)!r} (it holds {path.name}); try again when it is done")
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)
        os.close(fd)
