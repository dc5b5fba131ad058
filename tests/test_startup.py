"""Start-up: a command imports only what it uses (benchmarks/startup.py times it)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("jsonschema", "jsonschema_rs", "tqdm", "torch", "matplotlib", "ray")

PROBE = """
import json, sys
from gengap.entry import run
try:
    run(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def modules_after(*argv: str) -> set[str]:
    """The keys of sys.modules once `gengap argv` has run in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, check=True)
    return set(json.loads(done.stderr.splitlines()[-1]))


def heavy(modules: set[str]) -> list[str]:
    return sorted(name for name in modules if name.split(".")[0] in HEAVY)


def test_generate_imports_no_heavy_package_and_one_task_module() -> None:
    modules = modules_after("generate", "parity_check", "--n", "1")
    assert heavy(modules) == []
    assert "yaml" not in modules  # read with gengap.generators.reading, imported when a YAML file is read
    assert sorted(name for name in modules if name.startswith("gengap.generators.tasks.")) == ["gengap.generators.tasks.regular"]
    assert not {"gengap.releases.release", "gengap.releases.checking", "gengap.splits", "gengap.harnesses.export", "gengap.harnesses.scoring"} & modules


@pytest.mark.parametrize("argv", [("--help",), ("list",)])
def test_help_and_list_import_no_heavy_package(argv: tuple[str, ...]) -> None:
    assert heavy(modules_after(*argv)) == []


@pytest.mark.parametrize("bad", [("--until-id", "1.5"), ("--preset", "tiny", "--d-model", "30"), ()])
def test_a_train_usage_error_comes_before_torch_is_imported(bad: tuple[str, ...], tmp_path) -> None:
    """Bad settings, or a release that is not there, are refused (one line) without importing torch."""
    done = subprocess.run([sys.executable, "-c", PROBE, "train", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o"), *bad],
                          capture_output=True, text=True, check=True)
    lines = done.stderr.splitlines()
    assert lines[0].startswith("gengap: error: ") and len(lines) == 2
    assert heavy(set(json.loads(lines[-1]))) == []
