"""Architectures beside the transformer: RNN, LSTM, stack RNN, tape RNN, looped; the stopping
rule; the length score (Deletang et al.)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from gengap.baselines import training
from gengap.baselines.architectures import ARCHITECTURES, ModelSpec, build, positions_of
from gengap.baselines.cli import ARCHITECTURES as CLI_ARCHITECTURES
from gengap.baselines.decoding import greedy_decode
from gengap.baselines.errors import BaselineError
from gengap.baselines.looped import LoopedTransformer
from gengap.baselines.metrics import aggregate, length_score
from gengap.baselines.report import group_runs, markdown
from gengap.baselines.sequence_model import input_lengths
from gengap.baselines.stack_rnn import grown, update_stack
from gengap.baselines.tape_rnn import action_indices, update_tape
from gengap.baselines.tokenizer import Tokenizer
from gengap.baselines.training import DataOrder, EncodedTrain, IGNORE, TrainSettings, train_and_evaluate
from gengap.splits import sample_length_split

OTHERS = ("rnn", "lstm", "stack_rnn", "tape_rnn", "looped")
SMALL = {"rnn": dict(d_model=24), "lstm": dict(d_model=24, layers=2), "stack_rnn": dict(d_model=24), "tape_rnn": dict(d_model=24),
         "looped": dict(d_model=32, heads=2, iterations=2)}


@pytest.fixture(scope="module")
def small_split():
    return sample_length_split("reverse_string", (1, 6), (7, 9), {"train": 300, "validation": 40, "test": 40}, seed=1)


def test_the_cli_lists_every_architecture() -> None:
    assert CLI_ARCHITECTURES == ARCHITECTURES and set(OTHERS) < set(ARCHITECTURES)


def test_settings_per_architecture() -> None:
    lstm = TrainSettings(arch="lstm", preset="tiny").resolve()
    assert (lstm.pos, lstm.layers, lstm.d_model, lstm.iterations, lstm.test_iterations) == ("none", 1, 128, 1, (1,))
    looped = TrainSettings(arch="looped", preset="tiny", test_iterations=(16, 8)).resolve()
    assert (looped.pos, looped.iterations, looped.test_iterations) == ("rope", 8, (16, 8))
    assert TrainSettings(arch="transformer").resolve().pos == "rope"
    with pytest.raises(BaselineError, match="no positional encoding"):
        TrainSettings(arch="lstm", pos="rope").resolve()
    with pytest.raises(BaselineError, match="unknown positional encoding 'alibi' for looped"):
        TrainSettings(arch="looped", pos="alibi").resolve()
    with pytest.raises(BaselineError, match="looped architecture only"):
        TrainSettings(arch="lstm", test_iterations=(2,)).resolve()
    with pytest.raises(BaselineError, match="one-layer controller"):
        TrainSettings(arch="stack_rnn", layers=2).resolve()
    with pytest.raises(BaselineError, match="unknown architecture"):
        TrainSettings(arch="gru").resolve()
    with pytest.raises(BaselineError, match="until_id"):
        TrainSettings(until_id=1.5).resolve()
    assert positions_of("tape_rnn") == ("none",)


# -- memory operations on hand-worked inputs ----------------------------------------------


def test_stack_push_pop_and_no_op() -> None:
    stack = torch.tensor([[[1.0], [2.0], [0.0], [0.0]]])  # top 1, then 2
    value = torch.tensor([[7.0]])
    cells = lambda actions: update_stack(stack, torch.tensor([actions]), value)[0, :, 0].tolist()  # noqa: E731
    assert cells([1.0, 0.0, 0.0]) == [7.0, 1.0, 2.0, 0.0]  # push
    assert cells([0.0, 1.0, 0.0]) == [2.0, 0.0, 0.0, 0.0]  # pop
    assert cells([0.0, 0.0, 1.0]) == [1.0, 2.0, 0.0, 0.0]  # no-op
    # a mixture mixes the three stacks cell by cell: 0.5 push + 0.25 pop + 0.25 no-op
    assert cells([0.5, 0.25, 0.25]) == [0.5 * 7 + 0.25 * 2 + 0.25 * 1, 0.5 * 1 + 0.25 * 2, 0.5 * 2, 0.0]


def test_stack_grows_with_zeros_and_keeps_its_cells() -> None:
    stack = torch.arange(6.0).reshape(1, 3, 2)
    bigger = grown(stack, 5)
    assert bigger.shape == (1, 6, 2) and torch.equal(bigger[:, :3], stack) and not bigger[:, 3:].any()
    assert grown(stack, 3) is stack


def test_stack_rnn_never_drops_a_pushed_cell() -> None:
    """Pushing at every one of 40 tokens keeps all 40 values (the stack grows as it is read)."""
    torch.manual_seed(0)
    model = build(ModelSpec("stack_rnn", "none", 1, 8, memory_cell=1), vocab_size=5, max_len=50)
    with torch.no_grad():
        model.action_logits.weight.zero_()
        model.action_logits.bias.copy_(torch.tensor([50.0, -50.0, -50.0]))  # always push
        model.push_value.weight.zero_()
        model.push_value.bias.fill_(1.0)
    state = model.initial_state(1, None, torch.device("cpu"))
    _, state = model.scan(torch.full((1, 40), 3), torch.ones(1, 40, dtype=torch.long), state, masked=True)
    assert state[1].shape[1] >= 41 and state[1][0, :40, 0].tolist() == pytest.approx([1.0] * 40) and state[1][0, 40:].sum() == 0


def test_tape_writes_under_the_head_then_moves() -> None:
    """Ring of 2n + 2 = 6 cells a..f for input length n = 2; the head is cell 0."""
    tape = torch.tensor([[[1.0], [2.0], [3.0], [4.0], [5.0], [6.0]]])
    indices = action_indices(torch.tensor([2]), 6)
    move = lambda action: update_tape(tape, torch.eye(5)[action][None], torch.tensor([[9.0]]), indices)[0, :, 0].tolist()  # noqa: E731
    assert move(0) == [9, 2, 3, 4, 5, 6]  # write, stay
    assert move(1) == [2, 3, 4, 5, 6, 9]  # left: cell m holds old m + 1
    assert move(2) == [6, 9, 2, 3, 4, 5]  # right: old m - 1
    assert move(3) == [3, 4, 5, 6, 9, 2]  # jump left by n = 2
    assert move(4) == [5, 6, 9, 2, 3, 4]  # jump right by n
    mixed = update_tape(tape, torch.tensor([[0.5, 0.5, 0.0, 0.0, 0.0]]), torch.tensor([[9.0]]), indices)[0, :, 0].tolist()
    assert mixed == [5.5, 2.5, 3.5, 4.5, 5.5, 7.5]


def test_tape_rings_follow_each_rows_input_length() -> None:
    """Rows of one batch have rings of their own size; cells past a row's ring stay zero."""
    indices = action_indices(torch.tensor([1, 3]), 8)  # rings of 4 and 8 cells
    tape = torch.zeros(2, 8, 1)
    tape[0, :4, 0] = torch.tensor([1.0, 2.0, 3.0, 4.0])
    tape[1, :, 0] = torch.arange(1.0, 9.0)
    right = update_tape(tape, torch.eye(5)[[2, 2]], torch.tensor([[1.0], [1.0]]), indices)[:, :, 0]
    assert right[0].tolist() == [4, 1, 2, 3, 0, 0, 0, 0] and right[1].tolist() == [8, 1, 2, 3, 4, 5, 6, 7]
    jump = update_tape(tape, torch.eye(5)[[4, 4]], torch.tensor([[1.0], [1.0]]), indices)[:, :, 0]
    assert jump[0].tolist() == [4, 1, 2, 3, 0, 0, 0, 0] and jump[1].tolist() == [6, 7, 8, 1, 2, 3, 4, 5]


