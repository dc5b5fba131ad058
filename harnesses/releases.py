"""Reading a release for the harnesses: its configs, their records, task and parameters.

A release is ``DIR/manifest.json`` plus ``DIR/data/<config>/{train,validation,test}.jsonl``
(what ``gengap release`` writes). The harnesses read records only through this module; the
manifest is optional (without it a config's task comes from its records and the prompt
parameters from the task's defaults and the records' ``meta``). With a manifest only the
configs it lists are read; data directories and files are never read through a symlink
(gengap.generators.reading.release_configs); every record must name the config's task. A
manifest that states a fingerprint vouches for the data read: its fingerprint must be that of
its ``data_files`` and each file read must have the sha256 they list, so nothing is exported
under a fingerprint its data does not have. Nothing here imports baselines or gengap.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from gengap.generators.digests import data_fingerprint, file_sha256
from gengap.generators.jsonl import read_records
from gengap.generators.plugins import load_recorded
from gengap.generators.reading import ReadError, read_json, release_configs, release_part
from gengap.harnesses.errors import HarnessError

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
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)  # task -> parameters; several for a multi-task config

    def task_params(self) -> dict[str, dict[str, Any]]:
        """Task -> generation parameters of every task whose records the config holds."""
        return dict(self.tasks) if self.tasks else {self.task: dict(self.params)}

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

    def _check_listed(self, config: str, part: str, path: Path | None) -> None:
        """HarnessError unless the part's file has the sha256 the manifest's data_files list for it."""
        name = f"data/{config}/{part}.jsonl"
        info = (self.manifest.get("data_files") or {}).get(name)
        if path is not None and (not isinstance(info, Mapping) or file_sha256(path) != info.get("sha256")):
            raise HarnessError(f"{self.root / name} is not the file manifest.json lists (its sha256 differs; run gengap verify {self.root})")

    def load(self, config: str) -> ReleaseConfig:
        """The records of one config (every part), with its task and parameters; every record
        must name that task (the manifest's, or the one all records name without a manifest)."""
        if config not in self.configs:
            raise HarnessError(f"{self.root} has no config {config!r}; configs: {', '.join(self.configs)}")
        folder = self.root / "data" / config
        try:
            paths = {part: release_part(self.root, config, part) for part in PARTS}
        except ReadError as err:
            raise HarnessError(str(err)) from None
        gone = [part for part, path in paths.items() if path is None]
        if gone and self.manifest:  # the manifest lists every part's file: a missing one is no empty part
            raise HarnessError(f"{folder / gone[0]}.jsonl is missing (a part of config {config} that manifest.json lists; gengap verify names what is missing)")
        if self.fingerprint is not None:
            for part, path in paths.items():
                self._check_listed(config, part, path)
        parts = {part: read_jsonl(path) for part, path in paths.items()}
        entry = self.entry(config)
        task = entry.get("task")
        multi = multitask_params(entry)
        if not isinstance(task, str):
            tasks = sorted({str(r.get("task")) for records in parts.values() for r in records})
            if len(tasks) != 1:
                raise HarnessError(f"{folder}: cannot tell the config's task (records name {', '.join(tasks) or 'none'})")
            task = tasks[0]
        allowed = set(multi) if multi else {task}
        for part, records in parts.items():
            stray = next((i for i, r in enumerate(records) if r["task"] not in allowed), None)
            if stray is not None:
                raise HarnessError(f"{folder / part}.jsonl: record {stray + 1} is of task {records[stray]['task']!r}, not the config's task {task!r}")
        report = entry.get("report")
        return ReleaseConfig(
            name=config,
            task=task,
            params=self.params(config),
            parts=parts,
            source=str(folder),
            report=dict(report) if isinstance(report, Mapping) else {},
            tasks=multi,
        )


def multitask_params(entry: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Task -> parameters of a multi-task config's manifest entry (gengap.multitask: its
    ``generation.tasks``); {} for a config of one task."""
    generation = entry.get("generation")
    items = generation.get("tasks") if isinstance(generation, Mapping) else None
    if not isinstance(items, list):
        return {}
    return {str(item["task"]): dict(item.get("params") or {}) for item in items if isinstance(item, Mapping) and "task" in item}


def evaluation_order(records: list[Record]) -> list[int]:
    """The indices of records in gengap's evaluation order: sorted by sha256 of (id, input), file
    order among equal keys. A pure function of the records, so any prefix is a fixed, spread-out
    sample of the part, the same for every model and tool: the lm-eval export writes its
    documents in this order (``lm_eval --limit N`` takes the first N) and ``gengap eval --limit N``
    takes the same N records."""

    def key(index: int) -> bytes:
        record = records[index]
        return hashlib.sha256(f"{record.get('id', '')}\n{record['input']}".encode()).digest()

    return sorted(range(len(records)), key=key)


def first_in_evaluation_order(records: list[Record], limit: int | None) -> list[Record]:
    """The first limit records of the evaluation order (all when limit is None), kept in file order."""
    if limit is None or limit >= len(records):
        return list(records)
    chosen = sorted(evaluation_order(records)[:limit])
    return [records[i] for i in chosen]


def open_release(root: str | Path) -> Release:
    """A release directory, with the plugins its manifest records imported; HarnessError when
    it holds no config or a plugin it needs cannot be imported."""
    path = Path(root)
    if not path.is_dir():
        raise HarnessError(f"{path} is not a directory")
    manifest: Any = None
    manifest_path = path / "manifest.json"
    try:
        if os.path.lexists(manifest_path):
            manifest = read_json(manifest_path)
        configs = release_configs(path, manifest)
    except ReadError as err:
        raise HarnessError(f"cannot read {err}") from None
    if not configs:
        raise HarnessError(f"{path} is not a release: no data/<config>/train.jsonl" + (" of a config manifest.json lists" if manifest is not None else ""))
    if isinstance(manifest, dict) and "fingerprint" in manifest and not _fingerprint_holds(manifest):
        raise HarnessError(f"{path}/manifest.json: its fingerprint is not that of its data files (run gengap verify {path})")
    missing = load_recorded(manifest.get("plugins")) if isinstance(manifest, dict) else []
    if missing:
        raise HarnessError(f"{path}: {missing[0]}")
    return Release(path, manifest if isinstance(manifest, dict) else {}, configs)


def _fingerprint_holds(manifest: Mapping[str, Any]) -> bool:
    """Whether the manifest's fingerprint is that of the data files it lists."""
    data_files = manifest.get("data_files")
    try:
        return isinstance(data_files, dict) and manifest.get("fingerprint") == data_fingerprint(data_files)
    except (KeyError, TypeError):
        return False


def read_jsonl(path: Path | None) -> list[Record]:
    """Records of a JSONL file ([] when it is missing: None); HarnessError naming the first bad line."""
    if path is None:
        return []
    return read_records(path, HarnessError, _check_record)


def _check_record(record: Any, where: str) -> None:
    if not isinstance(record, dict) or not all(isinstance(record.get(k), str) and record[k].split() for k in ("input", "target")):
        raise HarnessError(f"{where}: a record needs non-empty input and target strings")
    if not isinstance(record.get("task"), str):
        raise HarnessError(f"{where}: a record needs its task (a string)")
