"""The `gengap` command line: list, lexicon, generate, check, split, divergence, release, verify, fresh, audit, export, train, eval, report, sweep."""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from contextlib import closing, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Iterator, Sequence

import numpy as np

from gengap.generators import BlockPlan, ParamError, UnknownTaskError, batch_to_jsonl, get_task, task_names
from gengap.generators.jsonl import NonFiniteError, json_text, sealed_json_text
from gengap.generators.plugins import PluginError
from gengap.generators.registry import TaskDefinitionError
from gengap import __version__
from gengap.ground.errors import UsageError, counted, one_line
from gengap.ground.limits import (
    DEFAULT_MAX_RECORDS,
    DEFAULT_MAX_TOTAL_RECORDS,
    ENVIRONMENT_VARIABLE,
    TOTAL_ENVIRONMENT_VARIABLE,
    LimitError,
    RecordLimit,
    check_disk_space,
    record_bytes,
)
from gengap.ground.files import atomic_directory, atomic_output, atomic_outputs, check_output_directory, check_writable_file, check_space
from gengap.ground.ownership import EXPORT, SPLIT
from gengap.commands.author_commands import add_commands as add_author_commands, verify_fresh_part
from gengap.baselines.cli import add_commands as add_baseline_commands
from gengap.baselines.errors import BaselineError
from gengap.ground.signals import INTERRUPT_EXIT_CODE, TERMINATION_EXIT_CODE, terminate_as_interrupt, was_terminated
from gengap.harnesses.errors import HarnessError
from gengap.harnesses.extraction import ANSWER_FORMATS
from gengap.harnesses.formats import FORMATS
from gengap.ground.progress import Ticker
from gengap.ground.repeats import record_input_keys, repeat_warning, repeated

if TYPE_CHECKING:
    from tqdm import tqdm

    from gengap.releases.release import Renderer
    from gengap.splits import SplitResult
    from gengap.splits.external import ExternalFormat

# A command imports what only it uses (the schema validator, tqdm, splits, the release
# spine, the exporters) when it runs, so that `gengap generate` starts fast:
# tests/test_startup.py lists what generating must not import.

STDIN_IN_MEMORY = 64 << 20  # a pool read from a pipe is spooled to disk beyond this many bytes
SIZE_CHECKED_FROM = 10_000  # generate --n above this is checked against the free disk space (from a sample)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


class _NoBar:
    """The progress bar where none is shown (stderr is not a terminal): tqdm is not even imported."""

    disable = True

    def __enter__(self) -> "_NoBar":
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, n: float = 1) -> None:
        """Nothing to draw."""

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        """Nothing to draw."""


def _progress(total: int, unit: str, desc: str, unit_scale: bool = True) -> tqdm | _NoBar:
    """A tqdm bar on stderr when it is a terminal, else a _NoBar (unit_scale False: counts as integers, 3/22)."""
    if not sys.stderr.isatty():
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, desc=desc, file=sys.stderr, unit_scale=unit_scale)


# -- list ------------------------------------------------------------------------------


def cmd_list(args: argparse.Namespace) -> int:
    from gengap.splits import STRATEGIES

    tasks = [get_task(name).describe() for name in task_names()]
    if args.json:
        print(json.dumps(tasks, indent=2))
        return 0
    for task in tasks:
        print(f"{task['name']}  [{task['family']}]  {task['description']}")
        _print_knobs(task["parameters"])
        for fmt, writes in task["traces"].items():
            print(f"    trace={fmt}: {writes}")
        print(f"    levels: {_levels_summary(task['levels'])}")
    print("\nsplit strategies (gengap split FILE --strategy NAME --option KEY=VALUE; suite entries: strategy, options):")
    for name, strategy in sorted(STRATEGIES.items()):
        print(f"{name}  {strategy.description}")
        _print_knobs(strategy.option_rows())
    return 0


def _print_knobs(rows: list[dict[str, Any]]) -> None:
    """One line per task parameter or strategy option: default, range or choices, doc."""
    for p in rows:
        lo, hi = p.get("range", (None, None))
        bounds = f" range {lo}..{hi}" if lo is not None and hi is not None else f" >= {lo}" if lo is not None else f" <= {hi}" if hi is not None else ""
        choices = f" one of {', '.join(p['choices'])}" if "choices" in p else ""
        print(f"    {p['name']} = {p['default']!r}{bounds}{choices}  {p['doc']}")


def _levels_summary(levels: dict[str, dict[str, Any]]) -> str:
    """Levels with only the parameters that change between levels."""
    rows = list(levels.values())
    varying = [k for k in rows[0] if len({repr(r[k]) for r in rows}) > 1]
    if not varying:
        return "all levels use the defaults"
    return "; ".join(f"{k}: " + ",".join(f"{name}={row[name]}" for name in varying) for k, row in levels.items())


def cmd_lexicon(args: argparse.Namespace) -> int:
    """The words of lexicon K of a task: one line per role, ``class<TAB>role<TAB>word`` (--json: class -> role -> word)."""
    from gengap.generators.lexicons import MAX_LEXICON, words_of

    try:
        task = get_task(args.task)
    except UnknownTaskError as err:
        raise UsageError(str(err)) from None
    spec = getattr(task, "lexicon_spec", None)
    if spec is None:
        raise UsageError(f"{task.name} has no lexical roles (tasks with a lexicon parameter: see gengap list)")
    if not 0 <= args.k <= MAX_LEXICON:
        raise UsageError(f"lexicon {args.k} is out of range [0, {MAX_LEXICON}]")
    words = words_of(spec, args.k)
    if args.json:
        print(json.dumps(words, indent=2))
        return 0
    for name, roles in words.items():
        for role, word in roles.items():
            print(f"{name}\t{role}\t{word}")
    return 0


