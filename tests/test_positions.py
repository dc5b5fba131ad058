"""The positional encodings built for length generalization (gengap.baselines.positions):
randomized positions, FIRE biases and abacus places, by hand; each one in the transformer and
the looped model trains, decodes, resumes and repeats itself on the CPU."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from gengap.baselines.decoding import greedy_decode
from gengap.baselines.errors import BaselineError
from gengap.baselines.looped import LoopedTransformer
from gengap.baselines.models import SeqModel
from gengap.baselines.positions import ABACUS_OFFSETS, Abacus, Fire, PositionDraws, sampled_positions, spread
from gengap.baselines.spec import LENGTH_POSITIONAL, LOOPED_POSITIONAL, POSITIONAL, ModelShape
from gengap.baselines.sweep import encodings_of
from gengap.baselines.tokenizer import Tokenizer
from gengap.baselines.training import train_and_evaluate
from gengap.splits import sample_length_split

TOKENS = ["<pad>", "<sep>", "<end>", "+", "0", "1", "2", "3"]
TINY = {"transformer": dict(layers=1, d_model=16, heads=2), "looped": dict(d_model=16, heads=2, iterations=2)}


@pytest.fixture(scope="module")
def split():
    return sample_length_split("reverse_string", (1, 6), (7, 9), {"train": 200, "validation": 24, "test": 24}, seed=1)


def _comparable(results: dict) -> list[dict]:
    return [{k: v for k, v in seed.items() if k not in ("tokens_per_s", "train_seconds")} for seed in results["per_seed"]]


def test_the_new_encodings_are_choices_of_both_models_and_of_sweeps() -> None:
    assert set(LENGTH_POSITIONAL) <= set(POSITIONAL) and set(LENGTH_POSITIONAL) <= set(LOOPED_POSITIONAL)
    assert encodings_of("looped", ["alibi", "fire", "abacus"]) == ["fire", "abacus"]
    schema = json.loads((Path(__file__).resolve().parents[1] / "gengap" / "schemas" / "sweep.schema.json").read_text())
    assert set(schema["properties"]["encodings"]["items"]["enum"]) == set(POSITIONAL)


def test_randomized_training_positions_are_ordered_samples_of_the_whole_range() -> None:
    draws = PositionDraws()
    lengths = torch.tensor([5, 9, 3])
    first = sampled_positions(draws.next_rng(), lengths, 9, 40)
    second = sampled_positions(draws.next_rng(), lengths, 9, 40)
    for row, n in zip(first, lengths.tolist()):
        real = row[:n].tolist()
        assert real == sorted(set(real)) and 0 <= real[0] and real[-1] < 40  # increasing, distinct, in range
        assert row[n:].tolist() == [39] * (9 - n)  # padding: never read
    assert not torch.equal(first, second) and int(draws.draws) == 2
    again = PositionDraws()
    again.load_state_dict(draws.state_dict())  # a checkpoint's buffers: the same next draws
    assert torch.equal(sampled_positions(again.next_rng(), lengths, 9, 40), sampled_positions(draws.next_rng(), lengths, 9, 40))
    seen = torch.cat([sampled_positions(draws.next_rng(), torch.tensor([4]), 4, 40)[0] for _ in range(200)])
    assert seen.max() >= 36  # training reaches the positions only long sequences read
    assert spread(torch.arange(4)[None], torch.tensor([4]), 40).tolist() == [[0, 10, 20, 30]]  # decoding: evenly spread


def test_fire_biases_are_the_papers_formula() -> None:
    torch.manual_seed(0)
    fire = Fire(heads=2)
    positions = torch.arange(4)[None]
    allowed = torch.ones(4, 4, dtype=torch.bool).tril()[None]
    bias = fire(positions, positions, allowed)
    c, threshold = fire.c.item(), fire.threshold.item()
    for i in range(4):
        for j in range(4):
            if j > i:
                assert (bias[0, :, i, j] < -1e8).all()
                continue
            x = math.log(c * (i - j) + 1) / math.log(c * max(threshold, i) + 1)
            expected = fire.mlp(torch.tensor([[x]]))[0]
            assert torch.allclose(bias[0, :, i, j], expected, atol=1e-6)


@pytest.mark.parametrize("arch", ["transformer", "looped"])
def test_fire_biases_reach_the_attention_of_both_models(arch: str) -> None:
    torch.manual_seed(0)
    model = SeqModel("fire", ModelShape(1, 16, 2), 8, 10) if arch == "transformer" else LoopedTransformer("fire", 1, 16, 2, 2, 8, max_len=10)
    model(torch.randint(3, 8, (2, 6))).sum().backward()
    fires = [model.fire] if arch == "transformer" else [layer.fire for layer in model.block]
    assert all(float(f.mlp[0].weight.grad.abs().sum()) > 0 for f in fires)  # the biases change the logits


def test_abacus_places_count_each_run_of_digits_and_continue_across_a_cache() -> None:
    abacus = Abacus([4, 5, 6, 7], len(TOKENS), 8, places=12)
    ids = torch.tensor([[5, 6, 3, 7, 4, 4, 1, 5]])  # 1 2 + 3 0 0 <sep> 1
    assert abacus.runs(ids).tolist() == [[1, 2, 0, 1, 2, 3, 0, 1]]
    assert abacus.runs(torch.tensor([[5, 3]]), before=torch.tensor([2])).tolist() == [[3, 0]]  # a digit after 2 digits
    embedded = abacus(abacus.runs(ids), offsets=torch.tensor([4]))
    assert torch.equal(embedded[0, 2], torch.zeros(8)) and torch.equal(embedded[0, 0], abacus.embed.weight[5])  # place 1 + offset 4
    assert torch.equal(abacus(torch.tensor([[30]]))[0, 0], abacus.embed.weight[11])  # beyond the table: its last place
    with pytest.raises(BaselineError, match="abacus positions need the vocabulary's tokens"):
        SeqModel("abacus", ModelShape(1, 16, 2), 8, 10)


@pytest.mark.parametrize("arch", ["transformer", "looped"])
@pytest.mark.parametrize("pos", LENGTH_POSITIONAL)
def test_each_new_encoding_trains_decodes_resumes_and_repeats_itself(arch: str, pos: str, split, tmp_path: Path) -> None:
    settings = dict(arch=arch, pos=pos, preset="tiny", steps=8, eval_every=4, eval_examples=8, eval_limit=16, seeds=(0,), lr=1e-2,
                    progress=False, plots=False, **TINY[arch])
    whole = train_and_evaluate(split, out=tmp_path / "whole", **settings)
    assert whole["pos"] == pos and whole["per_seed"][0]["ood_n"] == 16  # decoded past the training lengths
    losses = [json.loads(line)["loss"] for line in (tmp_path / "whole" / "metrics.jsonl").read_text().splitlines()]
    assert losses[1] < losses[0]  # it trained
    assert _comparable(train_and_evaluate(split, out=tmp_path / "again", **settings)) == _comparable(whole)  # deterministic

    def kill(event: dict) -> None:
        if event["step"] == 6:  # after the checkpoint of step 4
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_and_evaluate(split, out=tmp_path / "cut", callback=kill, **settings)
    resumed = train_and_evaluate(split, out=tmp_path / "cut", resume=True, **settings)
    assert _comparable(resumed) == _comparable(whole)
    a = torch.load(tmp_path / "whole" / "seed-0" / "checkpoint.pt", weights_only=True)["model"]
    b = torch.load(tmp_path / "cut" / "seed-0" / "checkpoint.pt", weights_only=True)["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)
    if pos != "fire":  # the training draws counted in the weights, so a resumed run drew what the whole one did
        assert int(a[next(k for k in a if k.endswith("draws.draws"))]) == 8


@pytest.mark.parametrize("arch", ["transformer", "looped"])
@pytest.mark.parametrize("pos", LENGTH_POSITIONAL)
def test_each_new_encoding_trains_and_decodes_the_empty_tape_deterministically(arch: str, pos: str, split) -> None:
    settings = dict(arch=arch, pos=pos, preset="tiny", steps=4, eval_every=4, eval_examples=8, eval_limit=16, seeds=(0,), lr=1e-2,
                    output_mode="empty-tape", computation_steps=1, progress=False, plots=False, **TINY[arch])
    first = train_and_evaluate(split, **settings)
    assert first["output_mode"] == "empty-tape" and first["per_seed"][0]["ood_n"] == 16  # the tape read past the training lengths
    assert _comparable(train_and_evaluate(split, **settings)) == _comparable(first)


@pytest.mark.parametrize("pos", LENGTH_POSITIONAL)
def test_looped_cached_decoding_matches_recomputing_and_decoding_alone(pos: str, split) -> None:
    tok = Tokenizer.build([r[k] for part in split.parts().values() for r in part for k in ("input", "target")])
    torch.manual_seed(2)
    model = LoopedTransformer(pos, 1, 16, 2, 2, len(tok), max_len=30, tokens=tok.tokens)
    records = split.validation[:6] + split.test[:6]
    prompts = [tok.prompt(r["input"]) for r in records]
    limits = [len(r["target"].split()) for r in records]
    cached = greedy_decode(model, prompts, limits, tok.end_id, batch_size=5)
    recomputed = greedy_decode(model, prompts, limits, tok.end_id, batch_size=5, use_cache=False)
    alone = [greedy_decode(model, [p], [k], tok.end_id, use_cache=False)[0] for p, k in zip(prompts, limits)]
    assert cached == recomputed == alone


def test_abacus_offsets_are_drawn_in_training_only() -> None:
    torch.manual_seed(0)
    model = SeqModel("abacus", ModelShape(1, 16, 2), len(TOKENS), 10, tokens=TOKENS)
    ids = torch.tensor([[5, 6, 3, 7, 1, 4, 2]])
    model.eval()
    with torch.no_grad():
        assert torch.equal(model(ids), model(ids)) and int(model.draws.draws) == 0
        model.train()
        drawn = [model(ids) for _ in range(4)]
    assert int(model.draws.draws) == 4 and any(not torch.equal(drawn[0], d) for d in drawn[1:])
    assert model.abacus.places == 10 + ABACUS_OFFSETS + 1
