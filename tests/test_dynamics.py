"""Training dynamics: train-subset accuracy, first steps and the grokking delay, constant
schedule, full batch, label noise, training-fraction lists, lr x weight-decay grids, the
report's dynamics section and plots, and the GPU protocol's deferred grokking claims at toy scale."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from gengap.baselines import training
from gengap.baselines.dynamics import dynamics_rows, dynamics_section, grid_cells, has_fractions, has_grid, outcome, training_fraction
from gengap.baselines.errors import BaselineError
from gengap.baselines.label_noise import corrupt
from gengap.baselines.report import make_report
from gengap.baselines.sweep import grid_points, plan_runs
from gengap.baselines.training import TrainSettings, lr_factor, reach_steps, train_and_evaluate
from gengap.generators import get_task
from gengap.suite import parse_suite
from gengap.splits import split

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def modular():
    task = get_task("modular_operation")
    pool = list(task.enumerate(task.make_params({"p": 11, "op": "+"})).records("modular_operation"))
    return split(pool, "iid", {"train_fraction": 0.5, "validation_fraction": 0.2}, seed=3)


def records(n: int, answers: int = 5) -> list[dict]:
    return [{"id": f"r{i}", "input": f"x {i}", "target": str(i % answers)} for i in range(n)]


# -- label noise ----------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 300), fraction=st.floats(0, 0.95), seed=st.integers(0, 2**31))
def test_label_noise_corrupts_exactly_the_seeded_fraction_with_wrong_answers(n: int, fraction: float, seed: int) -> None:
    original = records(n)
    result = corrupt(original, fraction, seed)
    assert len(result.corrupted) == round(fraction * n) and list(result.corrupted) == sorted(set(result.corrupted))
    for i, record in enumerate(result.records):
        if i in result.corrupted:
            assert record["target"] != original[i]["target"] and record["true_target"] == original[i]["target"]
            assert record["target"] in {r["target"] for r in original}  # an answer of the set
        else:
            assert record == original[i]
    assert original == records(n)  # the input (a release's records) is never changed
    assert corrupt(original, fraction, seed) == result  # a pure function of its seed


def test_label_noise_needs_two_answers() -> None:
    with pytest.raises(BaselineError, match="two distinct targets"):
        corrupt(records(10, answers=1), 0.5, 0)
    assert corrupt(records(10, answers=1), 0.0, 0).corrupted == ()


def test_a_noisy_run_trains_on_the_corrupted_targets_reports_them_and_leaves_the_data(modular, tmp_path: Path) -> None:
    before = [dict(r) for r in modular.train]
    settings_ = dict(preset="tiny", steps=6, eval_every=3, eval_examples=64, seeds=(0, 1), layers=1, d_model=16, heads=2,
                     label_noise=0.2, noise_seed=5, full_batch=True)
    results = train_and_evaluate(modular, "m", out=tmp_path / "run", **settings_)
    assert modular.train == before
    expected = corrupt(modular.train, 0.2, 5)
    for seed in results["per_seed"]:  # the same corruption for every seed of the run
        noise = seed["label_noise"]
        assert noise["corrupted"] == len(expected.corrupted) == round(0.2 * len(modular.train))
        assert [r["id"] for r in noise["records"]] == [expected.records[i]["id"] for i in expected.corrupted]
        assert all(r["target"] != r["trained_on"] for r in noise["records"])
        assert set(noise["train_exact_match"]) == {"clean", "corrupted_as_trained", "corrupted_true_answer"}
    assert results["batch_size"] == len(modular.train)  # full batch
    run = training.Run(training.load_split(modular, "m"), TrainSettings(**{k: v for k, v in settings_.items() if k != "seeds"}).resolve(),
                       torch.device("cpu"), None, False, None)
    trained = set()
    for ids, length in zip(run.train.ids.tolist(), run.train.lengths.tolist()):
        text = run.tokenizer.decode(ids[:length - 1])  # input <sep> target (without <end>)
        question, answer = text.split(" <sep> ")
        trained.add((question, answer))
    assert trained == {(r["input"], r["target"]) for r in expected.records}  # the corrupted targets, each record once
    assert trained != {(r["input"], r["target"]) for r in modular.train}
    with pytest.raises(BaselineError, match="label_noise"):
        train_and_evaluate(modular, "m", label_noise=1.0, **{k: v for k, v in settings_.items() if k != "label_noise"})


# -- schedule, first steps, delay ------------------------------------------------------------


def test_the_constant_schedule_is_constant_after_warmup() -> None:
    assert [lr_factor(i, 3, 100, 0.1, "constant") for i in range(6)] == [1 / 3, 2 / 3, 1.0, 1.0, 1.0, 1.0]
    assert lr_factor(99, 3, 100, 0.1, "constant") == 1.0 and lr_factor(99, 3, 100, 0.1) == pytest.approx(0.1, abs=1e-3)
    with pytest.raises(BaselineError, match="unknown schedule"):
        TrainSettings(schedule="linear").resolve()


def test_reach_steps_and_the_delay_on_a_scripted_metric_sequence() -> None:
    rows = [{"step": 10, "train_exact_match": 0.5, "id_exact_match": 0.0}, {"step": 20, "train_exact_match": 0.995, "id_exact_match": 0.1},
            {"step": 30, "train_exact_match": 0.98, "id_exact_match": 0.3}, {"step": 200, "train_exact_match": 1.0, "id_exact_match": 0.99}]
    assert reach_steps(rows, 0.99) == {"first_step": {"threshold": 0.99, "train": 20, "id": 200}, "grokking_delay": 10.0}
    assert reach_steps(rows[:3], 0.99) == {"first_step": {"threshold": 0.99, "train": 20, "id": None}, "grokking_delay": None}
    assert reach_steps(rows, 0.2)["first_step"] == {"threshold": 0.2, "train": 10, "id": 30}
    assert reach_steps([], 0.99)["grokking_delay"] is None


def test_train_accuracy_is_logged_reproducibly_with_the_constant_schedule(modular, tmp_path: Path) -> None:
    settings_ = dict(preset="tiny", steps=8, eval_every=2, eval_examples=16, seeds=(0,), layers=1, d_model=16, heads=2,
                     schedule="constant", warmup=2, reach=0.5)
    first = train_and_evaluate(modular, "m", out=tmp_path / "a", **settings_)
    second = train_and_evaluate(modular, "m", out=tmp_path / "b", **settings_)
    rows = [json.loads(line) for line in (tmp_path / "a" / "metrics.jsonl").read_text().splitlines()]
    again = [json.loads(line) for line in (tmp_path / "b" / "metrics.jsonl").read_text().splitlines()]
    assert all("train_exact_match" in row and "train_token_accuracy" in row for row in rows)
    assert [r["train_exact_match"] for r in rows] == [r["train_exact_match"] for r in again]
    assert [r["lr"] for r in rows] == [pytest.approx(3e-3)] * 4  # constant after the 2 warmup steps
    seed = first["per_seed"][0]
    assert seed["first_step"] == reach_steps(rows, 0.5)["first_step"] and seed["first_step"]["threshold"] == 0.5
    assert seed["train_exact_match"] == second["per_seed"][0]["train_exact_match"]


# -- fractions and grids ----------------------------------------------------------------------

SUITE = """\
name: g
version: 0.0.1
seed: 1
license: mit
entries:
  - {task: modular_operation, split: grok, strategy: iid, pool: all, params: {p: 11}, options: {train_fraction: [0.5, 0.3, 0.25], validation_fraction: 0.2}}
