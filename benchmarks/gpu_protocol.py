"""GPU protocol: ID vs OOD gap of RoPE vs NoPE transformers on SCAN splits and four Chomsky
tasks; and the Deletang et al. (2023) protocol over the six architectures.

    python benchmarks/gpu_protocol.py --out runs/protocol             # one H200: ~11-15 minutes by per-step arithmetic
    python benchmarks/gpu_protocol.py --estimate                      # that arithmetic (also --protocol NAME, every protocol), no GPU needed
    python benchmarks/gpu_protocol.py --out /tmp/smoke --smoke        # CPU check: tiny model, few steps
    python benchmarks/gpu_protocol.py --protocol deletang --out runs/deletang          # 15 tasks x 6 architectures x 3 seeds
    python benchmarks/gpu_protocol.py --protocol deletang --out /tmp/dsmoke --smoke    # CPU check
    python benchmarks/gpu_protocol.py --protocol deletang --paper --out runs/deletang-paper  # as the paper: symmetric seeds x lr grid
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

Sizing (default): preset small (4 layers, d=256), 2,000 steps of batch 128, bf16, no
torch.compile (compilation costs more than it saves in runs this short), 8 workers, final
evaluation capped at 2,000 examples per side; 12 experiments x 2 encodings x 3 seeds = 72
runs. ``--steps``, ``--workers``, ``--preset`` and ``--eval-limit`` change that. ``--smoke``
(tiny model, 30 steps, small data, one seed) checks the whole pipeline on a CPU in a minute
or two. Time on one H200, from per-step arithmetic (``--estimate`` prints it;
benchmarks/gpu_estimate.py; never run on a GPU, benchmarks/gpu_check.py measures the costs
it assumes): a step of the small transformer is 1,080 eager operations (counted on the CPU;
904 for NoPE) and ~0.2 TFLOP at 128 x 80 tokens, so 6.5-13 ms in one process (host-bound, at
6-12 us an operation) and 4-5 ms of GPU work (2-3 us a small kernel, matrix products at
~100 TFLOP/s); 8 workers make it GPU-bound: 144,000 steps take ~9-12 minutes. Decoding adds
~0.5 minute (~950 KV-cached forward passes of ~330 operations per run), building the splits
~1-2 minutes (the five MCD searches, on the CPU, before training): ~11-15 minutes in all,
so the former "<= 10 minutes" does not hold by this arithmetic (``--steps 1500``: ~8.5-11.5).

``--protocol deletang``: the fifteen tasks of Deletang et al. (train lengths 1..40, test
41..500, the sizes of gengap/suites/deletang.yaml: 10,000 / 1,000 / 2,000; every model reads an
empty output tape after the input, as in the paper: ``output_mode`` empty-tape) x the six
architectures (transformer with RoPE, rnn, lstm, stack_rnn, tape_rnn, looped) x seeds 0, 1,
2 = 270 runs of preset small (256 units; the transformer 4 x 256), batch 128, trained until
learned (``until_id`` 0.99 on the per-length mean, then 25 % more steps; at most 10,000 steps), final evaluation of every record
(2,000 test records, ~4 per length). The report's length score column is the paper's score
(per-token accuracy averaged over the test lengths, best seed). Time, from the same
arithmetic (``--estimate --protocol deletang``; never run on a GPU): the recurrent models
run a Python loop per token, so at ~80 tokens a step of the stack RNN is ~8,700 operations
and of the tape RNN ~11,300 (the transformer 1,080, the looped model 1,460, the LSTM 72:
cuDNN; the Elman RNN 1,600 as counted on the CPU, fewer with cuDNN): 50-135 ms in one process,
17-34 ms of GPU work. At the cap (10,000 steps) every run of the 270 would take ~6.5-9.5
hours with the default 8 workers, GPU-bound (the stack and tape RNNs' small kernels are
three quarters of it; ``--workers 16`` does not help once the GPU is busy); the learned
rule stops a run at 1.25 x the step it is learned at, so the total is that times the mean
fraction of the cap the runs reach; evaluation adds a few percent. ``--only``, ``--archs``,
``--seeds`` and ``--steps`` cut it down (e.g. one seed: a third).

``--protocol deletang --paper``: as Deletang et al. ran it (benchmarks/deletang_grid.py): preset
deletang (256 units, stack of 30, the encoder 5 x 64 with 8 heads; Adam, constant lr, batch 128, clip 1),
the encoder as the transformer, fresh batches from each task's generator over lengths 1..40 (``--stream``),
every architecture the same seeds (0..9) x learning rates (1e-4, 3e-4, 5e-4), 10,000 steps without early
stopping, 100 test sequences at every length 41..500 (``--per-length``), all scored; OUT/deletang.md holds
the best length score per task and architecture (as the paper) and the mean [95 % interval] over the
seeds of the learning rate chosen on validation. ``--estimate --paper`` prints its training time by the
same arithmetic (at 42 tokens a row: the train lengths' longest, input + <sep> + one answer token) and
the test tokens a run reads.

``--protocol easy-to-hard | two-hop | grokking | label-noise | looped | duplicate-string | cfq | rules | memorized``: the claims the CPU validity
protocol defers to a GPU (``DEFERRED`` below; specs in benchmarks/validity_axes/gpu.py), run by
the validity engine with its three verdicts into OUT/validity.json and OUT/validity.md.
Training time by the same arithmetic (``--estimate --protocol NAME``; never run on a GPU): every
run at its step cap, at the 99th-percentile row length of its train part (``TOKENS``), with 8
workers; runs trained until learned stop sooner, and the periodic evaluations and split
building come on top. label-noise <= 1.9-2.5 min, easy-to-hard <= 2.6-4.3, grokking <= 5.2-7.0
(9 full-batch runs), memorized <= 6.4-8.6, two-hop <= 11-22 (one run of 100,000 steps, host-bound),
cfq <= 11-13.5 (7 runs of preset small at ~105 tokens), looped <= 19-28, rules <= 23-32 (12 runs
of up to 40,000 steps), duplicate-string <= 45-70 (the tape and stack RNNs loop over tokens in
Python). ``DEFERRED``'s "estimate" holds these figures, and a test recomputes them.

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

from deletang_grid import PAPER_ARCHS, PAPER_SEEDS, grid  # noqa: E402  (benchmarks/ is on the path now)

# What the CPU validity protocol (benchmarks/validity.py) leaves to a GPU, with the command that runs it;
# docs/validity.md lists it. The engine protocols (validity_axes/gpu.py) judge their claims with the same rules.
# "estimate": its training time on one H200 with 8 workers, every run at its step cap, by per-step arithmetic
# (`--estimate --protocol NAME`, the assumed costs of gpu_estimate.ASSUMED; evaluation and split building not included).
DEFERRED = (
    {"what": "the full Deletang et al. grid: 15 tasks x 6 architectures x 3 seeds, lengths 1..40 → 41..500, empty output tape",
     "why": "270 runs of preset small to convergence (up to ~6.5-9.5 h on one H200 at the step cap, by per-step arithmetic)",
     "estimate": "≤ 6.5-9.5 h",
     "command": "python benchmarks/gpu_protocol.py --protocol deletang --out runs/deletang"},
    {"what": "easy-to-hard multiplication (levels 1-4 → 5-7)",
     "why": "not learned by the tiny transformer in 4,000 CPU steps (third edition: ID 0.18); preset small, 20,000 steps",
     "estimate": "≤ 2.62-4.32 min",
     "command": "python benchmarks/gpu_protocol.py --protocol easy-to-hard --out runs/easy-to-hard"},
    {"what": "two-hop composition over held-out bridges at Wang et al.'s inferred/atomic ratio ≥ 3.6",
     "why": "Wang et al. need ~10^5 steps for the ID generalization to grok (third edition, CPU: ID 0.35 at its cap)",
     "estimate": "≤ 10.8-21.6 min",
     "command": "python benchmarks/gpu_protocol.py --protocol two-hop --out runs/two-hop"},
    {"what": "grokking at Power et al.'s p = 97 (fractions 0.3-0.5, 2 layers, 3 seeds)",
     "why": "20,000 full-batch steps of up to 4,700 pairs per run; the CPU protocol uses p = 23 at one layer (a full-batch step at Nanda et al.'s p = 113 takes ~0.9 s on the CPU)",
     "estimate": "≤ 5.19-6.96 min",
     "command": "python benchmarks/gpu_protocol.py --protocol grokking --out runs/grokking"},
    {"what": "label noise: 10 % corrupted labels, generalization without keeping them (Doshi et al. 2024)",
     "why": "the unlearning phase comes after grokking, beyond the CPU step budget",
     "estimate": "≤ 1.87-2.46 min",
     "command": "python benchmarks/gpu_protocol.py --protocol label-noise --out runs/label-noise"},
    {"what": "looped models on prefix_sums and parity_check: more test iterations solve longer inputs (recall, progressive loss)",
     "why": "fourth edition on the CPU: not learned at 2,000 steps (looped ID 0.003 and 0.51; a step is 8-24 layer passes, "
            "40 CPU min for the two runs); the GPU protocol: 20,000 steps, 3 seeds",
     "estimate": "≤ 18.7-28.1 min",
     "command": "python benchmarks/gpu_protocol.py --protocol looped --out runs/looped"},
    {"what": "duplicate_string: the tape RNN generalizes where the stack RNN, the LSTM and the transformer do not (empty output tape)",
     "why": "fourth edition on the CPU: not learned at 4,000 steps (tape RNN ID 0.52 and 0.28, 22 CPU min for two seeds); the paper "
            "trains 1,000,000 steps; the GPU protocol: 40,000 steps, 3 seeds of every architecture (edition 10: losing arms "
            "too; also in --protocol deletang's grid)",
     "estimate": "≤ 64.9-97.2 min",
     "command": "python benchmarks/gpu_protocol.py --protocol duplicate-string --out runs/duplicate-string"},
    {"what": "cfq_like: a model that learned the random split falls on MCD1-3, and OOD falls as compound divergence rises",
     "why": "fifth to ninth editions on the CPU: not learned at 6,000 steps (tiny transformer ID 0.49-0.68 averaged over "
            "question lengths, 0.80-0.90 over records, 7 runs); pilots of the random split (seed 9, not protocol runs) did "
            "not learn either: 48,000 training records, 0.534 averaged over lengths after 6,000 steps; grammar level 3, "
            "0.694 with 8,000 records and 0.757 with 47,000 after 8,000 steps; the GPU protocol: preset small, 20,000 steps, "
            "learned over validation records (≥ 0.95 at two evaluations, as CFQ reports accuracy); out of the CPU headline "
            "since edition 10",
     "estimate": "≤ 11-13.5 min",
     "command": "python benchmarks/gpu_protocol.py --protocol cfq --out runs/cfq"},
    {"what": "rules in context: OOD on unseen rewrite systems rises with the number of training systems, every N learned",
     "why": "seventh edition on the CPU: N = 78 not learned at 24,000 steps (ID 0.85 and 0.88 on unseen strings of its "
            "systems; 0.84 and 0.81 at the sixth edition's 10,000); OOD already rose 0.10 → 0.34 with N; the GPU protocol: "
            "preset small, 40,000 steps, 3 seeds; out of the CPU headline since edition 10",
     "estimate": "≤ 22.9-31.6 min",
     "command": "python benchmarks/gpu_protocol.py --protocol rules --out runs/rules"},
    {"what": "fresh:memorized: a model that trained on the cited test part scores higher there than on a fresh part",
     "why": "sixth edition on the CPU: not learned (the tiny transformer fit the cited parity part it trained 4 times on to "
            "0.618, fresh 0.674); a pilot with 16 copies and no early stop left its ID at chance; the GPU protocol: preset "
            "small, every step of 20,000 trained, 3 seeds",
     "estimate": "≤ 6.41-8.57 min",
     "command": "python benchmarks/gpu_protocol.py --protocol memorized --out runs/memorized"},
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


def paper_estimate(archs: list[str], runs_per_lr: int, steps: int, tokens: int, batch: int, workers: int, per_length: int) -> list[str]:
    """--estimate --paper: training by the same arithmetic as ``estimate`` (every run of the grid: the runs of each
    architecture x the 3 learning rates, at preset deletang, to the fixed step count), and the test tokens a run
    reads (per_length sequences at each length 41..500, input + <sep> + the tape; not in the training total)."""
    from gengap.baselines.settings import DELETANG_LEARNING_RATES

    runs = runs_per_lr * len(DELETANG_LEARNING_RATES)
    lines = estimate("deletang --paper", archs, runs, steps, tokens, batch, "deletang", workers)
    test_tokens = per_length * sum(length + 2 for length in range(41, 501))  # one answer token; longer answers read more
    lines.append(f"evaluation: {test_tokens:,} test tokens (at least) a run, {test_tokens * runs * len(archs):,} over the "
                 f"{runs * len(archs):,} runs, one forward pass each (not in the total above)")
    return lines


def paper_settings(settings: dict[str, Any], smoke: bool, per_length: int | None, batch_size: int | None) -> dict[str, Any]:
    """--paper: the protocol's settings as Deletang et al. ran it (see benchmarks/deletang_grid.py): preset deletang (its
    learning rate comes from the grid), fresh batches over the train lengths, a fixed number of steps, N test sequences a length."""
    train, test = ((1, 8), (9, 16)) if smoke else ((1, 40), (41, 500))
    chosen = {k: v for k, v in settings.items() if k not in ("lr", "warmup", "until_id", "until_extra", "preset", "eval_limit")}  # every test record scored
    return {**chosen, "preset": "deletang", "batch_size": batch_size or (32 if smoke else 128), "sizes": (train,),
            "test_per_length": per_length or (2 if smoke else 100), "test_lengths": test,
            **({"d_model": 16, "layers": 1} if smoke else {})}


def paper_jobs(parts: dict[str, Any], archs: list[str], seeds: list[int], out: Path, settings: dict[str, Any]) -> list[dict[str, Any]]:
    """One job per point of the symmetric grid (deletang_grid.grid): every architecture the same seeds x learning rates."""
    from gengap.baselines.report import model_label
    from gengap.baselines.settings import DELETANG_LEARNING_RATES

    jobs = []
    for point in grid([name.removesuffix("-deletang") for name in parts], archs, seeds, DELETANG_LEARNING_RATES):
        name = f"{point.task}-deletang"
        pos = None if point.arch != "encoder" else "sinusoidal"
        folder = out / "runs" / f"{name}-{model_label(point.arch, pos or 'none')}-lr{point.lr:g}-seed{point.seed}"
        jobs.append({"name": name, "task": point.task, "parts": parts[name], "out": str(folder),
                     "settings": {**settings, "arch": point.arch, "pos": pos, "lr": point.lr, "seeds": (point.seed,), "stream": point.task}})
    return jobs


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """One (experiment, encoding, seed) run in a worker process."""
    from gengap.baselines.training import train_and_evaluate

    started = time.perf_counter()
    results = train_and_evaluate(job["parts"], job["name"], out=job["out"], resume=True, progress=False, **job["settings"])
    seed = results["per_seed"][0]
    return {
        "name": job["name"], "task": job.get("task", job["name"]), "arch": results["arch"], "pos": results["pos"], "seed": seed["seed"],
        "lr": results["settings"]["lr"], "seconds": time.perf_counter() - started,
        "id": seed["id_exact_match"], "ood": seed["ood_exact_match"], "length_score": seed.get("ood_length_score"),
        "stopped_at": seed.get("stopped_at"), "converged": seed.get("converged"), "tokens_per_s": seed["tokens_per_s"], "device": results["device"],
    }


ENGINE_PROTOCOLS = ("easy-to-hard", "two-hop", "grokking", "label-noise", "looped", "duplicate-string", "cfq", "rules", "memorized")  # the keys of validity_axes.gpu.GPU_PROTOCOLS


STRUCTURE = ("layers", "d_model", "heads", "memory_cell", "iterations", "window", "progressive_loss")  # settings that change a step's operations


def operations_per_step(arch: str, pos: str | None, preset: str, tokens: int, batch: int = 2, vocab: int = 24,
                        **structure: Any) -> tuple[int, int]:
    """(aten operations, parameters) of one training step of ``arch`` at ``preset`` (and ``structure``:
    keys of STRUCTURE) on a batch of ``tokens``-token rows, counted on the CPU with the CUDA settings
    (fused AdamW, the precision the architecture runs in under bf16); the count does not depend on the
    batch size."""
    import torch

    from gengap.baselines.architectures import build
    from gengap.baselines.probes import count_operations
    from gengap.baselines.settings import TrainSettings
    from gengap.baselines.training import Trainer

    layout = {"output_mode": "empty-tape"} if arch == "encoder" else {}  # the encoder takes no other layout
    settings = TrainSettings(arch=arch, pos=pos, preset=preset, steps=10, fused=True, precision="bf16", **layout, **structure).resolve()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = build(settings.spec, vocab, tokens + 8, 0, 1)
    trainer = Trainer(model, None, settings, torch.device("cpu"), compile_model=False)  # type: ignore[arg-type]
    ids = torch.randint(3, vocab, (batch, tokens))
    ids[:, tokens // 2] = 1  # <sep>
    trainer.step(ids, ids, 1)  # the optimizer's state exists from here on
    return count_operations(lambda: trainer.step(ids, ids, 2)), model.n_parameters()


def estimate(protocol: str, archs: list[str], runs_per_arch: int, steps: int, tokens: int, batch: int, preset: str, workers: int) -> list[str]:
    """The lines of --estimate: per architecture the counted operations and FLOPs of a step, its
    seconds in one process and on the GPU under each ASSUMED cost, and the training total
    (benchmarks/gpu_estimate.py)."""
    from gpu_estimate import StepLoad, matmul_flops

    models = [("transformer", pos) for pos in ("rope", "nope")] if protocol == "gaps" else \
        [(arch, "rope" if arch in ("transformer", "looped") else None) for arch in archs]
    loads = []
    for arch, pos in models:
        operations, parameters = operations_per_step(arch, pos, preset, tokens)
        loads.append(StepLoad(f"{arch} {pos or ''}".strip(), operations, matmul_flops(parameters, batch * tokens), runs_per_arch * steps, runs_per_arch))
    header = f"{protocol}: {runs_per_arch} runs x {steps:,} steps per model, batch {batch} x {tokens} tokens, preset {preset}, {workers} workers"
    return estimate_table(header, loads, workers, "", "{:.0f}")


def estimate_table(header: str, loads: list[Any], workers: int, bound: str, gflop: str) -> list[str]:
    """The header, a row per load (operations, GFLOP and seconds of a step under each ASSUMED cost) and the training total."""
    from gpu_estimate import ASSUMED, step_seconds, training_seconds

    lines = [header, "| model | operations / step | GFLOP / step | " + " | ".join(
        f"s/step one process, GPU (H {c.host * 1e6:.0f} us, K {c.kernel * 1e6:.0f} us)" for c in ASSUMED) + " |",
             "|---|---:|---:|" + "---|" * len(ASSUMED)]
    for load in loads:
        cells = [" / ".join(f"{x * 1000:.1f} ms" for x in step_seconds(load, costs)) for costs in ASSUMED]
        lines.append(f"| {load.name} | {load.operations:,} | {gflop.format(load.flops / 1e9)} | " + " | ".join(cells) + " |")
    totals = [training_seconds(loads, workers, costs) / 60 for costs in ASSUMED]
    lines.append(f"training, {workers} workers on one GPU: {bound}{totals[0]:.3g}-{totals[1]:.3g} min (evaluation and split building not included)")
    return lines


# Tokens of a training row (input + target + 2) at the 99th percentile of each engine protocol's train part: a padded
# batch runs at about its longest rows. Measured from the protocols' splits (cfq: its random split; rules: 3,000
# generated records of its systems' parameters), 2026-12-06. ``--tokens`` overrides.
MAX_TOKENS = 4096  # --tokens: a row of the estimate's training step, built and run on the CPU
TOKENS = {"easy-to-hard": 19, "two-hop": 6, "grokking": 6, "label-noise": 6, "looped": 42, "duplicate-string": 62, "cfq": 105,
          "rules": 29, "memorized": 43}


def engine_estimate(protocol: str, tokens: int | None, workers: int) -> list[str]:
    """The lines of --estimate for a deferred validity claim: every run of the protocol (validity_axes.gpu,
    an arm shared by two claims counted once) at its step cap, grouped by model, at ``tokens`` a row
    (default: TOKENS); full-batch runs count their train part's rows. The same arithmetic as ``estimate``.
    Runs trained until learned stop earlier, so the total is an upper bound on training."""
    import validity_engine as engine
    from gpu_estimate import StepLoad, matmul_flops
    from validity_axes.gpu import GPU_PROTOCOLS

    from gengap.baselines.settings import TrainSettings

    tokens = tokens or TOKENS[protocol]
    runs = {run.name: run for run in engine.plan(GPU_PROTOCOLS[protocol](False)).values()}
    groups: dict[tuple[Any, ...], list[int]] = {}
    for run in runs.values():
        given = engine.thawed(run.settings)
        structure = tuple((key, given[key]) for key in STRUCTURE if given.get(key) is not None)
        resolved = TrainSettings(arch=given.get("arch", "transformer"), pos=given.get("pos"), preset=run.preset,
                                 steps=given.get("steps"), batch_size=given.get("batch_size"), **dict(structure)).resolve()
        rows = len(engine.build_split(run.build).train) if given.get("full_batch") else resolved.batch_size
        key = (resolved.arch, resolved.pos, run.preset, structure, rows, bool(given.get("full_batch")))
        groups.setdefault(key, [0, 0])
        groups[key][0] += int(resolved.steps or 0)
        groups[key][1] += 1
    loads, names = [], []
    for (arch, pos, preset, structure, rows, full), (steps, count) in groups.items():
        operations, parameters = operations_per_step(arch, None if pos == "none" else pos, preset, tokens, **dict(structure))
        model = " ".join(part for part in (arch, None if pos in (None, "none") else pos, preset) if part)
        shape = "".join(f", {k} {v}" for k, v in structure)
        names.append(f"{model}{shape}; batch {f'full ({rows:,})' if full else rows}; {count} run{'s' if count > 1 else ''}, {steps:,} steps")
        loads.append(StepLoad(names[-1], operations, matmul_flops(parameters, rows * tokens), steps, count))
    header = f"{protocol}: {len(runs)} runs at their step caps (until learned: fewer), {tokens} tokens a row, {workers} workers"
    return estimate_table(header, loads, workers, "at most ", "{:.1f}")


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
    (out / "validity.md").write_text(render(document, {"gpu": f"GPU protocol: {args.protocol}"}, ()), encoding="utf-8")
    for claim in document["claims"]:
        print(f"{claim['key']}: {claim['verdict']} ({claim['measured']})")
    return 0


def main(argv: list[str] | None = None) -> int:
    from arguments import int_at_most, names_of, positive_int, seed_list

    from gengap.baselines.settings import PRESETS
    from gengap.baselines.spec import POSITIONAL

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="output folder (runs/, report.md, report.png); not with --estimate")
    parser.add_argument("--smoke", action="store_true", help="tiny model, few steps, small data, one seed: a CPU check")
    parser.add_argument("--protocol", choices=("gaps", "deletang", *ENGINE_PROTOCOLS), default="gaps",
                        help="gaps (default): RoPE vs NoPE transformers on SCAN and four Chomsky tasks; deletang: 15 tasks x 6 "
                             "architectures (empty output tape); "
                             f"{', '.join(ENGINE_PROTOCOLS)}: the validity claims deferred to a GPU (validity_axes/gpu.py), judged "
                             "by the validity engine into OUT/validity.json and OUT/validity.md")
    parser.add_argument("--archs", help="deletang: comma-separated architectures (default all six; --paper: " + ", ".join(PAPER_ARCHS) + "): "
                        + ", ".join((*ARCHS, "encoder")))
    parser.add_argument("--paper", action="store_true", help="deletang: as the paper ran it (benchmarks/deletang_grid.py): fresh batches "
                        "from the generator over lengths 1..40, preset deletang, the encoder as the transformer, every architecture the same "
                        "seeds (default 0..9) x learning rates 1e-4, 3e-4, 5e-4, a fixed number of steps (default 10,000), "
                        "--per-length test sequences at every length 41..500; OUT/deletang.md: best and mean [95 %% interval]")
    parser.add_argument("--per-length", type=positive_int, help="--paper: test sequences per length (default 100: standard error <= 0.05; --smoke: 2)")
    parser.add_argument("--only", help="comma-separated experiments (default all): " + ", ".join(EXPERIMENTS) + "; deletang: " + ", ".join(DELETANG))
    parser.add_argument("--encodings", default="rope,nope", type=names_of(POSITIONAL), help="positional encodings (default rope,nope)")
    parser.add_argument("--seeds", type=seed_list, help="comma-separated seeds (default 0,1,2; --smoke: 0)")
    parser.add_argument("--preset", choices=tuple(PRESETS), help="model preset (default small; --smoke: tiny)")
    parser.add_argument("--steps", type=positive_int, help="training steps per run (default 2000; --smoke: 30)")
    parser.add_argument("--batch-size", type=positive_int, help="batch size (default 128; --smoke: 32)")
    parser.add_argument("--eval-limit", type=positive_int, help="final evaluation examples per side (default 2000; --smoke: 24)")
    parser.add_argument("--workers", type=positive_int, help="parallel runs (default 8 on CUDA, 1 on the CPU)")
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"), help="auto, cpu or cuda (an error when CUDA is not available)")
    parser.add_argument("--compile", action=argparse.BooleanOptionalAction, default=False, help="torch.compile (default off)")
    parser.add_argument("--estimate", action="store_true", help="print the protocol's training time from per-step arithmetic "
                        "(operations counted on the CPU, costs assumed: benchmarks/gpu_estimate.py) and exit; every protocol")
    parser.add_argument("--tokens", type=int_at_most(MAX_TOKENS), help="--estimate: tokens a training row (default 80; the engine protocols: "
                        "their train parts' 99th percentile, gpu_protocol.TOKENS)")
    args = parser.parse_args(argv)
    if not args.out and not args.estimate:
        parser.error("--out is required")

    import torch

    cuda = args.device != "cpu" and torch.cuda.is_available()
    if args.device == "cuda" and not cuda and not args.estimate:  # the estimate counts on the CPU whatever the device
        parser.error("--device cuda: CUDA is not available (use --device auto or cpu to run on the CPU)")
    if args.protocol in ENGINE_PROTOCOLS:
        if args.estimate:
            print("\n".join(engine_estimate(args.protocol, args.tokens, args.workers or 8)))
            return 0
        return run_engine_protocol(args, cuda)
    deletang = args.protocol == "deletang"
    known = DELETANG if deletang else EXPERIMENTS
    names = args.only.split(",") if args.only else list(known)
    unknown = sorted(set(names) - set(known))
    if unknown:
        parser.error(f"unknown experiment(s) {', '.join(unknown)}")
    paper = deletang and args.paper
    if args.paper and not deletang:
        parser.error("--paper applies to --protocol deletang")
    allowed = (*ARCHS, "encoder") if deletang else ARCHS
    archs = args.archs.split(",") if args.archs else list(PAPER_ARCHS if paper else ARCHS)
    if sorted(set(archs) - set(allowed)):
        parser.error(f"unknown architecture(s) {', '.join(sorted(set(archs) - set(allowed)))}")
    try:
        seeds = [int(s) for s in (args.seeds or ("0" if args.smoke else ",".join(map(str, PAPER_SEEDS)) if paper else "0,1,2")).split(",")]
    except ValueError:
        parser.error(f"--seeds {args.seeds!r}: not a comma-separated list of integers")
    if args.estimate and paper:
        print("\n".join(paper_estimate(archs, len(names) * len(seeds), args.steps or 10000, args.tokens or 42, args.batch_size or 128,
                                        args.workers or 8, args.per_length or 100)))
        return 0
    if args.estimate:
        lines = estimate(args.protocol, archs, len(names) * len(seeds), args.steps or (10000 if deletang else 2000), args.tokens or 80,
                         args.batch_size or 128, args.preset or "small", args.workers or 8)
        print("\n".join(lines))
        return 0
    smoke = args.smoke
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
    if paper:
        settings = paper_settings(settings, smoke, args.per_length, args.batch_size)
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
    if paper:
        jobs = paper_jobs(parts, archs, seeds, out, settings)
    else:
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
    if paper:
        from deletang_grid import table

        (out / "deletang.md").write_text(table(done))
        print(table(done))
    print(f"{len(done)} runs in {time.perf_counter() - clock:.0f}s on {done[0]['device'] if done else '?'}; wrote {out / 'report.md'}" + (f" and {plot}" if plot else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
