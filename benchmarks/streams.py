"""Record streams: records/s of parity_check at length 40 as record dicts, vs reasoning-gym's count_bits.

    taskset -c 0 python benchmarks/streams.py                 # 500,000 items each (pip install reasoning-gym)
    taskset -c 0 python benchmarks/streams.py --n 200000 --no-compare

Prints, for the same number of items generated in the same run: records/s of a one-level
gengap stream (``RecordStream.records()``, dicts as a training loop receives them) and
items/s of reasoning-gym's count_bits over 40-bit numbers (``dataset[i]`` for every i, how
its datasets generate), and their ratio; then what exclusion costs (records/s with the
validation and test inputs of a paired config excluded, and the bytes held per excluded
input), what a mixture of levels costs (records/s through a curriculum chooser), and what a
mixture of tasks costs (records/s of a 3-task mixture, parity_check, reverse_string and
addition at one level each, vs the one-task parity_check stream through the same path).
Rates are items per CPU second of this process (``time.process_time``), the best of
--repeats runs each (the two headline lines also give the wall-clock rate). Run it pinned
to one core.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from generation import PAIRS  # noqa: E402  (count_bits' 40-bit setting, matched to parity_check at 40)

from gengap.generators import get_task, parse_curriculum  # noqa: E402
from gengap.generators.exclusion import Exclusion  # noqa: E402
from gengap.generators.mixtures import Component, TaskMixture  # noqa: E402
from gengap.generators.streams import RecordStream  # noqa: E402
from arguments import positive_int  # noqa: E402

TASK = "parity_check"


WALL: list[float] = []  # wall-clock items/s of the last best_rate, for the record


def best_rate(run: Callable[[], int], repeats: int) -> float:
    """Items per CPU second (time.process_time: the one core's time, less sensitive to other
    processes than the wall clock) of the fastest of `repeats` calls (each returns the items it
    made); the best wall-clock rate goes to WALL."""
    best, wall = 0.0, 0.0
    for _ in range(repeats):
        start, clock = time.process_time(), time.perf_counter()
        n = run()
        best = max(best, n / max(time.process_time() - start, 1e-9))
        wall = max(wall, n / max(time.perf_counter() - clock, 1e-9))
    WALL[:] = [wall]
    return best


def consume(records, n: int) -> int:
    count = 0
    for _ in itertools.islice(records, n):
        count += 1
    return count


def stream_rate(stream: RecordStream, n: int, repeats: int, chooser=None) -> float:
    def run() -> int:
        fresh = RecordStream(stream.task, stream.levels, stream.seed, stream.exclusion)  # no cached block
        return consume(fresh.records(chooser=chooser(fresh) if chooser else None), n)

    return best_rate(run, repeats)


def count_bits_rate(n: int, repeats: int) -> float:
    import reasoning_gym

    name, config = PAIRS[0][0], PAIRS[0][1]

    def run() -> int:
        dataset = reasoning_gym.create_dataset(name, size=n, seed=1, **config)
        for i in range(n):
            dataset[i]
        return n

    return best_rate(run, repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=positive_int, default=500_000, help="items generated per timed run (default 500,000)")
    parser.add_argument("--repeats", type=positive_int, default=3, help="timed runs per figure, best kept (default 3)")
    parser.add_argument("--excluded", type=int, default=100_000, help="inputs excluded in the exclusion figure (default 100,000)")
    parser.add_argument("--no-compare", action="store_true", help="skip reasoning-gym")
    args = parser.parse_args()

    params = get_task(TASK).with_size(40, 40)
    stream = RecordStream.fixed(TASK, params, seed=0)
    ours = stream_rate(stream, args.n, args.repeats)
    print(f"gengap stream {TASK} length 40, record dicts: {ours:12,.0f} records/s  ({args.n:,} records, best of {args.repeats}; wall clock {WALL[0]:,.0f}/s)")
    if not args.no_compare:
        theirs = count_bits_rate(args.n, args.repeats)
        print(f"reasoning-gym count_bits, 40-bit numbers:    {theirs:12,.0f} items/s    ({args.n:,} items, best of {args.repeats}; wall clock {WALL[0]:,.0f}/s)")
        print(f"ratio gengap / reasoning-gym: {ours / theirs:.1f}x")

    # exclusion: the held-out inputs of a paired config, here other positions of the same setting
    held_out = [r["input"] for r in itertools.islice(RecordStream.fixed(TASK, params, seed=1).records(), args.excluded)]
    exclusion = Exclusion.from_inputs(held_out, "benchmark")
    excluded = stream_rate(RecordStream.fixed(TASK, params, 0, exclusion), args.n, args.repeats)
    print(f"with {len(exclusion):,} inputs excluded: {excluded:12,.0f} records/s ({excluded / ours:.2f} of plain); "
          f"{exclusion.nbytes / len(exclusion):.0f} bytes per excluded input ({exclusion.nbytes:,} bytes)")

    # a mixture of levels: every level's block is generated where it is chosen
    for spec in ("fixed:4", "mixture:1=0.25,2=0.25,3=0.25,4=0.25"):
        curriculum = parse_curriculum(spec)
        levels = RecordStream.of_task(TASK, 0)
        rate = stream_rate(levels, args.n, args.repeats, chooser=lambda s: s.chooser(curriculum.choose))
        print(f"levels through a chooser, {spec}: {rate:12,.0f} records/s")

    # a mixture of tasks: each component's block is generated where it is drawn
    one = TaskMixture((Component(TASK, {0: params}, "fixed:0"),))
    three = TaskMixture((
        Component(TASK, {0: params}, "fixed:0", 1.0),
        Component("reverse_string", {0: get_task("reverse_string").with_size(40, 40)}, "fixed:0", 1.0),
        Component("addition", {0: get_task("addition").level(4)}, "fixed:0", 1.0),
    ))  # fmt: skip
    rates = {}
    for name, mixture in (("1 task (parity_check)", one), ("3 tasks, equal weights", three)):
        rates[name] = best_rate(lambda m=mixture: consume(m.stream(0).records(), args.n), args.repeats)
        print(f"task mixture, {name}: {rates[name]:12,.0f} records/s (wall clock {WALL[0]:,.0f}/s)")
    first, second = rates.values()
    print(f"3-task mixture / 1-task mixture: {second / first:.2f}; 1-task mixture / plain stream: {first / ours:.2f}")


if __name__ == "__main__":
    main()