def test_input_lengths_count_tokens_before_the_first_separator() -> None:
    ids = torch.tensor([[5, 5, 5, 1, 6, 1], [0, 0, 5, 1, 6, 2], [5, 5, 5, 5, 5, 5]])
    mask = torch.tensor([[1] * 6, [0, 0, 1, 1, 1, 1], [1] * 6])
    assert input_lengths(ids, mask, sep_id=1).tolist() == [3, 1, 6]


# -- every architecture: training, decoding, checkpoints, resume ----------------------------


def _train_a_little(model: torch.nn.Module, split, tok: Tokenizer) -> None:
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    data = EncodedTrain(split.train, tok, torch.device("cpu"))
    for step in range(1, 31):
        ids, labels, _ = data.batch(DataOrder(data.size, 32, 0).indices(step))
        loss = torch.nn.functional.cross_entropy(model(ids).reshape(-1, len(tok)), labels.reshape(-1), ignore_index=IGNORE)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


@pytest.mark.parametrize("arch", OTHERS)
def test_batched_cached_decoding_matches_each_prompt_alone(arch: str, small_split) -> None:
    """The state (or the looped model's per-iteration KV cache) as decoding cache; left padding leaves it unchanged."""
    tok = Tokenizer.build([r[k] for part in small_split.parts().values() for r in part for k in ("input", "target")])
    torch.manual_seed(3)
    sizes = SMALL[arch]
    model = build(ModelSpec(arch, positions_of(arch)[0], sizes.get("layers", 1), sizes["d_model"], sizes.get("heads", 1), 4,
                            sizes.get("iterations", 1)), len(tok), 30)
    _train_a_little(model, small_split, tok)
    records = small_split.validation[:10] + small_split.test[:10]
    prompts = [tok.prompt(r["input"]) for r in records]
    limits = [len(r["target"].split()) for r in records]
    cached = greedy_decode(model, prompts, limits, tok.end_id, batch_size=7)
    recomputed = greedy_decode(model, prompts, limits, tok.end_id, batch_size=7, use_cache=False)
    alone = [greedy_decode(model, [p], [k], tok.end_id)[0] for p, k in zip(prompts, limits)]
    assert cached == recomputed == alone
    assert len({tuple(out) for out in cached}) > 2  # not a constant output
    # training's whole-sequence forward computes what decoding's token-by-token step does
    ids = torch.tensor([tok.example(r["input"], r["target"])[0] for r in records[:1]])
    step_logits, _ = model.step(ids, torch.ones_like(ids), torch.arange(ids.shape[1])[None])
    assert torch.allclose(model(ids), step_logits, atol=1e-5)


