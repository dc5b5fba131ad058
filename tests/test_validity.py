"""The validity protocol: verdict rules on known inputs, and a reduced run of the whole pipeline."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def validity():
    spec = importlib.util.spec_from_file_location("validity", ROOT / "benchmarks" / "validity.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["validity"] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("validity", None)


def test_divergence_verdict(validity) -> None:
    falling = [(0.0, 0.99), (0.2, 0.8), (0.4, 0.5), (0.6, 0.3), (0.75, 0.1)]
    assert validity.divergence_claim(falling) == {"rho": pytest.approx(-1.0), "points": 5, "holds": True}
    one_swap = [(0.0, 0.99), (0.2, 0.5), (0.4, 0.8), (0.6, 0.3), (0.75, 0.1)]  # rho = -0.9
    assert validity.divergence_claim(one_swap)["rho"] == pytest.approx(-0.9)
    assert validity.divergence_claim(one_swap)["holds"]
    flat_ish = [(0.0, 0.5), (0.2, 0.1), (0.4, 0.9), (0.6, 0.2), (0.75, 0.4)]  # rho = -0.1
    claim = validity.divergence_claim(flat_ish)
    assert claim["rho"] == pytest.approx(-0.1) and not claim["holds"]
    assert not validity.divergence_claim([(0.1, 0.5)])["holds"]  # too few points: no rho


def seed(buckets: dict[str, tuple[int, float]]) -> dict:
    return {"by_novelty": {"ood": {b: {"n": n, "exact_match": em, "token_accuracy": em} for b, (n, em) in buckets.items()}}}


def test_novelty_pooling_and_verdict(validity) -> None:
    results = [
        {"per_seed": [seed({"0": (40, 0.9), "1": (20, 0.5), "3+": (20, 0.3)})]},
        {"per_seed": [seed({"0": (10, 0.4), "2": (60, 0.2)})]},
    ]
    pooled = validity.pooled_novelty(results)
    assert pooled["0"] == {"exact_match": pytest.approx((36 + 4) / 50), "n": 50}
    assert pooled["1+"] == {"exact_match": pytest.approx((10 + 6 + 12) / 100), "n": 100}
    claim = validity.novelty_claim(pooled)
    assert claim["margin"] == pytest.approx(0.8 - 0.28) and claim["holds"]
    close = {"0": {"exact_match": 0.50, "n": 100}, "1+": {"exact_match": 0.47, "n": 100}}
    assert not validity.novelty_claim(close)["holds"]
    few = {"0": {"exact_match": 1.0, "n": 5}, "1+": {"exact_match": 0.0, "n": 100}}
    assert validity.novelty_claim(few) == {"margin": None, "enough_records": False, "holds": False}


def test_gap_and_positions_verdicts(validity) -> None:
    assert validity.gap_claim(0.95, 0.1)["holds"]
    assert not validity.gap_claim(0.95, 0.9)["holds"]  # generalized: no gap
    assert not validity.gap_claim(0.4, 0.0)["holds"]  # never learned the train distribution
    assert validity.gap_claim(0.8, 0.6)["holds"]  # both bounds are inclusive
    assert validity.positions_claim({"rope": 0.1, "nope": 0.3})["holds"]
    assert not validity.positions_claim({"rope": 0.1, "nope": 0.5})["holds"]


def test_reduced_protocol_runs_end_to_end(validity, tmp_path: Path) -> None:
    argv = sys.argv
    sys.argv = ["validity.py", "--smoke", "--out", str(tmp_path), "--workers", "1"]
    try:
        validity.main()
    finally:
        sys.argv = argv
    document = (tmp_path / "validity.md").read_text()
    data = json.loads((tmp_path / "validity.json").read_text())
    expected = {"divergence", "novelty", "positions", "easy_to_hard", "traces"} | {f"length:{t}" for t in ("reverse_string", "parity_check", "bucket_sort", "addition")}
    assert set(data["claims"]) == expected
    assert document.count("**holds**") + document.count("**does not hold**") == len(expected)
    assert data["claims"]["divergence"]["points"] == 3  # scan-simple, one graded target, the maximum
    assert (tmp_path / "validity-baselines-divergence.png").is_file()
    assert (tmp_path / "validity-baselines-novelty.png").is_file()
    traces = data["claims"]["traces"]
    assert set(traces["fine"]) == {"id", "ood", "trace_id", "trace_ood"} and set(traces["answer_only"]) == {"id", "ood"}
    assert "## Traces: answer-only vs fine (claim 6)" in document and "| 6. Fine traces" in document


def test_trace_verdict(validity) -> None:
    claim = validity.trace_claim({"id": 0.8, "ood": 0.45}, {"id": 1.0, "ood": 0.55, "trace_id": 0.9, "trace_ood": 0.1})
    assert claim["difference"] == pytest.approx(0.1) and claim["holds"]  # the margin is inclusive
    assert not validity.trace_claim({"id": 0.8, "ood": 0.45}, {"id": 1.0, "ood": 0.54, "trace_id": 1, "trace_ood": 0})["holds"]
    assert not validity.trace_claim({"id": 0.8, "ood": 0.6}, {"id": 0.2, "ood": 0.1, "trace_id": 0, "trace_ood": 0})["holds"]


def test_the_trace_case_merges_into_the_documents_without_touching_other_claims(validity, tmp_path: Path) -> None:
    for name in ("validity.md", "validity.json"):
        (tmp_path / name).write_text((ROOT / "docs" / name).read_text())
    before_md = (tmp_path / "validity.md").read_text().splitlines()
    before = json.loads((tmp_path / "validity.json").read_text())
    context = {"command": "c", "machine": "m", "commit": "x", "date": "d", "minutes": 1.0, "runs": 2, "steps": 5, "reused": 0}
    for ood in (0.3, 0.9):  # a second merge replaces the first
        claim = validity.trace_claim({"id": 0.8, "ood": 0.4}, {"id": 1.0, "ood": ood, "trace_id": 1.0, "trace_ood": 0.2})
        validity.merge_trace_case(tmp_path, claim, context)
    after_md = (tmp_path / "validity.md").read_text().splitlines()
    rows = [line for line in after_md if line.startswith("| 6. Fine traces")]
    assert len(rows) == 1 and "fine 0.900" in rows[0] and "**holds**" in rows[0]
    assert after_md.count("## Traces: answer-only vs fine (claim 6)") == 1
    kept = [line for line in before_md if not line.startswith("| 6. ")]
    old_section = "## Traces: answer-only vs fine (claim 6)"
    if old_section in kept:  # the committed document may already hold claim 6
        start = kept.index(old_section)
        end = next(i for i in range(start + 1, len(kept)) if kept[i].startswith("## "))
        del kept[start:end]
    remaining = iter(after_md)
    assert all(line in remaining for line in kept)  # every other line kept, in order
    after = json.loads((tmp_path / "validity.json").read_text())
    assert after["claims"]["traces"]["fine"]["ood"] == 0.9
    assert {k: v for k, v in after["claims"].items() if k != "traces"} == {k: v for k, v in before["claims"].items() if k != "traces"}


def test_notes_flag_reversals_unlearned_runs_and_vacuous_verdicts(validity) -> None:
    claims = {
        "divergence": {"series": [(0.0, 0.9), (0.3, 0.5), (0.5, 0.6), (0.7, 0.1)]},
        "positions": {"ood": {"rope": 0.0, "nope": 0.0}, "holds": True, "learned": {"rope": False, "nope": False}},
        "length:parity_check": validity.gap_claim(0.9, 0.4),
        "easy_to_hard": validity.gap_claim(0.3, 0.0),
    }
    notes = validity.notes(claims)
    assert len(notes) == 3
    assert "D_C 0.300 -> 0.500: 0.500 -> 0.600" in notes[0]
    assert "vacuously" in notes[1]
    assert notes[2].startswith("easy_to_hard: the model did not learn") and "ID 0.300 < 0.8" in notes[2]
    claims["positions"]["learned"]["rope"] = True
    claims["divergence"]["series"] = [(0.0, 0.9), (0.7, 0.1)]
    assert [n.split(":")[0] for n in validity.notes(claims)] == ["easy_to_hard"]