# -- generate --------------------------------------------------------------------------


def parse_key_values(options: Sequence[str], flag: str = "--param") -> dict[str, str]:
    values: dict[str, str] = {}
    for option in options:
        key, sep, value = option.partition("=")
        if not sep or not key:
            raise UsageError(f"{flag} {option!r} is not of the form key=value")
        values[key.strip()] = value.strip()
    return values


def cmd_generate(args: argparse.Namespace) -> int:
    try:
        task = get_task(args.task)
    except UnknownTaskError as err:
        raise UsageError(str(err)) from None
    if args.all == (args.n is not None):
        raise UsageError("give exactly one of --n N and --all")
    if args.n is not None and args.n < 1:
        raise UsageError(f"--n must be at least 1, got {args.n}")
    if args.workers < 1:
        raise UsageError(f"--workers must be at least 1, got {args.workers}")
    if args.seed < 0:
        raise UsageError(f"--seed must be non-negative, got {args.seed}")
    try:
        raw = parse_key_values(args.param)
        typed = {k: task.params_type.parse_value(k, v) for k, v in raw.items()}
        params = task.make_params(typed, level=args.level)
    except ParamError as err:
        raise UsageError(_prefixed(task.name, err)) from None
    _check_generate_size(task.name, params, args)
    target = atomic_output(args.out, args.force) if args.out is not None else _stdout()
    if args.all:
        try:
            batch = task.enumerate(params)
        except ParamError as err:
            raise UsageError(_prefixed(task.name, err)) from None
        if batch is None:
            raise UsageError(f"{task.name} is not a finite task: use --n N")
        with target as handle:
            handle.write(batch_to_jsonl(batch, task.name))
        return 0
    plan = BlockPlan(task.name, params, args.n, args.seed)
    if plan.num_blocks > 1:  # block after block: keep freed memory for the next (costs a ctypes import)
        from gengap.ground.heap import keep_freed_memory

        keep_freed_memory()
    written = [0]
    with target as handle, _progress(args.n, "ex", task.name) as bar, \
            Ticker(lambda: f"generate: {written[0]:,} of {args.n:,} {task.name} records written"):
        hashes = _write_blocks(plan, args.workers, handle, bar, written)
        warning = repeat_warning(*repeated(hashes))  # before the file is published: after that, the command has succeeded
    if warning is not None:
        print(f"gengap: warning: {warning}", file=sys.stderr)
    return 0


def _check_generate_size(task: str, params: Any, args: argparse.Namespace) -> None:
    """UsageError, before anything is generated, when --n is over the record limit or (with
    --out) would not fit on the output's file system; and when --out cannot be written."""
    try:
        limit = RecordLimit.from_environment(args.max_records)
    except LimitError as err:
        raise UsageError(str(err)) from None
    count = args.n
    if args.all:
        try:
            count = get_task(task).enumeration_size(params)
        except ParamError as err:
            raise UsageError(_prefixed(task, err)) from None
    if count is not None and count > limit.max_records:
        given = f"--n {count:,}" if args.n is not None else f"--all ({count:,} records)"
        raise UsageError(
            f"{given} is more than the limit of {limit.max_records:,} records "
            f"(raise it with --max-records N or {ENVIRONMENT_VARIABLE}=N)"
        )
    if args.out is not None:
        target = check_writable_file(args.out, args.force)
        if count is not None and count > SIZE_CHECKED_FROM:
            check_space(target, count * record_bytes(task, params))


@contextmanager
def _stdout() -> Iterator[BinaryIO]:
    """Standard output as a binary file; a failed write is a UsageError (exit 2)."""
    try:
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        raise
    except OSError as err:
        _silence_stdout()
        raise UsageError(f"cannot write to standard output: {err.strerror or err}") from None


def _prefixed(name: str, err: Exception) -> str:
    message = str(err)
    return message if message.startswith(f"{name}:") else f"{name}: {message}"


def _write_blocks(plan: BlockPlan, workers: int, handle: BinaryIO, bar: tqdm | _NoBar, written: list[int]) -> list[np.ndarray]:
    """Write every block, counting the records in written[0]; the hashes of the records' inputs, per block.
    (gengap.parallel is imported here: it brings multiprocessing.)"""
    from gengap.ground.parallel import write_blocks

    hashes = []
    with closing(write_blocks(plan, workers, handle)) as blocks:
        for block, inputs in blocks:
            hashes.append(inputs)
            bar.update(plan.block_length(block))
            written[0] += plan.block_length(block)
    handle.flush()
    return hashes


# -- check -----------------------------------------------------------------------------


def cmd_check(args: argparse.Namespace) -> int:
    from gengap.generators.reading import jsonl_lines
    from gengap.releases.checking import check_lines

    if args.file == "-":
        report = check_lines(line for _, line in jsonl_lines(sys.stdin.buffer))
    else:
        try:
            handle = open(args.file, "rb")
        except OSError as err:
            raise UsageError(f"cannot read {args.file}: {err.strerror}") from None
        with handle:
            report = check_lines(line for _, line in jsonl_lines(handle))
    for failure in report.failures:
        print(one_line(failure), file=sys.stderr)
    if report.failed > len(report.failures):
        print(f"... and {report.failed - len(report.failures)} more failures", file=sys.stderr)
    print(report.summary() if report.total else "no records to check")
    return 0 if report.ok else 1


