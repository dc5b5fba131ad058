"""Probe worlds of a cfq_like query: small triple stores on which a wrong query cannot answer as the gold.

On the generated knowledge base a gold query often has no answer under any binding the check
tries (about a quarter of the records), and then every wrong query that also answers empty
passes. The probe worlds are built from the gold query itself (the reference parser's query of
the record's question, never the generator's), deterministically and without a seed, as
free triple stores (gengap.generators.tasks._cfq_execute.TripleStore: any predicate between any
nodes, classes not implied by relations, no schema), its placeholders bound to the entities
``0 .. k-1``. A *copy* of a list of triples is its canonical instance: each variable becomes a
fresh entity of that copy, each placeholder its entity, each constant itself. Terms are
identified only where their kinds agree (gengap.generators.tasks._cfq_execute.term_kinds: no
entity is both a film and a person, so a FILTER between the two never decides). The worlds:

- the copy of the gold (the gold's answer holds the selected variable's entity, or is yes:
  never empty);
- for each triple t: the copy of the gold without t, alone and beside a copy of the gold
  (where a query that misses t answers more than the gold, or yes where the gold says no);
- for each variable a and each other term b of its kind (a variable or a placeholder): the
  copy of the gold with a identified with b, alone and beside a copy of the gold (where a
  FILTER the gold has, or has not, on a and b decides the answer);
- for each two terms of one kind that no FILTER of the gold keeps apart: the copy of the gold
  with the two identified and every other term identified with as many of its kind as the
  gold's FILTERs allow (where a FILTER the gold has not, between terms that a repeated
  conjunct could otherwise stand for, decides);
- for each two placeholders of one kind: the copy of the gold with both bound to one entity,
  alone and with each variable of their kind identified with them (``Was a film distributed by
  a film 's distributor , M1 , and M2 ?`` with ``FILTER ( ?x0 != M1 )`` added answers as the gold
  on every other world: a second film can stand in for the first);
- and, for the prediction checked, the copy of the prediction itself (where a query more
  general than the gold, one that misses a constraint of it, answers what the gold does not).

By the homomorphism theorem of conjunctive queries (Chandra and Merlin 1977), two queries
without FILTERs that answer alike on each other's copies are equivalent: each maps into the
other; the other worlds are the copies of the queries a FILTER or an identification decides
(tests/test_cfq_soundness.py measures every corruption class). :func:`agrees` is the
check; :func:`gold_answers` the gold's answers (what benchmarks/cfq_soundness.py reads).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Mapping, Sequence

from gengap.generators.tasks._cfq_execute import Answer, Node, TripleStore, execute_in, term_kinds
from gengap.generators.tasks._cfq_query import PLACEHOLDER, Query, Triple, is_variable

WORLDS_KEPT = 4096  # gold queries whose probe worlds stay built (a reward loop scores one record many times)
PROBE_STEPS = 2_000  # search candidates a predicted query may visit per probe world (no gold query of the task needs 100)


def _copy(query: Query, triples: Sequence[Triple], rename: Mapping[str, str], base: int, binding: Mapping[str, int]) -> list[tuple[Node, str, Node]]:
    """The canonical instance of triples: variable i of query -> entity base + i (after rename)."""
    index = {v: i for i, v in enumerate(query.variables())}

    def node(term: str) -> Node:
        term = rename.get(term, term)
        if is_variable(term):
            return base + index[term]
        if PLACEHOLDER.fullmatch(term):
            return binding[term]
        return term

    return [(node(s), p, node(o)) for s, p, o in triples]


World = tuple[TripleStore, tuple[tuple[str, int], ...]]  # a store and the binding of the placeholders


@lru_cache(maxsize=WORLDS_KEPT)
def probe_worlds(gold: Query) -> tuple[World, ...]:
    """The probe worlds of gold (see the module doc), each with its binding of the placeholders."""
    placeholders, variables = gold.placeholders(), gold.variables()
    binding = {m: i for i, m in enumerate(placeholders)}
    first, second = len(placeholders), len(placeholders) + len(variables)
    size = second + len(variables)
    whole = _copy(gold, gold.triples, {}, first, binding)
    variants: list[list[tuple[Node, str, Node]]] = []
    for i in range(len(gold.triples)):
        variants.append(_copy(gold, gold.triples[:i] + gold.triples[i + 1 :], {}, first, binding))
    kinds = term_kinds(gold)
    alike = lambda *terms: len({kinds[t] for t in terms if t in kinds}) <= 1  # noqa: E731  (no entity has two kinds)
    for i, a in enumerate(variables):
        for b in variables[i + 1 :] + placeholders:
            if alike(a, b):
                variants.append(_copy(gold, gold.triples, {a: b}, first, binding))
    merged_alone = [_copy(gold, gold.triples, rename, first, binding) for rename in _collapses(gold, variables, placeholders, kinds)]
    worlds: dict[tuple[frozenset, tuple[tuple[str, int], ...]], None] = {(frozenset(whole), tuple(binding.items())): None}
    for variant in variants:
        worlds.setdefault((frozenset(variant), tuple(binding.items())))
        worlds.setdefault((frozenset(whole) | frozenset(_shift(variant, first, second)), tuple(binding.items())))
    for variant in merged_alone:
        worlds.setdefault((frozenset(variant), tuple(binding.items())))
    for i, a in enumerate(placeholders):  # two placeholders naming one entity
        for b in placeholders[i + 1 :]:
            if not alike(a, b):
                continue
            merged = {**binding, b: binding[a]}
            worlds.setdefault((frozenset(_copy(gold, gold.triples, {}, first, merged)), tuple(merged.items())))
            for v in variables:  # and a variable naming that entity too (where a FILTER against either decides)
                if alike(v, a):
                    worlds.setdefault((frozenset(_copy(gold, gold.triples, {v: a}, first, merged)), tuple(merged.items())))
    return tuple((TripleStore(sorted(world, key=_key), size), bound) for world, bound in worlds)


def _collapses(gold: Query, variables: list[str], placeholders: list[str], kinds: Mapping[str, str]) -> list[dict[str, str]]:
    """For each two terms a, b of one kind (at least one a variable) that no FILTER of gold keeps
    apart: a renaming that names them one term and then names every other term the first group
    of its kind it may join (no FILTER of gold inside a group, at most one placeholder in it),
    so that no other term is left to stand for a or b."""
    apart = {frozenset(f) for f in gold.filters}
    terms = variables + placeholders
    found = []
    for i, a in enumerate(terms):
        for b in terms[i + 1 :]:
            if not is_variable(a) or frozenset((a, b)) in apart or kinds.get(a, kinds.get(b)) != kinds.get(b, kinds.get(a)):
                continue
            groups: list[list[str]] = [[a, b]]
            for t in terms:
                if t in (a, b):
                    continue
                for group in groups:
                    fits = all(kinds.get(t, kinds.get(u)) == kinds.get(u, kinds.get(t)) and frozenset((t, u)) not in apart for u in group)
                    if fits and (is_variable(t) or all(is_variable(u) for u in group)):
                        group.append(t)
                        break
                else:
                    groups.append([t])
            rename = {}
            for group in groups:
                held = [u for u in group if not is_variable(u)]
                name = held[0] if held else group[0]
                rename.update({u: name for u in group if u != name})
            found.append(rename)
    return found


def _shift(triples: list[tuple[Node, str, Node]], first: int, second: int) -> list[tuple[Node, str, Node]]:
    """A copy's variable entities moved from the first copy's range to the second's."""
    move = lambda n: n - first + second if isinstance(n, int) and n >= first else n  # noqa: E731
    return [(move(s), p, move(o)) for s, p, o in triples]


