"""Deterministic context-free tasks (Deletang et al. 2023, level DCF)."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Mapping

import numpy as np

from gengap.generators.batch import Batch
from gengap.generators.params import knob
from gengap.generators.registry import register
from gengap.generators.sequences import (
    MAX_LENGTH,
    LengthParams,
    SequenceTask,
    SymbolParams,
    parse_symbols,
    random_bits,
    random_symbols,
    reverse_rows,
    sample_lengths,
)
from gengap.generators.task import decimal_below
from gengap.generators.text import DIGITS, ZERO, digit_tokens, digits_to_chars, join_chars, join_tokens
from gengap.generators.traces import COPY_HINTS, hinted, inductive, trace_knob, with_traces


@dataclasses.dataclass(frozen=True)
class ReverseParams(SymbolParams):
    """Length range, alphabet and the trace format."""

    trace: str = trace_knob("inductive", "index_hints")


@register
class ReverseString(SequenceTask[ReverseParams]):
    """String over 0..k-1 -> the same string reversed."""

    name = "reverse_string"
    family = "context_free"
    description = "string of symbols -> the string reversed"
    params_type = ReverseParams
    trace_formats = {
        "inductive": "per symbol written, a state: '#', the position i of the input symbol it copies (counting "
        "from 0: n-1 first, then one less than the previous state's) and that symbol",
        "index_hints": COPY_HINTS,
    }

    def generate(self, rng: np.random.Generator, n: int, params: ReverseParams) -> Batch:
        lengths = sample_lengths(rng, n, params)
        codes = digits_to_chars(random_symbols(rng, n, params.max_length, params.alphabet_size))
        reversed_codes = reverse_rows(codes, lengths)
        return with_traces(self, Batch(join_chars(codes, lengths), join_chars(reversed_codes, lengths)), params.trace)

    def trace_tokens(self, example: Mapping[str, Any], fmt: str) -> list[str]:
        symbols = [str(s) for s in parse_symbols(example["input"], DIGITS)]
        order = range(len(symbols) - 1, -1, -1)
        if fmt == "inductive":
            return inductive([str(i), symbols[i]] for i in order)
        return hinted((i, [symbols[i]]) for i in order)

    def measure(self, example: Mapping[str, Any]) -> dict[str, int]:
        return {}  # no features besides the lengths

    def solve(self, example: Mapping[str, Any]) -> str:
        symbols = parse_symbols(example["input"], DIGITS)
        return " ".join(str(s) for s in symbols[::-1])


# -- stack_manipulation ------------------------------------------------------------------

STACK_VOCAB = ("0", "1", "POP", "PUSH0", "PUSH1")
POP, PUSH0, PUSH1 = 2, 3, 4  # token ids in STACK_VOCAB


@dataclasses.dataclass(frozen=True)
class StackParams(LengthParams):
    """Input length range and the trace format."""

    trace: str = trace_knob()


@register
class StackManipulation(SequenceTask[StackParams]):
    """Initial stack (bottom to top, over 0 1) then actions POP PUSH0 PUSH1 -> final stack.

    Length split (as in the reference generator): an input of length L >= 2 holds an
    initial stack of k symbols, k uniform in 1..L-1, followed by L-k >= 1 actions; an
    input of length 1 is a single stack symbol and no action. Symbols and actions are
    uniform. POP on an empty stack is ignored. Target: the final stack top to bottom,
    or ``EMPTY``. Features: ``stack_operations`` (number of actions), ``initial_height``
    and ``max_stack_height`` (largest height reached, the initial one included).
    """

    name = "stack_manipulation"
    family = "context_free"
    description = "stack bottom-to-top over 0 1, then POP PUSH0 PUSH1 actions -> final stack top-to-bottom or EMPTY"
    params_type = StackParams
    trace_formats = {
        "coarse": "the stack height after every action",
        "fine": "after every action, two tokens: the stack height and the top symbol (EMPTY when empty)",
    }
    trace_step_widths = {"fine": 2}

    def generate(self, rng: np.random.Generator, n: int, params: StackParams) -> Batch:
        lengths = sample_lengths(rng, n, params)
        width = params.max_length
        initial = rng.integers(1, np.maximum(lengths, 2), dtype=np.int64)  # 1..L-1, or 1 when L = 1
        # Column-major (position, example) so the simulation reads contiguous rows.
        bits = random_bits(rng, width, n)
        actions = rng.integers(POP, PUSH1 + 1, size=(width, n), dtype=np.uint8)
        position = np.arange(width)[:, None]
        is_action = (position >= initial[None, :]) & (position < lengths[None, :])
        delta = (actions != POP).view(np.int8) * np.int8(2) - np.int8(1)  # +1 push, -1 pop
        delta *= is_action
        pushed = (actions == PUSH1).view(np.uint8)  # the symbol a push writes
        # The stack of example i is row i of (n, width + 1); every step writes its symbol
        # just above the top, which only matters when the step is a push.
        stride = width + 1
        stack = np.zeros((n, stride), dtype=np.uint8)
        stack[:, :width] = bits.T
        flat = stack.reshape(-1)
        top = np.arange(n, dtype=np.int64) * stride + initial  # flat index just above the top
        floor = np.arange(n, dtype=np.int64) * stride
        highest = top.copy()
        for j in range(1, width):
            flat[top] = pushed[j]
            top += delta[j]
            np.maximum(top, floor, out=top)
            np.maximum(highest, top, out=highest)
        height = top - floor
        top_first = reverse_rows(stack[:, :width], height) + np.uint8(48)
        targets = join_chars(top_first, np.maximum(height, 1))
        empty = height == 0
        if empty.any():
            targets = targets.astype(f"S{max(targets.dtype.itemsize, 5)}")
            targets[empty] = b"EMPTY"
        ids = np.ascontiguousarray(np.where(is_action, actions, bits).T)
        features = {
            "stack_operations": lengths - initial,
            "initial_height": initial,
            "max_stack_height": highest - floor,
        }
        batch = Batch(join_tokens(ids, lengths, STACK_VOCAB), targets, features)
        return with_traces(self, batch, params.trace)

    def trace_tokens(self, example: Mapping[str, Any], fmt: str) -> list[str]:
        tokens = example["input"].split()
        initial = next((i for i, t in enumerate(tokens) if t not in ("0", "1")), len(tokens))
        if initial == 0:
            raise ValueError("the initial stack needs at least one symbol")
        stack, out = tokens[:initial], []
        for action in tokens[initial:]:
            if action == "POP":
                stack = stack[:-1]
            elif action in ("PUSH0", "PUSH1"):
                stack = stack + [action[-1]]
            else:
                raise ValueError(f"unexpected action {action!r}")
            out.append(str(len(stack)))
            if fmt == "fine":
                out.append(stack[-1] if stack else "EMPTY")
        return out

    def measure(self, example: Mapping[str, Any]) -> dict[str, int]:
        tokens = example["input"].split()
        initial = next((i for i, t in enumerate(tokens) if t not in ("0", "1")), len(tokens))
        height = highest = initial
        for token in tokens[initial:]:
            height = max(height - 1, 0) if token == "POP" else height + 1
            highest = max(highest, height)
        return {"stack_operations": len(tokens) - initial, "initial_height": initial, "max_stack_height": highest}

    def solve(self, example: Mapping[str, Any]) -> str:
        tokens = example["input"].split()
        stack: list[str] = []
        acting = False
        for token in tokens:
            if token in ("0", "1"):
                if acting:
                    raise ValueError("stack symbols must precede the actions")
                stack.append(token)
            elif token in ("POP", "PUSH0", "PUSH1"):
                if not stack and not acting:
                    raise ValueError("the initial stack needs at least one symbol")
                acting = True
                if token == "POP":
                    if stack:
                        stack.pop()
                else:
                    stack.append(token[-1])
            else:
                raise ValueError(f"unexpected token {token!r}")
        if not tokens:
            raise ValueError("empty input")
        return " ".join(reversed(stack)) if stack else "EMPTY"

    def input_space_size(self, params: StackParams) -> int:
        # Length 1: 2 inputs; length L >= 2: sum_{k=1}^{L-1} 2^k 3^(L-k) = 2*3^L - 3*2^L.
        return sum(2 if length == 1 else 2 * 3**length - 3 * 2**length
                   for length in range(params.min_length, params.max_length + 1))


# -- bracket expressions -------------------------------------------------------------------

OPEN, CLOSE, PLUS, MINUS, X, EQUALS = (ord(c) for c in "()+-x=")


@dataclasses.dataclass(frozen=True)
class BracketParams(LengthParams):
    """Expression length range (tokens) and the modulus (digits are 0..modulus-1)."""

    modulus: int = knob(5, lo=2, hi=10, doc="digits are 0..modulus-1; values are taken mod modulus")


@dataclasses.dataclass(frozen=True)
class _Expressions:
    """Random bracket expressions, one row each: ``codes`` (n, width) ASCII (NUL past the
    end), ``value`` mod the modulus, ``nesting`` (most brackets open at once),
    ``operators`` (binary + and -) and, when asked for, ``digit_depth`` (n, width): the
    number of brackets around the digit at each position (0 elsewhere).
    """

    codes: np.ndarray
    value: np.ndarray
    nesting: np.ndarray
    operators: np.ndarray
    digit_depth: np.ndarray | None


def _bracket_expressions(
    rng: np.random.Generator, lengths: np.ndarray, modulus: int, width: int, digit_depth: bool = False
) -> _Expressions:
    """Expressions of exactly lengths[i] tokens from the grammar of Deletang et al.

    E of length 1: d; 2: -d; 3: (d); 4: (-d); L >= 5: (E1 op E2) with op uniform in + -,
    len(E1) uniform in 1..L-4 and len(E2) = L-3-len(E1). Every length >= 1 is reachable.
    Digits are uniform in 0..modulus-1. The tree is grown breadth-first for all rows at
    once: each round turns the pending nodes into leaves (length <= 4) or into a bracket
    pair with an operator and two pending children, one bracket deeper. With + and -
    only, the value is the sum of the digits, each with the sign of its path.
    """
    n = len(lengths)
    codes = np.zeros((n, width), dtype=np.uint8)
    flat = codes.reshape(-1)
    depths = np.zeros((n, width), dtype=np.int16) if digit_depth else None
    total = np.zeros(n, dtype=np.float64)
    nesting = np.zeros(n, dtype=np.int64)
    operators = np.zeros(n, dtype=np.int64)
    row = np.arange(n, dtype=np.int64)
    start = row * width  # flat index of each pending node's first token
    size = lengths.astype(np.int64)
    sign = np.ones(n, dtype=np.int64)
    depth = 0
    while len(size):
        leaf = size <= 4
        if leaf.any():
            l_row, l_start, l_size, l_sign = row[leaf], start[leaf], size[leaf], sign[leaf]
            digit = rng.integers(0, modulus, size=len(l_row), dtype=np.int64)
            negated = (l_size == 2) | (l_size == 4)
            wrapped = l_size >= 3
            index = l_start + (l_size >= 2) + (l_size == 4)
            flat[index] = digit + ZERO
            flat[l_start[l_size == 2]] = MINUS
            flat[l_start[l_size == 4] + 1] = MINUS
            flat[l_start[wrapped]] = OPEN
            flat[(l_start + l_size - 1)[wrapped]] = CLOSE
            nesting[l_row] = depth  # earlier rounds left at most depth
            nesting[l_row[wrapped]] = depth + 1
            total += np.bincount(l_row, weights=np.where(negated, -l_sign, l_sign) * digit, minlength=n)
            if depths is not None:
                depths.reshape(-1)[index] = depth + wrapped
        inner = ~leaf
        row, start, size, sign = row[inner], start[inner], size[inner], sign[inner]
        if not len(size):
            break
        left = rng.integers(1, size - 3)  # 1..size-4
        minus = rng.integers(0, 2, size=len(size)).astype(bool)
        flat[start] = OPEN
        flat[start + 1 + left] = np.where(minus, MINUS, PLUS)
        flat[start + size - 1] = CLOSE
        operators += np.bincount(row, minlength=n)
        row = np.concatenate([row, row])
        start = np.concatenate([start + 1, start + 2 + left])
        size = np.concatenate([left, size - 3 - left])
        sign = np.concatenate([sign, np.where(minus, -sign, sign)])
        depth += 1
    value = np.rint(total).astype(np.int64) % modulus
    return _Expressions(codes, value, nesting, operators, depths)


def _parse_linear(tokens: list[str], modulus: int, unknown: bool) -> tuple[int, int]:
    """(a, b) with value = a*x + b of a bracket expression in the generator's grammar.

    E := d | -d | ( d ) | ( -d ) | ( E op E ) with op in + -, d a digit below modulus or
    (if unknown) ``x``. Parsed with an explicit stack (no recursion limit). ValueError on
    anything else.
    """
    digits = DIGITS[:modulus]

    def atom(token: str) -> tuple[int, int]:
        if token == "x" and unknown:
            return 1, 0
        if len(token) == 1 and token in digits:
            return 0, int(token)
        raise ValueError(f"expected a digit, got {token!r}")

    frames: list[list[Any]] = []  # open brackets: [left operand, its size, operator]
    i, end = 0, len(tokens)

    def token_at(k: int) -> str:
        if k >= end:
            raise ValueError("expression ends early")
        return tokens[k]

    while True:
        token = token_at(i)
        if token == "(":
            frames.append([None, 0, None])
            i += 1
            continue
        if token == "-":
            a, b = atom(token_at(i + 1))
            operand, simple = (-a, -b), True
            i += 2
        else:
            operand, simple = atom(token), True
            i += 1
        while True:  # attach the finished operand to the innermost open bracket
            if not frames:
                if i != end:
                    raise ValueError(f"unexpected token {tokens[i]!r} after the expression")
                return operand
            frame = frames[-1]
            if frame[0] is None:
                token = token_at(i)
                if token == ")" and simple:  # (d) or (-d)
                    frames.pop()
                    i += 1
                    simple = False
                    continue
                if token not in ("+", "-"):
                    raise ValueError(f"expected + or -, got {token!r}")
                frame[0], frame[2] = operand, token
                i += 1
                break
            if token_at(i) != ")":
                raise ValueError(f"expected ), got {tokens[i]!r}")
            i += 1
            (a1, b1), (a2, b2) = frame[0], operand
            operand = (a1 + a2, b1 + b2) if frame[2] == "+" else (a1 - a2, b1 - b2)
            simple = False
            frames.pop()


@functools.cache
def _expression_counts(modulus: int, longest: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Per length L <= longest: the number of expressions, and of (expression, digit) pairs.

    The grammar is unambiguous (fully bracketed), so derivations count strings.
    """
    count = [0] * (longest + 1)
    marked = [0] * (longest + 1)
    for length in range(1, longest + 1):
        if length <= 4:
            count[length], marked[length] = modulus, modulus
            continue
        pairs = [(a, length - 3 - a) for a in range(1, length - 3)]
        count[length] = 2 * sum(count[a] * count[b] for a, b in pairs)
        marked[length] = 2 * sum(marked[a] * count[b] + count[a] * marked[b] for a, b in pairs)
    return tuple(count), tuple(marked)


