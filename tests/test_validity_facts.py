"""The facts validity claims: verdict rules on constructed inputs, and the --smoke pipeline."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def facts():
    spec = importlib.util.spec_from_file_location("validity_facts", ROOT / "benchmarks" / "validity_facts.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["validity_facts"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("validity_facts", None)


def test_reversal_verdict(facts) -> None:
    assert facts.reversal_claim(0.95, 0.02, 100)["holds"]
    assert facts.reversal_claim(0.8, 0.1, 100)["holds"]  # both bounds inclusive; ceiling max(0.1, 0.03)
    assert not facts.reversal_claim(0.79, 0.0, 100)["holds"]  # forward facts not learned
    assert not facts.reversal_claim(0.99, 0.11, 100)["holds"]  # reversal above chance
    small = facts.reversal_claim(0.9, 0.2, 12)  # chance 1/12: ceiling 3/12
    assert small["ceiling"] == pytest.approx(0.25) and small["holds"]


def test_two_hop_verdict(facts) -> None:
    held = facts.two_hop_claim(0.9, 0.1)
    assert held["holds"] and held["learned"] and held["status"] == "holds" and held["gap"] == pytest.approx(0.8)
    small_gap = facts.two_hop_claim(0.9, 0.75)
    assert small_gap["learned"] and not small_gap["holds"] and small_gap["status"] == "does not hold"
    unlearned = facts.two_hop_claim(0.4, 0.0)
    assert not unlearned["learned"] and not unlearned["holds"] and unlearned["status"] == "not learned"


def test_reversal_run_measures_forward_facts_against_their_reversals(facts) -> None:
    spec = next(s for s in facts.plan(smoke=True) if s.kind == "facts_direction")
    result = facts.build_facts_split(spec, None)
    forward = {r["structure"][1] for r in result.validation}
    assert all(r["structure"][0] == "lookup" for r in result.validation)
    assert forward == {r["structure"][1] for r in result.test}
    assert {r["id"] for r in result.validation} <= {r["id"] for r in result.train}


def test_document_states_claims_and_verdicts(facts, tmp_path: Path) -> None:
    claims = {"reversal": {**facts.reversal_claim(0.9, 0.01, 100), "status": "holds", "stopped_at": 500, "converged": True},
              "two_hop": {**facts.two_hop_claim(0.3, 0.1), "stopped_at": 8000, "converged": False}}
    context = {"command": "python benchmarks/validity_facts.py", "machine": "2 CPU cores", "commit": "abc", "date": "2026-12-02",
               "runs": 2, "minutes": 3.0, "cpu_minutes_total": 2.5, "step_caps": {"a": 3000, "b": 8000},
               "worlds": {"reversal": {"n_entities": 100}, "two_hop": {"n_entities": 50}}}
    reports = {"a": {"train": 10, "validation": 2, "test": 3, "facts_split": "direction", "held_out_facts": 3, "facts_counts": {}}}
    facts.write_document(tmp_path / "v.md", claims, context, reports)
    text = (tmp_path / "v.md").read_text()
    assert "**holds**" in text and "**not learned**" in text and "held out 3" in text and "8000 (not met)" in text


@pytest.mark.slow  # ~30-40 s on a shared machine: both runs of the pipeline on a tiny world
def test_smoke_run_writes_the_document(facts, tmp_path: Path) -> None:
    facts.main(["--smoke", "--out", str(tmp_path)])
    data = json.loads((tmp_path / "validity-facts.json").read_text())
    assert set(data["claims"]) == {"reversal", "two_hop"}
    assert data["reports"]["fact_two_hop-bridge"]["facts_split"] == "bridge"
    text = (tmp_path / "validity-facts.md").read_text()
    assert "## (a) Reversal" in text and "## (b) Two-hop" in text and "--smoke" in text