def _key(triple: tuple[Node, str, Node]) -> tuple[str, ...]:
    return tuple(f"{type(t).__name__}:{t}" for t in triple)


@lru_cache(maxsize=WORLDS_KEPT)
def gold_answers(gold: Query) -> tuple[Answer, ...]:
    """The gold's answer on each of its probe worlds (the first, the copy of the gold, is never empty)."""
    return tuple(execute_in(gold, store, dict(binding)) for store, binding in probe_worlds(gold))


def agrees(predicted: Query, gold: Query) -> bool:
    """Whether predicted answers as gold on every probe world of gold and on the copy of predicted
    (its canonical instance); ValueError for a placeholder gold has not, ExecutionLimit (a
    ValueError) for a search past PROBE_STEPS on one world (the check's time stays bounded: at
    most PROBE_STEPS x (worlds + 1) candidates for any prediction)."""
    worlds = probe_worlds(gold)
    binding = dict(worlds[0][1])
    unknown = set(predicted.placeholders()) - set(binding)
    if unknown:
        raise ValueError(f"placeholder {min(unknown)} is not in the question")
    for (store, bound), answer in zip(worlds, gold_answers(gold)):
        if execute_in(predicted, store, dict(bound), PROBE_STEPS) != answer:
            return False
    own = TripleStore(_copy(predicted, predicted.triples, {}, len(binding), binding), len(binding) + len(predicted.variables()))
    return execute_in(predicted, own, binding, PROBE_STEPS) == execute_in(gold, own, binding, PROBE_STEPS)
