"""Baselines on traced targets: answer and trace exact match apart; untraced scores unchanged."""

from __future__ import annotations

import pytest

from gengap.baselines.metrics import aggregate, compare_parts, score, seed_summary
from gengap.baselines.report import group_runs, trace_section


def record(target: str, trace: str | None = "fine", length: int = 3) -> dict:
    meta = {"trace": trace} if trace else {}
    return {"id": target, "input": " ".join(["1"] * length), "target": target, "meta": meta,
            "difficulty": {"input_length": length, "output_length": len(target.split())}}


def test_compare_parts_splits_at_the_separator() -> None:
    assert compare_parts("1 0 1 => 1", "1 0 1 => 1") == (True, True)
    assert compare_parts("1 0 1 => 1", "1 1 1 => 1") == (True, False)  # wrong step, right answer
    assert compare_parts("1 0 1 => 1", "1 0 1 => 0") == (False, True)
    assert compare_parts("1 0 1 => 1", "1 0 1 1") == (False, False)  # no separator
    assert compare_parts("=> 1", "=> 1") == (True, True)  # an empty trace


def test_score_reports_answer_and_trace_exact_match_for_traced_records() -> None:
    records = [record("1 0 => 0"), record("1 1 => 1"), record("0 0 => 0", length=5), record("1 => 1", length=5)]
    predictions = ["1 0 => 0", "1 0 => 1", "0 1 => 1", "1 1"]
    result = score(records, predictions)
    assert result["exact_match"] == 0.25
    assert result["traced_n"] == 4
    assert result["answer_exact_match"] == 0.5  # records 1 and 2
    assert result["trace_exact_match"] == 0.25  # record 1 only
    assert result["by_length"]["3"]["answer_exact_match"] == 1.0 and result["by_length"]["5"]["answer_exact_match"] == 0.0
    assert result["by_length"]["3"]["trace_exact_match"] == 0.5


def test_untraced_scores_have_no_part_figures() -> None:
    records = [record("1", trace=None), record("0", trace=None), record("1", trace="none")]
    result = score(records, ["1", "1", "1"])
    assert result["exact_match"] == pytest.approx(2 / 3)
    assert not {"traced_n", "answer_exact_match", "trace_exact_match"} & set(result)
    assert not {"answer_exact_match"} & set(result["by_length"]["3"])
    summary = seed_summary(result, result)
    assert "id_answer_exact_match" not in summary
    assert "id_answer_exact_match" not in aggregate([{**summary, "seed": 0}])


def _results(config: str, seed: int, id_answer: float, ood_answer: float) -> dict:
    id_score = score([record("1 => 1")], ["1 => 1" if id_answer else "0 => 0"])
    ood_score = score([record("1 => 1")], ["1 => 1" if ood_answer else "1 => 0"])
    summary = {"seed": seed, **seed_summary(id_score, ood_score)}
    return {"config": config, "pos": "rope", "preset": "tiny", "steps": 10, "per_seed": [summary]}


def test_seed_summary_aggregate_and_report_carry_the_parts() -> None:
    runs = [_results("parity-fine", 0, 1.0, 0.0), _results("parity-fine", 1, 1.0, 1.0)]
    seed = runs[0]["per_seed"][0]
    assert (seed["id_answer_exact_match"], seed["ood_answer_exact_match"]) == (1.0, 0.0)
    assert (seed["id_trace_exact_match"], seed["ood_trace_exact_match"]) == (1.0, 1.0)  # the trace was right
    rows = group_runs(runs)
    assert rows[0]["aggregate"]["ood_answer_exact_match"]["mean"] == 0.5
    text = trace_section(rows)
    assert "| parity-fine | rope | tiny | 1.000 ± 0.000 | 0.500 ± 0.707 | 1.000 ± 0.000 | 1.000 ± 0.000 |" in text
    plain = {"config": "parity", "pos": "rope", "preset": "tiny", "steps": 10,
             "per_seed": [{"seed": 0, **seed_summary(score([record("1", None)], ["1"]), score([record("1", None)], ["0"]))}]}
    assert trace_section(group_runs([plain])) is None
