"""The records a baseline trains and evaluates on: a release config, a split directory or an in-memory split.

Baselines read records only (dicts with id, task, input, target, difficulty), never generator
internals. Three sources are accepted:

- a release directory: ``DIR/data/<config>/{train,validation,test}.jsonl``;
- a split directory as written by ``gengap split --out DIR``: ``DIR/{train,validation,test}.jsonl``;
- an in-memory split: any object with ``train``, ``validation`` and ``test`` lists of records
  (``gengap.splits.SplitResult``), or a mapping with those keys.

Each source may come with the split's report, from which the config's divergence figures are
taken (``SplitData.divergence``): the release's ``manifest.json`` (the entry of ``configs``
with the config's name, key ``report``), a split directory's ``report.json``, a
``SplitResult``'s ``report`` attribute or a mapping's ``"report"`` key. A missing or
unreadable report leaves every figure None; it is never an error (the records suffice).
"""

from __future__ import annotations

import hashlib
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from gengap.baselines.errors import BaselineError
from gengap.generators.jsonl import read_records
from gengap.generators.plugins import load_recorded
from gengap.generators.reading import ReadError, read_json, release_part
from gengap.generators.reading import release_configs as listed_configs

PARTS = ("train", "validation", "test")
Record = dict[str, Any]
DIVERGENCE_KEYS = ("atom_divergence", "compound_divergence", "compounds")


def no_divergence() -> dict[str, Any]:
    """The divergence figures of a split without a report: all None."""
    return {key: None for key in DIVERGENCE_KEYS}


def divergence_of(report: Any) -> dict[str, Any]:
    """``{"atom_divergence": float|None, "compound_divergence": float|None, "compounds": str|None}`` of a split report.

    Anything that is not a finite number (or, for ``compounds``, a string) reads as None, as
    does a report that is not a mapping.
    """
    figures = no_divergence()
    if not isinstance(report, Mapping):
        return figures
    for key in ("atom_divergence", "compound_divergence"):
        value = report.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            figures[key] = float(value)
    if isinstance(report.get("compounds"), str):
        figures["compounds"] = report["compounds"]
    return figures


@dataclass(frozen=True)
class SplitData:
    """The three parts of one config, with the config's name, where it came from and its divergence figures."""

    name: str
    source: str
    train: list[Record]
    validation: list[Record]
    test: list[Record]
    divergence: dict[str, Any] = field(default_factory=no_divergence)  # see divergence_of; not in the fingerprint

    def parts(self) -> dict[str, list[Record]]:
        return {"train": self.train, "validation": self.validation, "test": self.test}

    def fingerprint(self) -> str:
        """sha256 over every part's inputs and targets, in order: a resumed run must see the same data."""
        digest = hashlib.sha256()
        for part, records in self.parts().items():
            digest.update(f"\x00{part}\x00".encode())
            for record in records:
                digest.update(f"{record['input']}\x01{record['target']}\x02".encode())
        return digest.hexdigest()


def subset(records: Sequence[Record], limit: int | None) -> list[Record]:
    """A fixed spread of at most limit records (the same for every seed, resume and model evaluated)."""
    if limit is None or len(records) <= limit:
        return list(records)
    import numpy as np

    from gengap.generators.seeding import evaluation_rng

    chosen = np.sort(evaluation_rng().choice(len(records), size=limit, replace=False))
    return [records[i] for i in chosen]


def read_jsonl(path: Path) -> list[Record]:
    """Records of a JSONL file; BaselineError naming the first bad line."""
    return read_records(path, BaselineError, check_record)


def check_record(record: Any, where: str) -> None:
    if not isinstance(record, dict):
        raise BaselineError(f"{where}: a record must be a JSON object")
    for key in ("input", "target"):
        value = record.get(key)
        if not isinstance(value, str) or not value.split():
            raise BaselineError(f"{where}: {key} must be a non-empty string of tokens")


