"""The ``facts`` split: atomic facts always in train, inferred queries split by direction or bridge.

A pool of facts-world records (gengap.generators.tasks.facts: one world, any mix of the fact
tasks) is read through the records' ``structure``: a ``lookup`` or ``attribute`` root is an
atomic fact; ``reverse``, ``compose`` and ``compare`` roots are inferred queries. Every
atomic record is pinned to train (never moved to validation, never tested). Then:

- ``by: direction`` (the reversal curse, Berglund et al. 2023): a random share
  ``holdout_fraction`` of the facts that have a reversed query in the pool is held out.
  test = the reversed queries of held-out facts (their forward fact is in train, the
  reversed direction never); the train side = the reversed queries of the other facts, from
  which validation is carved. *ID* here means a reversed query of a fact from the population
  whose reversals train shows: validation's own reversal is not in train either (only other
  facts' are), so validation measures whether reversal was learned as a rule from the
  examples train gives, and test whether a fact learned in one direction only is known in
  the other. A model that only memorizes is near chance on both; the reversal curse is
  forward accuracy on the trained facts (train) against reversed accuracy on test.
- ``by: bridge`` (composition, Wang et al. 2024): a random share ``holdout_fraction`` of the
  entities that are bridges (the entities between the hops of a ``compose`` query) in the
  pool is held out. test = the compositions with a held-out bridge; the train side = the
  compositions that mention no held-out entity at all (as head, bridge or tail), so a
  held-out bridge's facts occur in train only as atoms, never inside a training inference;
  compositions that mention a held-out entity only as head or tail are unused. One query per
  remaining bridge is pinned to train, so every validation (ID) query's bridges occur in a
  training inference: *ID* means the query's atomic facts have been seen composed, *OOD*
  that they have been seen only as atoms.

Inferred queries of the other kind (a comparison, or a reversal in a bridge split) are
unused. The report adds ``facts_split``, the atomic / inferred counts per part
(``facts_counts``; validation's inferred count is the carved validation size, atomic records
are all in train), the number held out and the first held-out facts or bridges.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from gengap.generators.batch import Record
from gengap.generators.params import knob
from gengap.generators.worlds import WORLD_KEYS
from gengap.splits.base import Partition, SplitError, SplitOptions, Strategy

ATOMIC = ("lookup", "attribute")
INFERRED = ("reverse", "compose", "compare")
LISTED = 50


@dataclass(frozen=True)
class FactsOptions(SplitOptions):
    by: str = knob("", doc="direction (reversal: held-out facts' reversed queries in test) or bridge (two-hop: queries through held-out bridges in test); required")
    holdout_fraction: float = knob(0.25, lo=0.0, hi=1.0, doc="share of the facts (direction) or bridge entities (bridge) held out")

    def check_consistency(self) -> None:
        super().check_consistency()
        self.require(self.by in ("", "direction", "bridge"), f"option by={self.by!r} is not direction or bridge")


def query_kind(record: Mapping[str, Any]) -> str:
    """The root rule of a facts record's structure (lookup, attribute, reverse, compose, compare)."""
    tree = record.get("structure")
    if not isinstance(tree, list) or not tree or tree[0] not in ATOMIC + INFERRED:
        raise SplitError(f"record {record.get('id')} is not a facts-world record (no lookup/reverse/compose/compare structure)")
    return str(tree[0])


def reversed_fact(record: Mapping[str, Any]) -> str:
    """The atomic fact a reversed query asks about, as written forward (``e1 r3 e2``)."""
    return str(record["structure"][1])


def entities_of(record: Mapping[str, Any]) -> tuple[str, list[str], str]:
    """(head, bridges, tail) entities of a composition."""
    facts = [str(child[1]).split() for child in record["structure"][1:]]
    return facts[0][0], [f[0] for f in facts[1:]], facts[-1][2]


def _world(record: Mapping[str, Any]) -> tuple[Any, ...]:
    meta = record.get("meta") or {}
    return tuple(meta.get(key) for key in WORLD_KEYS)


