"""cfq_like's SPARQL-like queries: the data type, the reader of query text and the normal form.

Text (tokens separated by spaces)::

    SELECT DISTINCT ?x0 WHERE { ITEM . ITEM . ... }      (a wh-question: the answers of ?x0)
    SELECT count(*) WHERE { ITEM . ... }                  (a yes/no question: any solution?)

``count(*)`` is one token; CFQ's own tokenisation (``render(..., tokens="cfq")``) writes it
``count ( * )``, and the reader takes either.

An ITEM is a triple ``TERM PREDICATE TERM`` or ``FILTER ( TERM != TERM )``; a TERM is a
variable ``?name``, an entity placeholder ``M0``, ``M1``, ... or a constant ``ns:...`` (a class
or an attribute value); a PREDICATE is ``a`` (class membership) or ``ns:...``.

Normal form (what targets are, and what exact match compares, as CFQ normalizes its queries):
duplicate items dropped; the selected variable named ``?x0`` and the others ``?x1``, ``?x2``,
... in a canonical order that does not depend on how they were named (colour refinement of the
variables by the items they occur in, ties broken by trying each candidate and keeping the
smallest text; candidates that a swap of two variables maps onto each other are tried once);
triples sorted as text, then the FILTERs (each with its two terms sorted), sorted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

Triple = tuple[str, str, str]
Filter = tuple[str, str]

VARIABLE = re.compile(r"\?[A-Za-z_][A-Za-z0-9_]*")
PLACEHOLDER = re.compile(r"M(?:0|[1-9][0-9]*)")
CONSTANT = re.compile(r"ns:[^\s]+")
COUNT = "count(*)"
TOKENIZATIONS = ("gengap", "cfq")  # how COUNT is written: one token, or CFQ's four (count ( * ))
MAX_ITEMS = 200  # a query with more items is refused (no question of cfq_like comes close)
MAX_LABELINGS = 5000  # canonical naming gives up (ValueError) on a query more symmetric than this


@dataclass(frozen=True)
class Query:
    """A query: the selected variable (None for ``SELECT count(*)``), triples and filters."""

    select: str | None
    triples: tuple[Triple, ...]
    filters: tuple[Filter, ...] = ()

    def variables(self) -> list[str]:
        """The variables of the WHERE clause, in order of first occurrence."""
        seen: dict[str, None] = {}
        for s, _, o in self.triples:
            for term in (s, o):
                if is_variable(term):
                    seen.setdefault(term)
        for pair in self.filters:
            for term in pair:
                if is_variable(term):
                    seen.setdefault(term)
        return list(seen)

    def placeholders(self) -> list[str]:
        """The placeholders M0, M1, ... it mentions, sorted by number."""
        found = {term for s, _, o in self.triples for term in (s, o) if PLACEHOLDER.fullmatch(term)}
        found |= {term for pair in self.filters for term in pair if PLACEHOLDER.fullmatch(term)}
        return sorted(found, key=lambda term: int(term[1:]))


def is_variable(term: str) -> bool:
    return term.startswith("?")


def render(query: Query, tokens: str = "gengap") -> str:
    """The query's text, items in their stored order, in a tokenisation of TOKENIZATIONS."""
    if tokens not in TOKENIZATIONS:
        raise ValueError(f"unknown query tokenisation {tokens!r} (one of {', '.join(TOKENIZATIONS)})")
    count = "count ( * )" if tokens == "cfq" else COUNT
    head = f"SELECT DISTINCT {query.select}" if query.select is not None else f"SELECT {count}"
    items = [f"{s} {p} {o}" for s, p, o in query.triples] + [f"FILTER ( {a} != {b} )" for a, b in query.filters]
    return f"{head} WHERE {{ {' . '.join(items)} }}"


# -- reading query text -------------------------------------------------------------------------


def _term(token: str) -> str:
    if VARIABLE.fullmatch(token) or PLACEHOLDER.fullmatch(token) or CONSTANT.fullmatch(token):
        return token
    raise ValueError(f"{token!r} is not a variable, a placeholder or a constant")


def parse_query(text: str) -> Query:
    """The query a text states; ValueError naming the first thing that is not the syntax above."""
    tokens = text.split()
    at = 0

    def take(expected: str | None = None) -> str:
        nonlocal at
        if at >= len(tokens):
            raise ValueError(f"the query ends early{f' (expected {expected!r})' if expected else ''}")
        token = tokens[at]
        if expected is not None and token != expected:
            raise ValueError(f"expected {expected!r}, got {token!r}")
        at += 1
        return token

    take("SELECT")
    head = take()
    if head == "DISTINCT":
        select: str | None = take()
        if not VARIABLE.fullmatch(select):
            raise ValueError(f"SELECT DISTINCT needs a variable, got {select!r}")
    elif head == COUNT:
        select = None
    elif head == "count":  # CFQ's tokenisation: count ( * )
        take("(")
        take("*")
        take(")")
        select = None
    else:
        raise ValueError(f"expected DISTINCT or {COUNT} after SELECT, got {head!r}")
    take("WHERE")
    take("{")
    triples: list[Triple] = []
    filters: list[Filter] = []
    while True:
        if len(triples) + len(filters) >= MAX_ITEMS:
            raise ValueError(f"more than {MAX_ITEMS} items")
        if at < len(tokens) and tokens[at] == "FILTER":
            take()
            take("(")
            left = _term(take())
            take("!=")
            right = _term(take())
            take(")")
            filters.append((left, right))
        else:
            subject = _term(take())
            predicate = take()
            if predicate != "a" and not CONSTANT.fullmatch(predicate):
                raise ValueError(f"{predicate!r} is not a predicate (a or ns:...)")
            triples.append((subject, predicate, _term(take())))
        separator = take()
        if separator == "}":
            break
        if separator != ".":
            raise ValueError(f"expected '.' or '}}' after an item, got {separator!r}")
    if at != len(tokens):
        raise ValueError(f"unexpected {tokens[at]!r} after the query")
    query = Query(select, tuple(triples), tuple(filters))
    if select is not None and select not in query.variables():
        raise ValueError(f"the selected variable {select} does not occur in WHERE")
    return query


