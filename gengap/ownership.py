"""What gengap wrote: the one rule every ``--force`` uses to decide that a directory may be replaced.

A directory gengap writes (a release, a split directory, an export) holds a describing file,
its *marker* (manifest.json, report.json, gengap-export.json). A directory is gengap's only
when its content proves it:

- the marker is a regular file whose content is gengap's own format for it (a release
  manifest whose fingerprint is the one of the data files it lists; a split report of a
  known strategy with its sizes; an export manifest with its format tag), and
- the file list that marker gives (listed, or derived from it: a release's data files,
  card files and plots; a split's three parts; an export's files per config) accounts for
  every file present, and every directory present is one of those files' folders.

A directory holding anything else (thesis.tex beside a manifest.json, any other
manifest.json) is not gengap's: --force refuses it and nothing is touched. Files of the list
that are missing do not matter (a partly deleted output may be replaced).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Iterable

from gengap.generators.reading import ReadError, json_value
from gengap.harnesses.formats import EXPORT_MARKER

MAX_MARKER_BYTES = 64 << 20  # a marker larger than this is not one gengap wrote


@dataclass(frozen=True)
class Product:
    """A kind of directory gengap writes: what it is called, its marker file, and the files it
    holds as told by the marker's parsed JSON (None when the content is not gengap's)."""

    kind: str
    marker: str
    files: Callable[[Any], Iterable[str] | None]

    def not_ours(self, root: Path, entries: Iterable[tuple[str, int]]) -> str | None:
        """Why the directory root, holding entries (relative path, file type bits), is not this
        kind of gengap output; None when its content proves gengap wrote it."""
        entries = list(entries)
        if (self.marker, stat.S_IFREG) not in entries:
            return f"it has no {self.marker}, so it is not a {self.kind} gengap wrote"
        listed = _listed(self.files, _read_json(root / self.marker))
        if listed is None:
            return f"its {self.marker} is not the {self.marker} of a gengap {self.kind}, so gengap did not write it"
        listed.add(self.marker)
        folders = {str(parent) for name in listed for parent in PurePosixPath(name).parents} - {"."}
        for relative, kind in sorted(entries):
            if kind == stat.S_IFDIR and (relative in folders or relative in listed):
                continue
            if kind == stat.S_IFREG and relative in listed:
                continue
            what = "directory" if kind == stat.S_IFDIR else "file"
            return f"the {what} {relative!r} in it is not one its {self.marker} accounts for, so gengap did not write it"
        return None


def _read_json(path: Path) -> Any:
    """The JSON in path, or None when it cannot be read as a small, plain JSON document."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_MARKER_BYTES + 1)
        if len(data) > MAX_MARKER_BYTES:
            return None
        return json_value(data)
    except (OSError, ReadError):
        return None


def _listed(files: Callable[[Any], Iterable[str] | None], document: Any) -> set[str] | None:
    """files(document) as a set of relative POSIX paths; None for a document that is not gengap's."""
    if document is None:
        return None
    try:
        listed = files(document)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    if listed is None:
        return None
    names = set()
    for name in listed:
        if not isinstance(name, str) or not name or name.startswith("/") or ".." in name.split("/") or os.sep != "/" and os.sep in name:
            return None
        names.add(name)
    return names


def split_files(report: Any) -> list[str] | None:
    """The files of a split directory whose report.json is report (None: not a split report)."""
    from gengap.splits import STRATEGIES
    from gengap.splits.base import PARTS

    if not isinstance(report, dict) or report.get("strategy") not in STRATEGIES:
        return None
    sizes = report.get("sizes")
    if not isinstance(sizes, dict) or any(not isinstance(sizes.get(part), int) for part in PARTS):
        return None
    if not isinstance(report.get("overlap"), int) or not isinstance(report.get("parts"), dict):
        return None
    return [f"{part}.jsonl" for part in PARTS]


def export_files(manifest: Any) -> list[str] | None:
    """gengap.harnesses.export.export_files, imported when a marker is read."""
    from gengap.harnesses.export import export_files as files

    return files(manifest)


SPLIT = Product("split directory", "report.json", split_files)
EXPORT = Product("export", EXPORT_MARKER, export_files)
