"""sha256 of files gengap wrote, read in blocks: what a release's checksums, an export's and a
split's markers list, and what proves a directory gengap's before ``--force`` replaces it
(gengap.ownership)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Mapping


def file_sha256(path: Path) -> str:
    """The sha256 of the file at path (hex); OSError when it cannot be read."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def tree_sha256s(root: Path) -> dict[str, str]:
    """The sha256 of every regular file under root (not through links), by relative POSIX path, sorted."""
    paths = sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())
    return {path.relative_to(root).as_posix(): file_sha256(path) for path in paths}


def data_fingerprint(data_files: Mapping[str, Mapping[str, Any]]) -> str:
    """A release's fingerprint: sha256 over the sorted '<sha256>  <path>' lines of its data
    files (manifest.json's ``data_files``); KeyError or TypeError when they are malformed."""
    lines = "".join(f"{info['sha256']}  {path}\n" for path, info in sorted(data_files.items()))
    return hashlib.sha256(lines.encode()).hexdigest()
