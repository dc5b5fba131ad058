"""What gengap wrote: the one proof every ``--force`` (and a sweep's resume) uses to decide that a
directory may be replaced.

Ownership is proven by what is on disk. A directory gengap writes (a release, a split
directory, an export) holds a describing file, its *marker* (manifest.json, report.json,
gengap-export.json), that gives the sha256 of every file gengap wrote there (a release's
card files, plots and manifest through its SHA256SUMS, whose own bytes must be exactly the
lines gengap writes); a split's report.json and an export's marker are sealed by the sha256
of their own text (``marker_sha256``), so an edit of the marker itself shows too. The
directory is gengap's only when

- the marker is a regular file whose content is gengap's own format for it (a release
  manifest whose fingerprint is the one of the data files it lists, at the layout's paths; a
  split report of a known strategy; an export manifest with its format tag), and
- every file present is a file that marker lists and its bytes have the hash listed for it
  (the marker itself: listed, as a release's manifest is in SHA256SUMS, or sealed), and every
  directory present is a folder of a listed file.

Files of the list that are missing do not matter (a partly deleted output may be replaced);
anything else (thesis.tex beside a manifest.json, a user's own file at a listed path, a
hand-written marker listing files whose bytes differ, a marker of an older gengap that lists
no hashes) makes the directory not gengap's: --force refuses it and nothing is touched.

Why the bytes and not a secret: a per-directory secret (a random token gengap writes and
keeps a copy of) would prove who wrote a directory, but it is state outside the directory
(lost with a home directory, absent on another machine, in a container, for a copy of a
release) and it would let gengap delete a directory whose files a user edited since. What
must hold before deleting is that nothing of the user's is lost, and the bytes say exactly
that: every file replaced is byte for byte one gengap wrote (or could write), so replacing it
loses nothing the marker does not reproduce. A forger can make a directory pass only by
making it exactly such a directory.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Iterable, Mapping

from gengap.generators.digests import file_sha256
from gengap.generators.jsonl import is_sealed
from gengap.generators.reading import ReadError, json_value
from gengap.harnesses.formats import EXPORT_MARKER

MAX_MARKER_BYTES = 64 << 20  # a marker (or a release's SHA256SUMS) larger than this is not one gengap wrote
SHA256 = re.compile(r"[0-9a-f]{64}")

Reader = Callable[[str], "bytes | None"]  # a small file of the directory by relative path (None: absent or unreadable)


class Unproven(ValueError):
    """A marker in gengap's format that does not prove its directory (the message says why)."""


@dataclass(frozen=True)
class Product:
    """A kind of directory gengap writes: what it is called, its marker file, and the sha256 of
    every file it holds as told by the marker's parsed JSON (``hashes(document, read)``; read
    gives another small file of the directory, e.g. SHA256SUMS). hashes returns None when the
    document is not gengap's, or raises Unproven with the reason."""

    kind: str
    marker: str
    hashes: Callable[[Any, Reader], Mapping[str, str] | None]
    sealed_indent: int | None = None  # a marker sealed by its own sha256 (gengap.generators.jsonl.sealed_json_text), written with this indent

    def not_ours(self, root: Path, entries: Iterable[tuple[Any, ...]]) -> str | None:
        """Why the directory root, holding entries (relative path, file type bits, ...), is not
        this kind of gengap output; None when its content proves gengap wrote it (module doc)."""
        kinds = {str(entry[0]): entry[1] for entry in entries}
        if kinds.get(self.marker) != stat.S_IFREG:
            return f"it has no {self.marker}, so it is not a {self.kind} gengap wrote"
        reader = _reader(root)
        marker = reader(self.marker)
        document = _read_json(marker)
        try:
            listed = _checked(self.hashes, document, reader)
        except Unproven as err:
            return f"its {self.marker} {err}, so gengap cannot tell that it wrote it"
        if listed is None:
            return f"its {self.marker} is not the {self.marker} of a gengap {self.kind}, so gengap did not write it"
        folders = {str(parent) for name in listed for parent in PurePosixPath(name).parents} - {"."}
        for relative, kind in sorted(kinds.items(), key=lambda item: (item[0] == self.marker, item[0])):  # the marker last
            if kind == stat.S_IFDIR and relative in folders:
                continue
            if kind == stat.S_IFREG and relative == self.marker and relative not in listed:
                if self.sealed_indent is not None and marker is not None and is_sealed(marker, document, self.sealed_indent):
                    continue  # the marker itself: in gengap's format, and its seal says it was not edited
                return f"its {self.marker} is vouched for by no hash (edited, or its checksums are gone), so gengap cannot tell that it wrote it"
            if kind == stat.S_IFREG and relative in listed:
                if _file_sha256(root / relative) != listed[relative]:
                    return f"the file {relative!r} in it is not the one its {self.marker} lists (its bytes differ), so gengap did not write it"
                continue
            what = "directory" if kind == stat.S_IFDIR else "file"
            return f"the {what} {relative!r} in it is not one its {self.marker} accounts for, so gengap did not write it"
        return None


