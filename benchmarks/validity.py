"""Validity protocol (its edition: validity_engine.EDITION): does each split measure what it claims,
and do the models of the literature reproduce its results? (CPU scale, 2 cores)

    python benchmarks/validity.py                        # the full tier -> docs/validity.md, docs/validity.json, evidence, plots
    python benchmarks/validity.py --tier quick           # the quick re-check (<= 90 CPU min) -> docs/validity-quick.md/.json
    python benchmarks/validity.py --axis chomsky         # one axis, merged into the committed document
    python benchmarks/validity.py --recompute            # re-derive the page from docs/validity-evidence/ alone; no training
    python benchmarks/validity.py --list                 # the claims, their arms and rules; nothing runs
    python benchmarks/validity.py --smoke --out DIR      # the same pipeline at toy scale, in seconds

The claims are specs in benchmarks/validity_axes/ (one module per axis, specs only), run by
benchmarks/validity_engine.py and rendered by benchmarks/validity_report.py; see the engine's
docstring for the verdicts, the learned rule and the evidence. Runs go ``--workers`` at a time
(one CPU thread each) into ``--runs`` (default OUT/validity-runs); each run's evidence file is
written to OUT/validity-evidence as it finishes. Finished runs are reused, from their run
directory or, where that is gone (a fresh clone), from their evidence file, so an interrupted
protocol continues where it stopped, also on another machine once the evidence files written so
far are committed; the quick tier's runs are the full tier's.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))

import validity_engine as engine  # noqa: E402
from arguments import positive_int  # noqa: E402
from validity_axes import AXES, CHANGES, TITLES  # noqa: E402
from validity_report import render  # noqa: E402

HISTORY = Path(__file__).resolve().parent / "validity_axes" / "history.json"


def claims_of(axes: Sequence[str], smoke: bool, tier: str = "full") -> list[engine.Claim]:
    """The claims of the axes in the tier (the full tier holds every claim)."""
    claims = [claim for axis in axes for claim in importlib.import_module(f"validity_axes.{axis}").claims(smoke)]
    return [c for c in claims if tier in c.tiers or tier == "full"]


def names(tier: str) -> tuple[str, str]:
    """(page, document) file names of a tier."""
    return ("validity.md", "validity.json") if tier == "full" else (f"validity-{tier}.md", f"validity-{tier}.json")


def list_claims(claims: Sequence[engine.Claim]) -> None:
    runs = engine.plan(claims)
    for claim in claims:
        print(f"[{claim.axis}] {claim.key} ({claim.role}; tiers {', '.join(claim.tiers)}): {claim.title}")
        print(f"    rule: {claim.rule}")
        print(f"    learned: {claim.learned.describe()}")
        if claim.premise is not None:
            print(f"    premise: {claim.premise.text}")
        for arm in claim.arms:
            print(f"    arm {arm.label}: {arm.config}, seeds {list(arm.seeds)}, {engine.thawed(arm.train)}")
    print(f"{len(claims)} claims, {len(set(runs.values()))} runs")


def tier_rows(out: Path, document: dict[str, Any]) -> list[dict[str, Any]]:
    """The cost of each tier whose document lies in out (the quick one) or is this one: CPU minutes of its runs
    (each counted once, as measured when it trained) and of the invocations' own processes."""
    rows = []
    for tier in ("quick", "full"):
        doc = document if document.get("tier", "full") == tier else engine.read_document(out / names(tier)[1])
        if not doc or doc.get("edition") != engine.EDITION:
            continue
        named = {run for c in doc["claims"] for arm in c["arms"] for run in arm.get("runs") or []}
        seconds = doc.get("run_cpu_seconds") or {}
        contexts = list(doc["context"].values())
        main = max((c.get("main_cpu_minutes") or 0.0 for c in contexts), default=0.0)
        rows.append({"tier": tier, "claims": len(doc["claims"]), "cpu_minutes": sum(seconds.get(n, 0.0) for n in named) / 60 + main,
                     "wall_minutes": max((c.get("wall_minutes") or 0.0 for c in contexts), default=None),
                     "runs": len(named), "reused": max((c.get("reused") or 0 for c in contexts), default=0),
                     "command": "python benchmarks/validity.py" + (" --tier quick" if tier == "quick" else "")})
    return rows