def _comparable(results: dict) -> list[dict]:
    timing = {"tokens_per_s", "train_seconds"}
    return [{k: v for k, v in seed.items() if k not in timing} for seed in results["per_seed"]]


@pytest.mark.parametrize("arch", OTHERS)
def test_every_architecture_trains_checkpoints_and_resumes_exactly(arch: str, small_split, tmp_path: Path) -> None:
    settings = dict(arch=arch, preset="tiny", steps=24, eval_every=8, eval_examples=8, seeds=(0,), lr=1e-2, **SMALL[arch])
    whole = train_and_evaluate(small_split, out=tmp_path / "whole", **settings)
    assert whole["arch"] == arch and whole["model"]["arch"] == arch and whole["model"]["parameters"] > 0
    assert whole["per_seed"][0]["final_loss"] < 1.2  # it trained: loss of a uniform guess over 5 tokens is ln 5 = 1.61

    def kill(event: dict) -> None:
        if event["step"] == 19:  # after the checkpoint of step 16
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_and_evaluate(small_split, out=tmp_path / "cut", callback=kill, **settings)
    with pytest.raises(BaselineError, match="arch"):
        train_and_evaluate(small_split, out=tmp_path / "cut", resume=True, **{**settings, "arch": "rnn" if arch != "rnn" else "lstm",
                                                                            **({"layers": 1} if arch == "lstm" else {}),
                                                                            **({"iterations": None, "heads": None} if arch == "looped" else {})})
    resumed = train_and_evaluate(small_split, out=tmp_path / "cut", resume=True, **settings)
    assert _comparable(resumed) == _comparable(whole)
    a = torch.load(tmp_path / "whole" / "seed-0" / "checkpoint.pt", weights_only=True)
    b = torch.load(tmp_path / "cut" / "seed-0" / "checkpoint.pt", weights_only=True)
    assert all(torch.equal(a["model"][k], b["model"][k]) for k in a["model"])


# -- looped: more iterations at test time ------------------------------------------------