class Facts(Strategy):
    name = "facts"
    description = "facts world: atomic facts pinned to train; reversed queries of held-out facts (by=direction) or compositions through held-out bridges (by=bridge) in test"
    options_type = FactsOptions

    def partition(self, records: Sequence[Record], options: FactsOptions, rng: np.random.Generator) -> Partition:
        if not options.by:
            raise SplitError("option by is required (direction or bridge)")
        worlds = {_world(r) for r in records}
        if len(worlds) > 1:
            raise SplitError(f"the pool mixes {len(worlds)} facts worlds (records' meta differ); a facts split needs one world")
        kinds = [query_kind(r) for r in records]
        atomic = [r for r, k in zip(records, kinds) if k in ATOMIC]
        wanted = "reverse" if options.by == "direction" else "compose"
        inferred = [r for r, k in zip(records, kinds) if k == wanted]
        other = len(records) - len(atomic) - len(inferred)
        if not inferred:
            raise SplitError(f"facts split by {options.by} needs {wanted} queries in the pool (fact_{'reverse' if wanted == 'reverse' else 'two_hop'} records)")
        if options.by == "direction":
            train, test, pinned, unused, notes = _by_direction(inferred, options.holdout_fraction, rng, atomic)
        else:
            train, test, pinned, unused, notes = _by_bridge(inferred, options.holdout_fraction, rng)
        notes = {
            "facts_split": options.by,
            "facts_counts": {
                "atomic": {"train": len(atomic), "validation": 0, "test": 0},
                "inferred": {"train_side": len(train) + len(pinned), "test": len(test), "unused": unused + other},
            },
            **notes,
        }
        return Partition(train, test, pinned=atomic + pinned, unused=unused + other, notes=notes)


def _held(candidates: list[str], fraction: float, rng: np.random.Generator) -> set[str]:
    """A random share of the candidates (sorted first, so the choice is a function of the pool)."""
    ordered = sorted(candidates, key=_natural)
    count = int(round(fraction * len(ordered)))
    return {ordered[i] for i in rng.permutation(len(ordered))[:count]}


def _natural(text: str) -> tuple[Any, ...]:
    return tuple(int(part[1:]) if part[1:].isdigit() else part for part in text.replace("^-1", "").split())


def _by_direction(inferred: list[Record], fraction: float, rng: np.random.Generator, atomic: list[Record]) -> tuple[list[Record], list[Record], list[Record], int, dict[str, Any]]:
    facts = list(dict.fromkeys(reversed_fact(r) for r in inferred))
    held = _held(facts, fraction, rng)
    test = [r for r in inferred if reversed_fact(r) in held]
    train = [r for r in inferred if reversed_fact(r) not in held]
    forward = {str(r["structure"][1]) for r in atomic if r["structure"][0] == "lookup"}
    missing = sorted(held - forward, key=_natural)
    notes: dict[str, Any] = {
        "held_out_facts": len(held),
        "held_out_listed": sorted(held, key=_natural)[:LISTED],
    }
    if missing:
        notes["warnings"] = [f"{len(missing)} held-out facts have no forward (atomic) record in the pool, e.g. {missing[0]!r}: generate the pool with pool: all or a larger atomic_share"]
    return train, test, [], 0, notes


def _by_bridge(inferred: list[Record], fraction: float, rng: np.random.Generator) -> tuple[list[Record], list[Record], list[Record], int, dict[str, Any]]:
    parts = [entities_of(r) for r in inferred]
    bridges = list(dict.fromkeys(b for _, middle, _ in parts for b in middle))
    held = _held(bridges, fraction, rng)
    train_side, test, unused = [], [], 0
    for record, (head, middle, tail) in zip(inferred, parts):
        if held.intersection(middle):
            test.append(record)
        elif head in held or tail in held:
            unused += 1
        else:
            train_side.append(record)
    anchored: set[str] = set()
    pinned, train = [], []
    for record in train_side:  # one query per bridge stays in train: validation's bridges are always seen composed
        middle = entities_of(record)[1]
        if not anchored.issuperset(middle):
            anchored.update(middle)
            pinned.append(record)
        else:
            train.append(record)
    seen = Counter(b for r in train_side for b in entities_of(r)[1])
    notes = {
        "held_out_bridges": len(held),
        "held_out_listed": sorted(held, key=_natural)[:LISTED],
        "train_bridges": len(seen),
    }
    return train, test, pinned, unused, notes
