"""Tasks from outside the package: plugins.

Two ways in, both importing Python code that registers tasks (``gengap.generators.register``):

- entry points of the group ``gengap.tasks`` (``ENTRY_POINT_GROUP``) of any installed
  distribution. An entry point names a module (``mypkg.tasks``), whose import registers its
  tasks, or a Task subclass (``mypkg.tasks:Reverse``), which is registered here;
- module names: a suite's ``plugins: [mypkg.tasks]``, the environment variable
  ``GENGAP_PLUGINS=mypkg.tasks,other.tasks``, and a release manifest's ``plugins``.

The registry loads entry points and ``GENGAP_PLUGINS`` lazily, on its first look-up, after
the built-in tasks. Any failure (an import error, a task that clashes with another, a module
that calls ``sys.exit``) is a PluginError with one line ``plugin NAME: ...``, never a
traceback and never the plugin's exit status.

``provenance`` says which plugin (module, distribution and its version, via
importlib.metadata) provides given tasks: a release's manifest records it, so that
``gengap verify`` can load the plugins it needs, or say which one is missing.
"""

from __future__ import annotations

import importlib
import importlib.metadata as metadata
import os
from dataclasses import dataclass
from typing import Any, Callable, Iterable

ENTRY_POINT_GROUP = "gengap.tasks"
ENVIRONMENT_VARIABLE = "GENGAP_PLUGINS"
BUILTIN_PACKAGE = "gengap.generators.tasks"


class PluginError(ValueError):
    """A plugin cannot be loaded; the message is one line starting ``plugin NAME:``."""


@dataclass(frozen=True)
class Plugin:
    """Where tasks come from: a module and the distribution (name, version) that installs it (None: unknown)."""

    module: str
    distribution: str | None
    version: str | None
    tasks: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"module": self.module, "distribution": self.distribution, "version": self.version, "tasks": list(self.tasks)}

    def requirement(self) -> str:
        """What to install to get this plugin (``mypkg==0.1.0``, or the module name when no distribution is known)."""
        if self.distribution is None:
            return f"module {self.module} (on PYTHONPATH)"
        return f"{self.distribution}=={self.version}" if self.version else self.distribution


def _reason(err: BaseException) -> str:
    if isinstance(err, SystemExit):  # a plugin cannot decide gengap's exit status
        return f"it called sys.exit({err.code!r}) while being imported"
    text = " ".join(str(err).split())
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def entry_points() -> list[metadata.EntryPoint]:
    """The entry points of ENTRY_POINT_GROUP, sorted by (name, value) so loading order is fixed."""
    return sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: (ep.name, ep.value))


def load_entry_point(ep: metadata.EntryPoint, register: Callable[[type], object]) -> None:
    """Import one entry point; a Task subclass it names is registered. PluginError on failure."""
    from gengap.generators.task import Task

    dist = getattr(ep, "dist", None)
    label = f"{ep.name} ({ep.value}" + (f", {dist.name} {dist.version})" if dist is not None else ")")
    try:
        loaded = ep.load()
        if isinstance(loaded, type) and issubclass(loaded, Task):
            register(loaded)
    except PluginError:
        raise
    except (Exception, SystemExit) as err:  # noqa: BLE001 - any failure of foreign code is one line, sys.exit included
        raise PluginError(f"plugin {label}: {_reason(err)}") from None


def import_module(module: str, needed_by: str = "") -> None:
    """Import a plugin module by name (its import registers its tasks); PluginError on failure."""
    if not isinstance(module, str) or not all(part.isidentifier() for part in module.split(".")):
        raise PluginError(f"plugin {str(module)[:80]!r}: not a module name (e.g. mypkg.tasks)")
    try:
        importlib.import_module(module)
    except (Exception, SystemExit) as err:  # noqa: BLE001 - sys.exit included: a plugin cannot end gengap
        raise PluginError(f"plugin {module}{needed_by}: {_reason(err)}") from None


def environment_modules() -> list[str]:
    """The module names GENGAP_PLUGINS lists (comma-separated; blanks ignored)."""
    return [name.strip() for name in os.environ.get(ENVIRONMENT_VARIABLE, "").split(",") if name.strip()]


def load_all(register: Callable[[type], object]) -> None:
    """Every entry point of ENTRY_POINT_GROUP, then the modules of GENGAP_PLUGINS."""
    for ep in entry_points():
        load_entry_point(ep, register)
    for module in environment_modules():
        import_module(module, f" (from {ENVIRONMENT_VARIABLE})")


def is_builtin(module: str) -> bool:
    return module == BUILTIN_PACKAGE or module.startswith(BUILTIN_PACKAGE + ".")


def _distribution_of(module: str) -> tuple[str | None, str | None]:
    """(distribution, version) installing module: the one whose gengap.tasks entry point names
    it or a parent package, else the one providing its top-level package; (None, None) if none."""
    top = module.split(".")[0]
    for ep in entry_points():
        named = ep.value.split(":")[0].strip()
        dist = getattr(ep, "dist", None)
        if dist is not None and (module == named or module.startswith(named + ".")):
            return dist.name, dist.version
    names = metadata.packages_distributions().get(top) or []
    if names:
        name = sorted(names)[0]
        return name, metadata.version(name)
    return None, None


def provenance(modules_by_task: dict[str, str], tasks: Iterable[str]) -> list[Plugin]:
    """The plugins providing `tasks` (built-in tasks left out), one per module, sorted by module."""
    grouped: dict[str, list[str]] = {}
    for task in sorted(set(tasks)):
        module = modules_by_task[task]
        if not is_builtin(module):
            grouped.setdefault(module, []).append(task)
    return [Plugin(module, *_distribution_of(module), tuple(names)) for module, names in sorted(grouped.items())]


def load_recorded(recorded: Any) -> list[str]:
    """Import the plugin modules a manifest records (its ``plugins``); returns one problem line
    per plugin that cannot be imported, naming what to install."""
    problems: list[str] = []
    for item in recorded if isinstance(recorded, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("module"), str):
            problems.append("manifest.json: plugins holds an entry without a module")
            continue
        plugin = Plugin(item["module"], item.get("distribution"), item.get("version"), tuple(item.get("tasks") or ()))
        try:
            import_module(plugin.module)
        except PluginError as err:
            tasks = ", ".join(plugin.tasks) or "its tasks"
            problems.append(f"this release needs {plugin.requirement()} for {tasks}: {err}")
    return problems


def version_notes(recorded: Any) -> list[str]:
    """One note per recorded plugin whose distribution is installed here at another version."""
    notes = []
    for item in recorded if isinstance(recorded, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("distribution"), str):
            continue
        try:
            here = metadata.version(item["distribution"])
        except metadata.PackageNotFoundError:
            continue
        if here != item.get("version"):
            notes.append(f"plugin {item['distribution']} is {here} here, {item.get('version')} in the release")
    return notes


def without_versions(recorded: Any) -> Any:
    """A manifest's ``plugins`` with the versions left out (what a rebuild must reproduce)."""
    if not isinstance(recorded, list):
        return recorded
    return [{k: v for k, v in item.items() if k != "version"} if isinstance(item, dict) else item for item in recorded]
