"""The import names of round 1-3 (``generators``, ``splits``, ``baselines``, ``harnesses``,
``data_cards``), kept for one release as deprecated aliases of ``gengap.<name>``.

An old name gives the very module object of its new name (``import splits.mcd`` returns
``gengap.splits.mcd``: one module, not a copy, so registries and isinstance checks agree),
with a :class:`LegacyNameWarning` naming the new import, once per old top-level name. It is a
FutureWarning, which Python shows by default (a DeprecationWarning is hidden unless the import
is in ``__main__``: these names go in the next release, so whoever imports them should see it),
and it is attributed to the line that imports the old name (its file and line number, past the
import machinery and the old packages' redirect), not to ``sys:1``. Aliases never
shadow a user's own module: an old top-level name is served only when no other finder has a
module of that name (the fallback finder sits at the end of ``sys.meta_path``), and its
submodules only while the top-level name is the alias. They work once ``gengap`` is imported
(any ``gengap`` import installs the finders), and in a source checkout the old packages'
folders redirect themselves (:func:`redirect`).

The same finder serves the flat names of gengap's own modules before they had homes in
sub-packages (``gengap.files`` is ``gengap.ground.files``, ``gengap.cli`` is
``gengap.commands.cli``: :data:`MOVED`). Those names are not deprecated and warn nothing: they
are the very module objects of their homes (monkeypatching either patches both), and
``python -m gengap.cli`` runs ``gengap.commands.cli``. One alias layer for both.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from types import CodeType, FrameType, ModuleType

LEGACY_NAMES = ("generators", "splits", "baselines", "harnesses", "data_cards")
_warned: set[str] = set()

HOMES = {
    "commands": ("cli", "entry", "author_commands", "sweep_command", "gallery"),
    "releases": ("suite", "release", "release_view", "release_ray", "verify", "fresh", "fresh_verify", "fresh_shift",
                 "audit", "near_audit", "cross_check", "multitask", "schema", "fingerprints", "sweep_config",
                 "checking", "contracts"),
    "ground": ("files", "locking", "staging", "ownership", "limits", "signals", "errors", "progress", "heap",
               "parallel", "workers", "repeats", "shortfalls"),
}  # fmt: skip
"""gengap's sub-packages and the modules each holds that once were ``gengap.<module>``."""
MOVED = {f"gengap.{module}": f"gengap.{home}.{module}" for home, modules in HOMES.items() for module in modules}
"""Flat name -> home: ``gengap.files`` -> ``gengap.ground.files``, ..."""


class LegacyNameWarning(FutureWarning):
    """An import of a deprecated top-level name (``generators``, ...) of gengap's packages."""


def _importing_frame() -> FrameType | None:
    """The frame of the code that imports an old name: the first caller that is neither this
    module, the import machinery (importlib's frozen and Python modules) nor an old package's
    ``__init__`` redirecting itself."""
    frame = sys._getframe(1)
    while frame is not None:
        name = str(frame.f_globals.get("__name__", ""))
        internal = (
            frame.f_code.co_filename.startswith("<frozen ")
            or name == __name__
            or name == "importlib"
            or name.startswith("importlib.")
            or name in LEGACY_NAMES
        )
        if not internal:
            return frame
        frame = frame.f_back
    return None


def _warn(top: str) -> None:
    if top in _warned:
        return
    _warned.add(top)
    message = f"`{top}` is deprecated: import gengap.{top} instead"
    frame = _importing_frame()
    if frame is None:
        warnings.warn(message, LegacyNameWarning, stacklevel=2)
        return
    scope = frame.f_globals
    warnings.warn_explicit(message, LegacyNameWarning, frame.f_code.co_filename, frame.f_lineno,
                           module=scope.get("__name__"), registry=scope.setdefault("__warningregistry__", {}))


class AliasLoader(importlib.abc.Loader):
    """Loads a module name as the module object of another name (`target`): one module, not a copy."""

    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:
        """The target module is already executed by create_module."""

    def get_code(self, fullname: str) -> CodeType:
        """The target module's code, for ``python -m <old>.<sub>`` (runpy runs it as __main__,
        as ``python -m gengap.<old>.<sub>`` would); ImportError for a package, which runpy
        reports in one line."""
        spec = importlib.util.find_spec(self.target)
        if spec is None:
            raise ImportError(f"no module named {self.target}")
        if spec.submodule_search_locations is not None:
            raise ImportError(f"{fullname} is a package")
        code = spec.loader.get_code(self.target) if hasattr(spec.loader, "get_code") else None
        if code is None:
            raise ImportError(f"{fullname} has no code to run")
        return code


def _is_alias(top: str) -> bool:
    module = sys.modules.get(top)
    return module is not None and module is sys.modules.get(f"gengap.{top}")


class LegacyNameFinder(importlib.abc.MetaPathFinder):
    """Serves ``<old>`` (fallback=True: when nothing else has it) or ``<old>.<sub>`` (while
    ``<old>`` is the alias) as the module ``gengap.<old>[.<sub>]``."""

    def __init__(self, fallback: bool) -> None:
        self.fallback = fallback

    def find_spec(self, fullname, path=None, target=None):  # noqa: ANN001 - importlib protocol
        if fullname in MOVED:
            return None if self.fallback else _moved_spec(fullname)
        top, dot, _ = fullname.partition(".")
        if top not in LEGACY_NAMES or bool(dot) == self.fallback:
            return None
        if dot and not _is_alias(top):
            return None
        _warn(top)
        return importlib.machinery.ModuleSpec(fullname, AliasLoader(f"gengap.{fullname}"), is_package=False)


def _moved_spec(fullname: str) -> importlib.machinery.ModuleSpec:
    """The spec of a flat name of a moved module: loaded as its home's module object, with its
    home's file as origin (``python -m gengap.cli``: runpy's sys.argv[0])."""
    target = MOVED[fullname]
    home = importlib.util.find_spec(target)
    origin = home.origin if home is not None else None
    return importlib.machinery.ModuleSpec(fullname, AliasLoader(target), origin=origin, is_package=False)


def install() -> None:
    """Add the finders once per interpreter: submodules first, top-level names last."""
    if not any(isinstance(finder, LegacyNameFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, LegacyNameFinder(fallback=False))
        sys.meta_path.append(LegacyNameFinder(fallback=True))


def redirect(name: str) -> bool:
    """Called first by each old package's ``__init__`` with its ``__name__``: when it is being
    imported under its old top-level name (a source checkout on sys.path), make that name the
    alias of ``gengap.<name>`` and return True (the caller then stops executing)."""
    if name not in LEGACY_NAMES:
        return False
    install()
    _warn(name)
    sys.modules[name] = importlib.import_module(f"gengap.{name}")
    return True
