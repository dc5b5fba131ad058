"""Validity protocol, third edition: shortcuts. Do gengap's shortcut cues (gengap.splits.cues) pull a
model off the real feature as their train agreement rate rises? (CPU scale, tiny models)

    python benchmarks/validity_shortcuts.py                  # full -> docs/validity-shortcuts.md/.json
    python benchmarks/validity_shortcuts.py --smoke --out DIR   # seconds: the same pipeline, tiny data and steps

Published result: Shah et al. 2020, "The pitfalls of simplicity bias in neural networks":
networks "can exclusively rely on the simplest feature and remain invariant to all
predictive complex features"; a spurious feature that agrees with the label in training
is learned instead of (or before) the real one, and accuracy falls when it stops agreeing.

Setup (fixed before any run): task parity_check (binary answers 0/1), inputs of 1..12 bits;
one split whose two sides are drawn from that same distribution (gengap.splits.api.sample_split,
strategy iid: test inputs never occur on the train side), train 2,000, validation 300, test
500 records, split seed fixed; a cue token ``cue:<answer>`` in front of every input
(gengap.splits.cues) agreeing with the answer with probability rho in train and validation, and
with probability 0.5 in test (uninformative), for rho in RHOS = (0.5, 0.8, 0.95, 1.0); the
same split without cues is the no-cue baseline. The cue is drawn after the split, from its
own stream, so every run sees the same inputs and answers. One tiny transformer (preset tiny,
RoPE, seed 0) per setting, trained to convergence as in benchmarks/validity.py (validation
exact match >= 0.95 at two consecutive evaluations) with a cap of 1,500 steps. The drop of a
run is validation (cued ID) exact match minus test (uninformative cue) exact match.

Claims and verdict rules:

1. monotone: the drop grows with rho: Spearman correlation of (rho, drop) over RHOS > 0
   (SPEARMAN_MIN).
2. size: at the highest rho (1.0) the drop is >= 0.2 (DROP_MIN).

The no-cue baseline's ID and test exact match are reported beside the claims (not part of a
verdict): when the baseline does not learn parity in distribution (ID < 0.8), a drop shows
only that the cue was used, not that it displaced a learnable real feature.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # benchmarks/: the validity module
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import validity  # noqa: E402
from validity import FULL, ID_MIN, SMOKE, RunSpec, Scale, run_all, verdict  # noqa: E402

TOPIC = "shortcuts"
TASK = "parity_check"
LENGTHS = (1, 12)
RHOS = (0.5, 0.8, 0.95, 1.0)
TEST_RHO = 0.5
SPEARMAN_MIN = 0.0  # claim 1: Spearman(rho, drop) must exceed this
DROP_MIN = 0.2  # claim 2: drop at the highest rho
SPLIT_SEED_LABEL = "parity_check-shortcuts"
BUILDER = "validity_shortcuts:build_cued_split"
CONVERGE = {"until_id": validity.UNTIL_ID, "eval_every": 250, "eval_examples": 256}

SHORTCUTS_FULL = dataclasses.replace(FULL, steps=1500, converge_steps=1500, eval_every=250, eval_examples=256,
                                     sizes={"train": 2000, "validation": 300, "test": 500}, seeds_main=(0,))
SHORTCUTS_SMOKE = dataclasses.replace(SMOKE, sizes={"train": 120, "validation": 30, "test": 40})


def config_name(rho: float | None) -> str:
    return f"{TASK}-nocue" if rho is None else f"{TASK}-cue{round(rho * 100):03d}"


def plan(scale: Scale) -> list[RunSpec]:
    """The no-cue baseline and one run per rho, all on the same split."""
    train = {**CONVERGE, "steps": scale.converge_steps, "eval_every": scale.eval_every, "eval_examples": scale.eval_examples}
    runs = [RunSpec(config_name(None), "custom", {"builder": BUILDER, "cue": None}, train=train, group=TOPIC)]
    for rho in RHOS:
        runs.append(RunSpec(config_name(rho), "custom", {"builder": BUILDER, "cue": {"train": rho, "test": TEST_RHO}},
                            train=train, group=TOPIC))
    return runs


def build_cued_split(spec: RunSpec, scale: Scale) -> Any:
    """The shared split (same seed for every run), with the run's cue applied when it has one."""
    from gengap.generators import get_task
    from gengap.generators.seeding import config_seed
    from gengap.splits.api import sample_split
    from gengap.splits.cues import apply_cue

    seed = config_seed(20261202, SPLIT_SEED_LABEL)
    params = get_task(TASK).with_size(*LENGTHS)
    result = sample_split(TASK, [params], [params], scale.sizes, seed, "iid", {})
    cue = spec.args.get("cue")
    return apply_cue(result, cue, seed) if cue else result


