"""The lower bound of Hugging Face datasets in pyproject.toml is a version that loads releases (tests/datasets_floor.py).

.ci/run installs exactly that version in an environment of its own and loads a tiny release
with it; here the same check runs with the installed datasets, and the bound, the CI step and
the card's dtype stay in agreement.
"""

from __future__ import annotations

from pathlib import Path

import datasets

from tests.datasets_floor import ROOT, build, check, floor


def version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".")[:3] if part.isdigit())


def test_the_floor_is_named_once_and_ci_loads_a_release_with_it() -> None:
    assert floor() == "4.7"  # 4.6.1 and 3.6.0 cannot read the card's json dtype (every config fails)
    ci = (ROOT / ".ci" / "run").read_text()
    assert '"datasets==$(python -m tests.datasets_floor --floor)"' in ci and "-m tests.datasets_floor --check" in ci
    assert version(datasets.__version__) >= version(floor())
    assert "(datasets >= 4.7)" in (ROOT / "data_cards" / "card.py").read_text()
    assert "`datasets` 4.7 or newer" in (ROOT / "docs" / "releases.md").read_text()


def test_a_tiny_release_loads_with_the_installed_datasets(tmp_path: Path) -> None:
    release = build(tmp_path)
    card = (release / "README.md").read_text()
    assert "dtype: json" in card and "name: structure" in card and "name: novelty" in card  # what old versions fail on
    assert check(release) == []
