"""The interpolation validity claim: its verdict rule on constructed inputs (every outcome),
and the --smoke pipeline end to end into tmp_path."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def claim():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("validity_interpolation", ROOT / "benchmarks" / "validity_interpolation.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["validity_interpolation"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("validity_interpolation", None)
    sys.modules.pop("validity", None)
    sys.path.remove(str(ROOT / "benchmarks"))


def test_verdict_rule_on_constructed_inputs(claim) -> None:
    holds = claim.interpolation_claim(0.8, 0.75, 0.5)  # ID bound inclusive
    assert holds["holds"] and holds["verdict"] == "holds" and holds["difference"] == 0.25
    assert claim.interpolation_claim(0.9, 0.5, 0.25)["holds"]
    small = claim.interpolation_claim(0.95, 0.6, 0.45)
    assert not small["holds"] and small["verdict"] == "does not hold"
    reversed_ = claim.interpolation_claim(0.95, 0.1, 0.9)
    assert reversed_["verdict"] == "does not hold"
    unlearned = claim.interpolation_claim(0.79, 1.0, 0.0)
    assert not unlearned["holds"] and unlearned["verdict"] == "not learned"
    assert claim.interpolation_claim(0.9, None, 0.1)["verdict"] == "does not hold"


def test_range_accuracy_pools_by_count(claim) -> None:
    cells = {"9": {"n": 10, "exact_match": 1.0}, "12": {"n": 30, "exact_match": 0.5}, "25": {"n": 5, "exact_match": 0.0}, "13": {"n": 0, "exact_match": None}}
    assert claim.range_accuracy(cells, [9, 16]) == {"exact_match": pytest.approx(25 / 40), "n": 40}
    assert claim.range_accuracy(cells, [17, 24]) == {"exact_match": None, "n": 0}


def test_smoke_run_writes_the_document(claim, tmp_path: Path) -> None:
    claim.main(["--smoke", "--out", str(tmp_path)])
    data = json.loads((tmp_path / "validity-interpolation.json").read_text())
    assert set(data["claims"]) == set(claim.TASKS)
    for figures in data["claims"].values():
        assert figures["verdict"] in ("holds", "does not hold", "not learned")
        assert {row["range"][0] for row in figures["regimes"].values()} == {4, 10}
        assert set(figures["regimes"]) == {"interpolation", "extrapolation"}
    text = (tmp_path / "validity-interpolation.md").read_text()
    assert "Verdict:" in text and "commit" in text and "CPU minutes" in text
