"""A small plugin package, written to disk by the plugin tests (tests/test_plugins.py).

``write_plugin(root, module)`` writes ``root/pyproject.toml`` (distribution
``gengap-plugin-demo`` 0.1.0, entry point ``gengap.tasks``: ``demo = <module>``) and
``root/<module>.py``, whose import registers one task, ``PLUGIN_TASK``: a word list over a
few letters -> the words rotated left by one, checked by an independent checker.
"""

from __future__ import annotations

from pathlib import Path

DISTRIBUTION = "gengap-plugin-demo"
VERSION = "0.1.0"
PLUGIN_TASK = "demo_rotate"

MODULE_TEXT = '''\
"""gengap plugin: demo_rotate (words -> the words rotated left by one)."""

import dataclasses
from typing import Any, Mapping

import numpy as np

from gengap.generators import Batch, Params, Task, knob, register

LETTERS = ("a", "b", "c", "d")


@dataclasses.dataclass(frozen=True)
class RotateParams(Params):
    min_length: int = knob(1, lo=1, hi=50, doc="shortest input, in tokens")
    max_length: int = knob(8, lo=1, hi=50, doc="longest input, in tokens")

    def check_consistency(self) -> None:
        self.require(self.min_length <= self.max_length, "min_length exceeds max_length")


@register
class DemoRotate(Task[RotateParams]):
    name = "demo_rotate"
    family = "structured"
    description = "letters -> the letters rotated left by one"
    params_type = RotateParams

    def levels(self) -> dict[int, RotateParams]:
        return {k: RotateParams(min_length=k, max_length=2 * k) for k in range(1, 11)}

    def generate(self, rng: np.random.Generator, n: int, params: RotateParams) -> Batch:
        lengths = rng.integers(params.min_length, params.max_length + 1, size=n)
        inputs = [" ".join(LETTERS[i] for i in rng.integers(0, len(LETTERS), size=k)) for k in lengths.tolist()]
        return Batch.from_lists(inputs, [self._rotate(text) for text in inputs])

    @staticmethod
    def _rotate(text: str) -> str:
        words = text.split()
        return " ".join(words[1:] + words[:1])

    def solve(self, example: Mapping[str, Any]) -> str:
        words = example["input"].split()
        if not all(w in LETTERS for w in words):
            raise ValueError("not a word of letters")
        return " ".join([*words[1:], words[0]])
'''

SUITE_TEXT = """\
name: plugin-suite
version: 1.0.0
seed: 3
license: cc-by-4.0
created: "2026-12-01"
{plugins}entries:
  - {{task: demo_rotate, split: length, train_range: [1, 4], test_range: [5, 8], sizes: {{train: 60, validation: 10, test: 20}}}}
  - {{task: parity_check, split: length, train_range: [1, 4], test_range: [5, 8], sizes: {{train: 20, validation: 4, test: 10}}}}
"""


def write_plugin(root: Path, module: str = "gengap_demo_tasks") -> Path:
    """The plugin package's source tree at root (created); returns root."""
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{module}.py").write_text(MODULE_TEXT, encoding="utf-8")
    (root / "pyproject.toml").write_text(
        "[build-system]\n"
        'requires = ["setuptools>=64"]\n'
        'build-backend = "setuptools.build_meta"\n\n'
        "[project]\n"
        f'name = "{DISTRIBUTION}"\n'
        f'version = "{VERSION}"\n'
        'dependencies = []\n\n'
        "[tool.setuptools]\n"
        f'py-modules = ["{module}"]\n\n'
        '[project.entry-points."gengap.tasks"]\n'
        f'demo = "{module}"\n',
        encoding="utf-8",
    )
    return root


def suite_text(plugins: list[str] | None = None) -> str:
    """A suite with a demo_rotate config and a built-in one; ``plugins:`` when given."""
    line = f"plugins: [{', '.join(plugins)}]\n" if plugins else ""
    return SUITE_TEXT.format(plugins=line)
