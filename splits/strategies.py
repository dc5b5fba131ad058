"""Pool-based split strategies: iid, length, difficulty, holdout, category, facts (gengap.splits.facts),
task_holdout (gengap.splits.tasks).

Each strategy partitions a pool of records; gengap.splits.base adds validation and the report.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from gengap.generators import get_task
from gengap.generators.batch import Batch, Record
from gengap.generators.lexicons import record_lexicon, relabel
from gengap.generators.params import knob
from gengap.splits.atoms import record_atoms, record_compounds
from gengap.splits.base import Partition, SplitError, SplitOptions, Strategy, input_groups
from gengap.splits.facts import Facts
from gengap.splits.ranges import Ranges, check_disjoint, contains, is_union, parse_ranges, parse_ranges_text, regimes
from gengap.splits.tasks import TaskHoldout

INFINITE = 10**9


# -- iid -------------------------------------------------------------------------------


@dataclass(frozen=True)
class IidOptions(SplitOptions):
    test_fraction: float = knob(0.2, lo=0.0, hi=0.99, doc="share of the pool (by input group) sent to test")
    train_fraction: float = knob(
        0.0, lo=0.0, hi=0.99, added=True,
        doc="share of the pool that ends in train after validation is carved (as grokking studies' training fraction); "
            "0: test_fraction decides; otherwise test gets the rest of what train and validation leave",
    )
    distinct: bool = knob(
        False, added=True,
        doc="keep one record per input (its first in the pool) before splitting, as the MCD search does: "
            "every part then holds distinct inputs (CFQ's random split is of distinct questions)",
    )

    def check_consistency(self) -> None:
        super().check_consistency()
        if self.train_fraction:
            self.require(self.train_fraction / (1 - self.validation_fraction) <= 1,
                         f"train_fraction {self.train_fraction} with validation_fraction {self.validation_fraction} "
                         f"needs more than the whole pool on the train side")

    def test_share(self) -> float:
        """The share of the pool sent to test."""
        if not self.train_fraction:
            return self.test_fraction
        return 1 - self.train_fraction / (1 - self.validation_fraction)


class Iid(Strategy):
    name = "iid"
    description = "random partition of the pool (whole input groups) with given fractions"
    options_type = IidOptions

    def partition(self, records: Sequence[Record], options: IidOptions, rng: np.random.Generator) -> Partition:
        if options.distinct:
            records = [records[indices[0]] for indices in input_groups(records).values()]
        groups = input_groups(records)
        keys = list(groups)
        order = rng.permutation(len(keys))
        wanted = int(round(options.test_share() * len(records)))
        test_index: set[int] = set()
        for position in order:
            if len(test_index) >= wanted:
                break
            test_index.update(groups[keys[position]])
        return Partition(
            [r for i, r in enumerate(records) if i not in test_index],
            [r for i, r in enumerate(records) if i in test_index],
        )

    def test_rule(self, options: IidOptions) -> Callable[[Record], bool]:
        """Every record: the test side is a uniform share of the pool, so it has the pool's distribution."""
        return lambda record: True


# -- thresholds on a measured feature --------------------------------------------------


def _by_ranges(records: Sequence[Record], feature: str, train: Ranges, test: Ranges) -> Partition:
    """Train side: feature in a train range; test: in a test range; rest unused. The report
    notes the ranges ([lo, hi] a side when each has one; lists of ranges and the regime of each
    test range (gengap.splits.ranges) when a side is a union; unbounded ends as None)."""
    train_side, test_side, unused = [], [], 0
    for record in records:
        value = _feature(record, feature)
        if contains(train, value):
            train_side.append(record)
        elif contains(test, value):
            test_side.append(record)
        else:
            unused += 1
    bound = lambda r: [None if abs(v) >= INFINITE else v for v in r]  # noqa: E731
    if is_union(train, test):
        notes = {"feature": feature, "train_range": [bound(r) for r in train], "test_range": [bound(r) for r in test],
                 "regimes": [{**row, "range": bound(row["range"])} for row in regimes(train, test)]}
    else:
        notes = {"feature": feature, "train_range": bound(train[0]), "test_range": bound(test[0])}
    return Partition(train_side, test_side, unused=unused, notes=notes)


