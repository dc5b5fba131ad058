"""Atoms and compounds of records, from their task.

Compositional tasks define ``atoms``/``compounds`` from their derivations. For any other
task the fallback is lexical: atoms are the input tokens and compounds the adjacent input
token pairs (``a b``), so divergences stay defined for every record.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Mapping, Sequence

from generators import UnknownTaskError, get_task
from generators.batch import Record


def _task(record: Mapping[str, Any]):
    try:
        return get_task(record["task"])
    except UnknownTaskError:
        return None


def record_atoms(record: Mapping[str, Any]) -> Counter[str]:
    task = _task(record)
    found = task.atoms(record) if task is not None else None
    return found if found is not None else Counter(record["input"].split())


def record_compounds(record: Mapping[str, Any], abstract_lexical: bool = False) -> Counter[str]:
    """Compounds of a record; with abstract_lexical, lexical items are written * (structure only)."""
    task = _task(record)
    found = task.compounds(record, abstract_lexical) if task is not None else None
    if found is not None:
        return found
    tokens = record["input"].split()
    return Counter(f"{a} {b}" for a, b in zip(tokens, tokens[1:]))


def atoms_source(records: Sequence[Record]) -> str:
    """"derivation" when every record's task defines atoms, "tokens" when none, else "mixed"."""
    kinds = set()
    for record in records:
        task = _task(record)
        kinds.add("derivation" if task is not None and task.atoms(record) is not None else "tokens")
        if len(kinds) > 1:
            return "mixed"
    return kinds.pop() if kinds else "tokens"


def sum_counters(counters: Sequence[Counter[str]]) -> Counter[str]:
    total: Counter[str] = Counter()
    for counter in counters:
        total.update(counter)
    return total
