"""The smoke subset a newcomer runs first (`python -m pytest -m smoke`): registered, named in the
README, and spread over generate, check, split, release and verify."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def smoke_tests() -> dict[str, list[str]]:
    """Per test file, the names of the test functions marked smoke."""
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        text = path.read_text(encoding="utf-8")
        names = re.findall(r"^@pytest\.mark\.smoke\n(?:@[^\n]*\n|[ \t)\]][^\n]*\n)*def (test_\w+)", text, re.M)
        if names:
            found[path.name] = names
    return found


def test_the_smoke_marker_is_registered_and_named_in_the_readme() -> None:
    markers = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]["markers"]
    assert any(marker.startswith("smoke:") for marker in markers)
    assert "python -m pytest -m smoke" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_smoke_subset_covers_each_command_with_a_handful_of_cases() -> None:
    found = smoke_tests()
    names = [name for names in found.values() for name in names]
    assert 8 <= len(names) <= 20
    assert {"test_cli.py", "test_splits.py", "test_release.py"} <= set(found)
    for word in ("generate", "check", "split", "verify"):
        assert any(word in name for name in names), word
    assert "test_layout_and_manifest" in found["test_release.py"]  # builds a release
