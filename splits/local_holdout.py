"""The local-structure holdout: test records hold local structures train never shows (Bogin et al. 2022).

Bogin et al. build their hardest splits (n-LS) by holding out local structures: a test record
holds at least one, a train record none. Here a record's local structures are those of 2..
``local_size`` nodes of its derivation (gengap.splits.local_structures, read as
gengap.splits.atoms reads compounds with ``compounds=local``: a record without a derivation
has its adjacent input-token pairs instead). The held-out structures are

- ``structures``: the ones given (joined by ``|``; each must occur in the pool and have at most
  ``local_size`` nodes), or else
- chosen from the pool: its distinct structures of ``held_out_size`` nodes (0: any size) that
  occur in ``min_share``..``max_share`` of its records (at least one record), in sorted order,
  shuffled with the split stream, are taken in turn while the records holding any taken one stay
  within ``test_share`` of the pool (a structure that would take the test side further is passed
  over), until ``held_out`` are taken; fewer is a warning, none an error.

Test side: every record holding a held-out structure; train side: every other record; validation
is carved from the train side as for every pool split, so it holds no held-out structure either.
Given the same pool, giving ``structures`` the list a split chose gives the same partition,
and a rule on one record (``Strategy.test_rule``), so a fresh test part (gengap.fresh) can be
drawn for a config that names its structures; a config that chose them has none.

The report adds ``held_out_structures`` (in the order taken), ``held_out_records`` (pool records
holding each), ``candidates`` (the structures in the share window) and
``held_out_per_test_record`` (how many held-out structures each test-side record holds: 1, 2,
3+). With the default ``compounds: local`` every test record's ``novelty.unseen_compounds``
counts its local structures that no train record holds (held out or not), and the report's
divergence and novelty summary are those of local structures.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from gengap.generators.batch import Record
from gengap.generators.params import knob
from gengap.splits.atoms import DEFINITIONS, LOCAL, CompoundDefinition, record_compounds
from gengap.splits.base import Partition, SplitError, SplitOptions, Strategy
from gengap.splits.local_structures import LOCAL_SIZE_MAX, structure_size

HISTOGRAM_TOP = 3  # held_out_per_test_record buckets 1, 2 and "3+"


@dataclass(frozen=True)
class LocalHoldoutOptions(SplitOptions):
    compounds: str = knob(
        LOCAL, choices=DEFINITIONS,
        doc="what the report's divergence and novelty count: local (local structures of 2..local_size nodes, the default here) or derivation",
    )
    structures: str = knob("", doc="local structures to hold out, joined by | (as a report's held_out_structures); empty: chosen from the pool")
    held_out: int = knob(1, lo=1, hi=100_000, doc="how many local structures to choose from the pool (structures empty)")
    held_out_size: int = knob(0, lo=0, hi=LOCAL_SIZE_MAX, doc="nodes of every chosen structure, 2..local_size (0: any size)")
    min_share: float = knob(0.005, lo=0.0, hi=1.0, doc="a chosen structure occurs in at least this share of the pool's records")
    max_share: float = knob(0.05, lo=0.0, hi=1.0, doc="a chosen structure occurs in at most this share of the pool's records")
    test_share: float = knob(0.3, lo=0.0, hi=1.0, doc="most of the pool the test side may take: a structure that would take more is passed over")

    def compounds_read_locally(self) -> bool:
        return True  # the holdout reads local structures of local_size nodes, whatever the report counts

    def check_consistency(self) -> None:
        super().check_consistency()
        self.require(self.min_share <= self.max_share, f"min_share={self.min_share} is above max_share={self.max_share}")
        self.require(self.held_out_size <= self.local_size,
                     f"held_out_size={self.held_out_size} is above local_size={self.local_size} (structures have at most local_size nodes)")
        self.require(self.held_out_size != 1, "held_out_size=1: a local structure has at least 2 nodes (0: any size)")

    def held_out_definition(self) -> CompoundDefinition:
        """The local structures the holdout reads (always local, of local_size nodes)."""
        return CompoundDefinition(LOCAL, self.local_size)


def _given(options: LocalHoldoutOptions) -> list[str]:
    """The structures option as a list (empty ones dropped); SplitError for one that is too large."""
    given = [part.strip() for part in options.structures.split("|") if part.strip()]
    for text in given:
        if structure_size(text) > options.local_size:
            raise SplitError(f"local structure {text!r} has {structure_size(text)} nodes, more than local_size={options.local_size}")
    return given


class LocalHoldout(Strategy):
    name = "local_holdout"
    description = "hold out local structures (Bogin et al.): test = records holding one, train = records holding none"
    options_type = LocalHoldoutOptions

    def test_rule(self, options: LocalHoldoutOptions) -> Callable[[Record], bool] | None:
        """Whether a record holds a given held-out structure; None when the split chooses them from the pool."""
        given = set(_given(options))
        if not given:
            return None
        definition = options.held_out_definition()
        return lambda record: not given.isdisjoint(record_compounds(record, options.abstract_lexical, definition))

    def partition(self, records: Sequence[Record], options: LocalHoldoutOptions, rng: np.random.Generator) -> Partition:
        definition = options.held_out_definition()
        held = [set(record_compounds(r, options.abstract_lexical, definition)) for r in records]
        holders: dict[str, list[int]] = {}
        for index, found in enumerate(held):
            for text in found:
                holders.setdefault(text, []).append(index)
        notes: dict = {"warnings": []}
        given = _given(options)
        if given:
            missing = [text for text in given if text not in holders]
            if missing:
                raise SplitError(f"no example holds the local structure {missing[0]!r}" + (f" (nor {len(missing) - 1} more)" if len(missing) > 1 else ""))
            chosen = given
        else:
            chosen, candidates = _choose(holders, len(records), options, rng)
            notes["candidates"] = candidates
            if len(chosen) < options.held_out:
                notes["warnings"].append(f"local_holdout: {len(chosen)} of the {options.held_out} structures asked for could be held out "
                                         f"({candidates} structures occur in {options.min_share:g}-{options.max_share:g} of the pool; "
                                         f"the test side may take {options.test_share:g} of it)")
        test_index = sorted({i for text in chosen for i in holders[text]})
        in_test = set(test_index)
        per_record = Counter(_bucket(sum(1 for text in chosen if text in held[i])) for i in test_index)
        notes.update({
            "held_out_structures": chosen,
            "held_out_records": {text: len(holders[text]) for text in chosen},
            "held_out_per_test_record": {label: per_record.get(label, 0) for label in ("1", "2", f"{HISTOGRAM_TOP}+")},
        })
        if not notes["warnings"]:
            del notes["warnings"]
        train = [r for i, r in enumerate(records) if i not in in_test]
        return Partition(train, [records[i] for i in test_index], notes=notes)


def _choose(holders: dict[str, list[int]], pool: int, options: LocalHoldoutOptions, rng: np.random.Generator) -> tuple[list[str], int]:
    """(the structures taken, in order; how many were candidates): the module doc's rule."""
    low, high = max(1, options.min_share * pool), options.max_share * pool
    candidates = sorted(text for text, where in holders.items()
                        if low <= len(where) <= high and (not options.held_out_size or structure_size(text) == options.held_out_size))
    if not candidates:
        size = f" of {options.held_out_size} nodes" if options.held_out_size else ""
        raise SplitError(f"no local structure{size} occurs in {options.min_share:g}-{options.max_share:g} of the pool's {pool} records "
                         "(widen min_share/max_share, or change local_size or held_out_size)")
    room = options.test_share * pool
    taken: list[str] = []
    test: set[int] = set()
    for position in rng.permutation(len(candidates)).tolist():
        text = candidates[position]
        grown = test.union(holders[text])
        if len(grown) > room:
            continue
        taken.append(text)
        test = grown
        if len(taken) == options.held_out:
            break
    if not taken:
        raise SplitError(f"every local structure in the share window would put more than test_share={options.test_share:g} of the pool in test")
    return taken, len(candidates)


def _bucket(count: int) -> str:
    return str(count) if count < HISTOGRAM_TOP else f"{HISTOGRAM_TOP}+"
