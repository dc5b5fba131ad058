"""The rules-in-context validity claim: the verdict rule on constructed inputs (both outcomes),
the shared split design, the document, and a --smoke run."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def rules():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("validity_rules", ROOT / "benchmarks" / "validity_rules.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["validity_rules"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("validity_rules", None)
    sys.path.remove(str(ROOT / "benchmarks"))


def test_the_claim_holds_on_a_rising_curve(rules) -> None:
    claim = rules.diversity_claim([(36, 0.30), (4, 0.05), (12, 0.12), (80, 0.41)])
    assert claim["holds"] and claim["rho"] == pytest.approx(1.0) and claim["gain"] == pytest.approx(0.36)
    assert [p[0] for p in claim["points"]] == [4, 12, 36, 80]
    assert rules.diversity_claim([(4, 0.1), (12, 0.05), (36, 0.3), (80, 0.2)])["holds"]  # rho 0.6, gain 0.1


def test_the_claim_fails_on_a_flat_falling_or_small_curve(rules) -> None:
    assert not rules.diversity_claim([(4, 0.2), (12, 0.2), (36, 0.2), (80, 0.2)])["holds"]  # rho undefined
    assert not rules.diversity_claim([(4, 0.5), (12, 0.4), (36, 0.3), (80, 0.2)])["holds"]  # falling
    small = rules.diversity_claim([(4, 0.10), (12, 0.12), (36, 0.15), (80, 0.19)])
    assert small["rho"] == pytest.approx(1.0) and not small["holds"]  # gain 0.09 < 0.1
    assert not rules.diversity_claim([(4, 0.3), (80, 0.5), (12, 0.6), (36, 0.1)])["holds"]  # gain 0.2 but rho 0
    assert not rules.diversity_claim([(4, 0.3)])["holds"]


def test_every_n_shares_the_held_out_systems_and_the_train_size(rules) -> None:
    from gengap.generators import get_task

    task = get_task("string_rewrite")
    splits = {spec.args["train_systems"]: rules.build_rules_split(spec, rules.SMOKE_DESIGN.scale) for spec in rules.plan(True)}
    held = [{task.rule_system(r) for r in result.test} for result in splits.values()]
    assert all(h == held[0] for h in held) and held[0]
    for n, result in splits.items():
        seen = {task.rule_system(r) for r in result.train + result.validation}
        assert len(seen) == n and not seen & held[0]
        assert len(result.train) + len(result.validation) == rules.SMOKE_DESIGN.train_records


def test_the_document_states_the_table_and_verdict(rules, tmp_path: Path) -> None:
    rows = [{"n": n, "systems": {"train_side": n, "test": 20, "held_out": 20}, "sizes": {"train": 1800, "validation": 200, "test": 500},
             "id": 0.9, "ood": ood} for n, ood in ((4, 0.1), (80, 0.3))]
    claim = rules.diversity_claim([(r["n"], r["ood"]) for r in rows])
    context = {"machine": "m", "commit": "c", "date": "d", "command": "x", "minutes": 1.0, "cpu_minutes": 2.0, "runs": 2, "reused": 0,
               "steps": 10, "universe": 100, "train_records": 2000, "canonical_form": "the ordered rule list"}
    rules.write_document(tmp_path / "v.md", rows, claim, context)
    text = (tmp_path / "v.md").read_text()
    assert "| 80 | 80 / 20 (20) | 1800 / 200 / 500 | 0.900 | 0.300 |" in text and "Verdict: holds" in text


@pytest.mark.slow  # ~30 s on an idle core: two tiny runs
def test_smoke_run_writes_the_document(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "validity_rules.py"), "--smoke", "--out", str(tmp_path)],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    data = json.loads((tmp_path / "validity-rules.json").read_text())
    assert set(data["claims"]) == {"diversity"} and len(data["rows"]) == 2
    assert data["context"]["command"] == "python benchmarks/validity_rules.py --smoke"
    assert "## Claim 1" in (tmp_path / "validity-rules.md").read_text()
