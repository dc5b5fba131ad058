"""Context-sensitive tasks (Deletang et al. 2023, level CS)."""

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
    SymbolParams,
    parse_symbols,
    parse_tokens,
    past_length,
    random_bits,
    random_symbols,
    sample_lengths,
)
from gengap.generators.text import DIGITS, digits_to_chars, join_chars
from gengap.generators.traces import (
    COLUMN_FORMATS,
    COLUMN_WIDTHS,
    COPY_HINTS,
    column_trace,
    hinted,
    inductive,
    split_steps,
    split_target,
    trace_format,
    trace_knob,
    verify_columns,
    with_traces,
)


@dataclasses.dataclass(frozen=True)
class CopyParams(SymbolParams):
    """Length range, alphabet and the trace format (index hints)."""

    trace: str = trace_knob("index_hints")


def _copied_symbols(example: Mapping[str, Any], positions: Any) -> list[str]:
    """The index_hints trace of a task whose answer copies the input symbols at positions (a
    function of the input length): per symbol written, its input position's hint, then it."""
    symbols = [str(s) for s in parse_symbols(example["input"], DIGITS)]
    return hinted((i, [symbols[i]]) for i in positions(len(symbols)))


@register
class DuplicateString(SequenceTask[CopyParams]):
    """String s -> s s."""

    name = "duplicate_string"
    family = "context_sensitive"
    description = "string s -> s s (the string written twice)"
    params_type = CopyParams
    trace_formats = {
        "index_hints": f"{COPY_HINTS}: p0 .. p(n-1) twice",
    }

    def trace_tokens(self, example: Mapping[str, Any], fmt: str) -> list[str]:
        return _copied_symbols(example, lambda n: [*range(n), *range(n)])

    def generate(self, rng: np.random.Generator, n: int, params: CopyParams) -> Batch:
        lengths = sample_lengths(rng, n, params)
        width = params.max_length
        codes = digits_to_chars(random_symbols(rng, n, width, params.alphabet_size))
        if params.min_length == params.max_length:
            doubled = np.concatenate([codes, codes], axis=1)
        else:
            position = np.arange(2 * width, dtype=np.int32)[None, :]
            short = lengths.astype(np.int32)[:, None]
            source = position - short * (position >= short)
            np.minimum(source, width - 1, out=source)
            doubled = np.take_along_axis(codes, source, axis=1)
        return with_traces(self, Batch(join_chars(codes, lengths), join_chars(doubled, 2 * lengths)), params.trace)

    def measure(self, example: Mapping[str, Any]) -> dict[str, int]:
        return {}  # no features besides the lengths

    def solve(self, example: Mapping[str, Any]) -> str:
        symbols = parse_symbols(example["input"], DIGITS)
        return " ".join(str(s) for s in symbols + symbols)


@dataclasses.dataclass(frozen=True)
class BucketSortParams(SymbolParams):
    alphabet_size: int = knob(5, lo=2, hi=10, doc="number of symbols, written 0..9")
    trace: str = trace_knob("coarse", "fine", "inductive")