def release_configs(root: Path) -> list[str]:
    """Config names of a release directory that a baseline may read: those its manifest.json
    lists (without a manifest, the subdirectories of data/ holding a train.jsonl), never
    through a symlink (gengap.generators.reading.release_configs), with the plugins it records
    imported; BaselineError when manifest.json is there but cannot be read, or a plugin it
    records cannot be imported."""
    path = root / "manifest.json"
    try:
        manifest = read_json(path) if os.path.lexists(path) else None
        configs = listed_configs(root, manifest)
    except ReadError as err:
        raise BaselineError(f"cannot read {err}") from None
    missing = load_recorded(manifest.get("plugins")) if isinstance(manifest, Mapping) else []
    if missing:
        raise BaselineError(f"{root}: {missing[0]}")
    return configs


def _read_json(path: Path) -> Any:
    """The JSON value of a file, or None when it is missing or unreadable."""
    try:
        return read_json(path)
    except ReadError:
        return None


def release_report(root: Path, config: str) -> Any:
    """The split report of a release config from its manifest.json (None when there is none)."""
    manifest = _read_json(root / "manifest.json")
    configs = manifest.get("configs") if isinstance(manifest, Mapping) else None
    if not isinstance(configs, list):
        return None
    for entry in configs:
        if isinstance(entry, Mapping) and entry.get("name") == config:
            return entry.get("report")
    return None


def load_directory(root: Path, config: str | None) -> SplitData:
    """The parts of a release config, or of a split directory."""
    if not root.is_dir():
        raise BaselineError(f"{root} is not a directory")
    configs = release_configs(root)
    if configs:
        if config is None:
            if len(configs) > 1:
                raise BaselineError(f"{root} has {len(configs)} configs; choose one with --config: {', '.join(configs)}")
            config = configs[0]
        if config not in configs:
            raise BaselineError(f"{root} has no config {config!r}; configs: {', '.join(configs)}")
        folder = root / "data" / config
        report = release_report(root, config)
    elif (root / "train.jsonl").is_file():
        folder = root
        config = config or root.resolve().name
        report = _read_json(root / "report.json")
    else:
        raise BaselineError(f"{root} is neither a release (data/<config>/train.jsonl) nor a split directory (train.jsonl)")
    try:
        paths = {part: release_part(root, config, part) if folder != root else None for part in PARTS}
    except ReadError as err:
        raise BaselineError(str(err)) from None
    parts = {part: read_jsonl(paths[part] or folder / f"{part}.jsonl") for part in PARTS}
    return make_split(config, str(folder), parts, report)


def make_split(name: str, source: str, parts: Mapping[str, Sequence[Record]], report: Any = None) -> SplitData:
    """SplitData of checked parts; the divergence figures come from report (see divergence_of)."""
    for part in PARTS:
        if not parts.get(part):
            raise BaselineError(f"{name}: the {part} part is empty (baselines need train, validation and test)")
        for index, record in enumerate(parts[part]):
            check_record(record, f"{name}: {part} record {index}")
    return SplitData(name, source, list(parts["train"]), list(parts["validation"]), list(parts["test"]), divergence_of(report))


def load_split(source: Any, config: str | None = None) -> SplitData:
    """SplitData from a directory path, a SplitResult-like object or a mapping of parts.

    For in-memory splits the name is ``config`` if given, else the task names of the records;
    the report is the mapping's ``"report"`` or the object's ``report`` attribute, if any.
    """
    if isinstance(source, SplitData):
        return source
    if isinstance(source, (str, Path)):
        return load_directory(Path(source), config)
    if isinstance(source, Mapping):
        parts = {part: source.get(part) or [] for part in PARTS}
        report = source.get("report")
    elif all(hasattr(source, part) for part in PARTS):
        parts = {part: getattr(source, part) for part in PARTS}
        report = getattr(source, "report", None)
    else:
        raise BaselineError(f"cannot read records from {type(source).__name__}: give a directory or a split")
    if config is None:
        tasks = sorted({str(r.get("task", "records")) for part in PARTS for r in parts[part]})
        config = "+".join(tasks) if tasks else "records"
    return make_split(config, "memory", parts, report)
