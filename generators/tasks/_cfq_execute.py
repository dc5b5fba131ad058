"""Executing cfq_like queries on a knowledge base (gengap.generators.kb_world).

The knowledge base is read as a triple store: every relation pair under its ``ns:`` predicate,
``entity a class`` for every class an entity belongs to, and ``person gender value`` /
``person nationality value``. A query runs with its placeholders bound to entities (a
binding ``{"M0": entity, ...}``); its answer is

- for ``SELECT DISTINCT ?x0``: the set of values ?x0 takes over the solutions of the WHERE
  clause (every triple in the store, every FILTER's two terms different);
- for ``SELECT count(*)``: whether there is a solution (the yes/no answer).

Search: variables are bound one at a time, always the one with the fewest values allowed by
every triple that links it to a bound term (their intersection); whenever the free variables
fall apart into groups that no item links, each group is solved on its own (so a star of
existential variables around a bound one costs their sum, not their product); a part without
the selected variable only needs one solution; the selected variable's candidates are tried
one by one. A search that visits more than MAX_STEPS
candidates raises ExecutionLimit (no query of the task comes near; a predicted query can).

:func:`ground` finds bindings under which a query has a solution: the placeholders become
variables (pairwise distinct), and a search whose candidates are shuffled by the generator
it is given returns the first solution's placeholder values (within GROUND_STEPS candidates).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable, Mapping

import numpy as np

from gengap.generators.kb_world import ATTRIBUTES, KINDS, PERSON, RELATIONS, KnowledgeBase
from gengap.generators.tasks._cfq_lexicon import (
    ATTRIBUTE_OF,
    ATTRIBUTE_PREDICATES,
    CLASS_OF,
    CLASS_TOKENS,
    PREDICATES,
    RELATION_OF,
    TYPE_PREDICATE,
    VALUE_TOKENS,
    class_kind,
)
from gengap.generators.tasks._cfq_query import PLACEHOLDER, Query, is_variable

Node = Any  # an entity (int) or a constant token (str)
Answer = bool | frozenset
MAX_STEPS = 200_000
GROUND_STEPS = 5_000  # a grounding search gives up sooner (the check then binds at random)
EMPTY: frozenset = frozenset()
STORES_KEPT = 8


class ExecutionLimit(ValueError):
    """The search for a query's solutions visited more than MAX_STEPS candidates."""


class Store:
    """The knowledge base as triples: for each predicate, objects by subject and subjects by object."""

    def __init__(self, kb: KnowledgeBase) -> None:
        forward: dict[str, dict[Node, frozenset]] = {}
        backward: dict[str, dict[Node, frozenset]] = {}
        for relation, token in PREDICATES.items():
            forward[token] = {s: kb.objects(relation, s) for s in {s for s, _ in kb.pairs[relation]}}
            backward[token] = {o: kb.subjects(relation, o) for o in {o for _, o in kb.pairs[relation]}}
        types: dict[Node, set[str]] = {}
        for cls, token in CLASS_TOKENS.items():
            for entity in kb.members(cls):
                types.setdefault(entity, set()).add(token)
        forward[TYPE_PREDICATE] = {e: frozenset(t) for e, t in types.items()}
        backward[TYPE_PREDICATE] = {token: kb.members(cls) for cls, token in CLASS_TOKENS.items()}
        people = kb.entities(PERSON)
        for name, token in ATTRIBUTE_PREDICATES.items():
            values = {p: VALUE_TOKENS[(name, str(kb.attribute(name, p)))] for p in people}
            forward[token] = {p: frozenset({v}) for p, v in values.items()}
            backward[token] = {VALUE_TOKENS[(name, value)]: frozenset(p for p in people if values[p] == VALUE_TOKENS[(name, value)])
                               for value in ATTRIBUTES[name]}
        self.forward, self.backward = forward, backward
        self.size = kb.size

    def objects(self, predicate: str, subject: Node) -> frozenset:
        return self.forward.get(predicate, {}).get(subject, EMPTY)

    def subjects(self, predicate: str, obj: Node) -> frozenset:
        return self.backward.get(predicate, {}).get(obj, EMPTY)

    def subjects_of(self, predicate: str) -> Iterable[Node]:
        return self.forward.get(predicate, {}).keys()


@lru_cache(maxsize=STORES_KEPT)
def store_of(kb: KnowledgeBase) -> Store:
    """The knowledge base's store (built once per knowledge base object)."""
    return Store(kb)


