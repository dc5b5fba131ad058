"""Generation throughput per task on one core: in memory, and to JSONL.

    python benchmarks/generation.py                 # every task at size 40
    python benchmarks/generation.py --size 500      # every task at size 500
    python benchmarks/generation.py --tasks parity_check,addition --seconds 2
    python benchmarks/generation.py --tasks letter_analogy,grid_program --defaults   # default parameters
    python benchmarks/generation.py --only-compare     # gengap vs reasoning-gym on the closest pairs
    python benchmarks/generation.py --cli-compare      # whole `gengap generate` processes vs reasoning-gym
    python benchmarks/generation.py --floor 10000      # every task at input length 500 (or its top level) vs 10k/s

--floor R times every registered task at inputs of about 500 tokens (the size knob calibrated
as --length does) when its size knob reaches a mean input length within 10 % of 500, else at
its largest level (--floor-at size: with_size(500, 500) instead, the largest level when that
is not valid), by CPU time of this process (one core, so a busy machine slows the figures
less than wall time would) on at least one whole block of records (BLOCK_SIZE: records with
long texts cost more per record in full blocks), and says per task whether in-memory
generation and record dicts each reach R records/s.

"in memory" = BlockPlan blocks of columnar Batches (what `generate` returns);
"records" = the same turned into record dicts with ids (what splits work on);
"jsonl" = the batches serialized to JSONL bytes written to a temporary file (what
`gengap generate --out` does).

--size goes through each task's `with_size` (input length in tokens for sequence tasks,
digits per operand for arithmetic, ... see `gengap list`). --length L instead calibrates
every task to inputs of about L tokens: it searches the size knob (a fixed value s, as
with_size(s, s)) for the mean input length closest to L on a sample, so tasks whose knob
is not the input length (hops, edges, functions, digits) are compared at the same input
length; the table shows the mean input length reached.
Each figure is the best of --repeats timed runs of at least --seconds each (wall time;
--cpu-time counts this process's CPU time instead, for a machine shared with other jobs).
--defaults times each task at its default parameters.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from gengap.generators import BlockPlan, batch_to_jsonl, get_task, task_names  # noqa: E402
from gengap.generators.blocks import BLOCK_SIZE  # noqa: E402
from gengap.generators.params import ParamError  # noqa: E402
from arguments import positive_float, positive_int  # noqa: E402


CLOCK = {"now": time.perf_counter}  # --cpu-time: time.process_time (this process's CPU seconds)


def _timed(fn, min_seconds: float, clock=None, first: int = 2_000) -> tuple[int, float]:
    """Run fn(n) with growing n (from first) until it takes min_seconds by clock (default
    CLOCK["now"]); returns (n, seconds)."""
    n = first
    now = clock or CLOCK["now"]
    while True:
        start = now()
        fn(n)
        elapsed = now() - start
        if elapsed >= min_seconds or n >= 50_000_000:
            return n, elapsed
        n = int(n * min(10.0, max(2.0, 1.2 * min_seconds / max(elapsed, 1e-3))))


def _mean_input_length(task_name: str, params) -> float:
    batch = BlockPlan(task_name, params, 200, 0).generate_block(0)
    return float(batch.difficulty()["input_length"].mean())


def _valid_size(task, size: int) -> bool:
    try:
        task.with_size(size, size)
    except ParamError:
        return False
    return True


def params_for_length(task_name: str, length: int):
    """Parameters with mean input length closest to length (size knob searched by bisection)."""
    task = get_task(task_name)
    smallest = next((k for k in range(1, 65) if _valid_size(task, k)), None)
    if smallest is None:
        return task.default_params()
    lo, hi = smallest, smallest
    while hi < 100_000 and _valid_size(task, hi):
        if _mean_input_length(task_name, task.with_size(hi, hi)) >= length:
            break
        lo, hi = hi, hi * 2
    best, best_gap = None, float("inf")
    while lo <= hi:
        mid = (lo + hi) // 2
        try:
            params = task.with_size(mid, mid)
            mean = _mean_input_length(task_name, params)
        except ParamError:
            hi = mid - 1
            continue
        if abs(mean - length) < best_gap:
            best, best_gap = params, abs(mean - length)
        if mean < length:
            lo = mid + 1
        else:
            hi = mid - 1
    return best if best is not None else task.default_params()


def _runners(task_name: str, params) -> dict:
    """fn(n) generating n records of the task: "in_memory" (batches), "records" (dicts),
    "jsonl" (serialized to a temporary file)."""

    def in_memory(n: int) -> None:
        for _ in BlockPlan(task_name, params, n, 1).batches():
            pass

    def records(n: int) -> None:
        for batch in BlockPlan(task_name, params, n, 1).batches():
            list(batch.records(task_name))

    def to_jsonl(n: int) -> None:
        with tempfile.TemporaryFile() as handle:
            for batch in BlockPlan(task_name, params, n, 1).batches():
                handle.write(batch_to_jsonl(batch, task_name))

    return {"in_memory": in_memory, "records": records, "jsonl": to_jsonl}


def measure(
    task_name: str, size: int, min_seconds: float, repeats: int, values: dict | None = None, params=None
) -> dict[str, float]:
    task = get_task(task_name)
    if params is not None:
        pass
    elif values is not None:
        params = task.make_params(values)
    else:
        try:
            params = task.with_size(size, size)
        except ParamError:
            params = task.default_params()

    result = {"input_length": _mean_input_length(task_name, params)}
    for label, fn in _runners(task_name, params).items():
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
    print(
        f"{'pair':40s} {'setting':26s} {'rg':>10s} {'gengap mem':>12s} {'records':>10s} {'jsonl':>10s} "
        f"{'x mem':>7s} {'x records':>9s} {'x jsonl':>8s}"
    )
    for rg_name, rg_config, ours, params, setting in PAIRS:
        rg = max(reasoning_gym_rate(rg_name, rg_config, min_seconds) for _ in range(repeats))
        figures = measure(ours, 0, min_seconds, repeats, params)
        print(
            f"{rg_name + ' vs ' + ours:40s} {setting:26.26s} {rg:10,.0f} {figures['in_memory']:12,.0f} "
            f"{figures['records']:10,.0f} {figures['jsonl']:10,.0f} {figures['in_memory'] / rg:7.1f} "
            f"{figures['records'] / rg:9.1f} {figures['jsonl'] / rg:8.1f}",
            flush=True,
        )


CLI_RG_SCRIPT = """
import reasoning_gym
for _item in reasoning_gym.create_dataset("count_bits", size={n}, seed=0):
    pass
