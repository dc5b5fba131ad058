"""Regular-language tasks (Deletang et al. 2023, level R)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

import numpy as np

from gengap.generators.batch import Batch
from gengap.generators.params import knob
from gengap.generators.registry import register
from gengap.generators.sequences import (
    MAX_LENGTH,
    LengthParams,
    SequenceTask,
    parse_symbols,
    parse_tokens,
    past_length,
    random_bits,
    sample_lengths,
)
from gengap.generators.task import decimal_below
from gengap.generators.text import DIGITS, ZERO, digit_tokens, digits_to_chars, join_chars
from gengap.generators.traces import describe_running, inductive_states, read_digit, running_states, trace_knob, with_traces


@dataclasses.dataclass(frozen=True)
class ParityParams(LengthParams):
    """Input length range and the trace format."""

    trace: str = trace_knob("coarse", "fine", "inductive")


@register
class ParityCheck(SequenceTask[ParityParams]):
    """Binary string -> 1 if it has an odd number of 1s, else 0."""

    name = "parity_check"
    family = "regular"
    description = "binary string -> 1 if the number of 1s is odd, else 0"
    params_type = ParityParams
    answer_tokens = ("0", "1")
    alphabet = 2
    trace_formats = describe_running("the parity of the bits read so far", "bit", read="bit")

    def generate(self, rng: np.random.Generator, n: int, params: ParityParams) -> Batch:
        lengths = sample_lengths(rng, n, params)
        bits = random_bits(rng, n, params.max_length)
        if params.min_length != params.max_length:
            bits[past_length(lengths, params.max_length)] = 0
        ones = bits.sum(axis=1, dtype=np.int64)
        targets = digit_tokens(ones & 1)
        batch = Batch(join_chars(digits_to_chars(bits), lengths), targets, {"ones": ones})
        return with_traces(self, batch, params.trace)

    def trace_tokens(self, example: Mapping[str, Any], fmt: str) -> list[str]:
        bits = parse_symbols(example["input"])
        if fmt == "inductive":
            return inductive_states(0, bits, lambda parity, bit: parity ^ bit, example["input"].split())
        return [str(p) for p in running_states(0, bits, lambda parity, bit: parity ^ bit, fmt)]

    def measure(self, example: Mapping[str, Any]) -> dict[str, int]:
        return {"ones": example["input"].split().count("1")}

    def solve(self, example: Mapping[str, Any]) -> str:
        return str(sum(parse_symbols(example["input"])) % 2)


@register
class EvenPairs(SequenceTask[LengthParams]):
    """Binary string -> 0 if count("01") + count("10") is even, else 1.

    The number of 01/10 transitions is even exactly when the first and last bits agree.
    Feature ``transitions``: the number of adjacent unequal pairs.
    """

    name = "even_pairs"
    family = "regular"
    description = 'binary string -> 0 if count("01") + count("10") is even, else 1'
    params_type = LengthParams
    answer_tokens = ("0", "1")
    alphabet = 2

    def generate(self, rng: np.random.Generator, n: int, params: LengthParams) -> Batch:
        lengths = sample_lengths(rng, n, params)
        width = params.max_length
        bits = random_bits(rng, n, width)
        changes = bits[:, 1:] != bits[:, :-1]
        if params.min_length != params.max_length:
            changes &= ~past_length(lengths, width)[:, 1:]
        transitions = np.count_nonzero(changes, axis=1).astype(np.int64)
        targets = digit_tokens(transitions & 1)
        return Batch(join_chars(digits_to_chars(bits), lengths), targets, {"transitions": transitions})

    def measure(self, example: Mapping[str, Any]) -> dict[str, int]:
        bits = example["input"].split()
        return {"transitions": sum(1 for a, b in zip(bits, bits[1:]) if a != b)}

    def solve(self, example: Mapping[str, Any]) -> str:
        bits = parse_symbols(example["input"])
        pairs = sum(1 for a, b in zip(bits, bits[1:]) if a != b)
        return str(pairs % 2)


def _odd(length: int) -> bool:
    return length % 2 == 1


def _odd_bounds(lo: int, hi: int) -> tuple[int, int]:
    """Smallest and largest odd length in [lo, hi] (lo > hi when there is none)."""
    return (lo if lo % 2 else lo + 1), (hi if hi % 2 else hi - 1)


@dataclasses.dataclass(frozen=True)
class ModularArithmeticParams(LengthParams):
    """Odd input length range and the modulus (numbers are 0..modulus-1)."""

    modulus: int = knob(5, lo=2, hi=10, doc="numbers are 0..modulus-1; the value is taken mod modulus")
    trace: str = trace_knob()

    def check_consistency(self) -> None:
        super().check_consistency()
        lo, hi = _odd_bounds(self.min_length, self.max_length)
        self.require(
            lo <= hi,
            f"length range [{self.min_length}, {self.max_length}] holds no odd length "
            "(modular_arithmetic inputs have odd length)",
        )


@register
class ModularArithmetic(SequenceTask[ModularArithmeticParams]):
    """Numbers 0..m-1 alternating with + - * (odd length) -> the value mod m.

    ``*`` binds tighter than ``+`` and ``-``, which associate left. Lengths are drawn
    uniformly among the odd lengths in [min_length, max_length]; operators uniformly
    among + - *, numbers uniformly. The modulus is recorded in ``meta``. Features: the
    number of each operator (``additions``, ``subtractions``, ``multiplications``).
    """

    name = "modular_arithmetic"
    meta_keys = ("modulus",)
    family = "regular"
    description = "numbers 0..m-1 alternating with + - * (odd length) -> value mod m (* before + -)"
    params_type = ModularArithmeticParams

    size_knob = "input length in tokens, odd (min_length..max_length)"
    trace_formats = {
        "coarse": "the value mod m of each additive term (a run of numbers joined by *, "
        "negated after -), one token per term, left to right",
        "fine": "after every number, two tokens: the sum mod m of the terms completed so far "
        "and the running value mod m of the current term",
    }
    trace_step_widths = {"fine": 2}

    def valid_length(self, length: int) -> bool:
        return _odd(length)

    def with_size(self, lo: int, hi: int) -> ModularArithmeticParams:
        """Default params over [lo, hi]; a range without an odd length (lo = hi, even)
        becomes the next odd length, [hi+1, hi+1] (hi-1 at the length cap)."""
        if _odd_bounds(lo, hi)[0] > hi:
            lo = hi = hi + 1 if hi < MAX_LENGTH else hi - 1
        return self.default_params().replace(min_length=lo, max_length=hi)

    def possible_answer(self, example: Mapping[str, Any], answer: str) -> bool:
        """Answers are 0..modulus-1 (meta.modulus)."""
        return decimal_below(answer, self.meta(example, "modulus"))

    def generate(self, rng: np.random.Generator, n: int, params: ModularArithmeticParams) -> Batch:
        lo, hi = _odd_bounds(params.min_length, params.max_length)
        if lo == hi:
            lengths = np.full(n, lo, dtype=np.int64)
        else:
            lengths = lo + 2 * rng.integers(0, (hi - lo) // 2 + 1, size=n, dtype=np.int64)
        numbers_per_row = (lengths + 1) // 2
        slots = (hi + 1) // 2
        mod = params.modulus
        # Column-major layout (slot, example): the evaluation scans slots left to right.
        numbers = rng.integers(0, mod, size=(slots, n), dtype=np.uint8)
        ops = rng.integers(0, 3, size=(slots - 1, n), dtype=np.uint8)  # 0 + / 1 - / 2 *
        if lo != hi:  # padding evaluates to + 0 + 0 ... and is cut from the text
            numbers *= np.arange(slots)[:, None] < numbers_per_row[None, :]
            ops *= np.arange(slots - 1)[:, None] < numbers_per_row[None, :] - 1
        value = _evaluate_columns(numbers, ops, mod)
        columns = np.empty((hi, n), dtype=np.uint8)
        np.add(numbers, ZERO, out=columns[0::2])
        # ASCII of the operators: + is 43, - is 45, * is 42.
        np.add(ops + ops, 43, out=columns[1::2])
        columns[1::2] -= (ops == 2) * np.uint8(5)
        codes = np.ascontiguousarray(columns.T)
        subtractions = np.count_nonzero(ops == 1, axis=0).astype(np.int64)
        multiplications = np.count_nonzero(ops == 2, axis=0).astype(np.int64)
        features = {
            "additions": numbers_per_row - 1 - subtractions - multiplications,
            "subtractions": subtractions,
            "multiplications": multiplications,
        }
        targets = digit_tokens(value)
        batch = Batch(join_chars(codes, lengths), targets, features, meta={"modulus": mod})
        return with_traces(self, batch, params.trace)

    def trace_tokens(self, example: Mapping[str, Any], fmt: str) -> list[str]:
        modulus = self.meta(example, "modulus")
        tokens = example["input"].split()
        if len(tokens) % 2 == 0 or any(t not in DIGITS[:modulus] for t in tokens[0::2]):
            raise ValueError("input must alternate numbers 0..m-1 and operators")
        done, term = 0, int(tokens[0]) % modulus  # completed terms' sum, current term
        terms, states = [], [done, term]
        for op, number in zip(tokens[1::2], tokens[2::2]):
            x = int(number)
            if op == "*":
                term = term * x % modulus
            elif op in ("+", "-"):
                terms.append(term)
                done, term = (done + term) % modulus, (x if op == "+" else -x) % modulus
            else:
                raise ValueError(f"unexpected operator token {op!r}")
            states += [done, term]
        return [str(v) for v in (terms + [term] if fmt == "coarse" else states)]

    def verify_trace(self, example: Mapping[str, Any], trace: list[str], fmt: str) -> bool:
        """Coarse: one value per additive term, the term's signed product mod m computed term by
        term. Fine: one (sum, term) pair per number, each following from the previous written
        pair by the operator before the number."""
        modulus = self.meta(example, "modulus")
        tokens = example["input"].split()
        numbers, ops = [read_digit(t, modulus) for t in tokens[0::2]], tokens[1::2]
        written = [read_digit(t, modulus) for t in trace]
        if fmt == "coarse":
            cuts = [0] + [i + 1 for i, op in enumerate(ops) if op in "+-"] + [len(numbers)]
            signs = [1] + [1 if op == "+" else -1 for op in ops if op in "+-"]
            terms = [sign * math.prod(numbers[lo:hi]) % modulus for sign, lo, hi in zip(signs, cuts, cuts[1:])]
            return written == terms
        if len(written) != 2 * len(numbers) or written[:2] != [0, numbers[0]]:
            return False
        for i, op in enumerate(ops):
            done, term, x = written[2 * i], written[2 * i + 1], numbers[i + 1]
            if op == "*":
                expected = [done, term * x % modulus]
            elif op in "+-":
                expected = [(done + term) % modulus, (x if op == "+" else -x) % modulus]
            else:
                raise ValueError(f"unexpected operator token {op!r}")
            if written[2 * i + 2 : 2 * i + 4] != expected:
                return False
        return True

    def measure(self, example: Mapping[str, Any]) -> dict[str, int]:
        tokens = example["input"].split()
        return {"additions": tokens.count("+"), "subtractions": tokens.count("-"), "multiplications": tokens.count("*")}

    def solve(self, example: Mapping[str, Any]) -> str:
        modulus = self.meta(example, "modulus")
        tokens = example["input"].split()
        if len(tokens) % 2 == 0:
            raise ValueError("expected an odd number of tokens")
        digits = DIGITS[:modulus]
        total, product, sign = 0, 1, 1
        for i, token in enumerate(tokens):
            if i % 2 == 0:
                if len(token) != 1 or token not in digits:
                    raise ValueError(f"unexpected number token {token!r}")
                product = product * int(token) % modulus  # reduced as it goes: a long input stays cheap
            elif token == "*":
                continue
            elif token in ("+", "-"):
                total = (total + sign * product) % modulus
                product, sign = 1, (1 if token == "+" else -1)
            else:
                raise ValueError(f"unexpected operator token {token!r}")
        return str((total + sign * product) % modulus)

    def input_space_size(self, params: ModularArithmeticParams) -> int:
        lo, hi = _odd_bounds(params.min_length, params.max_length)
        return sum(
            params.modulus ** ((length + 1) // 2) * 3 ** ((length - 1) // 2) for length in range(lo, hi + 1, 2)
        )


def _division_magic(modulus: int, largest: int) -> tuple[int, int]:
    """(multiplier, shift) with (x * multiplier) >> shift == x // modulus for 0 <= x <= largest.

    The products stay below 2**16 so the reduction runs in uint16.
    """
    x = np.arange(largest + 1, dtype=np.int64)
    for shift in range(4, 17):
        multiplier = -(-(1 << shift) // modulus)
        if multiplier * largest < 1 << 16 and np.array_equal((x * multiplier) >> shift, x // modulus):
            return multiplier, shift
    raise ValueError(f"no uint16 division magic for modulus {modulus}")


def _evaluate_columns(numbers: np.ndarray, ops: np.ndarray, modulus: int) -> np.ndarray:
    """Values mod modulus of the expressions held column-wise (slot, example).

    ``numbers`` (slots, n) uint8 in [0, modulus), ``ops`` (slots-1, n) uint8 with
    0 ``+``, 1 ``-``, 2 ``*``. Scans the slots keeping each example's current product
    term as a residue: term_j = term_{j-1} * x_j mod m after a ``*``, else the signed
    number (x_j, or m - x_j after a ``-``). Each term counts at its last slot.
    Whole-matrix steps use arithmetic on masks (much faster than masked assignment).
    Returns int64 values in [0, modulus).
    """
    slots, n = numbers.shape
    m = np.uint8(modulus)
    multiply = ops == 2
    rest = numbers[1:]
    factor = rest * multiply  # x_j after a *, else 0
    start = np.empty((slots, n), dtype=np.uint8)  # signed residue after + or - (m for -0), 0 after *
    start[0] = numbers[0]
    np.multiply(rest + (ops == 1) * (m - rest - rest), ops != 2, out=start[1:])
    multiplier, shift = _division_magic(modulus, modulus * (modulus - 1))
    terms = np.empty((slots, n), dtype=np.uint16)  # terms[j]: the running term after slot j
    terms[0] = start[0]
    product = np.empty(n, dtype=np.uint16)
    quotient = np.empty(n, dtype=np.uint16)
    for j in range(1, slots):
        np.multiply(terms[j - 1], factor[j - 1], out=product)
        np.multiply(product, multiplier, out=quotient)
        np.right_shift(quotient, shift, out=quotient)
        np.multiply(quotient, modulus, out=quotient)
        np.subtract(product, quotient, out=product)
        np.add(product, start[j], out=terms[j])
    terms[:-1] *= ~multiply  # keep each term only at its last slot
    return (terms.sum(axis=0) % modulus).astype(np.int64)


@dataclasses.dataclass(frozen=True)
class CycleNavigationParams(LengthParams):
    """Input length range and the cycle length."""

    cycle_length: int = knob(5, lo=2, hi=10, doc="number of positions on the cycle (0..cycle_length-1)")
    trace: str = trace_knob("coarse", "fine", "inductive")


@register
class CycleNavigation(SequenceTask[CycleNavigationParams]):
    """Moves L S R (-1, 0, +1) from position 0 on a cycle -> the final position.

    Moves are uniform over L S R; the cycle length is recorded in ``meta``. Features:
    ``moves`` (L and R tokens) and ``displacement`` (|#R - #L|, before wrapping).
    """

    name = "cycle_navigation"
    meta_keys = ("cycle_length",)
    family = "regular"
    description = "moves L S R (-1, 0, +1) from 0 on a cycle of c positions -> the final position"
    params_type = CycleNavigationParams
    alphabet = 3
    trace_formats = describe_running("the position", "move", read="move")

    def possible_answer(self, example: Mapping[str, Any], answer: str) -> bool:
        """Answers are 0..cycle_length-1 (meta.cycle_length)."""
        return decimal_below(answer, self.meta(example, "cycle_length"))

    def generate(self, rng: np.random.Generator, n: int, params: CycleNavigationParams) -> Batch:
        lengths = sample_lengths(rng, n, params)
        width = params.max_length
        steps = rng.integers(0, 3, size=(n, width), dtype=np.uint8)  # 0 L / 1 S / 2 R
        if params.min_length != params.max_length:
            steps[past_length(lengths, width)] = 1
        net = steps.sum(axis=1, dtype=np.int64) - width  # sum of (step - 1)
        moves = width - np.count_nonzero(steps == 1, axis=1).astype(np.int64)
        codes = steps * np.uint8(7)  # ASCII: L is 76, S is 83, R is 82
        codes += 76
        codes -= (steps == 2) * np.uint8(8)
        targets = digit_tokens(net % params.cycle_length)
        features = {"moves": moves, "displacement": np.abs(net)}
        batch = Batch(join_chars(codes, lengths), targets, features, meta={"cycle_length": params.cycle_length})
        return with_traces(self, batch, params.trace)

    def trace_tokens(self, example: Mapping[str, Any], fmt: str) -> list[str]:
        cycle = self.meta(example, "cycle_length")
        delta = {"L": -1, "S": 0, "R": 1}
        moves = [delta[token] for token in parse_tokens(example["input"], "LSR")]
        if fmt == "inductive":
            return inductive_states(0, moves, lambda position, move: (position + move) % cycle, example["input"].split())
        return [str(p) for p in running_states(0, moves, lambda position, move: (position + move) % cycle, fmt)]

    def measure(self, example: Mapping[str, Any]) -> dict[str, int]:
        tokens = example["input"].split()
        left, right = tokens.count("L"), tokens.count("R")
        return {"moves": left + right, "displacement": abs(right - left)}

    def solve(self, example: Mapping[str, Any]) -> str:
        cycle = self.meta(example, "cycle_length")
        delta = {"L": -1, "S": 0, "R": 1}
        position = 0
        tokens = example["input"].split()
        if not tokens:
            raise ValueError("empty input")
        for token in tokens:
            if token not in delta:
                raise ValueError(f"unexpected token {token!r}")
            position = (position + delta[token]) % cycle
        return str(position)

