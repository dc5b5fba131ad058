"""What lexicon resampling costs: generating records at lexicon k > 0 against lexicon 0 (the
task's own words), same task, parameters, seed and record count, in the same process.

    python benchmarks/lexicons.py                       # 200,000 records per task, lexicon 1 vs 0
    python benchmarks/lexicons.py --n 20000 --lexicon 3 --repeats 3

Per task: CPU seconds (time.process_time, best of --repeats) to generate N records with
``gengap.splits.generate_records`` at lexicon 0 and at lexicon k, and their ratio. Neither
side checks records: the figure is the generator's cost alone. The lexicon itself is built
once per (task, k) and cached, so with --repeats 2 or more the best time leaves its building
out.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

from gengap.generators import get_task
from gengap.splits import generate_records
from arguments import non_negative_int, positive_int

TASKS = ("scan", "cogs", "cogs_like", "pcfg_set", "fact_two_hop", "letter_analogy")


def cpu_seconds(task: str, lexicon: int, n: int, repeats: int) -> float:
    """Best CPU time of ``repeats`` generations of n records of ``task`` at ``lexicon`` (seed 0)."""
    params = dataclasses.replace(get_task(task).default_params(), lexicon=lexicon)
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        records = generate_records(task, params, n, 0)
        best = min(best, time.process_time() - start)
        assert len(records) == n
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=positive_int, default=200_000, help="records per generation (default 200,000)")
    parser.add_argument("--lexicon", type=non_negative_int, default=1, help="the resampled lexicon set against lexicon 0 (default 1)")
    parser.add_argument("--repeats", type=positive_int, default=1, help="generations per side; the best CPU time counts (default 1)")
    parser.add_argument("--tasks", default=",".join(TASKS), help="comma-separated tasks (default: every task with a lexicon)")
    args = parser.parse_args()
    if args.lexicon < 1:
        parser.error("--lexicon must be 1 or more (lexicon 0 is the comparison)")
    print(f"| task | lexicon 0, CPU s | lexicon {args.lexicon}, CPU s | ratio |")
    print("|---|---|---|---|")
    for task in args.tasks.split(","):
        base = cpu_seconds(task, 0, args.n, args.repeats)
        resampled = cpu_seconds(task, args.lexicon, args.n, args.repeats)
        print(f"| {task} | {base:.2f} | {resampled:.2f} | {resampled / base:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
