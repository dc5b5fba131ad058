"""Numeric settings of a run: every int an int, every float a finite number, each in its range.

``check_numbers(values)`` takes the numeric fields of :class:`gengap.baselines.training.TrainSettings`
(None stands for the preset's default and is skipped) and raises BaselineError naming the
first one out of range. The same check serves ``gengap train``'s options, sweep files and the
Python API, so ``--lr inf`` or ``weight_decay: nan`` never reaches the optimizer. The ranges
are :class:`gengap.generators.numbers.Range`, the rule every number gengap reads keeps to.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from gengap.baselines.errors import BaselineError
from gengap.baselines.layout import MAX_COMPUTATION_STEPS
from gengap.generators.numbers import Range

MAX_COUNT = 10**12  # steps, sizes and counts beyond this are typos, not runs (and overflow int64 arithmetic)


def _count(low: int) -> Range:
    return Range(low, MAX_COUNT, integer=True)


SEED = Range(0, 2**63 - 1, integer=True)  # seeds are any non-negative int64


def _share(low_open: bool = False, high_open: bool = False) -> Range:
    return Range(0.0, 1.0, low_open=low_open, high_open=high_open)


RANGES: dict[str, Range] = {
    "layers": _count(1), "d_model": _count(1), "heads": _count(1), "memory_cell": _count(1), "iterations": _count(1),
    "window": _count(0), "steps": _count(1), "batch_size": _count(1), "warmup": _count(0), "eval_every": _count(1),
    "eval_examples": _count(1), "eval_limit": _count(1), "eval_batch_size": _count(1), "checkpoint_every": _count(1),
    "mistakes": _count(0), "computation_steps": Range(0, MAX_COMPUTATION_STEPS, integer=True), "noise_seed": SEED, "init_seed": SEED, "data_seed": SEED, "level": _count(1),
    "lr": Range(0.0, math.inf, low_open=True), "weight_decay": Range(0.0, math.inf), "grad_clip": Range(0.0, math.inf, low_open=True),
    "min_lr_ratio": _share(), "until_id": _share(low_open=True), "reach": _share(low_open=True), "label_noise": _share(high_open=True),
    "until_extra": Range(0.0, math.inf), "progressive_loss": _share(), "adam_beta2": _share(high_open=True), "stack_size": _count(0),
    "test_per_length": _count(0),
}
LISTS: dict[str, Range] = {"seeds": SEED, "test_iterations": _count(1)}


EVAL_RANGES: dict[str, Range] = {  # gengap eval's (gengap.baselines.pretrained.EvalSettings)
    "shots": _count(0), "seed": SEED, "limit": _count(1), "batch_size": _count(1), "max_new_tokens": _count(1),
    "slack": _count(0), "mistakes": _count(0),
}


def check_numbers(values: Mapping[str, Any], ranges: Mapping[str, Range] = RANGES, lists: Mapping[str, Range] = LISTS) -> None:
    """BaselineError for the first numeric setting of values that is not a finite number in its range."""
    for name, accepted in ranges.items():
        value = values.get(name)
        if value is not None and not accepted.holds(value):
            raise BaselineError(f"{name} must be {accepted.describe()}, got {value!r}")
    for name, accepted in lists.items():
        for value in values.get(name) or ():
            if not accepted.holds(value):
                raise BaselineError(f"{name} must be {accepted.describe()} each, got {value!r}")
