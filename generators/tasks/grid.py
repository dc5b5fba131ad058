"""ARC-like grid programs (Chollet 2019): demonstration grid pairs, then a query grid.

A record's program is a composition of grid primitives; its input shows ``demos`` pairs
``grid > program(grid) ;`` and then ``query > ?``, and its target is program(query). Grids are
colour digits ``0`` (background) .. ``9``, one token per cell, row by row, rows ended by ``|``
(as maze renders its grids, without a trailing ``|``). Example (one demo, rotate)::

    1 0 | 0 2 > 0 1 | 2 0 ; 2 2 | 0 1 > ?          target: 0 2 | 1 2

Primitives (``h x w`` grids; every primitive keeps at least one non-background cell):

=====================  =====================================================  ============
name                   meaning                                                shape
=====================  =====================================================  ============
``rotate``             a quarter turn clockwise                               w x h
``flip_horizontal``    mirrored left-right                                    h x w
``flip_vertical``      mirrored top-bottom                                    h x w
``transpose``          rows become columns                                    w x h
``recolour a b``       every cell of colour a becomes b (a, b in 1..9)        h x w
``shift_right``        columns move one right, the last wraps to the front    h x w
``shift_down``         rows move one down, the last wraps to the top          h x w
``gravity``            non-background cells fall to the bottom of each        h x w
                       column, keeping their order
``crop``               the bounding box of the non-background cells           <= h x w
``scale``              every cell becomes a 2 x 2 block                       2h x 2w
``tile``               the grid twice side by side                            h x 2w
=====================  =====================================================  ============

Sampling: program depth uniform in [min_depth, max_depth], each primitive uniform; a program
whose grids could outgrow 30 x 30 (ARC's largest) is redrawn. Each record draws a palette of
``colours`` colours; all its grids share one shape h x w (sides uniform in
[min_side, max_side]); each cell is a palette colour with probability ``density`` and at
least one cell per grid is. ``recolour``'s a is a palette colour, b any other colour.

Ambiguity rule: the record's program made the target, but the checker accepts the query's
output under any program of the set (1..max_depth primitives, ``meta.max_depth``) that maps
every demonstration: rotate and flip_horizontal agree on a symmetric grid, say, and then
either answer is correct (as maze accepts any shortest path). A query colour that no
demonstration input shows would leave a recolour's effect on it open, so the generator
repaints it (see ``_draw_grids``); ``demos`` raises the evidence. A record whose answer is a
single row or column (crop can make one) is redrawn, up to 16 times: a token more or less
never turns a wrong answer of at least 2 x 2 into another rectangle.

Derivation (``structure``): nested rules, the last primitive at the root, the grid ``input``
as the leaf and recolour's colours as lexical leaves:
``["G -> rotate G", ["G -> recolour C C G", "3", "5", "input"]]`` is recolour 3 -> 5 then
rotate. Checker: ``check`` reads the input and ``meta.max_depth`` only (never ``structure`` or
the target) and searches the program set itself, in plain Python on lists of rows (separate
from the generator's numpy code): :func:`grid_answers`. Recolours commute with the other
primitives, so it searches those breadth-first and reads the colour map off the
demonstrations, costing it the fewest recolours that make it (:func:`recolours_needed`: one
per colour the map changes, and one more per cycle of colours that no other colour joins, as
a swap of two colours takes three). tests/test_grid_program.py holds this checker to an
exhaustive enumeration of every program of up to 2 primitives. Level 10 takes ~0.2 s of CPU
per record, the largest records the parameters allow (5 demonstrations of 30 x 30 grids,
depth 4) ~1.5 s; a record asks for no more (``meta.max_depth`` keeps to its parameter's range,
at most 5 demonstrations, grids at most 30 x 30).
Features: ``depth``, ``demos``, ``height``, ``width`` (of the grids the record starts from),
``answer_rows`` and ``answer_columns``.
"""

from __future__ import annotations

import dataclasses
import functools
from collections import Counter, defaultdict
from typing import Any, Mapping, Sequence

import numpy as np

