"""Infinite deterministic record streams for training loops: resumable, shardable, leak-free.

Contract. A :class:`RecordStream` of (task, level table, seed) is an infinite sequence of
positions 0, 1, 2, ... Position p lies in block b = p // BLOCK_SIZE at offset
o = p % BLOCK_SIZE and has a level L(p), chosen by a *chooser* (a function of p; see
:meth:`RecordStream.chooser`) or, for a one-level table, fixed. Its record is record o of
block b of the (task, levels[L(p)], seed) run: the record a release or ``gengap generate
--seed seed`` with those parameters writes at index p, whenever that run holds the whole
block (a run's shorter last block is drawn at its own length). So the first n records of a
one-level stream are ``gengap generate TASK --n n --seed seed`` byte for byte when n is a
multiple of BLOCK_SIZE, and reading from position p costs one block generation per level
in use (O(1) in p).

A position whose input is in the stream's :class:`~gengap.generators.exclusion.Exclusion` yields
nothing; positions never shift, so exclusion changes neither resume points nor shards.
BLOCK_SIZE excluded positions in a row raise ValueError (the task's inputs at those
levels are all, or nearly all, on the paired split's held-out side).

Curricula. ``iterate`` and ``records`` take a ``curriculum`` (a
:class:`~gengap.generators.curriculum.Curriculum` or its spec string, over the stream's levels)
and ``records_per_step``: the level at position p is the curriculum's choice at step
p // records_per_step for the uniform u(p) (:meth:`RecordStream.chooser`), or take a ``chooser``
of their own. A stream of several levels given neither draws each position's level uniformly
from its levels (the curriculum ``mixture:<level>=1,...``), so ``RecordStream.of_task(task,
seed).records()`` mixes the task's ten levels; a one-level stream keeps its level.

Shards. :class:`Shard` ``(count, indices)`` holds the blocks b with b % count in indices.
Shards with disjoint indices hold disjoint positions, and the shards of all indices
0..count-1 together hold every position once (data-loader workers x distributed ranks:
``Shard.of(rank * workers + worker, world * workers)``). A shard yields its positions in
increasing order.

Levels and blocks. A mixture of levels generates, for every block it reads, the block of
each level it chooses there (the blocks are cached per level, one at a time), so a stream
mixing k levels does up to k times the generation work of a one-level stream. The levels of
a block's positions are read in position order and may depend on state that changes
between reads (an adaptive curriculum), which is why the choice is per position.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Callable, Iterator, Mapping, Sequence

import numpy as np

from gengap.generators.batch import Record
from gengap.generators.blocks import BLOCK_SIZE
from gengap.generators.curriculum import Curriculum, parse_curriculum
from gengap.generators.exclusion import Exclusion
from gengap.generators.numbers import Range
from gengap.generators.params import ParamError, Params
from gengap.generators.registry import get_task
from gengap.generators.seeding import block_rng, curriculum_rng

Chooser = Callable[[int], int]  # position -> level
BLOCK_SIZES = Range(1, 1 << 24, integer=True)  # a stream's blocks: at least one record, at most ~16M (one block is generated whole)


def check_block_size(block_size: object) -> None:
    """ValueError unless block_size keeps to BLOCK_SIZES (the numeric rule, gengap.generators.numbers)."""
    if not BLOCK_SIZES.holds(block_size):
        raise ValueError(f"a stream's block_size must be {BLOCK_SIZES.describe()}, got {block_size!r}")


@dataclass(frozen=True)
class Shard:
    """The blocks b with b % count in indices (the whole stream by default)."""

    count: int = 1
    indices: tuple[int, ...] = (0,)

    def __post_init__(self) -> None:
        if self.count < 1 or not self.indices or any(not 0 <= i < self.count for i in self.indices):
            raise ValueError(f"a shard needs count >= 1 and indices in 0..count-1, got {self.count} and {list(self.indices)}")

    @classmethod
    def of(cls, index: int, count: int) -> "Shard":
        return cls(count, (index,))

    def owns(self, block: int) -> bool:
        return block % self.count in self.indices

    def blocks(self, first: int) -> Iterator[int]:
        """The shard's blocks from block `first` on, ascending (infinite)."""
        block = first
        while True:
            if self.owns(block):
                yield block
            block += 1


