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


@pytest.mark.slow  # ~70 s: every group of claims (the SCAN MCD searches included)
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
    expected |= {f"regular:{t}" for t in ("parity_check", "even_pairs", "cycle_navigation")}
    expected |= {"context_free:reverse_string", "context_free:stack_manipulation", "context_sensitive:duplicate_string"}
    expected |= {"looped:prefix_sums", "looped:parity_check"}
    assert set(data["claims"]) == expected
    assert document.count("**holds**") + document.count("**does not hold**") == len(expected)
    assert data["claims"]["divergence"]["points"] == 3  # scan-simple, one graded target, the maximum
    assert (tmp_path / "validity-baselines-divergence.png").is_file()
    assert (tmp_path / "validity-baselines-novelty.png").is_file()
    traces = data["claims"]["traces"]
    assert set(traces["fine"]) == {"id", "ood", "trace_id", "trace_ood"} and set(traces["answer_only"]) == {"id", "ood"}
    assert "## Traces: answer-only vs fine (claim 6)" in document and "| 6. Fine traces" in document
    assert "## Architectures (claims 7-10)" in document and "CPU minutes by group of claims: scan" in document
    looped = data["claims"]["looped:parity_check"]
    assert looped["window"] == 2 and set(looped["scores"]) == {"6", "12", "24"}  # k, 2k and 4k
    assert set(data["claims"]["context_sensitive:duplicate_string"]["runs"]) == {"tape_rnn", "stack_rnn", "lstm", "transformer"}
    assert all(f["stopped_at"] == [10] and f["converged"] is False for f in data["claims"]["regular:even_pairs"]["runs"].values())


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


def test_architecture_verdict(validity) -> None:
    figures = lambda score, converged=True: {"score": score, "id": 1.0, "converged": converged, "stopped_at": [500]}  # noqa: E731
    claim = validity.architecture_claim({"stack_rnn": figures(0.9), "lstm": figures(0.62), "transformer": figures(0.6)}, "stack_rnn")
    assert claim["holds"] and claim["winner"] == "stack_rnn"  # the bound is inclusive for the winner
    assert not validity.architecture_claim({"stack_rnn": figures(0.99), "lstm": figures(0.9)}, "stack_rnn")["holds"]  # ... and for the others
    assert not validity.architecture_claim({"stack_rnn": figures(0.89), "lstm": figures(0.5)}, "stack_rnn")["holds"]
    assert not validity.architecture_claim({"stack_rnn": figures(None), "lstm": figures(0.5)}, "stack_rnn")["holds"]
    notes = validity.notes({"context_free:reverse_string": validity.architecture_claim(
        {"stack_rnn": figures(0.3, converged=False), "lstm": figures(0.5, converged=False)}, "stack_rnn")})
    assert len(notes) == 2 and "stack_rnn never met the stopping rule" in notes[0] and "vacuous" in notes[1]


def test_looped_verdict(validity) -> None:
    run = lambda score: {"score": score, "id": 1.0, "converged": True, "stopped_at": [100]}  # noqa: E731
    assert validity.looped_claim({8: 0.6, 16: 0.95, 32: 0.7}, 8, run(0.6), run(0.55))["holds"]  # 2k is enough
    assert not validity.looped_claim({8: 0.95, 16: 0.97, 32: 0.97}, 8, run(0.95), run(0.55))["holds"]  # already solved with k
    assert not validity.looped_claim({8: 0.6, 16: 0.8, 32: 0.85}, 8, run(0.6), run(0.55))["holds"]  # more iterations do not reach 0.9
    assert not validity.looped_claim({8: 0.6, 16: 0.95}, 8, run(0.6), run(0.92))["holds"]  # the transformer generalizes too


