"""The registry of tasks by name.

Task modules live in the ``gengap.generators.tasks`` package, one or more tasks per module, and
register their classes with ``@register``. :data:`TASK_MODULES` names the module of every
built-in task, so looking up one imports only its module (tests/test_registry_table.py checks
the table against the real registrations: adding a task means adding its module there and
its row here). The first look-up also imports the plugins (gengap.generators.plugins: entry points
of ``gengap.tasks`` and the modules of ``GENGAP_PLUGINS``); a name that is neither a plugin's
nor in the table, and listing the names, import every built-in module. A plugin task with a
built-in name is refused whether or not that module is imported yet. Importing ``generators``
itself stays cheap. A broken plugin raises PluginError at the first look-up.
"""

from __future__ import annotations

import difflib
import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gengap.generators.task import Task

def task_modules() -> list[str]:
    """Dotted names of the modules in gengap.generators.tasks, sorted (the import order)."""
    import pkgutil

    import gengap.generators.tasks as package
    return sorted(
        f"{package.__name__}.{info.name}"
        for info in pkgutil.iter_modules(package.__path__)
        if not info.name.startswith("_")
    )

TASK_MODULES: dict[str, str] = {  # built-in task name -> its module in gengap.generators.tasks
    "addition": "arithmetic",
    "binary_addition": "context_sensitive",
    "binary_multiplication": "context_sensitive",
    "boolean_function": "boolean",
    "bucket_sort": "context_sensitive",
    "cfq_like": "cfq_like",
    "cogs": "cogs",
    "cogs_like": "cogs_like",
    "compute_sqrt": "context_sensitive",
    "cycle_navigation": "regular",
    "duplicate_string": "context_sensitive",
    "even_pairs": "regular",
    "fact_compare": "facts",
    "fact_lookup": "facts",
    "fact_reverse": "facts",
    "fact_two_hop": "facts",
    "graph_connectivity": "structured",
    "grid_program": "grid",
    "letter_analogy": "analogy",
    "listops": "structured",
    "maze": "maze",
    "missing_duplicate_string": "context_sensitive",
    "modular_arithmetic": "regular",
    "modular_arithmetic_brackets": "context_free",
    "modular_operation": "arithmetic",
    "multiplication": "arithmetic",
    "odds_first": "context_sensitive",
    "parity_check": "regular",
    "pcfg_set": "pcfg_set",
    "pointer_chasing": "reasoning",
    "prefix_sums": "structured",
    "regex_match": "rules",
    "reverse_string": "context_free",
    "scan": "scan",
    "shortest_path": "structured",
    "solve_equation": "context_free",
    "stack_manipulation": "context_free",
    "string_rewrite": "rules",
    "variable_binding": "reasoning",
}

_TASKS: dict[str, "Task"] = {}
_MODULES: dict[str, str] = {}  # task name -> module of its class (plugins.provenance)
_state = "new"  # "loading" while the plugins are imported, then "loaded"
_builtins_loaded = False


class TaskDefinitionError(ValueError):
    """A task module defines a task the registry cannot take (an unknown family, a name registered twice)."""


class UnknownTaskError(KeyError):
    """No task is registered under that name."""

    def __str__(self) -> str:
        return str(self.args[0])


def register(cls: type["Task"]) -> type["Task"]:
    """Class decorator: register one instance of a task class under cls.name."""
    from gengap.generators.task import FAMILIES

    where = f"task {cls.name} ({cls.__module__})"
    if cls.family not in FAMILIES:
        raise TaskDefinitionError(f"{where}: unknown family {cls.family!r}; known: {', '.join(FAMILIES)}")
    if cls.name in _TASKS and type(_TASKS[cls.name]) is not cls:
        raise TaskDefinitionError(f"{where} is registered twice")
    home = TASK_MODULES.get(cls.name)
    if home is not None and cls.__module__ != f"{__package__}.tasks.{home}":
        raise TaskDefinitionError(f"{where} is registered twice")  # a built-in name, its module imported or not
    _TASKS[cls.name] = cls()
    _MODULES[cls.name] = cls.__module__
    return cls


def _load() -> None:
    """Import the built-in task modules and the plugins (once each)."""
    global _builtins_loaded
    if not _builtins_loaded:
        for module in task_modules():
            importlib.import_module(module)
        _builtins_loaded = True
    _load_plugins()


def _load_plugins() -> None:
    """Import the plugins (once; a look-up made while a plugin is being imported sees the
    tasks registered so far)."""
    global _state
    if _state != "new":
        return
    from gengap.generators import plugins

    _state = "loading"
    try:
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
    """The task registered as name: after the plugins, a built-in one imports only its module."""
    _load_plugins()
    if name not in _TASKS and isinstance(name, str) and name in TASK_MODULES:
        importlib.import_module(f"{__package__}.tasks.{TASK_MODULES[name]}")
    if name not in _TASKS:
        _load()
    if name not in _TASKS:
        raise UnknownTaskError(unknown_task_message(name))
    return _TASKS[name]


def unknown_task_message(name: object) -> str:
    """The error for a name no task has: the closest task names when the name looks misspelt."""
    close = difflib.get_close_matches(name, sorted(_TASKS), n=3, cutoff=0.75) if isinstance(name, str) else []
    guess = f"did you mean {' or '.join(close)}? " if close else ""
    return f"unknown task {name!r} ({guess}`gengap list` shows every task)"


def task_names() -> list[str]:
    """Every task name, sorted (every built-in module and the plugins imported)."""
    _load()
    return sorted(_TASKS)
