"""How the CI check scripts of tests/ (datasets_floor, wheel_smoke) report what they found."""

from __future__ import annotations

import sys


def report(problems: list[str], prefix: str, success: str) -> int:
    """Each problem as one line ``prefix: problem`` on stderr, or success on stdout; the exit code (1 with problems)."""
    for problem in problems:
        print(f"{prefix}: {problem}", file=sys.stderr)
    if not problems:
        print(success)
    return 1 if problems else 0
