"""The `gengap` command line: list, generate, check."""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import nullcontext
from typing import Any, BinaryIO, Sequence

from tqdm import tqdm

from generators import BlockPlan, ParamError, UnknownTaskError, batch_to_jsonl, get_task, task_names
from gengap import __version__
from gengap.checking import check_lines
from gengap.errors import UsageError
from gengap.files import atomic_output, check_writable_file
from gengap.parallel import render_blocks


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def _progress(total: int, unit: str, desc: str) -> tqdm:
    return tqdm(total=total, unit=unit, desc=desc, file=sys.stderr, disable=not sys.stderr.isatty(), unit_scale=True)


# -- list ------------------------------------------------------------------------------


def cmd_list(args: argparse.Namespace) -> int:
    tasks = [get_task(name).describe() for name in task_names()]
    if args.json:
        print(json.dumps(tasks, indent=2))
        return 0
    for task in tasks:
        print(f"{task['name']}  [{task['family']}]  {task['description']}")
        for p in task["parameters"]:
            bounds = f" range {p['range'][0]}..{p['range'][1]}" if "range" in p else ""
            choices = f" one of {', '.join(p['choices'])}" if "choices" in p else ""
            print(f"    {p['name']} = {p['default']!r}{bounds}{choices}  {p['doc']}")
        print(f"    levels: {_levels_summary(task['levels'])}")
    return 0


def _levels_summary(levels: dict[str, dict[str, Any]]) -> str:
    """Levels with only the parameters that change between levels."""
    rows = list(levels.values())
    varying = [k for k in rows[0] if len({repr(r[k]) for r in rows}) > 1]
    if not varying:
        return "all levels use the defaults"
    return "; ".join(f"{k}: " + ",".join(f"{name}={row[name]}" for name in varying) for k, row in levels.items())


# -- generate --------------------------------------------------------------------------


def parse_param_options(options: Sequence[str]) -> dict[str, str]:
    values: dict[str, str] = {}
    for option in options:
        key, sep, value = option.partition("=")
        if not sep or not key:
            raise UsageError(f"--param {option!r} is not of the form key=value")
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
        raw = parse_param_options(args.param)
        typed = {k: task.params_type.parse_value(k, v) for k, v in raw.items()}
        params = task.make_params(typed, level=args.level)
    except ParamError as err:
        message = str(err)
        raise UsageError(message if message.startswith(task.name) else f"{task.name}: {message}") from None
    if args.out:
        check_writable_file(args.out)
    target = atomic_output(args.out) if args.out else nullcontext(sys.stdout.buffer)
    if args.all:
        batch = task.enumerate(params)
        if batch is None:
            raise UsageError(f"{task.name} is not a finite task: use --n N")
        with target as handle:
            handle.write(batch_to_jsonl(batch, task.name))
        return 0
    plan = BlockPlan(task.name, params, args.n, args.seed)
    with target as handle, _progress(args.n, "ex", task.name) as bar:
        _write_blocks(plan, args.workers, handle, bar)
    return 0


def _write_blocks(plan: BlockPlan, workers: int, handle: BinaryIO, bar: tqdm) -> None:
    for block, data in enumerate(render_blocks(plan, workers)):
        handle.write(data)
        bar.update(plan.block_length(block))
    handle.flush()


# -- check -----------------------------------------------------------------------------


def cmd_check(args: argparse.Namespace) -> int:
    if args.file == "-":
        report = check_lines(sys.stdin.buffer)
    else:
        try:
            handle = open(args.file, "rb")
        except OSError as err:
            raise UsageError(f"cannot read {args.file}: {err.strerror}") from None
        with handle:
            report = check_lines(handle)
    for failure in report.failures:
        print(failure, file=sys.stderr)
    if report.failed > len(report.failures):
        print(f"... and {report.failed - len(report.failures)} more failures", file=sys.stderr)
    print(report.summary() if report.total else "no records to check")
    return 0 if report.ok else 1


# -- entry point -----------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="gengap", description="Synthetic generalization benchmarks.")
    parser.add_argument("--version", action="version", version=f"gengap {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = commands.add_parser("list", help="list tasks with their parameters and levels")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_list)

    p = commands.add_parser("generate", help="generate examples of one task as JSONL")
    p.add_argument("task", help="task name (see `gengap list`)")
    p.add_argument("--n", type=int, help="number of examples")
    p.add_argument("--all", action="store_true", help="every example of a finite task, once each (e.g. scan)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--level", type=int, help="difficulty level 1..10 (parameters from the level)")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="set a task parameter (repeatable; applied after --level)")
    p.add_argument("--workers", type=int, default=1, help="worker processes (output is identical for any count)")
    p.add_argument("--out", help="output file (written atomically); default stdout")
    p.set_defaults(func=cmd_generate)

    p = commands.add_parser("check", help="validate records and re-check every target")
    p.add_argument("file", help="JSONL file, or - for stdin")
    p.set_defaults(func=cmd_check)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        return args.func(args)
    except UsageError as err:
        print(f"gengap: error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("gengap: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
