"""The layers of gengap (docs/architecture.md), checked on the imports of every module.

Each module belongs to one unit, each unit to one layer; a module may import its own unit and
the units of lower layers, never a higher layer nor a sibling unit of its own layer:

    7  facades     gengap.__main__ (``python -m gengap``), gengap.rg (the reasoning-gym API)
    6  commands    gengap.commands
    5  releases    gengap.releases
    4  baselines   gengap.baselines
    3  ground      gengap.ground
    2  packages    gengap.splits, gengap.harnesses, gengap.data_cards
    1  generators  gengap.generators
    0  root        gengap (the package: __version__), gengap.legacy_names

Every import counts: at the top of a module, inside a function (a lazy import), under ``if
TYPE_CHECKING``. A lazy import against the layers is allowed only when LAZY_EXCEPTIONS lists
it with its reason. Imports are read with ast, so nothing is imported to check them.
"""

from __future__ import annotations

import ast
from pathlib import Path

from gengap.legacy_names import LEGACY_NAMES, MOVED

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_FOLDERS = {"generators": "gengap.generators", "splits": "gengap.splits", "baselines": "gengap.baselines",
                   "harnesses": "gengap.harnesses", "data_cards": "gengap.data_cards", "gengap": "gengap"}  # fmt: skip

LAYERS = {
    "gengap": 0,
    "gengap.generators": 1,
    "gengap.splits": 2, "gengap.harnesses": 2, "gengap.data_cards": 2,
    "gengap.ground": 3,
    "gengap.baselines": 4,
    "gengap.releases": 5,
    "gengap.commands": 6,
    "gengap.__main__": 7, "gengap.rg": 7,
}  # fmt: skip
"""Unit -> layer. A module's unit is the longest of these that is its name or a package above it
(the root's modules are named: a new top-level module must be given a layer)."""
ROOT_MODULES = {"gengap", "gengap.legacy_names"}

LAZY_EXCEPTIONS: dict[tuple[str, str], str] = {}
"""(importing module, imported module) -> why a lazy import may cross the layers. Empty: none does."""


def unit(module: str) -> str:
    if module in ROOT_MODULES:
        return "gengap"
    parts = module.split(".")
    for end in range(len(parts), 1, -1):
        name = ".".join(parts[:end])
        if name in LAYERS:
            return name
    raise AssertionError(f"{module} is in no layer of tests/test_layers.py: add its unit to LAYERS and docs/architecture.md")


def modules() -> dict[str, Path]:
    """Module name -> file, for every module of gengap (the source folders mapped under gengap)."""
    found = {}
    for folder, prefix in PACKAGE_FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([prefix, *parts])] = path
    return found


def _home(name: str) -> str:
    """An imported name as gengap's module: old top-level names and flat names at their homes."""
    top = name.split(".")[0]
    if top in LEGACY_NAMES:
        name = f"gengap.{name}"
    for flat, home in MOVED.items():
        if name == flat or name.startswith(flat + "."):
            return home + name[len(flat):]
    return name


def imports(module: str, path: Path, known: dict[str, Path]) -> list[tuple[str, int, bool, str]]:
    """(imported gengap module, line, lazy, as written) for each import in one module's file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    top_level = {id(node) for node in tree.body}
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        lazy = id(node) not in top_level
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append((alias.name, node.lineno, lazy, f"import {alias.name}"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            written = f"from {'.' * node.level}{node.module or ''} import {', '.join(a.name for a in node.names)}"
            for alias in node.names:
                child = _home(f"{source}.{alias.name}")
                target = child if child in known else source  # `from gengap.releases import release` imports a module
                found.append((target, node.lineno, lazy, written))
    result = []
    for name, line, lazy, written in found:
        name = _home(name)
        if name == "gengap" or name.startswith("gengap."):
            result.append((name, line, lazy, written))
    return result


def test_every_module_is_in_a_layer() -> None:
    for module in modules():
        unit(module)


def test_no_module_imports_a_higher_layer_or_a_sibling() -> None:
    known = modules()
    problems = []
    for module, path in known.items():
        mine = unit(module)
        for imported, line, lazy, written in imports(module, path, known):
            theirs = unit(imported)
            if theirs == mine or LAYERS[theirs] < LAYERS[mine]:
                continue
            if lazy and (module, imported) in LAZY_EXCEPTIONS:
                continue
            where = "a higher layer" if LAYERS[theirs] > LAYERS[mine] else "a sibling of its layer"
            problems.append(f"{path.relative_to(ROOT)}:{line}: {module} ({mine}, layer {LAYERS[mine]}) imports {imported} "
                            f"({theirs}, layer {LAYERS[theirs]}: {where}){' lazily' if lazy else ''}: `{written}`")
    assert not problems, "imports against the layers (docs/architecture.md):\n" + "\n".join(problems)


def test_the_code_imports_modules_at_their_homes() -> None:
    """The flat names (gengap.files, ...) and the old top-level names are for users; gengap's own
    code imports gengap.ground.files, gengap.splits, ..."""
    problems = []
    for module, path in modules().items():
        if module == "gengap.legacy_names":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            for name in names:
                if name in MOVED or name.split(".")[0] in LEGACY_NAMES:
                    problems.append(f"{path.relative_to(ROOT)}:{node.lineno}: imports {name}; its home is {_home(name)}")
    assert not problems, "\n".join(problems)


def test_the_check_sees_a_lazy_import_against_the_layers(tmp_path) -> None:
    """The rule itself: a ground module importing a command inside a function is found."""
    path = tmp_path / "probe.py"
    path.write_text("def f():\n    from gengap.commands import cli\n    import gengap.release\n", encoding="utf-8")
    known = modules()
    found = imports("gengap.ground.probe", path, known)
    assert [(name, line, lazy) for name, line, lazy, _ in found] == [("gengap.commands.cli", 2, True), ("gengap.releases.release", 3, True)]
    assert all(LAYERS[unit(name)] > LAYERS[unit("gengap.ground.probe")] for name, *_ in found)