@register
class BucketSort(SequenceTask[BucketSortParams]):
    """String over 0..k-1 -> its symbols sorted ascending."""

    name = "bucket_sort"
    family = "context_sensitive"
    description = "string of symbols 0..k-1 -> the symbols sorted ascending"
    params_type = BucketSortParams
    trace_formats = {
        "coarse": "the bucket counts: for each symbol that occurs, ascending, the symbol and its count",
        "fine": "for every input position, how many times its symbol occurred up to there; then the coarse counts",
        "inductive": "per input symbol, a state: '#', the symbol read, then the bucket counts so far (each symbol "
        "read so far, ascending, and its count)",
    }
    trace_step_widths = {"coarse": 2}

    def generate(self, rng: np.random.Generator, n: int, params: BucketSortParams) -> Batch:
        lengths = sample_lengths(rng, n, params)
        width = params.max_length
        symbols = random_symbols(rng, n, width, params.alphabet_size)
        padded = symbols.copy()
        beyond = past_length(lengths, width)
        padded[beyond] = 255
        ordered = np.sort(padded, axis=1, kind="stable")  # radix sort for uint8
        changes = (ordered[:, 1:] != ordered[:, :-1]) & ~beyond[:, 1:]
        distinct = changes.sum(axis=1, dtype=np.int64) + 1
        batch = Batch(
            join_chars(digits_to_chars(symbols), lengths),
            join_chars(digits_to_chars(ordered), lengths),
            {"distinct_symbols": distinct},
        )
        return with_traces(self, batch, params.trace)

    def trace_tokens(self, example: Mapping[str, Any], fmt: str) -> list[str]:
        counts = [0] * 10
        running = []
        states = []
        for s in parse_symbols(example["input"], DIGITS):
            counts[s] += 1
            running.append(str(counts[s]))
            states.append([str(s), *_buckets(counts)])
        if fmt == "inductive":
            return inductive(states)
        return running + _buckets(counts) if fmt == "fine" else _buckets(counts)

    def trace_steps(self, trace: list[str], fmt: str, example: Mapping[str, Any] | None = None) -> list[list[str]]:
        """Fine: one step per input position's count, then one per (symbol, count) pair."""
        if fmt != "fine" or example is None:
            return super().trace_steps(trace, fmt, example)
        n = len(example["input"].split())
        return [[t] for t in trace[:n]] + split_steps(trace[n:], fmt, 2)

    def measure(self, example: Mapping[str, Any]) -> dict[str, int]:
        return {"distinct_symbols": len(set(example["input"].split()))}

    def solve(self, example: Mapping[str, Any]) -> str:
        symbols = parse_symbols(example["input"], DIGITS)
        counts = [0] * 10
        for s in symbols:
            counts[s] += 1
        return " ".join(str(s) for s in range(10) for _ in range(counts[s]))


def _buckets(counts: list[int]) -> list[str]:
    """Each symbol with a nonzero count, ascending, followed by its count."""
    return [str(v) for s, c in enumerate(counts) if c for v in (s, c)]


# -- shared pieces of the tasks below -----------------------------------------------------


def _nonzero_bits(rng: np.random.Generator, widths: np.ndarray, width: int) -> np.ndarray:
    """(n, width) uint8 bits; row i is uniform over the nonzero values of widths[i] >= 1 bits.

    Bits at or past a row's width are 0 (rejection sampling: all-zero rows are redrawn).
    """
    n = len(widths)
    beyond = past_length(widths, width)
    bits = random_bits(rng, n, width)
    bits[beyond] = 0
    redo = np.flatnonzero(~bits.any(axis=1))
    while len(redo):
        fresh = random_bits(rng, len(redo), width)
        fresh[beyond[redo]] = 0
        bits[redo] = fresh
        redo = redo[~fresh.any(axis=1)]
    return bits


def _ints_from_bits(bits: np.ndarray, bitorder: str) -> list[int]:
    """Python ints of the rows of an (n, w) bit matrix read in the given bit order.

    ``little``: column j weighs 2**j; ``big``: the row is read as a number of
    8 * ceil(w / 8) bits, most significant first (so shift right to drop the padding).
    """
    packed = np.packbits(bits, axis=1, bitorder=bitorder)
    size = packed.shape[1]
    raw = packed.tobytes()
    order = "little" if bitorder == "little" else "big"
    return [int.from_bytes(raw[i : i + size], order) for i in range(0, len(raw), size)]


def _bits_from_ints(values: list[int], size: int, bitorder: str) -> np.ndarray:
    """(n, 8 * size) uint8 bit matrix of non-negative ints below 2**(8 * size)."""
    order = "little" if bitorder == "little" else "big"
    raw = b"".join(v.to_bytes(size, order) for v in values)
    packed = np.frombuffer(raw, dtype=np.uint8).reshape(len(values), size)
    return np.unpackbits(packed, axis=1, bitorder=bitorder)


