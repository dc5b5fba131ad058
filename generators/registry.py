"""The registry of tasks by name.

Task modules live in the ``generators.tasks`` package, one or more tasks per module, and
register their classes with ``@register``. On first use the registry imports every module
of that package (so adding a task means adding one file there), then the plugins
(generators.plugins: entry points of ``gengap.tasks`` and the modules of ``GENGAP_PLUGINS``);
importing ``generators`` itself stays cheap. A broken plugin raises PluginError at that
first look-up.
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
_MODULES: dict[str, str] = {}  # task name -> module of its class (plugins.provenance)
_state = "new"  # "loading" while the built-in tasks and plugins are imported, then "loaded"


class UnknownTaskError(KeyError):
    """No task is registered under that name."""

    def __str__(self) -> str:
        return str(self.args[0])


def register(cls: type["Task"]) -> type["Task"]:
    """Class decorator: register one instance of a task class under cls.name."""
    from generators.task import FAMILIES

    if cls.family not in FAMILIES:
        raise ValueError(f"task {cls.name}: unknown family {cls.family!r}")
    if cls.name in _TASKS and type(_TASKS[cls.name]) is not cls:
        raise ValueError(f"task {cls.name} is registered twice")
    _TASKS[cls.name] = cls()
    _MODULES[cls.name] = cls.__module__
    return cls


def _load() -> None:
    """Import the built-in task modules, then the plugins (once; a look-up made while a plugin
    is being imported sees the tasks registered so far)."""
    global _state
    if _state != "new":
        return
    from generators import plugins

    _state = "loading"
    try:
        for module in task_modules():
            importlib.import_module(module)
        plugins.load_all(_register_plugin)
    except BaseException:
        _state = "new"
        raise
    _state = "loaded"


def _register_plugin(cls: type["Task"]) -> None:
    """register, for a Task class an entry point names (a class already registered is kept)."""
    if type(_TASKS.get(cls.name)) is not cls:
        register(cls)


def task_module(name: str) -> str:
    """The module that defines task `name` (UnknownTaskError when there is none)."""
    get_task(name)
    return _MODULES[name]


def get_task(name: str) -> "Task":
    _load()
    if name not in _TASKS:
        raise UnknownTaskError(f"unknown task {name!r}; run `gengap list` to see the tasks")
    return _TASKS[name]


def task_names() -> list[str]:
    _load()
    return sorted(_TASKS)
