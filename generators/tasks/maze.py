"""Square mazes: find a shortest path from S to G (easy-to-hard by size, Schwarzschild et al. 2021).

A maze of s x s cells is a random spanning tree of the grid graph: every edge between
adjacent cells gets a random rank and the minimum spanning tree under those ranks is kept
(randomized Kruskal: uniform random edge order), built for a whole batch at once with
Borůvka rounds (each component joins along its cheapest outgoing edge; at most log2(s^2)
rounds). With ``loops`` > 0 every wall left standing between two cells is then removed with
that probability, so several shortest paths can exist. Start and goal are two distinct
cells drawn uniformly.

Rendering: the (2s+1) x (2s+1) token grid of the maze, row by row, rows separated by ``|``:
cells at odd (row, column), ``#`` a wall, ``.`` open, ``S`` the start, ``G`` the goal; the
border is wall. A maze of s cells per side has (2s+1)^2 + 2s input tokens (4,555 at 33 x 33).
Example (2 x 2 cells): ``# # # # # | # S . . # | # # # . # | # G . . # | # # # # #``.

Target: a shortest path from S to G as moves ``U D L R`` (one move = one cell). The
generated target prefers, at every step, the first of D, L, R, U that stays on a shortest
path; ``check`` accepts any shortest path (it runs its own breadth-first search on the
token grid).
"""

from __future__ import annotations

import dataclasses
import functools
from collections import deque
from types import MappingProxyType
from typing import Any, Mapping

import numpy as np

from gengap.generators.batch import Batch
from gengap.generators.params import Params, knob
from gengap.generators.registry import register
from gengap.generators.task import Task
from gengap.generators.text import join_chars

MIN_SIZE, MAX_SIZE = 2, 48  # 48 x 48 cells: 9,505 input tokens
SIZE_LEVELS = (5, 8, 11, 14, 17, 21, 24, 27, 30, 33)
WALL, OPEN, START, GOAL, ROW = "#", ".", "S", "G", "|"
MOVES = "DLRU"  # the generator's preference order; index = direction
_CELLS = 1 << 20  # bound on cells generated at once (memory of the per-cell arrays)


@dataclasses.dataclass(frozen=True)
class MazeParams(Params):
    """Cells per side drawn uniformly from [min_size, max_size]; extra openings."""

    min_size: int = knob(5, lo=MIN_SIZE, hi=MAX_SIZE, doc="fewest cells per side (s x s cells, (2s+1)^2 + 2s tokens)")
    max_size: int = knob(9, lo=MIN_SIZE, hi=MAX_SIZE, doc="most cells per side")
    loops: float = knob(
        0.0, lo=0.0, hi=1.0, doc="probability that each wall left by the perfect maze is removed (0: one path; >0: loops)"
    )

    def check_consistency(self) -> None:
        self.require(
            self.min_size <= self.max_size, f"parameter min_size={self.min_size} exceeds max_size={self.max_size}"
        )


def _edges(s: int) -> tuple[np.ndarray, np.ndarray]:
    """Endpoints (cell ids r*s+c) of the 2s(s-1) grid edges: horizontal ones first, then vertical."""
    cells = np.arange(s * s).reshape(s, s)
    u = np.concatenate([cells[:, :-1].ravel(), cells[:-1, :].ravel()])
    v = np.concatenate([cells[:, 1:].ravel(), cells[1:, :].ravel()])
    return u, v