# -- split and divergence ------------------------------------------------------------


def read_records(path: str, plain: ExternalFormat | None = None) -> list[dict[str, Any]]:
    """Records of a JSONL file (or - for stdin) for a split or a divergence. A file whose first
    record is an object without ``id`` holds plain records (gengap.splits.external, made into records
    as `plain` says; default task ``external``): UsageError listing every problem. Otherwise
    gengap records: UsageError naming the first line that cannot be read or is no such record
    (gengap.checking.pool_record_problem; when the first record looks plain but for its ``id``,
    the error says that the id made the file read as gengap records); `plain` must then be None."""
    from gengap.generators.jsonl import read_records as jsonl_records
    from gengap.generators.reading import jsonl_values
    from gengap.splits.external import ExternalDataError, ExternalFormat, id_hint, is_plain, plain_records

    label = "<stdin>" if path == "-" else path
    with _seekable_input(path) as handle:
        first = next((value for _, value in jsonl_values(handle)), None)
        handle.seek(0)
        if is_plain(first):
            try:
                return plain_records(handle, label, plain or ExternalFormat())
            except ExternalDataError as err:
                raise UsageError(str(err)) from None
        if plain is not None:
            raise UsageError(f"--task-name and --ngrams are for plain records (input and target, no id); {label} holds gengap records")
        hint = id_hint(first)
        return jsonl_records(label, UsageError, functools.partial(_pool_record_check, hint=hint), handle)


@contextmanager
def _seekable_input(path: str) -> Iterator[BinaryIO]:
    """The file at path, or standard input (-), to read twice: spooled to a temporary file
    when it cannot seek (a pipe)."""
    if path == "-":
        source: BinaryIO = sys.stdin.buffer
    else:
        try:
            source = open(path, "rb")
        except OSError as err:
            raise UsageError(f"{path}: cannot read it: {err.strerror or err}") from None
    try:
        if source.seekable():
            yield source
            return
        with tempfile.SpooledTemporaryFile(max_size=STDIN_IN_MEMORY) as spool:
            try:
                shutil.copyfileobj(source, spool)
            except OSError as err:  # beyond STDIN_IN_MEMORY the spool is a file in TMPDIR
                raise UsageError(
                    f"cannot spool standard input to the temporary directory {tempfile.gettempdir()!r}: {err.strerror or err} "
                    "(set TMPDIR to a directory with room, or give a file)"
                ) from None
            spool.seek(0)
            yield spool  # type: ignore[misc]
    finally:
        if source is not sys.stdin.buffer:
            source.close()


def _pool_record_check(record: Any, where: str, hint: str = "") -> None:
    from gengap.releases.checking import pool_record_problem

    problem = pool_record_problem(record)
    if problem:
        raise UsageError(f"{where}: {problem}{hint}")


def cmd_split(args: argparse.Namespace) -> int:
    from gengap.generators import dumps_record
    from gengap.ground.shortfalls import add_warnings, shortfall_warnings
    from gengap.splits import SplitError, get_strategy, parse_options, split
    from gengap.splits.cues import apply_cue, cue_summary, parse_cue
    from gengap.splits.external import ExternalDataError, make_format
    from gengap.splits.mcd import reporting_steps

    try:
        strategy = get_strategy(args.strategy)
        options = parse_options(strategy, parse_key_values(args.option, "--option"))
        cue = parse_cue(args.cue) if args.cue is not None else None
    except SplitError as err:
        raise UsageError(str(err)) from None
    plain = None
    if args.task_name is not None or args.ngrams is not None:
        try:
            plain = make_format(args.task_name or "external", args.ngrams or 0)
        except ExternalDataError as err:
            raise UsageError(str(err)) from None
    if args.seed < 0:
        raise UsageError(f"--seed must be non-negative, got {args.seed}")
    inputs = [args.file] if args.file != "-" else []
    check_output_directory(args.out, args.force, inputs, SPLIT)
    records = read_records(args.file, plain)
    try:
        if strategy.name == "mcd":  # the one long-running strategy: a progress bar over its steps (lines elsewhere)
            steps = [0]

            def step(n: int) -> None:
                bar.update(n)
                steps[0] += n

            with _progress(options.steps, "step", "mcd search") as bar, reporting_steps(step), \
                    Ticker(lambda: f"mcd search: {steps[0]:,} of {options.steps:,} steps"):
                result = split(records, strategy.name, options, args.seed)
        else:
            result = split(records, strategy.name, options, args.seed)
        if cue is not None:  # shortcut cues on the finished parts
            result = apply_cue(result, cue, args.seed)
    except SplitError as err:
        raise UsageError(f"{strategy.name}: {err}") from None
    from gengap.splits.tasks import pool_tasks

    # everything said after publishing is worked out first: once the directory is there, the command has succeeded
    warnings = add_warnings(result.report, shortfall_warnings(result.report))
    several = len(pool_tasks(records)) > 1  # a multi-task pool: an input repeats only within its task
    keyed = [{"input": f"{r['task']}\x00{r['input']}"} for r in records] if several else records
    repeats = repeat_warning(*repeated([record_input_keys(keyed)]))  # stderr only: report.json is unchanged
    report = result.report
    summary = (
        f"{strategy.name}: train {report['sizes']['train']}, validation {report['sizes']['validation']}, "
        f"test {report['sizes']['test']}; atom divergence {_fmt(report['atom_divergence'])}, "
        f"compound divergence {_fmt(report['compound_divergence'])}; overlap {report['overlap']} -> {args.out}"
    )
    cued = cue_summary(report["cue"]) if "cue" in report else None
    parts = {f"{part}.jsonl": "".join(dumps_record(r) + "\n" for r in rows).encode() for part, rows in result.parts().items()}
    files = {name: {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data), "rows": data.count(b"\n")} for name, data in parts.items()}
    report_text = sealed_json_text({**result.report, "files": files})  # hashes and seal prove the directory gengap's (gengap.ownership)
    with atomic_directory(args.out, args.force, inputs, SPLIT) as staging:
        for name, data in parts.items():
            (staging / name).write_bytes(data)
        (staging / "report.json").write_text(report_text, encoding="utf-8")
    for warning in [*warnings, *([repeats] if repeats else [])]:
        print(f"gengap: warning: {one_line(warning)}", file=sys.stderr)
    print(summary)
    if cued is not None:
        print(cued)
    return 0


