"""Baseline sweeps: the run matrix, one run as a plain function, and the sweep's bookkeeping.

A sweep trains every (config, architecture, positional encoding, preset, seed) of a release,
one run directory each: ``OUT/runs/<config>-<model>-<preset>-seed<s>``, where the model is the
encoding of a transformer (``rope``), else the architecture (``lstm``; ``looped-rope``).
Encodings apply to the transformer and (rope, nope, randomized, fire, abacus) to the looped model; the recurrent
architectures have none, so they get one run per (config, preset, seed). :func:`execute` is one run: the
same call ``gengap train RELEASE --config C --pos P --preset X --seeds S --out RUN --resume``
makes (:func:`gengap.baselines.training.train_and_evaluate`), so a run directory holds what that
command writes for the same settings. :func:`run_sweep` skips finished runs (results.json
present, same settings), hands the others to an engine (an iterator of outcomes, e.g.
:func:`gengap.baselines.sweep_ray.run_on_ray`), records every outcome in ``OUT/sweep.json`` and
ends with ``gengap report`` over the finished runs (``OUT/report.md``, its plots and ``OUT/report.json``,
whose sha256 sweep.json then records: gengap.sweep_command rewrites only report files it wrote).

This module imports neither torch nor Ray at import time.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from gengap.baselines.errors import BaselineError
from gengap.baselines.report import model_label
from gengap.baselines.spec import LOOPED_POSITIONAL
from gengap.generators.digests import file_sha256
from gengap.generators.jsonl import json_text
from gengap.generators.safe_files import atomic_write_text, create_new, make_directory
from gengap.generators.reading import ReadError, read_json

SWEEP_FORMAT = "gengap-sweep/1"
STATE_FILE = "sweep.json"
CRASH_EXIT_CODE = 75  # the exit status of a worker ended by the fail_once test hook


@dataclass(frozen=True)
class FailOnce:
    """Testing hook: the worker of run ``run`` ends itself (os._exit) after step ``step``, once.

    ``marker`` is a file created just before the exit; its presence means the crash happened.
    """

    run: str
    step: int
    marker: str


@dataclass(frozen=True)
class RunSpec:
    """One training run of a sweep: a config of a release, settings (TrainSettings fields), a directory."""

    name: str
    release: str
    config: str
    settings: Mapping[str, Any]
    out: str
    fail_once: FailOnce | None = field(default=None, compare=False)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("fail_once")
        data["settings"] = dict(self.settings)
        return data


@dataclass(frozen=True)
class Outcome:
    """How one run ended: done (trained now or earlier: skipped) or failed (with its error)."""

    run: str
    status: str  # "done", "skipped" or "failed"
    error: str | None = None
    seconds: float = 0.0


LOOPED_ENCODINGS = LOOPED_POSITIONAL


GRID = {"lr": "lr", "weight_decay": "wd"}  # training settings a sweep may list: one run per combination (name part)


def grid_points(overrides: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every combination of the listed lr and weight_decay values (one point when neither is a list)."""
    points: list[dict[str, Any]] = [{}]
    for key in GRID:
        values = overrides.get(key)
        if isinstance(values, (list, tuple)):
            points = [{**point, key: value} for point in points for value in values]
    return points


def grid_label(point: Mapping[str, Any]) -> str:
    """The run-name part of a grid point: ``-lr0.001-wd1`` (empty without a grid)."""
    return "".join(f"-{GRID[key]}{point[key]:g}" for key in GRID if key in point)


def run_name(config: str, pos: str, preset: str, seed: int, arch: str = "transformer", point: Mapping[str, Any] | None = None) -> str:
    return f"{config}-{model_label(arch, pos)}-{preset}{grid_label(point or {})}-seed{seed}"


def encodings_of(arch: str, encodings: Sequence[str]) -> list[str]:
    """The sweep's encodings that an architecture takes: all for the transformer, those of the
    looped block for the looped model (rope when the sweep names none of them), ``none`` for
    the recurrent ones."""
    if arch == "transformer":
        return list(encodings)
    if arch == "looped":
        return [pos for pos in encodings if pos in LOOPED_ENCODINGS] or ["rope"]
    return ["none"]


def plan_runs(
    release: str | Path,
    configs: Sequence[str],
    encodings: Sequence[str],
    presets: Sequence[str],
    seeds: Sequence[int],
    overrides: Mapping[str, Any],
    out: str | Path,
    architectures: Sequence[str] = ("transformer",),
) -> list[RunSpec]:
    """Every (config, architecture, encoding, preset, lr x weight decay grid point, seed) of the
    matrix, in that nesting order (overrides may list lr and weight_decay values: the grid)."""
    runs = []
    for config in configs:
        for arch in architectures:
            for pos in encodings_of(arch, encodings):
                for preset in presets:
                    for point in grid_points(overrides):
                        for seed in seeds:
                            name = run_name(config, pos, preset, seed, arch, point)
                            settings = {**overrides, **point, "arch": arch, "pos": pos, "preset": preset, "seeds": [seed]}
                            runs.append(RunSpec(name, str(release), config, settings, str(Path(out) / "runs" / name)))
    return runs


