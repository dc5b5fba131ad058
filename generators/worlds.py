"""Seeded worlds that tasks query: one idea, two kinds (a facts world, a knowledge base).

A seeded world is a pure function of its knobs (sizes and ``world_seed``), drawn from the
seeding stream ``world`` (gengap.generators.seeding.world_rng) under a label of its kind and
sizes, so every record and every part of a split made with one world setting queries the same
world, and a checker rebuilds it bit for bit from the knobs a record carries in ``meta``. A
:class:`WorldKind` names the knobs (a frozen Params dataclass that validates them) and the
builder; ``kind.of(meta)`` is the world of a record (built once per process and setting).
A task's parameters subclass the kind's knobs class (a :class:`SeededWorldParams`), so
``params.world()`` and ``params.world_knobs()`` (what ``meta`` carries) come with them.

The facts world (this module; the tasks of gengap.generators.tasks.facts):

- entities ``e0 .. e{n-1}``; relations ``r0 ..``; attributes ``a0 ..``; values ``v0 ..``;
- every relation is a one-to-one map of the entities onto themselves (a random
  permutation), so ``t = r(h)`` has exactly one head: ``h = r^-1(t)`` (reversal queries
  have one answer) and compositions ``r2(r1(h))`` are defined for every entity;
- every attribute gives every entity a value ``0 .. n_values-1`` (uniform, independent).

An atomic fact is written ``"e17 r3 e42"`` (head, relation, tail) and an attribute fact
``"e17 a1 v5"``: these strings are the lexical leaves of the records' derivations
(gengap.generators.tasks.facts), so atoms are facts and a split can read a record's facts from
its ``structure``.

The knowledge base of films, people and companies (gengap.generators.kb_world; the
``cfq_like`` task) is the second kind.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, ClassVar, Mapping

import numpy as np

from gengap.generators.params import Params, knob
from gengap.generators.seeding import world_rng

WORLD_KEYS = ("n_entities", "n_relations", "n_attributes", "n_values", "world_seed")
MAX_ENTITIES = 100_000
WORLD_SEED_MAX = 2**31 - 1


@dataclass(frozen=True)
class WorldKind:
    """One kind of seeded world: the Params dataclass of its knobs (its fields are exactly the
    knobs, ``world_seed`` among them) and the builder, called with the knobs as keywords."""

    name: str
    knobs: type[Params]
    build: Callable[..., Any]

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(field.name for field in dataclasses.fields(self.knobs))

    def of(self, knobs: Mapping[str, Any]) -> Any:
        """The world of a record's meta (or knobs; other keys are ignored); ValueError naming the
        first missing knob (``meta.world_seed is missing``) or an invalid one."""
        missing = [key for key in self.keys if key not in knobs]
        if missing:
            raise ValueError(f"meta.{missing[0]} is missing")
        values = {key: knobs[key] for key in self.keys}
        try:
            self.knobs(**values)
        except ValueError as err:
            raise ValueError(f"world knobs: {err}") from None
        return _built(self, tuple(values[key] for key in self.keys))


@lru_cache(maxsize=16)
def _built(kind: WorldKind, values: tuple[Any, ...]) -> Any:
    return kind.build(**dict(zip(kind.keys, values)))


@dataclass(frozen=True)
class SeededWorldParams(Params):
    """Parameters that carry a world's knobs: a world kind's knobs class, or a task's parameters
    that subclass it (``world_kind`` is set on the knobs class)."""

    world_kind: ClassVar[WorldKind]

    def world_knobs(self) -> dict[str, Any]:
        """The world's knobs (what a record's meta carries)."""
        return {key: getattr(self, key) for key in self.world_kind.keys}

    def world(self) -> Any:
        return self.world_kind.of(self.world_knobs())


@dataclass(frozen=True)
class WorldParams(SeededWorldParams):
    """The knobs of a facts world: sizes and the seed that draws its facts."""

    n_entities: int = knob(100, lo=2, hi=MAX_ENTITIES, doc="number of entities e0..e{n-1}")
    n_relations: int = knob(4, lo=1, hi=64, doc="number of one-to-one relations r0..")
    n_attributes: int = knob(2, lo=1, hi=64, doc="number of integer attributes a0.. of every entity")
    n_values: int = knob(10, lo=2, hi=1000, doc="attribute values v0..v{n_values-1}")
    world_seed: int = knob(0, lo=0, hi=WORLD_SEED_MAX, doc="seed of the world's facts (same knobs and seed: same world)")


@dataclass(frozen=True)
class FactsWorld:
    """Relations as tail arrays (``tails[r][h]``), their inverses, and attribute values."""

    tails: np.ndarray  # (n_relations, n_entities)
    heads: np.ndarray  # (n_relations, n_entities): heads[r][tails[r][h]] == h
    values: np.ndarray  # (n_attributes, n_entities)

    @property
    def n_entities(self) -> int:
        return int(self.tails.shape[1])

    def tail(self, head: int, relation: int) -> int:
        return int(self.tails[relation, head])

    def head(self, tail: int, relation: int) -> int:
        return int(self.heads[relation, tail])

    def value(self, entity: int, attribute: int) -> int:
        return int(self.values[attribute, entity])


def build_world(n_entities: int, n_relations: int, n_attributes: int, n_values: int, world_seed: int) -> FactsWorld:
    """The world of these knobs, drawn from the ``world`` stream."""
    rng = world_rng(world_seed, f"{n_entities},{n_relations},{n_attributes},{n_values}")
    tails = np.stack([rng.permutation(n_entities) for _ in range(n_relations)]).astype(np.int64)
    heads = np.empty_like(tails)
    for r in range(n_relations):
        heads[r, tails[r]] = np.arange(n_entities)
    values = rng.integers(0, n_values, size=(n_attributes, n_entities), dtype=np.int64)
    for array in (tails, heads, values):
        array.setflags(write=False)
    return FactsWorld(tails, heads, values)


FACTS = WorldKind("facts", WorldParams, build_world)
WorldParams.world_kind = FACTS
assert FACTS.keys == WORLD_KEYS


def world_of(knobs: Mapping[str, Any]) -> FactsWorld:
    """The facts world of a record's meta (or knobs); ValueError when a knob is missing or invalid."""
    return FACTS.of(knobs)


# -- fact strings (the lexical leaves of derivations) ------------------------------------


def fact(head: int, r: int, tail: int) -> str:
    """An atomic relation fact ``"e{head} r{r} e{tail}"``."""
    return f"e{head} r{r} e{tail}"


def attribute_fact(e: int, a: int, v: int) -> str:
    """An attribute fact ``"e{e} a{a} v{v}"``."""
    return f"e{e} a{a} v{v}"


def index_of(token: str, prefix: str, size: int) -> int:
    """The index of a token ``{prefix}{i}`` with 0 <= i < size; ValueError otherwise."""
    digits = token[len(prefix):]
    if not token.startswith(prefix) or not digits.isdigit() or (len(digits) > 1 and digits[0] == "0"):
        raise ValueError(f"expected a {prefix}<number> token, got {token!r}")
    index = int(digits)
    if index >= size:
        raise ValueError(f"{token} is outside the world (size {size})")
    return index
