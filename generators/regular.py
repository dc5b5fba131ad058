"""Regular-language tasks (Deletang et al. 2023, level R)."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from generators.batch import Batch
from generators.registry import register
from generators.sequences import (
    LengthParams,
    length_levels,
    parse_symbols,
    past_length,
    random_bits,
    sample_lengths,
    strings_of_length_range,
)
from generators.task import Task
from generators.text import join_chars


@register
class ParityCheck(Task[LengthParams]):
    """Binary string -> 1 if it has an odd number of 1s, else 0."""

    name = "parity_check"
    family = "regular"
    description = "binary string -> 1 if the number of 1s is odd, else 0"
    params_type = LengthParams

    def levels(self) -> dict[int, LengthParams]:
        return length_levels(LengthParams)

    def generate(self, rng: np.random.Generator, n: int, params: LengthParams) -> Batch:
        lengths = sample_lengths(rng, n, params)
        bits = random_bits(rng, n, params.max_length)
        if params.min_length != params.max_length:
            bits[past_length(lengths, params.max_length)] = 0
        ones = bits.sum(axis=1, dtype=np.int64)
        targets = ((ones & 1) + 48).astype(np.uint8).view("S1")
        return Batch(join_chars(bits + 48, lengths), targets, {"ones": ones})

    def solve(self, example: Mapping[str, Any]) -> str:
        return str(sum(parse_symbols(example["input"])) % 2)

    def input_space_size(self, params: LengthParams) -> int:
        return strings_of_length_range(2, params)
