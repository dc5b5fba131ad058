"""Boolean functions on the cube {0,1}^n: sparse parities, majorities and monomials.

``boolean_function`` (after Abbe et al. 2023, "Generalization on the Unseen"): the input is
n bits ``x_0 .. x_{n-1}``, one token each, uniform over {0,1}^n; the target (``0`` or
``1``) is a function of the k coordinates of the *support* only:

- ``parity``: the XOR of the support bits (the monomial prod x_i of the {+1,-1} encoding);
- ``majority``: ``1`` when more than half of the support bits are 1 (strictly: a tie at
  even k gives ``0``);
- ``monomial``: the AND (product) of the support bits in the {0,1} encoding.

The support is the first k coordinates (``support=first``) or k coordinates drawn by the
stream ``support`` of gengap.generators.seeding from ``support_seed`` (``support=seeded``), so it is
a function of the parameters alone: the same for every example, block and worker, and part
of the config. Every record states it in ``meta`` (``{"function": ..., "support": [i, ...]}``),
which the checker reads. Input token i is coordinate i, which the ``gotu`` split strategy
reads to freeze coordinates on the train side.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Mapping

import numpy as np

from gengap.generators.batch import Batch
from gengap.generators.params import ParamError, Params, knob
from gengap.generators.registry import register
from gengap.generators.seeding import support_rng
from gengap.generators.sequences import parse_symbols, random_bits
from gengap.generators.task import Task, meta_value
from gengap.generators.text import digit_tokens, digits_to_chars, join_chars

MAX_DIMENSION = 1000
FUNCTIONS = ("parity", "majority", "monomial")
DIMENSION_LEVELS = (4, 6, 8, 10, 12, 16, 20, 24, 32, 40)


@dataclasses.dataclass(frozen=True)
class BooleanParams(Params):
    """Dimension n (the size knob), the function and its support."""

    n: int = knob(16, lo=1, hi=MAX_DIMENSION, doc="dimension: the input is n bits, token i is coordinate x_i")
    function: str = knob("parity", choices=FUNCTIONS, doc="parity (XOR), majority (more than k/2 ones) or monomial (AND) of the support bits")
    k: int = knob(3, lo=1, hi=MAX_DIMENSION, doc="support size: the function reads k of the n coordinates")
    support: str = knob("first", choices=("first", "seeded"), doc="first: coordinates 0..k-1; seeded: k coordinates drawn from support_seed")
    support_seed: int = knob(0, lo=0, hi=2**31 - 1, doc="seed of the seeded support (unused with support=first)")

    def check_consistency(self) -> None:
        self.require(self.k <= self.n, f"parameter k={self.k} exceeds the dimension n={self.n}")

    def coordinates(self) -> tuple[int, ...]:
        """The support: k distinct coordinates in increasing order."""
        return support_of(self.n, self.k, self.support, self.support_seed)


@functools.lru_cache(maxsize=256)
def support_of(n: int, k: int, mode: str, seed: int) -> tuple[int, ...]:
    """The first k coordinates, or k of 0..n-1 drawn by stream ``support`` from seed (sorted)."""
    if mode == "first":
        return tuple(range(k))
    order = np.argsort(support_rng(seed).random(n), kind="stable")  # a uniform random order of 0..n-1
    return tuple(sorted(int(i) for i in order[:k]))


def evaluate(function: str, bits: list[int]) -> int:
    """The function of the support bits, one at a time in plain Python (the checker's path)."""
    ones = 0
    for bit in bits:
        ones += bit
    if function == "parity":
        return ones % 2
    if function == "majority":
        return int(2 * ones > len(bits))
    if function == "monomial":
        return int(ones == len(bits))
    raise ValueError(f"unknown function {function!r}")


@register
class BooleanFunction(Task[BooleanParams]):
    """n uniform bits -> parity, majority or monomial of the bits on a fixed support.

    Features: ``ones`` (1s in the input) and ``support_ones`` (1s on the support).
    """

    name = "boolean_function"
    family = "reasoning"
    description = "n bits -> parity, majority or monomial (AND) of the bits on a fixed support of k coordinates"
    params_type = BooleanParams
    answer_tokens = ("0", "1")
    size_knob = "dimension n (input bits); one value per setting"
    meta_keys = ("function", "support")
    meta_parameters = ("function",)  # meta.support is the resolved coordinates, not the parameter support

    def levels(self) -> dict[int, BooleanParams]:
        """Levels 1..10: n = 4, 6, 8, 10, 12, 16, 20, 24, 32, 40, other parameters at their defaults."""
        return {k: BooleanParams(n=n) for k, n in enumerate(DIMENSION_LEVELS, start=1)}

    def with_size(self, lo: int, hi: int) -> BooleanParams:
        """Default parameters with dimension n = lo = hi (a function has one dimension)."""
        if lo != hi:
            raise ParamError(f"{self.name}: the dimension n is one value per setting, got a range {lo}..{hi}")
        return self.default_params().replace(n=lo)

    def generate(self, rng: np.random.Generator, n: int, params: BooleanParams) -> Batch:
        support = list(params.coordinates())
        bits = random_bits(rng, n, params.n)
        support_ones = bits[:, support].sum(axis=1, dtype=np.int64)
        if params.function == "parity":
            values = support_ones & 1
        elif params.function == "majority":
            values = (2 * support_ones > params.k).astype(np.int64)
        else:
            values = (support_ones == params.k).astype(np.int64)
        features = {"ones": bits.sum(axis=1, dtype=np.int64), "support_ones": support_ones}
        meta = {"function": params.function, "support": support}
        return Batch(join_chars(digits_to_chars(bits), params.n), digit_tokens(values), features, meta=meta)

    def _read(self, example: Mapping[str, Any]) -> tuple[list[int], str, list[int]]:
        """(input bits, function, support) of a record; ValueError when they do not fit."""
        bits = parse_symbols(example["input"], "01")
        function = self.meta(example, "function")
        support = meta_value(example, "support")
        if not isinstance(support, list) or not support or any(
            isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(bits) for i in support
        ):
            raise ValueError(f"meta.support must be a non-empty list of coordinates 0..{len(bits) - 1}")
        if len(set(support)) != len(support):
            raise ValueError("meta.support repeats a coordinate")
        return bits, str(function), support

    def solve(self, example: Mapping[str, Any]) -> str:
        bits, function, support = self._read(example)
        return str(evaluate(function, [bits[i] for i in support]))

    def measure(self, example: Mapping[str, Any]) -> dict[str, int]:
        bits, _, support = self._read(example)
        return {"ones": sum(bits), "support_ones": sum(bits[i] for i in support)}

    def input_space_size(self, params: BooleanParams) -> int:
        return 2**params.n
