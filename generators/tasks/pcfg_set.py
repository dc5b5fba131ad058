"""PCFG SET-style string-edit programs (Hupkes et al. 2020).

An input is a program in prefix notation over symbol strings; the target is the symbol
string it evaluates to. Symbols are written as PCFG SET writes them, a letter and a
number: symbol ``i`` (0-based) is ``chr(65 + i % 26) + str(i // 26 + 1)``, so an
alphabet of 26 is ``A1 .. Z1`` and the full PCFG SET alphabet of 520 is ``A1 .. Z20``.

Functions (x, y are symbol strings; examples with x = ``A B C``, y = ``D E``):

========================  ==============================  =============
function                  meaning                         example
========================  ==============================  =============
``copy x``                x                               A B C
``reverse x``             x reversed                      C B A
``shift x``               first symbol moved to the end   B C A
``echo x``                x and its last symbol again     A B C C
``swap_first_last x``     first and last symbols swapped  C B A
``repeat x``              x twice                         A B C A B C
``append x , y``          x y                             A B C D E
``prepend x , y``         y x                             D E A B C
``remove_first x , y``    y                               D E
``remove_second x , y``   x                               A B C
========================  ==============================  =============

Grammar (prefix notation, ``,`` between the two arguments of a binary function)::

    X -> U X | B X , X | SYM SYM*

It is LL(1): a unary function takes the one expression that follows it, a binary function
the expression before its ``,`` and the one after, and an argument string is the maximal
run of symbols (it stops at ``,`` or at the end). For example
``append swap_first_last A2 B1 C3 , prepend A1 B2 , C1`` is
append(swap_first_last(A2 B1 C3), prepend(A1 B2, C1)) = ``C3 B1 A2 C1 A1 B2``.

Sampling: the number of functions k is uniform in [min_functions, max_functions]; a
program with exactly k functions and nesting depth <= max_depth is grown top-down, each
node drawing a function uniformly among those that can still fit (a unary node needs its
k - 1 remaining functions to fit in a subtree one level shallower; a binary node splits the
remaining functions uniformly over the feasible splits). Argument strings have lengths
uniform in [min_arg_length, max_arg_length] and uniform symbols.

Derivation (``structure``): ``["X -> reverse X", child]``,
``["X -> append X , X", left, right]``, ``["X -> SYM+", "A1", "B2", ...]``: function names
are part of the rule (like SCAN's ``twice``), symbols are the lexical leaves.

Features: ``depth`` (function nesting depth), ``functions``, ``arguments`` (argument
strings), ``argument_symbols`` (their total length), ``max_argument_length``,
``derivation_depth`` (= depth + 1) and ``rules`` (= functions + arguments).
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from typing import Any, Callable, Mapping

import numpy as np

from gengap.generators.batch import Batch
from gengap.generators.gc_pause import paused_gc
from gengap.generators.derivation import Tree, tree_atoms, tree_compounds
from gengap.generators.lexicons import LexiconSpec, WordClass, lexical, lexicon_knob
from gengap.generators.params import Params, knob
from gengap.generators.registry import register
from gengap.generators.task import Task

MAX_ALPHABET = 520
SYMBOLS = tuple(f"{chr(65 + i % 26)}{i // 26 + 1}" for i in range(MAX_ALPHABET))
UNARY = ("copy", "reverse", "shift", "echo", "swap_first_last", "repeat")
BINARY = ("append", "prepend", "remove_first", "remove_second")
FUNCTIONS = UNARY + BINARY
RULES = tuple(f"X -> {f} X" for f in UNARY) + tuple(f"X -> {f} X , X" for f in BINARY)
LEAF_RULE = "X -> SYM+"
# lexicon k > 0: which of the 520 symbols stand for symbols 0..519 (so an alphabet of 26 is 26 of
# the 520, drawn), and which function word names each function, among those of its arity
LEXICON = LexiconSpec(
    "pcfg_set",
    lambda: (WordClass.permuted("symbol", SYMBOLS), WordClass.permuted("unary", UNARY), WordClass.permuted("binary", BINARY)),
)
MAX_DEPTH = 16
# (min_functions, max_functions, max_depth) of levels 1..10
FUNCTION_LEVELS = (
    (1, 1, 1), (2, 2, 2), (3, 3, 3), (4, 5, 4), (6, 8, 5),
    (9, 12, 6), (13, 17, 7), (18, 23, 8), (24, 30, 9), (31, 40, 10),
)  # fmt: skip


def capacity(depth: int) -> int:
    """Most functions a program of nesting depth <= depth can hold (all binary): 2^depth - 1."""
    return (1 << depth) - 1


@dataclasses.dataclass(frozen=True)
class PcfgSetParams(Params):
    """Number of functions, nesting depth, argument lengths and alphabet of the programs."""

    min_functions: int = knob(1, lo=1, hi=1000, doc="fewest functions in a program")
    max_functions: int = knob(6, lo=1, hi=1000, doc="most functions in a program (<= 2^max_depth - 1)")
    max_depth: int = knob(4, lo=1, hi=MAX_DEPTH, doc="deepest nesting of functions")
    min_arg_length: int = knob(1, lo=1, hi=100, doc="shortest argument string, in symbols")
    max_arg_length: int = knob(5, lo=1, hi=100, doc="longest argument string, in symbols")
    alphabet_size: int = knob(520, lo=2, hi=MAX_ALPHABET, doc="number of symbols (A1..Z1, A2.., up to Z20)")
    lexicon: int = lexicon_knob()

    def check_consistency(self) -> None:
        self.require(
            self.min_functions <= self.max_functions,
            f"parameter min_functions={self.min_functions} exceeds max_functions={self.max_functions}",
        )
        self.require(
            self.min_arg_length <= self.max_arg_length,
            f"parameter min_arg_length={self.min_arg_length} exceeds max_arg_length={self.max_arg_length}",
        )
        self.require(
            self.max_functions <= capacity(self.max_depth),
            f"parameter max_functions={self.max_functions} does not fit in nesting depth "
            f"max_depth={self.max_depth} (at most {capacity(self.max_depth)} functions)",
        )


@register
@lexical(LEXICON)
class PcfgSet(Task[PcfgSetParams]):
    """Prefix-notation string-edit program -> the symbol string it evaluates to."""

    name = "pcfg_set"
    family = "compositional"
    description = "PCFG SET string-edit program (copy, reverse, append, ...) -> its output string"
    params_type = PcfgSetParams
    size_knob = "number of functions per program (min_functions..max_functions); input ~3.7 tokens per function"
    level_feature = "functions"
    test_caps = {"max_functions": 12, "min_functions": 12, "max_depth": 6, "max_arg_length": 8, "min_arg_length": 8}

    def levels(self) -> dict[int, PcfgSetParams]:
        return {
            k: PcfgSetParams(min_functions=lo, max_functions=hi, max_depth=depth)
            for k, (lo, hi, depth) in enumerate(FUNCTION_LEVELS, start=1)
        }

    def with_size(self, lo: int, hi: int) -> PcfgSetParams:
        """Defaults with lo..hi functions, max_depth raised (by 1 above the minimum) to fit hi."""
        base = self.default_params()
        depth = max(base.max_depth, min(MAX_DEPTH, math.ceil(math.log2(hi + 1)) + 1))
        return base.replace(min_functions=lo, max_functions=hi, max_depth=depth)

    def generate(self, rng: np.random.Generator, n: int, params: PcfgSetParams) -> Batch:
        with paused_gc():  # a derivation list per function and argument
            return _generate(rng, n, params)

    def solve(self, example: Mapping[str, Any]) -> str:
        return " ".join(evaluate(parse_program(example["input"])))

    def derive(self, example: Mapping[str, Any]) -> Tree:
        return parse_program(example["input"])

    def atoms(self, example: Mapping[str, Any]) -> Counter[str]:
        return tree_atoms(self.structure_of(example))

    def compounds(self, example: Mapping[str, Any], abstract_lexical: bool = False) -> Counter[str]:
        return tree_compounds(self.structure_of(example), abstract_lexical)

    def input_space_size(self, params: PcfgSetParams) -> int | None:
        """Distinct programs (the notation is unambiguous); None above 64 functions."""
        if params.max_functions > 64:
            return None
        lengths = range(params.min_arg_length, params.max_arg_length + 1)
        strings = sum(params.alphabet_size**length for length in lengths)
        # count[d][k]: expressions with exactly k functions and nesting depth <= d
        count = [[strings] + [0] * params.max_functions]
        for _ in range(params.max_depth):
            below = count[-1]
            row = [strings]
            for k in range(1, params.max_functions + 1):
                pairs = sum(below[a] * below[k - 1 - a] for a in range(k))
                row.append(len(UNARY) * below[k - 1] + len(BINARY) * pairs)
            count.append(row)
        return sum(count[-1][params.min_functions : params.max_functions + 1])


# -- generation ---------------------------------------------------------------------------

CHUNK = 4096  # uniforms per draw of uniform_stream (its default chunk)
_SYMBOL_ARRAY = np.array(SYMBOLS, dtype=object)


class _Uniforms:
    """The values of ``uniform_stream(rng)`` as lists indexed by position: ``values[i]`` is
    its i-th uniform and ``symbols[i]`` the symbol ``SYMBOLS[int(values[i] * alphabet)]``
    drawn from it (computed for whole chunks with numpy, so an argument's symbols are one
    slice). :meth:`reserve` draws chunks ahead, dropping the values already used;
    :meth:`release` then leaves rng in the state uniform_stream would leave it in once it
    has handed out the values used.
    """

    def __init__(self, rng: np.random.Generator, alphabet: int) -> None:
        self.rng = rng
        self.alphabet = alphabet
        self.values: list[float] = []
        self.symbols: list[str] = []
        self.dropped = 0  # values dropped from the front of the lists
        self.states: list[Any] = []  # rng state before each chunk

    def reserve(self, start: int, count: int) -> int:
        """Make count positions from start on available; returns the position start has
        then (the lists are updated in place, the values before start may be dropped)."""
        if start + count <= len(self.values):
            return start
        del self.values[:start], self.symbols[:start]
        self.dropped += start
        while len(self.values) < count:
            self.states.append(self.rng.bit_generator.state)
            chunk = self.rng.random(CHUNK)
            self.values += chunk.tolist()
            self.symbols += _SYMBOL_ARRAY[(chunk * self.alphabet).astype(np.intp)].tolist()
        return 0

    def release(self, end: int) -> None:
        """Rewind rng to just after the chunks holding the values before position end."""
        drawn = -(-(self.dropped + end) // CHUNK)
        if drawn < len(self.states):
            self.rng.bit_generator.state = self.states[drawn]


def _most_draws(params: PcfgSetParams) -> int:
    """Most uniforms one program consumes: its function count, per function its choice and
    (binary) split, per argument (at most functions + 1) a length and its symbols."""
    k = params.max_functions
    return 1 + 2 * k + (k + 1) * (1 + params.max_arg_length)


def _generate(rng: np.random.Generator, n: int, params: PcfgSetParams) -> Batch:
    """n programs, each consuming uniform_stream(rng) in pre-order: the function count,
    then per function its choice (and, binary, the split of the remaining functions), per
    argument its length and then its symbols."""
    draws = _Uniforms(rng, params.alphabet_size)
    u, sym = draws.values, draws.symbols
    caps = [capacity(d) for d in range(params.max_depth)]
    lo_len, span_len = params.min_arg_length, params.max_arg_length - params.min_arg_length + 1
    lo_k, span_k = params.min_functions, params.max_functions - params.min_functions + 1
    toks: list[str] = []  # the program's tokens so far
    lengths: list[int] = []  # its argument lengths so far
    values: list[list[str]] = []  # the values of the finished subtrees whose parent is not
    p = 0  # next position in the stream
    low = 0  # least room seen at an argument (its nesting depth is top - low)

    def build(k: int, room: int) -> Tree:
        """Draw an expression of k functions whose subexpressions have nesting depth <= room
        (room -1: none; arguments only); push its value, return its derivation."""
        nonlocal p, low
        if k == 0:
            start = p + 1
            p = end = start + lo_len + int(u[p] * span_len)
            syms = sym[start:end]
            toks.extend(syms)
            lengths.append(end - start)
            if room < low:
                low = room
            values.append(syms)
            return [LEAF_RULE, *syms]
        rest = k - 1
        cap = caps[room]  # room >= 0 here: a function at room 0 has k = 1 (arguments below)
        if rest <= cap:
            f = int(u[p] * 10)
            if f < 6:
                p += 1
                toks.append(FUNCTIONS[f])
                sub = build(rest, room - 1)
                x = values[-1]  # updated in place: no one else holds it
                if f == 1:
                    x.reverse()
                elif f == 2:
                    x.append(x.pop(0))
                elif f == 3:
                    x.append(x[-1])
                elif f == 4:
                    x[0], x[-1] = x[-1], x[0]
                elif f == 5:
                    x *= 2
                return [RULES[f], sub]
            left = int(u[p + 1] * k)  # uniform over 0..rest
        else:
            f = 6 + int(u[p] * 4)
            left = rest - cap + int(u[p + 1] * (cap + cap - rest + 1))  # uniform over rest-cap..cap
        p += 2
        toks.append(FUNCTIONS[f])
        sub_x = build(left, room - 1)
        toks.append(",")
        sub_y = build(rest - left, room - 1)
        y = values.pop()
        if f == 6:
            values[-1] += y
        elif f == 7:
            y += values[-1]
            values[-1] = y
        elif f == 8:
            values[-1] = y
        return [RULES[f], sub_x, sub_y]

    most = _most_draws(params)
    top = params.max_depth - 1
    inputs, targets, trees = [], [], []
    depths, functions, arguments, symbols, longest = [], [], [], [], []
    for _ in range(n):
        p = draws.reserve(p, most)
        k = lo_k + int(u[p] * span_k)
        p += 1
        toks.clear()
        lengths.clear()
        low = top
        trees.append(build(k, top))
        inputs.append(" ".join(toks))
        targets.append(" ".join(values.pop()))
        depths.append(top - low)
        functions.append(k)
        arguments.append(len(lengths))
        symbols.append(sum(lengths))
        longest.append(max(lengths))
    draws.release(p)
    depth_arr = np.asarray(depths, dtype=np.int64)
    function_arr = np.asarray(functions, dtype=np.int64)
    argument_arr = np.asarray(arguments, dtype=np.int64)
    features = {
        "depth": depth_arr,
        "functions": function_arr,
        "arguments": argument_arr,
        "argument_symbols": np.asarray(symbols, dtype=np.int64),
        "max_argument_length": np.asarray(longest, dtype=np.int64),
        "derivation_depth": depth_arr + 1,
        "rules": function_arr + argument_arr,
    }
    return Batch.from_lists(inputs, targets, features, structure=trees)


# -- the reference parser and evaluator (independent of generate) -------------------------

_SYMBOL_SET = frozenset(SYMBOLS)
_ARITY = {**{f: 1 for f in UNARY}, **{f: 2 for f in BINARY}}
_MAX_PARSE_DEPTH = 200


def parse_program(text: str) -> Tree:
    """The derivation tree of a program; ValueError when it is not a well-formed program."""
    tokens = text.split()
    if not tokens:
        raise ValueError("empty program")
    tree, end = _parse(tokens, 0, 0)
    if end != len(tokens):
        raise ValueError(f"unexpected token {tokens[end]!r} after a complete program")
    return tree


def _parse(tokens: list[str], i: int, depth: int) -> tuple[Tree, int]:
    if depth > _MAX_PARSE_DEPTH:
        raise ValueError("program nested too deeply")
    if i >= len(tokens):
        raise ValueError("program ends where an argument is expected")
    token = tokens[i]
    arity = _ARITY.get(token)
    if arity == 1:
        child, i = _parse(tokens, i + 1, depth + 1)
        return [f"X -> {token} X", child], i
    if arity == 2:
        left, i = _parse(tokens, i + 1, depth + 1)
        if i >= len(tokens) or tokens[i] != ",":
            raise ValueError(f"binary function {token} needs ',' between its arguments")
        right, i = _parse(tokens, i + 1, depth + 1)
        return [f"X -> {token} X , X", left, right], i
    start = i
    while i < len(tokens) and tokens[i] in _SYMBOL_SET:
        i += 1
    if i == start:
        raise ValueError(f"unexpected token {token!r} where an argument is expected")
    return [LEAF_RULE, *tokens[start:i]], i


def _swap_ends(s: list[str]) -> list[str]:
    out = list(s)
    out[0], out[-1] = s[-1], s[0]
    return out


_SEMANTICS: dict[str, Callable[..., list[str]]] = {
    "copy": lambda s: list(s),
    "reverse": lambda s: list(reversed(s)),
    "shift": lambda s: [*s[1:], s[0]],
    "echo": lambda s: [*s, s[-1]],
    "swap_first_last": _swap_ends,
    "repeat": lambda s: s * 2,
    "append": lambda s, t: [*s, *t],
    "prepend": lambda s, t: [*t, *s],
    "remove_first": lambda s, t: list(t),
    "remove_second": lambda s, t: list(s),
}


def evaluate(tree: Tree) -> list[str]:
    """The symbol string a program's derivation tree evaluates to."""
    rule = tree[0]
    if rule == LEAF_RULE:
        return list(tree[1:])
    function = rule.split()[2]
    return _SEMANTICS[function](*(evaluate(child) for child in tree[1:]))
