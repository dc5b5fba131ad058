"""Tasks from plugins (gengap.generators.plugins): entry points, GENGAP_PLUGINS, a suite's ``plugins:``,
what a release's manifest records and what verify and export make of it.

These run in-process, with the entry points monkeypatched and the registry restored after
each test; tests/test_plugin_install.py installs a real plugin distribution (slow).
"""

from __future__ import annotations

import importlib.metadata as metadata
import json
import sys
from pathlib import Path

import pytest

from gengap.baselines.data import release_configs
from gengap.baselines.errors import BaselineError
from gengap.generators import get_task, registry, task_names
from gengap.generators import plugins
from gengap.cli import main
from gengap.release import write_release
from gengap.suite import SuiteError, parse_suite
from gengap.verify import verify_release
from tests.plugin_fixture import MODULE_TEXT, PLUGIN_TASK, suite_text, write_plugin


@pytest.fixture
def fresh_registry(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """The registry as before the first look-up (restored afterwards), no entry points, no
    GENGAP_PLUGINS, and tmp_path/src on sys.path (write plugin modules there)."""
    registry._load()
    monkeypatch.setattr(registry, "_TASKS", dict(registry._TASKS))
    monkeypatch.setattr(registry, "_MODULES", dict(registry._MODULES))
    monkeypatch.setattr(registry, "_state", "new")
    monkeypatch.setattr(plugins, "entry_points", lambda: [])
    monkeypatch.delenv(plugins.ENVIRONMENT_VARIABLE, raising=False)
    src = tmp_path / "src"
    src.mkdir()
    monkeypatch.syspath_prepend(str(src))
    before = set(sys.modules)
    yield src
    for name in set(sys.modules) - before:
        if name.startswith("gengap_demo"):
            del sys.modules[name]


def _entry_points(monkeypatch: pytest.MonkeyPatch, *pairs: tuple[str, str]) -> None:
    eps = [metadata.EntryPoint(name, value, plugins.ENTRY_POINT_GROUP) for name, value in pairs]
    monkeypatch.setattr(plugins, "entry_points", lambda: eps)


def test_a_module_entry_point_registers_its_tasks_on_first_look_up(fresh_registry, monkeypatch):
    (fresh_registry / "gengap_demo_tasks.py").write_text(MODULE_TEXT)
    _entry_points(monkeypatch, ("demo", "gengap_demo_tasks"))
    assert "gengap_demo_tasks" not in sys.modules  # nothing is imported before the registry is used
    assert PLUGIN_TASK in task_names()
    assert registry.task_module(PLUGIN_TASK) == "gengap_demo_tasks"
    assert "scan" in task_names()  # built-in tasks as before


def test_a_class_entry_point_is_registered(fresh_registry, monkeypatch):
    (fresh_registry / "gengap_demo_class.py").write_text(MODULE_TEXT.replace("@register\n", ""))
    _entry_points(monkeypatch, ("demo", "gengap_demo_class:DemoRotate"))
    task = get_task(PLUGIN_TASK)
    assert task.solve({"input": "a b c"}) == "b c a"


def test_a_broken_plugin_is_one_line_and_exit_2(fresh_registry, monkeypatch, capsys):
    (fresh_registry / "gengap_demo_broken.py").write_text("raise RuntimeError('no\\nway')\n")
    _entry_points(monkeypatch, ("broken", "gengap_demo_broken"))
    assert main(["list"]) == 2
    err = capsys.readouterr().err
    assert err == "gengap: error: plugin broken (gengap_demo_broken): RuntimeError: no way\n"


def test_a_plugin_task_that_clashes_with_a_built_in_one_is_refused(fresh_registry, monkeypatch, capsys):
    text = MODULE_TEXT.replace('name = "demo_rotate"', 'name = "scan"')
    (fresh_registry / "gengap_demo_clash.py").write_text(text)
    _entry_points(monkeypatch, ("clash", "gengap_demo_clash"))
    assert main(["generate", "scan", "--n", "1"]) == 2
    assert capsys.readouterr().err == "gengap: error: plugin clash (gengap_demo_clash): TaskDefinitionError: task scan (gengap_demo_clash) is registered twice\n"


def test_gengap_plugins_names_modules_for_every_command(fresh_registry, monkeypatch, capsys):
    (fresh_registry / "gengap_demo_tasks.py").write_text(MODULE_TEXT)
    monkeypatch.setenv(plugins.ENVIRONMENT_VARIABLE, "gengap_demo_tasks")
    assert main(["generate", PLUGIN_TASK, "--n", "3", "--seed", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and all(json.loads(line)["task"] == PLUGIN_TASK for line in lines)
    monkeypatch.setattr(registry, "_state", "new")
    monkeypatch.setenv(plugins.ENVIRONMENT_VARIABLE, "gengap_demo_missing")
    assert main(["list"]) == 2
    assert capsys.readouterr().err.startswith("gengap: error: plugin gengap_demo_missing (from GENGAP_PLUGINS): ModuleNotFoundError")


def test_a_suite_imports_its_plugins_and_the_manifest_records_them(fresh_registry, tmp_path):
    write_plugin(fresh_registry)
    suite = parse_suite(suite_text(["gengap_demo_tasks"]), "suite.yaml")
    manifest = write_release(suite, tmp_path / "release", cards=False)
    assert manifest["plugins"] == [{"module": "gengap_demo_tasks", "distribution": None, "version": None, "tasks": [PLUGIN_TASK]}]
    assert list(manifest).index("plugins") == list(manifest).index("created") + 1
    report = verify_release(tmp_path / "release")
    assert report.ok, report.lines()
    assert report.records == 124


def test_a_suite_plugin_that_cannot_be_imported_names_its_line(fresh_registry):
    with pytest.raises(SuiteError, match=r"^suite.yaml line 6: plugins\[0\]: plugin gengap_demo_nothing: ModuleNotFoundError"):
        parse_suite(suite_text(["gengap_demo_nothing"]), "suite.yaml")
    with pytest.raises(SuiteError, match=r"plugins\[0\]: .*not a safe|does not match"):
        parse_suite(suite_text(["not a module"]), "suite.yaml")


def test_verify_and_export_name_the_plugin_a_release_needs(fresh_registry, tmp_path, capsys):
    write_plugin(fresh_registry)
    write_release(parse_suite(suite_text(["gengap_demo_tasks"]), "suite.yaml"), tmp_path / "release", cards=False)
    sys.path.remove(str(fresh_registry))  # the plugin is gone (monkeypatch restores sys.path)
    del sys.modules["gengap_demo_tasks"]
    report = verify_release(tmp_path / "release")
    needed = (
        "this release needs module gengap_demo_tasks (on PYTHONPATH) for demo_rotate: plugin gengap_demo_tasks: "
        "ModuleNotFoundError: No module named 'gengap_demo_tasks'"
    )
    assert report.problems == [needed, "records not checked: their tasks come from the missing plugins"]
    assert main(["export", str(tmp_path / "release"), "--to", "chat", "--out", str(tmp_path / "chat")]) == 2
    assert capsys.readouterr().err == f"gengap: error: {tmp_path / 'release'}: {needed}\n"
    assert not (tmp_path / "chat").exists()
    with pytest.raises(BaselineError, match="this release needs module gengap_demo_tasks"):  # gengap train RELEASE
        release_configs(tmp_path / "release")
    recorded = [{"module": "gengap_demo_gone", "distribution": "gengap-plugin-demo", "version": "0.1.0", "tasks": [PLUGIN_TASK]}]
    assert plugins.load_recorded(recorded) == [
        "this release needs gengap-plugin-demo==0.1.0 for demo_rotate: plugin gengap_demo_gone: "
        "ModuleNotFoundError: No module named 'gengap_demo_gone'"
    ]


def test_a_release_without_plugins_records_none(tmp_path):
    text = suite_text().replace("  - {task: demo_rotate", "  # - {task: demo_rotate")
    manifest = write_release(parse_suite(text, "suite.yaml"), tmp_path / "release", cards=False)
    assert "plugins" not in manifest


def test_plugin_versions_are_notes():
    assert plugins.version_notes([{"module": "numpy", "distribution": "numpy", "version": "0.0.1", "tasks": []}]) == [
        f"plugin numpy is {metadata.version('numpy')} here, 0.0.1 in the release"
    ]
    assert plugins.version_notes([{"module": "x", "distribution": "no-such-distribution-here", "version": "1"}]) == []


def test_regenerate_imports_the_suite_plugins(fresh_registry, tmp_path, capsys):
    write_plugin(fresh_registry)
    (tmp_path / "suite.yaml").write_text(suite_text(["gengap_demo_tasks"]))
    assert main(["release", str(tmp_path / "suite.yaml"), "--out", str(tmp_path / "release"), "--workers", "1"]) == 0
    del sys.modules["gengap_demo_tasks"]  # imported again from the manifest's suite
    before = registry._TASKS.pop(PLUGIN_TASK)
    assert main(["verify", str(tmp_path / "release"), "--regenerate", "--workers", "1"]) == 0
    assert "it matches a rebuild from its manifest" in capsys.readouterr().out
    assert type(get_task(PLUGIN_TASK)).__name__ == type(before).__name__


def test_a_plugin_cannot_decide_the_exit_status(fresh_registry, monkeypatch, capsys, tmp_path):
    """Issue 38, item 11: a plugin calling sys.exit(0) at import made every command exit 0 with
    no output, verify of a tampered release included; one calling it in a task method too."""
    release = tmp_path / "release"
    write_release(parse_suite(suite_text().replace("demo_rotate", "even_pairs"), "<suite>"), release, cards=False)
    data = release / "data" / "parity_check-length" / "train.jsonl"
    data.write_bytes(data.read_bytes().replace(b'"target":"0"', b'"target":"1"', 1))  # tampered
    monkeypatch.setattr(registry, "_state", "new")
    (fresh_registry / "gengap_demo_exit.py").write_text("import sys\nsys.exit(0)\n")
    _entry_points(monkeypatch, ("exits", "gengap_demo_exit"))
    for argv in (["list"], ["verify", str(release)], ["generate", "parity_check", "--n", "1"]):
        assert main(argv) == 2
        assert capsys.readouterr().err == "gengap: error: plugin exits (gengap_demo_exit): it called sys.exit(0) while being imported\n"
    monkeypatch.setattr(registry, "_state", "new")
    _entry_points(monkeypatch)
    (fresh_registry / "gengap_demo_quits.py").write_text(MODULE_TEXT.replace("    def solve(self, example", "    def measure(self, example):\n        import sys\n        sys.exit(0)\n\n    def solve(self, example", 1))
    monkeypatch.setenv(plugins.ENVIRONMENT_VARIABLE, "gengap_demo_quits")
    lines = tmp_path / "records.jsonl"
    assert main(["generate", PLUGIN_TASK, "--n", "2", "--out", str(lines)]) == 0
    assert main(["check", str(lines)]) == 2
    assert "ended by sys.exit(0) in code it ran" in capsys.readouterr().err
