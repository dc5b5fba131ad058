"""Validity protocol (its edition: validity_engine.EDITION): does each split measure what it claims,
and do the models of the literature reproduce its results? (CPU scale, 2 cores)

    python benchmarks/validity.py                        # every axis -> docs/validity.md, docs/validity.json, plots
    python benchmarks/validity.py --axis chomsky         # one axis, merged into the committed document
    python benchmarks/validity.py --list                 # the claims, their arms and rules; nothing runs
    python benchmarks/validity.py --smoke --out DIR      # the same pipeline at toy scale, in seconds

The claims are specs in benchmarks/validity_axes/ (one module per axis, specs only), run by
benchmarks/validity_engine.py and rendered by benchmarks/validity_report.py; see the engine's
docstring for the three verdicts and the learned rule. Runs go ``--workers`` at a time (one
CPU thread each) into ``--runs`` (default OUT/validity-runs); finished runs are reused, so an
interrupted protocol continues where it stopped.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))

import validity_engine as engine  # noqa: E402
from arguments import positive_int  # noqa: E402
from validity_axes import AXES, CHANGES, TITLES  # noqa: E402
from validity_report import render  # noqa: E402


def claims_of(axes: Sequence[str], smoke: bool) -> list[engine.Claim]:
    return [claim for axis in axes for claim in importlib.import_module(f"validity_axes.{axis}").claims(smoke)]


def list_claims(claims: Sequence[engine.Claim]) -> None:
    runs = engine.plan(claims)
    for claim in claims:
        print(f"[{claim.axis}] {claim.key}: {claim.title}")
        print(f"    rule: {claim.rule}")
        print(f"    learned: {claim.learned.describe()}")
        for arm in claim.arms:
            print(f"    arm {arm.label}: {arm.config}, seeds {list(arm.seeds)}, {engine.thawed(arm.train)}")
    print(f"{len(claims)} claims, {len(set(runs.values()))} runs")


def runs_table(runs_dir: Path, out: Path) -> str | None:
    """gengap report's table over every run of the protocol (its plots beside the page)."""
    from gengap.baselines.report import make_report

    if not any(runs_dir.glob("**/results.json")):
        return None
    report = make_report([runs_dir], out / "validity-runs.md")
    return report["text"].split("\n", 3)[3]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=f"Validity protocol, edition {engine.EDITION}: does each split measure what it claims?")
    parser.add_argument("--axis", action="append", choices=list(AXES), help="run this axis only (repeatable); default: every axis")
    parser.add_argument("--smoke", action="store_true", help="toy scale: checks the pipeline in seconds")
    parser.add_argument("--out", help="folder of validity.md, validity.json and the plots (default docs/; --smoke: a temporary folder)")
    parser.add_argument("--runs", help="run directories (default OUT/validity-runs; finished runs are reused)")
    parser.add_argument("--workers", type=positive_int, default=2, help="runs trained at once, one CPU thread each (default 2)")
    parser.add_argument("--list", action="store_true", help="print the claims, arms and rules; run nothing")
    args = parser.parse_args(argv)
    axes = args.axis or list(AXES)
    claims = claims_of(axes, args.smoke)
    if args.list:
        list_claims(claims)
        return
    out = Path(args.out) if args.out else (Path(tempfile.mkdtemp(prefix="gengap-validity-")) if args.smoke else engine.ROOT / "docs")
    out.mkdir(parents=True, exist_ok=True)
    runs_dir = Path(args.runs) if args.runs else out / "validity-runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    command = "python benchmarks/validity.py" + "".join(f" --axis {a}" for a in (args.axis or [])) + (" --smoke" if args.smoke else "")
    new = engine.run_protocol(claims, runs_dir, args.workers, command)
    document = engine.merge(engine.read_document(out / "validity.json"), new, list(AXES))
    engine.write_document(out / "validity.json", document)
    for axis in axes:
        module = importlib.import_module(f"validity_axes.{axis}")
        if hasattr(module, "plots"):
            module.plots(document, runs_dir, out)
    deferred = importlib.import_module("gpu_protocol").DEFERRED
    (out / "validity.md").write_text(render(document, TITLES, deferred, runs_table(runs_dir, out), CHANGES), encoding="utf-8")
    for claim in new["claims"]:
        print(f"{claim['key']}: {claim['verdict']} ({claim['measured']})")
    print(f"wrote {out / 'validity.md'}")


if __name__ == "__main__":
    main()