def _rows_by_length(lengths: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """(length, row indices) for each distinct length, rows in ascending order."""
    order = np.argsort(lengths, kind="stable")
    ordered = lengths[order]
    cuts = (np.flatnonzero(np.diff(ordered)) + 1).tolist()
    starts, ends = [0] + cuts, cuts + [len(lengths)]
    return [(int(ordered[s]), order[s:e]) for s, e in zip(starts, ends)]


# -- missing_duplicate_string ---------------------------------------------------------------

MASK = ord("_")
PAD = ord("#")
_MDS_MIN = 2


@dataclasses.dataclass(frozen=True)
class MissingDuplicateParams(SymbolParams):
    """Input length L >= 2: |s| = L // 2, plus a trailing ``#`` when L is odd."""

    min_length: int = knob(
        _MDS_MIN, lo=_MDS_MIN, hi=MAX_LENGTH, doc="shortest input, in tokens (>= 2; |s| = length // 2)"
    )
    max_length: int = knob(40, lo=_MDS_MIN, hi=MAX_LENGTH, doc="longest input, in tokens")


@register
class MissingDuplicateString(SequenceTask[MissingDuplicateParams]):
    """``s s`` with one position replaced by ``_`` (then ``#`` if the length is odd) -> that digit.

    A requested input length L gives |s| = L // 2 >= 1: the 2|s| tokens of ``s s`` with
    the masked position uniform over all 2|s|, then ``#`` when L is odd, so the input has
    exactly L tokens. Features: ``string_length`` (|s|) and ``missing_position``
    (0-indexed position of ``_``).
    """

    name = "missing_duplicate_string"
    family = "context_sensitive"
    description = "s s with one symbol masked by _ ('#' appended at odd lengths) -> the masked symbol"
    params_type = MissingDuplicateParams
    answer_tokens = ("0", "1")
    shortest = _MDS_MIN
    size_knob = "input length in tokens (min_length..max_length, at least 2; smaller requests are raised to 2)"

    def generate(self, rng: np.random.Generator, n: int, params: MissingDuplicateParams) -> Batch:
        lengths = sample_lengths(rng, n, params)
        half = lengths // 2
        width = params.max_length
        symbols = random_symbols(rng, n, max(width // 2, 1), params.alphabet_size)
        position = np.arange(width)[None, :]
        source = np.where(position < half[:, None], position, position - half[:, None])
        codes = digits_to_chars(np.take_along_axis(symbols, np.clip(source, 0, symbols.shape[1] - 1), axis=1))
        missing = rng.integers(0, 2 * half, dtype=np.int64)
        rows = np.arange(n)
        answer = digits_to_chars(symbols[rows, np.where(missing < half, missing, missing - half)])
        codes[rows, missing] = MASK
        odd = np.flatnonzero(lengths & 1)
        codes[odd, lengths[odd] - 1] = PAD
        return Batch(
            join_chars(codes, lengths),
            answer.astype(np.uint8).view("S1"),
            {"string_length": half, "missing_position": missing},
        )

    def measure(self, example: Mapping[str, Any]) -> dict[str, int]:
        tokens = example["input"].split()
        return {"string_length": len(tokens) // 2, "missing_position": tokens.index("_")}

    def solve(self, example: Mapping[str, Any]) -> str:
        tokens = parse_tokens(example["input"], DIGITS + "_#")
        if len(tokens) % 2:
            if tokens[-1] != "#":
                raise ValueError("an input of odd length ends with '#'")
            tokens = tokens[:-1]
        if not tokens or "#" in tokens:
            raise ValueError("'#' may only close an input of odd length")
        if tokens.count("_") != 1:
            raise ValueError("exactly one position is masked by '_'")
        half = len(tokens) // 2
        first, second = tokens[:half], tokens[half:]
        for x, y in zip(first, second):
            if x != y and "_" not in (x, y):
                raise ValueError("the two halves differ outside the masked position")
        hole = tokens.index("_")
        return tokens[hole + half] if hole < half else tokens[hole - half]

    def input_space_size(self, params: MissingDuplicateParams) -> int:
        k = params.alphabet_size
        return sum(k ** (length // 2) * 2 * (length // 2) for length in range(params.min_length, params.max_length + 1))


# -- odds_first ---------------------------------------------------------------------------


@register
class OddsFirst(SequenceTask[CopyParams]):
    """s1 s2 ... sn -> s1 s3 s5 ... s2 s4 s6 ... (1-indexed odd positions first).

    This is the docstring version of Deletang et al. (0 0 1 1 0 1 0 1 -> 0 1 0 0 0 1 1 1),
    not their code's. Feature ``displaced``: output positions whose token differs from the
    input token at the same position.
    """

    name = "odds_first"
    family = "context_sensitive"
    description = "string s1 s2 ... sn -> s1 s3 s5 ... then s2 s4 s6 ... (odd positions first, 1-indexed)"
    params_type = CopyParams
    trace_formats = {
        "index_hints": f"{COPY_HINTS}: p0 p2 p4 ... then p1 p3 ...",
    }

    def trace_tokens(self, example: Mapping[str, Any], fmt: str) -> list[str]:
        return _copied_symbols(example, lambda n: [*range(0, n, 2), *range(1, n, 2)])

    def generate(self, rng: np.random.Generator, n: int, params: CopyParams) -> Batch:
        lengths = sample_lengths(rng, n, params)
        width = params.max_length
        codes = digits_to_chars(random_symbols(rng, n, width, params.alphabet_size))
        if params.min_length == params.max_length:
            shuffled = np.concatenate([codes[:, 0::2], codes[:, 1::2]], axis=1)
        else:  # rows grouped by length: two strided copies per group beat a per-cell gather
            shuffled = np.zeros_like(codes)
            for length, rows in _rows_by_length(lengths):
                odds = (length + 1) // 2
                head = codes[rows, :length]
                shuffled[rows, :odds] = head[:, 0::2]
                shuffled[rows, odds:length] = head[:, 1::2]
        differ = shuffled != codes
        if params.min_length != params.max_length:
            differ &= ~past_length(lengths, width)
        displaced = differ.sum(axis=1, dtype=np.int64)
        batch = Batch(join_chars(codes, lengths), join_chars(shuffled, lengths), {"displaced": displaced})
        return with_traces(self, batch, params.trace)

    def measure(self, example: Mapping[str, Any]) -> dict[str, int]:
        answer = split_target(example["target"]) if trace_format(example) != "none" else None
        pairs = zip(example["input"].split(), answer[1] if answer else example["target"].split())
        return {"displaced": sum(1 for a, b in pairs if a != b)}

    def solve(self, example: Mapping[str, Any]) -> str:
        symbols = parse_symbols(example["input"], DIGITS)
        odd_positions = [symbols[i] for i in range(0, len(symbols), 2)]
        even_positions = [symbols[i] for i in range(1, len(symbols), 2)]
        return " ".join(str(s) for s in odd_positions + even_positions)


# -- binary_addition and binary_multiplication ---------------------------------------------

_BINARY_MIN = 3


@dataclasses.dataclass(frozen=True)
class BinaryOperationParams(LengthParams):
    """Input length L = w_n + 1 + w_m >= 3 (operand widths w_n, w_m >= 1)."""

    min_length: int = knob(_BINARY_MIN, lo=_BINARY_MIN, hi=MAX_LENGTH, doc="shortest input, in tokens (>= 3)")
    max_length: int = knob(40, lo=_BINARY_MIN, hi=MAX_LENGTH, doc="longest input, in tokens")


@dataclasses.dataclass(frozen=True)
class BinaryAdditionParams(BinaryOperationParams):
    """Input length range and the trace format."""

    trace: str = trace_knob(*COLUMN_FORMATS)


def _binary_operands(
    rng: np.random.Generator, n: int, params: BinaryOperationParams, operator: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Lengths, widths w_n and w_m, aligned little-endian operand bits and the input texts.

    w_n is uniform over 1..L-2 and w_m = L - 1 - w_n; each operand is uniform over
    [1, 2**w - 1], written least significant bit first and padded with 0 to its width.
    The operand bit matrices are (n, max_length) with 0 past each operand's width.
    """
    lengths = sample_lengths(rng, n, params)
    width = params.max_length
    width_n = rng.integers(1, lengths - 1, dtype=np.int64)
    width_m = lengths - 1 - width_n
    a = _nonzero_bits(rng, width_n, width)
    b = _nonzero_bits(rng, width_m, width)
    position = np.arange(width)[None, :]
    shifted = np.take_along_axis(b, np.clip(position - width_n[:, None] - 1, 0, width - 1), axis=1)
    codes = digits_to_chars(np.where(position < width_n[:, None], a, shifted))
    codes[np.arange(n), width_n] = ord(operator)
    return lengths, width_n, width_m, a, b, join_chars(codes, lengths)


def _strip_high_zeros(bits: np.ndarray) -> np.ndarray:
    """Per row of a little-endian bit matrix: index of the highest 1 plus 1 (1 for zero)."""
    nonzero = bits != 0
    highest = bits.shape[1] - np.argmax(nonzero[:, ::-1], axis=1)
    return np.where(nonzero.any(axis=1), highest, 1).astype(np.int64)


def _parse_binary_operation(text: str, operator: str) -> tuple[int, int]:
    """Operands of ``n <op> m`` written little-endian, one bit per token."""
    tokens = parse_tokens(text, "01" + operator)
    if tokens.count(operator) != 1:
        raise ValueError(f"input needs exactly one {operator!r}")
    split = tokens.index(operator)
    left, right = tokens[:split], tokens[split + 1 :]
    if not left or not right:
        raise ValueError("both operands need at least one bit")
    return int("".join(reversed(left)), 2), int("".join(reversed(right)), 2)


def _little_endian(value: int) -> str:
    """value in binary, least significant bit first, without trailing zeros ('0' for 0)."""
    return " ".join(reversed(bin(value)[2:]))


def _binary_space(params: BinaryOperationParams) -> int:
    # sum over w = 1..L-2 of (2^w - 1)(2^(L-1-w) - 1) = (L - 4) 2^(L-1) + L + 2
    return sum((L - 4) * 2 ** (L - 1) + L + 2 for L in range(params.min_length, params.max_length + 1))


@register
class BinaryAddition(SequenceTask[BinaryAdditionParams]):
    """Little-endian ``n + m`` -> little-endian n + m without trailing zeros.

    Features: ``width_n``, ``width_m`` (operand widths in the input) and ``carries``
    (bit columns whose carry out is 1).
    """

    name = "binary_addition"
    family = "context_sensitive"
    description = "little-endian binary n + m (widths summing to length - 1) -> little-endian sum"
    params_type = BinaryAdditionParams
    trace_formats = {name: text.replace("digit", "bit") for name, text in COLUMN_FORMATS.items()}
    trace_step_widths = COLUMN_WIDTHS
    shortest = _BINARY_MIN
    size_knob = "input length in tokens (min_length..max_length, at least 3; smaller requests are raised to 3)"

    def generate(self, rng: np.random.Generator, n: int, params: BinaryAdditionParams) -> Batch:
        _, width_n, width_m, a, b, inputs = _binary_operands(rng, n, params, "+")
        columns = int(max(width_n.max(), width_m.max()))
        a_cols = np.ascontiguousarray(a[:, :columns].T)
        b_cols = np.ascontiguousarray(b[:, :columns].T)
        total = np.empty((columns + 1, n), dtype=np.uint8)
        carry = np.zeros(n, dtype=np.uint8)
        carries = np.zeros(n, dtype=np.int64)
        for j in range(columns):
            column = a_cols[j] + b_cols[j] + carry
            np.bitwise_and(column, 1, out=total[j])
            np.right_shift(column, 1, out=carry)
            carries += carry
        total[columns] = carry
        total = np.ascontiguousarray(total.T)
        batch = Batch(
            inputs,
            join_chars(digits_to_chars(total), _strip_high_zeros(total)),
            {"width_n": width_n, "width_m": width_m, "carries": carries},
        )
        return with_traces(self, batch, params.trace)

    def trace_tokens(self, example: Mapping[str, Any], fmt: str) -> list[str]:
        a, b = self._operand_bits(example)
        return column_trace(a, b, 2, fmt)

    def verify_trace(self, example: Mapping[str, Any], trace: list[str], fmt: str) -> bool:
        a, b = self._operand_bits(example)
        return verify_columns(trace, a, b, 2, fmt)

    def _operand_bits(self, example: Mapping[str, Any]) -> tuple[list[int], list[int]]:
        """The two operands' bits as written (little-endian, padding zeros kept)."""
        tokens = parse_tokens(example["input"], "01+")
        if tokens.count("+") != 1:
            raise ValueError("input needs exactly one '+'")
        split = tokens.index("+")
        return [int(t) for t in tokens[:split]], [int(t) for t in tokens[split + 1 :]]

    def measure(self, example: Mapping[str, Any]) -> dict[str, int]:
        tokens = example["input"].split()
        left, right = _parse_binary_operation(example["input"], "+")
        carried = (left + right) ^ left ^ right  # bit j: the carry into column j
        return {"width_n": tokens.index("+"), "width_m": len(tokens) - tokens.index("+") - 1, "carries": bin(carried >> 1).count("1")}

    def solve(self, example: Mapping[str, Any]) -> str:
        left, right = _parse_binary_operation(example["input"], "+")
        return _little_endian(left + right)

    def input_space_size(self, params: BinaryAdditionParams) -> int:
        return _binary_space(params)


@register
class BinaryMultiplication(SequenceTask[BinaryOperationParams]):
    """Little-endian ``n * m`` -> little-endian n * m without trailing zeros.

    Operands follow the width convention of binary_addition, so both are >= 1 and the
    product is never zero (the checker still answers ``0`` for a zero operand).
    Features: ``width_n``, ``width_m`` and ``partial_products`` (1 bits of m: the shifted
    copies of n that schoolbook multiplication adds).
    """

    name = "binary_multiplication"
    family = "context_sensitive"
    description = "little-endian binary n * m (widths summing to length - 1, both >= 1) -> little-endian product"
    params_type = BinaryOperationParams
    shortest = _BINARY_MIN
    size_knob = "input length in tokens (min_length..max_length, at least 3; smaller requests are raised to 3)"

    def generate(self, rng: np.random.Generator, n: int, params: BinaryOperationParams) -> Batch:
        _, width_n, width_m, a, b, inputs = _binary_operands(rng, n, params, "*")
        products = [x * y for x, y in zip(_ints_from_bits(a, "little"), _ints_from_bits(b, "little"))]
        bits = _bits_from_ints(products, -(-params.max_length // 8), "little")
        sizes = np.fromiter((max(p.bit_length(), 1) for p in products), dtype=np.int64, count=n)
        return Batch(
            inputs,
            join_chars(digits_to_chars(bits), sizes),
            {"width_n": width_n, "width_m": width_m, "partial_products": b.sum(axis=1, dtype=np.int64)},
        )

    def measure(self, example: Mapping[str, Any]) -> dict[str, int]:
        tokens = example["input"].split()
        split = tokens.index("*")
        return {"width_n": split, "width_m": len(tokens) - split - 1, "partial_products": tokens[split + 1 :].count("1")}

    def solve(self, example: Mapping[str, Any]) -> str:
        left, right = _parse_binary_operation(example["input"], "*")
        return _little_endian(left * right)

    def input_space_size(self, params: BinaryOperationParams) -> int:
        return _binary_space(params)


# -- compute_sqrt -------------------------------------------------------------------------


@register
class ComputeSqrt(SequenceTask[LengthParams]):
    """A value in [1, 2**L - 1] as L big-endian bits -> floor(sqrt), ceil(L/2) big-endian bits.

    Feature ``value_bits``: significant bits of the value (L minus its leading zeros).
    """

    name = "compute_sqrt"
    family = "context_sensitive"
    description = "L-bit big-endian value (>= 1, zero-padded) -> floor(sqrt) as ceil(L/2) big-endian bits"
    params_type = LengthParams

    def generate(self, rng: np.random.Generator, n: int, params: LengthParams) -> Batch:
        lengths = sample_lengths(rng, n, params)
        width = params.max_length
        bits = _nonzero_bits(rng, lengths, width)  # left-aligned: read big-endian, padded with 0
        padding = 8 * -(-width // 8) - lengths
        values = [v >> int(p) for v, p in zip(_ints_from_bits(bits, "big"), padding)]
        halves = (lengths + 1) // 2
        out_size = -(-((width + 1) // 2) // 8)
        # each root has at most ceil(L/2) bits: shift it to the top of its out_size bytes
        roots = [math.isqrt(v) << (8 * out_size - int(h)) for v, h in zip(values, halves)]
        root_bits = _bits_from_ints(roots, out_size, "big")
        value_bits = np.fromiter((v.bit_length() for v in values), dtype=np.int64, count=n)
        return Batch(join_chars(digits_to_chars(bits), lengths), join_chars(digits_to_chars(root_bits), halves), {"value_bits": value_bits})

    def measure(self, example: Mapping[str, Any]) -> dict[str, int]:
        return {"value_bits": int("".join(example["input"].split()), 2).bit_length()}

    def solve(self, example: Mapping[str, Any]) -> str:
        tokens = parse_tokens(example["input"], "01")
        value = int("".join(tokens), 2)
        # digit-by-digit (bitwise) integer square root
        root, remainder = 0, 0
        pairs = (len(tokens) + 1) // 2
        for k in range(pairs - 1, -1, -1):
            remainder = (remainder << 2) | ((value >> (2 * k)) & 3)
            trial = (root << 2) | 1
            root <<= 1
            if remainder >= trial:
                remainder -= trial
                root |= 1
        return " ".join(format(root, f"0{pairs}b"))

    def input_space_size(self, params: LengthParams) -> int:
        return sum(2**L - 1 for L in range(params.min_length, params.max_length + 1))
