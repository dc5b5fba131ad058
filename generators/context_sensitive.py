"""Context-sensitive tasks (Deletang et al. 2023, level CS)."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import numpy as np

from generators.batch import Batch
from generators.params import knob
from generators.registry import register
from generators.sequences import (
    SymbolParams,
    length_levels,
    parse_symbols,
    past_length,
    random_symbols,
    sample_lengths,
    strings_of_length_range,
)
from generators.task import Task
from generators.text import join_chars

DIGITS = "0123456789"


@register
class DuplicateString(Task[SymbolParams]):
    """String s -> s s."""

    name = "duplicate_string"
    family = "context_sensitive"
    description = "string s -> s s (the string written twice)"
    params_type = SymbolParams

    def levels(self) -> dict[int, SymbolParams]:
        return length_levels(SymbolParams)

    def generate(self, rng: np.random.Generator, n: int, params: SymbolParams) -> Batch:
        lengths = sample_lengths(rng, n, params)
        width = params.max_length
        codes = random_symbols(rng, n, width, params.alphabet_size) + 48
        position = np.arange(2 * width)[None, :]
        source = np.where(position < lengths[:, None], position, position - lengths[:, None])
        doubled = np.take_along_axis(codes, np.clip(source, 0, width - 1), axis=1)
        return Batch(join_chars(codes, lengths), join_chars(doubled, 2 * lengths))

    def solve(self, example: Mapping[str, Any]) -> str:
        symbols = parse_symbols(example["input"], DIGITS)
        return " ".join(str(s) for s in symbols + symbols)

    def input_space_size(self, params: SymbolParams) -> int:
        return strings_of_length_range(params.alphabet_size, params)


@dataclasses.dataclass(frozen=True)
class BucketSortParams(SymbolParams):
    alphabet_size: int = knob(5, lo=2, hi=10, doc="number of symbols, written 0..9")


@register
class BucketSort(Task[BucketSortParams]):
    """String over 0..k-1 -> its symbols sorted ascending."""

    name = "bucket_sort"
    family = "context_sensitive"
    description = "string of symbols 0..k-1 -> the symbols sorted ascending"
    params_type = BucketSortParams

    def levels(self) -> dict[int, BucketSortParams]:
        return length_levels(BucketSortParams)

    def generate(self, rng: np.random.Generator, n: int, params: BucketSortParams) -> Batch:
        lengths = sample_lengths(rng, n, params)
        width = params.max_length
        symbols = random_symbols(rng, n, width, params.alphabet_size)
        padded = symbols.copy()
        beyond = past_length(lengths, width)
        padded[beyond] = 255
        ordered = np.sort(padded, axis=1)
        changes = (ordered[:, 1:] != ordered[:, :-1]) & ~beyond[:, 1:]
        distinct = changes.sum(axis=1, dtype=np.int64) + 1
        return Batch(
            join_chars(symbols + 48, lengths),
            join_chars(ordered + 48, lengths),
            {"distinct_symbols": distinct},
        )

    def solve(self, example: Mapping[str, Any]) -> str:
        symbols = parse_symbols(example["input"], DIGITS)
        counts = [0] * 10
        for s in symbols:
            counts[s] += 1
        return " ".join(str(s) for s in range(10) for _ in range(counts[s]))

    def input_space_size(self, params: BucketSortParams) -> int:
        return strings_of_length_range(params.alphabet_size, params)