def cmd_divergence(args: argparse.Namespace) -> int:
    from gengap.splits.atoms import CompoundDefinition
    from gengap.splits.base import divergence_report
    from gengap.splits.local_structures import LOCAL_SIZE, LOCAL_SIZE_MAX

    size = LOCAL_SIZE if args.local_size is None else args.local_size
    if args.local_size is not None and args.compounds != "local":
        raise UsageError("--local-size sizes local structures: give it with --compounds local")
    if not 2 <= size <= LOCAL_SIZE_MAX:
        raise UsageError(f"--local-size must be in 2..{LOCAL_SIZE_MAX}, got {size}")
    train, test = read_records(args.train), read_records(args.test)
    if not train or not test:
        raise UsageError("both files need at least one record")
    figures = divergence_report(train, test, args.abstract_lexical, CompoundDefinition(args.compounds, size))
    if args.json:
        sys.stdout.write(json_text(figures))
    else:
        print(f"atom_divergence {_fmt(figures['atom_divergence'])}")
        print(f"compound_divergence {_fmt(figures['compound_divergence'])}")
        print(f"unseen_atoms {figures['unseen_atom_count']}")
    return 0


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


# -- release and verify ----------------------------------------------------------------


def _default_workers() -> int:
    return max(1, min(8, os.cpu_count() or 1))


def default_release_out(suite: dict[str, Any], embedded: bool) -> str:
    """Where `gengap release` writes without --out: ./release for the embedded default suite (the
    README's command 1), ./release-NAME-VERSION for any other suite (a file or a shipped name)."""
    return "release" if embedded else f"release-{suite['name']}-{suite['version']}"


def cmd_release(args: argparse.Namespace) -> int:
    from gengap.releases.release import RELEASE, ReleaseError, render_in_processes, write_release
    from gengap.releases.suite import SuiteError, load_suite, suite_data_bytes
    from gengap.splits import SplitError

    if args.ray is not None and args.suite is None and (args.ray.endswith((".yaml", ".yml")) or Path(args.ray).is_file()):
        args.suite, args.ray = args.ray, ""  # `release --ray SUITE.yaml`: the suite, on a local runtime
    from gengap.releases.suite import find_suite, is_shipped_suite, shipped_suite_lines

    if args.list:
        if args.suite is not None:
            raise UsageError("--list takes no SUITE: it lists the suites shipped with gengap, which `gengap release NAME` builds")
        print("\n".join(shipped_suite_lines()))
        return 0
    if args.suite is not None:
        try:
            args.suite = find_suite(args.suite)  # a file, or a shipped suite's name (gengap/suites/NAME.yaml)
        except SuiteError as err:
            raise UsageError(str(err)) from None
    workers = args.workers if args.workers is not None else _default_workers()
    if workers < 1:
        raise UsageError(f"--workers must be at least 1, got {workers}")
    try:
        limit = RecordLimit.from_environment(args.max_records, args.max_total_records)
        suite = load_suite(args.suite, limit)
        if args.out is None:
            args.out = default_release_out(suite, args.suite is None)
        check_disk_space(suite_data_bytes(suite), args.out)
    except (SuiteError, LimitError) as err:
        raise UsageError(str(err)) from None
    inputs = [args.suite] if args.suite else []
    check_output_directory(args.out, args.force, inputs, RELEASE)
    renderer = _ray_renderer(args.ray) if args.ray is not None else render_in_processes
    started = time.perf_counter()
    total = len(suite["entries"])
    finished: list[str] = []
    with _progress(total, "config", suite["name"], unit_scale=False) as bar:

        def step() -> str:  # configs finish in suite order: the next one is the one waited for
            if len(finished) < total:
                return f"building {suite['entries'][len(finished)]['name']}"
            return "writing the card, plots and checksums"

        def done(name: str) -> None:
            finished.append(name)
            bar.set_postfix_str(step(), refresh=False)
            bar.update(1)
            if bar.disable:  # not a terminal: one line per config instead of a bar
                elapsed = time.perf_counter() - started
                print(f"gengap: [{len(finished)}/{total}] {name} ({elapsed:.1f} s)", file=sys.stderr, flush=True)

        def waiting() -> str:
            return f"[{len(finished)}/{total}] " + ("still " + step() if len(finished) < total else step())

        def redraw() -> None:  # a terminal: the bar moves at each finished config; between them its time, ETA and name stay current
            bar.set_postfix_str(step())

        bar.set_postfix_str(step())
        try:
            with Ticker(waiting, redraw=redraw):
                manifest = write_release(suite, args.out, workers=workers, force=args.force, on_done=done, inputs=inputs, renderer=renderer)
        except (ReleaseError, SplitError) as err:
            raise UsageError(str(err)) from None
    rows = sum(info["rows"] for info in manifest["data_files"].values())
    warned = [(config["name"], warning) for config in manifest["configs"] for warning in config["report"].get("warnings") or []]
    shipped = args.suite is None or is_shipped_suite(args.suite)
    if not shipped or args.show_warnings:  # a suite's own author can act on them; a shipped suite's are in its card
        for name, warning in warned:
            print(f"gengap: warning: {one_line(name)}: {one_line(warning)}", file=sys.stderr)
    where = "on stderr and in the card" if not shipped or args.show_warnings else "a shipped suite's, in the card; --show-warnings prints them"
    noted = f"; {counted(len(warned), 'warning')} ({where})" if warned else ""
    print(
        f"released {manifest['name']} {manifest['version']}: {counted(len(manifest['configs']), 'config')}, "
        f"{counted(rows, 'record')}, fingerprint {manifest['fingerprint'][:16]} -> {args.out} "
        f"({time.perf_counter() - started:.1f} s){noted}"
    )
    return 0


