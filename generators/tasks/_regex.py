"""Regular expressions over a small alphabet: syntax, canonical form, and two matchers.

Syntax trees are nested tuples: ``("sym", "a")``, ``("cat", (x, y, ...))``,
``("alt", (x, y, ...))`` and the postfix operators ``("star", x)``, ``("plus", x)``,
``("opt", x)``. Written form, one token per symbol or operator::

    alt  := cat ( "|" cat )*
    cat  := post post*
    post := atom ( "*" | "+" | "?" )*
    atom := SYMBOL | "(" alt ")"

so postfix operators bind tightest, then concatenation, then union. Parsing flattens nested
unions and concatenations (``a ( b c )`` is the concatenation of a, b, c); printing writes
parentheses only where precedence needs them, and ``parse(show(t)) == t`` for every tree
whose union and concatenation children are not themselves unions / concatenations.

Two matchers, written apart on purpose: :class:`Nfa` (a position automaton with state sets
as bit sets, used by the generator to sample members of exact lengths) and
:func:`matches` (Brzozowski derivatives on the tree, used by the checker).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Mapping, Sequence

Regex = tuple[Any, ...]
POSTFIX = {"*": "star", "+": "plus", "?": "opt"}
POSTFIX_TOKEN = {name: token for token, name in POSTFIX.items()}
OPERATOR_TOKENS = frozenset({"(", ")", "|", *POSTFIX})
MAX_PARSE_DEPTH = 200
SUBSET_LIMIT = 64  # Nfa.accepts_all gives up (False) past this many state sets at one length


# -- printing and parsing ------------------------------------------------------------------


def show(tree: Regex) -> list[str]:
    """The tokens of a tree, parenthesized only where precedence needs it."""
    out: list[str] = []
    _show(tree, out)
    return out


def _show(tree: Regex, out: list[str]) -> None:
    kind = tree[0]
    if kind == "sym":
        out.append(tree[1])
    elif kind == "alt":
        for i, child in enumerate(tree[1]):
            if i:
                out.append("|")
            _show(child, out)
    elif kind == "cat":
        for child in tree[1]:
            _wrapped(child, out, child[0] == "alt")
    else:
        _wrapped(tree[1], out, tree[1][0] in ("alt", "cat"))
        out.append(POSTFIX_TOKEN[kind])


def _wrapped(tree: Regex, out: list[str], parens: bool) -> None:
    if parens:
        out.append("(")
    _show(tree, out)
    if parens:
        out.append(")")


def parse(tokens: Sequence[str], alphabet: frozenset[str]) -> Regex:
    """The tree of a written regex; ValueError when the tokens are not one."""
    if not tokens:
        raise ValueError("empty regular expression")
    tree, end = _alt(list(tokens), 0, alphabet, 0)
    if end != len(tokens):
        raise ValueError(f"unexpected token {tokens[end]!r} in the regular expression")
    return tree


def _alt(tokens: list[str], i: int, alphabet: frozenset[str], depth: int) -> tuple[Regex, int]:
    if depth > MAX_PARSE_DEPTH:
        raise ValueError("regular expression nested too deeply")
    parts: list[Regex] = []
    while True:
        part, i = _cat(tokens, i, alphabet, depth)
        parts.extend(part[1] if part[0] == "alt" else (part,))
        if i < len(tokens) and tokens[i] == "|":
            i += 1
            continue
        return (parts[0] if len(parts) == 1 else ("alt", tuple(parts))), i


def _cat(tokens: list[str], i: int, alphabet: frozenset[str], depth: int) -> tuple[Regex, int]:
    parts: list[Regex] = []
    while i < len(tokens) and tokens[i] not in ("|", ")"):
        part, i = _post(tokens, i, alphabet, depth)
        parts.extend(part[1] if part[0] == "cat" else (part,))
    if not parts:
        raise ValueError("empty alternative in the regular expression")
    return (parts[0] if len(parts) == 1 else ("cat", tuple(parts))), i


def _post(tokens: list[str], i: int, alphabet: frozenset[str], depth: int) -> tuple[Regex, int]:
    token = tokens[i]
    if token == "(":
        tree, i = _alt(tokens, i + 1, alphabet, depth + 1)
        if i >= len(tokens) or tokens[i] != ")":
            raise ValueError("unclosed ( in the regular expression")
        i += 1
    elif token in alphabet:
        tree, i = ("sym", token), i + 1
    else:
        raise ValueError(f"unexpected token {token!r} in the regular expression")
    while i < len(tokens) and tokens[i] in POSTFIX:
        tree, i = (POSTFIX[tokens[i]], tree), i + 1
    return tree, i


def _children(tree: Regex) -> tuple[Regex, ...]:
    return tree[1] if tree[0] in ("cat", "alt") else (tree[1],)


def depth(tree: Regex) -> int:
    """Operator nesting: 0 for a symbol, 1 + the deepest child for an operator."""
    if tree[0] == "sym":
        return 0
    deepest = 0
    for child in _children(tree):
        below = depth(child)
        if below > deepest:
            deepest = below
    return 1 + deepest


def size(tree: Regex) -> int:
    """Number of nodes (symbols and operators)."""
    if tree[0] == "sym":
        return 1
    total = 1
    for child in _children(tree):
        total += size(child)
    return total


def derivation(tree: Regex) -> Any:
    """The tree as a gengap derivation: ``[operator, children...]``, symbols as leaves."""
    if tree[0] == "sym":
        return tree[1]
    out = [tree[0]]
    for child in _children(tree):
        out.append(derivation(child))
    return out


# -- canonical form ------------------------------------------------------------------------

_COLLAPSE = {  # outer, inner -> the one postfix operator they amount to
    ("star", "star"): "star", ("star", "plus"): "star", ("star", "opt"): "star",
    ("plus", "star"): "star", ("plus", "plus"): "plus", ("plus", "opt"): "star",
    ("opt", "star"): "star", ("opt", "plus"): "star", ("opt", "opt"): "opt",
}  # fmt: skip


def normalize(tree: Regex) -> Regex:
    """The normalized tree: unions and concatenations flattened, union alternatives
    deduplicated and sorted by their written form, stacked postfix operators collapsed
    (``(x*)*`` -> ``x*``, ``(x?)+`` -> ``x*``, ...). Language equivalence is not decided:
    ``a a*`` and ``a+`` stay different."""
    kind = tree[0]
    if kind == "sym":
        return tree
    if kind in ("cat", "alt"):
        parts: list[Regex] = []
        for child in (normalize(c) for c in tree[1]):
            parts.extend(child[1] if child[0] == kind else (child,))
        if kind == "alt":
            parts = sorted({" ".join(show(p)): p for p in parts}.items())  # type: ignore[assignment]
            parts = [p for _, p in parts]  # type: ignore[misc]
        return parts[0] if len(parts) == 1 else (kind, tuple(parts))
    inner = normalize(tree[1])
    if inner[0] in POSTFIX_TOKEN:
        return (_COLLAPSE[(kind, inner[0])], inner[1])
    return (kind, inner)


def canonical(tree: Regex) -> str:
    """The written form of the normalized tree (what makes two regexes the same system)."""
    return " ".join(show(normalize(tree)))


# -- the generator's matcher: a position automaton ------------------------------------------


class Nfa:
    """Position (Glushkov) automaton of a tree over ``alphabet`` (index = symbol code):
    bit i of a state set is the i-th symbol leaf (in written order) about to read its symbol,
    bit ``final`` acceptance. ``follow[i]`` is the set after leaf i has read its symbol,
    ``start`` the set before any symbol, ``leaves[c]`` the leaves that read symbol c. Built
    bottom-up from nullable / first / last sets, in time about linear in the tree.
    """

    def __init__(self, tree: Regex, alphabet: Sequence[str]) -> None:
        codes = {s: i for i, s in enumerate(alphabet)}
        self.leaves = [0] * len(alphabet)
        self.follow: list[int] = []
        self._codes: list[int] = []  # symbol code of each leaf
        nullable, first, last = self._build(tree, codes)
        self.final = 1 << len(self.follow)
        self._link(last, self.final)
        self.start = first | (self.final if nullable else 0)
        self._rows: dict[int, tuple[int, ...]] = {}
        self._choices: dict[tuple[int, int], list[tuple[int, int]]] = {}
        self._accepts_all: dict[int, bool] = {}

    def _link(self, sources: int, targets: int) -> None:
        follow = self.follow
        while sources:
            low = sources & -sources
            follow[low.bit_length() - 1] |= targets
            sources ^= low

    def _build(self, tree: Regex, codes: Mapping[str, int]) -> tuple[bool, int, int]:
        """(nullable, first leaves, last leaves) of a subtree, numbering its leaves."""
        kind = tree[0]
        if kind == "sym":
            bit = 1 << len(self.follow)
            self.follow.append(0)
            code = codes[tree[1]]
            self._codes.append(code)
            self.leaves[code] |= bit
            return False, bit, bit
        if kind == "alt":
            nullable, first, last = False, 0, 0
            for child in tree[1]:
                null_y, first_y, last_y = self._build(child, codes)
                nullable, first, last = nullable or null_y, first | first_y, last | last_y
            return nullable, first, last
        if kind == "cat":
            children = iter(tree[1])
            nullable, first, last = self._build(next(children), codes)
            for child in children:
                null_y, first_y, last_y = self._build(child, codes)
                self._link(last, first_y)
                first = first | first_y if nullable else first
                last = last | last_y if null_y else last_y
                nullable = nullable and null_y
            return nullable, first, last
        nullable, first, last = self._build(tree[1], codes)
        if kind != "opt":
            self._link(last, first)
        return nullable or kind != "plus", first, last

    def row(self, states: int) -> tuple[int, ...]:
        """The sets reached from a set by reading each symbol (index = code), remembered (a
        lazy DFA)."""
        out = self._rows.get(states)
        if out is None:
            sets, codes, follow = [0] * len(self.leaves), self._codes, self.follow
            ready = states & (self.final - 1)
            while ready:
                low = ready & -ready
                leaf = low.bit_length() - 1
                sets[codes[leaf]] |= follow[leaf]
                ready ^= low
            out = self._rows[states] = tuple(sets)
        return out

    def advance(self, states: int, code: int) -> int:
        """The set reached from a set by reading one symbol."""
        return self.row(states)[code]

    def choices(self, states: int, target: int) -> list[tuple[int, int]]:
        """(code, set reached) for each symbol whose set meets target, in code order (remembered)."""
        key = (states, target)
        out = self._choices.get(key)
        if out is None:
            out = self._choices[key] = [(code, after) for code, after in enumerate(self.row(states)) if after & target]
        return out

    def accepts(self, codes: Sequence[int]) -> bool:
        states, row = self.start, self.row
        for code in codes:
            states = row(states)[code]
            if not states:
                return False
        return bool(states & self.final)

    def accepts_all(self, length: int) -> bool:
        """True when every word of exactly `length` symbols is accepted, found by running the
        subset construction on all of them at once; False when some word is rejected, and also
        (undecided) when more than SUBSET_LIMIT sets are met at one length."""
        found = self._accepts_all.get(length)
        if found is None:
            found = self._accepts_all[length] = self._decide_accepts_all(length)
        return found

    def _decide_accepts_all(self, length: int) -> bool:
        """Only the minimal sets are followed: reading is monotone (a superset of states
        reaches a superset), so a word accepted from a set is accepted from its supersets."""
        frontier, row = {self.start}, self.row
        for _ in range(length):
            reached = {after for states in frontier for after in row(states)}
            if 0 in reached:
                return False
            if len(reached) > 1:
                reached = {s for s in reached if not any(t & s == t and t != s for t in reached)}
            if len(reached) > SUBSET_LIMIT:
                return False
            if reached == frontier:  # a fixed point: the same sets at every longer length
                break
            frontier = reached
        return all(states & self.final for states in frontier)

    def reach(self, longest: int) -> list[int]:
        """reach[k]: the set elements from which some word of exactly k symbols is accepted.

        Leaves sharing a follow set are tested together, and once a set recurs the rest of
        the list repeats with its period (each set depends only on the one before)."""
        groups: dict[int, int] = {}
        for leaf, after in enumerate(self.follow):
            groups[after] = groups.get(after, 0) | (1 << leaf)
        out = [self.final]
        first_at = {self.final: 0}
        while len(out) <= longest:
            previous, current = out[-1], 0
            for after, leaves in groups.items():
                if after & previous:
                    current |= leaves
            if current in first_at:
                period = len(out) - first_at[current]
                while len(out) <= longest:
                    out.append(out[-period])
                break
            first_at[current] = len(out)
            out.append(current)
        return out


# -- the checker's matcher: Brzozowski derivatives ------------------------------------------

EMPTY: Regex = ("empty",)  # no word
EPSILON: Regex = ("epsilon",)  # the empty word only


def _cat2(x: Regex, y: Regex) -> Regex:
    if x == EMPTY or y == EMPTY:
        return EMPTY
    if x == EPSILON:
        return y
    if y == EPSILON:
        return x
    return ("cat", (x, y))


def _alt2(x: Regex, y: Regex) -> Regex:
    if x == EMPTY:
        return y
    if y == EMPTY or x == y:
        return x
    options = set(x[1] if x[0] == "alt" else (x,)) | set(y[1] if y[0] == "alt" else (y,))
    return ("alt", tuple(sorted(options, key=repr)))


@lru_cache(maxsize=65536)
def nullable(r: Regex) -> bool:
    """Whether r matches the empty word."""
    kind = r[0]
    if kind in ("epsilon", "star", "opt"):
        return True
    if kind in ("empty", "sym"):
        return False
    if kind == "plus":
        return nullable(r[1])
    if kind == "cat":
        return all(nullable(c) for c in r[1])
    return any(nullable(c) for c in r[1])


@lru_cache(maxsize=65536)
def derivative(r: Regex, symbol: str) -> Regex:
    """The regex of the words w such that symbol + w matches r."""
    kind = r[0]
    if kind in ("empty", "epsilon"):
        return EMPTY
    if kind == "sym":
        return EPSILON if r[1] == symbol else EMPTY
    if kind == "alt":
        out = EMPTY
        for child in r[1]:
            out = _alt2(out, derivative(child, symbol))
        return out
    if kind == "cat":
        head, rest = r[1][0], (r[1][1] if len(r[1]) == 2 else ("cat", r[1][1:]))
        first = _cat2(derivative(head, symbol), rest)
        return _alt2(first, derivative(rest, symbol)) if nullable(head) else first
    if kind == "star":
        return _cat2(derivative(r[1], symbol), r)
    if kind == "plus":
        return _cat2(derivative(r[1], symbol), ("star", r[1]))
    return derivative(r[1], symbol)  # opt


def matches(r: Regex, word: Sequence[str]) -> bool:
    """Whether the whole word matches r (derivative by derivative)."""
    for symbol in word:
        r = derivative(r, symbol)
        if r == EMPTY:
            return False
    return nullable(r)
