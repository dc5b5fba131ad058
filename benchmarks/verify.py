"""Time plain `gengap verify` (checksums, manifest, card fingerprints, every record) on a release.

    python benchmarks/verify.py                  # builds the default release into a temp dir first
    python benchmarks/verify.py release --runs 5 # an existing release

Runs `python -m gengap.cli verify DIR` as a subprocess pinned to one CPU (where the OS
allows it), --runs times, and prints each wall time, the fastest and the median, with the
number of records verified. Target: under 10 s on one core for the default release.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _one_core() -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def gengap(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-m", "gengap.cli", *args], capture_output=True, text=True, env=env, preexec_fn=_one_core
    )


def time_verify(release: Path, runs: int) -> list[float]:
    times = []
    for run in range(runs):
        start = time.perf_counter()
        result = gengap("verify", str(release))
        elapsed = time.perf_counter() - start
        if result.returncode != 0:
            sys.exit(f"gengap verify failed:\n{result.stdout}{result.stderr}")
        times.append(elapsed)
        print(f"run {run + 1}: {elapsed:.2f} s  ({result.stdout.splitlines()[0]})")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("release", nargs="?", help="release directory (default: build the default release into a temp dir)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs (default 3)")
    parser.add_argument("--workers", type=int, default=2, help="workers for building the default release (default 2)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gengap-bench-verify-") as scratch:
        release = Path(args.release) if args.release else Path(scratch) / "release"
        if not args.release:
            start = time.perf_counter()
            built = gengap("release", "--out", str(release), "--workers", str(args.workers))
            if built.returncode != 0:
                sys.exit(f"gengap release failed:\n{built.stderr}")
            print(f"built the default release in {time.perf_counter() - start:.1f} s")
        times = time_verify(release, args.runs)
    print(f"plain gengap verify on one core: fastest {min(times):.2f} s, median {statistics.median(times):.2f} s")


if __name__ == "__main__":
    main()