def _ray_renderer(address: str) -> Renderer:
    """Entries rendered as Ray tasks: on the cluster at address, or locally ("")."""
    from gengap.releases.release_ray import render_on_ray

    return functools.partial(render_on_ray, address=address or None)


@contextmanager
def run_lock(out: str) -> Iterator[None]:
    """Hold the lock of the run directory out for the block (gengap.locking: a run has one
    writer); UsageError at once when another process holds it. A missing parent directory is
    made first (the run would make it)."""
    from gengap.ground.locking import destination_lock

    target = Path(os.path.abspath(out))
    target.parent.mkdir(parents=True, exist_ok=True)
    with destination_lock(target):
        yield


def suite_split(path: str, config: str) -> SplitResult:
    """The split of one entry of a suite config, built in memory (for `gengap train --suite`)."""
    from gengap.releases.release import build_entry
    from gengap.releases.suite import SuiteError, load_suite

    from gengap.releases.suite import find_suite

    try:
        suite = load_suite(find_suite(path))
    except SuiteError as err:
        raise UsageError(str(err)) from None
    for entry in suite["entries"]:
        if entry["name"] == config:
            return build_entry(entry, suite["seed"])
    names = ", ".join(e["name"] for e in suite["entries"])
    raise UsageError(f"suite {suite['name']} has no config {config!r}; it has: {names}")


def cmd_verify(args: argparse.Namespace) -> int:
    from gengap.releases.verify import RebuildRefused, parse_fingerprint, regenerate_and_compare, verify_release

    if not Path(args.dir).is_dir():
        raise UsageError(f"{args.dir} is not a directory")
    expect = None
    if args.expect_fingerprint is not None:
        expect = parse_fingerprint(args.expect_fingerprint)
        if expect is None:
            raise UsageError(f"--expect-fingerprint {args.expect_fingerprint[:80]!r} is not sha256:<64 hex digits>")
    expect_sums = None
    if args.expect_sums is not None:
        expect_sums = parse_fingerprint(args.expect_sums)
        if expect_sums is None:
            raise UsageError(f"--expect-sums {args.expect_sums[:80]!r} is not sha256:<64 hex digits>")
    if args.workers is not None and args.workers < 1:
        raise UsageError(f"--workers must be at least 1, got {args.workers}")
    fresh = os.path.lexists(Path(args.dir) / "fresh.json")
    if fresh != (args.release is not None):
        raise UsageError(f"{args.dir} is a fresh test part: give --release RELEASE, the release it was drawn from" if fresh
                         else f"--release is for a fresh test part (a directory holding fresh.json); {args.dir} holds none")
    if fresh:
        if expect_sums is not None:
            raise UsageError("--expect-sums is for a release, not a fresh test part")
        return verify_fresh_part(args, expect)
    if args.regenerate:
        try:
            limit = RecordLimit.from_environment(args.max_records, args.max_total_records)
            with Ticker(lambda: f"verify: still rebuilding {args.dir} from its manifest"):
                report = regenerate_and_compare(args.dir, workers=args.workers or _default_workers(), limit=limit, expect=expect, expect_sums=expect_sums)
        except (LimitError, RebuildRefused) as err:
            raise UsageError(str(err)) from None
    else:
        with Ticker(lambda: f"verify: still checking {args.dir}"):
            report = verify_release(args.dir, expect=expect, expect_sums=expect_sums)
    for line in report.lines():
        print(one_line(line), file=sys.stderr)
    for note in report.notes:
        print(f"note: {one_line(note)}", file=sys.stderr)
    if report.ok:
        extra = "; it matches a rebuild from its manifest" if args.regenerate else ""
        print(f"verified {report.checked} files and {report.records:,} records in {args.dir}{extra}")
        print(f"fingerprint sha256:{report.fingerprint}" + (" (the expected one)" if expect else ""))
        if expect_sums:
            print(f"SHA256SUMS sha256:{report.sums_sha256} (the expected one: every file, cards and license included)")
        return 0
    print(f"verification failed: {counted(len(report.lines()), 'problem')} in {args.dir}")
    if report.fingerprint:
        print(f"fingerprint claimed by its manifest: sha256:{report.fingerprint}")
    return 1


