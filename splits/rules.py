"""The rule-holdout split: test on rule systems never seen in train (rule-in-context tasks).

A record's rule system is ``task.rule_system(record)``: a canonical form of the rules its
input carries (string_rewrite: the ordered rule list as written; regex_match: the normalized
syntax tree, see generators/tasks/_regex.normalize), so two records share a system exactly
when their canonical forms are equal. The pool's distinct systems, in first-seen order, are
shuffled with the split stream; the first ``test_fraction`` of them (at least one) are held
out: every record of those systems goes to the test side. Of the remaining systems, the
first ``train_systems`` (0: all) make up the train side, capped at ``train_records`` records
by a seeded subsample (0: all) that keeps at least one record of every train system, and
``test_records`` caps the test side likewise; the rest of the pool is unused. Validation is carved from the train side as in every split, so it
holds seen systems (in distribution) and test holds unseen ones only.

Sweeping ``train_systems`` with one seed keeps the held-out systems fixed and the train
systems nested (the N first of the same order), so with ``train_records`` fixed only the
diversity of the instruction set changes: the instruction-diversity curve (Markov
algorithms: "the diversity of the instruction set determines generalization").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from gengap.generators import get_task
from gengap.generators.batch import Record
from gengap.generators.params import knob
from gengap.splits.base import Partition, SplitError, SplitOptions, Strategy


@dataclass(frozen=True)
class RuleHoldoutOptions(SplitOptions):
    test_fraction: float = knob(0.2, lo=0.0, hi=0.99, doc="share of the pool's distinct rule systems held out for test (at least one)")
    train_systems: int = knob(0, lo=0, doc="distinct rule systems the train side keeps (0: every system not held out); a suite may give a list")
    train_records: int = knob(0, lo=0, doc="most train-side records, a seeded subsample (0: all); fix it while sweeping train_systems")
    test_records: int = knob(0, lo=0, doc="most test records, a seeded subsample (0: all)")


def record_systems(records: Sequence[Record]) -> list[str]:
    """The canonical rule system of every record; SplitError for a task without rule systems
    or an input whose rules cannot be read."""
    tasks: dict[str, object] = {}
    systems = []
    for record in records:
        name = record["task"]
        if name not in tasks:
            tasks[name] = get_task(name)
        try:
            system = tasks[name].rule_system(record)  # type: ignore[attr-defined]
        except ValueError as err:
            raise SplitError(f"record {record['id']}: cannot read its rule system ({err})") from None
        if system is None:
            raise SplitError(f"rule_holdout needs records of a rule-in-context task (string_rewrite, regex_match); task {name} carries no rule system")
        systems.append(f"{name}: {system}")
    return systems


def _capped(records: list[Record], systems: list[str], cap: int, rng: np.random.Generator) -> list[Record]:
    """At most cap records, a uniform subsample in pool order (all when cap is 0), in which every
    system of the records keeps at least one: a system the draw missed gets one of its records
    at random in place of the last kept record of the system with the most kept (so nothing
    more is drawn from rng when no system was missed). cap >= the number of systems."""
    if not cap or len(records) <= cap:
        return records
    keep = set(rng.choice(len(records), size=cap, replace=False).tolist())
    kept: dict[str, list[int]] = {}
    for i in sorted(keep):
        kept.setdefault(systems[i], []).append(i)
    for system in dict.fromkeys(systems):
        if system not in kept:
            own = [i for i, s in enumerate(systems) if s == system]
            richest = max(kept, key=lambda s: len(kept[s]))
            keep.discard(kept[richest].pop())
            chosen = own[int(rng.integers(len(own)))]
            keep.add(chosen)
            kept[system] = [chosen]
    return [r for i, r in enumerate(records) if i in keep]


class RuleHoldout(Strategy):
    name = "rule_holdout"
    description = "hold out whole rule systems (canonical form): test records use systems never seen in train; train_systems sets the training diversity"
    options_type = RuleHoldoutOptions

    def partition(self, records: Sequence[Record], options: RuleHoldoutOptions, rng: np.random.Generator) -> Partition:
        systems = record_systems(records)
        distinct = list(dict.fromkeys(systems))
        if len(distinct) < 2:
            raise SplitError(f"rule_holdout needs at least 2 distinct rule systems in the pool, found {len(distinct)}")
        order = [distinct[i] for i in rng.permutation(len(distinct))]
        held = max(1, int(round(options.test_fraction * len(distinct))))
        held = min(held, len(distinct) - 1)
        candidates = order[held:]
        if options.train_systems > len(candidates):
            raise SplitError(
                f"train_systems={options.train_systems} exceeds the {len(candidates)} systems left after holding out "
                f"{held} of the pool's {len(distinct)}"
            )
        test_set = set(order[:held])
        train_set = set(candidates[: options.train_systems or len(candidates)])
        if options.train_records and options.train_records < len(train_set):
            raise SplitError(f"train_records={options.train_records} cannot hold one record of each of the {len(train_set)} train systems")
        if options.test_records and options.test_records < held:
            raise SplitError(f"test_records={options.test_records} cannot hold one record of each of the {held} held-out systems")
        train_pairs = [(r, s) for r, s in zip(records, systems) if s in train_set]
        test_pairs = [(r, s) for r, s in zip(records, systems) if s in test_set]
        train = _capped([r for r, _ in train_pairs], [s for _, s in train_pairs], options.train_records, rng)
        test = _capped([r for r, _ in test_pairs], [s for _, s in test_pairs], options.test_records, rng)
        warnings = []
        if options.train_records and len(train) < options.train_records:
            warnings.append(f"train_records={options.train_records} not met: the pool holds only {len(train)} records of the "
                            f"{len(train_set)} train systems (a sweep of train_systems then changes the record count too: "
                            "generate a larger pool)")
        if options.test_records and len(test) < options.test_records:
            warnings.append(f"test_records={options.test_records} not met: the pool holds only {len(test)} records of the {held} held-out systems")
        notes = {
            "systems": {"pool": len(distinct), "train_side": len(train_set), "test": held, "held_out": held},
            **({"warnings": warnings} if warnings else {}),
            "canonical_form": {name: get_task(name).rule_system_form for name in sorted({r["task"] for r in records})},
        }
        return Partition(train, test, unused=len(records) - len(train) - len(test), notes=notes)
