"""A release read for drawing from it: its manifest, every data file checked against it, the
records of chosen configs and the inputs of all of them.

Reading a release this way proves that the data files are those its manifest lists (each
file's sha256; the manifest's fingerprint is the hash of that list), so a figure computed from
them can name the release by its fingerprint. It does not check the records themselves
(``gengap verify`` does). Files are read through release_part: never through a symlink.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from gengap.generators.batch import Record
from gengap.generators.exclusion import Exclusion
from gengap.generators.reading import ReadError, iter_jsonl, read_json, release_part
from gengap.releases.release import PARTS, fingerprint


class ReleaseReadError(ValueError):
    """A release cannot be read as one: no manifest, a data file that is not the manifest's."""


@dataclass
class ReleaseView:
    """The manifest of a release, the records of the configs asked for, and every input it holds."""

    root: Path
    manifest: dict[str, Any]
    inputs: Exclusion  # every input of every part of every config, bare (no cue or marker)
    records: dict[tuple[str, str], list[Record]] = field(default_factory=dict)  # (config, part) -> records

    @property
    def fingerprint(self) -> str:
        return str(self.manifest["fingerprint"])

    def config(self, name: str) -> dict[str, Any]:
        """The manifest entry of a config; ReleaseReadError naming the configs there are."""
        for config in self.manifest["configs"]:
            if config.get("name") == name:
                return config
        names = ", ".join(str(c.get("name")) for c in self.manifest["configs"])
        raise ReleaseReadError(f"{self.root} has no config {name!r}; it has: {names}")

    def entry(self, name: str) -> dict[str, Any]:
        """The resolved suite entry a config was built from (the manifest's suite)."""
        self.config(name)
        for entry in self.manifest["suite"]["entries"]:
            if entry.get("name") == name:
                return entry
        raise ReleaseReadError(f"{self.root}/manifest.json: its suite has no entry for config {name!r}")

    def part(self, name: str, part: str) -> list[Record]:
        """The records of one part of a config read with the view (read_release's keep)."""
        if (name, part) not in self.records:
            raise ReleaseReadError(f"{self.root}: config {name!r} was not read with its records (read_release keep=...)")
        return self.records[(name, part)]


def read_manifest(root: str | Path) -> dict[str, Any]:
    """The manifest of the release at root, with configs, data files, suite and the fingerprint of
    those data files; ReleaseReadError (one line) otherwise."""
    root = Path(root)
    try:
        manifest = read_json(root / "manifest.json", f"{root}/manifest.json")
    except ReadError as err:
        raise ReleaseReadError(f"{root} is not a release: {err}") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("configs"), list) or not isinstance(manifest.get("data_files"), dict):
        raise ReleaseReadError(f"{root}/manifest.json is not a gengap release manifest")
    try:
        intact = isinstance(manifest.get("suite"), dict) and manifest.get("fingerprint") == fingerprint(manifest["data_files"])
    except (KeyError, TypeError):
        intact = False
    if not intact:
        raise ReleaseReadError(f"{root}/manifest.json: its fingerprint is not that of its data files (run gengap verify {root})")
    return manifest


def read_release(root: str | Path, keep: tuple[str, ...] = ()) -> ReleaseView:
    """The release at root with the records of the configs in keep (all three parts); every data
    file of every config is read, checked against the manifest (sha256) and its inputs hashed.
    ReleaseReadError (one line) when the release is not intact."""
    root = Path(root)
    manifest = read_manifest(root)
    data_files = manifest["data_files"]
    inputs: list[str] = []
    records: dict[tuple[str, str], list[Record]] = {}
    listed: set[str] = set()
    for config in manifest["configs"]:
        name = str(config.get("name")) if isinstance(config, dict) else ""
        for part in PARTS:
            path = f"data/{name}/{part}.jsonl"
            listed.add(path)
            rows = read_part(root, manifest, name, part)
            inputs += [str(r["input"]) for r in rows]
            if name in keep:
                records[(name, part)] = rows
    if listed != set(data_files):
        raise ReleaseReadError(f"{root}/manifest.json: its configs and its data files differ (run gengap verify {root})")
    return ReleaseView(root, manifest, Exclusion.from_inputs(inputs, str(root)), records)


def read_part(root: Path, manifest: dict[str, Any], config: str, part: str) -> list[Record]:
    """The records of one data file of a config, after checking its bytes against the manifest's sha256."""
    where = f"{root}/data/{config}/{part}.jsonl"
    info = manifest["data_files"].get(f"data/{config}/{part}.jsonl")
    try:
        path = release_part(root, config, part)
    except ReadError as err:
        raise ReleaseReadError(str(err)) from None
    if path is None or not isinstance(info, dict):
        raise ReleaseReadError(f"{where} is missing, or manifest.json does not list it (run gengap verify {root})")
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != info.get("sha256"):
        raise ReleaseReadError(f"{where} is not the file manifest.json lists (its sha256 differs; run gengap verify {root})")
    return input_records(where, io.BytesIO(data))


def input_records(where: str, handle: IO[bytes] | None = None, error: type[ValueError] = ReleaseReadError) -> list[Record]:
    """The lines of a JSONL file (or of handle, read as that file) as objects with an input string;
    `error` naming the file and line otherwise."""
    rows = []
    try:
        for number, record in iter_jsonl(where, handle):
            if not isinstance(record, dict) or not isinstance(record.get("input"), str):
                raise error(f"{where}: line {number}: not a record with an input string")
            rows.append(record)
    except ReadError as err:
        raise error(str(err)) from None
    return rows