def test_a_looped_model_evaluated_with_more_iterations_runs_more_iterations(small_split, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks: list[int] = []  # per block call: the iteration count the model was set to
    steps: list[int] = []  # per decoding step call: its iteration count
    run_block, step = LoopedTransformer.run_block, LoopedTransformer.step

    def counting_block(self, x, positions, allowed, past):
        blocks.append(self.eval_iterations if not self.training else -self.iterations)
        return run_block(self, x, positions, allowed, past)

    def counting_step(self, *args, **kwargs):
        steps.append(self.eval_iterations)
        return step(self, *args, **kwargs)

    monkeypatch.setattr(LoopedTransformer, "run_block", counting_block)
    monkeypatch.setattr(LoopedTransformer, "step", counting_step)
    torch.manual_seed(0)
    model = LoopedTransformer("rope", 1, 16, 2, iterations=3, vocab_size=6)
    ids = torch.randint(3, 6, (2, 5))
    model.train()
    model(ids)
    assert blocks == [-3] * 3  # training: its own iterations
    for count in (3, 6, 12):
        blocks.clear()
        steps.clear()
        model.eval_iterations = count
        greedy_decode(model, [[3, 4, 1], [5, 1]], [4, 4], end_id=2)
        assert steps and len(blocks) == count * len(steps)  # every decoding step ran `count` iterations
    blocks.clear()
    steps.clear()
    results = train_and_evaluate(small_split, arch="looped", preset="tiny", steps=4, eval_every=4, eval_examples=4, eval_limit=4,
                                 seeds=(0,), d_model=16, heads=2, iterations=2, test_iterations=(2, 5))
    per_seed = results["per_seed"][0]
    assert set(per_seed["by_iterations"]) == {"2", "5"} and set(results["aggregate"]["by_iterations"]) == {"2", "5"}
    assert per_seed["id_exact_match"] == per_seed["by_iterations"]["2"]["id_exact_match"]  # the first count is the headline
    assert blocks.count(-2) == 2 * 4  # 4 training steps of 2 iterations
    assert blocks.count(5) == 5 * steps.count(5) > 0  # the final evaluation at 5 iterations ran 5 blocks per step
    assert blocks.count(2) == 2 * steps.count(2) > 0  # periodic and final evaluation at the training count
    model.eval_iterations = 2
    _, cache = model.step(ids, torch.ones_like(ids), torch.arange(5)[None].expand(2, 5), use_cache=True)
    model.eval_iterations = 3
    with pytest.raises(BaselineError, match="cache of 2 iterations"):
        model.step(ids[:, :1], torch.ones(2, 6, dtype=torch.long), torch.full((2, 1), 5), cache=cache, use_cache=True)


# -- the stopping rule (its pieces: tests/test_learned_rule.py) ---------------------------------


def _scripted(monkeypatch: pytest.MonkeyPatch, id_ems: list[float]) -> None:
    """Periodic evaluations report these ID exact matches (plain and per-length mean) in turn (the final evaluation runs for real)."""
    script = iter(id_ems)
    evaluate = training.Run.evaluate

    def scripted(self, model, side, mistakes, iterations=None):
        scores = evaluate(self, model, side, mistakes, iterations)
        if side is self.periodic["id"]:
            value = next(script)
            scores = {**scores, "exact_match": value, "length_mean_exact_match": value}
        return scores

    monkeypatch.setattr(training.Run, "evaluate", scripted)


def test_the_stopping_rule_stops_at_the_second_consecutive_evaluation(small_split, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _scripted(monkeypatch, [0.5, 0.96, 0.8, 0.97, 0.99, 1.0, 1.0, 1.0])
    settings = dict(arch="rnn", preset="tiny", steps=40, eval_every=2, eval_examples=4, seeds=(0,), d_model=8, until_id=0.95)
    results = train_and_evaluate(small_split, out=tmp_path / "run", **settings)
    seed = results["per_seed"][0]
    assert (seed["stopped_at"], seed["converged"], results["until_id"]) == (10, True, 0.95)  # evaluations at 2,4,6,8,10
    steps = [json.loads(line)["step"] for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert steps == [2, 4, 6, 8, 10]
    assert torch.load(tmp_path / "run" / "seed-0" / "checkpoint.pt", weights_only=True)["step"] == 10
    assert results["aggregate"]["converged"] == {"met": 1, "checked": 1}


def test_a_run_that_never_meets_the_criterion_says_so(small_split, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _scripted(monkeypatch, [0.96, 0.5, 0.96, 0.5, 0.99])
    results = train_and_evaluate(small_split, arch="rnn", preset="tiny", steps=10, eval_every=2, eval_examples=4, seeds=(0,),
                                 d_model=8, until_id=0.95, out=tmp_path / "run")
    seed = results["per_seed"][0]
    assert (seed["stopped_at"], seed["converged"]) == (10, False)
    table = markdown(group_runs([results]))
    assert "0/1 (ID ≥ 0.95)" in table and "†" in table and "not learned: the model never fit its train distribution" in table


def test_a_run_resumed_after_it_stopped_trains_no_further(small_split, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _scripted(monkeypatch, [0.99, 0.99])
    settings = dict(arch="rnn", preset="tiny", steps=40, eval_every=2, eval_examples=4, seeds=(0,), d_model=8, until_id=0.9)

    def kill(event: dict) -> None:
        if event["checkpoint"] and event["step"] == 4:  # stopped and checkpointed, but no result yet
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_and_evaluate(small_split, out=tmp_path / "run", callback=kill, **settings)
    steps: list[int] = []
    results = train_and_evaluate(small_split, out=tmp_path / "run", resume=True, callback=lambda e: steps.append(e["step"]), **settings)
    assert steps == [] and results["per_seed"][0]["stopped_at"] == 4 and results["per_seed"][0]["converged"]


# -- the length score ----------------------------------------------------------------------


def test_length_score_averages_token_accuracy_over_lengths_then_takes_the_best_seed() -> None:
    # length 41: two records at 1.0 and 0.5 (mean 0.75); 42: one at 0.25; 43: one at 1.0
    by_length = {"41": {"n": 2, "token_accuracy": 0.75}, "42": {"n": 1, "token_accuracy": 0.25}, "43": {"n": 1, "token_accuracy": 1.0}}
    assert length_score(by_length) == pytest.approx((0.75 + 0.25 + 1.0) / 3)  # lengths weigh equally, not records
    assert length_score({}) is None
    seeds = [{"seed": s, "id_exact_match": 1.0, "ood_exact_match": 0.0, "gap": 1.0, "id_token_accuracy": 1.0,
              "ood_token_accuracy": v, "ood_length_score": v, "by_length": {"id": {}, "ood": {}}} for s, v in enumerate((0.5, 0.9, 0.7))]
    summary = aggregate(seeds)["ood_length_score"]
    assert summary["max"] == 0.9 and summary["mean"] == pytest.approx(0.7)
    results = {"config": "c", "pos": "none", "arch": "lstm", "preset": "tiny", "steps": 5, "per_seed": seeds, "data": {"input_length": {}}}
    rows = group_runs([results])
    assert rows[0]["model"] == "lstm" and "| c | lstm | tiny | 5 | 3 |" in markdown(rows) and "| 0.900 | 0/3 | – |" in markdown(rows)


def test_a_windowed_looped_model_sees_one_window_further_per_iteration() -> None:
    """window 2 (itself and the token before): after k iterations position p depends on p - k .. p only."""
    from gengap.baselines.looped import allowed_keys

    allowed = allowed_keys(torch.tensor([[0, 1, 1, 1, 1]]), 5, window=2)[0].int().tolist()
    assert allowed == [[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 1, 1, 0, 0], [0, 0, 1, 1, 0], [0, 0, 0, 1, 1]]  # pad: itself
    torch.manual_seed(0)
    model = LoopedTransformer("nope", 1, 16, 2, iterations=3, vocab_size=6, window=2)
    ids = torch.randint(3, 6, (1, 10))
    changed = ids.clone()
    changed[0, 0] = 3 if ids[0, 0] != 3 else 4
    difference = (model(ids) - model(changed)).abs().amax(dim=-1)[0]
    assert (difference[4:] == 0).all() and (difference[:4] > 0).all()  # positions 0..3 are within 3 iterations of position 0
    model.eval_iterations = 6
    mask = torch.ones_like(ids)
    positions = torch.arange(10)[None]
    further = (model.step(ids, mask, positions)[0] - model.step(changed, mask, positions)[0]).abs().amax(dim=-1)[0]
    assert (further[7:] == 0).all() and (further[:7] > 0).all()  # 6 iterations reach 6 positions further


def test_the_cli_trains_any_architecture_to_convergence(small_split, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    from gengap.baselines.cli import add_commands

    folder = tmp_path / "rel" / "data" / "rev"
    folder.mkdir(parents=True)
    for part in ("train", "validation", "test"):
        (folder / f"{part}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in getattr(small_split, part)))
    parser = argparse.ArgumentParser(prog="gengap")
    add_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args([
        "train", str(tmp_path / "rel"), "--config", "rev", "--arch", "looped", "--pos", "nope", "--preset", "tiny", "--steps", "6",
        "--eval-every", "2", "--eval-examples", "4", "--d-model", "16", "--heads", "2", "--iterations", "2", "--test-iterations", "2,3",
        "--window", "3", "--until-id", "0.9", "--out", str(tmp_path / "looped"),
    ])
    assert args.func(args) == 0
    results = json.loads((tmp_path / "looped" / "results.json").read_text())
    assert (results["arch"], results["pos"], results["until_id"], results["model"]["window"]) == ("looped", "nope", 0.9, 3)
    assert results["settings"]["test_iterations"] == [2, 3] and set(results["per_seed"][0]["by_iterations"]) == {"2", "3"}
    out = capsys.readouterr().out
    assert "rev  arch=looped  pos=nope  preset=tiny" in out and "3 iterations: ID" in out and "--until-id 0.9 (step 6)" in out
    args = parser.parse_args(["train", str(tmp_path / "rel"), "--config", "rev", "--arch", "tape_rnn", "--preset", "tiny", "--steps", "2",
                              "--memory-cell", "3", "--d-model", "8", "--out", str(tmp_path / "tape")])
    assert args.func(args) == 0
    assert json.loads((tmp_path / "tape" / "results.json").read_text())["model"]["memory_cell"] == 3
    with pytest.raises(SystemExit):
        parser.parse_args(["train", "x", "--arch", "gru", "--out", "o"])
    with pytest.raises(SystemExit):
        parser.parse_args(["train", "x", "--test-iterations", "2,2", "--out", "o"])


def test_a_run_made_before_architectures_existed_resumes(small_split, tmp_path: Path) -> None:
    """run.json of an earlier version lacks arch, memory_cell, iterations, window and until_id."""
    settings = dict(preset="tiny", steps=8, eval_every=4, eval_examples=4, seeds=(0,), layers=1, d_model=16, heads=2)

    def kill(event: dict) -> None:
        if event["step"] == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_and_evaluate(small_split, out=tmp_path / "run", callback=kill, **settings)
    run_file = tmp_path / "run" / "run.json"
    record = json.loads(run_file.read_text())
    for name in ("arch", "memory_cell", "iterations", "test_iterations", "window", "until_id"):
        del record["settings"][name]
    run_file.write_text(json.dumps(record))
    resumed = train_and_evaluate(small_split, out=tmp_path / "run", resume=True, **settings)
    assert resumed["per_seed"][0]["stopped_at"] == 8


def test_the_gpu_protocols_deletang_part_smoke_on_cpu(tmp_path: Path) -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    command = [sys.executable, str(root / "benchmarks" / "gpu_protocol.py"), "--protocol", "deletang", "--smoke", "--device", "cpu",
               "--only", "reverse_string", "--archs", "stack_rnn,looped", "--out", str(tmp_path / "d")]
    done = subprocess.run(command, capture_output=True, text=True, cwd=root)
    assert done.returncode == 0, done.stderr[-2000:]
    report = (tmp_path / "d" / "report.md").read_text()
    assert "| reverse_string-deletang | stack_rnn | tiny |" in report and "| reverse_string-deletang | looped-rope | tiny |" in report
    runs = json.loads((tmp_path / "d" / "protocol.json").read_text())["runs"]
    assert {(r["arch"], r["converged"] is not None) for r in runs} == {("stack_rnn", True), ("looped", True)}  # trained with until_id
    assert all(r["length_score"] is not None for r in runs)
