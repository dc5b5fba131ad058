"""Output modes (gengap.baselines.layout): the autoregressive and empty-tape layouts with
computation steps, their decoding, every architecture trained, evaluated and resumed in them,
and the run files, CLI and sweep settings that carry them."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from gengap.baselines import setup
from gengap.baselines.cli import add_commands
from gengap.baselines.decoding import tape_decode
from gengap.baselines.errors import BaselineError
from gengap.baselines.layout import IGNORE, MAX_COMPUTATION_STEPS, OUTPUT_MODES, Layout
from gengap.baselines.looped import LOOPED_POSITIONAL, LoopedTransformer
from gengap.baselines.spec import ENCODER_POSITIONAL
from gengap.baselines.models import POSITIONAL
from gengap.baselines.recurrent import RECURRENT
from gengap.baselines.sequence_model import SequenceModel, input_lengths
from gengap.baselines.tokenizer import BLANK, SPECIALS, Tokenizer
from gengap.baselines.training import EncodedTrain, Run, TrainSettings, Trainer, train_and_evaluate
from gengap.splits import sample_length_split
from gengap.sweep_config import SweepError, parse_sweep

EMPTY_TAPE = dict(output_mode="empty-tape")
TINY = {"transformer": dict(layers=1, d_model=16, heads=2), "rnn": dict(d_model=16), "lstm": dict(d_model=16, layers=2),
        "stack_rnn": dict(d_model=16), "tape_rnn": dict(d_model=16), "looped": dict(d_model=16, heads=2, iterations=2),
        "encoder": dict(layers=1, d_model=16, heads=2)}
RECURRENT = (*RECURRENT, "stack_rnn", "tape_rnn")
MODELS = [("transformer", pos) for pos in POSITIONAL] + [(arch, None) for arch in RECURRENT] + [("looped", pos) for pos in LOOPED_POSITIONAL] \
    + [("encoder", pos) for pos in ENCODER_POSITIONAL]


@pytest.fixture(scope="module")
def small_split():
    return sample_length_split("reverse_string", (1, 6), (7, 9), {"train": 200, "validation": 24, "test": 24}, seed=1)


def _comparable(results: dict) -> list[dict]:
    return [{k: v for k, v in seed.items() if k not in ("tokens_per_s", "train_seconds")} for seed in results["per_seed"]]


def _run(split, **settings):
    return train_and_evaluate(split, preset="tiny", eval_examples=8, eval_limit=16, seeds=(0,), lr=1e-2, progress=False, **settings)


# -- the layouts, by hand --------------------------------------------------------------


def test_the_layouts_of_a_three_token_input_with_a_two_token_target() -> None:
    tok = Tokenizer.build(["a b c", "d e"], blank=True)
    assert tok.tokens == ["<pad>", "<sep>", "<end>", "a", "b", "c", "d", "e", "<blank>"]
    a, b, c, d, e, sep, end, blank, no = 3, 4, 5, 6, 7, 1, 2, 8, IGNORE
    expected = {
        ("autoregressive", 0): ([a, b, c, sep, d, e, end], [no, no, no, d, e, end, no], [a, b, c, sep]),
        ("autoregressive", 1): ([a, b, c, sep, blank, blank, blank, d, e, end], [no, no, no, no, no, no, d, e, end, no],
                                [a, b, c, sep, blank, blank, blank]),
        ("empty-tape", 0): ([a, b, c, sep, blank, blank], [no, no, no, no, d, e], [a, b, c, sep, blank, blank]),
        ("empty-tape", 1): ([a, b, c, sep, blank, blank, blank, blank, blank], [no, no, no, no, no, no, no, d, e],
                            [a, b, c, sep, blank, blank, blank, blank, blank]),
    }
    for (mode, steps), (ids, labels, prompt) in expected.items():
        layout = Layout(mode, steps)
        assert layout.example(tok, "a b c", "d e") == (ids, labels), (mode, steps)
        assert layout.prompt(tok, "a b c", 2) == prompt and layout.length(3, 2) == len(ids)
        assert input_lengths(torch.tensor([ids]), torch.ones(1, len(ids)), tok.sep_id).item() == 3  # the tape RNN's ring: n = 3
        encoded = EncodedTrain([{"input": "a b c", "target": "d e"}, {"input": "a", "target": "e"}], tok, torch.device("cpu"), layout)
        batch_ids, batch_labels, count = encoded.batch(np.arange(2))
        assert batch_ids[0].tolist() == ids and batch_labels[0].tolist() == labels
        assert count == len(ids) + layout.length(1, 1)
        width = len(ids)  # the short row is right-padded and trains nothing there
        assert batch_ids[1, layout.length(1, 1):].tolist() == [0] * (width - layout.length(1, 1))
        assert set(batch_labels[1, layout.length(1, 1):].tolist()) <= {IGNORE}


def test_an_autoregressive_run_without_computation_steps_keeps_todays_ids(small_split) -> None:
    """No <blank> enters its vocabulary, and its sequences are input <sep> target <end> with the
    loss on the target and end tokens, built here independently of the layout."""
    default = Run(small_split, TrainSettings(preset="tiny").resolve(), torch.device("cpu"), None, False, None)
    tokens = sorted({t for part in small_split.parts().values() for r in part for key in ("input", "target") for t in r[key].split()})
    assert default.tokenizer.tokens == [*SPECIALS, *tokens] and not default.layout.needs_blank
    for record, row, labels in zip(small_split.train, default.train.ids.tolist(), default.train.labels.tolist()):
        ids = [default.tokenizer.ids[t] for t in record["input"].split()] + [1]
        answer = [default.tokenizer.ids[t] for t in record["target"].split()] + [2]
        assert row[: len(ids) + len(answer)] == ids + answer
        assert labels[: len(ids) + len(answer)] == [IGNORE] * (len(ids) - 1) + answer + [IGNORE]
    assert default.max_len == max(len(r["input"].split()) + len(r["target"].split()) + 2 for p in small_split.parts().values() for r in p)
    tape = Run(small_split, TrainSettings(preset="tiny", **EMPTY_TAPE).resolve(), torch.device("cpu"), None, False, None)
    assert tape.tokenizer.tokens == [*default.tokenizer.tokens, BLANK]  # appended after the data tokens: every other id unchanged


def test_a_default_run_equals_the_explicit_autoregressive_layout_without_computation_steps(small_split, tmp_path: Path) -> None:
    settings = dict(arch="tape_rnn", steps=6, eval_every=3, **TINY["tape_rnn"])
    default = _run(small_split, out=tmp_path / "default", **settings)
    explicit = _run(small_split, out=tmp_path / "explicit", output_mode="autoregressive", computation_steps=0, **settings)
    assert _comparable(default) == _comparable(explicit) and default["data"] == explicit["data"]
    assert (tmp_path / "default" / "tokenizer.json").read_bytes() == (tmp_path / "explicit" / "tokenizer.json").read_bytes()
    assert BLANK not in json.loads((tmp_path / "default" / "tokenizer.json").read_text())["tokens"]
    assert (default["output_mode"], default["computation_steps"]) == ("autoregressive", 0)
    assert (default["settings"]["output_mode"], default["settings"]["computation_steps"]) == ("autoregressive", 0)


def test_data_using_the_blank_token_is_refused() -> None:
    with pytest.raises(BaselineError, match="reserved token.*<blank>"):
        Tokenizer.build(["a <blank>", "b"])
    with pytest.raises(BaselineError, match="no <blank> token"):
        Layout("empty-tape").prompt(Tokenizer.build(["a"]), "a", 1)
    parts = {"train": [{"id": "t", "input": "a <blank>", "target": "b"}], "validation": [{"id": "v", "input": "a", "target": "b"}],
             "test": [{"id": "x", "input": "a a", "target": "b"}]}
    with pytest.raises(BaselineError, match="reserved token") as caught:
        train_and_evaluate(parts, "blank", preset="tiny", steps=1)
    assert "\n" not in str(caught.value)


def test_settings_name_a_bad_output_mode_or_computation_steps() -> None:
    assert TrainSettings(output_mode="empty-tape", computation_steps=MAX_COMPUTATION_STEPS).resolve().layout == Layout("empty-tape", 16)
    with pytest.raises(BaselineError, match="unknown output_mode 'tape'; choose one of autoregressive, empty-tape"):
        TrainSettings(output_mode="tape").resolve()
    for bad in (-1, MAX_COMPUTATION_STEPS + 1, 1.5, True):
        with pytest.raises(BaselineError, match="computation_steps must be an integer from 0 to 16"):
            TrainSettings(computation_steps=bad).resolve()
        with pytest.raises(BaselineError, match="computation_steps"):
            Layout("autoregressive", bad).check()


# -- decoding ---------------------------------------------------------------------------


class PositionModel(SequenceModel):
    """Its logits at a token are one-hot at the token's position (counted from the row's first
    real token); it checks that padding is on the left and counts its forward passes."""

    def __init__(self) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(1))
        self.calls = 0

    def step(self, ids, mask, positions, cache=None, use_cache=False):
        self.calls += 1
        assert cache is None and not use_cache
        lengths = mask.sum(dim=1)
        assert (mask.flip(1).cumprod(1).sum(1) == lengths).all()  # real tokens are the right end of each row
        assert ((ids == 0) | mask.bool()).all()
        return torch.nn.functional.one_hot(positions, 32).float(), None


def test_tape_decoding_reads_exactly_the_output_tape_positions() -> None:
    sequences = [[3] * length for length in (5, 2, 9, 7, 4, 9, 1)]
    tapes = [2, 2, 4, 0, 1, 3, 1]
    model = PositionModel()
    outputs = tape_decode(model, sequences, tapes, batch_size=3)
    assert outputs == [list(range(len(s) - m, len(s))) for s, m in zip(sequences, tapes)]
    assert model.calls == 3  # one forward pass per batch of 3
    with pytest.raises(ValueError, match="longer than its sequence"):
        tape_decode(model, [[3, 3]], [3])


# -- every architecture, in empty-tape mode with computation steps ------------------------


@pytest.mark.parametrize(("arch", "pos"), MODELS)
def test_every_architecture_trains_decodes_and_resumes_in_empty_tape_mode(arch: str, pos: str | None, small_split, tmp_path: Path) -> None:
    settings = dict(arch=arch, pos=pos, steps=8, eval_every=4, output_mode="empty-tape", computation_steps=1, **TINY[arch])
    whole = _run(small_split, out=tmp_path / "whole", **settings)
    seed = whole["per_seed"][0]
    assert (whole["output_mode"], whole["computation_steps"], whole["arch"], whole["pos"]) == ("empty-tape", 1, arch, pos or "none")
    losses = [json.loads(line)["loss"] for line in (tmp_path / "whole" / "metrics.jsonl").read_text().splitlines()]
    assert len(losses) == 2 and losses[1] < losses[0]  # it trained
    assert whole["data"]["max_len"] == max(2 * len(r["input"].split()) + 1 + len(r["target"].split()) for p in small_split.parts().values() for r in p)
    assert {"id", "ood"} <= set(seed["by_length_detail"]) and seed["by_difficulty"]["ood"]
    mistakes = seed["mistakes"]["id"] + seed["mistakes"]["ood"]
    assert mistakes and all(len(m["prediction"].split()) == len(m["target"].split()) for m in mistakes)  # one token per tape cell

    def kill(event: dict) -> None:
        if event["step"] == 6:  # after the checkpoint of step 4
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _run(small_split, out=tmp_path / "cut", callback=kill, **settings)
    resumed = _run(small_split, out=tmp_path / "cut", resume=True, **settings)
    assert _comparable(resumed) == _comparable(whole)
    a = torch.load(tmp_path / "whole" / "seed-0" / "checkpoint.pt", weights_only=True)["model"]
    b = torch.load(tmp_path / "cut" / "seed-0" / "checkpoint.pt", weights_only=True)["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("arch", ["transformer", "tape_rnn"])
def test_autoregressive_runs_read_computation_steps_before_the_answer(arch: str, small_split, monkeypatch: pytest.MonkeyPatch) -> None:
    prompts: list[list[int]] = []
    from gengap.baselines import training

    real = training.greedy_decode

    def spy(model, side_prompts, *args, **kwargs):
        prompts.extend(side_prompts)
        return real(model, side_prompts, *args, **kwargs)

    monkeypatch.setattr(training, "greedy_decode", spy)
    results = _run(small_split, arch=arch, pos="learned" if arch == "transformer" else None, steps=4, eval_every=4, computation_steps=2, **TINY[arch])
    blank = results["data"]["vocab_size"] - 1
    longest = max(3 * len(r["input"].split()) + 1 + len(r["target"].split()) + 1 for p in small_split.parts().values() for r in p)
    assert results["data"]["max_len"] == longest
    if arch == "transformer":
        assert results["model"]["max_positions"] == longest  # the learned table covers the layout
    assert prompts and all(p[p.index(1) + 1 :] == [blank] * (2 * p.index(1)) for p in prompts)  # input <sep> <blank>*(2 n)


def test_a_looped_model_evaluates_the_empty_tape_with_each_test_iterations_count(small_split, monkeypatch: pytest.MonkeyPatch) -> None:
    counts: list[int] = []  # per evaluation forward pass: the iterations it ran
    step = LoopedTransformer.step

    def counting_step(self, ids, mask, positions, cache=None, use_cache=False):
        blocks = []
        run_block = self.run_block
        self.run_block = lambda *args: (blocks.append(1), run_block(*args))[1]
        try:
            return step(self, ids, mask, positions, cache, use_cache)
        finally:
            del self.run_block
            counts.append(len(blocks))

    monkeypatch.setattr(LoopedTransformer, "step", counting_step)
    results = _run(small_split, arch="looped", steps=2, eval_every=2, test_iterations=(2, 5), **EMPTY_TAPE, **TINY["looped"])
    assert set(results["per_seed"][0]["by_iterations"]) == {"2", "5"}
    assert 5 in counts and set(counts) == {2, 5}  # periodic and final at 2, the final evaluation once more at 5


# -- streams --------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", [Layout("empty-tape"), Layout("autoregressive", 1)])
def test_stream_training_follows_the_layout(layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    split = sample_length_split("parity_check", (1, 5), (6, 8), {"train": 30, "validation": 12, "test": 12}, seed=0)
    batches: list[tuple[torch.Tensor, torch.Tensor]] = []
    real = Trainer.step

    def spy(self, ids, labels, *at):
        batches.append((ids, labels))
        return real(self, ids, labels, *at)

    monkeypatch.setattr(Trainer, "step", spy)
    results = _run(split, steps=3, eval_every=3, stream="parity_check", curriculum="fixed:1", layers=1, d_model=16, heads=2, batch_size=8,
                   output_mode=layout.output_mode, computation_steps=layout.computation_steps)
    assert results["stream"]["task"] == "parity_check" and results["output_mode"] == layout.output_mode
    blank = results["data"]["vocab_size"] - 1
    assert len(batches) == 3
    for ids, labels in batches:
        trained = labels != IGNORE
        if layout.empty_tape:  # every trained position is a tape cell, one per target token (parity: one)
            assert (ids[trained] == blank).all() and (trained.sum(dim=1) == 1).all()
        else:  # the answer and <end> follow input <sep> <blank>*n
            assert (trained.sum(dim=1) == 2).all() and (labels[trained].view(-1, 2)[:, 1] == 2).all()
            for row in ids.tolist():
                n = row.index(1)
                assert row[n + 1 : 2 * n + 1] == [blank] * n


# -- run files, resume, report, CLI, sweeps --------------------------------------------------


def test_resuming_with_another_output_mode_or_computation_steps_is_refused(small_split, tmp_path: Path) -> None:
    settings = dict(arch="rnn", steps=6, eval_every=3, **EMPTY_TAPE, **TINY["rnn"])

    def kill(event: dict) -> None:
        if event["step"] == 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _run(small_split, out=tmp_path / "run", callback=kill, **settings)
    with pytest.raises(BaselineError, match="different settings: output_mode 'empty-tape' -> 'autoregressive'"):
        _run(small_split, out=tmp_path / "run", resume=True, **{**settings, "output_mode": "autoregressive"})
    with pytest.raises(BaselineError, match="computation_steps 0 -> 2"):
        _run(small_split, out=tmp_path / "run", resume=True, **{**settings, "computation_steps": 2})
    (tmp_path / "run" / "run.json").unlink()  # the checkpoint's identity refuses it too
    with pytest.raises(BaselineError, match="computation_steps 0 -> 2"):
        _run(small_split, out=tmp_path / "run", resume=True, **{**settings, "computation_steps": 2})
    assert _run(small_split, out=tmp_path / "run", resume=True, **settings)["per_seed"][0]["stopped_at"] == 6


def test_a_run_made_before_output_modes_existed_resumes_as_autoregressive(small_split, tmp_path: Path) -> None:
    settings = dict(arch="rnn", steps=6, eval_every=3, **TINY["rnn"])
    whole = _run(small_split, out=tmp_path / "whole", **settings)

    def kill(event: dict) -> None:
        if event["step"] == 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _run(small_split, out=tmp_path / "old", callback=kill, **settings)
    run_file, checkpoint = tmp_path / "old" / "run.json", tmp_path / "old" / "seed-0" / "checkpoint.pt"
    record = json.loads(run_file.read_text())
    state = torch.load(checkpoint, weights_only=True)
    for name in ("output_mode", "computation_steps"):
        del record["settings"][name], state["run"]["settings"][name]
    run_file.write_text(json.dumps(record))
    torch.save(state, checkpoint)
    assert _comparable(_run(small_split, out=tmp_path / "old", resume=True, **settings)) == _comparable(whole)
    with pytest.raises(BaselineError, match="output_mode 'autoregressive' -> 'empty-tape'"):
        _run(small_split, out=tmp_path / "old", resume=True, **{**settings, **EMPTY_TAPE})


def test_the_report_keeps_runs_of_different_layouts_apart() -> None:
    plain = {"arch": "lstm", "pos": "none", "preset": "tiny", "steps": 10, "settings": {"lr": 0.01}, "data": {"fingerprint": "f"}}
    recorded = {**plain, "output_mode": "autoregressive", "computation_steps": 0,
                "settings": {"lr": 0.01, "output_mode": "autoregressive", "computation_steps": 0}}
    tape = {**recorded, "output_mode": "empty-tape", "settings": {**recorded["settings"], "output_mode": "empty-tape"}}
    steps = {**recorded, "computation_steps": 2, "settings": {**recorded["settings"], "computation_steps": 2}}
    assert setup.setup_of(plain) == setup.setup_of(recorded)  # a run made before the fields existed reads as the defaults
    assert setup.differences([setup.setup_of(recorded), setup.setup_of(tape)]) == ["output_mode"]
    assert setup.differences([setup.setup_of(recorded), setup.setup_of(steps)]) == ["computation_steps"]
    defaults = TrainSettings().resolve()
    assert setup.LEGACY_DEFAULTS == {name: getattr(defaults, name) for name in setup.LEGACY_DEFAULTS}
    assert {"output_mode", "computation_steps"} <= set(setup.TRAJECTORY)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gengap")
    add_commands(parser.add_subparsers(dest="command", required=True))
    return parser


def test_the_cli_trains_in_empty_tape_mode_with_computation_steps(small_split, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "rel" / "data" / "rev"
    folder.mkdir(parents=True)
    for part in ("train", "validation", "test"):
        (folder / f"{part}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in getattr(small_split, part)))
    common = ["train", str(tmp_path / "rel"), "--config", "rev", "--arch", "tape_rnn", "--preset", "tiny", "--steps", "2", "--d-model", "8",
              "--eval-examples", "4", "--eval-limit", "8"]
    args = _parser().parse_args([*common, "--output-mode", "empty-tape", "--computation-steps", "1", "--out", str(tmp_path / "run")])
    assert args.func(args) == 0
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert (results["output_mode"], results["computation_steps"]) == ("empty-tape", 1)
    assert (results["settings"]["output_mode"], results["settings"]["computation_steps"]) == ("empty-tape", 1)
    assert "arch=tape_rnn  output=empty-tape  computation-steps=1  preset=tiny" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        _parser().parse_args([*common, "--output-mode", "tape", "--out", "o"])
    capsys.readouterr()
    args = _parser().parse_args([*common, "--computation-steps", "17", "--out", str(tmp_path / "bad")])
    with pytest.raises(BaselineError, match="computation_steps must be an integer from 0 to 16, got 17"):
        args.func(args)
    assert not (tmp_path / "bad").exists()


def test_a_sweep_file_takes_the_output_mode_and_computation_steps(tmp_path: Path) -> None:
    (tmp_path / "rel" / "data").mkdir(parents=True)
    sweep = parse_sweep("release: rel\nconfigs: x\ntrain: {output_mode: empty-tape, computation_steps: 2}\n", "s.yaml", tmp_path)
    assert sweep.overrides == {"output_mode": "empty-tape", "computation_steps": 2}
    for bad in ("output_mode: tape", "computation_steps: 17", "computation_steps: -1"):
        with pytest.raises(SweepError, match="s.yaml line 3"):
            parse_sweep(f"release: rel\nconfigs: x\ntrain: {{{bad}}}\n", "s.yaml", tmp_path)
    schema = json.loads((Path(__file__).resolve().parents[1] / "gengap" / "schemas" / "sweep.schema.json").read_text())["properties"]["train"]
    assert tuple(schema["properties"]["output_mode"]["enum"]) == OUTPUT_MODES
    assert schema["properties"]["computation_steps"]["maximum"] == MAX_COMPUTATION_STEPS


# -- it learns --------------------------------------------------------------------------------


def test_a_tape_rnn_learns_to_reverse_strings_on_the_empty_tape() -> None:
    """Reversal needs every tape cell read at its own position: with the labels or the decoded
    positions shifted by one, ID exact match (on distinct inputs unseen in train) stays far below 0.9."""
    split = sample_length_split("reverse_string", (1, 8), (9, 10), {"train": 400, "validation": 40, "test": 20}, seed=0)
    results = train_and_evaluate(split, arch="tape_rnn", preset="tiny", d_model=64, steps=150, batch_size=32, lr=1e-2, eval_every=150,
                                 eval_examples=40, seeds=(0,), progress=False, plots=False, **EMPTY_TAPE)
    assert results["per_seed"][0]["id_exact_match"] >= 0.9