def _reader(root: Path) -> Reader:
    def read(name: str) -> bytes | None:
        path = root / name
        try:
            if not stat.S_ISREG(os.lstat(path).st_mode):
                return None
            with open(path, "rb") as handle:
                data = handle.read(MAX_MARKER_BYTES + 1)
        except OSError:
            return None
        return data if len(data) <= MAX_MARKER_BYTES else None

    return read


def _read_json(data: bytes | None) -> Any:
    """The JSON in data, or None when it is not a small, plain JSON document."""
    if data is None:
        return None
    try:
        return json_value(data)
    except ReadError:
        return None


def _checked(hashes: Callable[[Any, Reader], Mapping[str, str] | None], document: Any, read: Reader) -> dict[str, str] | None:
    """hashes(document, read) as {relative POSIX path: sha256}; None for a document that is not gengap's."""
    if document is None:
        return None
    try:
        listed = hashes(document, read)
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        if isinstance(err, Unproven):
            raise
        return None
    if listed is None:
        return None
    found = {}
    for name, digest in dict(listed).items():
        if not isinstance(name, str) or not name or name.startswith("/") or ".." in name.split("/") or os.sep != "/" and os.sep in name:
            return None
        if not isinstance(digest, str) or not SHA256.fullmatch(digest):
            return None
        found[name] = digest
    return found


def _file_sha256(path: Path) -> str | None:
    try:
        return file_sha256(path)
    except OSError:
        return None


def split_hashes(report: Any, read: Reader) -> dict[str, str] | None:
    """The files of a split directory whose report.json is report, with their hashes (its
    ``files``); None: not a split report; Unproven: one that lists no hashes."""
    from gengap.splits import STRATEGIES
    from gengap.splits.base import PARTS

    if not isinstance(report, dict) or report.get("strategy") not in STRATEGIES:
        return None
    sizes = report.get("sizes")
    if not isinstance(sizes, dict) or any(not isinstance(sizes.get(part), int) for part in PARTS):
        return None
    if not isinstance(report.get("overlap"), int) or not isinstance(report.get("parts"), dict):
        return None
    files = report.get("files")
    if not isinstance(files, dict):
        raise Unproven("lists no hashes of the split's files (written by an older gengap?)")
    return {f"{part}.jsonl": files[f"{part}.jsonl"]["sha256"] for part in PARTS}


def export_hashes(manifest: Any, read: Reader) -> dict[str, str] | None:
    """gengap.harnesses.export.export_hashes, imported when a marker is read; Unproven for an
    export manifest that lists no hashes."""
    from gengap.harnesses.export import EXPORT_FORMAT, export_hashes as hashes

    if isinstance(manifest, dict) and manifest.get("format") == EXPORT_FORMAT and "sha256" not in manifest:
        raise Unproven("lists no hashes of the export's files (written by an older gengap?)")
    return hashes(manifest)


SPLIT = Product("split directory", "report.json", split_hashes, sealed_indent=2)
EXPORT = Product("export", EXPORT_MARKER, export_hashes, sealed_indent=1)
