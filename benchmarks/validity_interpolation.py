"""Validity protocol, third edition, topic interpolation: does a split with a held-out middle
range (interpolation) measure something easier than a held-out range beyond the train ranges
(extrapolation)? (CPU scale, tiny models)

    python benchmarks/validity_interpolation.py                    # full run -> docs/validity-interpolation.md/.json
    python benchmarks/validity_interpolation.py --smoke --out DIR  # seconds: the same pipeline, tiny data and steps

Written before any run; the rule and its thresholds are not changed after results are seen.

Claim (one verdict per task, tasks fixed in advance: reverse_string and parity_check).
A sampled length split (gengap.splits.sample_length_split with range unions) trains on input
lengths [1..8] U [17..24] and tests on [9..16] U [25..32]; the split's report labels
[9..16] interpolation (inside the hull of the train ranges) and [25..32] extrapolation.
A transformer (preset tiny, RoPE, one seed) is trained to convergence as in
benchmarks/validity.py (stops once validation exact match reaches UNTIL_ID at two
consecutive evaluations; cap Scale.converge_steps). The accuracy of a test range is the
exact match over the evaluated test records whose input length lies in it (pooled).

    holds          ID exact match >= ID_MIN (0.8) and EM(interpolation) - EM(extrapolation) >= MARGIN (0.2)
    does not hold  ID >= ID_MIN and the difference is below MARGIN
    not learned    ID < ID_MIN: the run did not learn its train distribution, so it shows nothing

Published result it corresponds to: Barrett et al. 2018 (PGM, "Measuring abstract reasoning
in neural networks"), generalisation regimes: WReN reaches about 64 % in the interpolation
regime and about 17 % in the extrapolation regime (Table 1; remembered, approximate).
The exposure curve the brief allows as optional was not run (CPU budget).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import validity  # noqa: E402  (benchmarks/validity.py: RunSpec, run_one, the pool, Scale, verdict)

ROOT = validity.ROOT
TOPIC = "interpolation"
TASKS = ("reverse_string", "parity_check")
ID_MIN = 0.8
MARGIN = 0.2
FULL_RANGES = (((1, 8), (17, 24)), ((9, 16), (25, 32)))  # train, test
SMOKE_RANGES = (((1, 3), (7, 9)), ((4, 6), (10, 12)))
FULL = validity.FULL
SMOKE = validity.SMOKE


def plan(scale: validity.Scale, smoke: bool) -> list[validity.RunSpec]:
    """One run per task on its union length split, trained to convergence."""
    train, test = SMOKE_RANGES if smoke else FULL_RANGES
    converge = {"until_id": validity.UNTIL_ID, "steps": scale.converge_steps, "eval_every": scale.eval_every,
                "eval_examples": scale.eval_examples}
    return [
        validity.RunSpec(f"{task}-interpolation", "length", {"task": task, "train": [list(r) for r in train], "test": [list(r) for r in test]},
                         train=converge, group=TOPIC)
        for task in TASKS
    ]


# -- verdicts (pure functions, tested in tests/test_validity_interpolation.py) -------------


def range_accuracy(by_length: Mapping[str, Mapping[str, Any]], bounds: Sequence[int]) -> dict[str, Any]:
    """Exact match pooled over the evaluated records whose input length lies in [lo, hi]
    (``by_length``: a run's per-length cells {"n", "exact_match"})."""
    cells = [cell for length, cell in by_length.items() if bounds[0] <= int(length) <= bounds[1] and cell["n"]]
    n = sum(cell["n"] for cell in cells)
    return {"exact_match": sum(cell["exact_match"] * cell["n"] for cell in cells) / n if n else None, "n": n}


def interpolation_claim(id_em: float, interpolation: float | None, extrapolation: float | None) -> dict[str, Any]:
    """The claim's verdict: not learned (ID < ID_MIN), holds (difference >= MARGIN) or does not hold."""
    difference = None if interpolation is None or extrapolation is None else interpolation - extrapolation
    learned = id_em >= ID_MIN
    holds = learned and difference is not None and difference >= MARGIN
    return {"id": id_em, "interpolation": interpolation, "extrapolation": extrapolation, "difference": difference,
            "learned": learned, "holds": holds, "verdict": "not learned" if not learned else validity.verdict(holds)}


def evaluate(spec: validity.RunSpec, result: Mapping[str, Any], regimes: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The claim of one task from its run and the regimes its split's report states."""
    seed = result["per_seed"][0]
    ood = seed["by_length_detail"]["ood"]
    figures = {row["regime"]: {**range_accuracy(ood, row["range"]), "range": list(row["range"])} for row in regimes}
    claim = interpolation_claim(seed["id_exact_match"], figures.get("interpolation", {}).get("exact_match"),
                                figures.get("extrapolation", {}).get("exact_match"))
    return {**claim, "task": spec.args["task"], "train_ranges": spec.args["train"], "regimes": figures,
            "converged": seed.get("converged"), "stopped_at": seed.get("stopped_at"), "ood": seed["ood_exact_match"]}


# -- the document --------------------------------------------------------------------------


def _fmt(value: Any) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _span(ranges: Sequence[Sequence[int]]) -> str:
    return " ∪ ".join(f"{lo}..{hi}" for lo, hi in ranges)


def document(claims: Mapping[str, Mapping[str, Any]], context: Mapping[str, Any]) -> str:
    lines = [
        "# Validity, interpolation vs extrapolation (third edition)",
        "",
        f"Measured by `{context['command']}` on {context['machine']}, commit {context['commit']}, {context['date']}; "
        f"{context['runs']} runs, {context['minutes']:.1f} minutes wall time, {context['cpu_minutes']:.1f} CPU minutes"
        + (f" ({context['reused']} runs reused)" if context["reused"] else "") + ". "
        "Tiny transformers (preset tiny, RoPE, one seed) trained from scratch on CPU to convergence (validation exact match "
        f"≥ {validity.UNTIL_ID} at two consecutive evaluations; cap {context['cap']} steps). The verdict rule was fixed in "
        "benchmarks/validity_interpolation.py before any run; nothing was re-run or re-tuned after.",
        "",
        "Claim: on a length split whose train side is a union of ranges, the test range inside the hull of the train ranges "
        "(interpolation) is solved better than the one beyond it (extrapolation): EM(interpolation) − EM(extrapolation) "
        f"≥ {MARGIN} with ID exact match ≥ {ID_MIN} (else *not learned*). Published: Barrett et al. 2018 (PGM generalisation "
        "regimes): WReN about 64 % interpolation vs about 17 % extrapolation (remembered, approximate).",
        "",
    ]
    for name, claim in claims.items():
        regimes = claim["regimes"]
        lines += [
            f"## {claim['task']}: train lengths {_span(claim['train_ranges'])}",
            "",
            "| test range | regime (split report) | records | exact match |",
            "|---|---|---|---|",
        ]
        for regime in ("interpolation", "extrapolation"):
            if regime in regimes:
                row = regimes[regime]
                lines.append(f"| {row['range'][0]}..{row['range'][1]} | {regime} | {row['n']} | {_fmt(row['exact_match'])} |")
        stopped = f"stopped at step {claim['stopped_at']} ({'met the stopping rule' if claim['converged'] else 'cap reached'})"
        lines += [
            "",
            f"ID exact match {_fmt(claim['id'])}; whole test set {_fmt(claim['ood'])}; difference {_fmt(claim['difference'])}; "
            f"{stopped}. Rule: ID ≥ {ID_MIN} and difference ≥ {MARGIN}. **Verdict: {claim['verdict']}.**",
            "",
        ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny data and steps: checks the pipeline in seconds")
    parser.add_argument("--out", default=str(ROOT / "docs"), help="folder for validity-interpolation.md/.json (default docs/)")
    parser.add_argument("--runs", help="run directories (default OUT/validity-interpolation-runs; finished runs are reused)")
    parser.add_argument("--workers", type=int, default=1, help="runs trained at once (one thread each)")
    args = parser.parse_args(argv)
    scale = SMOKE if args.smoke else FULL
    out = Path(args.out)
    runs_dir = Path(args.runs) if args.runs else out / f"validity-{TOPIC}-runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    specs = plan(scale, args.smoke)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip() or "unknown"
    start = time.perf_counter()
    results = validity.run_all(specs, scale, runs_dir, args.workers)
    claims = {spec.args["task"]: evaluate(spec, result, validity.build_split(spec, scale).report["regimes"])
              for spec, result in zip(specs, results)}
    context = {
        "command": "python benchmarks/validity_interpolation.py" + (" --smoke" if args.smoke else "")
                   + (f" --workers {args.workers}" if args.workers != 1 else ""),
        "machine": f"{os.cpu_count()} CPU cores ({platform.machine()}, Python {platform.python_version()})",
        "commit": commit,
        "date": time.strftime("%Y-%m-%d"),
        "minutes": (time.perf_counter() - start) / 60,
        "cpu_minutes": sum(r.get("cpu_seconds", 0.0) for r in results) / 60,
        "reused": sum(1 for r in results if r["reused"]),
        "runs": len(results),
        "cap": scale.converge_steps,
        "scale": dataclasses.asdict(scale),
    }
    (out / f"validity-{TOPIC}.md").write_text(document(claims, context) + "\n", encoding="utf-8")
    (out / f"validity-{TOPIC}.json").write_text(json.dumps({"claims": claims, "context": context}, indent=1, default=str) + "\n", encoding="utf-8")
    for name, claim in claims.items():
        print(f"{name}: {claim['verdict']} (ID {_fmt(claim['id'])}, interpolation {_fmt(claim['interpolation'])}, "
              f"extrapolation {_fmt(claim['extrapolation'])})")
    print(f"wrote {out / f'validity-{TOPIC}.md'} in {context['minutes']:.1f} min")


if __name__ == "__main__":
    main()
