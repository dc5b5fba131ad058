"""`gengap sweep SWEEP.yaml --out DIR [--address ADDRESS]`: a baseline sweep on Ray.

DIR holds ``sweep.json`` (the sweep and every run's outcome), ``runs/<run>/`` (what ``gengap
train`` writes), ``report.md`` with its plots, and ``release/`` when the sweep names a suite
(built once, reused while the suite is unchanged). Running the same command again skips
finished runs and resumes interrupted ones. DIR is never the current directory (or one
containing it) nor inside the sweep's release, and a non-empty DIR is taken only when its
content proves it a sweep directory gengap wrote (:func:`sweep_not_ours`), so a sweep never
rewrites a file of the user's (another tool's sweep.json, a report.md of one's own). Exit status: 0 when every run finished, 1 when
any failed (after its retries), 2 for bad input.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from tqdm import tqdm

from gengap.baselines.data import release_configs
from gengap.baselines.errors import BaselineError
from gengap.generators.reading import ReadError, read_json
from gengap.baselines.report import report_paths
from gengap.baselines.sweep import REPORT_FILE, STATE_FILE, SWEEP_FORMAT, FailOnce, Outcome, RunSpec, failed, plan_runs, resolved_settings, run_sweep
from gengap.ground.errors import UsageError, counted
from gengap.ground.files import check_not_current, check_placement
from gengap.generators.digests import file_sha256
from gengap.ground.locking import destination_lock, lock_name
from gengap.releases.release import ReleaseError, write_release
from gengap.ground.staging import parse_staging_name
from gengap.releases.suite import SuiteError, load_suite
from gengap.releases.sweep_config import Sweep, SweepError, find_sweep, load_sweep

RELEASE_FOLDER = "release"


def real_destination(path: str) -> Path:
    """The sweep directory by its real path: the links among its parents resolved once, up front,
    so that every run (and a link swapped meanwhile) writes where the sweep was checked."""
    given = Path(path).absolute()
    return Path(os.path.realpath(given.parent)) / given.name


def check_sweep_directory(out: Path, shown: str = "", inputs: Sequence[Path] = ()) -> None:
    """UsageError unless out may hold this sweep: not the current directory or one containing
    it (``--out .``, as for every output), not inside one of the sweep's inputs (its release),
    and absent, empty, or a sweep directory gengap wrote (sweep_not_ours) whose folders
    (release, runs, .sweep and each run) are no links."""
    check_not_current(out, shown or str(out))
    check_placement(out, inputs)
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise UsageError(f"{out} exists and is not a directory")
    inside = [out / RELEASE_FOLDER, out / "runs", out / ".sweep"]
    if (out / "runs").is_dir() and not (out / "runs").is_symlink():
        inside += sorted((out / "runs").iterdir())
    linked = [str(path) for path in inside if path.is_symlink()]
    if linked:
        raise UsageError(f"{linked[0]} is a symbolic link: gengap never writes through one; remove it")
    if out.is_dir() and any(out.iterdir()):
        reason = sweep_not_ours(out)
        if reason is not None:
            raise UsageError(f"{out} is not empty and not a sweep directory gengap wrote ({reason}): choose another --out")


def sweep_not_ours(out: Path) -> str | None:
    """Why the non-empty directory out is not a sweep directory gengap wrote (None: it is).

    The proof is the one of gengap.ownership, for a directory that a sweep resumes rather than
    replaces: sweep.json is a regular file in gengap's format (``gengap-sweep/1`` with its
    runs); every report file present (report.md and its plots, the files a sweep rewrites) has
    the sha256 sweep.json records for it; and nothing else is there but the sweep's folders
    (runs/ holding run folders only, release/, .sweep/) and gengap's own temporary, lock and
    staging names. The runs' own files are train's (``train --resume`` checks each run.json)."""
    state_file = out / STATE_FILE
    if not state_file.is_file() or state_file.is_symlink():
        return f"no {STATE_FILE}"
    try:
        state = read_json(state_file)
    except ReadError:
        return f"its {STATE_FILE} cannot be read as JSON"
    if not isinstance(state, dict) or state.get("format") != SWEEP_FORMAT or not isinstance(state.get("runs"), list):
        return f"its {STATE_FILE} is not a gengap sweep's"
    recorded = state.get("report") if isinstance(state.get("report"), dict) else {}
    report_files = {path.name for path in report_paths(out / REPORT_FILE)}
    folders = {"runs", RELEASE_FOLDER, ".sweep"}
    temporary = {f".{STATE_FILE}.tmp", lock_name(RELEASE_FOLDER), *(f"{name}.tmp" for name in report_files)}
    for entry in sorted(out.iterdir()):
        name = entry.name
        staged = parse_staging_name(name)
        if entry.is_dir() and not entry.is_symlink() and name in folders:
            continue
        if entry.is_file() and not entry.is_symlink() and (name == STATE_FILE or name in temporary or (staged and staged[0] == RELEASE_FOLDER)):
            continue
        if staged and staged[0] == RELEASE_FOLDER and entry.is_dir() and not entry.is_symlink():
            continue
        if entry.is_file() and not entry.is_symlink() and name in report_files:
            if recorded.get(name) != file_sha256(entry):
                return f"{name} is not the one gengap wrote there (its bytes are not those {STATE_FILE} records)"
            continue
        return f"{name!r} is not one of a sweep's files"
    stray = [p.name for p in (out / "runs").iterdir() if not p.is_dir() or p.is_symlink()] if (out / "runs").is_dir() else []
    if stray:
        return f"runs/{stray[0]} is not a run folder"
    return None


def _suite_config(config: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in config.items() if k != "created"}


def sweep_data(sweep: Sweep, out: Path) -> tuple[Path, list[str], dict[str, Any] | None]:
    """(release directory, its config names, the suite to build there or None): the sweep's
    release, or OUT/release for its suite (None when already built from the same suite)."""
    if sweep.release is not None:
        return sweep.release, release_configs(sweep.release), None
    assert sweep.suite is not None
    try:
        suite = load_suite(sweep.suite)
    except SuiteError as err:
        raise UsageError(str(err)) from None
    names = [entry["name"] for entry in suite["entries"]]
    target = out / RELEASE_FOLDER
    manifest = target / "manifest.json"
    if not manifest.is_file():
        return target, names, suite
    try:
        built = read_json(manifest)
        recorded = built["suite"]["config"]
    except ReadError as err:
        raise UsageError(str(err)) from None
    except (KeyError, TypeError):
        raise UsageError(f"{manifest} is not the manifest of a release: remove {target} or choose another --out") from None
    if _suite_config(recorded) != _suite_config(suite["config"]):
        raise UsageError(f"{target} was built from another suite than {sweep.suite}: remove it or choose another --out")
    return target, names, None


def plan(sweep: Sweep, release: Path, names: Sequence[str], out: Path) -> list[RunSpec]:
    """The sweep's runs, with their settings checked (UsageError naming the sweep file)."""
    configs = sweep.select_configs(names)
    runs = plan_runs(release, configs, sweep.encodings, sweep.presets, sweep.seeds, sweep.overrides, out, sweep.architectures)
    checked = set()
    for spec in runs:  # settings differ only by architecture, encoding, preset, grid point and seed: one check each but seeds
        key = (spec.settings["arch"], spec.settings["pos"], spec.settings["preset"], spec.settings.get("lr"), spec.settings.get("weight_decay"))
        if key not in checked:
            checked.add(key)
            try:
                resolved_settings(spec.settings)
            except BaselineError as err:
                raise UsageError(f"{sweep.label}: train: {err}") from None
    if sweep.fail_once is not None:
        if sweep.fail_once.run not in {spec.name for spec in runs}:
            raise sweep.source.error(["fail_once", "run"], f"no run is named {sweep.fail_once.run!r}")
        hook = FailOnce(sweep.fail_once.run, sweep.fail_once.step, str(out / ".sweep" / f"fail_once-{sweep.fail_once.run}"))
        runs = [RunSpec(s.name, s.release, s.config, s.settings, s.out, hook) for s in runs]
    return runs


