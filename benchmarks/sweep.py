"""Sweep throughput: 4 tiny runs through Ray, 2 at a time, vs the same runs one after another with `gengap train`.

    python benchmarks/sweep.py                      # 4 runs of 300 steps, preset tiny, on the CPU
    python benchmarks/sweep.py --steps 100 --keep /tmp/bench

Both sides train the same 4 runs (reverse_string and parity_check length splits x rope and
nope, seed 0) on the same release (built first, not timed), each as a fresh process
(`gengap sweep` with a local Ray runtime of 2 CPUs; `gengap train` 4 times), so both wall
times include starting Python, importing torch and, for the sweep, starting Ray. Prints both
wall times, their ratio (sequential / sweep: above 1 means the sweep is faster) and checks
that both gave the same results (timing fields aside).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITE = """\
name: bench
version: 0.0.1
seed: 1
license: mit
entries:
  - {task: reverse_string, split: length, train_range: [1, 10], test_range: [11, 14], sizes: {train: 2000, validation: 64, test: 64}}
  - {task: parity_check, split: length, train_range: [1, 10], test_range: [11, 14], sizes: {train: 2000, validation: 64, test: 64}}
"""
CONFIGS = ("reverse_string-length", "parity_check-length")
ENCODINGS = ("rope", "nope")


def gengap(*args: str) -> float:
    """Run `python -m gengap.cli ARGS` (exit 0 required); its wall time in seconds."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "gengap.cli", *args], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"gengap {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return time.perf_counter() - started


def without_timing(value: object) -> object:
    if isinstance(value, dict):
        return {k: without_timing(v) for k, v in value.items() if k not in ("tokens_per_s", "train_seconds")}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300, help="training steps per run (default 300)")
    parser.add_argument("--keep", help="work in this folder (default: a temporary one, removed)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(args.keep or scratch)
        work.mkdir(parents=True, exist_ok=True)
        (work / "suite.yaml").write_text(SUITE)
        gengap("release", str(work / "suite.yaml"), "--out", str(work / "release"), "--workers", "1", "--force")
        train = {"eval_every": args.steps // 3 or 1, "eval_examples": 32, "eval_limit": 64, "device": "cpu"}
        sweep = {"release": str(work / "release"), "configs": list(CONFIGS), "encodings": list(ENCODINGS), "presets": ["tiny"],
                 "seeds": [0], "steps": args.steps, "train": train, "resources": {"cpus": 1}}
        (work / "sweep.yaml").write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in sweep.items()))
        ray_seconds = gengap("sweep", str(work / "sweep.yaml"), "--out", str(work / "sweep"), "--num-cpus", "2")
        sequential = 0.0
        for config in CONFIGS:
            for pos in ENCODINGS:
                out = work / "train" / f"{config}-{pos}-tiny-seed0"
                sequential += gengap(
                    "train", str(work / "release"), "--config", config, "--pos", pos, "--preset", "tiny", "--steps", str(args.steps),
                    "--seeds", "0", "--eval-every", str(train["eval_every"]), "--eval-examples", "32", "--eval-limit", "64",
                    "--device", "cpu", "--out", str(out),
                )
                swept = json.loads((work / "sweep" / "runs" / out.name / "results.json").read_text())
                alone = json.loads((out / "results.json").read_text())
                if without_timing(swept) != without_timing(alone):
                    raise SystemExit(f"{out.name}: the sweep and gengap train disagree")
        print(f"4 tiny runs of {args.steps} steps on {os.cpu_count()} CPUs (all 4 give the same results both ways)")
        print(f"  gengap sweep (Ray, 2 at a time): {ray_seconds:.1f} s")
        print(f"  gengap train x 4, sequential:    {sequential:.1f} s")
        print(f"  ratio sequential / sweep: {sequential / ray_seconds:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