# -- verdicts (pure functions, tested in tests/test_validity_shortcuts.py) -------------------


def monotone_claim(points: Sequence[tuple[float, float]]) -> dict[str, Any]:
    """Claim 1 from (rho, drop) points: Spearman > SPEARMAN_MIN."""
    from gengap.baselines.report import spearman

    rho = spearman([p[0] for p in points], [p[1] for p in points])
    return {"spearman": rho, "points": len(points), "holds": rho is not None and rho > SPEARMAN_MIN}


def size_claim(points: Sequence[tuple[float, float]]) -> dict[str, Any]:
    """Claim 2: the drop at the highest rho is >= DROP_MIN."""
    top_rho, top_drop = max(points) if points else (None, None)
    return {"rho": top_rho, "drop": top_drop, "holds": top_drop is not None and top_drop >= DROP_MIN}


def run_row(result: Mapping[str, Any]) -> dict[str, Any]:
    """ID and test exact match, drop, whether the run met the stopping rule and where it stopped."""
    seed = result["per_seed"][0]
    id_em, ood_em = seed["id_exact_match"], seed["ood_exact_match"]
    return {"id": id_em, "test": ood_em, "drop": id_em - ood_em, "converged": seed.get("converged"),
            "stopped_at": seed.get("stopped_at")}


