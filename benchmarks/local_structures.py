"""How local structures (gengap.splits.local_structures) behave at each size bound, and what the
diverse train sampler covers against random draws.

    python benchmarks/local_structures.py                      # sizes 2..5 on SCAN, cogs_like, cfq_like, pcfg_set
    python benchmarks/local_structures.py --coverage 500       # diverse vs random train sets of 500 (5 seeds)

Sizes: per task, N records (SCAN: a seeded sample of its enumeration; the others generated,
seed 0) and per size bound K the distinct local structures of 2..K nodes, the mean per
record, how many occur in 0.5-5 % of the records (what local_holdout's default share window
can hold out) and the mean share of records that hold a record's structures. The default
size (3) is the smallest at which every task has structures in that window.

Coverage: per task and seed, a pool of 4 x budget records, the distinct compounds (local
structures of 2..3 nodes, and derivation compounds) that the diverse sampler's budget records
cover, against the mean and best of 5 random draws of the same size.
"""

from __future__ import annotations

import argparse
from collections import Counter

import numpy as np

from gengap.generators import get_task
from gengap.generators.seeding import train_sample_rng
from gengap.splits import generate_records
from gengap.splits.atoms import CompoundDefinition, record_compounds
from gengap.splits.diverse import TrainSelection
from arguments import positive_int

TASKS = ("scan", "cogs_like", "cfq_like", "pcfg_set")
WINDOW = (0.005, 0.05)


def pool(task: str, n: int, seed: int) -> list[dict]:
    spec = get_task(task)
    if task == "scan":
        records = list(spec.enumerate(spec.default_params()).records(task))
        return [records[i] for i in np.random.default_rng(seed).permutation(len(records))[:n].tolist()]
    return generate_records(task, spec.default_params(), n, seed)


def size_rows(n: int) -> None:
    print("| task | K | distinct | per record | in 0.5-5 % of records | mean share of a record's structures |")
    print("|---|---|---|---|---|---|")
    for task in TASKS:
        records = pool(task, n, 0)
        for size in (2, 3, 4, 5):
            found = [set(record_compounds(r, False, CompoundDefinition("local", size))) for r in records]
            holders = Counter(s for structures in found for s in structures)
            window = sum(1 for c in holders.values() if WINDOW[0] * n <= c <= WINDOW[1] * n)
            share = np.mean([np.mean([holders[s] / n for s in structures]) for structures in found if structures])
            print(f"| {task} | {size} | {len(holders)} | {np.mean([len(s) for s in found]):.1f} | {window} | {share:.3f} |")


def coverage_rows(budget: int, seeds: int) -> None:
    print("| task | compounds | diverse (mean over seeds) | random: mean | random: best of 5 |")
    print("|---|---|---|---|---|")
    for task in TASKS:
        for kind in ("local", "derivation"):
            definition = CompoundDefinition(kind, 3)
            diverse, mean, best = [], [], []
            for seed in range(seeds):
                records = pool(task, 4 * budget, seed)
                _, info = TrainSelection("diverse", budget, False, definition).choose(records, train_sample_rng(seed))
                draws = [TrainSelection("random", budget, False, definition).choose(records, np.random.default_rng([seed, d]))[1]
                         ["compounds_covered"] for d in range(5)]
                diverse.append(info["compounds_covered"])
                mean.append(np.mean(draws))
                best.append(max(draws))
            print(f"| {task} | {kind} | {np.mean(diverse):.0f} | {np.mean(mean):.0f} | {np.mean(best):.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=positive_int, default=5000, help="records per task for the size table (default 5000)")
    parser.add_argument("--coverage", type=positive_int, metavar="BUDGET", help="compare the samplers at this train budget instead")
    parser.add_argument("--seeds", type=positive_int, default=5, help="seeds of the coverage table (default 5)")
    args = parser.parse_args()
    if args.coverage:
        coverage_rows(args.coverage, args.seeds)
    else:
        size_rows(args.records)


if __name__ == "__main__":
    main()