def check_local_resources(sweep: Sweep, num_cpus: int | None) -> None:
    """UsageError when a run reserves more GPUs or CPUs than this machine has (for the local
    runtime, checked before anything is built: Ray would wait for them forever)."""
    if sweep.gpus > 0:
        import torch

        gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if sweep.gpus > gpus:
            raise UsageError(f"{sweep.label}: resources: a run reserves {sweep.gpus:g} GPUs, but this machine has {gpus} "
                             "(the local Ray runtime would wait for them forever); lower resources.gpus or give --address")
    cpus = num_cpus if num_cpus is not None else os.cpu_count() or 1
    if sweep.cpus > cpus:
        raise UsageError(f"{sweep.label}: resources: a run reserves {sweep.cpus:g} CPUs, but the local Ray runtime has {cpus}")


def _ray_engine(sweep: Sweep, address: str | None, num_cpus: int | None) -> Callable[[Sequence[RunSpec]], Iterator[Outcome]]:
    def engine(runs: Sequence[RunSpec]) -> Iterator[Outcome]:
        from gengap.baselines.sweep_ray import Resources, ray_runtime, run_on_ray

        with ray_runtime(address, num_cpus):
            yield from run_on_ray(runs, Resources(sweep.gpus, sweep.cpus), sweep.retries)

    return engine