def evaluate(rows: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Both claims from the rows of the runs (keyed by config name)."""
    points = [(rho, rows[config_name(rho)]["drop"]) for rho in RHOS if config_name(rho) in rows]
    return {"monotone": monotone_claim(points), "size": size_claim(points)}


def notes(rows: Mapping[str, Mapping[str, Any]]) -> list[str]:
    base = rows.get(config_name(None))
    if base is None:
        return []
    if base["id"] < ID_MIN:
        return [f"the no-cue baseline did not learn parity in distribution (ID {base['id']:.3f} < {ID_MIN}): "
                "a drop shows that the cue was used, not that it displaced a learned real feature"]
    return [f"the no-cue baseline learned parity (ID {base['id']:.3f}, test {base['test']:.3f}): "
            "the real feature is learnable at this scale, so a drop is the cue's"]


# -- the document ----------------------------------------------------------------------------


def _fmt(value: Any) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def write_document(path: Path, rows: Mapping[str, Mapping[str, Any]], reports: Mapping[str, Any],
                   claims: Mapping[str, Any], context: Mapping[str, Any]) -> None:
    lines = [
        "# Validity: shortcut cues (parity_check)", "",
        f"Measured by `{context['command']}` on {context['machine']}, commit {context['commit']}, {context['date']}; "
        f"{context['runs']} runs, {context['minutes']:.1f} minutes wall time, {context['cpu_minutes']:.1f} CPU minutes. "
        "Setup, claims and verdict rules are fixed in benchmarks/validity_shortcuts.py's docstring, written before any run; "
        "nothing was re-run or re-tuned after.", "",
        "| Claim | Measured | Rule | Published | Verdict |", "|---|---|---|---|---|",
        f"| 1. Drop grows with the train cue rate | Spearman(rho, drop) {_fmt(claims['monotone']['spearman'])} over "
        f"{claims['monotone']['points']} rates | > {SPEARMAN_MIN} | Shah et al. 2020: networks rely on the simplest feature | "
        f"**{verdict(claims['monotone']['holds'])}** |",
        f"| 2. Drop at the highest rate | rho {claims['size']['rho']}: drop {_fmt(claims['size']['drop'])} | >= {DROP_MIN} | "
        f"Shah et al. 2020: accuracy falls when the simple feature stops agreeing | **{verdict(claims['size']['holds'])}** |", "",
        "## Runs", "",
        "| Config | cue rate train / test | measured agreement train / validation / test | ID exact match | test exact match | drop | stopped at (met rule) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, row in rows.items():
        cue = reports.get(name)
        rate = f"{cue['rate']['train']} / {cue['rate']['test']}" if cue else "no cue"
        agree = " / ".join(_fmt(cue["agreement"][p]) for p in ("train", "validation", "test")) if cue else "n/a"
        lines.append(f"| {name} | {rate} | {agree} | {_fmt(row['id'])} | {_fmt(row['test'])} | {_fmt(row['drop'])} | "
                     f"{row['stopped_at']} ({'yes' if row['converged'] else 'no'}) |")
    lines += ["", "## Notes", ""] + [f"- {note}" for note in notes(rows)] + [""]
    path.write_text("\n".join(lines), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> None:
    import platform
    import subprocess

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny data and steps: checks the pipeline in seconds")
    parser.add_argument("--out", default=str(validity.ROOT / "docs"), help=f"folder for validity-{TOPIC}.md/.json (default docs/)")
    parser.add_argument("--runs", help=f"run directories (default OUT/validity-runs/{TOPIC}; finished runs are reused)")
    parser.add_argument("--workers", type=int, default=1, help="runs trained at once (one thread each)")
    args = parser.parse_args(argv)
    scale = SHORTCUTS_SMOKE if args.smoke else SHORTCUTS_FULL
    out = Path(args.out)
    runs_dir = Path(args.runs) if args.runs else out / "validity-runs" / TOPIC
    runs_dir.mkdir(parents=True, exist_ok=True)
    specs = plan(scale)
    commit = subprocess.run(["git", "-C", str(validity.ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    start = time.perf_counter()
    results = run_all(specs, scale, runs_dir, args.workers)
    rows = {spec.config: run_row(result) for spec, result in zip(specs, results)}
    reports = {spec.config: build_cued_split(spec, scale).report.get("cue") for spec in specs}
    claims = evaluate(rows)
    context = {
        "command": f"python benchmarks/validity_{TOPIC}.py" + (" --smoke" if args.smoke else ""),
        "machine": f"{os.cpu_count()} CPU cores ({platform.machine()}, Python {platform.python_version()})",
        "commit": commit,
        "date": time.strftime("%Y-%m-%d"),
        "minutes": (time.perf_counter() - start) / 60,
        "cpu_minutes": sum(r.get("cpu_seconds", 0.0) for r in results) / 60,
        "runs": len(results),
        "reused": sum(1 for r in results if r.get("reused")),
        "steps_cap": scale.converge_steps,
        "sizes": scale.sizes,
    }
    out.mkdir(parents=True, exist_ok=True)
    write_document(out / f"validity-{TOPIC}.md", rows, reports, claims, context)
    payload = {"claims": claims, "runs": rows, "cues": reports, "notes": notes(rows), "context": context}
    (out / f"validity-{TOPIC}.json").write_text(json.dumps(payload, indent=1, default=str) + "\n", encoding="utf-8")
    for name, claim in claims.items():
        print(f"{name}: {verdict(claim['holds'])}")
    print(f"wrote {out / f'validity-{TOPIC}.md'} in {context['minutes']:.1f} min")


if __name__ == "__main__":
    main()
