"""Old import paths of the task modules, kept working.

The task modules moved from ``generators/<module>.py`` to ``generators/tasks/<module>.py``.
:func:`install` adds an import hook so that ``import gengap.generators.scan`` (and
``from gengap.generators.scan import ...``) returns the very module object
``gengap.generators.tasks.scan``: one module, not a copy, so registries and isinstance checks
agree whichever path was used.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys

from gengap.legacy_names import AliasLoader

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


class _MovedTaskFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):  # noqa: ANN001 - importlib protocol
        package, _, name = fullname.rpartition(".")
        if package != "gengap.generators" or name not in MOVED_MODULES:
            return None
        return importlib.machinery.ModuleSpec(fullname, AliasLoader(f"gengap.generators.tasks.{name}"))


def install() -> None:
    """Add the hook once per interpreter."""
    if not any(isinstance(finder, _MovedTaskFinder) for finder in sys.meta_path):
        sys.meta_path.append(_MovedTaskFinder())