from gengap.generators.batch import Batch, concat
from gengap.generators.derivation import Tree, structure_atoms, structure_compounds
from gengap.generators.params import Params, knob
from gengap.generators.registry import register
from gengap.generators.task import Task
from gengap.generators.tasks._demonstrations import split_demonstrations
from gengap.generators.text import join_chars

PRIMITIVES = (
    "rotate", "flip_horizontal", "flip_vertical", "transpose", "recolour",
    "shift_right", "shift_down", "gravity", "crop", "scale", "tile",
)  # fmt: skip
ROTATE, FLIP_H, FLIP_V, TRANSPOSE, RECOLOUR, SHIFT_R, SHIFT_D, GRAVITY, CROP, SCALE, TILE = range(len(PRIMITIVES))
RECOLOUR_RULE = "G -> recolour C C G"
RULES = tuple(RECOLOUR_RULE if p == "recolour" else f"G -> {p} G" for p in PRIMITIVES)
LEAF = "input"
ROW, MAPS, SEP, ASK = "|", ">", ";", "?"
MAX_SIDE = 30  # ARC's largest grid: no grid of a record grows past it
MAX_DEPTH, MAX_DEMOS = 4, 5
_ROUNDS = 64
_REDRAWS = 16  # redraw rounds for records whose answer has a side of 1
# (min_depth, max_depth, min_side, max_side) of levels 1..10
LEVELS = (
    (1, 1, 3, 3), (1, 1, 3, 4), (1, 2, 3, 5), (2, 2, 4, 6), (2, 3, 4, 7),
    (2, 3, 5, 8), (3, 3, 5, 9), (3, 4, 6, 10), (3, 4, 7, 11), (4, 4, 8, 12),
)  # fmt: skip


@dataclasses.dataclass(frozen=True)
class GridProgramParams(Params):
    """Program depth, grid sides, demonstrations, palette and density of the grids."""

    min_depth: int = knob(1, lo=1, hi=MAX_DEPTH, doc="fewest primitives composed")
    max_depth: int = knob(2, lo=1, hi=MAX_DEPTH, doc="most primitives composed")
    min_side: int = knob(3, lo=2, hi=MAX_SIDE, doc="shortest grid side (height and width drawn apart)")
    max_side: int = knob(5, lo=2, hi=MAX_SIDE, doc="longest grid side")
    demos: int = knob(2, lo=1, hi=MAX_DEMOS, doc="demonstration pairs before the query")
    colours: int = knob(3, lo=1, hi=9, doc="colours of a record's palette (from 1..9; 0 is the background)")
    density: float = knob(0.4, lo=0.0, hi=1.0, doc="probability that a cell is not background (one cell per grid always is)")

    def check_consistency(self) -> None:
        self.require(self.min_depth <= self.max_depth, f"parameter min_depth={self.min_depth} exceeds max_depth={self.max_depth}")
        self.require(self.min_side <= self.max_side, f"parameter min_side={self.min_side} exceeds max_side={self.max_side}")


# -- the generator: programs run on stacks of equal-shape grids with numpy -------------------


