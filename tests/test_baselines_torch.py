"""Baselines with torch (the `train` extra): models, decoding, training, resume, CLI."""

from __future__ import annotations

import argparse
import json
import math
import time
from typing import Any
from pathlib import Path

import numpy as np
import pytest

import torch  # noqa: E402  (the train extra; the README's test command installs it)
import transformers  # noqa: E402,F401

from gengap.baselines.cli import add_commands  # noqa: E402
from gengap.baselines.decoding import greedy_decode, tape_decode  # noqa: E402
from gengap.baselines.errors import BaselineError  # noqa: E402
from gengap.baselines.models import EXTRAPOLATING, POSITIONAL, ModelShape, build_model, sinusoid_table  # noqa: E402
from gengap.baselines.tokenizer import Tokenizer  # noqa: E402
from gengap.baselines.training import DataOrder, EncodedTrain, IGNORE, lr_factor, train_and_evaluate  # noqa: E402
from gengap.splits import sample_length_split  # noqa: E402

SHAPE = ModelShape(layers=2, d_model=32, heads=2)


@pytest.fixture(scope="module")
def reverse_split():
    """reverse_string: train lengths 1..8, test 9..12 (longer than any training sequence)."""
    return sample_length_split("reverse_string", (1, 8), (9, 12), {"train": 2000, "validation": 200, "test": 200}, seed=0)


@pytest.fixture(scope="module")
def small_split():
    return sample_length_split("reverse_string", (1, 6), (7, 9), {"train": 300, "validation": 40, "test": 40}, seed=1)


# -- pieces ----------------------------------------------------------------------------


def test_labels_cover_target_and_end_only() -> None:
    tok = Tokenizer.build(["a b", "c"])
    data = EncodedTrain([{"input": "a b", "target": "c"}, {"input": "a", "target": "b c"}], tok, torch.device("cpu"))
    a, b, c = tok.ids["a"], tok.ids["b"], tok.ids["c"]
    assert data.ids.tolist() == [[a, b, 1, c, 2], [a, 1, b, c, 2]]
    # labels[t] is what the logits at t must predict: the target tokens and the end token
    assert data.labels.tolist() == [[IGNORE, IGNORE, c, 2, IGNORE], [IGNORE, b, c, 2, IGNORE]]
    ids, labels, count = data.batch(np.array([1, 1]))
    assert ids.shape == (2, 5) and count == 10


def test_data_order_is_a_function_of_seed_and_step() -> None:
    order = DataOrder(size=10, batch_size=4, seed=7)
    first_epoch = np.concatenate([order.indices(s) for s in (1, 2)] + [order.indices(3)[:2]])
    assert sorted(first_epoch.tolist()) == list(range(10))  # each example once per epoch
    again = DataOrder(size=10, batch_size=4, seed=7)
    assert again.indices(5).tolist() == order.indices(5).tolist()  # no iterator state
    assert DataOrder(size=10, batch_size=4, seed=8).indices(1).tolist() != order.indices(1).tolist()


def test_lr_schedule() -> None:
    assert lr_factor(0, 10, 100, 0.1) == pytest.approx(0.1)
    assert lr_factor(9, 10, 100, 0.1) == pytest.approx(1.0)
    assert lr_factor(10, 10, 100, 0.1) == pytest.approx(1.0)
    assert lr_factor(55, 10, 100, 0.1) == pytest.approx(0.1 + 0.9 * 0.5)
    assert lr_factor(100, 10, 100, 0.1) == pytest.approx(0.1)


def test_sinusoid_table_values() -> None:
    table = sinusoid_table(50, 8)
    assert table[0].tolist() == [0.0, 1.0] * 4
    assert table[3, 0].item() == pytest.approx(math.sin(3))
    assert table[3, 3].item() == pytest.approx(math.cos(3 / 10000 ** (2 / 8)))