class Uniforms:
    """u(p) in [0, 1) for every position p: stream ``curriculum`` of gengap.generators.seeding (or the
    ``source(seed, block)`` given), one block cached."""

    def __init__(self, seed: int, block_size: int = BLOCK_SIZE, source: Callable[[int, int], np.random.Generator] = curriculum_rng) -> None:
        check_block_size(block_size)
        self.seed = seed
        self.block_size = block_size
        self.source = source
        self._block = -1
        self._values = np.empty(0)

    def values(self, block: int) -> np.ndarray:
        """The uniforms of every position of `block`."""
        if block != self._block:
            self._values = self.source(self.seed, block).random(self.block_size)
            self._block = block
        return self._values

    def __call__(self, position: int) -> float:
        block, offset = divmod(position, self.block_size)
        return float(self.values(block)[offset])


@dataclass
class _Block:
    index: int
    records: list[Record]
    keep: np.ndarray


@dataclass(frozen=True, eq=False)
class RecordStream:
    """Records of `task` at the parameters of `levels` (level -> params), seeded by `seed`; see the module doc."""

    task: str
    levels: Mapping[int, Params]
    seed: int
    exclusion: Exclusion | None = None
    block_size: int = BLOCK_SIZE
    _cache: dict[int, _Block] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        get_task(self.task)
        check_block_size(self.block_size)
        if self.seed < 0:
            raise ValueError(f"a stream's seed must be non-negative, got {self.seed}")
        if not self.levels:
            raise ValueError("a stream needs at least one level")
        object.__setattr__(self, "levels", dict(sorted(self.levels.items())))

    def __getstate__(self) -> dict:
        """Pickled without its block cache (data-loader workers, Hugging Face fingerprints)."""
        state = dict(self.__dict__)
        state["_cache"] = {}
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    @classmethod
    def fixed(cls, task: str, params: Params, seed: int, exclusion: Exclusion | None = None, block_size: int = BLOCK_SIZE) -> "RecordStream":
        """A one-level stream (level 0) of task at params."""
        return cls(task, {0: params}, seed, exclusion, block_size)

    @classmethod
    def of_task(cls, task: str, seed: int, exclusion: Exclusion | None = None, block_size: int = BLOCK_SIZE) -> "RecordStream":
        """A stream over the task's difficulty levels 1..10."""
        return cls(task, get_task(task).levels(), seed, exclusion, block_size)

    @property
    def single(self) -> int | None:
        """The level of a one-level stream, else None."""
        return next(iter(self.levels)) if len(self.levels) == 1 else None

    # -- blocks ---------------------------------------------------------------------------

    def block(self, level: int, index: int) -> _Block:
        """Block `index` of the level's run, with its keep mask (cached, one block per level)."""
        cached = self._cache.get(level)
        if cached is None or cached.index != index:
            if level not in self.levels:
                raise ValueError(f"level {level} is not in the stream's levels {list(self.levels)}")
            params = self.levels[level]
            batch = get_task(self.task).generate(block_rng(self.seed, self.task, params, index), self.block_size, params)
            keep = self.exclusion.keep(batch.inputs) if self.exclusion is not None else np.ones(len(batch), dtype=bool)
            cached = _Block(index, list(batch.records(self.task)), keep)
            self._cache[level] = cached
        return cached

    def record(self, position: int, level: int | None = None) -> Record | None:
        """The record at position (at `level`, default the single level); None when it is excluded."""
        level = self._level(level)
        index, offset = divmod(position, self.block_size)
        block = self.block(level, index)
        return block.records[offset] if block.keep[offset] else None

    def _level(self, level: int | None) -> int:
        if level is None:
            if self.single is None:
                raise ValueError("a stream of several levels needs a level or a chooser")
            return self.single
        return level

    # -- iteration ------------------------------------------------------------------------

    def chooser(self, choose: Callable[[int, float], int], records_per_step: int = 1) -> Chooser:
        """position -> level: ``choose(p // records_per_step, u(p))`` with u from the ``curriculum``
        seeding stream (e.g. ``curriculum.choose``)."""
        if records_per_step < 1:
            raise ValueError(f"records_per_step must be at least 1, got {records_per_step}")
        uniforms = Uniforms(self.seed, self.block_size)
        return lambda position: choose(position // records_per_step, uniforms(position))

    def uniform_curriculum(self) -> str:
        """The spec of the curriculum a stream of several levels follows when given none: every level alike."""
        return "mixture:" + ",".join(f"{level}=1" for level in self.levels)

    def level_chooser(self, chooser: Chooser | None = None, curriculum: Curriculum | str | None = None,
                      records_per_step: int = 1) -> Chooser | None:
        """The chooser iterate uses: the one given, else the curriculum's (a spec string is parsed
        over the stream's levels), else, for several levels, the uniform curriculum's; None for a
        one-level stream given neither (its level throughout)."""
        if chooser is not None:
            if curriculum is not None:
                raise ValueError("give a chooser or a curriculum, not both")
            return chooser
        if curriculum is None:
            if self.single is not None:
                return None
            curriculum = self.uniform_curriculum()
        schedule = parse_curriculum(curriculum, sorted(self.levels)) if isinstance(curriculum, str) else curriculum
        missing = sorted(set(schedule.levels()) - set(self.levels))
        if missing:
            raise ValueError(f"the curriculum chooses level {missing[0]}, which the stream's levels {list(self.levels)} lack")
        return self.chooser(schedule.choose, records_per_step)

    def iterate(self, start: int = 0, shard: Shard = Shard(), chooser: Chooser | None = None, *,
                curriculum: Curriculum | str | None = None, records_per_step: int = 1) -> Iterator[tuple[int, int, Record]]:
        """(position, level, record) of the shard's kept positions >= start, ascending, forever;
        the level of each position as :meth:`level_chooser` says (see the module doc)."""
        if start < 0:
            raise ValueError(f"a stream position must be non-negative, got {start}")
        chooser = self.level_chooser(chooser, curriculum, records_per_step)
        return self._iterate(start, shard, chooser)

    def _iterate(self, start: int, shard: Shard, chooser: Chooser | None) -> Iterator[tuple[int, int, Record]]:
        fixed = None if chooser is not None else self._level(None)
        skipped = 0
        for index in shard.blocks(start // self.block_size):
            first = max(start - index * self.block_size, 0)
            for offset in range(first, self.block_size):
                level = fixed if fixed is not None else chooser(index * self.block_size + offset)  # type: ignore[misc]
                block = self.block(level, index)
                if block.keep[offset]:
                    skipped = 0
                    yield index * self.block_size + offset, level, block.records[offset]
                else:
                    skipped += 1
                    if skipped == self.block_size:
                        raise ValueError(self._all_excluded(skipped))

    def _all_excluded(self, count: int) -> str:
        source = self.exclusion.source if self.exclusion is not None else "nothing"
        return (f"{self.task}: {count} positions in a row are excluded (by {source}); "
                "the stream's inputs are (almost) all in the paired validation and test sides")

    def records(self, start: int = 0, shard: Shard = Shard(), chooser: Chooser | None = None, *,
                curriculum: Curriculum | str | None = None, records_per_step: int = 1) -> Iterator[Record]:
        """The records of :meth:`iterate` alone (a one-level stream takes a fast path, block by block)."""
        if start < 0:
            raise ValueError(f"a stream position must be non-negative, got {start}")
        chooser = self.level_chooser(chooser, curriculum, records_per_step)
        if chooser is not None:
            return (record for _, _, record in self._iterate(start, shard, chooser))
        return self._plain(start, shard)

    def _plain(self, start: int, shard: Shard) -> Iterator[Record]:
        task, params = get_task(self.task), self.levels[self._level(None)]
        skipped = 0  # excluded positions in a row, as iterate counts them
        for index in shard.blocks(start // self.block_size):
            batch = task.generate(block_rng(self.seed, self.task, params, index), self.block_size, params)
            first = max(start - index * self.block_size, 0)
            records = batch.records(self.task)
            for _ in range(first):
                next(records)
            if self.exclusion is None:
                yield from records
                continue
            keep = self.exclusion.keep(batch.inputs)[first:]
            kept = np.flatnonzero(keep)
            if len(kept) == 0:
                skipped += len(keep)
                if skipped >= self.block_size:
                    raise ValueError(self._all_excluded(self.block_size))
                continue
            if skipped + int(kept[0]) >= self.block_size:
                raise ValueError(self._all_excluded(self.block_size))
            skipped = len(keep) - 1 - int(kept[-1])
            yield from itertools.compress(records, keep.tolist())


def size_levels(task: str, ranges: Sequence[tuple[int, int]]) -> dict[int, Params]:
    """A level table over the task's size knob: level i (from 1) is ``task.with_size(*ranges[i-1])``."""
    if not ranges:
        raise ParamError("give at least one size range")
    spec = get_task(task)
    return {i: spec.with_size(lo, hi) for i, (lo, hi) in enumerate(ranges, 1)}