def _spanning_trees(rng: np.random.Generator, n: int, s: int) -> np.ndarray:
    """(n, E) bool: the edges of n random spanning trees of the s x s grid (randomized Kruskal).

    Ranks are a uniform permutation of each maze's edges, made globally distinct by an offset
    per maze; the minimum spanning tree under distinct ranks is unique and is what Kruskal
    keeps. Borůvka: per round, every component takes its cheapest edge leaving it; the
    components then merge by pointer jumping (a pair that chose the same edge keeps the
    smaller label as root).
    """
    u, v = _edges(s)  # int32 indices throughout: a chunk holds at most _CELLS cells (see generate)
    u, v = u.astype(np.int32), v.astype(np.int32)
    count = u.size
    cells = s * s
    ranks = rng.permuted(np.broadcast_to(np.arange(count, dtype=np.int32), (n, count)), axis=1)
    key = (ranks + (np.arange(n, dtype=np.int32) * count)[:, None]).ravel()
    offset = (np.arange(n, dtype=np.int32) * cells)[:, None]
    eu, ev = (u[None, :] + offset).ravel(), (v[None, :] + offset).ravel()
    edge_of_key = np.empty(key.size, dtype=np.int32)
    edge_of_key[key] = np.arange(key.size)
    label = np.arange(n * cells, dtype=np.int32)
    tree = np.zeros(key.size, dtype=bool)
    unused = np.iinfo(np.int32).max
    live = np.arange(key.size, dtype=np.int32)
    while True:
        lu, lv = label[eu[live]], label[ev[live]]
        crossing = lu != lv
        live, lu, lv = live[crossing], lu[crossing], lv[crossing]
        if not live.size:
            break
        best = np.full(n * cells, unused, dtype=np.int32)
        np.minimum.at(best, lu, key[live])
        np.minimum.at(best, lv, key[live])
        roots = np.flatnonzero(best != unused)
        chosen = edge_of_key[best[roots]]
        tree[chosen] = True
        a, b = label[eu[chosen]], label[ev[chosen]]
        parent = np.arange(n * cells, dtype=np.int32)
        up = np.where(a == roots, b, a)
        parent[roots] = up
        mutual = (parent[up] == roots) & (roots < up)  # both chose the same edge: the smaller label stays root
        up[mutual] = roots[mutual]
        parent[roots] = up
        while True:  # only component labels have parents of their own: jump those
            jumped = parent[up]
            if np.array_equal(jumped, up):
                break
            up = jumped
            parent[roots] = up
        label = parent[label]
    return tree.reshape(n, count)


def _openings(opened: np.ndarray, s: int) -> tuple[np.ndarray, np.ndarray]:
    """(n, s, s-1) openings between horizontal neighbours and (n, s-1, s) between vertical ones."""
    n = opened.shape[0]
    return opened[:, : s * (s - 1)].reshape(n, s, s - 1), opened[:, s * (s - 1) :].reshape(n, s - 1, s)


def _steps(s: int) -> np.ndarray:
    """Cell-id offsets of the moves D, L, R, U in a maze of s cells per side."""
    return np.array([s, -1, 1, -s])


def _open_directions(opened: np.ndarray, s: int) -> np.ndarray:
    """(n * s * s, 4) bool: whether each cell's wall towards D, L, R, U is open."""
    n = opened.shape[0]
    horizontal, vertical = _openings(opened, s)
    ways = np.zeros((n, s, s, 4), dtype=bool)
    ways[:, :-1, :, 0] = vertical  # D
    ways[:, :, 1:, 1] = horizontal  # L
    ways[:, :, :-1, 2] = horizontal  # R
    ways[:, 1:, :, 3] = vertical  # U
    return ways.reshape(n * s * s, 4)