# -- the normal form ---------------------------------------------------------------------------


def _items(query: Query) -> list[tuple[str, ...]]:
    """Triples and filters as tuples, filters tagged (duplicates dropped, filter sides sorted)."""
    found = {tuple(t) for t in query.triples} | {("FILTER", *sorted(f)) for f in query.filters}
    return sorted(found)


def _refine(items: list[tuple[str, ...]], variables: list[str], colour: dict[str, int]) -> dict[str, int]:
    """Colour refinement: a variable's colour becomes the rank of (its colour, the sorted items it
    occurs in, itself written @ and every other variable as ?colour, a FILTER's sides sorted),
    until no class splits."""
    while True:
        keys = {}
        for v in variables:
            signature = []
            for item in items:
                if v in item:
                    marked = tuple("@" if t == v else f"?{colour[t]}" if t in colour else t for t in item)
                    if marked[0] == "FILTER":  # its two sides are unordered
                        marked = ("FILTER", *sorted(marked[1:]))
                    signature.append(marked)
            keys[v] = (colour[v], tuple(sorted(signature)))
        ranks = {key: rank for rank, key in enumerate(sorted(set(keys.values())))}
        refined = {v: ranks[keys[v]] for v in variables}
        if len(set(refined.values())) == len(set(colour.values())):
            return refined
        colour = refined


def _swappable(items: frozenset[tuple[str, ...]], a: str, b: str) -> bool:
    """Whether exchanging variables a and b maps the items onto themselves."""
    swap = {a: b, b: a}
    for item in items:
        moved = tuple(swap.get(t, t) for t in item)
        if moved[0] == "FILTER":
            moved = ("FILTER", *sorted(moved[1:]))
        if moved not in items:
            return False
    return True


def _labelings(items: list[tuple[str, ...]], variables: list[str], colour: dict[str, int], budget: list[int]) -> Iterator[list[str]]:
    """Orders of the variables: the refined colouring's, each tie class individualized in turn."""
    colour = _refine(items, variables, colour)
    classes: dict[int, list[str]] = {}
    for v in variables:
        classes.setdefault(colour[v], []).append(v)
    tied = [members for _, members in sorted(classes.items()) if len(members) > 1]
    if not tied:
        budget[0] -= 1
        if budget[0] < 0:
            raise ValueError("the query is too symmetric to name its variables")
        yield sorted(variables, key=colour.__getitem__)
        return
    members = tied[0]
    frozen = frozenset(items)
    tried: list[str] = []
    for v in members:
        if any(_swappable(frozen, v, u) for u in tried):
            continue  # an automorphism maps this branch onto one already tried
        tried.append(v)
        split = {u: 2 * c + (0 if u == v else 1) if c == colour[v] else 2 * c + 1 for u, c in colour.items()}
        yield from _labelings(items, variables, split, budget)


def normal_form(query: Query) -> Query:
    """The query with canonical variable names and sorted items (see the module doc);
    ValueError for a query too symmetric to name (more than MAX_LABELINGS candidates)."""
    items = _items(query)
    variables = query.variables()
    initial = {v: 0 if v == query.select else 1 for v in variables}
    best: Query | None = None
    best_text = ""
    for order in _labelings(items, variables, initial, [MAX_LABELINGS]):
        names = {v: f"?x{i}" for i, v in enumerate(order)}
        triples = sorted({(names.get(s, s), p, names.get(o, o)) for s, p, o, *_ in (i for i in items if i[0] != "FILTER")},
                         key=lambda t: f"{t[0]} {t[1]} {t[2]}")
        filters = sorted({tuple(sorted((names.get(a, a), names.get(b, b)))) for _, a, b in (i for i in items if i[0] == "FILTER")})
        candidate = Query(names[query.select] if query.select is not None else None, tuple(triples), tuple(filters))  # type: ignore[arg-type]
        text = render(candidate)
        if best is None or text < best_text:
            best, best_text = candidate, text
    assert best is not None
    return best


def normalize(text: str) -> str:
    """The normal form of a query text; ValueError when it is not a query."""
    return render(normal_form(parse_query(text)))