"""


def run_child(command: list[str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one child process run to completion, output discarded.

    CPU time is user + system from os.wait4's resource usage of the child, which includes
    the descendants it waited for (the --workers processes)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryFile() as err:  # a file, not a pipe: a full pipe would block the child
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(command)} failed ({child.returncode}): {err.read().decode(errors='replace')}")
    return usage.ru_utime + usage.ru_stime, wall


def _uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        load = os.getloadavg()
        return f"load average: {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f}"


CLI_NUMPY_SCRIPT = "import numpy"

CLI_SHA_SCRIPT = """
import hashlib, numpy
rng = numpy.random.default_rng(0)
rows = [" ".join(map(str, row)).encode() for row in rng.integers(0, 2, size=({n}, 40)).tolist()]
import time
start = time.process_time()
digests = [hashlib.sha256(row + b"\\n0").digest()[:8] for row in rows]
print(time.process_time() - start)
"""

CLI_BURN_SCRIPT = """
import multiprocessing, sys
def burn(_):
    total = 0
    for i in range(15_000_000):
        total += i
    return total
if __name__ == "__main__":
    k = int(sys.argv[1])
    with multiprocessing.get_context("fork").Pool(k) as pool:
        pool.map(burn, range(2))
"""


def _alternating(commands: dict[str, list[str]], repeats: int) -> tuple[dict[str, float], dict[str, float]]:
    """Best (CPU, wall) seconds per command over `repeats` alternating rounds (+1 untimed)."""
    for command in commands.values():  # untimed: bytecode written, caches warm
        run_child(command)
    best_cpu = dict.fromkeys(commands, float("inf"))
    best_wall = dict.fromkeys(commands, float("inf"))
    for _ in range(repeats):
        for name, command in commands.items():
            cpu, wall = run_child(command)
            best_cpu[name] = min(best_cpu[name], cpu)
            best_wall[name] = min(best_wall[name], wall)
    return best_cpu, best_wall


def cli_compare(n: int, repeats: int, scaling_n: int) -> None:
    """Whole processes, alternating: gengap generate parity_check (length 40) to a file, and
    iterating reasoning-gym's count_bits (its defaults) in memory, n records each; beside them
    what bounds gengap's figure (a process that only imports numpy, and the sha256 of n
    record ids). Then --workers 2 over --workers 1 on scaling_n records (wall time), beside
    this machine's own ceiling: two processes of a pure Python loop over one. Best of `repeats`."""
    with tempfile.TemporaryDirectory() as tmp:
        def gengap(records: int, workers: int) -> list[str]:
            return [sys.executable, "-m", "gengap", "generate", "parity_check", "--n", str(records),
                    "--param", "min_length=40", "--param", "max_length=40",
                    "--workers", str(workers), "--out", os.path.join(tmp, f"w{workers}.jsonl"), "--force"]

        commands = {
            "gengap --workers 1": gengap(n, 1),
            "reasoning-gym count_bits": [sys.executable, "-c", CLI_RG_SCRIPT.format(n=n)],
            "python -c 'import numpy'": [sys.executable, "-c", CLI_NUMPY_SCRIPT],
        }
        print(f"# whole processes, {n:,} records each, best of {repeats} alternating rounds (+1 untimed)")
        print(f"# cores: {os.cpu_count()}; before: {_uptime()}")
        best_cpu, best_wall = _alternating(commands, repeats)
        sha = min(float(subprocess.run([sys.executable, "-c", CLI_SHA_SCRIPT.format(n=n)], capture_output=True, text=True, check=True).stdout)
                  for _ in range(repeats))
        scaling = {
            f"gengap --workers 1, {scaling_n:,} records": gengap(scaling_n, 1),
            f"gengap --workers 2, {scaling_n:,} records": gengap(scaling_n, 2),
            "pure Python loop x2, 1 process": [sys.executable, "-c", CLI_BURN_SCRIPT, "1"],
            "pure Python loop x2, 2 processes": [sys.executable, "-c", CLI_BURN_SCRIPT, "2"],
        }
        scale_cpu, scale_wall = _alternating(scaling, repeats)
        print(f"# after: {_uptime()}")
    print(f"{'process':42s} {'CPU s':>8s} {'wall s':>8s} {'rec/s (CPU)':>12s} {'rec/s (wall)':>13s}")
    for name in ("gengap --workers 1", "reasoning-gym count_bits"):
        print(f"{name:42s} {best_cpu[name]:8.3f} {best_wall[name]:8.3f} {n / best_cpu[name]:12,.0f} {n / best_wall[name]:13,.0f}")
    for name in scaling:
        print(f"{name:42s} {scale_cpu[name]:8.3f} {scale_wall[name]:8.3f}")
    rg = best_cpu["reasoning-gym count_bits"]
    ours = best_cpu["gengap --workers 1"]
    x1 = rg / ours
    numpy_start = best_cpu["python -c 'import numpy'"]
    floor = numpy_start + sha
    print(f"gengap CLI --workers 1 / reasoning-gym (records/s, CPU): {x1:6.2f}x  (target >= 10x: {'holds' if x1 >= 10 else 'does not hold'})")
    print(f"  bound: importing numpy {numpy_start:.3f} s + sha256 of {n:,} ids {sha:.3f} s = {floor:.3f} s of CPU "
          f"before any record is made; reasoning-gym / bound = {rg / floor:.2f}x")
    w1, w2 = (scale_wall[f"gengap --workers {k}, {scaling_n:,} records"] for k in (1, 2))
    ceiling = scale_wall["pure Python loop x2, 1 process"] / scale_wall["pure Python loop x2, 2 processes"]
    print(f"--workers 2 over --workers 1, {scaling_n:,} records (wall speed-up): {w1 / w2:6.2f}x  (target >= 1.8x: {'holds' if w1 / w2 >= 1.8 else 'does not hold'})")
    print(f"  this machine's ceiling in the same run, 2 processes of a pure Python loop over 1: {ceiling:.2f}x")


