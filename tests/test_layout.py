"""Task modules live in generators/tasks/; the registry finds them; old paths still import."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

from gengap import generators
import gengap.generators.tasks
from gengap.generators import registry
from gengap.generators.aliases import MOVED_MODULES

ROOT = Path(__file__).resolve().parent.parent


def test_every_task_module_lives_in_the_tasks_package() -> None:
    in_tasks = {path.stem for path in (ROOT / "generators" / "tasks").glob("*.py")}
    assert set(MOVED_MODULES) <= in_tasks
    for name in MOVED_MODULES:
        assert not (ROOT / "generators" / f"{name}.py").exists()
    # no module left in generators/ registers a task
    for path in (ROOT / "generators").glob("*.py"):
        if path.name == "registry.py":
            continue
        assert "\n@register" not in path.read_text(), path


def test_registry_imports_every_module_of_the_package() -> None:
    names = registry.task_modules()
    assert names == sorted(names)
    assert {f"gengap.generators.tasks.{m}" for m in MOVED_MODULES} <= set(names)
    for task_name in gengap.generators.task_names():
        module = type(gengap.generators.get_task(task_name)).__module__
        assert module.startswith("gengap.generators.tasks."), (task_name, module)


def test_a_new_file_in_the_package_is_a_new_module(tmp_path, monkeypatch) -> None:
    (tmp_path / "extra_family.py").write_text("X = 1\n")
    (tmp_path / "_private_helper.py").write_text("Y = 2\n")
    monkeypatch.setattr(gengap.generators.tasks, "__path__", [*gengap.generators.tasks.__path__, str(tmp_path)])
    names = registry.task_modules()
    assert "gengap.generators.tasks.extra_family" in names
    assert "gengap.generators.tasks._private_helper" not in names


def test_old_import_paths_are_the_same_module_objects() -> None:
    for name in MOVED_MODULES:
        old = importlib.import_module(f"generators.{name}")
        new = importlib.import_module(f"gengap.generators.tasks.{name}")
        assert old is new
    from gengap.generators.scan import ScanParams as old_params
    from gengap.generators.tasks.scan import ScanParams as new_params

    assert old_params is new_params


def test_old_path_works_in_a_fresh_interpreter_before_the_new_one() -> None:
    code = (
        "from gengap.generators.scan import ScanParams\n"
        "import gengap.generators.tasks.scan as m\n"
        "assert m.ScanParams is ScanParams\n"
        "import sys; assert sys.modules['gengap.generators.scan'] is m\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


def test_every_package_is_in_the_distribution() -> None:
    """A non-editable install carries only the packages pyproject lists: every directory of
    the project with an __init__.py must be one of them (gengap.generators.tasks was once
    missing), found in its folder through pyproject's package-dir (gengap.splits is splits/)."""
    import tomllib

    table = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed, mapped = set(table["packages"]), dict(table.get("package-dir", {}))

    def folder(package: str) -> str:
        for prefix in sorted(mapped, key=len, reverse=True):
            if package == prefix or package.startswith(prefix + "."):
                return mapped[prefix] + package[len(prefix) :].replace(".", "/")
        return package.replace(".", "/")

    roots = {folder(p).split("/")[0] for p in listed}
    found = {
        "/".join(path.parent.relative_to(ROOT).parts)
        for path in ROOT.rglob("__init__.py")
        if path.parent.relative_to(ROOT).parts[0] in roots
    }
    assert found == {folder(p) for p in listed}


def test_nothing_but_gengap_is_an_import_name_of_the_distribution() -> None:
    """Every package pyproject lists lives under gengap (a user's own splits.py or
    generators/ cannot shadow gengap's)."""
    import tomllib

    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    assert {p.split(".")[0] for p in listed} == {"gengap"}