def cmd_sweep(args: Any) -> int:
    if args.num_cpus is not None and (args.num_cpus < 1 or args.address is not None):
        raise UsageError("--num-cpus is a positive count, for a local runtime (without --address)")
    try:
        sweep = load_sweep(find_sweep(args.sweep))
    except SweepError as err:
        raise UsageError(str(err)) from None
    out = real_destination(args.out)  # Ray workers may run elsewhere: absolute paths in every run
    check_sweep_directory(out, args.out, [path for path in (sweep.release, sweep.suite) if path is not None])
    started = time.perf_counter()
    try:  # everything is checked before anything is written
        release, names, suite = sweep_data(sweep, out)
        runs = plan(sweep, release, names, out)
    except SweepError as err:
        raise UsageError(str(err)) from None
    if args.address is None:
        check_local_resources(sweep, args.num_cpus)
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    with destination_lock(out):
        if suite is not None:
            print(f"gengap: building {suite['name']} ({counted(len(suite['entries']), 'config')}) into {release}", file=sys.stderr, flush=True)
            try:
                write_release(suite, release, workers=max(1, min(8, os.cpu_count() or 1)), inputs=[str(sweep.suite)])
            except BaseException as err:  # the release left nothing behind: neither does the sweep
                if created and not any(out.iterdir()):
                    out.rmdir()
                if isinstance(err, ReleaseError):
                    raise UsageError(str(err)) from None
                raise
        bar = tqdm(total=len(runs), unit="run", desc="sweep", file=sys.stderr, disable=not sys.stderr.isatty())
        count = [0]

        def progress(outcome: Outcome) -> None:
            count[0] += 1
            bar.update(1)
            bar.set_postfix_str(outcome.run)
            if bar.disable:
                detail = f": {outcome.error}" if outcome.error else ""
                print(f"gengap: [{count[0]}/{len(runs)}] {outcome.run} {outcome.status}{detail} ({time.perf_counter() - started:.1f} s)", file=sys.stderr, flush=True)

        state = {"file": sweep.label, "release": str(release), **{k: v for k, v in sweep.data.items() if k not in ("release", "suite")}}
        with bar:
            outcomes = run_sweep(runs, out, _ray_engine(sweep, args.address, args.num_cpus), sweep=state, on_outcome=progress)
    bad = failed(outcomes.values())
    for outcome in bad:
        print(f"gengap: error: run {outcome.run} failed: {outcome.error}", file=sys.stderr)
    trained = sum(o.status == "done" for o in outcomes.values())
    skipped = sum(o.status == "skipped" for o in outcomes.values())
    report = f"; report {out / 'report.md'}" if (out / "report.md").exists() and len(bad) < len(runs) else ""
    print(f"sweep: {counted(len(runs), 'run')}: {trained} trained, {skipped} already finished, {len(bad)} failed ({time.perf_counter() - started:.1f} s){report}")
    return 1 if bad else 0
