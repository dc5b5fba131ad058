"""The output discipline of every command that writes a file or a directory.

1. Check up front, before any work: an existing destination is refused unless ``force``;
   with ``force`` only a regular file (for a file output) or a directory whose content
   proves that gengap wrote it (gengap.ownership: its marker file in gengap's own format
   gives the sha256 of every file in it, and each file's bytes have that hash) is replaced; a symlink, named pipe,
   device or socket never is; nor is a destination that contains one of the command's
   inputs, nor the current directory or a directory containing it (``--out .``: the
   destination is replaced as a whole, which would leave the shell in a removed directory).
2. Hold the destination's directory open (a descriptor) and take the destination's lock
   there (gengap.locking): a concurrent writer fails at once. The lock, staging and trash
   are created, renamed and removed through that descriptor, exclusively and never through
   a link, so they never land anywhere else and are never created through a planted link.
3. Remove staging left beside it by killed writers (gengap.staging: the lock is the truth),
   then write the output under a fresh staging name in the same directory.
4. Publish only if the destination's directory is still where it was and the destination
   is still what was checked: a new destination appears by a rename that cannot replace
   anything (a hard link for files; for directories a rename that fails on a non-empty
   directory); a forced replacement is checked again after the old destination is moved
   aside, and put back if anything changed.

On any error or interrupt the staging and the lock are removed and the destination is left
as it was. When the destination's directory was removed or renamed meanwhile, gengap says
so, removes its staging and lock from wherever that directory now is, and never re-creates it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable, ContextManager, Iterable, Iterator

from gengap.generators.safe_files import create_new, open_directory, placement_problem, remove_at
from gengap.ground.errors import UsageError
from gengap.ground.limits import human_bytes
from gengap.ground.locking import destination_lock
from gengap.ground.ownership import Product
from gengap.ground.signals import signals_deferred
from gengap.ground.staging import remove_stale, staging_name

Entry = tuple[str, int, int, int, int]  # relative path, file type bits, size, mtime_ns, inode
_PROVEN: set[tuple[str, str, int, tuple[Entry, ...]]] = set()  # the directory last proven gengap's, with the snapshot it was proven in
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


def _directory_of(target: Path) -> Path:
    return target.parent if str(target.parent) else Path(".")


def _check_parent(target: Path, label: str) -> None:
    """UsageError unless target's parent directory exists and is writable."""
    parent = _directory_of(target)
    if not parent.is_dir():
        raise UsageError(f"{label} {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{label} {str(parent)!r} is not writable")


def _normalized(path: str | os.PathLike[str]) -> Path:
    """The destination path, with '.', '..' and '/' endings resolved to the directory they name
    (so that its lock and staging go in its parent, never inside it)."""
    if not str(path):
        raise UsageError("output path '' is empty: give --out a file or directory name")
    target = Path(path)
    if target.name in ("", ".", ".."):
        target = Path(os.path.realpath(target))
    if not target.name:
        raise UsageError(f"output path {str(path)!r} is the root directory: choose another --out")
    return target


def write_error(target: Path, err: OSError) -> UsageError:
    """The one-line error of a failed write of target (ENOSPC, EIO, a read-only file system, ...)."""
    return UsageError(f"cannot write {str(target)!r}: {err.strerror or err}; nothing was left behind")


def _changed(target: Path) -> UsageError:
    return UsageError(
        f"{str(target)!r} changed while gengap was writing it (something was created, removed or replaced there): "
        "it was left as it is and the new output was discarded"
    )


