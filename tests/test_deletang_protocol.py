"""Deletang et al. 2023 as the paper ran it: fresh batches (resumable, counted), per-length test
sampling, the non-causal encoder, the ``deletang`` preset, and old runs' identities unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings, strategies as st

from gengap.baselines.encoder import Encoder
from gengap.baselines.errors import BaselineError
from gengap.baselines.length_test import MIN_PER_LENGTH, LengthTest, standard_error_bound
from gengap.baselines.metrics import input_length
from gengap.baselines.settings import DELETANG_LEARNING_RATES, DELETANG_STACK_SIZE, TrainSettings
from gengap.baselines.training import train_and_evaluate
from gengap.splits import sample_length_split
from tests.test_train_stream import _comparable, _rows

FRESH = dict(preset="deletang", d_model=32, steps=30, batch_size=16, eval_every=10, checkpoint_every=10, eval_examples=8,
             output_mode="empty-tape", stream="parity_check", sizes=((1, 8),), test_per_length=4)


@pytest.fixture(scope="module")
def parity_split():
    return sample_length_split("parity_check", (1, 8), (9, 12), {"train": 60, "validation": 20, "test": 20}, seed=0)


# -- fresh batches ---------------------------------------------------------------------


@pytest.mark.parametrize("arch", ["lstm", "stack_rnn"])
def test_training_on_fresh_batches_resumes_bit_for_bit_and_counts_its_inputs(arch: str, parity_split, tmp_path: Path) -> None:
    run = {**FRESH, "arch": arch}
    whole = train_and_evaluate(parity_split, "parity", out=tmp_path / "whole", progress=False, plots=False, **run)
    data = whole["per_seed"][0]["training_data"]
    assert data["kind"] == "stream" and data["records_trained"] == 30 * 16
    assert 0 < data["distinct_inputs"] <= min(30 * 16, 2 ** 9 - 2)  # lengths 1..8 hold 510 binary strings
    assert whole["training_data"] == {"kind": "stream", "distinct_inputs": [data["distinct_inputs"]]}

    def kill(event: dict) -> None:
        if event["step"] == 24:  # after the checkpoint of step 20
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_and_evaluate(parity_split, "parity", out=tmp_path / "cut", progress=False, plots=False, callback=kill, **run)
    seen: list[int] = []
    resumed = train_and_evaluate(parity_split, "parity", out=tmp_path / "cut", resume=True, progress=False, plots=False,
                                 callback=lambda e: seen.append(e["step"]), **run)
    assert seen[0] == 21
    assert _comparable(resumed) == _comparable(whole)  # scores, history, training_data's count included
    assert _rows(tmp_path / "cut") == _rows(tmp_path / "whole")
    for seed_file in ("whole", "cut"):
        assert torch.load(tmp_path / seed_file / "seed-0" / "checkpoint.pt", weights_only=True)["data_state"]["read"] == 30 * 16


def test_a_checkpoint_without_the_count_resumes_and_says_from_which_step_it_counted(parity_split, tmp_path: Path) -> None:
    run = {**FRESH, "arch": "lstm", "d_model": 16, "steps": 12, "checkpoint_every": 5, "eval_every": 12}

    def kill(event: dict) -> None:
        if event["step"] == 7:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_and_evaluate(parity_split, "parity", out=tmp_path / "cut", progress=False, plots=False, callback=kill, **run)
    path = tmp_path / "cut" / "seed-0" / "checkpoint.pt"
    state = torch.load(path, weights_only=True)
    for key in ("distinct_inputs", "read", "counted_from"):  # as a checkpoint written before the count existed
        del state["data_state"][key]
    torch.save(state, path)
    resumed = train_and_evaluate(parity_split, "parity", out=tmp_path / "cut", resume=True, progress=False, plots=False, **run)
    whole = train_and_evaluate(parity_split, "parity", progress=False, plots=False, **run)
    data = resumed["per_seed"][0]["training_data"]
    assert data["counted_from_step"] == 6 and data["records_trained"] == 7 * 16 and data["distinct_inputs"] <= 7 * 16
    assert "counted_from_step" not in whole["per_seed"][0]["training_data"]
    assert resumed["per_seed"][0]["ood_exact_match"] == whole["per_seed"][0]["ood_exact_match"]  # the trajectory is the same


def test_a_fixed_set_run_is_labelled_as_such(parity_split) -> None:
    results = train_and_evaluate(parity_split, "parity", arch="lstm", preset="tiny", d_model=16, steps=2, batch_size=8, eval_every=2,
                                 eval_limit=4, eval_examples=4, progress=False, plots=False)
    data = results["per_seed"][0]["training_data"]
    assert data == {"kind": "fixed set", "records": 60, "records_trained": 16, "distinct_inputs": data["distinct_inputs"]}
    assert 0 < data["distinct_inputs"] <= 16 and results["training_data"]["kind"] == "fixed set"
    assert results["test_data"] == {"kind": "the config's test part"}


# -- per-length test sampling ------------------------------------------------------------


@settings(max_examples=15, deadline=None)
@given(lo=st.integers(1, 30), span=st.integers(0, 5), n=st.integers(1, 12))
def test_per_length_sampling_gives_n_records_of_every_length_deterministically(lo: int, span: int, n: int) -> None:
    sampled = LengthTest("cycle_navigation", (lo, lo + span), n)
    records = sampled.records()
    counts = {length: 0 for length in range(lo, lo + span + 1)}
    for record in records:
        counts[input_length(record)] += 1
    assert counts == {length: n for length in counts}
    assert json.dumps(records) == json.dumps(LengthTest("cycle_navigation", (lo, lo + span), n).records())  # same bytes


def test_per_length_sampling_is_nested_and_states_its_standard_error() -> None:
    small, large = LengthTest("parity_check", (41, 43), 5).records(), LengthTest("parity_check", (41, 43), 10).records()
    assert [r["input"] for r in small] != [r["input"] for r in large[:15]]  # one draw per length, not one stream cut
    assert [r for r in large if input_length(r) == 42][:5] == [r for r in small if input_length(r) == 42]  # the first N of a length are shared
    assert standard_error_bound(MIN_PER_LENGTH) == 0.05 and standard_error_bound(400) < 0.05
    described = LengthTest("parity_check", (41, 500), 100).describe()
    assert described["per_length"] == 100 and described["standard_error_at_most"] == 0.05 and described["lengths"] == [41, 500]
    rounded = [input_length(r) for r in LengthTest("modular_arithmetic", (41, 46), 5).records()]  # odd lengths only: 42 -> 43
    assert {n: rounded.count(n) for n in set(rounded)} == {41: 5, 43: 5, 45: 5, 47: 5}
    with pytest.raises(BaselineError, match="test lengths"):
        LengthTest("parity_check", (5, 4), 3).records()
    with pytest.raises(BaselineError, match="cycle_length"):
        LengthTest("cycle_navigation", (3, 3), 3, (("cycle_length", "99"),)).records()


def test_a_run_scores_the_sampled_test_part_by_length(parity_split) -> None:
    results = train_and_evaluate(parity_split, "parity", progress=False, plots=False, **{**FRESH, "arch": "lstm", "steps": 2, "test_lengths": (20, 22)})
    assert results["data"]["sizes"]["test"] == 3 * 4 and results["data"]["input_length"]["test"] == [20, 22]
    assert results["test_data"]["kind"] == "sampled per length" and results["test_data"]["per_length"] == 4
    seed = results["per_seed"][0]
    detail = seed["by_length_detail"]["ood"]
    assert {length: cell["n"] for length, cell in detail.items()} == {"20": 4, "21": 4, "22": 4}
    mean = sum(cell["token_accuracy"] for cell in detail.values()) / 3  # the paper's score: per-token accuracy averaged over lengths
    assert seed["ood_length_score"] == pytest.approx(mean)
    default = train_and_evaluate(parity_split, "parity", progress=False, plots=False, **{**FRESH, "arch": "lstm", "steps": 2})
    assert default["data"]["input_length"]["test"] == [9, 12] and default["data"]["sizes"]["test"] == 4 * 4  # the test part's range


# -- the encoder ---------------------------------------------------------------------------


def test_the_encoder_reads_the_empty_tape_non_causally() -> None:
    torch.manual_seed(0)
    model = Encoder("sinusoidal", 2, 32, 8, vocab_size=6, pad_id=0).eval()
    ids = torch.tensor([[3, 4, 3, 4, 1, 2, 2]])  # input, <sep>, empty tape
    later = ids.clone()
    later[0, 3] = 3  # a later input token
    with torch.no_grad():
        before, after = model(ids), model(later)
        assert not torch.allclose(before[0, :3], after[0, :3])  # earlier outputs change: not causal
        assert not torch.allclose(before[0, -2:], after[0, -2:])
        padded = torch.cat([ids, torch.zeros(1, 3, dtype=torch.long)], dim=1)  # right padding changes nothing
        assert torch.allclose(model(padded)[0, :7], before[0], atol=1e-5)
        left = torch.cat([torch.zeros(1, 3, dtype=torch.long), ids], dim=1)  # left-padded, as decoding gives it
        mask = (left != 0).long()
        logits, cache = model.step(left, mask, (mask.cumsum(-1) - 1).clamp(min=0))
        assert cache is None and torch.allclose(logits[0, 3:], before[0], atol=1e-5)
    with pytest.raises(BaselineError, match="empty-tape"):
        TrainSettings(arch="encoder").resolve()


# -- the deletang preset --------------------------------------------------------------------


def test_the_deletang_preset_has_the_papers_sizes_and_optimiser() -> None:
    from gengap.baselines.architectures import build
    from gengap.baselines.training import Trainer

    for arch in ("lstm", "rnn", "stack_rnn", "tape_rnn"):
        s = TrainSettings(arch=arch, preset="deletang").resolve()
        assert (s.d_model, s.layers, s.stack_size) == (256, 1, DELETANG_STACK_SIZE if arch == "stack_rnn" else 0)
    encoder = TrainSettings(arch="encoder", preset="deletang", output_mode="empty-tape").resolve()
    assert (encoder.layers, encoder.d_model, encoder.heads, encoder.pos) == (5, 64, 8, "sinusoidal")
    assert (encoder.batch_size, encoder.weight_decay, encoder.adam_beta2, encoder.grad_clip, encoder.schedule, encoder.warmup) == (128, 0.0, 0.999, 1.0, "constant", 0)
    assert encoder.lr in DELETANG_LEARNING_RATES == (1e-4, 3e-4, 5e-4) and DELETANG_STACK_SIZE == 30
    stack = TrainSettings(arch="stack_rnn", preset="deletang").resolve()
    model = build(stack.spec, 5, 80)
    assert model.describe()["stack_size"] == 30
    _, state = model.scan(torch.full((2, 70), 3), torch.ones(2, 70), None, masked=False)
    assert state[1].shape[1] == 30  # fixed, though the input is longer than the stack
    trainer = Trainer(model, None, stack, torch.device("cpu"), False)  # type: ignore[arg-type]
    group = trainer.optimizer.param_groups
    assert [g["weight_decay"] for g in group] == [0.0, 0.0] and group[0]["betas"] == (0.9, 0.999) and group[0]["lr"] == 3e-4
    assert trainer.scheduler.lr_lambdas[0](500) == 1.0  # constant, no warmup
    assert TrainSettings(arch="stack_rnn", preset="deletang", stack_size=0).resolve().stack_size == 0  # unbounded on request
    with pytest.raises(BaselineError, match="stack_size"):
        TrainSettings(arch="lstm", stack_size=4).resolve()


# -- identities of runs made before these settings ---------------------------------------------------------

# run.json settings of a stack_rnn run of preset tiny as gengap wrote them at db2c40e (before these settings existed)
OLD = json.loads(
    '{"arch": "stack_rnn", "batch_size": 64, "checkpoint_every": 200, "compile": null, "computation_steps": 0, "curriculum": null, "d_model": 128, '
    '"data_seed": null, "deterministic": false, "device": "auto", "eval_batch_size": 256, "eval_every": 200, "eval_examples": 512, "eval_limit": null, '
    '"full_batch": false, "fused": null, "grad_clip": 1.0, "heads": 1, "init_seed": null, "iterations": 1, "kv_cache": true, "label_noise": 0.0, '
    '"layers": 1, "level": null, "lr": 0.003, "memory_cell": 8, "min_lr_ratio": 0.1, "mistakes": 20, "noise_seed": 0, "output_mode": "autoregressive", '
    '"pos": "none", "precision": "auto", "preset": "tiny", "progressive_loss": 0.0, "reach": 0.99, "schedule": "cosine", "seeds": [0], "select": "last", '
    '"sizes": [], "steps": 2000, "stream": null, "stream_params": [], "test_iterations": [1], "until_extra": 0.0, "until_id": null, '
    '"until_over": "lengths", "warmup": 200, "weight_decay": 0.1, "window": 0}')


def test_runs_made_before_these_settings_keep_their_identity() -> None:
    from gengap.baselines.run_identity import check_identity, settings_changes
    from gengap.baselines.setup import TRAJECTORY, setup_of
    from gengap.baselines.sweep import same_settings
    from gengap.baselines.training import default_settings

    new = TrainSettings(arch="stack_rnn", preset="tiny").resolve().to_json()
    assert {k: new[k] for k in OLD} == OLD  # every setting the old run recorded resolves as it did
    expected = {"config": "c", "data_fingerprint": "f", "vocabulary": "v", "settings": {name: new[name] for name in TRAJECTORY}}
    assert settings_changes(OLD, expected["settings"], default_settings()) == []  # run.json: it resumes
    check_identity({**expected, "settings": {n: OLD[n] for n in TRAJECTORY if n in OLD}}, expected, default_settings(), "checkpoint")
    assert same_settings(OLD, new)  # a sweep finds it finished
    old_results = {"arch": "stack_rnn", "pos": "none", "preset": "tiny", "steps": 2000, "settings": OLD, "data": {"fingerprint": "f"}}
    assert setup_of(old_results) == setup_of({**old_results, "settings": new})  # the report pools it with a new run
    assert not same_settings(OLD, TrainSettings(arch="stack_rnn", preset="tiny", stack_size=30).resolve().to_json())
    changed = settings_changes(OLD, {**expected["settings"], "stack_size": 30}, default_settings())
    assert changed == ["stack_size 0 -> 30"]


# -- the command line ---------------------------------------------------------------------------


@pytest.mark.parametrize("flags, message", [
    (["--test-per-length", "-1"], "test_per_length"),
    (["--test-lengths", "9-3", "--test-per-length", "5"], "test-lengths"),
    (["--test-lengths", "9-12"], "test_lengths"),
    (["--arch", "lstm", "--stack-size", "4"], "stack_size"),
    (["--arch", "encoder"], "empty-tape"),
    (["--adam-beta2", "1.5"], "adam_beta2"),
    (["--test-per-length", "100", "--eval-limit", "50"], "eval_limit"),
])
def test_bad_values_are_one_line_errors(flags: list[str], message: str, parity_split, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from gengap.cli import main

    folder = tmp_path / "split"
    folder.mkdir()
    for part in ("train", "validation", "test"):
        (folder / f"{part}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in getattr(parity_split, part)))
    out = tmp_path / "run"
    assert main(["train", str(folder), "--preset", "deletang", *flags, "--out", str(out)]) != 0
    err = capsys.readouterr().err.strip()
    assert err.startswith("gengap: error:") and len(err.splitlines()) == 1 and message in err, err
    assert not out.exists()


# -- symmetric selection (benchmarks/deletang_grid.py) ------------------------------------------


def _grid_module():
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import deletang_grid

    return deletang_grid


def test_every_architecture_gets_the_same_seeds_and_learning_rates() -> None:
    g = _grid_module()
    points = g.grid(["parity_check", "reverse_string"], list(g.PAPER_ARCHS), list(g.PAPER_SEEDS), DELETANG_LEARNING_RATES)
    assert len(points) == 2 * 5 * 10 * 3
    per_arch = {}
    for p in points:
        per_arch.setdefault((p.task, p.arch), set()).add((p.seed, p.lr))
    assert len({frozenset(v) for v in per_arch.values()}) == 1  # one grid for all
    with pytest.raises(ValueError, match="distinct"):
        g.grid(["parity_check"], ["lstm", "lstm"], [0], [1e-4])


def test_the_table_reports_the_best_run_and_the_mean_at_the_lr_chosen_on_validation() -> None:
    g = _grid_module()
    rows = [{"task": "parity_check", "arch": arch, "seed": seed, "lr": lr, "length_score": score, "id": valid}
            for arch, offset in (("lstm", 0.0), ("encoder", -0.3))
            for seed in (0, 1, 2) for lr, valid in ((1e-4, 0.5), (3e-4, 0.9), (5e-4, 0.7))
            for score in [0.6 + offset + 0.1 * seed + (0.2 if lr == 5e-4 and seed == 2 else 0.0)]]
    text = g.table(rows)
    lstm = next(line for line in text.splitlines() if "| lstm |" in line)
    assert lstm.startswith("| parity_check | lstm | 1.000 | 0.0005, 2 | 0.0003 | 0.700 [")  # best over all; mean at the validation's lr
    figures = g.cell_figures({(r["lr"], r["seed"]): r for r in rows if r["arch"] == "lstm"}, DELETANG_LEARNING_RATES, (0, 1, 2))
    assert figures["chosen_lr"] == 3e-4 and figures["mean"] == pytest.approx(0.7) and figures["low"] <= 0.7 <= figures["high"]
    with pytest.raises(ValueError, match="not symmetric"):
        g.table(rows[:-1])  # the encoder lacks one run


def test_the_gpu_protocol_paper_mode_runs_the_symmetric_grid_as_the_paper(tmp_path: Path) -> None:
    _grid_module()
    import gpu_protocol

    base = {"preset": "small", "steps": 10000, "lr": 1e-3, "warmup": 1000, "until_id": 0.99, "until_extra": 0.25, "eval_limit": 2000,
            "output_mode": "empty-tape", "eval_every": 500, "eval_examples": 256, "batch_size": 128}
    settings = gpu_protocol.paper_settings(base, False, None, None)
    assert settings["preset"] == "deletang" and settings["sizes"] == ((1, 40),) and settings["test_lengths"] == (41, 500)
    assert settings["test_per_length"] == 100 and not {"lr", "until_id", "eval_limit", "warmup"} & set(settings)
    jobs = gpu_protocol.paper_jobs({"parity_check-deletang": {}}, ["encoder", "lstm"], [0, 1], tmp_path, settings)
    assert len(jobs) == 2 * 2 * 3 and len({j["out"] for j in jobs}) == len(jobs)
    for job in jobs:
        resolved = TrainSettings(**{k: v for k, v in job["settings"].items()}).resolve()
        assert resolved.stream == "parity_check" and resolved.lr in DELETANG_LEARNING_RATES and resolved.weight_decay == 0.0
        assert resolved.until_id is None and resolved.eval_limit is None and resolved.pos == ("sinusoidal" if resolved.arch == "encoder" else "none")


def test_the_cli_trains_as_the_paper_and_says_what_it_trained_and_tested_on(parity_split, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from gengap.cli import main

    folder = tmp_path / "split"
    folder.mkdir()
    for part in ("train", "validation", "test"):
        (folder / f"{part}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in getattr(parity_split, part)))
    flags = ["--arch", "lstm", "--preset", "deletang", "--d-model", "16", "--output-mode", "empty-tape", "--stream", "parity_check",
             "--sizes", "1-8", "--steps", "3", "--eval-every", "3", "--eval-examples", "8", "--test-per-length", "3", "--test-lengths", "9-10"]
    assert main(["train", str(folder), *flags, "--out", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    assert "trained on a stream: 384 records, " in out and "test: 3 sequences sampled at each length 9..10 (standard error <= 0.289 a length)" in out
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["settings"]["test_lengths"] == [9, 10] and results["settings"]["weight_decay"] == 0.0 and results["data"]["sizes"]["test"] == 6


def test_the_paper_grid_is_estimated_with_its_three_learning_rates() -> None:
    _grid_module()
    import gpu_protocol

    lines = gpu_protocol.paper_estimate(["lstm"], 2, 100, 42, 128, 8, 100)
    assert lines[0].startswith("deletang --paper: 6 runs x 100 steps per model, batch 128 x 42 tokens, preset deletang")
    assert "| lstm |" in lines[3] and lines[-1].startswith("evaluation: 12,535,000 test tokens (at least) a run, 75,210,000 over the 6 runs")