def _distances(ways: np.ndarray, s: int, goals: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Hop distance of every cell to its maze's goal (global cell ids), by a frontier search that
    stops once every start is reached; -1 where not reached."""
    steps = _steps(s)
    dist = np.full(ways.shape[0], -1, dtype=np.int64)
    dist[goals] = 0
    frontier, level = goals, 0
    while frontier.size and (dist[starts] < 0).any():
        level += 1
        here, direction = np.nonzero(ways[frontier])
        found = frontier[here] + steps[direction]
        found = np.unique(found[dist[found] < 0])
        dist[found] = level
        frontier = found
    return dist


def _walk(ways: np.ndarray, dist: np.ndarray, s: int, starts: np.ndarray) -> np.ndarray:
    """(n, longest) move indices of a shortest path per maze: from the start, always the first
    direction (D, L, R, U) that leads one hop closer to the goal; -1 past a path's end."""
    steps = _steps(s)
    hops = dist[starts]
    moves = np.full((starts.size, int(hops.max())), -1, dtype=np.int64)
    current = starts.copy()
    for step in range(moves.shape[1]):
        live = np.flatnonzero(hops > step)
        here = current[live]
        neighbours = here[:, None] + steps[None, :]
        closer = ways[here] & (dist[np.where(ways[here], neighbours, here[:, None])] == dist[here][:, None] - 1)
        direction = np.argmax(closer, axis=1)
        moves[live, step] = direction
        current[live] = neighbours[np.arange(live.size), direction]
    return moves


def _render(opened: np.ndarray, s: int, starts: np.ndarray, goals: np.ndarray) -> np.ndarray:
    """(n, (2s+1)^2 + 2s) ASCII codes of the token grids, rows separated by ROW."""
    n, side = opened.shape[0], 2 * s + 1
    grid = np.full((n, side, side + 1), ord(WALL), dtype=np.uint8)
    grid[:, :, side] = ord(ROW)
    grid[:, 1:side:2, 1:side:2] = ord(OPEN)
    horizontal, vertical = _openings(opened, s)
    grid[:, 1:side:2, 2 : side - 1 : 2][horizontal] = ord(OPEN)
    grid[:, 2 : side - 1 : 2, 1:side:2][vertical] = ord(OPEN)
    rows = np.arange(n)
    grid[rows, 2 * (starts // s) + 1, 2 * (starts % s) + 1] = ord(START)
    grid[rows, 2 * (goals // s) + 1, 2 * (goals % s) + 1] = ord(GOAL)
    return grid.reshape(n, side * (side + 1))[:, :-1]


def _mazes(rng: np.random.Generator, n: int, s: int, loops: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(input codes, move indices, path lengths) of n mazes of s x s cells."""
    opened = _spanning_trees(rng, n, s)
    if loops > 0:
        opened |= rng.random(opened.shape) < loops
    starts = rng.integers(0, s * s, size=n, dtype=np.int64)
    goals = rng.integers(0, s * s - 1, size=n, dtype=np.int64)
    goals += goals >= starts
    ways = _open_directions(opened, s)
    offset = np.arange(n, dtype=np.int64) * s * s
    dist = _distances(ways, s, goals + offset, starts + offset)
    moves = _walk(ways, dist, s, starts + offset)
    return _render(opened, s, starts, goals), moves, dist[starts + offset]


def parse_grid(text: str) -> list[str]:
    """The rows of a maze input as strings of one character per token; ValueError unless it is a
    well-formed maze grid: square, odd side >= 5, wall border and wall at even (row, column),
    only the maze tokens, one S and one G, both on cells (odd row and column)."""
    rows: list[list[str]] = [[]]
    for token in text.split():
        if token == ROW:
            rows.append([])
        else:
            rows[-1].append(token)
    side = len(rows)
    if side < 2 * MIN_SIZE + 1 or side % 2 == 0 or any(len(row) != side for row in rows):
        raise ValueError("a maze is a square grid of odd side >= 5, rows separated by |")
    grid = ["".join(row) for row in rows]
    if any(len(token) != 1 or token not in WALL + OPEN + START + GOAL for row in rows for token in row):
        raise ValueError("unexpected token in the maze grid")
    for r, line in enumerate(grid):
        for c, char in enumerate(line):
            wall_place = r in (0, side - 1) or c in (0, side - 1) or (r % 2 == 0 and c % 2 == 0)
            if wall_place and char != WALL:
                raise ValueError(f"position ({r}, {c}) must be a wall")
            if char in START + GOAL and (r % 2 == 0 or c % 2 == 0):
                raise ValueError(f"{char} must lie on a cell (odd row and column)")
    if "".join(grid).count(START) != 1 or "".join(grid).count(GOAL) != 1:
        raise ValueError("a maze has exactly one S and one G")
    return grid


def _find(grid: list[str], char: str) -> tuple[int, int]:
    row = next(r for r, line in enumerate(grid) if char in line)
    return row, grid[row].index(char)


def grid_distances(grid: list[str], source: tuple[int, int]) -> dict[tuple[int, int], int]:
    """Breadth-first distances over the non-wall positions of the grid (one step = one token)."""
    dist = {source: 0}
    queue = deque([source])
    while queue:
        r, c = queue.popleft()
        for nr, nc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
            if grid[nr][nc] != WALL and (nr, nc) not in dist:
                dist[(nr, nc)] = dist[(r, c)] + 1
                queue.append((nr, nc))
    return dist


@functools.lru_cache(maxsize=16)
def read_maze(text: str) -> tuple[tuple[str, ...], tuple[int, int], tuple[int, int], Mapping[tuple[int, int], int]]:
    """(grid rows, start, goal, distances from the start) of a maze input, cached: one record is
    often checked against many predictions (scoring). ValueError as parse_grid; read-only."""
    grid = parse_grid(text)
    start = _find(grid, START)
    return tuple(grid), start, _find(grid, GOAL), MappingProxyType(grid_distances(grid, start))


DELTAS = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}


@register
class Maze(Task[MazeParams]):
    """An s x s maze as a token grid with S and G -> a shortest path as moves U D L R.

    Features: ``size`` (cells per side) and ``path_length`` (moves of a shortest path).
    """

    name = "maze"
    family = "structured"
    description = "square maze as a token grid (# wall, . open, S start, G goal, | row end) -> a shortest path S to G as moves U D L R"
    params_type = MazeParams
    size_knob = "cells per side (min_size..max_size); an s x s maze has (2s+1)^2 + 2s input tokens"

    def levels(self) -> dict[int, MazeParams]:
        """Levels 1..10: 5, 8, 11, 14, 17, 21, 24, 27, 30, 33 cells per side (one size each), no loops."""
        return {k: MazeParams(min_size=s, max_size=s) for k, s in enumerate(SIZE_LEVELS, start=1)}

    def with_size(self, lo: int, hi: int) -> MazeParams:
        """Default parameters with lo..hi cells per side (a range starting below 2 starts at 2)."""
        return self.default_params().replace(min_size=max(lo, MIN_SIZE), max_size=hi)

    def generate(self, rng: np.random.Generator, n: int, params: MazeParams) -> Batch:
        if params.min_size == params.max_size:
            sizes = np.full(n, params.min_size, dtype=np.int64)
        else:
            sizes = rng.integers(params.min_size, params.max_size + 1, size=n, dtype=np.int64)
        tokens = (2 * sizes + 1) ** 2 + 2 * sizes
        codes = np.zeros((n, int(tokens.max(initial=1))), dtype=np.uint8)
        lengths = np.zeros(n, dtype=np.int64)
        paths = []
        for s in np.unique(sizes).tolist():  # each size in increasing order, in chunks
            where = np.flatnonzero(sizes == s)
            chunk = max(1, _CELLS // (s * s))
            for start in range(0, where.size, chunk):
                rows = where[start : start + chunk]
                grid, path, hops = _mazes(rng, rows.size, s, params.loops)
                codes[rows, : grid.shape[1]] = grid
                lengths[rows] = hops
                paths.append((rows, path))
        moves = np.zeros((n, int(lengths.max(initial=1))), dtype=np.uint8)
        for rows, path in paths:
            moves[rows, : path.shape[1]] = np.maximum(path, 0)
        letters = np.frombuffer(MOVES.encode(), dtype=np.uint8)
        targets = join_chars(letters[moves], lengths)
        return Batch(join_chars(codes, tokens), targets, {"size": sizes, "path_length": lengths})

    def solve(self, example: Mapping[str, Any]) -> str:
        """A shortest path found by breadth-first search on the token grid (moves of two tokens)."""
        grid = parse_grid(example["input"])
        goal = _find(grid, GOAL)
        to_goal = grid_distances(grid, goal)
        here, path = _find(grid, START), []
        if here not in to_goal:
            raise ValueError("the goal cannot be reached")
        while here != goal:
            move = next(
                m for m in MOVES
                if to_goal.get(_step(here, m, 1)) == to_goal[here] - 1 and to_goal.get(_step(here, m, 2)) == to_goal[here] - 2
            )
            path.append(move)
            here = _step(here, move, 2)
        return " ".join(path)

    def check(self, example: Mapping[str, Any], prediction: str) -> bool:
        """Any shortest path: moves through open positions only, from S to G, as many moves as the
        breadth-first distance (in cells)."""
        try:
            grid, start, goal, dist = read_maze(example["input"])
        except (ValueError, KeyError, TypeError):
            return False
        moves = prediction.split()
        if goal not in dist or 2 * len(moves) != dist[goal]:
            return False
        here = start
        for move in moves:
            if move not in DELTAS:
                return False
            for _ in range(2):
                here = _step(here, move, 1)
                if grid[here[0]][here[1]] == WALL:
                    return False
        return here == goal

    def measure(self, example: Mapping[str, Any]) -> dict[str, int]:
        grid, _, goal, dist = read_maze(example["input"])
        if goal not in dist:
            raise ValueError("the goal cannot be reached")
        return {"size": len(grid) // 2, "path_length": dist[goal] // 2}


def _step(position: tuple[int, int], move: str, tokens: int) -> tuple[int, int]:
    dr, dc = DELTAS[move]
    return position[0] + tokens * dr, position[1] + tokens * dc
