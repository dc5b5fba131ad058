"""Validity of the facts splits: the reversal curse and two-hop composition over held-out bridges (CPU scale).

    python benchmarks/validity_facts.py                      # both claims -> docs/validity-facts.md/.json
    python benchmarks/validity_facts.py --smoke --out DIR    # seconds: the same pipeline, tiny world and steps

Tiny transformers (preset tiny: 2 layers, d_model 64, RoPE) are trained from scratch on CPU on
splits of one seeded facts world (gengap.generators.worlds), built in memory with the ``facts`` split
(gengap.splits.facts) from the whole enumeration of a task (every atomic fact, every query), through
benchmarks/validity.py's run machinery. Every run is trained to convergence: it stops once its
ID exact match reaches UNTIL_ID at two consecutive evaluations, with a cap on its steps (3,000
for the reversal run, 8,000 for the two-hop run, whose ID generalization is slower). Claims,
thresholds and world sizes were written here before any run.

(a) reversal (Berglund et al. 2023, "the reversal curse": trained on "A is B", a model does not
    answer "B is A"; "the likelihood of the correct answer will not be higher than for a random
    name"). fact_reverse over a world of REVERSAL_WORLD (every relation one-to-one), split
    ``by: direction`` with half the facts held out: train holds every forward fact and the
    reversed queries of the other half. The run's ID set is the forward lookups of the held-out
    facts (records that are also in train: the claim is that they were learned), its OOD set
    the reversed queries of the same facts. Holds when forward ID exact match >= FORWARD_MIN
    (0.8) and reversed OOD exact match <= max(0.1, 3 x chance), chance = 1 / n_entities.
(b) two-hop (Wang et al. 2024, "Grokked transformers are implicit reasoners": transformers
    "fail to systematically generalize for composition"; OOD = inferred facts whose atomic facts
    occur only as atoms, never inside a training inference). fact_two_hop (2 hops) over
    TWO_HOP_WORLD, split ``by: bridge`` with a fifth of the bridge entities held out: ID =
    the split's validation (compositions whose bridges occur in training compositions), OOD =
    its test (compositions through held-out bridges, whose facts train shows only as atoms).
    Not learned when ID exact match < TWO_HOP_ID_MIN (0.5); holds when learned and ID - OOD >=
    GAP_MIN (0.2).

A claim that does not hold is reported as such; nothing is re-run or re-tuned after a result.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from argparse import Namespace
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping, Sequence

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.validity import FULL, SMOKE, UNTIL_ID, RunSpec, Scale, _context, _fmt, run_one, verdict  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FORWARD_MIN = 0.8
CHANCE_FLOOR = 0.1
CHANCE_FACTOR = 3
TWO_HOP_ID_MIN = 0.5
GAP_MIN = 0.2
SPLIT_SEED = 20261202
REVERSAL_WORLD = {"n_entities": 100, "n_relations": 2}
TWO_HOP_WORLD = {"n_entities": 50, "n_relations": 5, "hops": 2}
SMOKE_WORLD = {"n_entities": 12, "n_relations": 2}
SETTINGS = {  # scale -> (step caps of the reversal and the two-hop run, eval_every, eval_examples)
    "full": ((3000, 8000), 250, 512),
    "smoke": ((10, 10), 5, 16),
}


def plan(smoke: bool) -> list[RunSpec]:
    """The two runs: the reversal split and the bridge split (one seed each)."""
    (reversal_cap, two_hop_cap), every, examples = SETTINGS["smoke" if smoke else "full"]
    converge = {"until_id": UNTIL_ID, "eval_every": every, "eval_examples": examples}
    reversal = {**(SMOKE_WORLD if smoke else REVERSAL_WORLD)}
    two_hop = {**(SMOKE_WORLD if smoke else TWO_HOP_WORLD), "hops": 2}
    return [
        RunSpec("fact_reverse-direction", "facts_direction",
                {"task": "fact_reverse", "params": reversal, "options": {"by": "direction", "holdout_fraction": 0.5}},
                train={**converge, "steps": reversal_cap}, group="facts"),
        RunSpec("fact_two_hop-bridge", "facts_bridge",
                {"task": "fact_two_hop", "params": two_hop, "options": {"by": "bridge", "holdout_fraction": 0.2, "validation_fraction": 0.2}},
                train={**converge, "steps": two_hop_cap}, group="facts"),
    ]


def build_facts_split(spec: RunSpec, scale: Scale) -> Any:
    """The in-memory split of a run; for the reversal run, ID is the held-out facts' forward lookups."""
    from gengap.generators import get_task
    from gengap.generators.seeding import config_seed
    from gengap.splits import SplitResult, split
    from gengap.splits.facts import query_kind, reversed_fact

    task = get_task(spec.args["task"])
    pool = list(task.enumerate(task.make_params(spec.args["params"])).records(task.name))
    result = split(pool, "facts", spec.args["options"], seed=config_seed(SPLIT_SEED, spec.config))
    if spec.kind != "facts_direction":
        return result
    held = {reversed_fact(r) for r in result.test}
    forward = [r for r in result.train if query_kind(r) == "lookup" and reversed_fact(r) in held]
    report = {**result.report, "evaluation": "ID = forward lookups of the held-out facts (in train); OOD = their reversed queries"}
    return SplitResult(result.train, forward, result.test, report)


