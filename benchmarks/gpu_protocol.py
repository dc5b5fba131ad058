"""GPU protocol: ID vs OOD gap of RoPE vs NoPE transformers on SCAN splits and four Chomsky
tasks; and the Deletang et al. (2023) protocol over the six architectures.

    python benchmarks/gpu_protocol.py --out runs/protocol             # one H200, sized for <= 10 minutes
    python benchmarks/gpu_protocol.py --out /tmp/smoke --smoke        # CPU check: tiny model, few steps
    python benchmarks/gpu_protocol.py --protocol deletang --out runs/deletang          # 15 tasks x 6 architectures x 3 seeds
    python benchmarks/gpu_protocol.py --protocol deletang --out /tmp/dsmoke --smoke    # CPU check
    python benchmarks/gpu_protocol.py --protocol grokking --out runs/grokking          # Power et al.: x / y mod 97, fractions 0.3-0.5

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
41..500, the sizes of gengap/suites/deletang.yaml: 10,000 / 1,000 / 2,000) x the six
architectures (transformer with RoPE, rnn, lstm, stack_rnn, tape_rnn, looped) x seeds 0, 1,
2 = 270 runs of preset small (256 units; the transformer 4 x 256), batch 128, trained to
convergence (``until_id`` 0.99, at most 10,000 steps), final evaluation of every record
(2,000 test records, ~4 per length). The report's length score column is the paper's score
(per-token accuracy averaged over the test lengths, best seed). Estimated, never run on a
GPU: the recurrent models run a Python loop per token, so a step is bound by kernel launches
(~0.2-0.4 ms per token and layer for forward and backward: ~20-60 ms per step at ~80-120
tokens), a run that converges early takes 1-3 minutes and one that runs to the cap 5-10
minutes; with 16 runs sharing the GPU (``--workers 16``, one per CPU core) the 270 runs
should take ~1.5-3 hours on one H200. ``--only``, ``--archs``, ``--seeds`` and ``--steps``
cut it down (e.g. one seed: ~30-60 minutes).

``--protocol grokking``: Power et al. (2022)'s setting from gengap/suites/grokking.yaml, x / y
mod 97 at training fractions 0.3, 0.4 and 0.5, a 2-layer transformer (d 128, 4 heads), AdamW
lr 1e-3, weight decay 1, constant schedule, full batch, 20,000 steps, 3 seeds = 9 runs; the
report draws the grokking curves and the delay against the fraction. Estimated, never run on
a GPU: ~3-5 ms a full-batch step, ~1-2 minutes a run, ~5 minutes for the 9 runs sharing the
GPU (``--smoke``: mod 7, a few steps, on a CPU).

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


def run_grokking(args: argparse.Namespace, cuda: bool) -> int:
    """Power et al.'s setting (gengap/suites/grokking.yaml; --smoke: mod 7, few steps), 3 seeds, then the report."""
    from gengap.baselines.report import build_report
    from gengap.release import build_entry
    from gengap.suite import load_suite

    suite = load_suite(Path(__file__).resolve().parent.parent / "gengap" / "suites" / "grokking.yaml")
    seeds = [int(s) for s in (args.seeds or ("0" if args.smoke else "0,1,2")).split(",")]
    steps = args.steps or (20 if args.smoke else 20000)
    settings = {
        "preset": "tiny", "layers": 2, "d_model": 32 if args.smoke else 128, "heads": 4, "lr": 1e-3, "weight_decay": 1.0,
        "schedule": "constant", "warmup": 10, "full_batch": True, "steps": steps, "eval_every": max(1, steps // 100),
        "eval_examples": 512, "device": "cuda" if cuda else "cpu", "compile": False,
    }
    out = Path(args.out)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    clock = time.perf_counter()
    jobs = []
    for entry in suite["entries"]:
        if args.smoke:
            entry = {**entry, "params": {**entry["params"], "p": 7}}
        result = build_entry(entry, suite["seed"])
        parts = {**{part: [_keep(r) for r in rows] for part, rows in result.parts().items()}, "report": result.report}
        jobs += [{"name": entry["name"], "parts": parts, "out": str(out / "runs" / f"{entry['name']}-rope-seed{seed}"),
                  "settings": {**settings, "pos": "rope", "seeds": (seed,)}} for seed in seeds]
    workers = args.workers or (8 if cuda else 1)
    done = []
    if workers > 1:
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            done = list(pool.imap_unordered(run_job, jobs))
    else:
        done = [run_job(job) for job in jobs]
    text, _rows, _plot = build_report([out / "runs"], out / "report.md")
    (out / "protocol.json").write_text(json.dumps({"settings": settings, "seeds": seeds, "runs": done, "wall_seconds": time.perf_counter() - clock}, indent=1) + "\n")
    print(text)
    print(f"{len(done)} runs in {time.perf_counter() - clock:.0f}s; wrote {out / 'report.md'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="output folder (runs/, report.md, report.png)")
    parser.add_argument("--smoke", action="store_true", help="tiny model, few steps, small data, one seed: a CPU check")
    parser.add_argument("--protocol", choices=("gaps", "deletang", "grokking"), default="gaps",
                        help="gaps (default): RoPE vs NoPE transformers on SCAN and four Chomsky tasks; deletang: 15 tasks x 6 "
                             "architectures; grokking: Power et al.'s x / y mod 97 at fractions 0.3-0.5")
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
    if args.protocol == "grokking":
        return run_grokking(args, cuda)
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
        **({"until_id": 0.99, "eval_every": max(1, steps // 20)} if deletang else {}),
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
