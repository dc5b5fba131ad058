"""Generation throughput per task on one core: in memory, and to JSONL.

    python benchmarks/generation.py                 # every task at size 40
    python benchmarks/generation.py --size 500      # every task at size 500
    python benchmarks/generation.py --tasks parity_check,addition --seconds 2

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


def measure(task_name: str, size: int, min_seconds: float, repeats: int) -> dict[str, float] | None:
    task = get_task(task_name)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", help="comma-separated task names (default: all)")
    parser.add_argument("--size", type=int, default=40, help="size knob (input length / digits); default 40")
    parser.add_argument("--seconds", type=float, default=1.0, help="minimum seconds per timed run")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per figure (best is kept)")
    args = parser.parse_args()
    names = args.tasks.split(",") if args.tasks else task_names()
    print(f"# generation throughput, one core, size {args.size} (examples/s, best of {args.repeats})")
    print(f"{'task':32s} {'in memory':>12s} {'to JSONL':>12s}")
    for name in names:
        figures = measure(name, args.size, args.seconds, args.repeats)
        print(f"{name:32s} {figures['in_memory']:12,.0f} {figures['jsonl']:12,.0f}", flush=True)


if __name__ == "__main__":
    main()
