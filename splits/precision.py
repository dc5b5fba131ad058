"""Floats written to split reports and release manifests: rounded to FLOAT_DECIMALS places.

Divergences are sums of powers computed by the platform's libm, whose last bits may differ
between machines and C libraries; written at full precision they would make report.json
and manifest.json differ where the data does not. Every float a report or manifest holds
is therefore rounded with Python's ``round(x, FLOAT_DECIMALS)`` (correctly rounded from the
binary value, so the same on every platform) and ``-0.0`` is written ``0.0``. Six places
keep divergences (in [0, 1]) to 1e-6 and match the novelty summary's rounding.
"""

from __future__ import annotations

from typing import Any

FLOAT_DECIMALS = 6


def rounded(value: Any) -> Any:
    """value with every float, also inside dicts, lists and tuples (as lists), rounded to
    FLOAT_DECIMALS places; other values unchanged. Containers are copied, never modified."""
    if isinstance(value, float):
        return round(value, FLOAT_DECIMALS) + 0.0  # + 0.0 turns -0.0 into 0.0
    if isinstance(value, dict):
        return {key: rounded(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [rounded(item) for item in value]
    return value
