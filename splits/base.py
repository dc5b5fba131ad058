"""The common frame of every split: options, partition, validation carving, report.

A strategy partitions a pool of records into a train side and a test side. Then, for
every strategy alike:

1. test records whose input also occurs on the train side (in a record of the same task:
   gengap.splits.tasks) are removed (counted in the
   report as ``removed_overlap``), so ``overlap`` is always 0;
2. validation is carved out of the train side (in-distribution): whole groups of records
   sharing an input, chosen at random among those that still fit, until
   ``validation_fraction`` of the train side (exactly, unless large groups prevent it)
   (records a strategy pins to train, such as SCAN's repeated primitive, stay in train);
3. validation and test records get their ``novelty`` relative to the train part
   (gengap.splits.novelty: unseen compounds and atoms), train records none;
4. the report states sizes, length and difficulty ranges per part, atom and compound
   divergence of train vs test, atoms unseen in train, overlap, duplicate inputs within
   each part (reported, not removed), the novelty summary of validation and test, and
   warnings (test examples removed for overlap; a sampled side asking for more examples
   than its parameters have distinct inputs, from the tasks' input_space_size). Its
   floats are rounded to gengap.splits.precision.FLOAT_DECIMALS places.

Parts keep the pool's order, so a split is a deterministic function of (pool, options, seed).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np

from gengap.generators.batch import Record
from gengap.generators.params import Params, knob
from gengap.generators.seeding import split_rng  # noqa: F401  (the split stream; gengap.splits.api uses it)
from gengap.splits.atoms import atoms_source, record_atoms, record_compounds, sum_counters
from gengap.splits.divergence import atom_divergence, compound_divergence
from gengap.splits.novelty import annotate, novelty_summary
from gengap.splits.precision import rounded

PARTS = ("train", "validation", "test")
UNSEEN_LISTED = 50


@dataclass(frozen=True)
class SplitOptions(Params):
    """Options every strategy takes."""

    validation_fraction: float = knob(
        0.1, lo=0.0, hi=0.9, doc="share of the train side carved out as in-distribution validation"
    )
    abstract_lexical: bool = knob(
        False, doc="compounds with lexical items written * (structure only) in the search and the report"
    )
    exposure: int = knob(
        0, lo=0, hi=1_000_000, added=True,
        doc="test-side examples moved into train, named in the report (gengap.splits.exposure); 0: none",
    )
    exposure_copies: bool = knob(False, added=True, doc="exposure puts k copies of one test-side example in train, not k distinct ones")


@dataclass
class Partition:
    """What a strategy decides: the train side, the test side, and records it set aside."""

    train: list[Record]
    test: list[Record]
    pinned: list[Record] = field(default_factory=list)  # train records never moved to validation
    unused: int = 0  # pool records in neither side (e.g. between length thresholds)
    notes: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SplitResult:
    train: list[Record]
    validation: list[Record]
    test: list[Record]
    report: dict[str, Any]

    def parts(self) -> dict[str, list[Record]]:
        return {"train": self.train, "validation": self.validation, "test": self.test}


class SplitError(ValueError):
    """A split cannot be made with these options on this pool."""


class Strategy(ABC):
    """A split strategy: a name, an options dataclass and a partition rule."""

    name: ClassVar[str]
    description: ClassVar[str]
    options_type: ClassVar[type[SplitOptions]]

    @abstractmethod
    def partition(self, records: Sequence[Record], options: SplitOptions, rng: np.random.Generator) -> Partition:
        """Assign pool records to the train and test sides."""


def task_input(record: Record) -> tuple[str, str]:
    """What makes a test record overlap train: the same input of the same task (a pool of one
    task: the same input; in a multi-task pool one input may ask different tasks)."""
    return record["task"], record["input"]


def input_groups(records: Sequence[Record]) -> dict[str, list[int]]:
    """Indices of the records sharing each input, inputs in first-seen order."""
    groups: dict[str, list[int]] = {}
    for index, record in enumerate(records):
        groups.setdefault(record["input"], []).append(index)
    return groups


def carve_validation(
    train_side: Sequence[Record], fraction: float, rng: np.random.Generator
) -> tuple[list[Record], list[Record]]:
    """Move whole input groups, at random, from train to validation until fraction is reached."""
    if fraction <= 0 or not train_side:
        return list(train_side), []
    groups = input_groups(train_side)
    keys = list(groups)
    order = rng.permutation(len(keys))
    wanted = int(round(fraction * len(train_side)))
    chosen: set[int] = set()
    for position in order:  # whole groups that still fit, so the count comes out exact when it can
        group = groups[keys[position]]
        if len(chosen) + len(group) <= wanted:
            chosen.update(group)
            if len(chosen) == wanted:
                break
    train = [r for i, r in enumerate(train_side) if i not in chosen]
    validation = [r for i, r in enumerate(train_side) if i in chosen]
    return train, validation


def finish(
    strategy: str,
    options: Mapping[str, Any],
    seed: int,
    partition: Partition,
    validation_fraction: float,
    rng: np.random.Generator,
) -> SplitResult:
    """Steps 1-4 of the module doc: overlap removal, validation, novelty, report."""
    train_inputs = {task_input(r) for r in partition.train} | {task_input(r) for r in partition.pinned}
    test = [r for r in partition.test if task_input(r) not in train_inputs]
    removed = len(partition.test) - len(test)
    train, validation = carve_validation(partition.train, validation_fraction, rng)
    train = train + partition.pinned
    result_parts = annotate({"train": train, "validation": validation, "test": test}, bool(options.get("abstract_lexical")))
    report = build_report(strategy, options, seed, result_parts)
    report["removed_overlap"] = removed
    report["unused"] = partition.unused
    report.update(partition.notes)
    warnings = list(report.get("warnings", []))
    if removed:
        warnings.append(f"{removed} test examples were removed because their input also occurs on the train side")
    if not test:
        warnings.append("the test part is empty")
    report["warnings"] = warnings
    return SplitResult(result_parts["train"], result_parts["validation"], result_parts["test"], rounded(report))


def part_summary(records: Sequence[Record]) -> dict[str, Any]:
    """Size, length and difficulty ranges, tasks, and duplicate inputs of one part."""
    ranges: dict[str, list[int]] = {}
    tasks: Counter[str] = Counter()
    seen: set[str] = set()
    duplicates = 0
    for record in records:
        tasks[record["task"]] += 1
        for name, value in record["difficulty"].items():
            if name in ranges:
                lo_hi = ranges[name]
                if value < lo_hi[0]:
                    lo_hi[0] = value
                elif value > lo_hi[1]:
                    lo_hi[1] = value
            else:
                ranges[name] = [value, value]
        if record["input"] in seen:
            duplicates += 1
        seen.add(record["input"])
    return {
        "size": len(records),
        "tasks": dict(sorted(tasks.items())),
        "ranges": ranges,
        "duplicate_inputs": duplicates,
    }


def divergence_report(
    train: Sequence[Record], test: Sequence[Record], abstract_lexical: bool = False
) -> dict[str, Any]:
    """Atom and compound divergence of train vs test (rounded: gengap.splits.precision), unseen atoms,
    atom definition used. A divergence is None when a side has no atoms or no compounds (e.g.
    inputs of one token have no token bigrams)."""
    if not train or not test:
        return {"atom_divergence": None, "compound_divergence": None, "unseen_atoms": [], "unseen_atom_count": 0}
    train_atoms = sum_counters(record_atoms(r) for r in train)
    test_atoms = sum_counters(record_atoms(r) for r in test)
    unseen = sorted(set(test_atoms) - set(train_atoms))
    train_compounds = sum_counters(record_compounds(r, abstract_lexical) for r in train)
    test_compounds = sum_counters(record_compounds(r, abstract_lexical) for r in test)
    return rounded({
        "atom_divergence": atom_divergence(train_atoms, test_atoms) if train_atoms and test_atoms else None,
        "compound_divergence": compound_divergence(train_compounds, test_compounds) if train_compounds and test_compounds else None,
        "unseen_atoms": unseen[:UNSEEN_LISTED],
        "unseen_atom_count": len(unseen),
        "atoms_source": atoms_source(list(train[:1000]) + list(test[:1000])),
    })


def build_report(
    strategy: str, options: Mapping[str, Any], seed: int | None, parts: Mapping[str, Sequence[Record]]
) -> dict[str, Any]:
    """The split report (see module doc; floats rounded by gengap.splits.precision); `overlap` is
    recomputed from the parts."""
    train_inputs = {task_input(r) for r in parts["train"]} | {task_input(r) for r in parts["validation"]}
    report: dict[str, Any] = {
        "strategy": strategy,
        "options": dict(options),
        "seed": seed,
        "sizes": {name: len(parts[name]) for name in PARTS},
        "overlap": sum(1 for r in parts["test"] if task_input(r) in train_inputs),
    }
    abstract = bool(options.get("abstract_lexical", False))
    report.update(divergence_report(parts["train"], parts["test"], abstract))
    report["compounds"] = "structural (lexical items abstracted)" if abstract else "lexical"
    report["parts"] = {name: part_summary(parts[name]) for name in PARTS}
    report["novelty"] = {name: novelty_summary(parts[name]) for name in ("validation", "test")}
    return rounded(report)
