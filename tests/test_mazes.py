"""maze: solvable, perfect without loops, targets are shortest paths, any shortest path accepted;
levels by size and easy-to-hard splits by size from a suite."""

from __future__ import annotations

from collections import deque
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st

from gengap.generators import ParamError, get_task
from gengap.checking import record_problem
from gengap.cli import suite_split

TASK = get_task("maze")
STEP = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}


def cell_graph(text: str) -> tuple[int, dict[tuple[int, int], list[tuple[int, int]]], tuple[int, int], tuple[int, int]]:
    """(cells per side, adjacency of cells, start, goal) read from the token grid, cell (r, c) at
    grid position (2r+1, 2c+1) and the wall slot between two cells at their midpoint."""
    grid = [row.split() for row in text.split(" | ")]
    s = (len(grid) - 1) // 2
    assert all(len(row) == 2 * s + 1 for row in grid) and len(grid) == 2 * s + 1
    adjacency: dict[tuple[int, int], list[tuple[int, int]]] = {(r, c): [] for r in range(s) for c in range(s)}
    start = goal = (-1, -1)
    for r in range(s):
        for c in range(s):
            mark = grid[2 * r + 1][2 * c + 1]
            start, goal = ((r, c) if mark == "S" else start), ((r, c) if mark == "G" else goal)
            for dr, dc in ((0, 1), (1, 0)):
                if r + dr < s and c + dc < s and grid[2 * r + 1 + dr][2 * c + 1 + dc] == ".":
                    adjacency[(r, c)].append((r + dr, c + dc))
                    adjacency[(r + dr, c + dc)].append((r, c))
    return s, adjacency, start, goal


def distances(adjacency: dict, source: tuple[int, int]) -> dict[tuple[int, int], int]:
    dist, queue = {source: 0}, deque([source])
    while queue:
        here = queue.popleft()
        for other in adjacency[here]:
            if other not in dist:
                dist[other] = dist[here] + 1
                queue.append(other)
    return dist


def follow(adjacency: dict, start: tuple[int, int], moves: list[str]) -> tuple[int, int] | None:
    """Where the moves lead from start through open walls; None when one crosses a wall."""
    here = start
    for move in moves:
        there = (here[0] + STEP[move][0], here[1] + STEP[move][1])
        if there not in adjacency[here]:
            return None
        here = there
    return here


def other_shortest_path(adjacency: dict, start: tuple[int, int], goal: tuple[int, int], avoid: list[str]) -> list[str] | None:
    """A shortest path from start to goal other than `avoid` (moves), or None when it is the only one."""
    to_goal = distances(adjacency, goal)

    def paths(here: tuple[int, int], prefix: list[str]):
        if here == goal:
            yield prefix
            return
        for move, (dr, dc) in STEP.items():
            there = (here[0] + dr, here[1] + dc)
            if there in adjacency[here] and to_goal[there] == to_goal[here] - 1:
                yield from paths(there, prefix + [move])

    return next((p for p in paths(start, []) if p != avoid), None)


@given(
    lo=st.integers(2, 12),
    extra=st.integers(0, 4),
    loops=st.sampled_from([0.0, 0.0, 0.1, 0.5, 1.0]),
    seed=st.integers(0, 2**32 - 1),
)
def test_mazes_are_solvable_and_targets_are_shortest_paths(lo: int, extra: int, loops: float, seed: int) -> None:
    params = TASK.make_params({"min_size": lo, "max_size": lo + extra, "loops": loops})
    records = list(TASK.generate(np.random.default_rng(seed), 12, params).records(TASK.name))
    for record in records:
        s, adjacency, start, goal = cell_graph(record["input"])
        assert lo <= s <= lo + extra and start != goal and min(start + goal) >= 0
        reach = distances(adjacency, start)
        assert len(reach) == s * s  # every cell is reachable: the maze is connected
        edges = sum(len(v) for v in adjacency.values()) // 2
        if loops == 0.0:
            assert edges == s * s - 1  # a spanning tree: the path between any two cells is unique
        moves = record["target"].split()
        assert len(moves) == reach[goal]  # shortest
        assert follow(adjacency, start, moves) == goal  # a path through open walls
        assert record["difficulty"]["size"] == s and record["difficulty"]["path_length"] == len(moves)
        assert record["difficulty"]["input_length"] == (2 * s + 1) ** 2 + 2 * s
        assert record_problem(record) is None
        assert TASK.solve(record) == record["target"]
        # wrong answers: one move short, one move too many, a detour that still ends at G, a wall crossed
        assert not TASK.check(record, " ".join(moves[:-1]))
        assert not TASK.check(record, " ".join(moves + moves[-1:]))
        back = {"U": "D", "D": "U", "L": "R", "R": "L"}[moves[0]]
        assert follow(adjacency, start, [moves[0], back] + moves) == goal
        assert not TASK.check(record, " ".join([moves[0], back] + moves))
        blocked = [m for m in STEP if follow(adjacency, start, [m]) is None]
        if blocked:
            assert not TASK.check(record, " ".join([blocked[0]] + moves[1:]))
        alternative = other_shortest_path(adjacency, start, goal, moves)
        if alternative is not None:
            assert loops > 0.0 and TASK.check(record, " ".join(alternative))


