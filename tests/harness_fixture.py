"""A small real release for the harness tests, built with `gengap release`.

Three configs: parity_check-length (one-token answers; train lengths 1..8, test 9..12),
shortest_path-length (several correct answers; train on 1..4 edges, test on 5..9; an empty
validation part) and addition-iid (reversed output format, kept in each record's meta).
"""

from __future__ import annotations

from pathlib import Path

SUITE = """\
name: harness-suite
version: 0.0.1
seed: 11
license: mit
created: "2026-01-01"
entries:
  - {task: parity_check, split: length, train_range: [1, 8], test_range: [9, 12], sizes: {train: 60, validation: 12, test: 20}}
  - {task: shortest_path, split: length, train_range: [5, 14], test_range: [17, 29], sizes: {train: 40, validation: 0, test: 30}}
  - {task: addition, split: iid, params: {format: reversed, max_digits_a: 3, max_digits_b: 3}, pool: {n: 80}, options: {test_fraction: 0.25}}
"""

CONFIGS = ("addition-iid", "parity_check-length", "shortest_path-length")


def build_release(root: Path) -> Path:
    from gengap.cli import main

    suite = root / "suite.yaml"
    suite.write_text(SUITE)
    out = root / "release"
    assert main(["release", str(suite), "--out", str(out), "--workers", "1"]) == 0
    return out
