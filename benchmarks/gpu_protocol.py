"""GPU protocol: ID vs OOD gap of RoPE vs NoPE transformers on SCAN splits and four Chomsky
tasks; and the Deletang et al. (2023) protocol over the six architectures.

    python benchmarks/gpu_protocol.py --out runs/protocol             # one H200, sized for <= 10 minutes
    python benchmarks/gpu_protocol.py --out /tmp/smoke --smoke        # CPU check: tiny model, few steps
    python benchmarks/gpu_protocol.py --protocol deletang --out runs/deletang          # 15 tasks x 6 architectures x 3 seeds
    python benchmarks/gpu_protocol.py --protocol deletang --out /tmp/dsmoke --smoke    # CPU check
    python benchmarks/gpu_protocol.py --protocol grokking --out runs/grokking          # Power et al.: x + y mod 97, fractions 0.3-0.5
    python benchmarks/gpu_protocol.py --protocol easy-to-hard --out runs/e2h           # also two-hop, label-noise: validity claims deferred to a GPU

Experiments (all splits built in memory, no release needed):

- SCAN (all 20,910 commands): ``scan_simple`` (iid, test fraction 0.2), ``scan_length``
  (train <= 22 actions, test >= 24), ``scan_addprim_jump`` ("jump" held out, seen alone 1,467
  times in train);
- graded MCD on SCAN at 8,365 / 1,045: ``scan_mcd_dc0150`` .. ``scan_mcd_dc0600`` (target
  compound divergence 0.15 .. 0.6) and ``scan_mcd_max`` (maximized), so that the report's
  "OOD exact match vs compound divergence" section (Spearman rho) and "OOD exact match by
  novelty" table reproduce benchmarks/validity.py's claims 1 and 2 at GPU scale;
- ``parity_check``, ``even_pairs``, ``reverse_string``, ``bucket_sort``: trained on input
  lengths 1..40, tested on 41..100 (``gengap.splits.sample_length_split``).

Each experiment x positional encoding (rope, nope) x seed (0, 1, 2) is one run directory
under ``OUT/runs``; runs go to ``--workers`` processes sharing the device (small models leave
a GPU mostly idle, so several runs at once use it better than one after another). Runs
resume from their checkpoints, so re-running the same command after an interruption
continues. The protocol ends with ``OUT/report.md`` and ``OUT/report.png`` (``gengap report``'s
table and plot) and prints the table.

Sizing for one H200 in <= 10 minutes (default; estimated, never run on a GPU: 12
experiments x 2 encodings x 3 seeds = 72 runs; the five MCD searches take ~1 minute of CPU
before training starts): preset small (4 layers, d=256), 2,000 steps of
batch 128, bf16, no torch.compile (compilation costs more than it saves in runs this short),
8 workers, final evaluation capped at 2,000 examples per side. ``--steps``, ``--workers``,
``--preset`` and ``--eval-limit`` change that. ``--smoke`` (tiny model, 30 steps, small data,
one seed) checks the whole pipeline on a CPU in a minute or two.

``--protocol deletang``: the fifteen tasks of Deletang et al. (train lengths 1..40, test
41..500, the sizes of gengap/suites/deletang.yaml: 10,000 / 1,000 / 2,000; every model reads an
empty output tape after the input, as in the paper: ``output_mode`` empty-tape) x the six
architectures (transformer with RoPE, rnn, lstm, stack_rnn, tape_rnn, looped) x seeds 0, 1,
2 = 270 runs of preset small (256 units; the transformer 4 x 256), batch 128, trained until
learned (``until_id`` 0.99 on the per-length mean, then 25 % more steps; at most 10,000 steps), final evaluation of every record
(2,000 test records, ~4 per length). The report's length score column is the paper's score
(per-token accuracy averaged over the test lengths, best seed). Estimated, never run on a
GPU: the recurrent models run a Python loop per token, so a step is bound by kernel launches
(~0.2-0.4 ms per token and layer for forward and backward: ~20-60 ms per step at ~80-120
tokens), a run that converges early takes 1-3 minutes and one that runs to the cap 5-10
minutes; with 16 runs sharing the GPU (``--workers 16``, one per CPU core) the 270 runs
should take ~1.5-3 hours on one H200. ``--only``, ``--archs``, ``--seeds`` and ``--steps``
cut it down (e.g. one seed: ~30-60 minutes).

``--protocol easy-to-hard | two-hop | grokking | label-noise``: the claims the CPU validity
protocol defers to a GPU (``DEFERRED`` below; specs in benchmarks/validity_axes/gpu.py), run by
the validity engine with its three verdicts into OUT/validity.json and OUT/validity.md
(estimated, never run on a GPU: easy-to-hard 3 runs of 20,000 steps of preset small, ~10-20 min;
two-hop one run of 100,000 steps at batch 512, ~1-2 h; grokking and label-noise 9 and 3
full-batch runs of 20,000 steps, ~10 min each protocol with 8 workers).

The same protocol on Ray, with fractional GPUs, retries and resume: ``gengap sweep
gpu-protocol --out runs/protocol`` (gengap/sweeps/gpu-protocol.yaml; its splits come from a
release built from gpu-protocol-suite.yaml, so its seeds, and data, differ from this script's).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# What the CPU validity protocol (benchmarks/validity.py) leaves to a GPU, with the command that runs it;
# docs/validity.md lists it. The engine protocols (validity_axes/gpu.py) judge their claims with the same rules.
DEFERRED = (
    {"what": "the full Deletang et al. grid: 15 tasks x 6 architectures x 3 seeds, lengths 1..40 → 41..500, empty output tape",
     "why": "270 runs of preset small to convergence (~1.5-3 h on one H200, estimated)",
     "command": "python benchmarks/gpu_protocol.py --protocol deletang --out runs/deletang"},
    {"what": "easy-to-hard multiplication (levels 1-4 → 5-7)",
     "why": "not learned by the tiny transformer in 4,000 CPU steps (third edition: ID 0.18); preset small, 20,000 steps",
     "command": "python benchmarks/gpu_protocol.py --protocol easy-to-hard --out runs/easy-to-hard"},
    {"what": "two-hop composition over held-out bridges at Wang et al.'s inferred/atomic ratio ≥ 3.6",
     "why": "Wang et al. need ~10^5 steps for the ID generalization to grok (third edition, CPU: ID 0.35 at its cap)",
     "command": "python benchmarks/gpu_protocol.py --protocol two-hop --out runs/two-hop"},
    {"what": "grokking at Power et al.'s p = 97 (fractions 0.3-0.5, 2 layers, 3 seeds)",
     "why": "20,000 full-batch steps of up to 4,700 pairs per run; the CPU protocol uses Nanda et al.'s p = 113 at one layer",
     "command": "python benchmarks/gpu_protocol.py --protocol grokking --out runs/grokking"},
    {"what": "label noise: 10 % corrupted labels, generalization without keeping them (Doshi et al. 2024)",
     "why": "the unlearning phase comes after grokking, beyond the CPU step budget",
     "command": "python benchmarks/gpu_protocol.py --protocol label-noise --out runs/label-noise"},
)

SCAN_SPLITS = {
    "scan_simple": ("iid", {"test_fraction": 0.2}),
    "scan_length": ("length", {"by": "output_length", "train_max": 22, "test_min": 24}),
    "scan_addprim_jump": ("holdout", {"atom": "jump", "primitive_repeats": 1467}),
    # graded MCD (Keysers et al.): targets from near-random to the maximum, 8,365 / 1,045
    **{
        f"scan_mcd_dc{round(t * 1000):04d}": ("mcd", {"train_size": 8365, "test_size": 1045, "compound_divergence": t})
        for t in (0.15, 0.3, 0.45, 0.6)
    },
    "scan_mcd_max": ("mcd", {"train_size": 8365, "test_size": 1045}),
}
CHOMSKY = ("parity_check", "even_pairs", "reverse_string", "bucket_sort")
EXPERIMENTS = (*SCAN_SPLITS, *CHOMSKY)
DELETANG = (
    "even_pairs", "modular_arithmetic", "parity_check", "cycle_navigation",
    "stack_manipulation", "reverse_string", "modular_arithmetic_brackets", "solve_equation",
    "duplicate_string", "missing_duplicate_string", "odds_first", "binary_addition", "binary_multiplication", "compute_sqrt", "bucket_sort",
)
ARCHS = ("transformer", "rnn", "lstm", "stack_rnn", "tape_rnn", "looped")
KEEP = ("id", "task", "input", "target", "difficulty", "novelty")


def _keep(record: dict) -> dict:
    return {k: record[k] for k in KEEP if k in record}


def build_deletang_splits(names: list[str], smoke: bool, sizes: dict[str, int]) -> dict[str, dict[str, Any]]:
    """The Deletang et al. length split of each task: train 1..40, test 41..500 (smoke: 1..8, 9..16)."""
    from gengap.splits import sample_length_split

    train, test = ((1, 8), (9, 16)) if smoke else ((1, 40), (41, 500))
    out = {}
    for name in names:
        result = sample_length_split(name, train, test, sizes, seed=0)
        out[f"{name}-deletang"] = {**{part: [_keep(r) for r in rows] for part, rows in result.parts().items()}, "report": result.report}
    return out


def build_splits(names: list[str], smoke: bool, sizes: dict[str, int]) -> dict[str, dict[str, Any]]:
    """The parts of each experiment as plain record lists (structure dropped: baselines do not
    read it; novelty kept) with the split report (its divergences go into results.json)."""
    from gengap.generators import get_task
    from gengap.splits import sample_length_split, split

    out: dict[str, dict[str, list[dict]]] = {}
    scan = [n for n in names if n in SCAN_SPLITS]
    if scan:
        task = get_task("scan")
        records = list(task.enumerate(task.default_params()).records("scan"))  # structure: MCD reads it
        for name in scan:
            strategy, options = SCAN_SPLITS[name]
            if strategy == "mcd" and smoke:
                options = {**options, "steps": 1_000_000}  # a target search stops when it is met
            result = split(records, strategy, options)
            out[name] = {**{part: [_keep(r) for r in rows] for part, rows in result.parts().items()}, "report": result.report}
    for name in (n for n in names if n in CHOMSKY):
        result = sample_length_split(name, (1, 40), (41, 100), sizes, seed=0)
        out[name] = {**{part: [_keep(r) for r in rows] for part, rows in result.parts().items()}, "report": result.report}
    return out


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """One (experiment, encoding, seed) run in a worker process."""
    from gengap.baselines.training import train_and_evaluate

    started = time.perf_counter()
    results = train_and_evaluate(job["parts"], job["name"], out=job["out"], resume=True, progress=False, **job["settings"])
    seed = results["per_seed"][0]
    return {
        "name": job["name"], "arch": results["arch"], "pos": results["pos"], "seed": seed["seed"], "seconds": time.perf_counter() - started,
        "id": seed["id_exact_match"], "ood": seed["ood_exact_match"], "length_score": seed.get("ood_length_score"),
        "stopped_at": seed.get("stopped_at"), "converged": seed.get("converged"), "tokens_per_s": seed["tokens_per_s"], "device": results["device"],
    }


ENGINE_PROTOCOLS = ("easy-to-hard", "two-hop", "grokking", "label-noise")


def run_engine_protocol(args: argparse.Namespace, cuda: bool) -> int:
    """A deferred validity claim (validity_axes/gpu.py) run by the validity engine on the device."""
    import validity_engine as engine
    from validity_axes.gpu import GPU_PROTOCOLS
    from validity_report import render

    claims = GPU_PROTOCOLS[args.protocol](args.smoke)
    out = Path(args.out)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    command = f"python benchmarks/gpu_protocol.py --protocol {args.protocol}" + (" --smoke" if args.smoke else "")
    document = engine.run_protocol(claims, out / "runs", args.workers or (8 if cuda else 1), command, "cuda" if cuda else "cpu")
    engine.write_document(out / "validity.json", document)
    (out / "validity.md").write_text(render(document, {"gpu": f"GPU protocol: {args.protocol}"}, (), None), encoding="utf-8")
    for claim in document["claims"]:
        print(f"{claim['key']}: {claim['verdict']} ({claim['measured']})")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="output folder (runs/, report.md, report.png)")
    parser.add_argument("--smoke", action="store_true", help="tiny model, few steps, small data, one seed: a CPU check")
    parser.add_argument("--protocol", choices=("gaps", "deletang", *ENGINE_PROTOCOLS), default="gaps",
                        help="gaps (default): RoPE vs NoPE transformers on SCAN and four Chomsky tasks; deletang: 15 tasks x 6 "
                             "architectures (empty output tape); "
                             f"{', '.join(ENGINE_PROTOCOLS)}: the validity claims deferred to a GPU (validity_axes/gpu.py), judged "
                             "by the validity engine into OUT/validity.json and OUT/validity.md")
    parser.add_argument("--archs", help="deletang: comma-separated architectures (default all six): " + ", ".join(ARCHS))
    parser.add_argument("--only", help="comma-separated experiments (default all): " + ", ".join(EXPERIMENTS) + "; deletang: " + ", ".join(DELETANG))
    parser.add_argument("--encodings", default="rope,nope", help="positional encodings (default rope,nope)")
    parser.add_argument("--seeds", help="comma-separated seeds (default 0,1,2; --smoke: 0)")
    parser.add_argument("--preset", help="model preset (default small; --smoke: tiny)")
    parser.add_argument("--steps", type=int, help="training steps per run (default 2000; --smoke: 30)")
    parser.add_argument("--batch-size", type=int, help="batch size (default 128; --smoke: 32)")
    parser.add_argument("--eval-limit", type=int, help="final evaluation examples per side (default 2000; --smoke: 24)")
    parser.add_argument("--workers", type=int, help="parallel runs (default 8 on CUDA, 1 on the CPU)")
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda")
    parser.add_argument("--compile", action=argparse.BooleanOptionalAction, default=False, help="torch.compile (default off)")
    args = parser.parse_args(argv)

    import torch

    cuda = args.device != "cpu" and torch.cuda.is_available()
    if args.protocol in ENGINE_PROTOCOLS:
        return run_engine_protocol(args, cuda)
    deletang = args.protocol == "deletang"
    known = DELETANG if deletang else EXPERIMENTS
    names = args.only.split(",") if args.only else list(known)
    unknown = sorted(set(names) - set(known))
    if unknown:
        parser.error(f"unknown experiment(s) {', '.join(unknown)}")
    archs = args.archs.split(",") if args.archs else list(ARCHS)
    if sorted(set(archs) - set(ARCHS)):
        parser.error(f"unknown architecture(s) {', '.join(sorted(set(archs) - set(ARCHS)))}")
    smoke = args.smoke
    seeds = [int(s) for s in (args.seeds or ("0" if smoke else "0,1,2")).split(",")]
    steps = args.steps or (30 if smoke else 10000 if deletang else 2000)
    settings = {
        "preset": args.preset or ("tiny" if smoke else "small"),
        "steps": steps,
        "batch_size": args.batch_size or (32 if smoke else 128),
        "lr": 3e-3 if smoke else 1e-3,
        "warmup": max(1, steps // 10),
        "eval_every": max(1, steps // 4),
        "eval_examples": 16 if smoke else 256,
        "eval_limit": args.eval_limit or (24 if smoke else 2000),
        **({"until_id": 0.99, "until_extra": 0.25, "output_mode": "empty-tape", "eval_every": max(1, steps // 20)} if deletang else {}),
        "eval_batch_size": 512 if cuda else 64,
        "device": "cuda" if cuda else "cpu",
        "compile": args.compile,
    }
    sizes = {"train": 300, "validation": 24, "test": 24} if smoke else {"train": 20000, "validation": 1000, "test": 2000}
    if deletang and not smoke:
        sizes = {"train": 10000, "validation": 1000, "test": 2000}  # gengap/suites/deletang.yaml
    workers = args.workers or (8 if cuda else 1)
    out = Path(args.out)
    (out / "runs").mkdir(parents=True, exist_ok=True)

    clock = time.perf_counter()
    parts = build_deletang_splits(names, smoke, sizes) if deletang else build_splits(names, smoke, sizes)
    print(f"splits built in {time.perf_counter() - clock:.1f}s: " + ", ".join(f"{n} {len(p['train'])}/{len(p['validation'])}/{len(p['test'])}" for n, p in parts.items()), flush=True)
    from gengap.baselines.report import model_label

    models = [(arch, "rope" if arch in ("transformer", "looped") else None) for arch in archs] if deletang else \
        [("transformer", pos) for pos in args.encodings.split(",")]
    jobs = [
        {"name": name, "parts": parts[name], "out": str(out / "runs" / f"{name}-{model_label(arch, pos or 'none')}-seed{seed}"),
         "settings": {**settings, "arch": arch, "pos": pos, "seeds": (seed,)}}
        for name in parts for arch, pos in models for seed in seeds
    ]
    jobs.sort(key=lambda j: -len(j["parts"]["test"]))  # the longest evaluations first
    done: list[dict[str, Any]] = []
    if workers > 1:
        context = multiprocessing.get_context("spawn")
        with context.Pool(workers) as pool:
            for row in pool.imap_unordered(run_job, jobs):
                done.append(row)
                print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}), flush=True)
    else:
        for job in jobs:
            row = run_job(job)
            done.append(row)
            print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}), flush=True)

    from gengap.baselines.report import build_report

    text, _rows, plot = build_report([out / "runs"], out / "report.md")
    (out / "protocol.json").write_text(json.dumps({"settings": settings, "seeds": seeds, "workers": workers, "runs": done,
                                                   "wall_seconds": time.perf_counter() - clock}, indent=1) + "\n")
    print(text)
    print(f"{len(done)} runs in {time.perf_counter() - clock:.0f}s on {done[0]['device'] if done else '?'}; wrote {out / 'report.md'}" + (f" and {plot}" if plot else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