def _feature(record: Record, feature: str) -> int:
    """The record's value of a difficulty feature; SplitError when it has none."""
    value = record["difficulty"].get(feature)
    if value is None:
        raise SplitError(f"record {record['id']} has no difficulty feature {feature!r}")
    return value


def _in_ranges(feature: str, ranges: Ranges) -> Callable[[Record], bool]:
    """The rule "the record's feature lies in one of ranges"."""
    return lambda record: contains(ranges, _feature(record, feature))


def _unset(options: SplitOptions, name: str) -> bool:
    return getattr(options, name) == next(f.default for f in dataclasses.fields(options) if f.name == name)


def _range_sides(options: "LengthOptions | DifficultyOptions") -> tuple[Ranges, Ranges]:
    """The train and test ranges of a split given (on some side) as a union of ranges; a side
    without ``*_ranges`` is its min/max pair (test_min unset: just above the highest train value)."""
    for side in ("train", "test"):
        if getattr(options, f"{side}_ranges") and not (_unset(options, f"{side}_min") and _unset(options, f"{side}_max")):
            raise SplitError(f"give {side}_ranges or {side}_min/{side}_max, not both")
    if options.train_ranges:
        train = parse_ranges_text(options.train_ranges, "train_ranges")
    else:
        train = parse_ranges([options.train_min, options.train_max], "train_min..train_max")
    if options.test_ranges:
        test = parse_ranges_text(options.test_ranges, "test_ranges")
    else:
        test = parse_ranges([train[-1][1] + 1 if _unset(options, "test_min") else options.test_min, options.test_max], "test_min..test_max")
    check_disjoint(train, test)
    return train, test


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
class RangeUnionOptions(SplitOptions):
    """Sides given as unions of ranges (gengap.splits.ranges), instead of one min/max pair each."""

    train_ranges: str = knob("", added=True, doc="train side as a union of ranges lo..hi,lo..hi (instead of train_min/train_max)")
    test_ranges: str = knob("", added=True, doc="test side as a union of ranges lo..hi,lo..hi (default: above the highest train range)")


@dataclass(frozen=True)
class LengthOptions(RangeUnionOptions):
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
        return _by_ranges(records, options.by, *self.sides(options))

    def test_rule(self, options: LengthOptions) -> Callable[[Record], bool]:
        return _in_ranges(options.by, self.sides(options)[1])

    @staticmethod
    def sides(options: LengthOptions) -> tuple[Ranges, Ranges]:
        """The train and test ranges of the options; SplitError when they are incomplete or overlap."""
        if options.train_max < 0 and not options.train_ranges:
            raise SplitError("length split needs option train_max (or train_ranges)")
        if options.train_ranges or options.test_ranges:
            return _range_sides(options)
        test_min = options.test_min if options.test_min >= 0 else options.train_max + 1
        _check_ranges(options.train_min, options.train_max, test_min, options.test_max)
        return ((options.train_min, options.train_max),), ((test_min, options.test_max),)


@dataclass(frozen=True)
class DifficultyOptions(RangeUnionOptions):
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
        return _by_ranges(records, options.feature, *self.sides(options))

    def test_rule(self, options: DifficultyOptions) -> Callable[[Record], bool]:
        return _in_ranges(options.feature, self.sides(options)[1])

    @staticmethod
    def sides(options: DifficultyOptions) -> tuple[Ranges, Ranges]:
        """The train and test ranges of the options; SplitError when they are incomplete or overlap."""
        if options.level_max:
            raise SplitError(
                "level_max splits generate each side from its levels: use a suite entry with level_max "
                "(gengap release) or gengap.splits.sample_level_split; a pool is split by a feature (train_max)"
            )
        if options.train_max == -INFINITE and not options.train_ranges:
            raise SplitError("difficulty split needs option train_max or train_ranges (or level_max with a generated task)")
        if options.train_ranges or options.test_ranges:
            return _range_sides(options)
        test_min = options.test_min if options.test_min != -INFINITE else options.train_max + 1
        _check_ranges(options.train_min, options.train_max, test_min, options.test_max)
        return ((options.train_min, options.train_max),), ((test_min, options.test_max),)


