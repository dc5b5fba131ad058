"""Decimal arithmetic tasks.

``addition``: two non-negative operands with a digit-count range each (no leading zeros),
input ``a + b`` one token per digit, most significant digit first. Output formats:

- ``plain``: the sum, most significant digit first;
- ``reversed``: the sum, least significant digit first (Lee et al. 2023, Zhou et al. 2024);
- ``index_hints``: every digit of operands and sum is preceded by a position token ``p<i>``
  (i = 0 for the units digit), as in the index hints of Zhou et al.

The format is recorded in each record's ``meta`` so the checker can read the input.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import numpy as np

from generators.batch import Batch
from generators.params import Params, knob
from generators.registry import register
from generators.task import Task
from generators.text import join_chars, join_tokens

MAX_DIGITS = 1000
FORMATS = ("plain", "reversed", "index_hints")
PLUS = 10  # token id of "+" after the digit ids 0..9
HINT0 = 11  # token id of "p0"; "p<i>" is HINT0 + i
DIGIT_LEVELS = (1, 2, 3, 5, 8, 10, 15, 20, 30, 40)


@dataclasses.dataclass(frozen=True)
class AdditionParams(Params):
    """Digit-count ranges of the two operands and the output format."""

    min_digits_a: int = knob(1, lo=1, hi=MAX_DIGITS, doc="fewest digits of the first operand")
    max_digits_a: int = knob(10, lo=1, hi=MAX_DIGITS, doc="most digits of the first operand")
    min_digits_b: int = knob(1, lo=1, hi=MAX_DIGITS, doc="fewest digits of the second operand")
    max_digits_b: int = knob(10, lo=1, hi=MAX_DIGITS, doc="most digits of the second operand")
    format: str = knob("plain", choices=FORMATS, doc="output format: plain, reversed or index_hints")

    def check_consistency(self) -> None:
        for side in ("a", "b"):
            lo, hi = getattr(self, f"min_digits_{side}"), getattr(self, f"max_digits_{side}")
            self.require(lo <= hi, f"parameter min_digits_{side}={lo} exceeds max_digits_{side}={hi}")


def random_operands(rng: np.random.Generator, n: int, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """Digit counts (n,) and little-endian digits (n, hi) of numbers without leading zeros.

    Positions at or past a number's digit count hold 0.
    """
    counts = rng.integers(lo, hi + 1, size=n, dtype=np.int64) if lo < hi else np.full(n, lo, dtype=np.int64)
    digits = rng.integers(0, 10, size=(n, hi), dtype=np.int64)
    leading = rng.integers(1, 10, size=n, dtype=np.int64)
    rows = np.arange(n)
    digits[rows, counts - 1] = np.where(counts > 1, leading, digits[rows, counts - 1])
    digits[np.arange(hi)[None, :] >= counts[:, None]] = 0
    return counts, digits


def add_digits(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Little-endian digit sum of two (n, w) digit matrices.

    Returns the sum digits (n, w + 1), their count without leading zeros, and the number
    of carries per row.
    """
    n, width = a.shape
    total = np.zeros((n, width + 1), dtype=np.int64)
    carry = np.zeros(n, dtype=np.int64)
    carries = np.zeros(n, dtype=np.int64)
    for j in range(width):
        column = a[:, j] + b[:, j] + carry
        total[:, j] = column % 10
        carry = column // 10
        carries += carry
    total[:, width] = carry
    nonzero = total != 0
    highest = width + 1 - np.argmax(nonzero[:, ::-1], axis=1)
    length = np.where(nonzero.any(axis=1), highest, 1)
    return total, length, carries