COUNT_LIMIT = 600  # longest expression length input_space_size counts


def _bracket_features(tokens: list[str]) -> dict[str, int]:
    """nesting_depth (most brackets open at once) and operators (binary + and -) of an expression."""
    depth = deepest = operators = 0
    previous = "("
    for token in tokens:
        if token == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif token == ")":
            depth -= 1
        elif token in "+-" and previous not in ("(", "+", "-", "="):
            operators += 1
        previous = token
    return {"nesting_depth": deepest, "operators": operators}


@register
class ModularArithmeticBrackets(SequenceTask[BracketParams]):
    """Bracketed + - expression over digits 0..m-1 -> its value mod m.

    One token per character; the grammar (Deletang et al.) is E := d | -d | (d) | (-d) |
    (E + E) | (E - E), with lengths as in ``_bracket_expressions``: every length >= 1
    occurs (1: a digit, 2: -d, 3: (d), 4: (-d)). The modulus is recorded in ``meta``.
    Features: ``nesting_depth`` (most brackets open at once) and ``operators`` (binary
    + and -).
    """

    name = "modular_arithmetic_brackets"
    meta_keys = ("modulus",)
    family = "context_free"
    description = "bracketed + - expression over digits 0..m-1 (unary minus as -d, (-d)) -> value mod m"
    params_type = BracketParams

    def possible_answer(self, example: Mapping[str, Any], answer: str) -> bool:
        """Answers are 0..modulus-1 (meta.modulus)."""
        return decimal_below(answer, self.meta(example, "modulus"))

    def generate(self, rng: np.random.Generator, n: int, params: BracketParams) -> Batch:
        lengths = sample_lengths(rng, n, params)
        built = _bracket_expressions(rng, lengths, params.modulus, params.max_length)
        targets = digit_tokens(built.value)
        features = {"nesting_depth": built.nesting, "operators": built.operators}
        return Batch(join_chars(built.codes, lengths), targets, features, meta={"modulus": params.modulus})

    def measure(self, example: Mapping[str, Any]) -> dict[str, int]:
        return _bracket_features(example["input"].split())

    def solve(self, example: Mapping[str, Any]) -> str:
        modulus = self.meta(example, "modulus")
        tokens = example["input"].split()
        _, value = _parse_linear(tokens, modulus, unknown=False)
        return str(value % modulus)

    def input_space_size(self, params: BracketParams) -> int | None:
        if params.max_length > COUNT_LIMIT:
            return None
        count, _ = _expression_counts(params.modulus, params.max_length)
        return sum(count[params.min_length : params.max_length + 1])


