"""Per-example novelty of a split: what a validation or test record has that train never showed.

A record's novelty relative to a train part is the pair

    {"unseen_compounds": number of distinct compounds of the record absent from every train record,
     "unseen_atoms":     number of distinct atoms of the record absent from every train record}

with atoms and compounds as the split defines them (gengap.splits.atoms: a task's derivation, or
input tokens and adjacent token pairs; structural compounds when ``abstract_lexical``; local
structures when the split's ``compounds`` is ``local``, so ``unseen_compounds`` then counts the
record's local structures that no train record holds).
Counts are over distinct items, so a compound repeated inside one record counts once.

Every split writes it as the optional ``novelty`` field of its validation and test records
(after overlap removal, validation carving and any size cap, relative to the final train
part). Train records never carry it: relative to their own part they are never novel.
The split report summarizes it per part (see :func:`novelty_summary`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Mapping, Sequence

from gengap.generators.batch import Record
from gengap.splits.atoms import DERIVATION_COMPOUNDS, CompoundDefinition, record_atoms, record_compounds
from gengap.splits.precision import rounded

NOVELTY_KEY = "novelty"
HISTOGRAM_TOP = 3  # histogram buckets 0, 1, 2 and "3+"


def seen_items(
    train: Sequence[Record], abstract_lexical: bool = False, definition: CompoundDefinition = DERIVATION_COMPOUNDS
) -> tuple[set[str], set[str]]:
    """(atoms, compounds) occurring anywhere in the train part."""
    atoms: set[str] = set()
    compounds: set[str] = set()
    for record in train:
        atoms.update(record_atoms(record))
        compounds.update(record_compounds(record, abstract_lexical, definition))
    return atoms, compounds


def record_novelty(
    record: Record, seen_atoms: set[str], seen_compounds: set[str], abstract_lexical: bool = False,
    definition: CompoundDefinition = DERIVATION_COMPOUNDS,
) -> dict[str, int]:
    """The novelty of one record relative to the given train atoms and compounds."""
    return {
        "unseen_compounds": sum(1 for c in record_compounds(record, abstract_lexical, definition) if c not in seen_compounds),
        "unseen_atoms": sum(1 for a in record_atoms(record) if a not in seen_atoms),
    }


def strip(record: Record) -> Record:
    """The record without a novelty field (the same object when it has none)."""
    if NOVELTY_KEY not in record:
        return record
    return {k: v for k, v in record.items() if k != NOVELTY_KEY}


def annotate(
    parts: Mapping[str, Sequence[Record]], abstract_lexical: bool = False, definition: CompoundDefinition = DERIVATION_COMPOUNDS
) -> dict[str, list[Record]]:
    """Parts whose validation and test records carry novelty relative to parts["train"].

    Records are copied, never modified; train records come back without novelty (an old
    value, e.g. from a re-split file, is dropped and recomputed everywhere).
    """
    train = [strip(r) for r in parts["train"]]
    seen_atoms, seen_compounds = seen_items(train, abstract_lexical, definition)
    out: dict[str, list[Record]] = {"train": train}
    for name, records in parts.items():
        if name == "train":
            continue
        out[name] = [
            {**strip(r), NOVELTY_KEY: record_novelty(r, seen_atoms, seen_compounds, abstract_lexical, definition)} for r in records
        ]
    return out


def bucket(count: int) -> str:
    """Histogram bucket of an unseen-compound count: "0", "1", "2" or "3+"."""
    return str(count) if count < HISTOGRAM_TOP else f"{HISTOGRAM_TOP}+"


def novelty_summary(records: Sequence[Record]) -> dict[str, Any] | None:
    """Histogram of unseen-compound counts (0, 1, 2, 3+), the share of records with at least one
    unseen compound and with at least one unseen atom, and the mean count; None when no record
    carries novelty."""
    counts = [r[NOVELTY_KEY] for r in records if NOVELTY_KEY in r]
    if not counts:
        return None
    histogram: Counter[str] = Counter(bucket(c["unseen_compounds"]) for c in counts)
    labels = [str(k) for k in range(HISTOGRAM_TOP)] + [f"{HISTOGRAM_TOP}+"]
    n = len(counts)
    return {
        "records": n,
        "unseen_compounds_histogram": {label: histogram.get(label, 0) for label in labels},
        "with_unseen_compound": rounded(sum(1 for c in counts if c["unseen_compounds"] > 0) / n),
        "with_unseen_atom": rounded(sum(1 for c in counts if c["unseen_atoms"] > 0) / n),
        "mean_unseen_compounds": rounded(sum(c["unseen_compounds"] for c in counts) / n),
    }