def big_endian(little: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Each row's first counts[i] little-endian digits, most significant first."""
    width = little.shape[1]
    source = counts[:, None] - 1 - np.arange(width)[None, :]
    return np.take_along_axis(little, np.clip(source, 0, width - 1), axis=1)


def with_hints(big: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Token ids [p<c-1>, d, ..., p0, d] for big-endian digit rows of count c."""
    n, width = big.shape
    out = np.empty((n, 2 * width), dtype=np.int64)
    out[:, 1::2] = big
    out[:, 0::2] = HINT0 + np.maximum(counts[:, None] - 1 - np.arange(width)[None, :], 0)
    return out


def place(first: np.ndarray, first_len: np.ndarray, separator: int, second: np.ndarray, second_len: np.ndarray) -> np.ndarray:
    """Rows ``first[:first_len] separator second[:second_len]`` (entries past the end unspecified)."""
    n = first.shape[0]
    width = first.shape[1] + 1 + second.shape[1]
    position = np.arange(width)[None, :]
    from_first = np.take_along_axis(first, np.clip(position, 0, first.shape[1] - 1), axis=1)
    offset = position - first_len[:, None] - 1
    from_second = np.take_along_axis(second, np.clip(offset, 0, second.shape[1] - 1), axis=1)
    out = np.where(position < first_len[:, None], from_first, from_second)
    out[np.arange(n), first_len] = separator
    return out


def _vocab(max_hint: int) -> list[str]:
    return [str(d) for d in range(10)] + ["+"] + [f"p{i}" for i in range(max_hint)]


def _ascii(ids: np.ndarray) -> np.ndarray:
    table = np.frombuffer(b"0123456789+", dtype=np.uint8)
    return table[np.clip(ids, 0, PLUS)]


@register
class Addition(Task[AdditionParams]):
    """a + b in decimal, with plain, reversed or index-hint output."""

    name = "addition"
    family = "arithmetic"
    description = "decimal a + b (digit ranges per operand); output plain, reversed or with index hints"
    params_type = AdditionParams
    size_knob = "digits per operand (min_digits_*..max_digits_*)"

    def with_size(self, lo: int, hi: int) -> AdditionParams:
        return self.default_params().replace(min_digits_a=lo, max_digits_a=hi, min_digits_b=lo, max_digits_b=hi)

    def levels(self) -> dict[int, AdditionParams]:
        levels = {}
        for k, hi in enumerate(DIGIT_LEVELS, start=1):
            lo = DIGIT_LEVELS[k - 2] + 1 if k > 1 else 1
            levels[k] = AdditionParams(min_digits_a=lo, max_digits_a=hi, min_digits_b=lo, max_digits_b=hi)
        return levels

    def generate(self, rng: np.random.Generator, n: int, params: AdditionParams) -> Batch:
        count_a, a = random_operands(rng, n, params.min_digits_a, params.max_digits_a)
        count_b, b = random_operands(rng, n, params.min_digits_b, params.max_digits_b)
        width = max(a.shape[1], b.shape[1])
        a_wide = np.pad(a, ((0, 0), (0, width - a.shape[1])))
        b_wide = np.pad(b, ((0, 0), (0, width - b.shape[1])))
        total, count_sum, carries = add_digits(a_wide, b_wide)
        a_big, b_big, sum_big = big_endian(a, count_a), big_endian(b, count_b), big_endian(total, count_sum)
        if params.format == "index_hints":
            vocab = _vocab(width + 1)
            ids = place(with_hints(a_big, count_a), 2 * count_a, PLUS, with_hints(b_big, count_b), 2 * count_b)
            inputs = join_tokens(ids, 2 * (count_a + count_b) + 1, vocab)
            targets = join_tokens(with_hints(sum_big, count_sum), 2 * count_sum, vocab)
        else:
            ids = place(a_big, count_a, PLUS, b_big, count_b)
            inputs = join_chars(_ascii(ids), count_a + count_b + 1)
            out = sum_big if params.format == "plain" else total
            targets = join_chars(_ascii(out), count_sum)
        features = {"digits_a": count_a, "digits_b": count_b, "carries": carries}
        return Batch(inputs, targets, features, meta={"format": params.format})

    def solve(self, example: Mapping[str, Any]) -> str:
        fmt = (example.get("meta") or {}).get("format", "plain")
        tokens = example["input"].split()
        if fmt == "index_hints":
            digits = _strip_hints(tokens)
        elif fmt in ("plain", "reversed"):
            digits = tokens
        else:
            raise ValueError(f"unknown format {fmt!r}")
        if digits.count("+") != 1:
            raise ValueError("input needs exactly one '+'")
        split = digits.index("+")
        a, b = digits[:split], digits[split + 1 :]
        if not a or not b or not all(t in "0123456789" and len(t) == 1 for t in a + b):
            raise ValueError("operands must be non-empty digit sequences")
        total = str(int("".join(a)) + int("".join(b)))
        if fmt == "plain":
            return " ".join(total)
        if fmt == "reversed":
            return " ".join(total[::-1])
        size = len(total)
        return " ".join(f"p{size - 1 - i} {d}" for i, d in enumerate(total))

    def input_space_size(self, params: AdditionParams) -> int:
        def numbers(lo: int, hi: int) -> int:
            return sum(10 if d == 1 else 9 * 10 ** (d - 1) for d in range(lo, hi + 1))

        return numbers(params.min_digits_a, params.max_digits_a) * numbers(
            params.min_digits_b, params.max_digits_b
        )


def _strip_hints(tokens: list[str]) -> list[str]:
    """Digits and '+' of an index-hint input, checking each hint matches its position."""
    if "+" not in tokens:
        raise ValueError("input needs a '+'")
    split = tokens.index("+")
    out: list[str] = []
    for part in (tokens[:split], tokens[split + 1 :]):
        if len(part) % 2:
            raise ValueError("hint and digit tokens must alternate")
        size = len(part) // 2
        for i in range(size):
            if part[2 * i] != f"p{size - 1 - i}":
                raise ValueError(f"bad index hint {part[2 * i]!r}")
            out.append(part[2 * i + 1])
        out.append("+")
    return out[:-1]
