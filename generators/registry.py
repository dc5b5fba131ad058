"""The registry of tasks by name.

Task modules live in the ``generators.tasks`` package, one or more tasks per module, and
register their classes with ``@register``. On first use the registry imports every module
of that package (so adding a task means adding one file there); importing ``generators``
itself stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from generators.task import Task

def task_modules() -> list[str]:
    """Dotted names of the modules in generators.tasks, sorted (the import order)."""
    import pkgutil

    import generators.tasks as package

    return sorted(
        f"{package.__name__}.{info.name}"
        for info in pkgutil.iter_modules(package.__path__)
        if not info.name.startswith("_")
    )

_TASKS: dict[str, "Task"] = {}
_loaded = False


class TaskDefinitionError(ValueError):
    """A task module defines a task the registry cannot take (an unknown family, a name registered twice)."""


class UnknownTaskError(KeyError):
    """No task is registered under that name."""

    def __str__(self) -> str:
        return str(self.args[0])


def register(cls: type["Task"]) -> type["Task"]:
    """Class decorator: register one instance of a task class under cls.name."""
    from generators.task import FAMILIES

    where = f"task {cls.name} ({cls.__module__})"
    if cls.family not in FAMILIES:
        raise TaskDefinitionError(f"{where}: unknown family {cls.family!r}; known: {', '.join(FAMILIES)}")
    if cls.name in _TASKS and type(_TASKS[cls.name]) is not cls:
        raise TaskDefinitionError(f"{where} is registered twice")
    _TASKS[cls.name] = cls()
    return cls


def _load() -> None:
    global _loaded
    if not _loaded:
        for module in task_modules():
            importlib.import_module(module)
        _loaded = True


def get_task(name: str) -> "Task":
    _load()
    if name not in _TASKS:
        raise UnknownTaskError(f"unknown task {name!r}; run `gengap list` to see the tasks")
    return _TASKS[name]


def task_names() -> list[str]:
    _load()
    return sorted(_TASKS)
