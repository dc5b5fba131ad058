"""A small real release for the harness tests, built with `gengap release`.

Three configs: parity_check-length (one-token answers; train lengths 1..8, test 9..12),
shortest_path-length (several correct answers; train on 1..4 edges, test on 5..9; an empty
validation part) and addition-iid (reversed output format, kept in each record's meta).
"""

from __future__ import annotations

from collections import deque
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


def other_shortest_path(record: dict) -> str | None:
    """A shortest path of a shortest_path record other than its target, if the graph has one."""
    edges = [pair.split() for pair in record["input"].split("?")[0].split(",")]
    source, goal = record["input"].split("?")[1].split()
    neighbours: dict[str, set[str]] = {}
    for u, v in edges:
        neighbours.setdefault(u, set()).add(v)
        neighbours.setdefault(v, set()).add(u)
    paths, queue, best = [], deque([[source]]), None
    while queue:
        path = queue.popleft()
        if best is not None and len(path) > best:
            break
        if path[-1] == goal:
            best = len(path)
            paths.append(" ".join(path))
            continue
        queue.extend(path + [n] for n in sorted(neighbours[path[-1]]) if n not in path)
    others = [p for p in paths if p != record["target"]]
    return others[0] if others else None
