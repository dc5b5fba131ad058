"""The common frame of every split: options, partition, validation, report.

A strategy partitions a pool of records into a train side and a test side. Then, for
every strategy alike:

1. test records whose input also occurs on the train side (in a record of the same task:
   gengap.splits.tasks) are removed (counted in the
   report as ``removed_overlap``), so ``overlap`` is always 0;
2. validation (in-distribution) is the train distribution: distinct inputs never seen in
   train, spread over input lengths in the train part's proportions (gengap.splits.validation).
   A pool split carves ``validation_fraction`` of the train side from the records whose input
   occurs there once; a sampled split draws it from the train side's own settings (the
   strategy hands it over in ``Partition.validation``). Records a strategy pins to train
   (SCAN's repeated primitive) stay in train. A strategy that bounds train-vs-test atom
   divergence (MCD: ``Partition.atom_bound``) keeps that bound for the train part left after
   carving: the carve is redrawn (same stream) until it does, at most ATOM_BOUND_TRIES times.
   With a train budget (``train_budget``, ``Partition.selection``: gengap.splits.diverse) the
   train part is then chosen from the train side that carving leaves (pinned records kept),
   the rest counted as unused, and the report gains ``train_sample``;
3. validation and test records get their ``novelty`` relative to the train part
   (gengap.splits.novelty: unseen compounds and atoms), train records none;
4. the report states sizes, length and difficulty ranges and the input-length histogram per
   part, atom and compound divergence of train vs test, atoms unseen in train, overlap,
   duplicate inputs within each part (reported, not removed), how validation was made and
   which lengths could not give their share (``validation``; ``validation.tv_lengths``: total
   variation between the train and validation parts' (task, input length) histograms, None when
   validation is empty), the novelty summary of validation and test, and warnings (test
   examples removed for overlap; a validation part short of its share or small; validation's
   lengths farther than TV_LENGTHS_MAX from train's, naming the exhausted lengths; a sampled
   side asking for more examples than its parameters have distinct inputs, from the tasks'
   input_space_size). Its floats are rounded to
   gengap.splits.precision.FLOAT_DECIMALS places.

Parts keep the pool's order, so a split is a deterministic function of (pool, options, seed).
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping, Sequence

import numpy as np

from gengap.generators.batch import Record
from gengap.generators.params import Params, knob
from gengap.generators.seeding import split_rng, train_sample_rng  # noqa: F401  (split: gengap.splits.api uses it)
from gengap.splits.atoms import (
    DEFINITIONS, DERIVATION, DERIVATION_COMPOUNDS, LOCAL, CompoundDefinition, atoms_source, record_atoms, record_compounds, sum_counters,
)
from gengap.splits.diverse import RANDOM, SAMPLERS, TrainSelection
from gengap.splits.divergence import atom_divergence, compound_divergence
from gengap.splits.local_structures import LOCAL_SIZE, LOCAL_SIZE_MAX
from gengap.splits.novelty import annotate, novelty_summary
from gengap.splits.precision import rounded
from gengap.splits.validation import ValidationDraw, carve_validation, input_length, task_input, tv_lengths, tv_warnings

PARTS = ("train", "validation", "test")
UNSEEN_LISTED = 50
ATOM_BOUND_TRIES = 32
SMALL_VALIDATION = 100  # a validation part below this many records is warned about (its figures are coarse)
TRAIN_SAMPLING = ("train_budget", "train_sampler")  # options of the strategies that sample their train part (samples_train)


def compounds_knob() -> Any:
    """The option ``compounds`` (gengap.splits.atoms.CompoundDefinition), default derivation."""
    return knob(
        DERIVATION, choices=DEFINITIONS, added=True,
        doc="what compounds are, for the search, divergence and novelty: derivation (sub-derivations of 2-5 rules) "
            "or local (local structures of 2..local_size nodes, gengap.splits.local_structures)",
    )


def local_size_knob() -> Any:
    """The option ``local_size``: the most nodes of a local structure."""
    return knob(LOCAL_SIZE, lo=2, hi=LOCAL_SIZE_MAX, added=True, doc="most nodes of a local structure (compounds=local)")


def sampler_knob(what: str) -> Any:
    """The option ``train_sampler`` (gengap.splits.diverse), default random; what: what it chooses."""
    return knob(RANDOM, choices=SAMPLERS, added=True,
                doc=f"{what}: random (uniform) or diverse (greedy cover of the most distinct compounds, gengap.splits.diverse)")


LOCAL_SIZE_ALONE = "local_size={} sizes local structures: set compounds=local"


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
    compounds: str = compounds_knob()
    local_size: int = local_size_knob()
    train_sampler: str = sampler_knob("how train_budget records are chosen from the train side")
    train_budget: int = knob(
        0, lo=0, added=True,
        doc="train records kept from the train side once validation is carved (train_sampler chooses them); 0 = all",
    )

    def compound_definition(self) -> CompoundDefinition:
        """The compounds these options name."""
        return CompoundDefinition(self.compounds, self.local_size)

    def check_consistency(self) -> None:
        """Options that only mean something together; a subclass with rules of its own calls this too."""
        self.require(self.local_size == LOCAL_SIZE or self.compounds_read_locally(), LOCAL_SIZE_ALONE.format(self.local_size))
        self.require(self.train_sampler == RANDOM or self.train_budget > 0,
                     f"train_sampler={self.train_sampler} chooses train_budget records: set train_budget")

    def compounds_read_locally(self) -> bool:
        """Whether local_size is read: compounds=local (a strategy that holds out local structures: always)."""
        return self.compounds == LOCAL


@dataclass
class Partition:
    """What a strategy decides: the train side, the test side, and records it set aside."""

    train: list[Record]
    test: list[Record]
    pinned: list[Record] = field(default_factory=list)  # train records never moved to validation
    unused: int = 0  # pool records in neither side (e.g. between length thresholds)
    notes: dict[str, Any] = field(default_factory=dict)
    validation: ValidationDraw | None = None  # drawn by the strategy (sampled splits); None: carved from train
    atom_bound: float | None = None  # train-vs-test atom divergence the train part must keep after carving
    selection: TrainSelection | None = None  # keeps a budget of the train side once validation is carved (gengap.splits.diverse)


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
    samples_train: ClassVar[bool] = True  # False: the strategy chooses its train side itself (no train_budget)

    @abstractmethod
    def partition(self, records: Sequence[Record], options: SplitOptions, rng: np.random.Generator) -> Partition:
        """Assign pool records to the train and test sides."""

    def option_rows(self) -> list[dict[str, Any]]:
        """The options a user can set (``options_type.describe()``), without ``train_budget`` and
        ``train_sampler`` for a strategy that chooses its train side itself."""
        rows = self.options_type.describe()
        return rows if self.samples_train else [row for row in rows if row["name"] not in TRAIN_SAMPLING]

    def test_rule(self, options: SplitOptions) -> Callable[[Record], bool] | None:
        """The test side as a rule on one record, when the strategy has one: the records of the
        pool's distribution that it accepts are distributed as the test side (a length split's
        test range, a held-out atom; for iid, every record). None when a record's side depends on
        the rest of the pool (MCD's search, facts, rule and task holdouts). A fresh test part
        (gengap.fresh) keeps exactly the fresh records this rule accepts."""
        return None


def input_groups(records: Sequence[Record]) -> dict[str, list[int]]:
    """Indices of the records sharing each input, inputs in first-seen order."""
    groups: dict[str, list[int]] = {}
    for index, record in enumerate(records):
        groups.setdefault(record["input"], []).append(index)
    return groups


def finish(
    strategy: str,
    options: Mapping[str, Any],
    seed: int,
    partition: Partition,
    validation_fraction: float,
    rng: np.random.Generator,
) -> SplitResult:
    """Steps 1-4 of the module doc: overlap removal, validation, novelty, report."""
    seen = [*partition.train, *partition.pinned, *(partition.validation.records if partition.validation else ())]
    train_inputs = {task_input(r) for r in seen}
    test = [r for r in partition.test if task_input(r) not in train_inputs]
    removed = len(partition.test) - len(test)
    if partition.validation is not None:
        train, drawn = list(partition.train), partition.validation
    else:
        train, drawn = _carve(partition, test, validation_fraction, rng)
    sampled = None
    if partition.selection is not None:
        side = len(train)
        train, sampled = partition.selection.choose(train, train_sample_rng(seed))
        partition = dataclasses.replace(partition, unused=partition.unused + side - len(train))
    train = train + partition.pinned
    result_parts = annotate({"train": train, "validation": drawn.records, "test": test}, bool(options.get("abstract_lexical")),
                            CompoundDefinition.of(options))
    report = build_report(strategy, options, seed, result_parts)
    report["removed_overlap"] = removed
    report["unused"] = partition.unused
    tv = tv_lengths(result_parts["train"], result_parts["validation"])
    report["validation"] = {**drawn.info, "tv_lengths": tv}
    if sampled is not None:
        report["train_sample"] = sampled
    report.update(partition.notes)
    warnings = list(report.get("warnings", [])) + drawn.warnings + tv_warnings(tv, drawn.exhausted)
    if removed:
        warnings.append(f"{removed} test examples were removed because their input also occurs on the train side")
    if sampled is not None and sampled["chosen"] < sampled["budget"]:
        warnings.append(f"train_budget {sampled['budget']} is more than the {sampled['candidates']} train-side records left "
                        "once validation was carved: train holds them all")
    if not test:
        warnings.append("the test part is empty")
    if 0 < len(drawn.records) < SMALL_VALIDATION:
        warnings.append(f"validation holds only {len(drawn.records)} records: its exact match moves in steps of "
                        f"{1 / len(drawn.records):.3f} (ask for at least {SMALL_VALIDATION})")
    report["warnings"] = warnings
    return SplitResult(result_parts["train"], result_parts["validation"], result_parts["test"], rounded(report))


def _carve(partition: Partition, test: Sequence[Record], fraction: float, rng: np.random.Generator) -> tuple[list[Record], ValidationDraw]:
    """Validation carved from the train side, redrawn while the train part left breaks the
    strategy's atom bound (the lowest divergence found is kept, with a warning, when no draw keeps it)."""
    train, drawn = carve_validation(partition.train, fraction, rng)
    if partition.atom_bound is None or not drawn.records or not test:
        return train, drawn
    test_atoms = sum_counters(record_atoms(r) for r in test)
    side_atoms = sum_counters(record_atoms(r) for r in [*partition.train, *partition.pinned])
    best: tuple[float, list[Record], ValidationDraw] | None = None
    for attempt in range(ATOM_BOUND_TRIES):
        if attempt:
            train, drawn = carve_validation(partition.train, fraction, rng)
        left = side_atoms - sum_counters(record_atoms(r) for r in drawn.records)
        value = atom_divergence(left, test_atoms) if left and test_atoms else 0.0
        if best is None or value < best[0]:
            best = (value, train, drawn)
        if value <= partition.atom_bound:
            break
    value, train, drawn = best
    drawn.info["atom_bound_tries"] = attempt + 1
    if value > partition.atom_bound:
        drawn.warnings.append(f"atom divergence of the train part after carving validation is {value:.4f}, above the bound "
                              f"{partition.atom_bound} that the train side keeps ({ATOM_BOUND_TRIES} carves tried)")
    return train, drawn


def part_summary(records: Sequence[Record]) -> dict[str, Any]:
    """Size, length and difficulty ranges, input-length histogram, tasks, and duplicate inputs of one part."""
    ranges: dict[str, list[int]] = {}
    tasks: Counter[str] = Counter()
    lengths: Counter[int] = Counter()
    seen: set[str] = set()
    duplicates = 0
    for record in records:
        tasks[record["task"]] += 1
        lengths[input_length(record)] += 1
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
        "input_lengths": {str(k): lengths[k] for k in sorted(lengths)},
        "duplicate_inputs": duplicates,
    }


