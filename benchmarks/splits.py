"""MCD split benchmark: time, divergences and memory, against a random split of the same sizes.

    python benchmarks/splits.py scan                    # all 20,910 SCAN commands, 8,365 / 1,045
    python benchmarks/splits.py pcfg_set --pool 100000  # 100,000 generated pcfg_set examples
    python benchmarks/splits.py cogs_like --pool 100000 --abstract-lexical   # structural compounds
    taskset -c 0 python benchmarks/splits.py scan --seeds 0,1,2,3,4          # robustness over seeds

Prints, for the MCD split and for a random split with the same train/test sizes, the atom
and compound divergence (train vs test), the wall time and the peak resident memory.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from generators import get_task  # noqa: E402
from splits import generate_records, split  # noqa: E402
from splits.api import records_of_batch  # noqa: E402


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task", help="scan (whole enumeration), or any task (generated pool)")
    parser.add_argument("--pool", type=int, default=0, help="pool size for generated tasks (default: enumerate)")
    parser.add_argument("--train", type=int, default=0, help="train-side size (default 8,365 for SCAN, 40%% of the pool)")
    parser.add_argument("--test", type=int, default=0, help="test size (default 1,045 for SCAN, 5%% of the pool)")
    parser.add_argument("--steps", type=int, default=0, help="MCD search steps (default: the strategy default)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seeds", help="comma-separated seeds: run the MCD search once per seed, print min/median/max")
    parser.add_argument("--abstract-lexical", action="store_true", help="structural compounds (lexical items abstracted)")
    args = parser.parse_args()

    task = get_task(args.task)
    start = time.perf_counter()
    if args.pool:
        pool = generate_records(args.task, task.default_params(), args.pool, args.seed)
    else:
        batch = task.enumerate(task.default_params())
        if batch is None:
            sys.exit(f"{args.task} is not enumerable: give --pool N")
        pool = records_of_batch(batch, args.task)
    print(f"pool: {len(pool):,} {args.task} records in {time.perf_counter() - start:.1f} s")
    train = args.train or (8365 if args.task == "scan" and not args.pool else int(0.4 * len(pool)))
    test = args.test or (1045 if args.task == "scan" and not args.pool else int(0.05 * len(pool)))
    options = {"train_size": train, "test_size": test, "validation_fraction": 0.0, "abstract_lexical": args.abstract_lexical}
    if args.steps:
        options["steps"] = args.steps

    if args.seeds:
        seeds_report(pool, options, [int(s) for s in args.seeds.split(",")])
        return
    start = time.perf_counter()
    mcd = split(pool, "mcd", options, seed=args.seed)
    mcd_seconds = time.perf_counter() - start
    fraction = test / (train + test)
    sub = pool[: train + test] if len(pool) > train + test else pool
    start = time.perf_counter()
    random_options = {"test_fraction": fraction, "validation_fraction": 0.0, "abstract_lexical": args.abstract_lexical}
    random = split(sub, "iid", random_options, seed=args.seed)
    random_seconds = time.perf_counter() - start

    print(f"{'split':8s} {'train':>7s} {'test':>6s} {'D_A':>8s} {'D_C':>8s} {'seconds':>8s}")
    for name, result, seconds in (("mcd", mcd, mcd_seconds), ("random", random, random_seconds)):
        r = result.report
        print(
            f"{name:8s} {r['sizes']['train']:7,d} {r['sizes']['test']:6,d} "
            f"{r['atom_divergence']:8.4f} {r['compound_divergence']:8.4f} {seconds:8.1f}"
        )
    print(f"search: {mcd.report['search']}")
    print(f"peak memory: {peak_rss_mib():.0f} MiB")


def seeds_report(pool: list, options: dict, seeds: list[int]) -> None:
    """One MCD search per seed: D_C, D_A, wall and CPU seconds each, then min / median / max of
    D_C and times (CPU seconds are this process's; wall time counts waiting for a busy core)."""
    rows = []
    print(f"{'seed':>4s} {'D_A':>8s} {'D_C':>8s} {'seconds':>8s} {'cpu s':>8s}")
    for seed in seeds:
        start, start_cpu = time.perf_counter(), time.process_time()
        report = split(pool, "mcd", options, seed=seed).report
        seconds, cpu = time.perf_counter() - start, time.process_time() - start_cpu
        rows.append((report["compound_divergence"], seconds, cpu))
        print(
            f"{seed:4d} {report['atom_divergence']:8.4f} {report['compound_divergence']:8.4f} {seconds:8.1f} {cpu:8.1f}",
            flush=True,
        )
    for label, index in (("D_C", 0), ("seconds", 1), ("cpu seconds", 2)):
        values = [row[index] for row in rows]
        print(f"{label}: min {min(values):.4f}  median {statistics.median(values):.4f}  max {max(values):.4f}")
    print(f"peak memory: {peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