@pytest.mark.parametrize("pos", POSITIONAL)
def test_every_encoding_runs_past_the_training_length(pos: str) -> None:
    torch.manual_seed(0)
    model = build_model(pos, SHAPE, vocab_size=9, max_len=12, tokens=["<pad>", "<sep>", "<end>", *"012345"])  # abacus reads which are digits
    assert model.forward(torch.randint(3, 9, (3, 12))).shape == (3, 12, 9)
    if pos in EXTRAPOLATING:
        if pos == "randomized":  # training samples from R = 2 x max_len positions; longer sequences are read in evaluation
            with pytest.raises(BaselineError, match="a sequence of 40 tokens exceeds the 24 randomized positions"):
                model.forward(torch.randint(3, 9, (2, 40)))
        model.eval()
        assert model.forward(torch.randint(3, 9, (2, 40))).shape == (2, 40, 9)
    else:  # learned positions: exactly the split's longest sequence
        assert model.max_positions == 12
        with pytest.raises(BaselineError, match="exceeds the learned table"):
            model.step(torch.ones((1, 13), dtype=torch.long), torch.ones((1, 13), dtype=torch.long), torch.arange(13)[None])


@pytest.mark.parametrize("pos", POSITIONAL)
def test_batched_cached_decoding_matches_single_recompute(pos: str, small_split) -> None:
    """Left padding + mask + positions + KV cache give what each prompt decoded alone gives."""
    result = train_and_evaluate(small_split, pos=pos, preset="tiny", steps=40, eval_every=40, eval_examples=8, seeds=(0,), layers=2, d_model=32, heads=2)
    assert result["per_seed"][0]["id_n"] == len(small_split.validation)
    assert set(result["per_seed"][0]["by_length"]["ood"]) == {"7", "8", "9"}  # decoded past the training lengths
    longest = max(len(r["input"].split()) + len(r["target"].split()) + 2 for part in small_split.parts().values() for r in part)
    assert result["model"]["max_len"] == longest
    if pos == "learned":
        assert result["model"]["max_positions"] == longest  # the learned table covers train, validation and test
    tok = Tokenizer.build([r[k] for part in (small_split.train, small_split.validation, small_split.test) for r in part for k in ("input", "target")])
    torch.manual_seed(3)
    model = build_model(pos, SHAPE, len(tok), 30, tokens=tok.tokens)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    data = EncodedTrain(small_split.train, tok, torch.device("cpu"))
    for step in range(1, 31):  # a little training so that predictions are not constant
        ids, labels, _ = data.batch(DataOrder(data.size, 32, 0).indices(step))
        loss = torch.nn.functional.cross_entropy(model(ids).reshape(-1, len(tok)), labels.reshape(-1), ignore_index=IGNORE)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    records = small_split.validation[:10] + small_split.test[:10]
    prompts = [tok.prompt(r["input"]) for r in records]
    limits = [len(r["target"].split()) for r in records]
    cached = greedy_decode(model, prompts, limits, tok.end_id, batch_size=7)
    recomputed = greedy_decode(model, prompts, limits, tok.end_id, batch_size=7, use_cache=False)
    alone = [greedy_decode(model, [p], [k], tok.end_id, use_cache=False)[0] for p, k in zip(prompts, limits)]
    assert cached == recomputed == alone
    assert len({tuple(out) for out in cached}) > 3  # not a constant output
    assert all(len(out) <= k for out, k in zip(cached, limits))


def test_decoding_stops_at_the_end_token() -> None:
    class Scripted(torch.nn.Module):
        """Emits token 5, then 6, then the end token 2, whatever the input."""

        def __init__(self) -> None:
            super().__init__()
            self.w = torch.nn.Parameter(torch.zeros(1))

        def plan_positions(self, totals) -> None:  # the decoder's interface (SequenceModel); no positions to plan
            pass

        def step(self, ids, mask, positions, cache=None, use_cache=False):
            produced = int(mask.shape[1]) - 3  # prompts are 3 tokens long here
            logits = torch.zeros(ids.shape[0], ids.shape[1], 8)
            logits[:, -1, [5, 6, 2, 2, 2][min(produced, 4)]] = 1.0
            return logits, (produced if use_cache else None)

    out = greedy_decode(Scripted(), [[3, 4, 1], [4, 4, 1]], [5, 1], end_id=2)
    assert out == [[5, 6], [5]]


