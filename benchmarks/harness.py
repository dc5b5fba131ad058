"""Throughput of the harnesses: exports per format and answer scoring per task.

    python benchmarks/harness.py                    # a two-config release (parity 13k, SCAN length 21k) in a temp dir
    python benchmarks/harness.py release --shots 3  # an existing release
    python benchmarks/harness.py --rewards-only     # only the reward comparison with reasoning-gym

Times `export_release` for chat, verl and lm-eval (records written per second, k-shot prompts)
and `score_output` on every test record of each config wrapped as free-form chat output
(outputs scored per second; every one must score 1).

Then the reward path beside reasoning-gym's, in one run: gengap's verl ``compute_score`` on
rows as ``gengap export --to verl`` writes them (extra_info with task, input, meta) against
reasoning-gym's ``extract_answer`` + ``score_answer`` on its closest tasks (count_bits vs
parity_check, spell_backward vs reverse_string, basic_arithmetic vs addition), both on
completions ``<reasoning>\n<answer>ANSWER</answer>``: "right" gives the target, "wrong" the
target with one more token (gengap: the checker decides) or character (reasoning-gym). CPU
time (process_time), the two sides alternating, best of --repeats. Not run in CI.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gengap.harnesses import export_release, open_release, score_output  # noqa: E402
from arguments import non_negative_int, positive_int  # noqa: E402

SUITE = """\
name: harness-bench
version: 0.0.1
seed: 5
license: mit
entries:
  - {task: parity_check, split: length, train_range: [1, 40], test_range: [41, 100], sizes: {train: 10000, validation: 1000, test: 2000}}
  - {task: scan, split: length, pool: all, options: {by: output_length, train_max: 22, test_min: 24}}
"""


def build(root: Path) -> Path:
    from gengap.cli import main

    suite = root / "suite.yaml"
    suite.write_text(SUITE)
    if main(["release", str(suite), "--out", str(root / "release"), "--workers", "1"]) != 0:
        raise SystemExit("could not build the benchmark release")
    return root / "release"


REWARD_PAIRS = (("parity_check", "count_bits"), ("reverse_string", "spell_backward"), ("addition", "basic_arithmetic"))
REASONING = "Let me work through it step by step.\n"


def gengap_reward_rows(task: str, n: int, wrong: bool) -> list[tuple[Any, ...]]:
    """(data_source, solution_str, ground_truth, extra_info) of n records of task (default parameters)."""
    from gengap.generators import get_task

    spec = get_task(task)
    rows = []
    for record in spec.generate(np.random.default_rng(1), n, spec.make_params({})).records(task):
        answer = record["target"] + (" " + record["target"].split()[0] if wrong else "")
        info = {"task": task, "input": record["input"], "meta": record.get("meta")}
        rows.append((f"gengap/{task}-iid/test", f"{REASONING}<answer>{answer}</answer>", record["target"], info))
    return rows


def reasoning_gym_rows(name: str, n: int, wrong: bool) -> tuple[Any, list[tuple[str, dict[str, Any]]]]:
    """(dataset, [(completion, entry)]) of n entries of a reasoning-gym dataset."""
    import reasoning_gym

    dataset = reasoning_gym.create_dataset(name, size=n, seed=1)
    return dataset, [(f"{REASONING}<answer>{entry['answer'] + ('0' if wrong else '')}</answer>", entry) for entry in dataset]


def cpu_rate(score: Callable[[], float], n: int) -> tuple[float, float]:
    """(items per CPU second, total score) of one call of score over n items."""
    start = time.process_time()
    total = score()
    return n / (time.process_time() - start), total


def compare_rewards(n: int, repeats: int) -> None:
    from reasoning_gym.utils import extract_answer as rg_extract

    from gengap.harnesses.rewards import compute_score

    print(f"reward path, {n:,} completions each, answers/s (CPU, best of {repeats}):")
    print(f"{'gengap task':16s} {'reasoning-gym':18s} {'answers':7s} {'gengap':>10s} {'reasoning-gym':>14s} {'ratio':>6s}")
    for task, name in REWARD_PAIRS:
        for wrong in (False, True):
            rows = gengap_reward_rows(task, n, wrong)
            dataset, items = reasoning_gym_rows(name, n, wrong)
            compute_score(*rows[0])  # the task's answer alphabet, once per process
            best = [0.0, 0.0]
            for _ in range(repeats):
                ours, our_total = cpu_rate(lambda: sum(compute_score(*row) for row in rows), n)
                theirs, their_total = cpu_rate(lambda: sum(dataset.score_answer(rg_extract(c), e) for c, e in items), n)
                best = [max(best[0], ours), max(best[1], theirs)]
            expected = 0 if wrong else n
            if our_total != expected:
                raise SystemExit(f"{task}: {our_total} of {n} scored 1, expected {expected}")
            kind = "wrong" if wrong else "right"
            print(f"{task:16s} {name:18s} {kind:7s} {best[0]:>10,.0f} {best[1]:>14,.0f} {best[0] / best[1]:>5.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("release", nargs="?", help="release directory (default: build a small one)")
    parser.add_argument("--shots", type=non_negative_int, default=3)
    parser.add_argument("--rewards-only", action="store_true", help="only the reward path beside reasoning-gym's")
    parser.add_argument("--n", type=positive_int, default=5000, help="completions per reward figure (default 5000)")
    parser.add_argument("--repeats", type=positive_int, default=5, help="timed rounds per reward figure (default 5)")
    args = parser.parse_args()
    if args.rewards_only:
        compare_rewards(args.n, args.repeats)
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        release = Path(args.release) if args.release else build(root)
        source = open_release(release)
        records = sum(len(part) for name in source.configs for part in source.load(name).parts.values())
        for to in ("chat", "verl", "lm-eval"):
            start = time.perf_counter()
            manifest = export_release(source, root / f"export-{to}", to, shots=args.shots)
            seconds = time.perf_counter() - start
            rows = sum(count for entry in manifest["configs"] for count in entry["files"].values())
            print(f"export --to {to:8s} {rows:>8,} rows ({records:,} records) in {seconds:6.2f} s: {rows / seconds:>9,.0f} rows/s")
        for name in source.configs:
            test = source.load(name).parts["test"]
            outputs = [f"Let me work through it.\n**Answer:** {r['target']}" for r in test]
            score_output(test[0], outputs[0])  # the task's answer alphabet, once per process
            start = time.perf_counter()
            right = sum(score_output(r, o).correct for r, o in zip(test, outputs))
            seconds = time.perf_counter() - start
            print(f"score {name:28s} {len(test):>6,} outputs in {seconds:6.2f} s: {len(test) / seconds:>9,.0f} /s ({right}/{len(test)} right)")
    compare_rewards(args.n, args.repeats)


if __name__ == "__main__":
    main()
