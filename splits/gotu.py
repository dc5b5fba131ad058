"""The GOTU split ("generalization on the unseen", Abbe et al. 2023): freeze coordinates in train.

A record's coordinates are its input tokens: coordinate i is input token i (0-based), and its
value is that token read as a decimal integer (the bits of boolean_function, parity_check,
prefix_sums, ...). Options name frozen coordinates and their values. The train side holds
the records whose frozen coordinates all equal their values; the test side holds the unseen
region, the records where at least one of them differs. Validation is carved from the train
side as in every split (in-distribution). A record without one of the frozen coordinates
(too few input tokens, or a token that is not an integer) is an error naming it: the
strategy applies to tasks whose records expose coordinates, and to no other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from gengap.generators.batch import Record
from gengap.generators.params import ParamError, knob
from gengap.splits.base import Partition, SplitError, SplitOptions, Strategy


def _coordinate(text: str) -> int:
    """A coordinate or value written in decimal; ValueError otherwise."""
    text = text.strip()
    if not text.isdigit() or not text.isascii():
        raise ValueError(text)
    return int(text)


def _spelled(frozen: Any) -> Any:
    """The text form of frozen given as YAML data: a list [i, ...] or a mapping {i: v, ...}."""
    if isinstance(frozen, (list, tuple)):
        return ",".join(str(item) for item in frozen)
    if isinstance(frozen, Mapping):
        return ",".join(f"{key}={value}" for key, value in frozen.items())
    if isinstance(frozen, int) and not isinstance(frozen, bool):
        return str(frozen)
    return frozen


@dataclass(frozen=True)
class GotuOptions(SplitOptions):
    frozen: str = knob(
        "",
        doc="coordinates frozen on the train side: i,j,... (each at value) or i=v,j=w,...; "
        "coordinate i is input token i (0-based); a YAML list or mapping also works (required)",
    )
    value: int = knob(0, lo=0, doc="value of the frozen coordinates given without =v")

    def __post_init__(self) -> None:
        object.__setattr__(self, "frozen", _spelled(self.frozen))
        super().__post_init__()

    def check_consistency(self) -> None:
        super().check_consistency()
        self.freeze()

    def freeze(self) -> dict[int, int]:
        """Frozen coordinate -> value, in the order given; ParamError when malformed."""
        frozen: dict[int, int] = {}
        for item in filter(None, (part.strip() for part in self.frozen.split(","))):
            coordinate, equals, value = item.partition("=")
            try:
                key = _coordinate(coordinate)
                frozen_value = _coordinate(value) if equals else self.value
            except ValueError:
                raise ParamError(f"parameter frozen={self.frozen!r}: {item!r} is not i or i=v with non-negative integers") from None
            self.require(key not in frozen, f"parameter frozen={self.frozen!r} names coordinate {key} twice")
            frozen[key] = frozen_value
        return frozen


def coordinate_values(record: Record, coordinates: Sequence[int]) -> list[int]:
    """The record's values at the given coordinates (input tokens); SplitError when it has none there."""
    tokens = record["input"].split()
    values = []
    for i in coordinates:
        if i >= len(tokens):
            raise SplitError(
                f"record {record['id']} has {len(tokens)} input tokens, no coordinate {i} "
                "(gotu reads coordinate i as input token i)"
            )
        try:
            values.append(_coordinate(tokens[i]))
        except ValueError:
            raise SplitError(
                f"record {record['id']} has input token {i} = {tokens[i]!r}, not a coordinate value "
                "(gotu reads coordinates as integer input tokens)"
            ) from None
    return values


class Gotu(Strategy):
    name = "gotu"
    description = "generalization on the unseen: train where chosen coordinates (input tokens) are frozen, test where any differs"
    options_type = GotuOptions

    def partition(self, records: Sequence[Record], options: GotuOptions, rng: np.random.Generator) -> Partition:
        frozen = _frozen(options)
        unseen = self.test_rule(options)
        train, test = [], []
        for record in records:
            (test if unseen(record) else train).append(record)
        if not train:
            raise SplitError(f"no record has every frozen coordinate at its value ({options.frozen}): the train side is empty")
        notes = {"frozen": {str(i): v for i, v in frozen.items()}, "coordinates": "input token i is coordinate i"}
        return Partition(train, test, notes=notes)

    def test_rule(self, options: GotuOptions) -> Callable[[Record], bool]:
        """Whether a record lies in the unseen region: some frozen coordinate differs from its value."""
        frozen = _frozen(options)
        coordinates, wanted = list(frozen), list(frozen.values())
        return lambda record: coordinate_values(record, coordinates) != wanted


def _frozen(options: GotuOptions) -> dict[int, int]:
    """The frozen coordinates of the options; SplitError when there are none."""
    frozen = options.freeze()
    if not frozen:
        raise SplitError("gotu needs option frozen (coordinates frozen on the train side)")
    return frozen
