"""Old import paths of the task modules, kept working.

The task modules moved from ``generators/<module>.py`` to ``generators/tasks/<module>.py``.
:func:`install` adds an import hook so that ``import gengap.generators.scan`` (and
``from gengap.generators.scan import ...``) returns the very module object
``gengap.generators.tasks.scan``: one module, not a copy, so registries and isinstance checks
agree whichever path was used.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType

MOVED_MODULES = (
    "arithmetic",
    "cogs_like",
    "context_free",
    "context_sensitive",
    "pcfg_set",
    "reasoning",
    "regular",
    "scan",
    "structured",
)


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:
        """The target module is already executed by create_module."""


class _MovedTaskFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):  # noqa: ANN001 - importlib protocol
        package, _, name = fullname.rpartition(".")
        if package != "gengap.generators" or name not in MOVED_MODULES:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(f"gengap.generators.tasks.{name}"))


def install() -> None:
    """Add the hook once per interpreter."""
    if not any(isinstance(finder, _MovedTaskFinder) for finder in sys.meta_path):
        sys.meta_path.append(_MovedTaskFinder())