def _fits(programs: np.ndarray, h: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Whether each program keeps every grid within MAX_SIDE (crop ignored: it only shrinks)."""
    h, w = h.copy(), w.copy()
    ok = np.ones(h.size, dtype=bool)
    for op in programs.T:
        swap = (op == ROTATE) | (op == TRANSPOSE)
        h, w = np.where(swap, w, h), np.where(swap, h, w)
        h = np.where(op == SCALE, 2 * h, h)
        w = np.where((op == SCALE) | (op == TILE), 2 * w, w)
        ok &= (h <= MAX_SIDE) & (w <= MAX_SIDE)
    return ok


def _gravity(a: np.ndarray) -> np.ndarray:
    order = np.argsort(a != 0, axis=1, kind="stable")
    return np.take_along_axis(a, order, axis=1)


def _crop(a: np.ndarray, ids: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """The bounding boxes of the non-background cells, as stacks of equal shape."""
    filled = a != 0
    rows, cols = filled.any(axis=2), filled.any(axis=1)
    top, left = rows.argmax(axis=1), cols.argmax(axis=1)
    height = a.shape[1] - rows[:, ::-1].argmax(axis=1) - top
    width = a.shape[2] - cols[:, ::-1].argmax(axis=1) - left
    out = []
    for bh, bw in sorted(set(zip(height.tolist(), width.tolist()))):
        sel = np.flatnonzero((height == bh) & (width == bw))
        r = (top[sel, None] + np.arange(bh))[:, :, None]
        c = (left[sel, None] + np.arange(bw))[:, None, :]
        out.append((ids[sel], a[sel[:, None, None], r, c]))
    return out


def _apply(op: int, a: np.ndarray, ids: np.ndarray, colour_from: np.ndarray, colour_to: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Primitive op on a stack a of grids with ids (recolour reads each grid's colours)."""
    if op == CROP:
        return _crop(a, ids)
    if op == ROTATE:
        a = np.rot90(a, k=-1, axes=(1, 2))
    elif op == FLIP_H:
        a = a[:, :, ::-1]
    elif op == FLIP_V:
        a = a[:, ::-1, :]
    elif op == TRANSPOSE:
        a = a.transpose(0, 2, 1)
    elif op == RECOLOUR:
        a = np.where(a == colour_from[:, None, None], colour_to[:, None, None], a)
    elif op == SHIFT_R:
        a = np.roll(a, 1, axis=2)
    elif op == SHIFT_D:
        a = np.roll(a, 1, axis=1)
    elif op == GRAVITY:
        a = _gravity(a)
    elif op == SCALE:
        a = a.repeat(2, axis=1).repeat(2, axis=2)
    elif op == TILE:
        a = np.concatenate([a, a], axis=2)
    return [(ids, np.ascontiguousarray(a))]


def _run(stacks: list[tuple[np.ndarray, np.ndarray]], programs: np.ndarray, per: int, recolour: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Run each grid's program (programs[grid id // per], -1 = no step) step by step; returns
    stacks of equal-shape outputs with their grid ids."""
    for step in range(programs.shape[1]):
        merged: dict[tuple[int, int], list[tuple[np.ndarray, np.ndarray]]] = defaultdict(list)
        for ids, a in stacks:
            record = ids // per
            ops = programs[record, step]
            for op in np.unique(ops).tolist():
                sel = ops == op
                if op < 0:
                    parts = [(ids[sel], a[sel])]
                else:
                    parts = _apply(op, a[sel], ids[sel], recolour[record[sel], step, 0], recolour[record[sel], step, 1])
                for part_ids, part in parts:
                    merged[part.shape[1:]].append((part_ids, part))
        stacks = [
            (np.concatenate([i for i, _ in parts]), np.concatenate([g for _, g in parts]))
            for _, parts in sorted(merged.items())
        ]
    return stacks


def _draw_grids(rng: np.random.Generator, palette: np.ndarray, per: int, h: int, w: int, density: float) -> np.ndarray:
    """(records * per, h, w) uint8 grids: each cell a palette colour with probability density,
    and one uniformly placed cell always one; a query colour that no demonstration input of
    its record shows becomes the smallest one that does."""
    m, colours = palette.shape
    filled = rng.random((m, per, h * w)) < density
    forced = rng.integers(0, h * w, size=(m, per))
    filled[np.arange(m)[:, None], np.arange(per)[None, :], forced] = True
    paint = np.take_along_axis(palette, rng.integers(0, colours, size=(m, per * h * w)), axis=1)
    grids = np.where(filled, paint.reshape(m, per, h * w), 0).astype(np.uint8)
    present = np.zeros((m, 10), dtype=bool)  # colours of the demonstration inputs
    present[np.arange(m)[:, None], grids[:, :-1].reshape(m, -1)] = True
    fallback = present[:, 1:].argmax(axis=1) + 1
    table = np.where(present, np.arange(10, dtype=np.uint8), fallback[:, None]).astype(np.uint8)
    table[:, 0] = 0
    grids[:, -1] = table[np.arange(m)[:, None], grids[:, -1]]  # the query uses only those colours
    return grids.reshape(m * per, h, w)


def _codes(a: np.ndarray) -> np.ndarray:
    """(g, h*(w+1)-1) ASCII codes of grids: digits, rows ended by ROW."""
    g, h, w = a.shape
    out = np.full((g, h, w + 1), ord(ROW), dtype=np.uint8)
    out[:, :, :w] = a + ord("0")
    return out.reshape(g, h * (w + 1))[:, :-1]


@register
class GridProgram(Task[GridProgramParams]):
    """ARC-style demonstration grid pairs and a query grid -> the program's output on the query."""

    name = "grid_program"
    family = "compositional"
    description = "ARC-like colour grids: demo pairs of a composed program (rotate, flip, recolour, gravity, crop, ...) and a query grid -> its output"
    params_type = GridProgramParams
    size_knob = "grid side in cells (min_side..max_side); an h x w grid is h*w + h - 1 tokens"
    meta_keys = ("max_depth",)
    test_caps = {"max_side": 8, "min_side": 8, "max_depth": 4}

    def levels(self) -> dict[int, GridProgramParams]:
        """Levels 1..10 raise program depth (1 -> 4) and grid sides (3 -> 8..12)."""
        return {
            k: GridProgramParams(min_depth=a, max_depth=b, min_side=c, max_side=d)
            for k, (a, b, c, d) in enumerate(LEVELS, start=1)
        }

    def with_size(self, lo: int, hi: int) -> GridProgramParams:
        """Default parameters with grid sides lo..hi (2..30; a range starting below 2 starts at 2)."""
        return self.default_params().replace(min_side=max(lo, 2), max_side=hi)

    def generate(self, rng: np.random.Generator, n: int, params: GridProgramParams) -> Batch:
        return self._generate(rng, n, params, _REDRAWS)

    def _generate(self, rng: np.random.Generator, n: int, params: GridProgramParams, redraws: int) -> Batch:
        """n records; those whose answer has a side of 1 are redrawn (up to `redraws` times)."""
        batch = self._draw(rng, n, params)
        thin = (batch.features["answer_rows"] < 2) | (batch.features["answer_columns"] < 2)
        if not redraws or not thin.any():
            return batch
        kept = np.flatnonzero(~thin)
        return concat([_rows(batch, kept), self._generate(rng, int(thin.sum()), params, redraws - 1)])

    def _draw(self, rng: np.random.Generator, n: int, params: GridProgramParams) -> Batch:
        k, per = params.demos, params.demos + 1
        h = rng.integers(params.min_side, params.max_side + 1, size=n)
        w = rng.integers(params.min_side, params.max_side + 1, size=n)
        programs = np.full((n, params.max_depth), -1, dtype=np.int64)
        pending = np.arange(n)
        for _ in range(_ROUNDS):
            depth = rng.integers(params.min_depth, params.max_depth + 1, size=pending.size)
            drawn = rng.integers(0, len(PRIMITIVES), size=(pending.size, params.max_depth))
            drawn[np.arange(params.max_depth)[None, :] >= depth[:, None]] = -1
            ok = _fits(drawn, h[pending], w[pending])
            programs[pending[ok]] = drawn[ok]
            pending = pending[~ok]
            if not pending.size:
                break
        if pending.size:  # still too large: growing steps become transposes
            drawn[(drawn == SCALE) | (drawn == TILE)] = TRANSPOSE
            programs[pending] = drawn[~ok]
        palette = np.argsort(rng.random((n, 9)), axis=1)[:, : params.colours] + 1
        pick = rng.integers(0, params.colours, size=(n, params.max_depth))
        colour_from = np.take_along_axis(palette, pick, axis=1)
        colour_to = (colour_from - 1 + rng.integers(1, 9, size=colour_from.shape)) % 9 + 1
        recolour = np.stack([colour_from, colour_to], axis=2).astype(np.uint8)
        starts = []
        for hh, ww in sorted(set(zip(h.tolist(), w.tolist()))):
            sel = np.flatnonzero((h == hh) & (w == ww))
            starts.append(((sel[:, None] * per + np.arange(per)).ravel(), _draw_grids(rng, palette[sel], per, hh, ww, params.density)))
        outputs = _run(starts, programs, per, recolour)
        return self._render(starts, outputs, programs, recolour, h, w, params)

    def _render(
        self, starts: list[tuple[np.ndarray, np.ndarray]], outputs: list[tuple[np.ndarray, np.ndarray]],
        programs: np.ndarray, recolour: np.ndarray, h: np.ndarray, w: np.ndarray, params: GridProgramParams,
    ) -> Batch:  # fmt: skip
        n, k, per = h.size, params.demos, params.demos + 1
        pieces = 4 * k + 3  # demo j: input 4j, '>' 4j+1, output 4j+2, ';' 4j+3; query: input, '>', '?'
        length = np.ones((n, pieces), dtype=np.int64)
        for j in range(per):
            length[:, 4 * j] = h * w + h - 1
        answer_shape = np.zeros((n, 2), dtype=np.int64)
        for ids, a in outputs:
            record, slot = ids // per, ids % per
            demo = slot < k
            length[record[demo], 4 * slot[demo] + 2] = a.shape[1] * a.shape[2] + a.shape[1] - 1
            answer_shape[record[~demo]] = a.shape[1:]
        at = np.concatenate([np.zeros((n, 1), dtype=np.int64), np.cumsum(length, axis=1)], axis=1)
        total = at[:, -1]
        codes = np.zeros((n, int(total.max())), dtype=np.uint8)
        for j in range(k):
            codes[np.arange(n), at[:, 4 * j + 1]] = ord(MAPS)
            codes[np.arange(n), at[:, 4 * j + 3]] = ord(SEP)
        codes[np.arange(n), at[:, 4 * k + 1]] = ord(MAPS)
        codes[np.arange(n), at[:, 4 * k + 2]] = ord(ASK)
        answer_len = answer_shape[:, 0] * answer_shape[:, 1] + answer_shape[:, 0] - 1
        answers = np.zeros((n, int(answer_len.max())), dtype=np.uint8)
        for output, (ids, a) in [(False, s) for s in starts] + [(True, s) for s in outputs]:
            record, slot = ids // per, ids % per
            rendered = _codes(a)
            cols = np.arange(rendered.shape[1])[None, :]
            if output:
                query = slot == k
                answers[record[query, None], cols] = rendered[query]
                keep = ~query
                record, slot, rendered = record[keep], slot[keep], rendered[keep]
                piece = 4 * slot + 2
            else:
                piece = 4 * slot
            codes[record[:, None], at[record, piece][:, None] + cols] = rendered
        structure = [_tree(p, r) for p, r in zip(programs.tolist(), recolour.tolist())]
        depth = (programs >= 0).sum(axis=1)
        features = {
            "depth": depth,
            "demos": np.full(n, k, dtype=np.int64),
            "height": h,
            "width": w,
            "answer_rows": answer_shape[:, 0],
            "answer_columns": answer_shape[:, 1],
        }
        inputs, targets = join_chars(codes, total), join_chars(answers, answer_len)
        return Batch(inputs, targets, features, structure, {"max_depth": params.max_depth})

    def solve(self, example: Mapping[str, Any]) -> str:
        """An answer the demonstrations allow (the first in sorted order; see ``check_answer``);
        ValueError when none does."""
        answers = grid_answers(example["input"], self.meta(example, "max_depth"))
        if not answers:
            raise ValueError("no program of the set maps every demonstration")
        return min(answers)

    def check_answer(self, example: Mapping[str, Any], prediction: str) -> bool:
        """Whether prediction is the query's output under some program of 1..max_depth
        primitives that maps every demonstration (any of them when several do)."""
        try:
            answers = grid_answers(example["input"], self.meta(example, "max_depth"))
        except (ValueError, KeyError, TypeError):
            return False
        return " ".join(prediction.split()) in answers

    def structure_problem(self, example: Mapping[str, Any]) -> str | None:
        """Why the record's structure is not a program that made it: one of 1..meta.max_depth
        primitives (recolour of two different colours) that maps every demonstration, keeps its
        grids within 30 x 30 and turns the query into the target."""
        try:
            steps = read_program(example["structure"])
            depth = self.meta(example, "max_depth")
            demos, query = parse_grids(example["input"])
            target = parse_grid(example["target"].split())
        except (ValueError, KeyError, TypeError) as err:
            return f"structure is not a program of the record: {err}"
        if len(steps) > depth:
            return f"structure is a program of {len(steps)} primitives; the record allows at most {depth} (meta.max_depth)"
        if any(name == "recolour" and args[0] == args[1] for name, args in steps):
            return "structure recolours a colour to itself (a recolour takes two different colours)"
        for number, (source, image) in enumerate([*demos, (query, target)], start=1):
            try:
                made = run_program(steps, source, bounded=True)
            except ValueError as err:
                return f"structure is not a program of the record: {err}"
            if made != image:
                what = f"demonstration {number}" if number <= len(demos) else "the query's target"
                return f"structure is a program that does not give {what}"
        return None

    def atoms(self, example: Mapping[str, Any]) -> Counter[str] | None:
        return structure_atoms(example)  # the input does not determine the structure

    def compounds(self, example: Mapping[str, Any], abstract_lexical: bool = False) -> Counter[str] | None:
        return structure_compounds(example, abstract_lexical)

    def measure(self, example: Mapping[str, Any]) -> dict[str, int]:
        """Features read from the input and target (``depth`` from ``structure``, when present)."""
        demos, query = parse_grids(example["input"])
        answer = parse_grid(example["target"].split())
        found = {"demos": len(demos), "height": len(query), "width": len(query[0])}
        found.update(answer_rows=len(answer), answer_columns=len(answer[0]))
        if example.get("structure") is not None:
            found["depth"] = len(read_program(example["structure"]))
        return found


def _rows(batch: Batch, rows: np.ndarray) -> Batch:
    """The given rows of a batch."""
    structure = None if batch.structure is None else [batch.structure[i] for i in rows.tolist()]
    features = {name: column[rows] for name, column in batch.features.items()}
    return Batch(batch.inputs[rows], batch.targets[rows], features, structure, batch.meta)


def _tree(program: Sequence[int], colours: Sequence[Sequence[int]]) -> Tree:
    tree: Tree = LEAF
    for op, (a, b) in zip(program, colours):
        if op < 0:
            break
        tree = [RULES[op], str(a), str(b), tree] if op == RECOLOUR else [RULES[op], tree]
    return tree


# -- the reference reader and interpreter (independent of generate) -------------------------

Grid = list[list[int]]


def parse_grid(tokens: Sequence[str]) -> Grid:
    """A grid from its tokens (digits, rows ended by ``|``); ValueError unless rectangular,
    non-empty and at most MAX_SIDE x MAX_SIDE (no grid of a record is larger)."""
    rows: Grid = [[]]
    for token in tokens:
        if token == ROW:
            rows.append([])
        elif len(token) == 1 and token.isdigit():
            rows[-1].append(int(token))
        else:
            raise ValueError(f"unexpected token {token!r} in a grid")
    if not rows[0] or any(len(row) != len(rows[0]) for row in rows):
        raise ValueError("a grid is a non-empty rectangle of digits, rows ended by |")
    if len(rows) > MAX_SIDE or len(rows[0]) > MAX_SIDE:
        raise ValueError(f"a grid of {len(rows)} x {len(rows[0])} cells is larger than {MAX_SIDE} x {MAX_SIDE}")
    return rows


def parse_grids(text: str) -> tuple[list[tuple[Grid, Grid]], Grid]:
    """(demonstration pairs, query grid) of an input ``g > g ; ... ; g > ?``; ValueError when malformed."""
    demos, query = split_demonstrations(text.split(), SEP, MAPS, ASK, MAX_DEMOS)
    return [(parse_grid(a), parse_grid(b)) for a, b in demos], parse_grid(query)


def read_program(structure: Any) -> list[tuple[str, tuple[int, ...]]]:
    """(primitive, colour arguments) in the order applied, from a record's structure."""
    steps: list[tuple[str, tuple[int, ...]]] = []
    node = structure
    while isinstance(node, list):
        rule = node[0]
        if rule == RECOLOUR_RULE and len(node) == 4:
            a, b = int(node[1]), int(node[2])
            if not (1 <= a <= 9 and 1 <= b <= 9):
                raise ValueError("recolour takes colours 1..9")
            steps.append(("recolour", (a, b)))
        elif isinstance(rule, str) and len(node) == 2 and rule.startswith("G -> ") and rule[5:-2] in PRIMITIVES:
            steps.append((rule[5:-2], ()))
        else:
            raise ValueError(f"unknown program rule {rule!r}")
        node = node[-1]
    if node != LEAF or not steps:
        raise ValueError("the record has no program in structure")
    return steps[::-1]


def primitive(name: str, g: Grid, args: tuple[int, ...] = ()) -> Grid:
    """One primitive on a grid (lists of rows), written for clarity."""
    height, width = len(g), len(g[0])
    if name == "rotate":
        return [[g[height - 1 - r][c] for r in range(height)] for c in range(width)]
    if name == "flip_horizontal":
        return [row[::-1] for row in g]
    if name == "flip_vertical":
        return [list(row) for row in g[::-1]]
    if name == "transpose":
        return [[g[r][c] for r in range(height)] for c in range(width)]
    if name == "recolour":
        old, new = args
        return [[new if cell == old else cell for cell in row] for row in g]
    if name == "shift_right":
        return [[row[-1], *row[:-1]] for row in g]
    if name == "shift_down":
        return [list(g[-1])] + [list(row) for row in g[:-1]]
    if name == "gravity":
        columns = []
        for c in range(width):
            filled = [g[r][c] for r in range(height) if g[r][c] != 0]
            columns.append([0] * (height - len(filled)) + filled)
        return [[columns[c][r] for c in range(width)] for r in range(height)]
    if name == "crop":
        cells = [(r, c) for r in range(height) for c in range(width) if g[r][c] != 0]
        if not cells:
            return [list(row) for row in g]
        r0, r1 = min(r for r, _ in cells), max(r for r, _ in cells)
        c0, c1 = min(c for _, c in cells), max(c for _, c in cells)
        return [g[r][c0 : c1 + 1] for r in range(r0, r1 + 1)]
    if name == "scale":
        return [[cell for cell in row for _ in range(2)] for row in g for _ in range(2)]
    if name == "tile":
        return [row + row for row in g]
    raise ValueError(f"unknown primitive {name!r}")


def run_program(steps: Sequence[tuple[str, tuple[int, ...]]], g: Grid, bounded: bool = False) -> Grid:
    """The grid the steps make from g; bounded: ValueError once a grid grows past 30 x 30 (no
    program of a record does), so a forged program cannot make the work explode."""
    for name, args in steps:
        g = primitive(name, g, args)
        if bounded and (len(g) > MAX_SIDE or len(g[0]) > MAX_SIDE):
            raise ValueError(f"its grids grow past {MAX_SIDE} x {MAX_SIDE}")
    return g


def render(g: Grid) -> str:
    """The tokens of a grid: digits, rows ended by ``|``."""
    return " | ".join(" ".join(str(cell) for cell in row) for row in g)


GEOMETRIC = tuple(p for p in PRIMITIVES if p != "recolour")


@functools.lru_cache(maxsize=64)
def grid_answers(text: str, max_depth: int) -> frozenset[str]:
    """Every query output of a program of 1..max_depth primitives that maps all demonstrations.

    Every primitive but recolour treats colours alike (it moves cells, or reads only which are
    background), so recolours commute with them: a program is its other primitives G followed
    by a colour map F. The search runs G breadth-first over the grids it reaches (programs
    reaching the same grids merged; grids past 30 x 30 dropped); for each, F is read off the
    demonstrations cell by cell (background stays background, one colour per colour) and
    costs one recolour per colour it changes (the identity costs one: a recolour of a colour
    no grid shows). A query colour no demonstration input shows is
    refused (ValueError): no program's choice for it could be read off.
    """
    demos, query = parse_grids(text)
    shown = {cell for grid, _ in demos for row in grid for cell in row}
    if not {cell for row in query for cell in row} <= shown | {0}:
        raise ValueError("the query shows a colour no demonstration input shows")
    start = tuple(_frozen(grid) for grid, _ in demos) + (_frozen(query),)
    every_colour = shown | {cell for row in query for cell in row} | {0}
    goals = [_frozen(image) for _, image in demos]
    answers: set[str] = set()

    def consider(state: tuple[tuple[tuple[int, ...], ...], ...], steps: int) -> None:
        colour_map = {0: 0}
        for got, want in zip(state, goals):
            if len(got) != len(want) or len(got[0]) != len(want[0]):
                return
            for row_got, row_want in zip(got, want):
                for a, b in zip(row_got, row_want):
                    if colour_map.setdefault(a, b) != b:
                        return
        if any(a and not b for a, b in colour_map.items()):
            return
        recolours = recolours_needed(colour_map)
        if recolours is None:
            return
        cost = steps + recolours
        if cost == 0:  # the identity: a recolour of a colour no grid shows, else two flips
            cost = 1 if len(every_colour) < 10 else 2
        if cost <= max_depth:
            answers.add(render([[colour_map[cell] for cell in row] for row in state[-1]]))

    consider(start, 0)
    seen: set[tuple[tuple[tuple[int, ...], ...], ...]] = set()
    frontier = [start]
    for steps in range(1, max_depth + 1):
        reached = []
        for state in frontier:
            for name in GEOMETRIC:
                nxt = tuple(_frozen(primitive(name, [list(row) for row in grid])) for grid in state)
                if nxt in seen or any(len(g) > MAX_SIDE or len(g[0]) > MAX_SIDE for g in nxt):
                    continue
                seen.add(nxt)
                reached.append(nxt)
                consider(nxt, steps)
        frontier = reached
    return frozenset(answers)


def recolours_needed(colour_map: Mapping[int, int]) -> int | None:
    """The fewest recolours (``recolour a b``: every cell of colour a becomes b) that take every
    colour a of colour_map (the colours the grids show; background 0 maps to itself) to
    colour_map[a]; None when no sequence does.

    A recolour renames the cells of one current colour, merging them with those of b when b is
    in use; merged colours never part, so two colours may merge only when the map sends both to
    the same colour. Each recolour finishes at most one colour's journey, so every colour the
    map moves costs one; a cycle of moved colours (a -> b -> ... -> a) that no other colour
    joins costs one more: its first recolour can finish nothing (each colour it could go to is
    in use by a cycle colour bound elsewhere) and parks a colour on a free one. A cycle that
    another colour joins needs no spare step (1 -> 2, 2 -> 1, 3 -> 1: recolour 2 3, 1 2, 3 1).
    A free colour exists unless all nine colours are shown and the map merges none (it is then
    a permutation of them): a cycle is then impossible (None); a merge done first frees one."""
    moved = {a: b for a, b in colour_map.items() if a and a != b}
    if not moved:
        return 0
    shown = [a for a in colour_map if a]
    joining = Counter(colour_map[a] for a in shown)  # colours sent to each colour (itself included when fixed)
    pure_cycles, visited = 0, set()
    for start in moved:
        path, node = [], start
        while node in moved and node not in visited and node not in path:
            path.append(node)
            node = moved[node]
        visited.update(path)
        if node in path:  # a new cycle: path from its first node on
            cycle = path[path.index(node):]
            if all(joining[c] == 1 for c in cycle):
                pure_cycles += 1
    merges = len(shown) - len(set(colour_map[a] for a in shown))
    if pure_cycles and len(shown) == 9 and not merges:
        return None
    return len(moved) + pure_cycles


def _frozen(grid: Grid) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(row) for row in grid)
