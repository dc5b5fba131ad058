"""Wrong and equivalent forms of a cfq_like query: what a sound checker must refuse and accept.

:func:`corruptions` returns, for a gold query, one wrong query per corruption class that applies
(``CLASSES``): a relation swapped for another (same subject and object kinds where one exists),
a triple dropped, a triple added (a relation between two of its terms, a class or an attribute
value on one), a relational triple reversed, one occurrence of a variable replaced by a fresh
or another variable, another SELECT (another variable, or count(*) <-> DISTINCT), and a wrong
FILTER (dropped, moved to other terms, or added; between terms of one kind, as a FILTER between a
film and a person decides nothing). Every corruption is a query (it parses)
and differs from the gold in normal form (exact match refuses it); the choices come from the rng given (same rng state:
same corruptions). :func:`equivalent` writes the gold with its items shuffled, its variables
renamed and its FILTER sides swapped (exact match and execution must accept it).
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Callable

from gengap.generators.kb_world import ATTRIBUTES, RELATIONS
from gengap.generators.tasks._cfq_execute import term_kinds
from gengap.generators.tasks._cfq_lexicon import ATTRIBUTE_PREDICATES, CLASS_TOKENS, PREDICATES, RELATION_OF, TYPE_PREDICATE, VALUE_TOKENS
from gengap.generators.tasks._cfq_query import PLACEHOLDER, Query, Triple, is_variable, normal_form, parse_query, render

CLASSES = ("swapped relation", "dropped triple", "added triple", "reversed triple", "wrong variable", "wrong SELECT", "wrong FILTER")


def _terms(query: Query) -> list[str]:
    """The entity terms (variables and placeholders) of a query, in order of first occurrence."""
    found = [t for s, _, o in query.triples for t in (s, o)] + [t for pair in query.filters for t in pair]
    return list(dict.fromkeys(t for t in found if is_variable(t) or PLACEHOLDER.fullmatch(t)))


def _swapped(query: Query, rng: random.Random) -> Query | None:
    relational = [i for i, (_, p, _) in enumerate(query.triples) if p in RELATION_OF]
    if not relational:
        return None
    i = rng.choice(relational)
    s, p, o = query.triples[i]
    kinds = RELATIONS[RELATION_OF[p]]
    others = [PREDICATES[r] for r, k in RELATIONS.items() if k == kinds and PREDICATES[r] != p] or [t for t in PREDICATES.values() if t != p]
    return _with(query, i, (s, rng.choice(others), o))


def _dropped(query: Query, rng: random.Random) -> Query | None:
    if len(query.triples) < 2:
        return None
    i = rng.randrange(len(query.triples))
    return Query(query.select, query.triples[:i] + query.triples[i + 1 :], query.filters)


def _added(query: Query, rng: random.Random) -> Query | None:
    terms = _terms(query)
    choice = rng.randrange(3)
    term = rng.choice(terms)
    if choice == 0:
        added: Triple = (term, rng.choice(sorted(PREDICATES.values())), rng.choice(terms))
    elif choice == 1:
        added = (term, TYPE_PREDICATE, rng.choice(sorted(CLASS_TOKENS.values())))
    else:
        name = rng.choice(sorted(ATTRIBUTES))
        added = (term, ATTRIBUTE_PREDICATES[name], VALUE_TOKENS[(name, rng.choice(ATTRIBUTES[name]))])
    if added in query.triples or added[0] == added[2]:
        return None
    return Query(query.select, query.triples + (added,), query.filters)


def _reversed(query: Query, rng: random.Random) -> Query | None:
    relational = [i for i, (s, p, o) in enumerate(query.triples) if p in RELATION_OF and s != o and (o, p, s) not in query.triples]
    if not relational:
        return None
    i = rng.choice(relational)
    s, p, o = query.triples[i]
    return _with(query, i, (o, p, s))


def _wrong_variable(query: Query, rng: random.Random) -> Query | None:
    counts = Counter(t for s, _, o in query.triples for t in (s, o) if is_variable(t))
    shared = sorted(v for v, n in counts.items() if n > 1)
    if not shared:
        return None
    v = rng.choice(shared)
    i = rng.choice([i for i, (s, _, o) in enumerate(query.triples) if v in (s, o)])
    others = [u for u in query.variables() if u != v]
    new = rng.choice(others + ["?fresh"]) if others else "?fresh"
    s, p, o = query.triples[i]
    moved = (new if s == v else s, p, new if o == v and s != v else o)
    if moved[0] == moved[2]:
        return None
    return _with(query, i, moved)


def _wrong_select(query: Query, rng: random.Random) -> Query | None:
    variables = query.variables()
    if query.select is None:
        return Query(rng.choice(variables), query.triples, query.filters) if variables else None
    others = [v for v in variables if v != query.select]
    if others and rng.random() < 0.7:
        return Query(rng.choice(others), query.triples, query.filters)
    return Query(None, query.triples, query.filters)


def _wrong_filter(query: Query, rng: random.Random) -> Query | None:
    terms, kinds = _terms(query), term_kinds(query)
    pairs = [(a, b) for i, a in enumerate(terms) for b in terms[i + 1 :]
             if (a, b) not in query.filters and (b, a) not in query.filters and kinds.get(a, kinds.get(b)) == kinds.get(b, kinds.get(a))]
    if query.filters and rng.random() < 0.5:
        i = rng.randrange(len(query.filters))
        rest = query.filters[:i] + query.filters[i + 1 :]
        if pairs and rng.random() < 0.5:
            return Query(query.select, query.triples, rest + (rng.choice(pairs),))  # moved to other terms
        return Query(query.select, query.triples, rest)  # dropped
    if not pairs:
        return None
    return Query(query.select, query.triples, query.filters + (rng.choice(pairs),))  # added


def _with(query: Query, i: int, triple: Triple) -> Query:
    return Query(query.select, query.triples[:i] + (triple,) + query.triples[i + 1 :], query.filters)


MAKERS: dict[str, Callable[[Query, random.Random], Query | None]] = dict(zip(CLASSES, (
    _swapped, _dropped, _added, _reversed, _wrong_variable, _wrong_select, _wrong_filter)))  # fmt: skip


def deciding_filters(query: Query) -> list[tuple[str, str]]:
    """The FILTERs of a query that can decide an answer: not those between terms its triples give
    two different kinds (no entity is both a film and a person)."""
    kinds = term_kinds(query)
    return [(x, y) for x, y in query.filters if not (x in kinds and y in kinds and kinds[x] != kinds[y])]


def maps_into(a: Query, b: Query) -> bool:
    """Whether some map of a's variables to b's terms sends a's selected variable to b's, every
    triple of a to a triple of b and every deciding FILTER of a to one of b (placeholders and
    constants fixed): then every answer of b is one of a, on any world (a brute-force search,
    independent of the executor)."""
    if (a.select is None) != (b.select is None):
        return False
    triples, filters = set(b.triples), {frozenset(f) for f in deciding_filters(b)}
    terms = sorted({t for s, _, o in b.triples for t in (s, o)} | {t for f in b.filters for t in f})
    order = a.variables()
    start = {a.select: b.select} if a.select is not None else {}

    def image(term: str, h: dict[str, str]) -> str | None:
        return h.get(term) if is_variable(term) else term

    def fits(h: dict[str, str]) -> bool:
        for s, p, o in a.triples:
            s2, o2 = image(s, h), image(o, h)
            if s2 is not None and o2 is not None and (s2, p, o2) not in triples:
                return False
        for x, y in deciding_filters(a):
            x2, y2 = image(x, h), image(y, h)
            if x2 is not None and y2 is not None and frozenset((x2, y2)) not in filters:
                return False
        return True

    def search(i: int, h: dict[str, str]) -> bool:
        if i == len(order):
            return True
        if order[i] in h:
            return search(i + 1, h)
        return any(fits(h2) and search(i + 1, h2) for h2 in ({**h, order[i]: t} for t in terms))

    return fits(start) and search(0, start)


def corruptions(gold: Query, rng: random.Random, equivalents: Counter[str] | None = None) -> dict[str, str]:
    """One wrong query text per corruption class that applies to gold (see the module doc); a
    corruption that maps into the gold both ways (:func:`maps_into`: an equivalent query, say a
    dropped triple that another one repeats, or a FILTER added between a film and a person) is not wrong: it is left out and counted in
    equivalents by class."""
    reference = render(normal_form(gold))
    found: dict[str, str] = {}
    for name, make in MAKERS.items():
        wrong = make(gold, rng)
        if wrong is None or not wrong.triples:
            continue
        text = render(wrong)
        try:
            if render(normal_form(parse_query(text))) == reference:
                continue
        except ValueError:
            continue  # not a query (its selected variable left out) or too symmetric to name
        if maps_into(wrong, gold) and maps_into(gold, wrong):
            if equivalents is not None:
                equivalents[name] += 1
            continue
        found[name] = text
    return found


def equivalent(gold: Query, rng: random.Random) -> str:
    """The gold with its items shuffled, variables renamed and FILTER sides swapped."""
    variables = gold.variables()
    names = {v: f"?v{i}" for i, v in enumerate(rng.sample(variables, len(variables)))}
    rename = lambda term: names.get(term, term)  # noqa: E731
    triples = [(rename(s), p, rename(o)) for s, p, o in gold.triples]
    rng.shuffle(triples)
    filters = [(rename(b), rename(a)) for a, b in gold.filters]
    rng.shuffle(filters)
    return render(Query(rename(gold.select) if gold.select else None, tuple(triples), tuple(filters)))