# -- export ----------------------------------------------------------------------------


def cmd_export(args: argparse.Namespace) -> int:
    from gengap.generators.process_labels import Corruption, ProcessLabelError
    from gengap.harnesses.export import VERL_VERSION, export_release, verl_reward_overrides
    from gengap.harnesses.prompts import MAX_SHOTS, Pause

    if not 0 <= args.shots <= MAX_SHOTS:
        raise UsageError(f"--shots must be in 0..{MAX_SHOTS}, got {args.shots}")
    if args.seed < 0:
        raise UsageError(f"--seed must be non-negative, got {args.seed}")
    try:
        pause = Pause(args.pause, args.pause_per_token, args.pause_token)
    except ValueError as err:
        raise UsageError(f"--pause: {err}") from None
    if (args.corrupt_share is not None or args.corrupt_seed is not None) and args.to != "prm":
        raise UsageError("--corrupt-share and --corrupt-seed are for --to prm")
    try:
        corruption = Corruption(args.corrupt_share or 0.0, args.corrupt_seed or 0) if args.to == "prm" else None
    except ProcessLabelError as err:
        raise UsageError(str(err)) from None
    release = Path(args.release)
    if not (release / "data").is_dir():
        raise UsageError(f"{args.release} is not a release (no data/ directory)")
    inputs = [args.release]
    check_output_directory(args.out, args.force, inputs, EXPORT)
    with atomic_directory(args.out, args.force, inputs, EXPORT) as staging:
        manifest = export_release(
            release, staging, args.to, shots=args.shots, seed=args.seed, system=args.system, answer_format=args.answer_format,
            configs=args.config or None, pause=pause, corruption=corruption,
        )
    rows = sum(count for entry in manifest["configs"] for count in entry["files"].values())
    for part in manifest["skipped"]:
        print(f"gengap: warning: {one_line(part)} is empty: left out of the export", file=sys.stderr)
    print(f"exported {manifest['release']['name']}: {counted(len(manifest['configs']), 'config')}, {counted(rows, 'row')} as {args.to} -> {args.out}")
    if args.to == "lm-eval":
        print(f"run: lm_eval --include_path {args.out} --tasks {manifest['group']} --model hf --model_args pretrained=MODEL_DIR"
              f" (a base model that answers at once; a model that reasons first or writes <think> tags, an instruct or reasoning"
              f" model: --tasks {manifest['groups']['cot']}, answers read from <answer> tags)")
    elif args.to == "verl":
        print(f"reward (verl {VERL_VERSION} main_ppo): {verl_reward_overrides(Path(args.out) / 'reward.py')}")
    return 0


# -- entry point -----------------------------------------------------------------------