def page(document: dict[str, Any], out: Path) -> str:
    """The page of a document (its tier's), with the deferred table, the edition history and the tiers' costs."""
    deferred = importlib.import_module("gpu_protocol").DEFERRED
    history = json.loads(HISTORY.read_text(encoding="utf-8")) if HISTORY.is_file() else {}
    decided = full_verdicts(engine.read_document(out / "validity.json")) if document.get("tier") == "quick" else None
    return render(document, TITLES, deferred, CHANGES, history, tier_rows(out, document), decided)


def full_verdicts(full: dict[str, Any] | None) -> dict[str, str]:
    """claim key -> the full tier's verdict, from a document of this edition (none from another)."""
    if not full or full.get("edition") != engine.EDITION:
        return {}
    return {c["key"]: c["verdict"] for c in full.get("claims", [])}


def comparison(quick: dict[str, Any], full: dict[str, Any] | None) -> list[str]:
    """The quick tier's verdicts set against the full tier's (the re-check), one line per claim."""
    decided = full_verdicts(full)
    return [f"{c['key']}: quick {c['verdict']}, full {decided.get(c['key'], 'not run')}"
            + ("" if decided.get(c["key"]) in (None, c["verdict"]) else "  <- differs") for c in quick["claims"]]


def recompute(args: argparse.Namespace, out: Path, axes: Sequence[str]) -> int:
    """Re-derive the tier's document and page from the shipped evidence; 0 when both equal the files in out."""
    page_name, doc_name = names(args.tier)
    document = engine.read_document(out / doc_name)
    if document is None:
        raise SystemExit(f"validity.py: error: {out / doc_name} does not exist: nothing to recompute")
    claims = claims_of(AXES, args.smoke, args.tier)
    evidence = Path(args.evidence) if args.evidence else out / engine.EVIDENCE
    try:
        again = engine.recompute(document, claims, evidence)
    except engine.SpecError as err:
        raise SystemExit(f"validity.py: error: {err}") from None
    text = page(again, out)
    same_doc = engine.document_text(again) == (out / doc_name).read_text(encoding="utf-8")
    same_page = (out / page_name).is_file() and text == (out / page_name).read_text(encoding="utf-8")
    verdicts = ", ".join(f"{c['key']} {c['verdict']}" for c in again["claims"])
    print(f"recomputed {len(again['claims'])} claims from {len(document.get('evidence') or {})} shipped runs: {verdicts}")
    for name, same in ((doc_name, same_doc), (page_name, same_page)):
        print(f"{out / name}: {'identical' if same else 'DIFFERS from the recomputation'}")
    return 0 if same_doc and same_page else 1