def test_a_decoding_that_raises_leaves_no_positions_planned() -> None:
    """The plan of randomized positions is cleared when decoding ends, also when a step raises
    (an out-of-memory retry must not decode, nor training run, with a stale plan)."""
    class Failing(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = torch.nn.Parameter(torch.zeros(1))
            self.plans: list[Any] = []

        def plan_positions(self, totals) -> None:
            self.plans.append(totals)

        def step(self, ids, mask, positions, cache=None, use_cache=False):
            raise RuntimeError("out of memory")

    for decode in (lambda m: greedy_decode(m, [[3, 4, 1]], [2], end_id=2), lambda m: tape_decode(m, [[3, 4, 1]], [2])):
        model = Failing()
        with pytest.raises(RuntimeError, match="out of memory"):
            decode(model)
        assert model.plans[0] is not None and model.plans[-1] is None


# -- training --------------------------------------------------------------------------


def test_tiny_run_learns_reverse_string(reverse_split, tmp_path: Path) -> None:
    started = time.monotonic()
    # 1,200 steps: ID 0.975 on an AMD EPYC machine, where 800 steps gave 0.89 (another CPU's float order, another trajectory)
    results = train_and_evaluate(reverse_split, pos="rope", preset="tiny", steps=1200, eval_every=400, eval_examples=100, seeds=(0,), out=tmp_path / "run")
    assert time.monotonic() - started < 120
    seed = results["per_seed"][0]
    assert seed["id_exact_match"] >= 0.95
    for name in ("id_exact_match", "ood_exact_match", "gap", "id_token_accuracy", "ood_token_accuracy"):
        assert set(results["aggregate"][name]) == {"mean", "std", "min", "max", "n"}
        assert name in seed
    assert seed["gap"] == pytest.approx(seed["id_exact_match"] - seed["ood_exact_match"])
    assert set(seed["by_length"]["id"]) == {str(len(r["input"].split())) for r in reverse_split.validation}
    assert set(seed["by_length"]["ood"]) == {str(k) for k in range(9, 13)}
    assert results["aggregate"]["ood_solved_fraction"] in (0.0, 1.0)
    assert results["config"] == "reverse_string" and results["pos"] == "rope" and results["preset"] == "tiny"
    assert results["steps"] == 1200 and results["device"] == "cpu" and results["tokens_per_s"] > 0
    assert results["model"]["hf_class"] == "LlamaForCausalLM"
    run = tmp_path / "run"
    on_disk = json.loads((run / "results.json").read_text())
    assert on_disk["per_seed"][0]["id_exact_match"] == seed["id_exact_match"]
    lines = [json.loads(l) for l in (run / "metrics.jsonl").read_text().splitlines()]
    assert [l["step"] for l in lines] == [400, 800, 1200]
    assert {"step", "loss", "id_exact_match", "ood_exact_match", "tokens_per_s"} <= set(lines[0])
    assert Tokenizer.load(run / "tokenizer.json").tokens == ["<pad>", "<sep>", "<end>", "0", "1"]
    assert (run / "seed-0" / "checkpoint.pt").exists()
    assert (run / "plots" / "accuracy_by_length.png").stat().st_size > 1000


def _comparable(results: dict) -> list[dict]:
    timing = {"tokens_per_s", "train_seconds"}
    return [{k: v for k, v in seed.items() if k not in timing} for seed in results["per_seed"]]


def test_interrupted_run_resumes_exactly(small_split, tmp_path: Path) -> None:
    settings = dict(pos="learned", preset="tiny", steps=60, eval_every=20, eval_examples=16, seeds=(0, 1), layers=2, d_model=32, heads=2)
    whole = train_and_evaluate(small_split, out=tmp_path / "whole", **settings)

    def kill(event: dict) -> None:
        if event["seed"] == 1 and event["step"] == 47:  # after the checkpoint of step 40
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_and_evaluate(small_split, out=tmp_path / "cut", callback=kill, **settings)
    assert (tmp_path / "cut" / "seed-0" / "result.json").exists()
    assert not (tmp_path / "cut" / "results.json").exists()
    with pytest.raises(BaselineError, match="not empty"):
        train_and_evaluate(small_split, out=tmp_path / "cut", **settings)
    with pytest.raises(BaselineError, match="lr"):
        train_and_evaluate(small_split, out=tmp_path / "cut", resume=True, **{**settings, "lr": 0.5})
    seen: list[tuple[int, int]] = []
    resumed = train_and_evaluate(small_split, out=tmp_path / "cut", resume=True, callback=lambda e: seen.append((e["seed"], e["step"])), **settings)
    assert seen[0] == (1, 41) and len(seen) == 20  # seed 0 was complete, seed 1 went on from step 40
    assert _comparable(resumed) == _comparable(whole)
    assert resumed["per_seed"][1]["final_loss"] == whole["per_seed"][1]["final_loss"]

    def rows(name: str) -> list[tuple]:
        lines = [json.loads(l) for l in (tmp_path / name / "metrics.jsonl").read_text().splitlines()]
        return [(l["seed"], l["step"], l["loss"], l["id_exact_match"], l["ood_exact_match"]) for l in lines]

    assert rows("cut") == rows("whole") and len(rows("whole")) == 6
    a = torch.load(tmp_path / "whole" / "seed-1" / "checkpoint.pt", weights_only=True)
    b = torch.load(tmp_path / "cut" / "seed-1" / "checkpoint.pt", weights_only=True)
    assert all(torch.equal(a["model"][k], b["model"][k]) for k in a["model"])


def _draws() -> tuple[float, float, float]:
    import random

    return torch.rand(1).item(), float(np.random.random()), random.random()


def test_rng_states_survive_a_checkpoint(tmp_path: Path) -> None:
    from gengap.baselines.training import load_checkpoint, rng_states, save_checkpoint, set_rng_states

    save_checkpoint(tmp_path / "c.pt", {"rng": rng_states()})
    expected = [_draws() for _ in range(3)]
    set_rng_states(load_checkpoint(tmp_path / "c.pt")["rng"])
    assert [_draws() for _ in range(3)] == expected


def test_resume_restores_rng_states_and_trims_metrics(small_split, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Kills two mutations of issue 17: resume's RNG restore made a no-op (every step here
    draws from torch, numpy and Python, as dropout or augmentation would), and metrics trimming
    made a no-op (the run is killed after an evaluation that follows its last checkpoint)."""
    import random

    from gengap.baselines import training

    draws: list[tuple[float, float, float]] = []
    step = training.Trainer.step

    def drawing_step(self, ids, labels, *at):
        draws.append(_draws())
        return step(self, ids, labels, *at)

    monkeypatch.setattr(training.Trainer, "step", drawing_step)
    settings = dict(pos="learned", preset="tiny", steps=80, eval_every=20, checkpoint_every=40, eval_examples=8,
                    seeds=(1,), layers=1, d_model=16, heads=2)

    def run(name: str, **extra):
        np.random.seed(123)  # the global numpy and Python states are the same at every start
        random.seed(123)
        return train_and_evaluate(small_split, out=tmp_path / name, **settings, **extra)

    whole = run("whole")
    whole_draws = list(draws)

    def kill(event: dict) -> None:
        if event["step"] == 65:  # after the evaluation of step 60; last checkpoint: step 40
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run("cut", callback=kill)
    steps = lambda name: [json.loads(l)["step"] for l in (tmp_path / name / "metrics.jsonl").read_text().splitlines()]  # noqa: E731
    assert steps("cut") == [20, 40, 60]
    draws.clear()
    resumed = run("cut", resume=True)
    assert len(whole_draws) == 80 and draws == whole_draws[40:]
    assert steps("cut") == steps("whole") == [20, 40, 60, 80]
    assert _comparable(resumed) == _comparable(whole)


def test_settings_are_checked(small_split) -> None:
    with pytest.raises(BaselineError, match="unknown setting"):
        train_and_evaluate(small_split, step=3)
    with pytest.raises(BaselineError, match="unknown positional"):
        train_and_evaluate(small_split, pos="xpos")
    with pytest.raises(BaselineError, match="divisible"):
        train_and_evaluate(small_split, preset="tiny", d_model=30)
    with pytest.raises(BaselineError, match="steps"):
        train_and_evaluate(small_split, preset="tiny", steps=0)


def test_cli_train_then_report(small_split, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "rel" / "data" / "rev"
    folder.mkdir(parents=True)
    for part in ("train", "validation", "test"):
        (folder / f"{part}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in getattr(small_split, part)))
    parser = argparse.ArgumentParser(prog="gengap")
    add_commands(parser.add_subparsers(dest="command", required=True))
    for pos in ("nope", "alibi"):
        args = parser.parse_args([
            "train", str(tmp_path / "rel"), "--config", "rev", "--pos", pos, "--preset", "tiny", "--steps", "6",
            "--seeds", "0,1", "--eval-every", "3", "--eval-examples", "8", "--d-model", "32", "--out", str(tmp_path / "runs" / pos),
        ])
        assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "rev  pos=alibi  preset=tiny  steps=6" in out and "seed 1: ID" in out
    results = json.loads((tmp_path / "runs" / "alibi" / "results.json").read_text())
    assert results["model"]["hf_class"] == "BloomForCausalLM" and results["model"]["d_model"] == 32
    args = parser.parse_args(["report", str(tmp_path / "runs"), "--out", str(tmp_path / "report.md")])
    assert args.func(args) == 0
    text = (tmp_path / "report.md").read_text()
    assert "| rev | alibi | tiny | 6 | 2 |" in text and "| rev | nope | tiny | 6 | 2 |" in text
    assert (tmp_path / "report.png").exists()


def test_gpu_protocol_smoke_on_cpu(tmp_path: Path) -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    command = [sys.executable, str(root / "benchmarks" / "gpu_protocol.py"), "--smoke", "--device", "cpu",
               "--only", "parity_check,scan_length,scan_mcd_dc0300", "--encodings", "rope", "--out", str(tmp_path / "p")]
    done = subprocess.run(command, capture_output=True, text=True, cwd=root)
    assert done.returncode == 0, done.stderr[-2000:]
    report = (tmp_path / "p" / "report.md").read_text()
    for row in ("| parity_check | rope | tiny | 30 | 1 |", "| scan_length | rope |", "| scan_mcd_dc0300 | rope |"):
        assert row in report
    assert "## OOD exact match vs compound divergence" in report  # three configs with a known D_C
    assert "## OOD exact match by novelty" in report  # novelty survives into the runs
    assert (tmp_path / "p" / "report.png").exists()
    protocol = json.loads((tmp_path / "p" / "protocol.json").read_text())
    assert len(protocol["runs"]) == 3 and protocol["settings"]["device"] == "cpu"
    results = json.loads((tmp_path / "p" / "runs" / "scan_mcd_dc0300-rope-seed0" / "results.json").read_text())
    assert abs(results["divergence"]["compound_divergence"] - 0.3) <= 0.01


def test_cli_choices_match_the_library() -> None:
    import gengap.baselines.cli as cli
    from gengap.baselines.training import PRESETS

    assert set(cli.POSITIONAL) == set(POSITIONAL) and set(cli.PRESETS) == set(PRESETS)


def test_gengap_train_from_a_suite_entry_without_a_release(tmp_path: Path) -> None:
    from gengap.cli import main

    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: t\nversion: 0.0.1\nseed: 1\nlicense: mit\nentries:\n"
        "  - {task: reverse_string, split: length, train_range: [1, 6], test_range: [7, 9], sizes: {train: 200, validation: 20, test: 20}}\n"
    )
    out = tmp_path / "run"
    args = ["train", "--suite", str(suite), "--config", "reverse_string-length", "--preset", "tiny", "--steps", "20", "--out", str(out)]
    assert main(args) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["config"] == "reverse_string-length"
    assert 0.0 <= results["aggregate"]["ood_exact_match"]["mean"] <= 1.0
    assert main(["train", "--suite", str(suite), "--config", "nope-length", "--out", str(tmp_path / "x")]) == 2
    assert main(["train", str(tmp_path), "--suite", str(suite), "--config", "reverse_string-length", "--out", str(tmp_path / "y")]) == 2


def test_results_carry_novelty_buckets_and_divergence(small_split, tmp_path: Path) -> None:
    """A tiny run on a split whose validation/test records carry novelty: by_novelty per seed and over seeds, divergence from the report."""
    from gengap.splits import SplitResult

    def with_novelty(records: list[dict], counts: tuple[int, ...]) -> list[dict]:
        return [{**r, "novelty": {"unseen_compounds": counts[i % len(counts)], "unseen_atoms": 0}} for i, r in enumerate(records)]

    validation = with_novelty(small_split.validation[:12], (0, 0, 1))
    test = with_novelty(small_split.test[:12], (0, 1, 2, 5))
    test[-1] = {k: v for k, v in test[-1].items() if k != "novelty"}  # a record without novelty is not counted
    report = {**small_split.report, "compound_divergence": 0.42, "atom_divergence": 0.01, "compounds": "lexical"}
    split = SplitResult(small_split.train, validation, test, report)
    results = train_and_evaluate(split, pos="rope", preset="tiny", steps=4, eval_every=4, eval_examples=4, seeds=(0, 1),
                                 d_model=32, heads=2, out=tmp_path / "run")
    assert results["divergence"] == {"atom_divergence": 0.01, "compound_divergence": 0.42, "compounds": "lexical"}
    for seed in results["per_seed"]:
        ood = seed["by_novelty"]["ood"]
        assert list(ood) == ["0", "1", "2", "3+"]
        assert [ood[b]["n"] for b in ood] == [3, 3, 3, 2]  # 0,1,2,5 cycled over 12 records, the last one without novelty
        assert {b: seed["by_novelty"]["id"][b]["n"] for b in seed["by_novelty"]["id"]} == {"0": 8, "1": 4}
        # the buckets partition the counted records: their exact matches add up to the side's
        right = sum(ood[b]["n"] * ood[b]["exact_match"] for b in ood)
        last = seed["ood_exact_match"] * len(test) - right  # the uncounted record: 0 or 1 right
        assert last == pytest.approx(round(last)) and round(last) in (0, 1)
        assert set(ood["3+"]) == {"n", "exact_match", "token_accuracy"}
    aggregate = results["aggregate"]["by_novelty"]
    assert set(aggregate) == {"id", "ood"} and list(aggregate["ood"]) == ["0", "1", "2", "3+"]
    for bucket, figures in aggregate["ood"].items():
        values = [s["by_novelty"]["ood"][bucket]["exact_match"] for s in results["per_seed"]]
        assert figures["n"] == 2 and figures["mean"] == pytest.approx(sum(values) / 2)
        assert figures["min"] == min(values) and figures["max"] == max(values)
    on_disk = json.loads((tmp_path / "run" / "results.json").read_text())
    assert on_disk["divergence"] == results["divergence"] and on_disk["aggregate"]["by_novelty"] == aggregate
    assert json.loads((tmp_path / "run" / "seed-1" / "result.json").read_text())["by_novelty"] == results["per_seed"][1]["by_novelty"]
    # the same records without a report or novelty: no divergence, empty buckets
    bare = lambda rows: [{k: v for k, v in r.items() if k != "novelty"} for r in rows]  # noqa: E731
    plain = train_and_evaluate({"train": small_split.train, "validation": bare(small_split.validation[:4]), "test": bare(small_split.test[:4])},
                               pos="rope", preset="tiny", steps=2, eval_every=2, eval_examples=2, seeds=(0,), d_model=32, heads=2, plots=False)
    assert plain["divergence"] == {"atom_divergence": None, "compound_divergence": None, "compounds": None}
    assert plain["per_seed"][0]["by_novelty"] == {"id": {}, "ood": {}} and plain["aggregate"]["by_novelty"] == {"id": {}, "ood": {}}
