"""Atoms and compounds of records, from their task.

Compositional tasks define ``atoms``/``compounds`` from their derivations. A record of a
task gengap does not know (your own data, gengap.splits.external) gives its own: ``meta.atoms`` /
``meta.compounds`` (lists of strings), else those of its ``structure`` tree
(gengap.generators.derivation). Otherwise the fallback is lexical: atoms are the input tokens and
compounds the adjacent input token pairs (``a b``), so divergences stay defined for every
record.
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from typing import Any, Iterable, Iterator, Mapping, Sequence

from gengap.generators import UnknownTaskError, get_task
from gengap.generators.batch import Record
from gengap.generators.derivation import tree_atoms, tree_compounds
from gengap.splits.external import declared, tree_of


def _task(record: Mapping[str, Any]):
    try:
        return get_task(record["task"])
    except UnknownTaskError:
        return None


def _own_atoms(record: Mapping[str, Any]) -> Counter[str] | None:
    """The atoms a record of an unknown task gives (meta.atoms, else its structure's); None: none."""
    found, tree = declared(record, "atoms"), tree_of(record)
    return tree_atoms(tree) if found is None and tree is not None else found


_REMEMBERED: dict[tuple[Any, ...], Counter[str]] | None = None


@contextlib.contextmanager
def remembered(cache: dict[tuple[Any, ...], Counter[str]] | None = None) -> Iterator[None]:
    """Within the block, record_atoms and record_compounds work each record's out once, by what
    they are read from (task, input, structure and meta): a check that reads them twice, for
    divergences and then for novelty, and for the same records in several configs (a release's
    SCAN configs split one pool), pays once. cache: a dict to keep between blocks (the
    caller's, e.g. for one task's configs); the callers must not change a record meanwhile."""
    global _REMEMBERED
    outer = _REMEMBERED
    _REMEMBERED = cache if cache is not None else ({} if outer is None else outer)
    try:
        yield
    finally:
        _REMEMBERED = outer


def _recall(kind: str, record: Mapping[str, Any], abstract: bool, compute: Any) -> Counter[str]:
    if _REMEMBERED is None:
        return compute()
    try:
        key = (kind, abstract, record.get("task"), record.get("input"), _text(record.get("structure")), _plain(record.get("meta")))
        found = _REMEMBERED.get(key)
    except (TypeError, ValueError):  # not JSON (a record the Python API built): no key, no memory
        return compute()
    if found is None:
        found = _REMEMBERED[key] = compute()
    return found


def _text(value: Any) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _plain(meta: Any) -> Any:
    """A hashable key of a record's meta: its sorted items when they are plain scalars (the
    common case, cheap), else its JSON text."""
    if isinstance(meta, dict):
        items = tuple(sorted(meta.items()))
        if all(isinstance(value, (str, int, float, bool)) or value is None for _, value in items):
            return items
    return _text(meta)


def record_atoms(record: Mapping[str, Any]) -> Counter[str]:
    return _recall("atoms", record, False, lambda: _record_atoms(record))


def _record_atoms(record: Mapping[str, Any]) -> Counter[str]:
    task = _task(record)
    found = task.atoms(record) if task is not None else _own_atoms(record)
    return found if found is not None else Counter(record["input"].split())


def record_compounds(record: Mapping[str, Any], abstract_lexical: bool = False) -> Counter[str]:
    """Compounds of a record; with abstract_lexical, lexical items are written * (structure only;
    no effect on compounds a record lists in meta.compounds)."""
    return _recall("compounds", record, abstract_lexical, lambda: _record_compounds(record, abstract_lexical))


def _record_compounds(record: Mapping[str, Any], abstract_lexical: bool = False) -> Counter[str]:
    task = _task(record)
    if task is not None:
        found = task.compounds(record, abstract_lexical)
    else:
        found, tree = declared(record, "compounds"), tree_of(record)
        if found is None and tree is not None:
            found = tree_compounds(tree, abstract_lexical)
    if found is not None:
        return found
    tokens = record["input"].split()
    return Counter(f"{a} {b}" for a, b in zip(tokens, tokens[1:]))


def atoms_source(records: Sequence[Record]) -> str:
    """"derivation" when every record's task defines atoms (or, of an unknown task, the record
    gives them: meta.atoms or a structure tree), "tokens" when none, else "mixed"."""
    kinds = set()
    for record in records:
        task = _task(record)
        own = task.atoms(record) if task is not None else _own_atoms(record)
        kinds.add("derivation" if own is not None else "tokens")
        if len(kinds) > 1:
            return "mixed"
    return kinds.pop() if kinds else "tokens"


def sum_counters(counters: Iterable[Mapping[str, int]]) -> Counter[str]:
    """The sum of count mappings, read one at a time (a generator keeps memory flat)."""
    total: Counter[str] = Counter()
    for counter in counters:
        total.update(counter)
    return total