def test_run_figures_take_the_best_seed_and_all_seeds_convergence(validity) -> None:
    results = [{"per_seed": [{"ood_length_score": 0.5, "id_exact_match": 1.0, "converged": True, "stopped_at": 300}]},
               {"per_seed": [{"ood_length_score": 0.8, "id_exact_match": 0.5, "converged": False, "stopped_at": 900}]}]
    assert validity.run_figures(results) == {"score": 0.8, "id": 0.75, "converged": False, "stopped_at": [300, 900]}


def test_the_plan_trains_each_model_of_each_claim_once(validity) -> None:
    specs = validity.plan(validity.FULL, smoke=False, groups=("architectures",))
    keys = [(s.config, s.model) for s in specs]
    assert len(keys) == len(set(keys)) == 3 * 2 + 2 * 3 + 4 + 2 * 2
    looped = {s.config: s for s in specs if s.arch == "looped"}
    assert looped["prefix_sums-lengths-1-20"].train["test_iterations"] == (8, 16, 32) and looped["prefix_sums-lengths-1-20"].train["window"] == 0
    assert looped["parity_check-lengths-1-20"].train["test_iterations"] == (24, 48, 96) and looped["parity_check-lengths-1-20"].train["window"] == 2
    assert all(s.train["until_id"] == validity.UNTIL_ID and s.train["steps"] == validity.FULL.arch_steps for s in specs)
    regular = [s for s in specs if s.config == "parity_check-lengths-1-40"]
    assert {s.model for s in regular} == {"lstm", "rope"} and regular[0].args["test"] == (41, 500)
    convergence = validity.plan(validity.FULL, smoke=False, groups=("convergence",))
    assert all(s.train["until_id"] == validity.UNTIL_ID and s.train["steps"] == validity.FULL.converge_steps for s in convergence)
    assert all(not s.train for s in validity.plan(validity.FULL, smoke=False, groups=("scan",)))  # claims 1-2: fixed steps


def test_one_group_of_claims_runs_alone_and_writes_its_own_file(validity, tmp_path: Path) -> None:
    argv = sys.argv
    sys.argv = ["validity.py", "--smoke", "--only", "architectures", "--out", str(tmp_path), "--workers", "1"]
    try:
        validity.main()
    finally:
        sys.argv = argv
    data = json.loads((tmp_path / "validity-architectures.json").read_text())
    assert set(data["claims"]) == {"regular:parity_check", "regular:even_pairs", "regular:cycle_navigation", "context_free:reverse_string",
                                   "context_free:stack_manipulation", "context_sensitive:duplicate_string", "looped:prefix_sums", "looped:parity_check"}
    assert data["context"]["command"] == "python benchmarks/validity.py --only architectures --smoke"
    assert set(data["context"]["cpu_minutes"]) == {"architectures"}
    assert not (tmp_path / "validity.md").exists()  # a group alone leaves the document alone


def test_only_an_axis_runs_that_axis_module_with_the_forwarded_options(validity, monkeypatch) -> None:
    """--only facts|rules|shortcuts|interpolation hands over to benchmarks/validity_AXIS.py's main."""
    import types

    calls: list[list[str]] = []
    fake = types.ModuleType("validity_fake_axis")
    fake.main = lambda argv=None: calls.append(list(argv))
    monkeypatch.setitem(sys.modules, "validity_fake_axis", fake)
    monkeypatch.setitem(validity.AXES, "facts", "validity_fake_axis")
    monkeypatch.setattr(sys, "argv", ["validity.py", "--only", "facts", "--smoke", "--out", "OUT"])
    validity.main()
    monkeypatch.setattr(sys, "argv", ["validity.py", "--only", "facts", "--out", "OUT", "--workers", "3", "--runs", "R"])
    validity.main()
    assert calls == [["--smoke", "--out", "OUT"], ["--out", "OUT", "--runs", "R", "--workers", "3"]]
    assert set(validity.AXES) == {"facts", "rules", "shortcuts", "interpolation"}
    for module in ("validity_facts", "validity_rules", "validity_shortcuts", "validity_interpolation"):
        assert (ROOT / "benchmarks" / f"{module}.py").is_file()