def _cmd_sweep(args: argparse.Namespace) -> int:
    from gengap.commands.sweep_command import cmd_sweep

    return cmd_sweep(args)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="gengap", description="Synthetic generalization benchmarks.")
    parser.add_argument("--version", action="version", version=f"gengap {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = commands.add_parser("list", help="list tasks with their parameters and levels, then the split strategies with their options")
    p.add_argument("--json", action="store_true", help="machine-readable output (the tasks)")
    p.set_defaults(func=cmd_list)

    p = commands.add_parser("lexicon", help="the words lexicon K of a task writes its lexical roles with (class, role, word)")
    p.add_argument("task", help="task name (one with a lexicon parameter: scan, cogs, cogs_like, pcfg_set, fact_*, letter_analogy)")
    p.add_argument("k", type=int, help="the lexicon (0: the task's own words)")
    p.add_argument("--json", action="store_true", help="class -> role -> word as JSON")
    p.set_defaults(func=cmd_lexicon)

    p = commands.add_parser("generate", help="generate examples of one task as JSONL")
    p.add_argument("task", help="task name (see `gengap list`)")
    p.add_argument("--n", type=int, help="number of examples")
    p.add_argument("--all", action="store_true", help="every example of a finite task, once each (e.g. scan)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--level", type=int, help="difficulty level 1..10 (parameters from the level)")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="set a task parameter (repeatable; applied after --level)")
    p.add_argument("--workers", type=int, default=1, help="worker processes (output is identical for any count)")
    p.add_argument("--out", help="output file (written atomically); default stdout")
    p.add_argument("--force", action="store_true", help="replace an existing regular file at --out")
    p.add_argument("--max-records", type=int, metavar="N", help=f"most records --n or --all may ask for (default {DEFAULT_MAX_RECORDS:,}; env {ENVIRONMENT_VARIABLE})")
    p.set_defaults(func=cmd_generate)

    p = commands.add_parser("check", help="validate records and re-check every target")
    p.add_argument("file", help="JSONL file, or - for stdin")
    p.set_defaults(func=cmd_check)

    p = commands.add_parser("split", help="split a JSONL pool into train/validation/test with a report")
    p.add_argument("file", help="JSONL pool, or - for stdin")
    p.add_argument("--strategy", required=True, help="iid, length, difficulty, holdout, category, facts, rule_holdout, task_holdout, local_holdout, mcd or gotu")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="strategy option (repeatable)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--cue", metavar="train=RATE,test=RATE",
                   help="shortcut cue token naming the answer with these probabilities (tasks with a small answer set)")
    p.add_argument("--out", required=True, help="output directory (written atomically)")
    p.add_argument("--force", action="store_true", help="replace an existing split directory (one holding report.json)")
    p.add_argument("--task-name", metavar="NAME", help="plain records (input, target; no id): their task name (default external)")
    p.add_argument("--ngrams", type=int, metavar="N", help="plain records: compounds are the input-token n-grams of 2..N tokens (2..8)")
    p.set_defaults(func=cmd_split)

    p = commands.add_parser("divergence", help="atom and compound divergence of two JSONL files")
    p.add_argument("train", help="train JSONL")
    p.add_argument("test", help="test JSONL")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--abstract-lexical", action="store_true", help="compounds with lexical items abstracted (structure only)")
    p.add_argument("--compounds", choices=("derivation", "local"), default="derivation",
                   help="what compounds are: sub-derivations of 2-5 rules (default) or local structures (gengap.splits.local_structures)")
    p.add_argument("--local-size", type=int, metavar="K", help="--compounds local: most nodes of a local structure (2..6; default that of splits, 3)")
    p.set_defaults(func=cmd_divergence)

    p = commands.add_parser("release", help="build a dataset release from a suite config (default: gengap-core)")
    p.add_argument("suite", nargs="?", help="suite config YAML, or the name of a shipped suite such as cfq-like (--list shows them; default: the embedded gengap-core suite)")
    p.add_argument("--list", action="store_true", help="list the suites shipped with gengap, by the names SUITE takes, and exit")
    p.add_argument("--out", help="output directory, written atomically (default: ./release for the default suite, "
                   "./release-NAME-VERSION for any other, so one release never replaces another's)")
    p.add_argument("--workers", type=int, help="worker processes (default: CPU count; output is identical); with --ray and no address, the local runtime's CPUs")
    p.add_argument("--force", action="store_true", help="replace an existing release")
    p.add_argument("--show-warnings", action="store_true", help="print the split reports' warnings of a shipped suite too (a suite "
                   "file's are always printed; every release's are in its card)")
    p.add_argument("--ray", nargs="?", const="", metavar="ADDRESS", help="build configs (and blocks of large pools) as Ray tasks: on the cluster at ADDRESS, or a local runtime; the bytes are the same")
    p.add_argument(
        "--max-records",
        type=int,
        metavar="N",
        help=f"most records per config (default {DEFAULT_MAX_RECORDS:,}, or fewer if the machine's memory cannot hold them; env {ENVIRONMENT_VARIABLE})",
    )
    p.add_argument(
        "--max-total-records",
        type=int,
        metavar="N",
        help=f"most records of all configs together (default {DEFAULT_MAX_TOTAL_RECORDS:,}; env {TOTAL_ENVIRONMENT_VARIABLE})",
    )
    p.set_defaults(func=cmd_release)

    p = commands.add_parser("export", help="export a release for lm-evaluation-harness, verl, chat fine-tuning (TRL) or process reward models")
    p.add_argument("release", metavar="RELEASE", help="release directory")
    p.add_argument("--to", required=True, choices=FORMATS,
                   help="lm-eval (task directory), verl (Parquet + reward.py), chat (JSONL of messages) or prm (process labels of traced configs, TRL's stepwise supervision)")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory (written atomically)")
    p.add_argument(
        "--shots", type=int, default=0, metavar="K",
        help="examples from the train part in every prompt (default 0); lm-eval: the tasks' default num_fewshot, drawn by lm-eval from the train part",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the k-shot draws (default 0)")
    p.add_argument("--config", action="append", metavar="NAME", help="export only this config (repeatable; default all)")
    p.add_argument("--system", action="store_true", help="chat prompts (chat, verl): the instruction as a system message (default: in the first user message)")
    p.add_argument(
        "--answer-format", choices=ANSWER_FORMATS, default="line",
        help="chat prompts (chat, verl): the answer format asked for and used in the replies: line ('Answer: ...', default), tags (<answer>...</answer>), think (<think>...</think> then tags), boxed",
    )
    p.add_argument("--pause", type=int, default=0, metavar="K", help="K filler tokens after every query's input (pause tokens; default 0)")
    p.add_argument("--pause-per-token", type=int, default=0, metavar="K", help="K more filler tokens per input token (the export side of --computation-steps K)")
    p.add_argument("--pause-token", default="<pause>", metavar="TOKEN", help="the filler token (default <pause>)")
    p.add_argument("--corrupt-share", type=float, metavar="S", help="prm: share of each trace's steps made wrong (0..1, default 0)")
    p.add_argument("--corrupt-seed", type=int, metavar="N", help="prm: seed of the corrupted steps (default 0)")
    p.add_argument("--force", action="store_true", help="replace an existing export (a directory holding gengap-export.json)")
    p.set_defaults(func=cmd_export)

    add_baseline_commands(commands)
    commands.choices["train"].set_defaults(build_suite_split=suite_split, heartbeat=Ticker, run_lock=run_lock)
    commands.choices["report"].set_defaults(report_outputs=atomic_outputs)

    p = commands.add_parser("sweep", help="train baselines over configs x encodings x presets x seeds on Ray (local runtime or a cluster)")
    p.add_argument("sweep", metavar="SWEEP.yaml", help="sweep file, or the name of a shipped sweep (gpu-protocol)")
    p.add_argument("--out", required=True, metavar="DIR", help="sweep directory: runs/, sweep.json, report.md (re-run to resume)")
    p.add_argument("--address", help="address of a running Ray cluster (e.g. auto, or ray://HEAD:10001); default: a local runtime")
    p.add_argument("--num-cpus", type=int, help="CPUs of the local runtime (default: all of this machine's)")
    p.set_defaults(func=_cmd_sweep)

    p = commands.add_parser(
        "verify",
        help="check a release: checksums, manifest, the fingerprint in its card files, every record; print the fingerprint",
    )
    p.add_argument("dir", help="release directory")
    p.add_argument("--regenerate", action="store_true", help="also rebuild it from manifest.json and compare byte for byte (proves the data is what its suite and seeds give)")
    p.add_argument("--workers", type=int, help="worker processes for --regenerate")
    p.add_argument(
        "--expect-fingerprint",
        metavar="SHA256",
        help="the fingerprint a citation gives (sha256:<hex> or <hex>): fail unless the release has it (it covers the data files)",
    )
    p.add_argument(
        "--expect-sums",
        metavar="SHA256",
        help="the sha256 of the release's SHA256SUMS a citation gives (`sha256sum SHA256SUMS`): fail unless it matches; it pins every "
             "file, the manifest (license, terms), the cards and plots as well as the data",
    )
    p.add_argument("--max-records", type=int, metavar="N", help=f"--regenerate: most records per config (as for release; env {ENVIRONMENT_VARIABLE})")
    p.add_argument("--max-total-records", type=int, metavar="N", help=f"--regenerate: most records of all configs together (env {TOTAL_ENVIRONMENT_VARIABLE})")
    p.add_argument("--release", metavar="RELEASE",
                   help="DIR is a fresh test part (gengap fresh): check it against this release; --regenerate then redraws it")
    p.set_defaults(func=cmd_verify)

    add_author_commands(commands)
    return parser


def _io_error(err: OSError) -> str:
    """One line for a failed read or write: the path (when known) and the reason."""
    reason = err.strerror or str(err)
    if err.filename is not None:
        return f"{err.filename}: {reason}"
    return f"input/output error: {reason}"


def _flush_stdout() -> None:
    """Flush stdout now, so that a full disk or a closed pipe is an error and not a traceback at exit."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as err:
        _silence_stdout()
        raise UsageError(f"cannot write to standard output: {err.strerror or err}") from None


def _silence_stdout_if_broken() -> None:
    """Silence stdout when flushing it fails (the error may have come from it)."""
    try:
        sys.stdout.flush()
    except OSError:
        _silence_stdout()


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _interruption(err: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C or SIGTERM during whose cleanup `err` was raised, if any (e.g. a worker
    pipe broken while the pool shuts down): the run was interrupted, whatever came after."""
    seen: set[int] = set()
    cause = err.__context__
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return cause
        seen.add(id(cause))
        cause = cause.__context__
    return None


def main(argv: Sequence[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):  # a path or record that is not text is written escaped, never a UnicodeEncodeError
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    parser = build_parser()
    if not (sys.argv[1:] if argv is None else list(argv)):  # `gengap` alone: the usage and the commands, as a usage error
        parser.print_help(sys.stderr)
        return 2
    with terminate_as_interrupt():
        try:
            args = parser.parse_args(argv)
            try:
                code = args.func(args)
            except SystemExit as err:  # code gengap runs (a plugin's task) cannot decide its exit status
                raise UsageError(f"the command was ended by sys.exit({err.code!r}) in code it ran (a plugin's?): gengap does not take that as its result") from None
            _flush_stdout()
            return code
        except (UsageError, BaselineError, HarnessError, PluginError, TaskDefinitionError, NonFiniteError) as err:  # a task module's defect: one line too
            print(f"gengap: error: {one_line(err)}", file=sys.stderr)
            return int(getattr(err, "exit_code", 2))  # 1 for a damaged run file (gengap.baselines.errors.RunFileError)
        except OSError as err:
            interruption = _interruption(err)
            if interruption is not None and was_terminated(interruption):
                print("gengap: terminated", file=sys.stderr)
                return TERMINATION_EXIT_CODE
            if interruption is not None:
                print("gengap: interrupted", file=sys.stderr)
                return INTERRUPT_EXIT_CODE
            if isinstance(err, BrokenPipeError):
                _silence_stdout()
                return 0
            _silence_stdout_if_broken()
            print(f"gengap: error: {one_line(_io_error(err))}", file=sys.stderr)
            return 2
        except MemoryError:
            print("gengap: error: out of memory (see the record limits in the README)", file=sys.stderr)
            return 2
        except KeyboardInterrupt as err:
            if was_terminated(err):
                print("gengap: terminated", file=sys.stderr)
                return TERMINATION_EXIT_CODE
            print("gengap: interrupted", file=sys.stderr)
            return INTERRUPT_EXIT_CODE


if __name__ == "__main__":
    sys.exit(main())
