"""Pool-based split strategies: iid, length, difficulty, holdout.

Each strategy partitions a pool of records; splits.base adds validation and the report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from generators.batch import Record
from generators.params import knob
from splits.atoms import record_atoms, record_compounds
from splits.base import Partition, SplitError, SplitOptions, Strategy, input_groups

INFINITE = 10**9


# -- iid -------------------------------------------------------------------------------


@dataclass(frozen=True)
class IidOptions(SplitOptions):
    test_fraction: float = knob(0.2, lo=0.0, hi=0.99, doc="share of the pool (by input group) sent to test")


class Iid(Strategy):
    name = "iid"
    description = "random partition of the pool (whole input groups) with given fractions"
    options_type = IidOptions

    def partition(self, records: Sequence[Record], options: IidOptions, rng: np.random.Generator) -> Partition:
        groups = input_groups(records)
        keys = list(groups)
        order = rng.permutation(len(keys))
        wanted = int(round(options.test_fraction * len(records)))
        test_index: set[int] = set()
        for position in order:
            if len(test_index) >= wanted:
                break
            test_index.update(groups[keys[position]])
        return Partition(
            [r for i, r in enumerate(records) if i not in test_index],
            [r for i, r in enumerate(records) if i in test_index],
        )


# -- thresholds on a measured feature --------------------------------------------------


def _by_threshold(
    records: Sequence[Record], feature: str, train_min: int, train_max: int, test_min: int, test_max: int
) -> Partition:
    """Train side: feature in [train_min, train_max]; test: in [test_min, test_max]; rest unused."""
    train, test, unused = [], [], 0
    for record in records:
        value = record["difficulty"].get(feature)
        if value is None:
            raise SplitError(f"record {record['id']} has no difficulty feature {feature!r}")
        if train_min <= value <= train_max:
            train.append(record)
        elif test_min <= value <= test_max:
            test.append(record)
        else:
            unused += 1
    bound = lambda v: None if abs(v) >= INFINITE else v  # noqa: E731
    notes = {"feature": feature, "train_range": [bound(train_min), bound(train_max)], "test_range": [bound(test_min), bound(test_max)]}
    return Partition(train, test, unused=unused, notes=notes)


def _check_ranges(train_min: int, train_max: int, test_min: int, test_max: int) -> None:
    if train_max < train_min:
        raise SplitError(f"train_max={train_max} is below train_min={train_min}")
    if test_max < test_min:
        raise SplitError(f"test_max={test_max} is below test_min={test_min}")
    if not (train_max < test_min or test_max < train_min):
        raise SplitError(
            f"train range {train_min}..{train_max} and test range {test_min}..{test_max} overlap"
        )


@dataclass(frozen=True)
class LengthOptions(SplitOptions):
    by: str = knob("input_length", choices=("input_length", "output_length"), doc="which length")
    train_min: int = knob(0, lo=0, doc="shortest length on the train side")
    train_max: int = knob(-1, lo=-1, doc="longest length on the train side (required)")
    test_min: int = knob(-1, lo=-1, doc="shortest test length (default train_max + 1)")
    test_max: int = knob(INFINITE, lo=0, doc="longest test length (default unbounded)")


class Length(Strategy):
    name = "length"
    description = "train on short examples, test on long ones (by input or output length)"
    options_type = LengthOptions

    def partition(self, records: Sequence[Record], options: LengthOptions, rng: np.random.Generator) -> Partition:
        if options.train_max < 0:
            raise SplitError("length split needs option train_max")
        test_min = options.test_min if options.test_min >= 0 else options.train_max + 1
        _check_ranges(options.train_min, options.train_max, test_min, options.test_max)
        return _by_threshold(records, options.by, options.train_min, options.train_max, test_min, options.test_max)


@dataclass(frozen=True)
class DifficultyOptions(SplitOptions):
    feature: str = knob("input_length", doc="difficulty feature of the records to split on")
    train_min: int = knob(-INFINITE, doc="smallest value on the train side")
    train_max: int = knob(-INFINITE, doc="largest value on the train side (required)")
    test_min: int = knob(-INFINITE, doc="smallest test value (default train_max + 1)")
    test_max: int = knob(INFINITE, doc="largest test value (default unbounded)")
    level_max: int = knob(0, lo=0, hi=9, doc="train on levels 1..level_max: generated splits only (suites, sample_level_split)")


class Difficulty(Strategy):
    name = "difficulty"
    description = "easy-to-hard: train on low values of a difficulty feature, test on high ones"
    options_type = DifficultyOptions

    def partition(self, records: Sequence[Record], options: DifficultyOptions, rng: np.random.Generator) -> Partition:
        if options.level_max:
            raise SplitError(
                "level_max splits generate each side from its levels: use a suite entry with level_max "
                "(gengap release) or splits.sample_level_split; a pool is split by a feature (train_max)"
            )
        if options.train_max == -INFINITE:
            raise SplitError("difficulty split needs option train_max (or level_max with a generated task)")
        test_min = options.test_min if options.test_min != -INFINITE else options.train_max + 1
        _check_ranges(options.train_min, options.train_max, test_min, options.test_max)
        return _by_threshold(
            records, options.feature, options.train_min, options.train_max, test_min, options.test_max
        )


# -- holdout ---------------------------------------------------------------------------


@dataclass(frozen=True)
class HoldoutOptions(SplitOptions):
    atom: str = knob("", doc="hold out every example using this atom; several atoms joined by + must co-occur")
    template: str = knob("", doc="hold out every example containing this compound (sub-derivation pattern)")
    primitive: str = knob("", doc="input of the bare primitive example kept in train (default: the atom)")
    primitive_repeats: int = knob(0, lo=0, hi=1_000_000, doc="copies of the bare primitive example put in train")


class Holdout(Strategy):
    name = "holdout"
    description = "hold out an atom, a combination of atoms or a template; optionally keep the bare primitive in train"
    options_type = HoldoutOptions

    def partition(self, records: Sequence[Record], options: HoldoutOptions, rng: np.random.Generator) -> Partition:
        if bool(options.atom) == bool(options.template):
            raise SplitError("holdout needs exactly one of the options atom and template")
        if options.atom:
            wanted = [a for a in options.atom.split("+") if a]

            def held(record: Record) -> bool:
                atoms = record_atoms(record)
                return all(atoms.get(a, 0) > 0 for a in wanted)

        else:

            def held(record: Record) -> bool:
                return record_compounds(record, options.abstract_lexical).get(options.template, 0) > 0

        train, test = [], []
        for record in records:
            (test if held(record) else train).append(record)
        if not test:
            raise SplitError(f"no example contains {options.atom or options.template!r}")
        pinned: list[Record] = []
        primitive = options.primitive or (options.atom if options.atom and "+" not in options.atom else "")
        if options.primitive_repeats:
            if not primitive:
                raise SplitError("primitive_repeats needs option primitive (the bare primitive's input)")
            bare = [r for r in test if r["input"] == primitive]
            if not bare:
                raise SplitError(f"no held-out example has input {primitive!r}")
            test = [r for r in test if r["input"] != primitive]
            pinned = [bare[0]] * options.primitive_repeats
        return Partition(train, test, pinned=pinned, notes={"held_out": options.atom or options.template})


STRATEGIES: dict[str, Strategy] = {s.name: s for s in (Iid(), Length(), Difficulty(), Holdout())}
