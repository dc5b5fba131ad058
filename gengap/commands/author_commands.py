"""The ``fresh`` and ``audit`` subcommands (tools for benchmark authors), for the gengap CLI to
mount, and the verification of a fresh part that ``gengap verify DIR --release RELEASE`` runs.

``add_commands(subparsers)`` adds the commands; each sets ``func``. This module imports only the
standard library and gengap's CLI helpers at start-up: the release spine is imported when a
command runs (tests/test_startup.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from gengap.ground.errors import UsageError, one_line
from gengap.ground.files import atomic_output, check_output_directory, check_writable_file
from gengap.ground.limits import LimitError, RecordLimit
from gengap.ground.progress import Ticker


def cmd_fresh(args: argparse.Namespace) -> int:
    from gengap.releases.fresh import FRESH, FreshError, draw_fresh, write_fresh
    from gengap.releases.release_view import ReleaseReadError
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
    from gengap.releases.fresh_verify import verify_fresh

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


def cmd_audit(args: argparse.Namespace) -> int:
    from gengap.generators.params import ParamError
    from gengap.releases.near_audit import AuditError, audit_directory, table
    from gengap.splits.near_duplicates import NearOptions

    try:
        options = NearOptions(edit_distance=args.edit_distance, jaccard=args.jaccard, ngram=args.ngram, examples=args.examples)
    except ParamError as err:
        raise UsageError(str(err).replace("parameter ", "--").replace("_", "-")) from None
    if args.out is not None:
        if not args.out.strip():
            raise UsageError("--out is empty: give the file to write the report to")
        check_writable_file(args.out, args.force, [args.dir])  # never the audited release or split, nor inside it
    started = time.perf_counter()
    try:
        with Ticker(lambda: f"audit: still comparing the test records of {args.dir} with train"):
            report = audit_directory(args.dir, options, args.config or ())
    except AuditError as err:
        raise UsageError(str(err)) from None
    text = json.dumps(report, indent=2) + "\n"
    if args.out is not None:
        with atomic_output(args.out, args.force, [args.dir]) as handle:
            handle.write(text.encode())
    if args.json:
        print(text, end="")
    else:
        print("\n".join(table(report)))
    total = report["total"]
    print(f"audit: {total['near']:,} of {total['test']:,} test records near a train record ({time.perf_counter() - started:.1f} s)"
          + (f" -> {args.out}" if args.out is not None else ""), file=sys.stderr)
    return 0


def add_commands(subparsers: Any) -> None:
    """Add ``fresh`` and ``audit`` to the gengap subcommands."""
    p = subparsers.add_parser("fresh", help="draw a fresh test part for a released config: same rule, a new seed, no input of the release")
    p.add_argument("release", metavar="RELEASE", help="release directory")
    p.add_argument("--config", required=True, help="the config whose test part is drawn afresh")
    p.add_argument("--n", type=int, required=True, help="records of the fresh part")
    p.add_argument("--seed", type=int, required=True,
                   help="the draw (any non-negative integer; its derived seed is in the report): whoever knows it can redraw the part")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory: test.jsonl and fresh.json (written atomically)")
    p.add_argument("--force", action="store_true", help="replace an existing fresh test part (a directory holding fresh.json)")
    p.set_defaults(func=cmd_fresh)

    p = subparsers.add_parser("audit", help="count test records near a train record (token edit distance, n-gram Jaccard), per config, with examples")
    p.add_argument("dir", metavar="DIR", help="a release, or a split directory (train.jsonl and test.jsonl: gengap's or plain records with an input)")
    p.add_argument("--config", action="append", metavar="NAME", help="audit only this release config (repeatable; default all)")
    p.add_argument("--edit-distance", type=int, default=2, metavar="K", help="near: within K token edits (insert, delete, substitute) of a train input (default 2; 0..8)")
    p.add_argument("--jaccard", type=float, default=0.8, metavar="T", help="near: n-gram Jaccard similarity >= T with a train input (default 0.8)")
    p.add_argument("--ngram", type=int, default=3, metavar="N", help="tokens per n-gram of the Jaccard similarity (default 3)")
    p.add_argument("--examples", type=int, default=5, metavar="E", help="near test records listed per config (default 5)")
    p.add_argument("--json", action="store_true", help="print the report as JSON instead of the table")
    p.add_argument("--out", metavar="FILE", help="also write the report as JSON to FILE (atomically)")
    p.add_argument("--force", action="store_true", help="replace an existing --out file")
    p.set_defaults(func=cmd_audit)