def check_out(out: Path, tier: str, force: bool) -> None:
    """Refuse (one line, exit 2) an --out that is not a folder, or that holds a page of the tier without its document
    (a page this protocol did not write, which would be replaced), unless --force."""
    if out.exists() and not out.is_dir():
        raise SystemExit(f"validity.py: error: --out {out} exists and is not a folder")
    page_name, doc_name = names(tier)
    if (out / page_name).exists() and not (out / doc_name).is_file() and not force:
        raise SystemExit(f"validity.py: error: {out / page_name} exists without {doc_name} (not a page this protocol wrote): "
                         "choose another --out or pass --force to replace it")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=f"Validity protocol, edition {engine.EDITION}: does each split measure what it claims?")
    parser.add_argument("--axis", action="append", choices=list(AXES), help="run this axis only (repeatable); default: every axis")
    parser.add_argument("--tier", choices=engine.TIERS, default="full", help="quick: the re-check (one claim per axis, <= 90 CPU min); full: every claim (default)")
    parser.add_argument("--smoke", action="store_true", help="toy scale: checks the pipeline in seconds")
    parser.add_argument("--out", help="folder of the page, its JSON, the evidence and the plots (default docs/; --smoke: a temporary folder)")
    parser.add_argument("--runs", help="run directories (default OUT/validity-runs; finished runs are reused)")
    parser.add_argument("--evidence", help="--recompute: the shipped evidence (default OUT/validity-evidence)")
    parser.add_argument("--workers", type=positive_int, default=2, help="runs trained at once, one CPU thread each (default 2)")
    parser.add_argument("--list", action="store_true", help="print the claims, arms and rules; run nothing")
    parser.add_argument("--recompute", action="store_true", help="re-derive the tier's document and page from the shipped evidence alone "
                        "(no training) and compare them with the files in --out; exit 1 when they differ")
    parser.add_argument("--render", action="store_true", help="render the tier's page again from its JSON in --out (no runs; the "
                        "quick page then sets its verdicts against the full tier's)")
    parser.add_argument("--force", action="store_true", help="replace a page in --out that has no document beside it")
    args = parser.parse_args(argv)
    axes = args.axis or list(AXES)
    claims = claims_of(axes, args.smoke, args.tier)
    if args.list:
        try:
            list_claims(claims)
        except BrokenPipeError:
            sys.stdout = None  # type: ignore[assignment]  # the reader left (| head): nothing more to say
        return
    if not args.smoke:
        try:
            engine.check_specs(claims)
        except engine.SpecError as err:
            raise SystemExit(f"validity.py: error: {err}") from None
    out = Path(args.out) if args.out else (Path(tempfile.mkdtemp(prefix="gengap-validity-")) if args.smoke else engine.ROOT / "docs")
    if args.recompute:
        raise SystemExit(recompute(args, out, axes))
    if args.render:
        page_name, doc_name = names(args.tier)
        document = engine.read_document(out / doc_name)
        if document is None:
            raise SystemExit(f"validity.py: error: {out / doc_name} does not exist: nothing to render")
        (out / page_name).write_text(page(document, out), encoding="utf-8")
        print(f"wrote {out / page_name}")
        return
    check_out(out, args.tier, args.force)
    out.mkdir(parents=True, exist_ok=True)
    runs_dir = Path(args.runs) if args.runs else out / "validity-runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    command = ("python benchmarks/validity.py" + (f" --tier {args.tier}" if args.tier != "full" else "")
               + "".join(f" --axis {a}" for a in (args.axis or [])) + (" --smoke" if args.smoke else ""))
    started = time.process_time()
    try:
        new = engine.run_protocol(claims, runs_dir, args.workers, command, evidence=out / engine.EVIDENCE, tier=args.tier)
    except engine.SpecError as err:
        raise SystemExit(f"validity.py: error: {err}") from None
    for ctx in new["context"].values():
        ctx["main_cpu_minutes"] = (time.process_time() - started) / 60
    page_name, doc_name = names(args.tier)
    document = engine.merge(engine.read_document(out / doc_name), new, list(AXES))
    engine.write_document(out / doc_name, document)
    if args.tier == "full":
        for axis in axes:
            module = importlib.import_module(f"validity_axes.{axis}")
            if hasattr(module, "plots"):
                module.plots(document, runs_dir, out)
        if any(runs_dir.glob("**/results.json")):
            from gengap.baselines.report import make_report

            make_report([runs_dir], out / "validity-runs.md")
    (out / page_name).write_text(page(document, out), encoding="utf-8")
    for claim in new["claims"]:
        print(f"{claim['key']}: {claim['verdict']} ({claim['measured']}; {claim['stability']})")
    if args.tier == "quick":
        print("re-check against the full tier:", *comparison(document, engine.read_document(out / "validity.json")), sep="\n  ")
    print(f"wrote {out / page_name}")


if __name__ == "__main__":
    main()
