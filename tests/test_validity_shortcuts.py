"""The shortcut-cue validity claims: verdict rules on constructed inputs, and a --smoke run."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def shortcuts():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("validity_shortcuts", ROOT / "benchmarks" / "validity_shortcuts.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["validity_shortcuts"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("validity_shortcuts", None)
    sys.path.remove(str(ROOT / "benchmarks"))


def rows(module, drops: dict[float, float], base_id: float = 0.95) -> dict:
    out = {module.config_name(None): {"id": base_id, "test": base_id, "drop": 0.0, "converged": True, "stopped_at": 500}}
    for rho, drop in drops.items():
        out[module.config_name(rho)] = {"id": 0.9, "test": 0.9 - drop, "drop": drop, "converged": True, "stopped_at": 500}
    return out


def test_claims_hold_on_a_growing_drop(shortcuts) -> None:
    claims = shortcuts.evaluate(rows(shortcuts, {0.5: 0.0, 0.8: 0.1, 0.95: 0.2, 1.0: 0.4}))
    assert claims["monotone"]["holds"] and claims["monotone"]["spearman"] == pytest.approx(1.0)
    assert claims["size"] == {"rho": 1.0, "drop": 0.4, "holds": True}


def test_claims_fail_on_a_flat_or_small_drop(shortcuts) -> None:
    flat = shortcuts.evaluate(rows(shortcuts, {0.5: 0.1, 0.8: 0.05, 0.95: 0.02, 1.0: 0.0}))
    assert not flat["monotone"]["holds"] and not flat["size"]["holds"]
    small = shortcuts.evaluate(rows(shortcuts, {0.5: 0.0, 0.8: 0.05, 0.95: 0.1, 1.0: 0.19}))
    assert small["monotone"]["holds"] and not small["size"]["holds"]
    assert not shortcuts.evaluate({})["monotone"]["holds"]


def test_notes_say_whether_the_baseline_learned(shortcuts) -> None:
    assert "did not learn" in shortcuts.notes(rows(shortcuts, {}, base_id=0.6))[0]
    assert "learned parity" in shortcuts.notes(rows(shortcuts, {}, base_id=0.97))[0]


def test_the_runs_share_one_split(shortcuts) -> None:
    from gengap.generators.cues import without_cue

    specs = shortcuts.plan(shortcuts.SHORTCUTS_SMOKE)
    assert [s.args["cue"] for s in specs] == [None] + [{"train": r, "test": 0.5} for r in shortcuts.RHOS]
    plain = shortcuts.build_cued_split(specs[0], shortcuts.SHORTCUTS_SMOKE)
    cued = shortcuts.build_cued_split(specs[-1], shortcuts.SHORTCUTS_SMOKE)
    assert [without_cue(r) for r in cued.test] == plain.test
    assert cued.report["cue"]["agreement"]["train"] == 1.0


def test_document_from_constructed_runs(shortcuts, tmp_path: Path) -> None:
    table = rows(shortcuts, {0.5: 0.0, 0.8: 0.1, 0.95: 0.2, 1.0: 0.4})
    cues = {name: None for name in table}
    cues[shortcuts.config_name(1.0)] = {"rate": {"train": 1.0, "validation": 1.0, "test": 0.5},
                                         "agreement": {"train": 1.0, "validation": 1.0, "test": 0.49}}
    context = {"command": "c", "machine": "m", "commit": "x", "date": "d", "runs": 5, "minutes": 1.0, "cpu_minutes": 2.0}
    shortcuts.write_document(tmp_path / "v.md", table, cues, shortcuts.evaluate(table), context)
    text = (tmp_path / "v.md").read_text()
    assert "**holds**" in text and "1.0 / 0.5 | 1.000 / 1.000 / 0.490" in text and "learned parity" in text


@pytest.mark.slow  # ~30 s: five tiny runs
def test_smoke_run_writes_the_document(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "validity_shortcuts.py"), "--smoke", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    data = json.loads((tmp_path / "validity-shortcuts.json").read_text())
    assert set(data["claims"]) == {"monotone", "size"} and len(data["runs"]) == 5
    text = (tmp_path / "validity-shortcuts.md").read_text()
    assert "Spearman" in text and "parity_check-cue100" in text
