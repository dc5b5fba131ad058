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
from gengap.generators.derivation import Tree, tree_atoms, tree_compounds
from gengap.generators.params import Params, knob
from gengap.generators.registry import register
from gengap.generators.sequences import uniform_stream
from gengap.generators.task import Task

MAX_ALPHABET = 520
SYMBOLS = tuple(f"{chr(65 + i % 26)}{i // 26 + 1}" for i in range(MAX_ALPHABET))
UNARY = ("copy", "reverse", "shift", "echo", "swap_first_last", "repeat")
BINARY = ("append", "prepend", "remove_first", "remove_second")
FUNCTIONS = UNARY + BINARY
RULES = tuple(f"X -> {f} X" for f in UNARY) + tuple(f"X -> {f} X , X" for f in BINARY)
LEAF_RULE = "X -> SYM+"
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
        nxt = uniform_stream(rng).__next__
        caps = [capacity(d) for d in range(params.max_depth + 1)]
        lo_len, span_len = params.min_arg_length, params.max_arg_length - params.min_arg_length + 1
        alphabet = params.alphabet_size
        lo_k, span_k = params.min_functions, params.max_functions - params.min_functions + 1
        toks: list[str] = []
        stats = [0, 0, 0]  # arguments, argument symbols, longest argument

        def build(k: int, d: int) -> tuple[list[str], Tree, int]:
            if k == 0:
                length = lo_len + int(nxt() * span_len)
                syms = [SYMBOLS[int(nxt() * alphabet)] for _ in range(length)]
                toks.extend(syms)
                stats[0] += 1
                stats[1] += length
                if length > stats[2]:
                    stats[2] = length
                return syms, [LEAF_RULE, *syms], 0
            rest = k - 1
            cap = caps[d - 1]
            f = int(nxt() * 10) if rest <= cap else 6 + int(nxt() * 4)
            toks.append(FUNCTIONS[f])
            if f < 6:
                x, sub, depth = build(rest, d - 1)
                if f == 1:
                    x = x[::-1]
                elif f == 2:
                    x = x[1:] + x[:1]
                elif f == 3:
                    x = x + x[-1:]
                elif f == 4:
                    if len(x) > 1:
                        x = x[-1:] + x[1:-1] + x[:1]
                elif f == 5:
                    x = x + x
                return x, [RULES[f], sub], depth + 1
            first = rest - cap if rest > cap else 0
            last = rest if rest < cap else cap
            left = first + int(nxt() * (last - first + 1))
            x, sub_x, depth_x = build(left, d - 1)
            toks.append(",")
            y, sub_y, depth_y = build(rest - left, d - 1)
            if f == 6:
                x = x + y
            elif f == 7:
                x = y + x
            elif f == 8:
                x = y
            return x, [RULES[f], sub_x, sub_y], (depth_x if depth_x > depth_y else depth_y) + 1

        inputs, targets, trees = [], [], []
        depths, functions, arguments, symbols, longest = [], [], [], [], []
        for _ in range(n):
            k = lo_k + int(nxt() * span_k)
            toks.clear()
            stats[0] = stats[1] = stats[2] = 0
            value, tree, depth = build(k, params.max_depth)
            inputs.append(" ".join(toks))
            targets.append(" ".join(value))
            trees.append(tree)
            depths.append(depth)
            functions.append(k)
            arguments.append(stats[0])
            symbols.append(stats[1])
            longest.append(stats[2])
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