# -- holdout ---------------------------------------------------------------------------


@dataclass(frozen=True)
class HoldoutOptions(SplitOptions):
    atom: str = knob(
        "", doc="hold out every example using this atom; atoms joined by + must co-occur; alternatives joined by | are held out together (union)"
    )
    template: str = knob(
        "", doc="hold out every example containing this compound (sub-derivation pattern, or local structure with compounds=local); "
                "several joined by | (union)"
    )
    primitive: str = knob("", doc="input of the bare primitive example kept in train (default: the atom); several joined by |")
    primitive_repeats: int = knob(0, lo=0, hi=1_000_000, doc="copies of each bare primitive example put in train")


def _alternatives(text: str) -> list[str]:
    """The |-separated alternatives of an option value, empty ones dropped."""
    return [part for part in text.split("|") if part]


class Holdout(Strategy):
    """Hold out every record matching any alternative (union): an atom alternative ``a+b``
    matches a record using all of its atoms, a template alternative a record containing that
    compound. ``primitive_repeats`` pins copies of each bare primitive in train."""

    name = "holdout"
    description = "hold out atoms, combinations of atoms or templates (several at once with |); optionally keep the bare primitives in train"
    options_type = HoldoutOptions

    def test_rule(self, options: HoldoutOptions) -> Callable[[Record], bool]:
        """Whether a record matches an alternative of the held-out atoms or templates."""
        if bool(options.atom) == bool(options.template):
            raise SplitError("holdout needs exactly one of the options atom and template")
        if options.atom:
            groups = [[a for a in alternative.split("+") if a] for alternative in _alternatives(options.atom)]

            def held(record: Record) -> bool:
                atoms = record_atoms(record)
                return any(all(atoms.get(a, 0) > 0 for a in group) for group in groups)

            return held
        templates = _alternatives(options.template)

        def held_template(record: Record) -> bool:
            compounds = record_compounds(record, options.abstract_lexical, options.compound_definition())
            return any(compounds.get(t, 0) > 0 for t in templates)

        return held_template

    def partition(self, records: Sequence[Record], options: HoldoutOptions, rng: np.random.Generator) -> Partition:
        held = self.test_rule(options)
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
            for bare_input in _alternatives(primitive):
                bare = [r for r in test if r["input"] == bare_input]
                if not bare:
                    raise SplitError(f"no held-out example has input {bare_input!r}")
                test = [r for r in test if r["input"] != bare_input]
                pinned += [bare[0]] * options.primitive_repeats
        return Partition(train, test, pinned=pinned, notes={"held_out": options.atom or options.template})


# -- generalization categories a task defines (COGS) -----------------------------------


@dataclass(frozen=True)
class CategoryOptions(SplitOptions):
    category: str = knob("", doc="generalization category of the task (COGS: one of its 21), or all (required)")
    exposure_repeats: int = knob(1, lo=0, hi=1_000_000, doc="copies of each exposure example put in train (COGS: 1, its train_100: 100)")
    per_category: int = knob(0, lo=0, doc="most test records per category, the first in pool order (0 = all)")