class _Place:
    """The directory of a destination, held open while gengap writes there."""

    def __init__(self, target: Path) -> None:
        self.target = target
        self.path = _directory_of(target)
        try:
            self.fd = open_directory(self.path)
        except OSError as err:
            raise UsageError(f"cannot open the output directory {str(self.path)!r}: {err.strerror}") from None
        info = os.fstat(self.fd)
        self.identity = (info.st_dev, info.st_ino)

    def moved(self) -> UsageError | None:
        """The error to report when the directory was removed or renamed since it was opened."""
        try:
            removed = os.fstat(self.fd).st_nlink == 0
            info = None if removed else os.stat(self.path)
        except OSError:
            info = None
            removed = False
        if info is not None and (info.st_dev, info.st_ino) == self.identity:
            return None
        where, target = str(self.path), str(self.target)
        if removed:
            return UsageError(
                f"the directory {where!r} was removed while gengap was writing {target!r}: "
                "the new output was discarded and the directory was not re-created"
            )
        return UsageError(
            f"the directory {where!r} was renamed or replaced while gengap was writing {target!r}: the new output "
            "was discarded, and gengap's staging and lock were removed from the directory where it now is"
        )

    def failure(self, err: BaseException, target: Path) -> BaseException:
        """What to raise for err, raised while writing target here."""
        if isinstance(err, KeyboardInterrupt):
            return err
        moved = self.moved()
        if moved is not None:
            return moved
        if isinstance(err, OSError):
            return write_error(target, err)
        return err

    def new_file(self, target: Path) -> tuple[str, int]:
        """(name, write descriptor) of a new staging file for target here."""
        for _ in range(10):
            name = staging_name(target.name)
            try:
                return name, create_new(name, 0o644, dir_fd=self.fd)
            except FileExistsError:
                continue
        raise UsageError(f"cannot create a staging file beside {str(target)!r}: every name tried was taken")

    def free_name(self, target: Path, role: str) -> str:
        """A staging name for target here at which nothing exists (a rename never lands on a link)."""
        for _ in range(10):
            name = staging_name(target.name, role)
            try:
                os.stat(name, dir_fd=self.fd, follow_symlinks=False)
            except FileNotFoundError:
                return name
        raise UsageError(f"cannot name a {role} directory beside {str(target)!r}: every name tried was taken")

    def new_directory(self, target: Path) -> str:
        """The name of a new staging directory for target here."""
        for _ in range(10):
            name = staging_name(target.name)
            try:
                os.mkdir(name, 0o700, dir_fd=self.fd)
                return name
            except FileExistsError:
                continue
        raise UsageError(f"cannot create a staging directory beside {str(target)!r}: every name tried was taken")


def _raise_failure(place: _Place, err: BaseException, target: Path) -> None:
    mapped = place.failure(err, target)
    if mapped is err:
        raise err
    raise mapped from None


# -- files ---------------------------------------------------------------------------------


def _file_snapshot(target: Path) -> Snapshot:
    st = _lstat(target)
    if st is None:
        return Snapshot("absent")
    return Snapshot("file", st.st_ino, (("", stat.S_IFMT(st.st_mode), st.st_size, st.st_mtime_ns, st.st_ino),))


def check_writable_file(path: str | os.PathLike[str], force: bool = False, inputs: Iterable[str | os.PathLike[str]] = ()) -> Path:
    """The target path; UsageError unless it is absent (or, with force, a regular file), may go
    where it is (check_placement: not inside an input or a release) and its directory exists
    and is writable."""
    target = _normalized(path)
    check_placement(target, inputs)
    st = _lstat(target)
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise UsageError(f"output path {str(path)!r} is a directory")
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"output path {str(target)!r} is {_what(st.st_mode)}: gengap only writes regular files")
        if not force:
            raise UsageError(f"output file {str(target)!r} exists (use --force to replace it)")
    _check_parent(target, "output directory")
    return target


def _publish_file(place: _Place, name: str, target: Path, before: Snapshot) -> None:
    if _file_snapshot(target) != before:
        raise _changed(target)
    fd = place.fd
    if before.kind == "file":
        os.replace(name, target.name, src_dir_fd=fd, dst_dir_fd=fd)
        return
    try:
        os.link(name, target.name, src_dir_fd=fd, dst_dir_fd=fd)  # fails if anything appeared at target
    except FileExistsError:
        raise _changed(target) from None
    except OSError as err:
        if err.errno not in _LINK_UNSUPPORTED:
            raise
        with contextlib.suppress(FileNotFoundError):
            os.stat(target.name, dir_fd=fd, follow_symlinks=False)
            raise _changed(target) from None
        os.rename(name, target.name, src_dir_fd=fd, dst_dir_fd=fd)
        return
    os.unlink(name, dir_fd=fd)


