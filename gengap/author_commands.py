"""The ``fresh`` subcommand (tools for benchmark authors), for the gengap CLI to mount, and the
verification of a fresh part that ``gengap verify DIR --release RELEASE`` runs.

``add_commands(subparsers)`` adds the commands; each sets ``func``. This module imports only the
standard library and gengap's CLI helpers at start-up: the release spine is imported when a
command runs (tests/test_startup.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from gengap.errors import UsageError, one_line
from gengap.files import check_output_directory
from gengap.limits import LimitError, RecordLimit
from gengap.progress import Ticker


def cmd_fresh(args: argparse.Namespace) -> int:
    from gengap.fresh import FRESH, FreshError, draw_fresh, write_fresh
    from gengap.release_view import ReleaseReadError
    from gengap.splits import SplitError

    if args.n < 1:
        raise UsageError(f"--n must be at least 1, got {args.n}")
    if args.seed < 0:
        raise UsageError(f"--seed must be non-negative, got {args.seed}")
    try:
        limit = RecordLimit.from_environment()
    except LimitError as err:
        raise UsageError(str(err)) from None
    if args.n > limit.max_records:
        raise UsageError(f"--n {args.n:,} is more than the limit of {limit.max_records:,} records")
    if not Path(args.release).is_dir():
        raise UsageError(f"{args.release} is not a directory")
    inputs = [args.release]
    check_output_directory(args.out, args.force, inputs, FRESH)
    try:
        with Ticker(lambda: f"fresh: still drawing {args.n:,} test records for {args.config}"):
            part = draw_fresh(args.release, args.config, args.n, args.seed)
    except (FreshError, ReleaseReadError, SplitError) as err:
        raise UsageError(str(err)) from None
    write_fresh(part, args.out, args.force, inputs)
    report = part.report
    for warning in report["warnings"]:
        print(f"gengap: warning: {one_line(report['config'])}: {one_line(warning)}", file=sys.stderr)
    print(_fresh_summary(report, args.out))
    return 0


def _figure(value: Any) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _fresh_summary(report: dict[str, Any], out: str) -> str:
    """One line: what was drawn, from which release, and its figures beside the cited part's."""
    fresh, cited = report["fresh"], report["cited"]
    unseen = [(part["novelty"] or {}).get("with_unseen_compound") for part in (fresh, cited)]
    return (
        f"fresh {report['config']}: {report['file']['rows']:,} test records, none in the release "
        f"{report['release']['fingerprint'][:23]}... (seed {report['seed']}, derived seed {report['derived_seed']}); "
        f"compound divergence from train {_figure(fresh['compound_divergence'])} (cited {_figure(cited['compound_divergence'])}), "
        f"with an unseen compound {_figure(unseen[0])} (cited {_figure(unseen[1])}) -> {out}"
    )


def verify_fresh_part(args: argparse.Namespace, expect: str | None) -> int:
    """``gengap verify DIR --release RELEASE``: DIR is a fresh test part drawn from RELEASE."""
    from gengap.fresh_verify import verify_fresh

    if not Path(args.release).is_dir():
        raise UsageError(f"--release {args.release} is not a directory")
    with Ticker(lambda: f"verify: still checking the fresh part {args.dir}"):
        report = verify_fresh(args.dir, args.release, regenerate=args.regenerate, expect=expect)
    for line in report.lines():
        print(one_line(line), file=sys.stderr)
    if report.ok:
        extra = "; it matches a redraw from its seed" if args.regenerate else ""
        print(f"verified the fresh test part {args.dir}: {report.records:,} records, none in the release "
              f"sha256:{report.fingerprint}; its report matches its records{extra}")
        return 0
    print(f"verification failed: {len(report.lines())} problems in {args.dir}")
    return 1


def add_commands(subparsers: Any) -> None:
    """Add ``fresh`` to the gengap subcommands."""
    p = subparsers.add_parser("fresh", help="draw a fresh test part for a released config: same rule, a new seed, no input of the release")
    p.add_argument("release", metavar="RELEASE", help="release directory")
    p.add_argument("--config", required=True, help="the config whose test part is drawn afresh")
    p.add_argument("--n", type=int, required=True, help="records of the fresh part")
    p.add_argument("--seed", type=int, required=True,
                   help="the draw (any non-negative integer; its derived seed is in the report): whoever knows it can redraw the part")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory: test.jsonl and fresh.json (written atomically)")
    p.add_argument("--force", action="store_true", help="replace an existing fresh test part (a directory holding fresh.json)")
    p.set_defaults(func=cmd_fresh)
