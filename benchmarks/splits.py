"""MCD split benchmark: time, divergences and memory, against a random split of the same sizes.

    python benchmarks/splits.py scan                    # all 20,910 SCAN commands, 8,365 / 1,045
    python benchmarks/splits.py pcfg_set --pool 100000  # 100,000 generated pcfg_set examples
    python benchmarks/splits.py cogs_like --pool 100000 --abstract-lexical   # structural compounds
    taskset -c 0 python benchmarks/splits.py scan --seeds 0,1,2,3,4          # robustness over seeds
    python benchmarks/splits.py pcfg_set --scale 100000,1000000 --before main  # memory and time at scale

--scale runs one fresh process per (code, pool size): it generates the pool (timed apart),
splits it with MCD (train 40 %, test 5 %), and reports wall and CPU seconds, peak resident
memory (ru_maxrss of that process; "pool MiB" is that peak once the pool is generated, before
the split) and the D_A / D_C of the split. With --before REF the
same measurement runs on the code of git ref REF (exported to a temporary directory, never
imported into this package) for pools up to --before-max, and a column says whether the
two splits are identical (same train and test records).

Prints, for the MCD split and for a random split with the same train/test sizes, the atom
and compound divergence (train vs test), the wall time and the peak resident memory.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

# GENGAP_CODE_ROOT: measure the package code of another tree (--scale --before); default: this one
sys.path.insert(0, os.environ.get("GENGAP_CODE_ROOT") or os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from gengap.generators import get_task  # noqa: E402
from gengap.splits import generate_records, split  # noqa: E402
from gengap.splits.api import records_of_batch  # noqa: E402
from arguments import non_negative_int, positive_int  # noqa: E402


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task", help="scan (whole enumeration), or any task (generated pool)")
    parser.add_argument("--pool", type=non_negative_int, default=0, help="pool size for generated tasks (default: enumerate)")
    parser.add_argument("--train", type=non_negative_int, default=0, help="train-side size (default 8,365 for SCAN, 40%% of the pool)")
    parser.add_argument("--test", type=non_negative_int, default=0, help="test size (default 1,045 for SCAN, 5%% of the pool)")
    parser.add_argument("--steps", type=non_negative_int, default=0, help="MCD search steps (default: the strategy default)")
    parser.add_argument("--seed", type=non_negative_int, default=0)
    parser.add_argument("--seeds", help="comma-separated seeds: run the MCD search once per seed, print min/median/max")
    parser.add_argument("--abstract-lexical", action="store_true", help="structural compounds (lexical items abstracted)")
    parser.add_argument("--scale", help="comma-separated pool sizes: one fresh process each (see the module doc)")
    parser.add_argument("--before", help="git ref whose code is measured beside this one in --scale mode (e.g. main)")
    parser.add_argument("--before-max", type=positive_int, default=100_000, help="largest pool the --before code is run on")
    parser.add_argument("--measure", type=int, help=argparse.SUPPRESS)  # internal: one --scale measurement
    args = parser.parse_args()
    if args.measure:
        measure(args.task, args.measure, args.seed, args.steps, args.abstract_lexical)
        return
    if args.scale:
        scale_report(args)
        return

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


def measure(task_name: str, size: int, seed: int, steps: int, abstract_lexical: bool) -> None:
    """One --scale measurement in this process; prints one JSON line."""
    task = get_task(task_name)
    wall, cpu = time.perf_counter(), time.process_time()
    pool = generate_records(task_name, task.default_params(), size, seed)
    generated = {"gen_wall": time.perf_counter() - wall, "gen_cpu": time.process_time() - cpu, "gen_rss_mib": peak_rss_mib()}
    options = {"train_size": int(0.4 * size), "test_size": int(0.05 * size), "validation_fraction": 0.0,
               "abstract_lexical": abstract_lexical}
    if steps:
        options["steps"] = steps
    wall, cpu = time.perf_counter(), time.process_time()
    result = split(pool, "mcd", options, seed=seed)
    digest = hashlib.sha256()
    for name in ("train", "test"):
        digest.update(("\n".join(sorted(r["id"] for r in getattr(result, name))) + f"\n{name}\n").encode())
    print(json.dumps({
        **generated, "split_wall": time.perf_counter() - wall, "split_cpu": time.process_time() - cpu,
        "peak_rss_mib": peak_rss_mib(), "da": result.report["atom_divergence"], "dc": result.report["compound_divergence"],
        "digest": digest.hexdigest()[:16],
    }))


def _export(ref: str, into: str) -> str:
    """The tree of git ref `ref` of this checkout, extracted under `into`."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    archive = subprocess.run(["git", "-C", root, "archive", ref], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", into], input=archive, check=True)
    return into


def _run(code_root: str, args: argparse.Namespace, size: int) -> dict:
    command = [sys.executable, os.path.abspath(__file__), args.task, "--measure", str(size),
               "--seed", str(args.seed), "--steps", str(args.steps)]
    if args.abstract_lexical:
        command.append("--abstract-lexical")
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "GENGAP_CODE_ROOT": code_root})
    if done.returncode:
        return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def scale_report(args: argparse.Namespace) -> None:
    """--scale: a row per (pool size, code): this checkout ("after") and, with --before, the
    code of that git ref ("before"), measured in the same run, each in a fresh process."""
    sizes = [int(s) for s in args.scale.split(",")]
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs", flush=True)
    header = f"{'pool':>9s} {'code':7s} {'gen s':>7s} {'gen cpu':>7s} {'split s':>8s} {'split cpu':>9s} {'pool MiB':>8s} {'peak MiB':>8s} {'D_A':>7s} {'D_C':>7s}  same split"
    print(header, flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        before_root = _export(args.before, scratch) if args.before else None
        for size in sizes:
            rows = [("after", _run(here, args, size))]
            if before_root and size <= args.before_max:
                rows.append((f"{args.before}"[:7], _run(before_root, args, size)))
            digests = {row.get("digest") for _, row in rows if "digest" in row}
            for code, row in rows:
                if "error" in row:
                    print(f"{size:9,d} {code:7s} error: {row['error']}", flush=True)
                    continue
                same = "" if len(rows) < 2 else ("yes" if len(digests) == 1 else "no")
                print(
                    f"{size:9,d} {code:7s} {row['gen_wall']:7.1f} {row['gen_cpu']:7.1f} {row['split_wall']:8.1f} "
                    f"{row['split_cpu']:9.1f} {row['gen_rss_mib']:8.0f} {row['peak_rss_mib']:8.0f} {row['da']:7.4f} {row['dc']:7.4f}  {same}",
                    flush=True,
                )
    print(f"load average at end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