Opener = Callable[[str | os.PathLike[str]], ContextManager[BinaryIO]]


@contextlib.contextmanager
def atomic_outputs(
    paths: Iterable[str | os.PathLike[str]], force: bool = False, inputs: Iterable[str | os.PathLike[str]] = ()
) -> Iterator[Opener]:
    """Files that appear at paths only if the block completes without error.

    Every path is checked up front (absent, or with force a regular file; not inside one of
    the inputs or a release) and locked. The
    block gets ``open_output(path)``, a context manager giving a binary handle on a staging
    file for one of the paths; the files opened are published when the block ends (each
    only if its path is still what was checked), the others are left as they were.
    """
    inputs = list(inputs)
    targets = [check_writable_file(path, force, inputs) for path in paths]
    index = {target: i for i, target in enumerate(targets)}
    if len(index) != len(targets):
        raise ValueError("the same output path was given twice")
    with contextlib.ExitStack() as stack:
        places = []
        for target in targets:
            place = _Place(target)
            stack.callback(os.close, place.fd)
            places.append(place)
            stack.enter_context(destination_lock(target, place.fd))
            remove_stale(place.path, own=target.name, dir_fd=place.fd)
        befores = [_file_snapshot(check_writable_file(target, force, inputs)) for target in targets]
        opened: dict[int, str] = {}
        current = [0]

        @contextlib.contextmanager
        def open_output(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
            i = index[_normalized(path)]
            if i in opened:
                raise ValueError(f"{str(path)!r} was opened twice")
            current[0] = i
            opened[i], fd = places[i].new_file(targets[i])
            with os.fdopen(fd, "wb") as handle:
                yield handle

        try:
            yield open_output
            with signals_deferred():
                for i, name in opened.items():
                    current[0] = i
                    moved = places[i].moved()
                    if moved is not None:
                        raise moved
                    os.chmod(name, 0o644, dir_fd=places[i].fd)
                    _publish_file(places[i], name, targets[i], befores[i])
        except BaseException as err:
            for i, name in opened.items():
                remove_at(places[i].fd, name)  # published ones are gone from their staging name already
            _raise_failure(places[current[0]], err, targets[current[0]])


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike[str], force: bool = False, inputs: Iterable[str | os.PathLike[str]] = ()) -> Iterator[BinaryIO]:
    """A binary file that appears at path only if the block completes without error."""
    with atomic_outputs([path], force, inputs) as open_output, open_output(path) as handle:
        yield handle


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


def check_not_current(target: Path, shown: str) -> None:
    """UsageError if target is the current directory or contains it."""
    try:
        here = Path(os.getcwd())
    except OSError:
        return
    if _inside(here, target):
        raise UsageError(
            f"output directory {shown!r} is the current directory or contains it: gengap replaces its output "
            "directory as a whole, which would leave you in a removed directory; choose another --out "
            "(e.g. a new subdirectory)"
        )


def check_placement(target: Path, inputs: Iterable[str | os.PathLike[str]] = ()) -> None:
    """UsageError when target may not go where it is (gengap.generators.safe_files.placement_problem:
    inside an input of the command, or inside a release)."""
    problem = placement_problem(target, inputs)
    if problem is not None:
        raise UsageError(problem)


def check_output_directory(
    path: str | os.PathLike[str], force: bool = False, inputs: Iterable[str | os.PathLike[str]] = (), product: Product | None = None
) -> Path:
    """The target directory; UsageError if it is anything but absent or an empty directory,
    unless force and it is a product gengap wrote (see the module doc) that holds none of the
    inputs; if it is the current directory or contains it; or if its parent is missing or
    not writable."""
    target = _normalized(path)
    check_not_current(target, str(path))
    check_placement(target, inputs)
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
            _check_replaceable(target, st, snapshot, product)
    _check_parent(target, "output directory's parent")
    return target


