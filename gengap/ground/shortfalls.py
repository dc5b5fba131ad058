"""Warnings a split report does not give by itself: parts smaller than asked, an empty validation.

Split strategies warn about what they see (test examples removed for overlap, sides asking
for more distinct inputs than exist); only the caller knows what sizes were asked for, and
that `gengap train` needs a non-empty validation part.
"""

from __future__ import annotations

from typing import Any, Mapping

PARTS = ("train", "validation", "test")
EMPTY_VALIDATION = "the validation part is empty: gengap train needs train, validation and test"


def shortfall_warnings(report: Mapping[str, Any], asked: Mapping[str, int] | None = None) -> list[str]:
    """Warnings for parts with fewer records than asked (sizes or caps), and an empty validation."""
    delivered = report.get("sizes", {})
    warnings = []
    for part in PARTS:
        wanted = (asked or {}).get(part)
        got = delivered.get(part)
        if wanted is not None and got is not None and got < wanted:
            warnings.append(f"{part}: {got:,} records, fewer than the {wanted:,} asked for")
    if delivered.get("validation") == 0:
        warnings.append(EMPTY_VALIDATION)
    return warnings


def add_warnings(report: dict[str, Any], warnings: list[str]) -> list[str]:
    """Append the warnings report["warnings"] lacks; return all of them."""
    current = list(report.get("warnings") or [])
    current += [w for w in warnings if w not in current]
    report["warnings"] = current
    return current
