"""Generation throughput per task on one core: in memory, and to JSONL.

    python benchmarks/generation.py                 # every task at size 40
    python benchmarks/generation.py --size 500      # every task at size 500
    python benchmarks/generation.py --tasks parity_check,addition --seconds 2
    python benchmarks/generation.py --only-compare     # gengap vs reasoning-gym on the closest pairs

"in memory" = BlockPlan blocks of columnar Batches (what `generate` returns);
"jsonl" = the same plus serialization to JSONL bytes written to a temporary file (what
`gengap generate --out` does). Sizes go through each task's `with_size` (input length
in tokens for sequence tasks, digits per operand for arithmetic, see `gengap list`).
Each figure is the best of --repeats timed runs of at least --seconds each.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from generators import BlockPlan, batch_to_jsonl, get_task, task_names  # noqa: E402
from generators.params import ParamError  # noqa: E402


def _timed(fn, min_seconds: float) -> tuple[int, float]:
    """Run fn(n) with growing n until it takes min_seconds; returns (n, seconds)."""
    n = 2_000
    while True:
        start = time.perf_counter()
        fn(n)
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds or n >= 50_000_000:
            return n, elapsed
        n = int(n * min(10.0, max(2.0, 1.2 * min_seconds / max(elapsed, 1e-3))))


def measure(
    task_name: str, size: int, min_seconds: float, repeats: int, values: dict | None = None
) -> dict[str, float]:
    task = get_task(task_name)
    if values is not None:
        params = task.make_params(values)
    else:
        try:
            params = task.with_size(size, size)
        except ParamError:
            params = task.default_params()

    def in_memory(n: int) -> None:
        for _ in BlockPlan(task_name, params, n, 1).batches():
            pass

    def to_jsonl(n: int) -> None:
        with tempfile.TemporaryFile() as handle:
            for batch in BlockPlan(task_name, params, n, 1).batches():
                handle.write(batch_to_jsonl(batch, task_name))

    result = {}
    for label, fn in (("in_memory", in_memory), ("jsonl", to_jsonl)):
        best = 0.0
        for _ in range(repeats):
            n, seconds = _timed(fn, min_seconds)
            best = max(best, n / seconds)
        result[label] = best
    return result


# (reasoning-gym dataset, its config, our task, our params, what is matched)
PAIRS = (
    ("count_bits", {"min_n": 2**39, "max_n": 2**40 - 1}, "parity_check", {"min_length": 40, "max_length": 40}, "40-bit numbers"),
    ("spell_backward", {}, "reverse_string", {"min_length": 3, "max_length": 10, "alphabet_size": 10}, "3-10 symbols"),
    ("number_sorting", {"min_numbers": 40, "max_numbers": 40}, "bucket_sort", {"min_length": 40, "max_length": 40}, "40 items"),
    (
        "basic_arithmetic",
        {"min_terms": 2, "max_terms": 2, "min_digits": 1, "max_digits": 4, "operators": ("+",), "allow_parentheses": False, "allow_negation": False},
        "addition",
        {"min_digits_a": 1, "max_digits_a": 4, "min_digits_b": 1, "max_digits_b": 4},
        "a + b, 1-4 digits",
    ),
    ("shortest_path", {}, "shortest_path", {}, "defaults (rg: 5-8 grid; ours: edge-list graph)"),
)


def reasoning_gym_rate(name: str, config: dict, min_seconds: float) -> float:
    """Items/s of a reasoning-gym dataset, items built by indexing (how its datasets generate)."""
    import reasoning_gym

    def run(n: int) -> None:
        dataset = reasoning_gym.create_dataset(name, size=n, seed=1, **config)
        for i in range(n):
            dataset[i]

    n, seconds = _timed(run, min_seconds)
    return n / seconds


def compare_reasoning_gym(min_seconds: float, repeats: int) -> None:
    print()
    print("# gengap vs reasoning-gym, one core, same run (examples/s; ratio = gengap / reasoning-gym)")
    print(f"{'pair':40s} {'setting':26s} {'rg':>10s} {'gengap mem':>12s} {'gengap jsonl':>13s} {'ratio mem':>10s} {'ratio jsonl':>12s}")
    for rg_name, rg_config, ours, params, setting in PAIRS:
        rg = max(reasoning_gym_rate(rg_name, rg_config, min_seconds) for _ in range(repeats))
        figures = measure(ours, 0, min_seconds, repeats, params)
        print(
            f"{rg_name + ' vs ' + ours:40s} {setting:26.26s} {rg:10,.0f} {figures['in_memory']:12,.0f} "
            f"{figures['jsonl']:13,.0f} {figures['in_memory'] / rg:10.1f} {figures['jsonl'] / rg:12.1f}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", help="comma-separated task names (default: all)")
    parser.add_argument("--size", type=int, default=40, help="size knob (input length / digits); default 40")
    parser.add_argument("--seconds", type=float, default=1.0, help="minimum seconds per timed run")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per figure (best is kept)")
    parser.add_argument("--compare-reasoning-gym", action="store_true", help="also time the closest reasoning-gym tasks (pip install reasoning-gym)")
    parser.add_argument("--only-compare", action="store_true", help="skip the per-task table")
    args = parser.parse_args()
    if args.only_compare:
        compare_reasoning_gym(args.seconds, args.repeats)
        return
    names = args.tasks.split(",") if args.tasks else task_names()
    print(f"# generation throughput, one core, size {args.size} (examples/s, best of {args.repeats})")
    print(f"{'task':32s} {'in memory':>12s} {'to JSONL':>12s}")
    for name in names:
        figures = measure(name, args.size, args.seconds, args.repeats)
        print(f"{name:32s} {figures['in_memory']:12,.0f} {figures['jsonl']:12,.0f}", flush=True)
    if args.compare_reasoning_gym:
        compare_reasoning_gym(args.seconds, args.repeats)


if __name__ == "__main__":
    main()
