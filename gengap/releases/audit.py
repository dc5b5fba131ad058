"""Check every record of a release against its task, without rebuilding anything.

For each data file of each config in manifest.json: every line is a valid record of the
config's task (or one of a multi-task config's tasks; JSON Schema, ``id`` recomputed from input and target, token lengths, the
target re-checked by the task's independent checker, and the difficulty features the task
can recompute; see gengap.checking.record_problem), the row count is the manifest's, and
no test input occurs in train or validation (in a record of the same task: a multi-task
config's ``tasks`` each keep their own inputs), and what the manifest states about the
config's parts (its split report: sizes, ranges, divergences, novelty, split facts) is
what the files hold (gengap.cross_check). This proves each record is a correct example of
its task and the report the report of these parts; it does not prove the records are the
ones the suite and seeds produce (a forger could drop correct examples and rewrite the
report to match): that is ``gengap verify --regenerate``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gengap.generators.markers import task_input
from gengap.generators.reading import ReadError, json_line, jsonl_lines
from gengap.releases.checking import record_problem
from gengap.releases.cross_check import report_problems
from gengap.splits.atoms import remembered

PARTS = ("train", "validation", "test")

PROBLEMS_PER_FILE = 5  # record problems listed per data file (the rest are counted)


@dataclass
class Audit:
    """Records checked and the problems found."""

    records: int = 0
    problems: list[str] = field(default_factory=list)


def config_task_names(config: dict[str, Any]) -> list[str]:
    """The tasks whose records a config of manifest.json may hold: those of its ``tasks`` list
    (a multi-task config, gengap.multitask), else its one ``task``."""
    if "tasks" in config:
        names = [str(item["task"]) for item in config["tasks"]]
        if not names:
            raise ValueError("empty tasks")
        return names
    return [str(config["task"])]


def _audit_file(path: Path, name: str, tasks: list[str], audit: Audit) -> tuple[int, list[tuple[str, str]], list[dict[str, Any]] | None]:
    """(rows, (task, input) of the valid records, the records when every one is valid) after
    checking each record; problems go to audit."""
    rows = 0
    failures = 0
    seen: list[tuple[str, str]] = []
    records: list[dict[str, Any]] = []
    task = "+".join(tasks)
    with open(path, "rb") as handle:
        for number, line in jsonl_lines(handle):
            rows += 1
            try:
                record = json_line(line)
            except ReadError as err:
                problem: str | None = err.reason
                record = None
            else:
                if isinstance(record, dict) and "task" in record and record["task"] not in tasks:
                    problem = f"task {record['task']!r} is not the config's task {task!r}"
                else:
                    problem = record_problem(record)
            if problem is not None:
                failures += 1
                if failures <= PROBLEMS_PER_FILE:
                    audit.problems.append(f"record: {name} line {number}: {problem}")
                continue
            seen.append((record["task"], task_input(record)["input"]))  # a shortcut cue or a task marker does not make an input new
            records.append(record)
    if failures > PROBLEMS_PER_FILE:
        audit.problems.append(f"record: {name}: {failures - PROBLEMS_PER_FILE} more records fail")
    audit.records += rows
    return rows, seen, records if not failures else None


def audit_records(root: Path, manifest: dict[str, Any], listed: set[str], present: set[str] | None = None) -> Audit:
    """Check every record of the release at root (see the module doc); only data files in
    `listed` (checksummed data files of the manifest) are read, and of those only the ones
    in `present` (the regular files of the release, symlinks excluded; default: every file
    that is there) — the others are reported elsewhere, as missing or as symlinks."""
    audit = Audit()
    configs = manifest.get("configs")
    if not isinstance(configs, list):
        audit.problems.append("manifest.json has no list of configs")
        return audit
    cache: dict[tuple[Any, ...], Any] = {}
    cached_for: list[str] = []
    for config in configs:
        try:
            files = {part: dict(info) for part, info in config["files"].items()}
            tasks = config_task_names(config)
        except (KeyError, TypeError, ValueError, AttributeError):
            audit.problems.append(f"manifest.json: a config lacks valid files or task ({str(config)[:60]})")
            continue
        train_side: set[tuple[str, str]] = set()
        parts: dict[str, list[dict[str, Any]]] = {}
        sizes: dict[str, int] = {}
        for part in ("train", "validation", "test"):
            info = files.get(part)
            if not info:
                continue
            name = str(info.get("path", ""))
            path = root / name
            if name not in listed:
                audit.problems.append(f"record: {name!r} of config {config.get('name')!r} is not a checksummed data file")
                continue
            if (name not in present) if present is not None else not path.is_file():
                continue  # reported as missing, or as a symlink or special file, by the checksum pass
            rows, seen, records = _audit_file(path, name, tasks, audit)
            if records is not None:
                parts[part] = records
                sizes[part] = path.stat().st_size
            if rows != info.get("rows"):
                audit.problems.append(f"record: {name} has {rows} rows, manifest.json says {info.get('rows')}")
            if part != "test":
                train_side.update(seen)
            else:
                shared = sum(1 for text in seen if text in train_side)
                if shared:
                    audit.problems.append(f"record: {name}: {shared} test inputs also occur in train or validation")
        if len(parts) == len(PARTS):  # every record of the config valid: what the manifest states about them (gengap.cross_check)
            if tasks != cached_for:  # one memory of atoms and compounds for consecutive configs of the same tasks (one pool)
                cache, cached_for = {}, tasks
            with remembered(cache):
                audit.problems += report_problems(config, parts, sizes)
    return audit