REACH = 0.1  # a task "reaches" length 500 when its size knob gets the mean input within 10 % of it


def floor_setting(name: str, at: str) -> tuple[object, str]:
    """(params, label) at which --floor times a task. at="length": inputs of about 500 tokens
    (the size knob calibrated by params_for_length) when the knob gets the mean input length
    within 10 % of 500; a task that cannot reach it is timed at its largest level. at="size":
    with_size(500, 500), or the largest level when size 500 is not valid for the task."""
    task = get_task(name)
    top = max(task.levels())
    if at == "length":
        params = params_for_length(name, 500)
        if abs(_mean_input_length(name, params) - 500) <= REACH * 500:
            return params, "length 500"
        return task.level(top), f"level {top}"
    try:
        return task.with_size(500, 500), "size 500"
    except ParamError:
        return task.level(top), f"level {top}"


def floor_report(names: list[str], rate: float, min_seconds: float, at: str = "length") -> None:
    """--floor: every task at input length 500 (else its top level; or at size 500 with
    at="size"): records per CPU second in memory (columnar batches) and as record dicts, and
    whether each reaches `rate`."""
    where = "input length ~500" if at == "length" else "size 500"
    print(f"# every task at {where} (else its top level), records per CPU second; floor {rate:,.0f}/s")
    print(f"# load: {_uptime()}")
    print(f"{'task':30s} {'setting':10s} {'input len':>9s} {'in memory':>11s} {'records':>10s}  meets (memory, records)")
    slow = []
    for name in names:
        params, setting = floor_setting(name, at)
        runners = _runners(name, params)
        memory_rate, record_rate = (
            n / seconds
            for n, seconds in (_timed(runners[kind], min_seconds, time.process_time, BLOCK_SIZE) for kind in ("in_memory", "records"))
        )
        meets = ("yes" if memory_rate >= rate else "NO", "yes" if record_rate >= rate else "NO")
        if "NO" in meets:
            slow.append(name)
        print(
            f"{name:30s} {setting:10s} {_mean_input_length(name, params):9.1f} {memory_rate:11,.0f} {record_rate:10,.0f}  {meets[0]}, {meets[1]}",
            flush=True,
        )
    print(f"below {rate:,.0f}/s: {', '.join(slow) if slow else 'none'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", help="comma-separated task names (default: all)")
    parser.add_argument("--size", type=positive_int, default=40, help="size knob (input length / digits); default 40")
    parser.add_argument("--length", type=positive_int, help="calibrate every task to inputs of about this many tokens instead of --size")
    parser.add_argument("--defaults", action="store_true", help="each task at its default parameters instead of --size")
    parser.add_argument("--cpu-time", action="store_true", help="time with this process's CPU time, not wall time (a machine shared with other jobs)")
    parser.add_argument("--seconds", type=positive_float, default=1.0, help="minimum seconds per timed run")
    parser.add_argument("--repeats", type=positive_int, default=3, help="timed runs per figure (best is kept)")
    parser.add_argument("--compare-reasoning-gym", action="store_true", help="also time the closest reasoning-gym tasks (pip install reasoning-gym)")
    parser.add_argument("--only-compare", action="store_true", help="skip the per-task table")
    parser.add_argument(
        "--cli-compare",
        action="store_true",
        help="only: CPU time of whole `gengap generate` processes (1 and 2 workers) vs iterating reasoning-gym count_bits",
    )
    parser.add_argument("--n", type=positive_int, default=300_000, help="records per process for --cli-compare (default 300,000)")
    parser.add_argument("--scaling-n", type=positive_int, default=3_000_000, help="records per process for --cli-compare's worker scaling (default 3,000,000)")
    parser.add_argument("--floor", type=positive_float, help="only: every task at input length 500 (else its top level) against this many records/s")
    parser.add_argument("--floor-at", choices=("length", "size"), default="length", help="--floor at input length ~500 tokens (default) or at the size knob's 500")
    args = parser.parse_args()
    if args.floor:
        floor_report(args.tasks.split(",") if args.tasks else task_names(), args.floor, args.seconds, args.floor_at)
        return
    if args.cli_compare:
        cli_compare(args.n, args.repeats, args.scaling_n)
        return
    if args.only_compare:
        compare_reasoning_gym(args.seconds, args.repeats)
        return
    if args.cpu_time:
        CLOCK["now"] = time.process_time
    names = args.tasks.split(",") if args.tasks else task_names()
    setting = "default parameters" if args.defaults else f"input length ~{args.length}" if args.length else f"size {args.size}"
    clock = "CPU time" if args.cpu_time else "wall time"
    print(f"# generation throughput, one core, {setting} (examples/s of {clock}, best of {args.repeats})")
    print(f"{'task':30s} {'input len':>9s} {'in memory':>12s} {'records':>10s} {'to JSONL':>10s}")
    for name in names:
        params = get_task(name).default_params() if args.defaults else params_for_length(name, args.length) if args.length else None
        figures = measure(name, args.size, args.seconds, args.repeats, params=params)
        print(
            f"{name:30s} {figures['input_length']:9.1f} {figures['in_memory']:12,.0f} "
            f"{figures['records']:10,.0f} {figures['jsonl']:10,.0f}",
            flush=True,
        )
    if args.compare_reasoning_gym:
        compare_reasoning_gym(args.seconds, args.repeats)


if __name__ == "__main__":
    main()