def divergence_report(
    train: Sequence[Record], test: Sequence[Record], abstract_lexical: bool = False,
    definition: CompoundDefinition = DERIVATION_COMPOUNDS,
) -> dict[str, Any]:
    """Atom and compound divergence of train vs test (rounded: gengap.splits.precision), unseen atoms,
    atom definition used; compounds as ``definition`` reads them (gengap.splits.atoms). A
    divergence is None when a side has no atoms or no compounds (e.g. inputs of one token have
    no token bigrams)."""
    if not train or not test:
        return {"atom_divergence": None, "compound_divergence": None, "unseen_atoms": [], "unseen_atom_count": 0}
    train_atoms = sum_counters(record_atoms(r) for r in train)
    test_atoms = sum_counters(record_atoms(r) for r in test)
    unseen = sorted(set(test_atoms) - set(train_atoms))
    train_compounds = sum_counters(record_compounds(r, abstract_lexical, definition) for r in train)
    test_compounds = sum_counters(record_compounds(r, abstract_lexical, definition) for r in test)
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
    definition = CompoundDefinition.of(options)
    report.update(divergence_report(parts["train"], parts["test"], abstract, definition))
    report["compounds"] = definition.describe(abstract)
    report["parts"] = {name: part_summary(parts[name]) for name in PARTS}
    report["novelty"] = {name: novelty_summary(parts[name]) for name in ("validation", "test")}
    return rounded(report)
