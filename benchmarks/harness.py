"""Throughput of the harnesses: exports per format and answer scoring per task.

    python benchmarks/harness.py                    # a two-config release (parity 13k, SCAN length 21k) in a temp dir
    python benchmarks/harness.py release --shots 3  # an existing release

Times `export_release` for chat, verl and lm-eval (records written per second, k-shot prompts)
and `score_output` on every test record of each config wrapped as free-form chat output
(outputs scored per second; every one must score 1). Not run in CI.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harnesses import export_release, open_release, score_output  # noqa: E402

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("release", nargs="?", help="release directory (default: build a small one)")
    parser.add_argument("--shots", type=int, default=3)
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
