"""Files created beside something gengap writes: exclusively, never through a link, never left behind.

Every layer writes its temporary and auxiliary files through these helpers (generators/ is
the base package, so splits/, baselines/ and gengap/ can all use them):

- :func:`create_new` opens a new regular file with ``O_CREAT | O_EXCL | O_NOFOLLOW``: a file,
  a symbolic link (even a dangling one) or anything else already at the name makes it fail,
  so gengap never writes into, truncates or creates the target of something it did not create.
- :func:`atomic_file` yields a binary handle on a temporary sibling of a path (``NAME.tmp``
  unless told otherwise) that replaces the path when the block completes. A failed write (a
  full disk, an exception, an interrupt) removes the temporary file. Whatever a killed writer
  or anyone else left at the temporary name (a file, a link) is unlinked first, never opened
  or followed; a directory there is an error. It assumes one writer per path at a time (every
  caller is the only writer of its run directory or holds gengap's lock on its destination).
- :func:`make_directory`, :func:`append_text` and :func:`read_regular` make a folder, append
  to a file and read one that gengap keeps in its own directories, refusing a link there (a
  link to a folder outside would take the writes outside).
- :func:`remove_at` removes a file or a directory tree by name inside an open directory,
  without following links, so that cleanup stays in that directory even when it was renamed.
- :func:`placement_problem` is the one rule for where an output may go: never inside one of
  the command's inputs, nor inside a release (which its checksums would then no longer cover).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)
DIRECTORY = getattr(os, "O_DIRECTORY", 0)


def create_new(path: str | os.PathLike[str], mode: int = 0o666, *, dir_fd: int | None = None) -> int:
    """A write-only descriptor on a new regular file at path (relative to dir_fd if given);
    FileExistsError if anything, a dangling symbolic link included, is already there."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | CLOEXEC, mode, dir_fd=dir_fd)


def open_directory(path: str | os.PathLike[str], *, dir_fd: int | None = None, follow: bool = True) -> int:
    """A read-only descriptor on a directory (not following a final symbolic link unless follow)."""
    return os.open(path, os.O_RDONLY | DIRECTORY | CLOEXEC | (0 if follow else NOFOLLOW), dir_fd=dir_fd)


def _create_replacing(path: Path) -> int:
    """create_new(path), after unlinking (never following) anything but a directory found there."""
    for _ in range(3):
        try:
            return create_new(path)
        except FileExistsError:
            pass
        try:
            found = os.lstat(path)
        except FileNotFoundError:
            continue
        if stat.S_ISDIR(found.st_mode):
            raise IsADirectoryError(errno.EISDIR, "a directory is in the way of the temporary file", str(path))
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    raise FileExistsError(errno.EEXIST, "the temporary file keeps reappearing", str(path))


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike[str], tmp_name: str | None = None) -> Iterator[BinaryIO]:
    """A binary file that replaces path when the block completes (see the module doc)."""
    target = Path(path)
    tmp = target.with_name(tmp_name or target.name + ".tmp")
    fd = _create_replacing(tmp)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
        os.replace(tmp, target)
    except BaseException as err:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(err, OSError) and err.filename is None and err.errno is not None:  # e.g. a full disk: name the file
            raise OSError(err.errno, err.strerror or os.strerror(err.errno), str(target)) from None
        raise


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, tmp_name: str | None = None) -> None:
    with atomic_file(path, tmp_name) as handle:
        handle.write(data)


def atomic_write_text(path: str | os.PathLike[str], text: str, tmp_name: str | None = None) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), tmp_name)


def make_directory(path: str | os.PathLike[str]) -> Path:
    """path as a directory of its own: created if absent (never its parents); NotADirectoryError
    naming it when a symbolic link (to a directory or not) or anything but a directory is there."""
    target = Path(path)
    with contextlib.suppress(FileExistsError):
        os.mkdir(target)
    if not stat.S_ISDIR(os.lstat(target).st_mode):
        raise NotADirectoryError(errno.ENOTDIR, "a symbolic link or a file is in the place of a directory gengap writes", str(target))
    return target


def append_text(path: str | os.PathLike[str], text: str) -> None:
    """Append text to the regular file at path (created if absent), never through a link: a link,
    named pipe or anything but a regular file there is an OSError naming it, left as it is."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | NOFOLLOW | CLOEXEC, 0o666)
    with os.fdopen(fd, "ab") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        handle.write(text.encode("utf-8"))


def read_regular(path: str | os.PathLike[str], max_bytes: int) -> bytes:
    """The bytes of the regular file at path (at most max_bytes + 1), never through a link."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | NOFOLLOW | CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        return handle.read(max_bytes + 1)


def remove_at(dir_fd: int, name: str) -> None:
    """Remove the file, link or directory tree called name in the directory dir_fd; a missing
    name is fine. Links are removed, never followed; the walk keeps one descriptor per level."""
    try:
        found = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(found.st_mode):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=dir_fd)
        return
    stack = [(dir_fd, name, open_directory(name, dir_fd=dir_fd, follow=False))]
    try:
        while stack:
            _parent, _name, fd = stack[-1]
            subdirectory = None
            with os.scandir(fd) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        subdirectory = entry.name
                        break
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(entry.name, dir_fd=fd)
            if subdirectory is not None:
                stack.append((fd, subdirectory, open_directory(subdirectory, dir_fd=fd, follow=False)))
                continue
            parent, done, fd = stack.pop()
            os.close(fd)
            with contextlib.suppress(FileNotFoundError):
                os.rmdir(done, dir_fd=parent)
    finally:
        for _parent, _name, fd in stack:
            os.close(fd)


RELEASE_MARKS = ("manifest.json", "SHA256SUMS")  # a directory holding both is a release


def _real(path: str | os.PathLike[str]) -> Path:
    return Path(os.path.realpath(os.path.abspath(path)))


def placement_problem(target: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]] = ()) -> str | None:
    """Why an output at target may not go there (None: it may): it is one of the inputs (a file
    read, a directory read: the release exported or trained on, a pool) or lies inside one, or
    it lies inside a release (a directory above it holds manifest.json and SHA256SUMS: the
    release would then fail `gengap verify`). Links are resolved; ``-`` (standard input) and
    empty names are no inputs."""
    real = _real(target)
    for name in inputs:
        if str(name) in ("", "-"):
            continue
        source = _real(name)
        if real == source or source in real.parents:
            return f"the output {str(target)!r} lies inside the input {str(name)!r}: choose an --out outside it"
    for folder in real.parents:
        if all(os.path.isfile(folder / mark) for mark in RELEASE_MARKS):
            return f"the output {str(target)!r} lies inside the release {str(folder)!r}: choose an --out outside it"
    return None