def _check_replaceable(target: Path, st: os.stat_result, snapshot: Snapshot, product: Product | None) -> None:
    """UsageError unless target holds only regular files and directories and is a product gengap wrote."""
    for relative, kind, *_ in snapshot.entries:
        if kind not in (stat.S_IFREG, stat.S_IFDIR):
            raise UsageError(
                f"refusing to replace {str(target)!r}: {relative!r} in it is {_what(kind)} "
                "(gengap replaces only directories of regular files it wrote)"
            )
    with contextlib.suppress(OSError):
        for root, dirs, _files in os.walk(target):
            for name in dirs:
                if os.lstat(os.path.join(root, name)).st_dev != st.st_dev:
                    raise UsageError(f"refusing to replace {str(target)!r}: it contains a mount point ({name})")
    key = (product.kind if product is not None else "", str(target.resolve()), snapshot.inode, snapshot.entries)
    if key in _PROVEN:  # checked again under the lock: the same files (sizes, times, inodes) were proven a moment ago
        return
    reason = "gengap cannot tell that it wrote it" if product is None else product.not_ours(target, snapshot.entries)
    if reason is None:
        _PROVEN.clear()
        _PROVEN.add(key)
    if reason is not None:
        raise UsageError(f"refusing to replace {str(target)!r}: {reason} (remove it yourself or choose another --out)")


def _publish_directory(place: _Place, name: str, target: Path, before: Snapshot) -> None:
    if _directory_snapshot(target) != before:
        raise _changed(target)
    fd = place.fd
    if not before.entries:  # absent or empty: a rename that fails on a non-empty directory
        try:
            os.rename(name, target.name, src_dir_fd=fd, dst_dir_fd=fd)
        except OSError as err:
            if err.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
                raise _changed(target) from None
            raise
        return
    trash = place.free_name(target, "trash")
    os.rename(target.name, trash, src_dir_fd=fd, dst_dir_fd=fd)
    try:
        if os.stat(trash, dir_fd=fd, follow_symlinks=False).st_ino != before.inode or _tree(place.path / trash) != before.entries:
            raise _changed(target)
        os.rename(name, target.name, src_dir_fd=fd, dst_dir_fd=fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.rename(trash, target.name, src_dir_fd=fd, dst_dir_fd=fd)
        raise
    remove_at(fd, trash)


@contextlib.contextmanager
def atomic_directory(
    path: str | os.PathLike[str], force: bool = False, inputs: Iterable[str | os.PathLike[str]] = (), product: Product | None = None
) -> Iterator[Path]:
    """A staging directory that replaces path only if the block completes without error
    and path is still what was checked (see the module doc)."""
    inputs = list(inputs)
    target = check_output_directory(path, force, inputs, product)
    place = _Place(target)
    try:
        with destination_lock(target, place.fd):
            remove_stale(place.path, own=target.name, dir_fd=place.fd)
            before = _directory_snapshot(check_output_directory(target, force, inputs, product))
            name = place.new_directory(target)
            try:
                yield place.path / name
                os.chmod(name, 0o755, dir_fd=place.fd)
                with signals_deferred():
                    moved = place.moved()
                    if moved is not None:
                        raise moved
                    _publish_directory(place, name, target, before)
            except BaseException as err:
                remove_at(place.fd, name)
                _raise_failure(place, err, target)
    finally:
        os.close(place.fd)


def check_space(target: Path, need: int) -> None:
    """UsageError when target's directory is on a file system with fewer than need bytes free."""
    try:
        free = shutil.disk_usage(_directory_of(target)).free
    except OSError:
        return
    if need > free:
        raise UsageError(
            f"{str(target)!r} would take about {human_bytes(need)} and its file system has {human_bytes(free)} free; "
            "nothing was written"
        )