class _Search:
    """Backtracking over one list of triples and filters (terms already resolved: variables are
    strings starting with ?, everything else a node)."""

    def __init__(self, store: Store | TripleStore, triples: list[tuple[Node, str, Node]], filters: list[tuple[Node, Node]],
                 rng: np.random.Generator | None = None, distinct: frozenset[str] = frozenset(), limit: int = MAX_STEPS) -> None:
        self.store, self.triples, self.filters = store, triples, filters
        self.rng, self.distinct, self.limit = rng, distinct, limit
        self.steps = 0
        terms = [t for triple in triples for t in (triple[0], triple[2])] + [t for pair in filters for t in pair]
        self.variables = list(dict.fromkeys(t for t in terms if isinstance(t, str) and t.startswith("?")))

    def _value(self, term: Node, bound: Mapping[str, Node]) -> Node:
        return bound.get(term, term) if isinstance(term, str) and term.startswith("?") else term

    def _free(self, term: Node, bound: Mapping[str, Node]) -> bool:
        return isinstance(term, str) and term.startswith("?") and term not in bound

    def _consistent(self, bound: Mapping[str, Node]) -> bool:
        for a, b in self.filters:
            if not (self._free(a, bound) or self._free(b, bound)) and self._value(a, bound) == self._value(b, bound):
                return False
        if self.distinct:
            values = [bound[v] for v in self.distinct if v in bound]
            if len(values) != len(set(values)):
                return False
        return True

    def domains(self, bound: Mapping[str, Node]) -> dict[str, frozenset] | None:
        """For every free variable in a triple whose other term is bound, the values every such
        triple allows (the intersection); None when a fully bound triple is not in the store."""
        found: dict[str, frozenset] = {}
        store = self.store
        for s, p, o in self.triples:
            free_s, free_o = self._free(s, bound), self._free(o, bound)
            if free_s and free_o:
                continue
            if free_s:
                allowed = store.subjects(p, self._value(o, bound))
                found[s] = found[s] & allowed if s in found else allowed
            elif free_o:
                allowed = store.objects(p, self._value(s, bound))
                found[o] = found[o] & allowed if o in found else allowed
            elif self._value(o, bound) not in store.objects(p, self._value(s, bound)):
                return None
        return found

    def unconstrained(self, variable: str) -> list[Node]:
        """The values a variable can take in its first triple, nothing else bound (every subject, or
        every object, of the predicate); every entity for a variable only FILTERs mention."""
        for s, p, o in self.triples:
            if s == variable:
                return list(self.store.subjects_of(p))
            if o == variable:
                return list({x for subject in self.store.subjects_of(p) for x in self.store.objects(p, subject)})
        return list(range(self.store.size))

    def groups(self, free: list[str]) -> list[list[str]]:
        """The free variables split into groups that no triple or FILTER between two free
        variables links (each group can be solved on its own), in the order of free."""
        parent = {v: v for v in free}

        def find(v: str) -> str:
            while parent[v] != v:
                parent[v] = parent[parent[v]]
                v = parent[v]
            return v

        for a, b in [(t[0], t[2]) for t in self.triples] + list(self.filters):
            if a in parent and b in parent:
                parent[find(a)] = find(b)
        found: dict[str, list[str]] = {}
        for v in free:
            found.setdefault(find(v), []).append(v)
        return list(found.values())

    def solve(self, bound: dict[str, Node], focus: list[str] | None = None) -> dict[str, Node] | None:
        """A solution for the variables of focus (default: all) extending bound, or None. Free
        variables that fall apart into unlinked groups are solved group by group (exact when no
        variables must be distinct; a grounding search may then miss a solution)."""
        if not self._consistent(bound):
            return None
        domains = self.domains(bound)
        if domains is None:
            return None
        free = [v for v in (self.variables if focus is None else focus) if v not in bound]
        if not free:
            return bound
        groups = self.groups(free)
        if len(groups) > 1:
            for group in groups:
                solved = self.solve(bound, group)
                if solved is None:
                    return None
                bound = solved
            return bound
        allowed = [v for v in free if v in domains]
        if allowed:
            variable = min(allowed, key=lambda v: len(domains[v]))
            values: list[Node] = list(domains[variable])
        else:
            variable = free[0]
            values = self.unconstrained(variable)
        values.sort(key=_order)
        if self.rng is not None:
            values = [values[i] for i in self.rng.permutation(len(values))]
        for value in values:
            self.steps += 1
            if self.steps > self.limit:
                raise ExecutionLimit(f"the search visited more than {self.limit:,} candidates")
            solved = self.solve({**bound, variable: value}, free)
            if solved is not None:
                return solved
        return None


def _order(value: Node) -> tuple[bool, Any]:
    """A total order of nodes (entities before constants) that does not depend on the hash seed."""
    return (isinstance(value, str), value)


def _resolve(term: str, binding: Mapping[str, int]) -> Node:
    if is_variable(term):
        return term
    if PLACEHOLDER.fullmatch(term):
        if term not in binding:
            raise ValueError(f"placeholder {term} is not bound")
        return binding[term]
    return term


