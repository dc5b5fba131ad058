"""MCD splits of cfq_like at CFQ's scale: time, memory, and divergences beside a random split.

    nice -n 10 python benchmarks/cfq_mcd.py                          # 200,000 records, MCD seeds 1,2,3 + random, 2 processes
    python benchmarks/cfq_mcd.py --pool 20000 --steps 1000000 --jobs 1   # the shipped suite's scale (gengap/suites/cfq-like.yaml)

The pool is ``--pool`` cfq_like records of the default parameters (seed ``--pool-seed``), as
``gengap generate cfq_like --n N`` writes them. Splits take CFQ's proportions (Keysers et al. 2020:
train 95,743 / dev 11,968 / test 11,968 of 239,357 distinct questions, 40 / 5 / 5 %) of the
pool's *distinct* questions (splits group identical inputs): train side (train + validation) 45 %,
test 5 %, validation 1/9 of the train side (gengap's validation is in-distribution, drawn from
the train side; CFQ's dev set is not). Each MCD split runs through ``gengap.splits.split`` (the code
``gengap split FILE --strategy mcd`` runs) with D_A <= 0.02 and ``--steps`` moves (default: the
strategy's, 8,000,000), one per ``--seeds`` seed; the random split (strategy iid) takes the same
train / validation / test sizes.

Each split runs in a fresh process (``--jobs`` at a time) that generates the pool itself (the same
records: generation is deterministic) and reports: pool generation wall and CPU seconds; the split's
wall and CPU seconds in three phases (preparation: reading atoms and compounds into the search's
arrays; search: from the first to the last batch of moves; report: overlap removal, validation,
novelty and divergences of the parts); peak resident memory of the process (ru_maxrss); sizes,
D_A and D_C (train vs test, as the split report states them), and D_C cfq: the same D_C on CFQ's
weighted compounds (gengap.splits.compound_weights, weights over the split's pool of distinct
questions; ``--weighting`` sets the MCD searches' measure, default cfq for cfq_like). Wall times count
waiting for a busy core: the load average at start and end is printed, and CPU seconds are the process's own.
``--json FILE`` also writes the rows.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from gengap.generators import get_task
from gengap.splits import generate_records, split
from gengap.splits.compound_weights import TASK_DEFAULT, WEIGHTINGS, weighted_compound_divergence
from gengap.splits.mcd import DEFAULT_STEPS, reporting_steps
from arguments import non_negative_int, positive_int

CFQ = {"pool": 239_357, "train": 95_743, "validation": 11_968, "test": 11_968, "atom_divergence_max": 0.02}
TRAIN_SIDE, TEST = 0.45, 0.05  # of the distinct questions (CFQ's 40 + 5 and 5 %)
VALIDATION = 1 / 9  # of the train side: CFQ's dev size


def sizes_of(distinct: int) -> dict[str, int]:
    train_side, test = int(TRAIN_SIDE * distinct), int(TEST * distinct)
    validation = round(VALIDATION * train_side)
    return {"train_side": train_side, "train": train_side - validation, "validation": validation, "test": test}


def measure(pool_size: int, pool_seed: int, strategy: str, seed: int, steps: int, weighting: str = TASK_DEFAULT) -> dict[str, Any]:
    """One split in this process (see the module doc)."""
    wall, cpu = time.perf_counter(), time.process_time()
    pool = generate_records("cfq_like", get_task("cfq_like").default_params(), pool_size, pool_seed)
    row: dict[str, Any] = {"strategy": strategy, "seed": seed, "gen_wall": time.perf_counter() - wall, "gen_cpu": time.process_time() - cpu}
    distinct = len({r["input"] for r in pool})
    sizes = sizes_of(distinct)
    if strategy == "mcd":
        options: dict[str, Any] = {"train_size": sizes["train_side"], "test_size": sizes["test"], "validation_fraction": VALIDATION,
                                   "atom_divergence_max": CFQ["atom_divergence_max"], "steps": steps, "compound_weighting": weighting}
    else:  # the first train_side + test distinct questions, split at random in the same proportions
        first: dict[str, dict] = {}
        for record in pool:
            first.setdefault(record["input"], record)
        pool = list(first.values())[: sizes["train_side"] + sizes["test"]]
        options = {"test_fraction": sizes["test"] / len(pool), "validation_fraction": VALIDATION}
    marks: list[tuple[float, float]] = []
    wall, cpu = time.perf_counter(), time.process_time()
    with reporting_steps(lambda _: marks.append((time.perf_counter(), time.process_time()))):
        result = split(pool, strategy, options, seed=seed)
    end = (time.perf_counter(), time.process_time())
    report = result.report
    weighted = time.perf_counter()
    row["weighted_compound_divergence"] = weighted_compound_divergence(pool, result.train, result.test)
    row["weighted_wall"] = time.perf_counter() - weighted
    first_mark, last_mark = (marks[0], marks[-1]) if marks else (end, end)
    row.update({
        "records": pool_size, "distinct": distinct, "sizes": report["sizes"],
        "split_wall": end[0] - wall, "split_cpu": end[1] - cpu,
        "prepare_wall": first_mark[0] - wall, "search_wall": last_mark[0] - first_mark[0], "search_cpu": last_mark[1] - first_mark[1],
        "report_wall": end[0] - last_mark[0],
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "atom_divergence": report["atom_divergence"], "compound_divergence": report["compound_divergence"],
        "unseen_atoms": report["unseen_atom_count"], "search": report.get("search"),
    })
    return row


def run_child(args: argparse.Namespace, strategy: str, seed: int) -> dict[str, Any]:
    command = [sys.executable, os.path.abspath(__file__), "--measure", strategy, "--seed", str(seed), "--pool", str(args.pool),
               "--pool-seed", str(args.pool_seed), "--steps", str(args.steps), "--weighting", args.weighting]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        return {"strategy": strategy, "seed": seed, "error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def print_rows(rows: list[dict[str, Any]]) -> None:
    print(f"{'split':<8} {'seed':>4} {'train':>7} {'valid':>6} {'test':>6} {'gen s':>6} {'gen cpu':>7} {'split s':>8} {'split cpu':>9} "
          f"{'prepare s':>9} {'search s':>8} {'search cpu':>10} {'report s':>8} {'peak MiB':>8} {'D_A':>7} {'D_C':>7} {'D_C cfq':>7}")
    for row in rows:
        if "error" in row:
            print(f"{row['strategy']:<8} {row['seed']:>4} error: {row['error']}")
            continue
        s = row["sizes"]
        print(f"{row['strategy']:<8} {row['seed']:>4} {s['train']:>7,} {s['validation']:>6,} {s['test']:>6,} {row['gen_wall']:>6.1f} "
              f"{row['gen_cpu']:>7.1f} {row['split_wall']:>8.1f} {row['split_cpu']:>9.1f} {row['prepare_wall']:>9.1f} "
              f"{row['search_wall']:>8.1f} {row['search_cpu']:>10.1f} {row['report_wall']:>8.1f} {row['peak_rss_mib']:>8.0f} "
              f"{row['atom_divergence']:>7.4f} {row['compound_divergence']:>7.4f} {row['weighted_compound_divergence']:>7.4f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pool", type=positive_int, default=200_000, help="cfq_like records generated (default 200,000)")
    parser.add_argument("--pool-seed", type=non_negative_int, default=0, help="seed of the pool (default 0)")
    parser.add_argument("--seeds", default="1,2,3", help="MCD split seeds (default 1,2,3: CFQ's MCD1-3; empty: the random split only)")
    parser.add_argument("--weighting", choices=(TASK_DEFAULT, *WEIGHTINGS), default=TASK_DEFAULT,
                        help="the MCD splits' compound_weighting (default task: cfq for cfq_like)")
    parser.add_argument("--random-seed", type=non_negative_int, default=0, help="seed of the random split (default 0)")
    parser.add_argument("--steps", type=non_negative_int, default=DEFAULT_STEPS, help=f"MCD search moves (default {DEFAULT_STEPS:,})")
    parser.add_argument("--jobs", type=positive_int, default=2, help="splits run at once, one process each (default 2)")
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # internal: one split in this process
    parser.add_argument("--seed", type=non_negative_int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.pool, args.pool_seed, args.measure, args.seed, args.steps, args.weighting)))
        return
    runs = [("mcd", int(seed)) for seed in args.seeds.split(",") if seed.strip()] + [("iid", args.random_seed)]
    print(f"cfq_like pool of {args.pool:,} records (seed {args.pool_seed}); MCD steps {args.steps:,}; {args.jobs} processes at a time "
          f"on {os.cpu_count()} CPUs; load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        rows = list(pool.map(lambda run: run_child(args, *run), runs))
    wall = time.perf_counter() - start
    first = next((row for row in rows if "error" not in row), None)
    if first is not None:
        print(f"distinct questions: {first['distinct']:,} of {first['records']:,}; CFQ: train {CFQ['train']:,} / dev {CFQ['validation']:,} / "
              f"test {CFQ['test']:,} of {CFQ['pool']:,}")
    print_rows(rows)
    print(f"all splits: {wall:.0f} s wall with {args.jobs} processes; load average at end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"pool": args.pool, "pool_seed": args.pool_seed, "steps": args.steps, "jobs": args.jobs, "wall": wall, "rows": rows}, handle, indent=1)


if __name__ == "__main__":
    main()