def split_summary(result: Any) -> dict[str, Any]:
    """Part sizes and the facts split's own report fields."""
    summary = {part: len(rows) for part, rows in result.parts().items()}
    summary.update({k: v for k, v in result.report.items() if k.startswith(("facts_", "held_out_", "train_bridges", "evaluation"))})
    return summary


# -- verdicts (pure functions, tested in tests/test_validity_facts.py) ----------------------


def reversal_claim(forward: float, reversed_: float, n_entities: int) -> dict[str, Any]:
    """(a): forward ID exact match >= FORWARD_MIN and reversed OOD <= max(0.1, 3 x chance)."""
    ceiling = max(CHANCE_FLOOR, CHANCE_FACTOR / n_entities)
    return {"forward": forward, "reversed": reversed_, "chance": 1 / n_entities, "ceiling": ceiling,
            "holds": forward >= FORWARD_MIN and reversed_ <= ceiling}


def two_hop_claim(id_em: float, ood_em: float) -> dict[str, Any]:
    """(b): learned (ID >= TWO_HOP_ID_MIN) and ID - OOD >= GAP_MIN; status names which."""
    learned = id_em >= TWO_HOP_ID_MIN
    holds = learned and id_em - ood_em >= GAP_MIN
    return {"id": id_em, "ood": ood_em, "gap": id_em - ood_em, "learned": learned, "holds": holds,
            "status": verdict(holds) if learned else "not learned"}


def evaluate_claims(results: Mapping[str, Mapping[str, Any]], smoke: bool) -> dict[str, Any]:
    """Both claims from the results of the two runs (by config)."""
    def em(config: str, side: str) -> float:
        return float(results[config]["aggregate"][f"{side}_exact_match"]["mean"])

    n_entities = (SMOKE_WORLD if smoke else REVERSAL_WORLD)["n_entities"]
    reversal = reversal_claim(em("fact_reverse-direction", "id"), em("fact_reverse-direction", "ood"), n_entities)
    reversal["status"] = verdict(reversal["holds"])
    two_hop = two_hop_claim(em("fact_two_hop-bridge", "id"), em("fact_two_hop-bridge", "ood"))
    for name, claim in (("fact_reverse-direction", reversal), ("fact_two_hop-bridge", two_hop)):
        seed = results[name]["per_seed"][0]
        claim["stopped_at"], claim["converged"] = seed.get("stopped_at"), seed.get("converged")
    return {"reversal": reversal, "two_hop": two_hop}


