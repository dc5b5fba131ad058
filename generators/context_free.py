"""Deterministic context-free tasks (Deletang et al. 2023, level DCF)."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from generators.batch import Batch
from generators.registry import register
from generators.sequences import (
    SymbolParams,
    length_levels,
    parse_symbols,
    random_symbols,
    reverse_rows,
    sample_lengths,
    strings_of_length_range,
)
from generators.task import Task
from generators.text import join_chars

DIGITS = "0123456789"


@register
class ReverseString(Task[SymbolParams]):
    """String over 0..k-1 -> the same string reversed."""

    name = "reverse_string"
    family = "context_free"
    description = "string of symbols -> the string reversed"
    params_type = SymbolParams

    def levels(self) -> dict[int, SymbolParams]:
        return length_levels(SymbolParams)

    def generate(self, rng: np.random.Generator, n: int, params: SymbolParams) -> Batch:
        lengths = sample_lengths(rng, n, params)
        codes = random_symbols(rng, n, params.max_length, params.alphabet_size) + 48
        reversed_codes = reverse_rows(codes, lengths)
        return Batch(join_chars(codes, lengths), join_chars(reversed_codes, lengths))

    def solve(self, example: Mapping[str, Any]) -> str:
        symbols = parse_symbols(example["input"], DIGITS)
        return " ".join(str(s) for s in symbols[::-1])

    def input_space_size(self, params: SymbolParams) -> int:
        return strings_of_length_range(params.alphabet_size, params)
