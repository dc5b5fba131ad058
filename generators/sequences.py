"""Shared pieces of sequence tasks: length parameters, the SequenceTask base, random symbols.

Most algorithmic tasks have a length knob: the number of input tokens, drawn uniformly
from [min_length, max_length] per example. Levels 1..10 cover consecutive length bands
(1-5, 6-10, 11-20, 21-40, 41-60, 61-80, 81-100, 101-200, 201-350, 351-500), so levels
1-4 are the training range of Deletang et al. (1..40) and levels 5-10 lie beyond it.
:class:`SequenceTask` derives a task's levels and input-space size from its params type.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, ClassVar, Iterator, TypeVar

import numpy as np

from gengap.generators.params import Params, knob
from gengap.generators.task import Task

MAX_LENGTH = 10_000
LEVEL_BOUNDS = (0, 5, 10, 20, 40, 60, 80, 100, 200, 350, 500)

P = TypeVar("P", bound="LengthParams")


@dataclasses.dataclass(frozen=True)
class LengthParams(Params):
    """Input length drawn uniformly from [min_length, max_length]."""

    min_length: int = knob(1, lo=1, hi=MAX_LENGTH, doc="shortest input, in tokens")
    max_length: int = knob(40, lo=1, hi=MAX_LENGTH, doc="longest input, in tokens")

    def check_consistency(self) -> None:
        self.require(
            self.min_length <= self.max_length,
            f"parameter min_length={self.min_length} exceeds max_length={self.max_length}",
        )


@dataclasses.dataclass(frozen=True)
class SymbolParams(LengthParams):
    """Length range plus the number of distinct symbols (tokens 0..alphabet_size-1)."""

    alphabet_size: int = knob(2, lo=2, hi=10, doc="number of symbols, written 0..9")


def length_levels(
    params_type: type[P], minimum: int = 1, valid: Callable[[int], bool] | None = None, **fixed: object
) -> dict[int, P]:
    """Levels 1..10 as consecutive length bands (see module doc), clipped below at minimum.

    ``valid`` restricts the bands to lengths a task accepts (e.g. odd lengths only): each
    band's bounds move inward to the nearest valid length.
    """
    levels = {}
    for k in range(1, 11):
        lo = max(LEVEL_BOUNDS[k - 1] + 1, minimum)
        hi = max(LEVEL_BOUNDS[k], lo)
        if valid is not None:
            while not valid(lo):
                lo += 1
            while not valid(hi) or hi < lo:
                hi += 1 if hi < lo else -1
        levels[k] = params_type(min_length=lo, max_length=hi, **fixed)  # type: ignore[arg-type]
    return levels


def sample_lengths(rng: np.random.Generator, n: int, params: LengthParams) -> np.ndarray:
    """Per-example lengths, uniform over [min_length, max_length] (int64)."""
    if params.min_length == params.max_length:
        return np.full(n, params.min_length, dtype=np.int64)
    return rng.integers(params.min_length, params.max_length + 1, size=n, dtype=np.int64)


def random_bits(rng: np.random.Generator, n: int, width: int) -> np.ndarray:
    """(n, width) uint8 matrix of fair random bits."""
    packed = rng.integers(0, 256, size=(n, -(-width // 8)), dtype=np.uint8)
    return np.unpackbits(packed, axis=1)[:, :width]


def random_symbols(rng: np.random.Generator, n: int, width: int, alphabet_size: int) -> np.ndarray:
    """(n, width) uint8 matrix of symbols uniform over 0..alphabet_size-1."""
    if alphabet_size == 2:
        return random_bits(rng, n, width)
    return rng.integers(0, alphabet_size, size=(n, width), dtype=np.uint8)


def past_length(lengths: np.ndarray, width: int) -> np.ndarray:
    """(n, width) boolean mask of positions at or beyond each row's length."""
    return np.arange(width)[None, :] >= lengths[:, None]


def reverse_rows(matrix: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Each row's first lengths[i] entries reversed; entries past the length are unspecified."""
    width = matrix.shape[1]
    source = lengths[:, None] - 1 - np.arange(width)[None, :]
    return np.take_along_axis(matrix, np.clip(source, 0, width - 1), axis=1)


def parse_tokens(text: str, alphabet: str) -> list[str]:
    """Whitespace tokens of text, each one character of alphabet; ValueError otherwise (also
    for an empty text)."""
    tokens = text.split()
    if not tokens:
        raise ValueError("empty input")
    for token in tokens:
        if len(token) != 1 or token not in alphabet:
            raise ValueError(f"unexpected token {token!r}")
    return tokens


def parse_symbols(text: str, alphabet: str = "01") -> list[int]:
    """Tokens of text as symbol values (positions in alphabet); ValueError as parse_tokens."""
    return [alphabet.index(token) for token in parse_tokens(text, alphabet)]


def strings_of_length_range(alphabet_size: int, params: LengthParams) -> int:
    """How many strings over alphabet_size symbols have a length in the params' range."""
    return sum(alphabet_size**length for length in range(params.min_length, params.max_length + 1))


class SequenceTask(Task[P]):
    """A task whose size knob is the input length in tokens (``params_type`` is LengthParams or
    a subclass).

    ``levels()`` are the length bands of this module for ``params_type``, starting at
    ``shortest`` tokens, each band moved inward to lengths ``valid_length`` accepts.
    ``input_space_size(params)`` counts every string of the range over ``alphabet`` symbols
    (the params' ``alphabet_size`` when they have one); a task whose inputs are constrained
    (an operator grammar, a mask) overrides it.
    """

    shortest: ClassVar[int] = 1  # fewest input tokens the task accepts
    alphabet: ClassVar[int | None] = None  # symbols per position when fixed (else params.alphabet_size)

    def valid_length(self, length: int) -> bool:
        """Whether inputs of this many tokens exist (e.g. odd lengths only); all by default."""
        return True

    def levels(self) -> dict[int, P]:
        return length_levels(self.params_type, minimum=self.shortest, valid=self.valid_length)  # type: ignore[arg-type]

    def input_space_size(self, params: P) -> int | None:
        count: Any = getattr(params, "alphabet_size", None) or self.alphabet
        return strings_of_length_range(count, params) if count else None  # type: ignore[arg-type]


def uniform_stream(rng: np.random.Generator, chunk: int = 4096) -> Iterator[float]:
    """Endless uniforms in [0, 1) drawn from rng in chunks (deterministic consumption)."""
    while True:
        yield from rng.random(chunk).tolist()


class UniformBuffer:
    """The values of :func:`uniform_stream`, taken k at a time as lists, for code that knows
    how many uniforms a step consumes: the same sequence and the same chunks drawn from rng,
    each chunk drawn only when one of its values is taken (so rng ends in the same state)."""

    def __init__(self, rng: np.random.Generator, chunk: int = 4096) -> None:
        self.rng = rng
        self.chunk = chunk
        self.values: list[float] = []
        self.pos = 0

    def take(self, k: int) -> list[float]:
        """The next k uniforms."""
        end = self.pos + k
        if end > len(self.values):
            rest = self.values[self.pos :]
            while len(rest) < k:
                rest += self.rng.random(self.chunk).tolist()
            self.values, self.pos, end = rest, 0, k
        taken = self.values[self.pos : end]
        self.pos = end
        return taken
