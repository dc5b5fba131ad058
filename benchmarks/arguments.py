"""argparse types shared by the benchmark scripts: a bad count is a one-line usage error, not a traceback."""

from __future__ import annotations

import argparse
from typing import Callable, Sequence


def _number(text: str, kind: type) -> int | float:
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {'an integer' if kind is int else 'a number'}") from None


def positive_int(text: str) -> int:
    """An integer >= 1 (counts, workers, steps, repeats)."""
    value = int(_number(text, int))
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is below 1")
    return value


def non_negative_int(text: str) -> int:
    """An integer >= 0 (seeds; sizes where 0 means the default)."""
    value = int(_number(text, int))
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is below 0")
    return value


def positive_float(text: str) -> float:
    """A number > 0 (seconds, rates)."""
    value = float(_number(text, float))
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is not a positive finite number")
    return value


def unit_fraction(text: str) -> float:
    """A number in (0, 1]."""
    value = float(_number(text, float))
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{text} is not in (0, 1]")
    return value


def int_at_most(most: int) -> Callable[[str], int]:
    """The type of an integer in 1..most (a count whose every unit costs memory or time up front)."""

    def parse(text: str) -> int:
        value = positive_int(text)
        if value > most:
            raise argparse.ArgumentTypeError(f"{value} is above {most:,}")
        return value

    return parse


def seed_list(text: str) -> str:
    """Comma-separated seeds, each an integer >= 0 (the text, checked)."""
    for part in text.split(","):
        non_negative_int(part.strip())
    return text


def names_of(choices: Sequence[str]) -> Callable[[str], str]:
    """The type of comma-separated names, each one of choices (the text, checked)."""

    def parse(text: str) -> str:
        unknown = [name for name in text.split(",") if name not in choices]
        if unknown:
            raise argparse.ArgumentTypeError(f"unknown {unknown[0]!r}; choose among {', '.join(choices)}")
        return text

    return parse