def _parts(triples: list[tuple[Node, str, Node]], filters: list[tuple[Node, Node]]) -> list[tuple[list, list, set[str]]]:
    """The connected parts of a WHERE clause (items linked by shared variables)."""
    items: list[tuple[str, Any]] = [("t", t) for t in triples] + [("f", f) for f in filters]
    parent = list(range(len(items)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    holder: dict[str, int] = {}
    for i, (_, item) in enumerate(items):
        for term in (item[0], item[-1]):
            if isinstance(term, str) and term.startswith("?"):
                if term in holder:
                    parent[find(i)] = find(holder[term])
                else:
                    holder[term] = i
    groups: dict[int, tuple[list, list, set[str]]] = {}
    for i, (kind, item) in enumerate(items):
        group = groups.setdefault(find(i), ([], [], set()))
        (group[0] if kind == "t" else group[1]).append(item)
        group[2].update(t for t in (item[0], item[-1]) if isinstance(t, str) and t.startswith("?"))
    return list(groups.values())


class TripleStore:
    """A store of arbitrary triples (any predicate between any nodes, no kinds, no schema): the
    probe worlds of gengap.generators.tasks._cfq_probe. Entities are the ints below size."""

    def __init__(self, triples: Iterable[tuple[Node, str, Node]], size: int) -> None:
        forward: dict[str, dict[Node, set]] = {}
        backward: dict[str, dict[Node, set]] = {}
        for s, p, o in triples:
            forward.setdefault(p, {}).setdefault(s, set()).add(o)
            backward.setdefault(p, {}).setdefault(o, set()).add(s)
        self.forward = {p: {k: frozenset(v) for k, v in rows.items()} for p, rows in forward.items()}
        self.backward = {p: {k: frozenset(v) for k, v in rows.items()} for p, rows in backward.items()}
        self.size = size

    objects = Store.objects
    subjects = Store.subjects
    subjects_of = Store.subjects_of


def execute(query: Query, kb: KnowledgeBase, binding: Mapping[str, int]) -> Answer:
    """The query's answer on kb with its placeholders bound (see the module doc); ValueError for
    an unbound placeholder, ExecutionLimit for a search past MAX_STEPS."""
    return execute_in(query, store_of(kb), binding)


def execute_in(query: Query, store: Store | TripleStore, binding: Mapping[str, int], limit: int = MAX_STEPS) -> Answer:
    """:func:`execute` on a store (a knowledge base's or a TripleStore), its searches held to limit candidates."""
    triples = [(_resolve(s, binding), p, _resolve(o, binding)) for s, p, o in query.triples]
    filters = [(_resolve(a, binding), _resolve(b, binding)) for a, b in query.filters]
    answers: frozenset | None = None
    for part_triples, part_filters, variables in _parts(triples, filters):
        search = _Search(store, part_triples, part_filters, limit=limit)
        if query.select is None or query.select not in variables:
            if search.solve({}) is None:
                return False if query.select is None else EMPTY
            continue
        candidates = _select_candidates(search, query.select)
        found = []
        for value in candidates:
            search.steps += 1
            if search.steps > search.limit:
                raise ExecutionLimit(f"the search visited more than {search.limit:,} candidates")
            if search.solve({query.select: value}) is not None:
                found.append(value)
        answers = frozenset(found)
    if query.select is None:
        return True
    return answers if answers is not None else EMPTY


def _select_candidates(search: _Search, variable: str) -> list[Node]:
    """The values the selected variable can take under the triples that bind it to constants."""
    domains = search.domains({})
    if domains is None:
        return []
    values = list(domains[variable]) if variable in domains else search.unconstrained(variable)
    return sorted(values, key=_order)


def ground(query: Query, kb: KnowledgeBase, rng: np.random.Generator) -> dict[str, int] | None:
    """Placeholder values (pairwise distinct) under which the query has a solution, found by a
    search whose candidate order rng shuffles; None when it finds none within MAX_STEPS."""
    rename = {m: f"?{m}" for m in query.placeholders()}
    triples = [(rename.get(s, s), p, rename.get(o, o)) for s, p, o in query.triples]
    filters = [(rename.get(a, a), rename.get(b, b)) for a, b in query.filters]
    search = _Search(store_of(kb), triples, filters, rng=rng, distinct=frozenset(rename.values()), limit=GROUND_STEPS)
    try:
        solution = search.solve({})
    except ExecutionLimit:
        return None
    if solution is None:
        return None
    return {m: int(solution[v]) for m, v in rename.items()}


def term_kinds(query: Query) -> dict[str, str]:
    """The kind (film, person, company) of each placeholder and variable whose triples tell it (a
    relation's subject or object kind, a class's kind, a person for an attribute; the first
    triple that tells it decides); a term only FILTERs mention has none."""
    kinds: dict[str, str] = {}
    for s, p, o in query.triples:
        for term, side in ((s, 0), (o, 1)):
            if not (PLACEHOLDER.fullmatch(term) or is_variable(term)):
                continue
            if p in RELATION_OF:
                kinds.setdefault(term, RELATIONS[RELATION_OF[p]][side])
            elif p == TYPE_PREDICATE and side == 0 and o in CLASS_OF:
                kinds.setdefault(term, class_kind(CLASS_OF[o]))
            elif p in ATTRIBUTE_OF and side == 0:
                kinds.setdefault(term, PERSON)
    return kinds


def placeholder_kinds(query: Query) -> dict[str, str]:
    """The kind (film, person, company) of each placeholder, read from the triples it occurs in
    (:func:`term_kinds`; a placeholder only FILTERs mention: any kind will do, the first)."""
    told = term_kinds(query)
    kinds = {term: kind for term, kind in told.items() if PLACEHOLDER.fullmatch(term)}
    for term in query.placeholders():
        kinds.setdefault(term, KINDS[0])
    return kinds