class Category(Strategy):
    """The generalization categories a task defines (``task.category(record)``: a name, ``""``
    for the training distribution, None for neither), as COGS builds them: train = the pool's
    in-distribution records plus the category's exposure examples (``task.exposure``, pinned:
    never moved to validation); test = the records of that category only (``all``: of any);
    every other record is unused."""

    name = "category"
    description = "COGS-style generalization category: test = that category's construction, train = in distribution + exposure examples"
    options_type = CategoryOptions

    def partition(self, records: Sequence[Record], options: CategoryOptions, rng: np.random.Generator) -> Partition:
        tasks = {r["task"] for r in records}
        task = get_task(records[0]["task"]) if len(tasks) == 1 else None
        if task is None or not task.categories():
            raise SplitError(f"category splits need a pool of one task that defines categories (cogs), got {', '.join(sorted(tasks))}")
        names = task.categories()
        if options.category != "all" and options.category not in names:
            raise SplitError(f"unknown category {options.category!r} of task {task.name}; known: all, {', '.join(names)}")
        wanted = names if options.category == "all" else (options.category,)
        train, test, unused = [], [], 0
        counts: Counter[str] = Counter()
        for record in records:
            found = task.category(record)
            if found == "":
                train.append(record)
            elif found in wanted and (not options.per_category or counts[found] < options.per_category):
                counts[found] += 1
                test.append(record)
            else:
                unused += 1
        lexicon = _pool_lexicon(task, records)
        exposed = _records_of(task, list(dict.fromkeys(text for name in wanted for text in task.exposure(name))), lexicon)
        exposure = [r["input"] for r in exposed]
        pinned = [r for r in exposed for _ in range(options.exposure_repeats)]
        short = [name for name in wanted if counts[name] < (options.per_category or 1)]
        notes = {
            "category": options.category,
            "exposure": exposure,
            "test_categories": {name: counts[name] for name in wanted},
            "warnings": [f"category {name}: {counts[name]} test records in the pool" for name in short],
        }
        return Partition(train, test, pinned=pinned, unused=unused, notes=notes)

    def test_rule(self, options: CategoryOptions) -> Callable[[Record], bool] | None:
        """Whether a record is of the held-out category (of any, for ``all``); None with
        ``per_category``, whose cap keeps the first records of each category in pool order."""
        if options.per_category:
            return None

        def held(record: Record) -> bool:
            task = get_task(record["task"])
            names = task.categories()
            if not names:
                raise SplitError(f"category splits need a task that defines categories (cogs), got {task.name}")
            if options.category != "all" and options.category not in names:
                raise SplitError(f"unknown category {options.category!r} of task {task.name}; known: all, {', '.join(names)}")
            return task.category(record) in (names if options.category == "all" else (options.category,))

        return held


def _pool_lexicon(task: Any, records: Sequence[Record]) -> int:
    """The lexicon the pool's records are written in (gengap.generators.lexicons; 0 for a task
    without one); SplitError when they mix lexicons (exposure examples need one)."""
    if getattr(task, "lexicon_spec", None) is None:
        return 0
    found = {record_lexicon(r) for r in records}
    if len(found) > 1:
        raise SplitError(f"a category split needs records of one lexicon (its exposure examples are written in it), got lexicons "
                         f"{', '.join(str(k) for k in sorted(found))}")
    return found.pop() if found else 0


def _records_of(task: Any, inputs: Sequence[str], lexicon: int = 0) -> list[Record]:
    """Checked records of the given lexicon-0 inputs, built by the task's own checker and written
    in ``lexicon`` (exposure examples: the words of the pool's records)."""
    if not inputs:
        return []
    examples = [{"input": text} for text in inputs]
    features = [task.measure(e) for e in examples]
    batch = Batch.from_lists(
        list(inputs),
        [task.solve(e) for e in examples],
        {key: [f[key] for f in features] for key in features[0]},
        structure=[task.derive(e) for e in examples],
    )
    return list((relabel(batch, task.lexicon_spec, lexicon) if lexicon else batch).records(task.name))


STRATEGIES: dict[str, Strategy] = {s.name: s for s in (Iid(), Length(), Difficulty(), Holdout(), Category(), Facts(), TaskHoldout())}
