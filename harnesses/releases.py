"""Reading a release for the harnesses: its configs, their records, task and parameters.

A release is ``DIR/manifest.json`` plus ``DIR/data/<config>/{train,validation,test}.jsonl``
(what ``gengap release`` writes). The harnesses read records only through this module; the
manifest is optional (without it a config's task comes from its records and the prompt
parameters from the task's defaults and the records' ``meta``). Nothing here imports
baselines or gengap.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from generators.jsonl import read_records
from generators.reading import ReadError, read_json
from harnesses.errors import HarnessError

PARTS = ("train", "validation", "test")
SIDES = {"train": "train", "validation": "id", "test": "ood"}  # part -> side: validation is in-distribution, test out-of-distribution
Record = dict[str, Any]


@dataclass(frozen=True)
class ReleaseConfig:
    """One config of a release: its name, task, generation parameters and records per part."""

    name: str
    task: str
    params: dict[str, Any]
    parts: dict[str, list[Record]]
    source: str = ""
    report: dict[str, Any] = field(default_factory=dict)

    @property
    def train(self) -> list[Record]:
        return self.parts["train"]


@dataclass(frozen=True)
class Release:
    """A release directory: its manifest (or {}) and its config names."""

    root: Path
    manifest: dict[str, Any]
    configs: list[str]

    @property
    def name(self) -> str:
        return str(self.manifest.get("name") or self.root.resolve().name)

    @property
    def fingerprint(self) -> str | None:
        value = self.manifest.get("fingerprint")
        return value if isinstance(value, str) else None

    def entry(self, config: str) -> Mapping[str, Any]:
        """The manifest's entry for a config ({} when there is none)."""
        for entry in self.manifest.get("configs") or []:
            if isinstance(entry, Mapping) and entry.get("name") == config:
                return entry
        return {}

    def params(self, config: str) -> dict[str, Any]:
        """The task parameters a config was generated with (manifest ``generation.params``; {} when unknown)."""
        generation = self.entry(config).get("generation")
        params = generation.get("params") if isinstance(generation, Mapping) else None
        return dict(params) if isinstance(params, Mapping) else {}

    def load(self, config: str) -> ReleaseConfig:
        """The records of one config (every part), with its task and parameters."""
        if config not in self.configs:
            raise HarnessError(f"{self.root} has no config {config!r}; configs: {', '.join(self.configs)}")
        folder = self.root / "data" / config
        parts = {part: read_jsonl(folder / f"{part}.jsonl") for part in PARTS}
        entry = self.entry(config)
        task = entry.get("task")
        if not isinstance(task, str):
            tasks = sorted({str(r.get("task")) for records in parts.values() for r in records})
            if len(tasks) != 1:
                raise HarnessError(f"{folder}: cannot tell the config's task (records name {', '.join(tasks) or 'none'})")
            task = tasks[0]
        report = entry.get("report")
        return ReleaseConfig(
            name=config,
            task=task,
            params=self.params(config),
            parts=parts,
            source=str(folder),
            report=dict(report) if isinstance(report, Mapping) else {},
        )


def open_release(root: str | Path) -> Release:
    """A release directory; HarnessError when it holds no config."""
    path = Path(root)
    if not path.is_dir():
        raise HarnessError(f"{path} is not a directory")
    data = path / "data"
    configs = sorted(p.name for p in data.iterdir() if (p / "train.jsonl").is_file()) if data.is_dir() else []
    if not configs:
        raise HarnessError(f"{path} is not a release: no data/<config>/train.jsonl")
    manifest: Any = {}
    manifest_path = path / "manifest.json"
    if manifest_path.is_file():
        try:
            manifest = read_json(manifest_path)
        except ReadError as err:
            raise HarnessError(f"cannot read {err}") from None
    return Release(path, manifest if isinstance(manifest, dict) else {}, configs)


def read_jsonl(path: Path) -> list[Record]:
    """Records of a JSONL file ([] when it is missing); HarnessError naming the first bad line."""
    if not path.exists():
        return []
    return read_records(path, HarnessError, _check_record)


def _check_record(record: Any, where: str) -> None:
    if not isinstance(record, dict) or not all(isinstance(record.get(k), str) and record[k].split() for k in ("input", "target")):
        raise HarnessError(f"{where}: a record needs non-empty input and target strings")
