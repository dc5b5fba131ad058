"""docs/tasks.md is the gallery the task registry gives now (regenerate: python -m gengap.gallery > docs/tasks.md)."""

from __future__ import annotations

from pathlib import Path

from gengap.generators import get_task, task_names
from gengap.gallery import EXAMPLE_LEVELS, render

TASKS_MD = Path(__file__).resolve().parent.parent / "docs" / "tasks.md"


def test_the_committed_gallery_is_current() -> None:
    assert TASKS_MD.read_text(encoding="utf-8") == render(), "stale: run `python -m gengap.gallery > docs/tasks.md`"


def test_the_gallery_has_every_task_with_parameters_levels_and_examples() -> None:
    text = render()
    for name in task_names():
        section = text.split(f"\n## {name}\n", 1)[1].split("\n## ", 1)[0]
        assert get_task(name).description.rstrip(".") in section
        assert "| parameter | default | range | meaning |" in section and "Levels:" in section
        for level in EXAMPLE_LEVELS:
            assert f"level {level:>2}  input:  " in section
