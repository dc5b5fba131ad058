"""A plugin as users install it: a distribution with a ``gengap.tasks`` entry point, pip-installed
into a fresh virtual environment beside gengap (this checkout, editable, with its base
dependencies and matplotlib for the cards), where a release using its task is built, verified
and regenerated; uninstalled, verify names the distribution and version the release needs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.plugin_fixture import DISTRIBUTION, PLUGIN_TASK, VERSION, suite_text, write_plugin

ROOT = Path(__file__).resolve().parents[1]
BASE = ("numpy", "jsonschema", "pyyaml", "tqdm", "matplotlib", "setuptools>=77")


def _run(command: list[str], cwd: Path, ok: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if ok and done.returncode != 0:
        pytest.fail(f"{' '.join(command)} exited {done.returncode}: {done.stderr[-2000:]}")
    return done


@pytest.mark.slow
def test_an_installed_plugin_builds_verifies_and_regenerates(tmp_path: Path) -> None:
    env = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(env)], tmp_path)
    pip = [str(env / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    _run([*pip, *BASE], tmp_path)
    _run([*pip, "--no-deps", "--no-build-isolation", "-e", str(ROOT)], tmp_path)
    plugin = write_plugin(tmp_path / "plugin")
    _run([*pip, "--no-deps", "--no-build-isolation", str(plugin)], tmp_path)
    gengap = str(env / "bin" / "gengap")
    work = tmp_path / "work"
    work.mkdir()
    (work / "suite.yaml").write_text(suite_text(), encoding="utf-8")

    assert f"{PLUGIN_TASK}  [structured]" in _run([gengap, "list"], work).stdout
    _run([gengap, "release", "suite.yaml", "--out", "rel", "--workers", "2"], work)
    manifest = json.loads((work / "rel" / "manifest.json").read_text())
    assert manifest["plugins"] == [{"module": "gengap_demo_tasks", "distribution": DISTRIBUTION, "version": VERSION, "tasks": [PLUGIN_TASK]}]
    assert "verified 12 files and 124 records" in _run([gengap, "verify", "rel"], work).stdout
    assert "it matches a rebuild from its manifest" in _run([gengap, "verify", "rel", "--regenerate"], work).stdout
    _run([gengap, "export", "rel", "--to", "chat", "--out", "chat"], work)

    _run([str(env / "bin" / "python"), "-m", "pip", "uninstall", "-q", "-y", DISTRIBUTION], tmp_path)
    done = _run([gengap, "verify", "rel"], work, ok=False)
    assert done.returncode == 1
    assert f"this release needs {DISTRIBUTION}=={VERSION} for {PLUGIN_TASK}: plugin gengap_demo_tasks: ModuleNotFoundError" in done.stderr
    assert "Traceback" not in done.stderr
