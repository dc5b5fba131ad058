"""Atoms and compounds of records, from their task.

Compositional tasks define ``atoms``/``compounds`` from their derivations. A record of a
task gengap does not know (your own data, gengap.splits.external) gives its own: ``meta.atoms`` /
``meta.compounds`` (lists of strings), else those of its ``structure`` tree
(gengap.generators.derivation). Otherwise the fallback is lexical: atoms are the input tokens and
compounds the adjacent input token pairs (``a b``), so divergences stay defined for every
record.

What a record's compounds are is a choice (:class:`CompoundDefinition`, a split's options
``compounds`` and ``local_size``): ``derivation`` (the default) reads them as above;
``local`` reads the local structures of 2..local_size nodes (gengap.splits.local_structures)
from the same derivation tree: the task's (its ``structure_of``), or, for a task gengap does
not know, the record's ``structure`` tree. A record without a tree keeps what ``derivation``
gives it (``meta.compounds``, else adjacent input token pairs).
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping, Sequence

from gengap.generators import Task, UnknownTaskError, get_task
from gengap.generators.batch import Record
from gengap.generators.derivation import tree_atoms, tree_compounds
from gengap.splits.external import declared, tree_of
from gengap.splits.local_structures import LOCAL_SIZE, LOCAL_SIZE_MAX, tree_local_structures

DERIVATION, LOCAL = "derivation", "local"
DEFINITIONS = (DERIVATION, LOCAL)


@dataclass(frozen=True)
class CompoundDefinition:
    """Which items are a record's compounds: ``derivation`` (connected sub-derivations of 2 to 5
    rules, gengap.generators.derivation) or ``local`` (local structures of 2..local_size nodes,
    gengap.splits.local_structures); see the module doc. ``local_size`` is ignored by
    ``derivation``."""

    kind: str = DERIVATION
    local_size: int = LOCAL_SIZE

    @classmethod
    def of(cls, options: Mapping[str, Any]) -> "CompoundDefinition":
        """The definition a split's options name (``compounds``, ``local_size``; absent: the defaults)."""
        kind = options.get("compounds") or DERIVATION
        if kind not in DEFINITIONS:
            raise ValueError(f"unknown compound definition {kind!r}; known: {', '.join(DEFINITIONS)}")
        size = options.get("local_size", LOCAL_SIZE)
        if not isinstance(size, int) or isinstance(size, bool) or not 2 <= size <= LOCAL_SIZE_MAX:
            raise ValueError(f"local_size must be an integer in 2..{LOCAL_SIZE_MAX}, got {size!r}")
        return cls(kind, size)

    def describe(self, abstract_lexical: bool) -> str:
        """What a split report's ``compounds`` says of them."""
        if self.kind == DERIVATION:
            return "structural (lexical items abstracted)" if abstract_lexical else "lexical"
        return f"local structures of 2-{self.local_size} nodes, " + ("lexical items abstracted" if abstract_lexical else "lexical")


DERIVATION_COMPOUNDS = CompoundDefinition()


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


def _recall(kind: Any, record: Mapping[str, Any], abstract: bool, compute: Any) -> Counter[str]:
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


def record_compounds(
    record: Mapping[str, Any], abstract_lexical: bool = False, definition: CompoundDefinition = DERIVATION_COMPOUNDS
) -> Counter[str]:
    """Compounds of a record as ``definition`` reads them (module doc); with abstract_lexical,
    lexical items are written * (structure only; no effect on compounds a record lists in
    meta.compounds)."""
    if definition.kind == LOCAL:
        return _recall(("local", definition.local_size), record, abstract_lexical,
                       lambda: _record_local_structures(record, abstract_lexical, definition.local_size))
    return _recall("compounds", record, abstract_lexical, lambda: _record_compounds(record, abstract_lexical))


def record_tree(record: Mapping[str, Any]) -> Any:
    """The derivation a record's compounds are read from: its task's (for a task that defines
    compounds), or its own ``structure`` tree (a task gengap does not know); None when it has none."""
    task = _task(record)
    if task is None:
        return tree_of(record)
    if type(task).compounds is Task.compounds:
        return None
    return task.structure_of(record)  # a task's own trees may share subtrees (SCAN's do): read as the tree they stand for


def _record_local_structures(record: Mapping[str, Any], abstract_lexical: bool, size: int) -> Counter[str]:
    tree = record_tree(record)
    if tree is None:
        return _record_compounds(record, abstract_lexical)
    return tree_local_structures(tree, size, abstract_lexical)


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