@dataclasses.dataclass(frozen=True)
class SolveEquationParams(BracketParams):
    """Equation length range (tokens: the expression, ``=`` and the value) and the modulus."""

    min_length: int = knob(3, lo=3, hi=MAX_LENGTH, doc="shortest input, in tokens (expression + 2)")
    max_length: int = knob(40, lo=3, hi=MAX_LENGTH, doc="longest input, in tokens (expression + 2)")


@register
class SolveEquation(SequenceTask[SolveEquationParams]):
    """Bracketed + - expression with one digit replaced by x, ``=``, its value -> the digit.

    The expression (length L-2 for an input of L tokens) follows the grammar of
    modular_arithmetic_brackets; x replaces one of its digits, chosen uniformly. With only
    + and -, x has coefficient +1 or -1, so exactly one digit mod m solves the equation.
    The modulus is recorded in ``meta``. Features: ``nesting_depth``, ``operators`` and
    ``x_depth`` (brackets around x).
    """

    name = "solve_equation"
    meta_keys = ("modulus",)
    family = "context_free"
    description = "bracketed + - expression with one digit replaced by x, = value -> the digit x stands for"
    params_type = SolveEquationParams
    shortest = 3

    def possible_answer(self, example: Mapping[str, Any], answer: str) -> bool:
        """Answers are 0..modulus-1 (meta.modulus)."""
        return decimal_below(answer, self.meta(example, "modulus"))

    def generate(self, rng: np.random.Generator, n: int, params: SolveEquationParams) -> Batch:
        lengths = sample_lengths(rng, n, params)
        size = lengths - 2
        width = params.max_length
        built = _bracket_expressions(rng, size, params.modulus, width, digit_depth=True)
        codes, digit_depth = built.codes, built.digit_depth
        assert digit_depth is not None
        # x replaces the k-th digit from the left, k uniform over the row's digits.
        is_digit = codes >= ZERO  # digits are the only codes from ZERO up (NUL ( ) + - lie below)
        rank = np.cumsum(is_digit, axis=1, dtype=np.int32)
        chosen = rng.integers(0, rank[:, -1]) + 1
        place = np.argmax(rank == chosen[:, None], axis=1)  # rank first reaches k at the digit
        rows = np.arange(n)
        targets = codes[rows, place].view("S1").copy()
        x_depth = digit_depth[rows, place].astype(np.int64)
        codes[rows, place] = X
        codes[rows, size] = EQUALS
        codes[rows, size + 1] = digits_to_chars(built.value)
        features = {"nesting_depth": built.nesting, "operators": built.operators, "x_depth": x_depth}
        return Batch(join_chars(codes, lengths), targets, features, meta={"modulus": params.modulus})

    def measure(self, example: Mapping[str, Any]) -> dict[str, int]:
        tokens = example["input"].split()
        expression = tokens[: tokens.index("=")]
        x = expression.index("x")
        x_depth = expression[:x].count("(") - expression[:x].count(")")
        return {**_bracket_features(expression), "x_depth": x_depth}

    def solve(self, example: Mapping[str, Any]) -> str:
        modulus = self.meta(example, "modulus")
        tokens = example["input"].split()
        if len(tokens) < 3 or tokens[-2] != "=":
            raise ValueError("expected an expression, '=' and a value")
        rhs = tokens[-1]
        if len(rhs) != 1 or rhs not in DIGITS[:modulus]:
            raise ValueError(f"bad right-hand side {rhs!r}")
        expression = tokens[:-2]
        if expression.count("x") != 1:
            raise ValueError("the expression needs exactly one x")
        a, b = _parse_linear(expression, modulus, unknown=True)
        a %= modulus
        if a not in (1, modulus - 1):
            raise ValueError("x does not have coefficient +1 or -1")
        return str((int(rhs) - b) * a % modulus)  # a = +-1 is its own inverse

    def input_space_size(self, params: SolveEquationParams) -> int | None:
        if params.max_length > COUNT_LIMIT:
            return None
        # An input is an expression with a marked digit (x); the value follows from x.
        _, marked = _expression_counts(params.modulus, params.max_length)
        return sum(marked[params.min_length - 2 : params.max_length - 1])