"""


def test_a_list_of_training_fractions_gives_one_config_per_fraction_named_to_sort() -> None:
    suite = parse_suite(SUITE)
    names = [entry["name"] for entry in suite["entries"]]
    assert names == ["modular_operation-grok_f0500", "modular_operation-grok_f0300", "modular_operation-grok_f0250"]
    assert sorted(names) == names[::-1]  # names sort by fraction
    assert [entry["options"]["train_fraction"] for entry in suite["entries"]] == [0.5, 0.3, 0.25]
    with pytest.raises(ValueError, match="line 6: entries\\[0\\].options.train_fraction: a sweep of training fractions"):
        parse_suite(SUITE.replace("[0.5, 0.3, 0.25]", "[0.5, 1.5]"))
    with pytest.raises(ValueError, match="one option at a time"):
        parse_suite(SUITE.replace("validation_fraction: 0.2", "compound_divergence: [0.1, 0.2]"))


def test_the_training_fraction_is_the_share_of_the_pool_in_train(modular) -> None:
    total = sum(len(part) for part in modular.parts().values())
    assert abs(len(modular.train) - 0.5 * total) <= 1 and modular.report["options"]["train_fraction"] == 0.5  # up to rounding
    task = get_task("modular_operation")
    pool = list(task.enumerate(task.make_params({"p": 11, "op": "+"})).records("modular_operation"))
    plain = split(pool, "iid", {"test_fraction": 0.3}, seed=3)
    assert "train_fraction" not in plain.report["options"]  # reports made before the option keep their bytes
    with pytest.raises(Exception, match="needs more than the whole pool"):
        split(pool, "iid", {"train_fraction": 0.95, "validation_fraction": 0.2}, seed=3)


def test_lr_and_weight_decay_lists_make_the_grid() -> None:
    assert grid_points({"lr": [1e-3, 3e-3], "weight_decay": [0.1, 1.0], "steps": 5}) == [
        {"lr": 1e-3, "weight_decay": 0.1}, {"lr": 1e-3, "weight_decay": 1.0}, {"lr": 3e-3, "weight_decay": 0.1}, {"lr": 3e-3, "weight_decay": 1.0}]
    runs = plan_runs("/rel", ["c"], ["rope"], ["tiny"], [0, 1], {"lr": [1e-3, 3e-3], "weight_decay": 1.0}, "/out")
    assert [r.name for r in runs] == ["c-rope-tiny-lr0.001-seed0", "c-rope-tiny-lr0.001-seed1", "c-rope-tiny-lr0.003-seed0", "c-rope-tiny-lr0.003-seed1"]
    assert {r.settings["lr"] for r in runs} == {1e-3, 3e-3} and all(r.settings["weight_decay"] == 1.0 for r in runs)
    assert [r.name for r in plan_runs("/rel", ["c"], ["rope"], ["tiny"], [0], {"lr": 0.01}, "/out")] == ["c-rope-tiny-seed0"]


# -- the report -------------------------------------------------------------------------------


def fake(config: str, lr: float, wd: float, first: tuple[int | None, int | None], sizes=(50, 10, 40), seed: int = 0) -> dict:
    return {"config": config, "pos": "rope", "preset": "tiny", "steps": 300, "settings": {"lr": lr, "weight_decay": wd, "label_noise": 0.0},
            "data": {"sizes": dict(zip(("train", "validation", "test"), sizes))},
            "per_seed": [{"seed": seed, "id_exact_match": 1.0, "ood_exact_match": 1.0, "gap": 0.0, "id_token_accuracy": 1.0, "ood_token_accuracy": 1.0,
                          "by_length": {"id": {}, "ood": {}}, "first_step": {"threshold": 0.99, "train": first[0], "id": first[1]},
                          "grokking_delay": first[1] / first[0] if first[0] and first[1] else None, "stopped_at": 300}]}


def test_outcomes_fractions_and_grid_cells() -> None:
    assert outcome({"first_step": {"train": 10, "id": 50}}) == "generalized"
    assert outcome({"first_step": {"train": 10, "id": None}}) == "memorized"
    assert outcome({"first_step": {"train": None, "id": None}}) == "neither"
    assert outcome({}) is None  # a run made before first steps existed
    assert training_fraction({"data": {"sizes": {"train": 30, "validation": 10, "test": 60}}}) == 0.3
    history = [{"seed": 0, "step": s, "train_exact_match": 1.0, "id_exact_match": 0.5} for s in (10, 20)]
    rows = dynamics_rows([(fake("a", 1e-3, 1.0, (10, 200)), history), (fake("a", 3e-3, 1.0, (10, None)), history),
                          (fake("b", 1e-3, 1.0, (None, None), sizes=(30, 10, 60)), [])])
    assert [(r["config"], r["outcome"], r["fraction"]) for r in rows] == [("a", "generalized", 0.5), ("a", "memorized", 0.5), ("b", "neither", 0.3)]
    assert rows[0]["curve"] == [(10, 1.0, 0.5), (20, 1.0, 0.5)] and rows[2]["curve"] == []
    assert grid_cells(rows) == {"a / rope": {(1e-3, 1.0): ["generalized"], (3e-3, 1.0): ["memorized"]}, "b / rope": {(1e-3, 1.0): ["neither"]}}
    assert has_grid(rows) and has_fractions(rows)
    section = dynamics_section(rows)
    assert "| a | rope | tiny | 0 | 0.001 | 1 | 0 | 0.500 | 10 | 200 | 20.0 | generalized |" in section
    assert "| b |" not in section  # no curve: nothing to show
    assert dynamics_section(rows[2:]) is None


def test_the_report_draws_the_grokking_curve_delay_and_grid(tmp_path: Path) -> None:
    for name, (config, lr, first, sizes) in {"r1": ("f3", 1e-3, (10, 400), (30, 10, 60)), "r2": ("f5", 1e-3, (10, 100), (50, 10, 40)),
                                             "r3": ("f5", 3e-3, (20, None), (50, 10, 40))}.items():
        folder = tmp_path / "runs" / name
        folder.mkdir(parents=True)
        (folder / "results.json").write_text(json.dumps(fake(config, lr, 1.0, first, sizes)))
        (folder / "metrics.jsonl").write_text("".join(json.dumps({"seed": 0, "step": s, "train_exact_match": 1.0, "id_exact_match": 0.1}) + "\n"
                                                      for s in (10, 100, 400)) + '{"torn')
    report = make_report([tmp_path / "runs"], tmp_path / "report.md")
    assert set(report["plots"]) >= {"dynamics", "delay", "grid"}
    assert all(report["plots"][name].stat().st_size > 1000 for name in ("dynamics", "delay", "grid"))
    text = (tmp_path / "report.md").read_text()
    assert "## Training dynamics" in text and "(report-dynamics.png)" in text and "(report-delay.png)" in text and "(report-grid.png)" in text


# -- every engine protocol of the GPU protocol, at toy scale on the CPU ----------------------------

DEFERRED_KEYS = {
    "easy-to-hard": ["easy_to_hard"], "two-hop": ["two_hop"], "grokking": ["grokking_97:delay", "grokking_97:fraction"],
    "label-noise": ["label_noise"], "looped": ["looped:prefix_sums", "looped:parity_check"],
    "duplicate-string": ["context_sensitive:duplicate_string"], "cfq": ["cfq:mcd", "cfq:divergence"], "rules": ["diversity"],
    "memorized": ["fresh:memorized"],
}


def test_every_engine_protocol_is_smoke_tested() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import gpu_protocol

    assert set(DEFERRED_KEYS) == set(gpu_protocol.ENGINE_PROTOCOLS)


@pytest.mark.parametrize("protocol", sorted(DEFERRED_KEYS))
def test_the_gpu_protocols_deferred_claims_smoke_on_cpu(tmp_path: Path, protocol: str) -> None:
    """A GPU session has minutes: each deferred protocol must run end to end (build, train, judge,
    render) before it gets there."""
    import subprocess

    command = [sys.executable, str(ROOT / "benchmarks" / "gpu_protocol.py"), "--protocol", protocol, "--smoke", "--device", "cpu",
               "--out", str(tmp_path / "g")]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    document = json.loads((tmp_path / "g" / "validity.json").read_text())
    assert [c["key"] for c in document["claims"]] == DEFERRED_KEYS[protocol]
    assert all(c["verdict"] in ("holds", "does not hold", "not learned") for c in document["claims"])
    assert "## GPU protocol" in (tmp_path / "g" / "validity.md").read_text()


def test_the_shipped_grokking_suite_and_sweep() -> None:
    from gengap.suite import load_suite
    from gengap.sweep_config import find_sweep, load_sweep

    suite = load_suite(ROOT / "gengap" / "suites" / "grokking.yaml")
    assert [e["name"] for e in suite["entries"]] == [f"modular_operation-grok_f{f}" for f in ("0300", "0400", "0500")]
    assert all(e["params"] == {"p": 97, "op": "/"} for e in suite["entries"])
    sweep = load_sweep(find_sweep("grokking"))
    assert sweep.suite == (ROOT / "gengap" / "suites" / "grokking.yaml").resolve()
    assert {k: sweep.overrides[k] for k in ("weight_decay", "schedule", "full_batch", "d_model", "layers")} == {
        "weight_decay": 1.0, "schedule": "constant", "full_batch": True, "d_model": 128, "layers": 2}


def test_a_noisy_full_batch_run_resumes_exactly(modular, tmp_path: Path) -> None:
    settings_ = dict(preset="tiny", steps=9, eval_every=3, eval_examples=32, seeds=(0,), layers=1, d_model=16, heads=2,
                     label_noise=0.3, noise_seed=2, full_batch=True, schedule="constant")
    whole = train_and_evaluate(modular, "m", out=tmp_path / "whole", **settings_)

    def kill(event: dict) -> None:
        if event["step"] == 7:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_and_evaluate(modular, "m", out=tmp_path / "cut", callback=kill, **settings_)
    with pytest.raises(BaselineError, match="label_noise"):
        train_and_evaluate(modular, "m", out=tmp_path / "cut", resume=True, **{**settings_, "label_noise": 0.2})
    resumed = train_and_evaluate(modular, "m", out=tmp_path / "cut", resume=True, **settings_)
    timing = {"tokens_per_s", "train_seconds"}
    assert [{k: v for k, v in s.items() if k not in timing} for s in resumed["per_seed"]] == \
        [{k: v for k, v in s.items() if k not in timing} for s in whole["per_seed"]]
    rows = lambda name: [{k: v for k, v in json.loads(line).items() if k not in ("tokens_per_s", "train_seconds")}  # noqa: E731
                         for line in (tmp_path / name / "metrics.jsonl").read_text().splitlines()]
    assert rows("cut") == rows("whole")


def test_the_dynamics_table_tells_setups_apart_counts_a_duplicate_seed_once_and_names_the_runs_it_leaves_out(tmp_path: Path) -> None:
    """Issue 39 item 13: two setups labelled alike, a seed the duplicate warning drops still listed,
    and stream runs left out silently."""
    short, long_ = fake("a", 1e-3, 1.0, (10, 200)), {**fake("a", 1e-3, 1.0, (10, 400)), "steps": 600}
    again = fake("a", 1e-3, 1.0, (20, 250))  # seed 0 of short's setup again: the later run counts
    stream = {**fake("a", 1e-3, 1.0, (None, 100), seed=3), "settings": {"lr": 1e-3, "weight_decay": 1.0, "label_noise": 0.0, "stream": "reverse_string"}}
    curve = lambda seed: "".join(json.dumps({"seed": seed, "step": s, "train_exact_match": 1.0, "id_exact_match": 0.5}) + "\n" for s in (10, 200))  # noqa: E731
    for name, results, history in [("1-short", short, curve(0)), ("2-long", long_, curve(0)), ("3-again", again, curve(0)),
                                   ("4-stream", stream, json.dumps({"seed": 3, "step": 100, "id_exact_match": 1.0}) + "\n")]:
        (tmp_path / "runs" / name).mkdir(parents=True)
        (tmp_path / "runs" / name / "results.json").write_text(json.dumps(results))
        (tmp_path / "runs" / name / "metrics.jsonl").write_text(history)
    report = make_report([tmp_path / "runs"])
    section = report["text"][report["text"].index("## Training dynamics"):]
    table = [line for line in section.splitlines() if line.startswith("| a |")]
    assert table == [
        "| a | rope (steps=300, stream=none) | tiny | 0 | 0.001 | 1 | 0 | 0.500 | 20 | 250 | 12.5 | generalized |",  # 3-again, not 1-short
        "| a | rope (steps=600, stream=none) | tiny | 0 | 0.001 | 1 | 0 | 0.500 | 10 | 400 | 40.0 | generalized |",
    ]
    assert "- a rope (steps=300, stream=reverse_string) tiny, seed 3: a stream run trains on generated records" in section
    assert len(report["warnings"]) == 1 and "seed 0 is in 2 runs" in report["warnings"][0]
    gap_rows = {row["model"] for row in report["rows"]}
    assert {line.split(" | ")[1] for line in table} <= gap_rows  # the labels of the gap table
