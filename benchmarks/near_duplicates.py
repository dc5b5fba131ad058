"""Time the near-duplicate audit (gengap.near_audit) on a release, or on generated pools at several scales.

    python benchmarks/near_duplicates.py --release release            # every config of a release, and the total
    python benchmarks/near_duplicates.py --scale 10000,30000          # generated iid pools of each task at each size
    python benchmarks/near_duplicates.py --scale 100000 --tasks cogs_like --edit-distance 1 --jaccard 0.9

A scale row generates N records of a task (seed 0), sends the first 4/5 to train and the rest to
test (an iid split: the hardest case for the index, since train and test share lengths and
vocabulary), and times the audit of that pair in this process: seconds of wall and CPU time,
distinct test inputs, and the near test records found. The default tasks span the cases: cogs_like
(sentences over a vocabulary of hundreds of words), addition (digits: ten tokens) and parity_check
at lengths 10..30 (two tokens, where nearly every pair is a candidate). Results are exact at every
scale (tests/test_near_duplicates.py), so only the time changes.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from gengap.generators import get_task
from gengap.near_audit import audit_config, audit_directory
from gengap.splits import generate_records
from gengap.splits.near_duplicates import NearOptions
from arguments import non_negative_int, positive_int, unit_fraction

TASKS = {
    "cogs_like": {},
    "addition": {"max_digits_a": 6, "max_digits_b": 6},
    "parity_check": {"min_length": 10, "max_length": 30},
}


def timed(function, *args):
    wall, cpu = time.perf_counter(), time.process_time()
    result = function(*args)
    return result, time.perf_counter() - wall, time.process_time() - cpu


def scale_rows(tasks: list[str], scales: list[int], options: NearOptions) -> None:
    print(f"{'task':<14} {'records':>9} {'train':>8} {'test':>7} {'distinct test':>13} {'wall s':>7} {'cpu s':>7} {'near':>7}")
    for task in tasks:
        params = get_task(task).make_params(TASKS.get(task, {}))
        for n in scales:
            records = generate_records(task, params, n, 0)
            cut = n * 4 // 5
            train, test = records[:cut], records[cut:]
            row, wall, cpu = timed(audit_config, task, train, test, options)
            distinct = len({r["input"] for r in test})
            print(f"{task:<14} {n:>9,} {len(train):>8,} {len(test):>7,} {distinct:>13,} {wall:>7.1f} {cpu:>7.1f} {row['near']:>7,}", flush=True)


def release_rows(release: Path, options: NearOptions) -> None:
    report, wall, cpu = timed(audit_directory, release, options)
    records = sum(row["train"] + row["test"] for row in report["configs"])
    for row in report["configs"]:
        print(f"{row['config']:<36} train {row['train']:>7,} test {row['test']:>6,} near {row['near']:>6,}")
    print(f"audit of {release}: {len(report['configs'])} configs, {records:,} train and test records: {wall:.1f} s wall, {cpu:.1f} s CPU")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", type=Path, help="audit this release (every config)")
    parser.add_argument("--scale", help="comma-separated pool sizes of the generated rows (default 10000,30000)")
    parser.add_argument("--tasks", default=",".join(TASKS), help=f"tasks of the generated rows (default {','.join(TASKS)})")
    parser.add_argument("--edit-distance", type=non_negative_int, default=2)
    parser.add_argument("--jaccard", type=unit_fraction, default=0.8)
    parser.add_argument("--ngram", type=positive_int, default=3)
    args = parser.parse_args()
    options = NearOptions(edit_distance=args.edit_distance, jaccard=args.jaccard, ngram=args.ngram, examples=0)
    if args.release:
        release_rows(args.release, options)
    if args.scale or not args.release:
        scales = [int(x) for x in (args.scale or "10000,30000").split(",")]
        scale_rows(args.tasks.split(","), scales, options)


if __name__ == "__main__":
    main()