def write_document(path: Path, claims: Mapping[str, Any], context: Mapping[str, Any], reports: Mapping[str, Any]) -> None:
    r, t = claims["reversal"], claims["two_hop"]
    caps = ", ".join(f"{steps} steps for {config}" for config, steps in context["step_caps"].items())
    lines = [
        "# Validity of the facts splits: reversal and two-hop composition",
        "",
        f"Measured by `{context['command']}` on {context['machine']}, commit {context['commit']}, {context['date']}; "
        f"{context['runs']} runs, {context['minutes']:.1f} minutes wall time, {context['cpu_minutes_total']:.1f} CPU minutes. "
        f"Tiny transformers (preset tiny: 2 layers, d_model 64, RoPE) trained from scratch on CPU (one thread, one seed) "
        f"to convergence (ID exact match ≥ {UNTIL_ID} at two consecutive evaluations; caps: {caps}). "
        "Claims, thresholds and world sizes were fixed in benchmarks/validity_facts.py before any run; nothing was re-run or re-tuned after.",
        "",
        "## (a) Reversal (`fact_reverse`, split `facts` by direction)",
        "",
        f"World: {context['worlds']['reversal']}. Train: every forward fact and the reversed queries of the facts not held out; "
        "ID = forward lookups of the held-out facts (trained records: were they learned?), OOD = reversed queries of the same facts.",
        "",
        "| forward (ID) EM | reversed (OOD) EM | chance | rule | published | stopped at | verdict |",
        "|---|---|---|---|---|---|---|",
        f"| {_fmt(r['forward'])} | {_fmt(r['reversed'])} | {_fmt(r['chance'])} | forward ≥ {FORWARD_MIN}, reversed ≤ {_fmt(r['ceiling'])} | "
        f"Berglund et al. 2023: reversed answers no likelier than a random name | {r['stopped_at']} ({'met' if r['converged'] else 'not met'}) | **{r['status']}** |",
        "",
        "## (b) Two-hop composition (`fact_two_hop`, split `facts` by bridge)",
        "",
        f"World: {context['worlds']['two_hop']}. ID = validation (compositions whose bridge entities occur in training compositions); "
        "OOD = test (compositions through held-out bridges: their facts occur in train only as atoms).",
        "",
        "| ID EM | OOD EM | gap | rule | published | stopped at | verdict |",
        "|---|---|---|---|---|---|---|",
        f"| {_fmt(t['id'])} | {_fmt(t['ood'])} | {_fmt(t['gap'])} | ID ≥ {TWO_HOP_ID_MIN} (else not learned), gap ≥ {GAP_MIN} | "
        f"Wang et al. 2024: composition fails to generalize OOD (ID only after grokking) | {t['stopped_at']} ({'met' if t['converged'] else 'not met'}) | **{t['status']}** |",
        "",
        "## Splits",
        "",
    ]
    for name, report in reports.items():
        sizes = ", ".join(f"{part} {report[part]}" for part in ("train", "validation", "test"))
        counts = json.dumps(report.get("facts_counts"), sort_keys=True)
        held = report.get("held_out_facts", report.get("held_out_bridges"))
        lines.append(f"- {name}: {sizes}; facts_split {report.get('facts_split')}; held out {held}; counts {counts}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny world and steps: checks the pipeline in seconds")
    parser.add_argument("--out", default=str(ROOT / "docs"), help="folder for validity-facts.md/.json (default docs/)")
    parser.add_argument("--runs", help="run directories (default OUT/validity-facts-runs; finished runs are reused)")
    parser.add_argument("--workers", type=int, default=1, help="runs trained at once (one thread each)")
    args = parser.parse_args(argv)
    import subprocess
    from concurrent.futures import ProcessPoolExecutor

    scale = replace(SMOKE if args.smoke else FULL, converge_steps=max(SETTINGS["smoke" if args.smoke else "full"][0]))
    out = Path(args.out)
    runs_dir = Path(args.runs) if args.runs else out / "validity-facts-runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    specs = plan(args.smoke)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip() or "unknown"
    start = time.perf_counter()
    arguments = (specs, [scale] * len(specs), [str(runs_dir)] * len(specs), [build_facts_split] * len(specs))
    if args.workers > 1:
        with ProcessPoolExecutor(max_workers=args.workers) as pool:
            results = list(pool.map(run_one, *arguments))
    else:
        results = [run_one(*call) for call in zip(*arguments)]
    by_config = {spec.config: result for spec, result in zip(specs, results)}
    claims = evaluate_claims(by_config, args.smoke)
    reports = {spec.config: split_summary(build_facts_split(spec, scale)) for spec in specs}
    context = dict(_context(Namespace(only=None, smoke=args.smoke), start, commit, results, scale))
    context.update(
        command="python benchmarks/validity_facts.py" + (" --smoke" if args.smoke else ""),
        cpu_minutes_total=sum(r.get("cpu_seconds", 0.0) for r in results) / 60,
        step_caps={spec.config: spec.train["steps"] for spec in specs},
        worlds={"reversal": specs[0].args["params"], "two_hop": specs[1].args["params"]},
    )
    for key in ("cpu_minutes", "steps"):  # validity's per-group CPU minutes and fixed steps do not apply here
        context.pop(key, None)
    write_document(out / "validity-facts.md", claims, context, reports)
    (out / "validity-facts.json").write_text(json.dumps({"claims": claims, "context": context, "reports": reports}, indent=1, default=str) + "\n", encoding="utf-8")
    for name, claim in claims.items():
        print(f"{name}: {claim['status']}")
    print(f"wrote {out / 'validity-facts.md'} in {context['minutes']:.1f} min")


if __name__ == "__main__":
    main()