def test_loops_give_several_shortest_paths_and_each_one_is_accepted() -> None:
    params = TASK.make_params({"min_size": 6, "max_size": 6, "loops": 0.5})
    accepted = 0
    for record in TASK.generate(np.random.default_rng(3), 40, params).records(TASK.name):
        _, adjacency, start, goal = cell_graph(record["input"])
        alternative = other_shortest_path(adjacency, start, goal, record["target"].split())
        if alternative is not None:
            assert TASK.check(record, " ".join(alternative))
            accepted += 1
    assert accepted >= 10


def test_checker_by_hand() -> None:
    # 2 x 2 cells, all walls between cells open: two shortest paths from S (top left) to G (bottom right)
    record = {"task": "maze", "input": "# # # # # | # S . . # | # . # . # | # . . G # | # # # # #", "target": "D R"}
    assert TASK.check(record, "D R") and TASK.check(record, "R D")
    assert not TASK.check(record, "R R") and not TASK.check(record, "D R U D") and not TASK.check(record, "D")
    assert not TASK.check(record, "d r") and not TASK.check(record, "")
    walled = {**record, "input": "# # # # # | # S # . # | # . # . # | # . . G # | # # # # #"}
    assert TASK.check(walled, "D R") and not TASK.check(walled, "R D")
    for broken in (
        "# # # # # | # S . . # | # . # . # | # . . G #",  # not square
        "# # # # # | # S . . # | # . . . # | # . . G # | # # # # #",  # a wall place open
        "# # # # # | # S . . # | # . # . # | # . . . # | # # # # #",  # no goal
        "# # # # # | # S . S # | # . # . # | # . . G # | # # # # #",  # two starts
        "# # # # # | # . S . # | # . # . # | # . . G # | # # # # #",  # start between cells
        "# # # # # | # S . . x | # . # . # | # . . G # | # # # # #",  # unknown token
        "# # # # # | # S . . #| # . # . # | # . . G # | # # # # #",  # | glued to a token
    ):
        assert not TASK.check({**record, "input": broken}, "D R"), broken
        with pytest.raises(ValueError):
            TASK.solve({**record, "input": broken})


def test_levels_sizes_and_lengths() -> None:
    sizes = [(p.min_size, p.max_size) for _, p in sorted(TASK.levels().items())]
    assert sizes == [(s, s) for s in (5, 8, 11, 14, 17, 21, 24, 27, 30, 33)]
    record = next(TASK.generate(np.random.default_rng(0), 1, TASK.level(10)).records(TASK.name))
    assert record["difficulty"]["input_length"] == 67 * 67 + 66 == 4555
    assert TASK.with_size(1, 9).min_size == 2 and TASK.with_size(4, 9).max_size == 9
    with pytest.raises(ParamError, match="min_size=9 exceeds max_size=4"):
        TASK.make_params({"min_size": 9, "max_size": 4})
    with pytest.raises(ParamError, match="out of range"):
        TASK.make_params({"max_size": 49})


SUITE = """\
name: mazes
version: 0.0.1
seed: 5
license: mit
created: "2026-12-01"
entries:
  - {task: maze, split: easy_to_hard, strategy: difficulty, level_max: 2, test_levels: [3], sizes: {train: 60, validation: 6, test: 20}}
  - {task: maze, split: by_size, strategy: difficulty, params: {min_size: 3, max_size: 9}, pool: {n: 200},
     options: {feature: size, train_max: 5, test_min: 7}}
  - {task: maze, split: length, train_range: [2, 4], test_range: [6, 7], sizes: {train: 40, test: 10}}
"""


def test_suite_splits_mazes_by_size(tmp_path: Path) -> None:
    path = tmp_path / "mazes.yaml"
    path.write_text(SUITE)
    levels = suite_split(str(path), "maze-easy_to_hard")
    assert {r["difficulty"]["size"] for r in levels.train + levels.validation} == {5, 8}
    assert {r["difficulty"]["size"] for r in levels.test} == {11}
    assert (len(levels.train), len(levels.validation), len(levels.test)) == (60, 6, 20)
    pool = suite_split(str(path), "maze-by_size")
    assert {r["difficulty"]["size"] for r in pool.train + pool.validation} == {3, 4, 5}
    assert {r["difficulty"]["size"] for r in pool.test} == {7, 8, 9}
    assert pool.report["unused"] > 0 and pool.report["overlap"] == 0
    assert all(TASK.check(r, r["target"]) for r in pool.test)
    ranges = suite_split(str(path), "maze-length")
    assert {r["difficulty"]["size"] for r in ranges.train} == {2, 3, 4}
    assert {r["difficulty"]["size"] for r in ranges.test} == {6, 7}
