"""Atomic file output: write to a temporary file beside the target, rename when complete."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import BinaryIO, Iterator

from gengap.errors import UsageError


def check_writable_file(path: str | os.PathLike[str]) -> Path:
    """The resolved target path; UsageError unless its directory exists and is writable."""
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"output path {str(target)!r} is a directory")
    _check_parent(target, "output directory")
    return target


def _check_parent(target: Path, label: str) -> None:
    """UsageError unless target's parent directory exists and is writable."""
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"{label} {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{label} {str(parent)!r} is not writable")


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """A binary file that appears at path only if the block completes without error."""
    target = check_writable_file(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or ".")
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def check_output_directory(path: str | os.PathLike[str], force: bool = False) -> Path:
    """The target directory; UsageError if it is a non-empty directory (unless force),
    a file, or its parent is missing or not writable."""
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise UsageError(f"output path {str(target)!r} exists and is not a directory")
    if target.is_dir() and any(target.iterdir()) and not force:
        raise UsageError(f"output directory {str(target)!r} is not empty (use --force to replace it)")
    _check_parent(target, "output directory's parent")
    return target


@contextlib.contextmanager
def atomic_directory(path: str | os.PathLike[str], force: bool = False) -> Iterator[Path]:
    """A temporary directory that replaces path only if the block completes without error."""
    import shutil

    target = check_output_directory(path, force)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        yield staging
        staging.chmod(0o755)
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
            os.rename(target, old / "x")
            os.rename(staging, target)
            shutil.rmtree(old)
        else:
            os.rename(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
