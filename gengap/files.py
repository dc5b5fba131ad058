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
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"output directory {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"output directory {str(parent)!r} is not writable")
    return target


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