def resolved_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The settings as ``run.json`` records them (BaselineError for a setting a run cannot take)."""
    from gengap.baselines.settings import make_settings

    return make_settings(None, settings).resolve().to_json()


def is_finished(spec: RunSpec) -> bool:
    """True when spec.out holds a finished run (results.json) trained with the same settings."""
    out = Path(spec.out)
    try:
        recorded = read_json(out / "run.json")
    except ReadError:
        return False
    return isinstance(recorded, dict) and (out / "results.json").is_file() and same_settings(recorded.get("settings"), resolved_settings(spec.settings))


def same_settings(recorded: Any, resolved: Mapping[str, Any]) -> bool:
    """Whether a run.json's settings are these resolved ones; a setting the record lacks (added to
    gengap after the run) counts as the default every run made before it trained with."""
    if not isinstance(recorded, Mapping):
        return False
    from gengap.baselines.settings import TrainSettings

    defaults = TrainSettings().resolve().to_json()  # = LEGACY_DEFAULTS where those name them (gengap.baselines.setup)
    return all(recorded[name] == value if name in recorded else name in defaults and defaults[name] == value for name, value in resolved.items()) \
        and set(recorded) <= set(resolved)


def _crash_callback(hook: FailOnce | None) -> Callable[[dict[str, Any]], None] | None:
    if hook is None:
        return None
    marker = Path(hook.marker)

    def crash(event: dict[str, Any]) -> None:
        if event["step"] == hook.step and not marker.exists():
            make_directory(marker.parent)
            os.close(create_new(marker))
            os._exit(CRASH_EXIT_CODE)

    return crash


def execute(spec: RunSpec) -> Outcome:
    """Train one run (resuming from its checkpoints if any). A BaselineError (bad settings or
    data: retrying cannot help) is a failed outcome; any other exception propagates (the
    engine may retry)."""
    from gengap.baselines.training import train_and_evaluate

    started = time.perf_counter()
    hook = spec.fail_once if spec.fail_once is not None and spec.fail_once.run == spec.name else None
    try:
        train_and_evaluate(
            spec.release, spec.config, out=spec.out, resume=True, progress=False, callback=_crash_callback(hook), **spec.settings
        )
    except BaselineError as err:
        return Outcome(spec.name, "failed", str(err), time.perf_counter() - started)
    return Outcome(spec.name, "done", None, time.perf_counter() - started)


Engine = Callable[[Sequence[RunSpec]], Iterator[Outcome]]


def write_state(
    out: Path, sweep: Mapping[str, Any], runs: Sequence[RunSpec], outcomes: Mapping[str, Outcome], report: Mapping[str, str] | None = None
) -> None:
    """OUT/sweep.json (atomically): the sweep, its runs and their outcomes so far, and the sha256
    of the report files gengap wrote there (``report``: what lets the next run rewrite them,
    gengap.sweep_command)."""
    state = {
        "format": SWEEP_FORMAT,
        "sweep": dict(sweep),
        "runs": [{**spec.to_json(), **({k: v for k, v in asdict(outcomes[spec.name]).items() if k != "run"} if spec.name in outcomes else {"status": "pending"})} for spec in runs],
        "report": dict(report or {}),
    }
    atomic_write_text(out / STATE_FILE, json_text(state, indent=1), tmp_name=f".{STATE_FILE}.tmp")


REPORT_FILE = "report.md"


def report_hashes(out: Path) -> dict[str, str]:
    """The sha256 of the report files present in the sweep directory (report.md and its plots)."""
    from gengap.baselines.report import report_paths

    return {path.name: file_sha256(path) for path in report_paths(out / REPORT_FILE) if path.is_file()}


def recorded_report(out: Path) -> dict[str, str]:
    """The report hashes the sweep directory's sweep.json records ({} when it records none)."""
    try:
        state = read_json(out / STATE_FILE)
    except ReadError:
        return {}
    report = state.get("report") if isinstance(state, dict) else None
    return {str(k): str(v) for k, v in report.items()} if isinstance(report, dict) else {}


def run_sweep(
    runs: Sequence[RunSpec],
    out: str | Path,
    engine: Engine,
    sweep: Mapping[str, Any] | None = None,
    on_outcome: Callable[[Outcome], None] = lambda outcome: None,
    report: bool = True,
) -> dict[str, Outcome]:
    """Run every unfinished run with engine, record outcomes in OUT/sweep.json, then write
    OUT/report.md over the finished runs (when any). Returns the outcome of every run."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    make_directory(out / "runs")  # a link there would take every run outside the sweep directory
    written = recorded_report(out)  # the report files of an earlier run stay vouched for until rewritten
    outcomes: dict[str, Outcome] = {}
    todo = []
    for spec in runs:
        if is_finished(spec):
            outcomes[spec.name] = Outcome(spec.name, "skipped")
            on_outcome(outcomes[spec.name])
        else:
            todo.append(spec)
    write_state(out, sweep or {}, runs, outcomes, written)
    if todo:
        for outcome in engine(todo):
            outcomes[outcome.run] = outcome
            write_state(out, sweep or {}, runs, outcomes, written)
            on_outcome(outcome)
    finished = [spec.out for spec in runs if outcomes[spec.name].status != "failed"]
    if report and finished:
        from gengap.baselines.report import make_report

        make_report(finished, out / REPORT_FILE)
        write_state(out, sweep or {}, runs, outcomes, report_hashes(out))
    return outcomes


def failed(outcomes: Iterable[Outcome]) -> list[Outcome]:
    return [o for o in outcomes if o.status == "failed"]
