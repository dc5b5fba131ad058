"""The GPU code path forced onto the CPU: torch.compile, bf16 autocast, left-padded bf16 decoding."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from gengap.baselines.decoding import autocast_context, greedy_decode
from gengap.baselines.errors import BaselineError
from gengap.baselines.models import ModelShape, build_model
from gengap.baselines.training import train_and_evaluate
from gengap.splits import sample_length_split


@pytest.fixture(scope="module")
def split():
    return sample_length_split("reverse_string", (1, 5), (6, 7), {"train": 200, "validation": 16, "test": 16}, seed=2)


def test_compiled_bf16_training_on_cpu_writes_a_run(split, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """torch.compile, bf16 autocast and fused AdamW, as on CUDA, forced onto the CPU."""
    made: list[dict] = []
    adamw = torch.optim.AdamW

    def recording_adamw(*args, **kwargs):
        optimizer = adamw(*args, **kwargs)
        made.append(optimizer.defaults)
        return optimizer

    monkeypatch.setattr(torch.optim, "AdamW", recording_adamw)
    settings = dict(pos="rope", preset="tiny", steps=6, eval_every=3, eval_examples=8, seeds=(0,), layers=1, d_model=32, heads=2, batch_size=16)
    from torch._dynamo.utils import counters

    counters.clear()
    results = train_and_evaluate(split, out=tmp_path / "run", device="cpu", compile=True, precision="bf16", fused=True, **settings)
    assert results["compiled"] is True and results["settings"]["precision"] == "bf16"
    assert [d["fused"] for d in made] == [True]
    assert counters["stats"]["unique_graphs"] >= 1  # dynamo captured and compiled the model's forward
    assert results["device"] == "cpu"
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [row["step"] for row in rows] == [3, 6]
    assert all(row["loss"] == row["loss"] and 0 < row["loss"] < 20 for row in rows)  # finite
    fp32 = train_and_evaluate(split, device="cpu", compile=False, precision="fp32", **settings)
    assert not made[-1]["fused"]  # the CPU default
    # bf16 rounds the activations: the losses differ from fp32, but not by much
    assert fp32["per_seed"][0]["final_loss"] != results["per_seed"][0]["final_loss"]
    assert fp32["per_seed"][0]["final_loss"] == pytest.approx(results["per_seed"][0]["final_loss"], rel=0.05)


def test_unknown_precision_is_refused(split) -> None:
    with pytest.raises(BaselineError, match="precision"):
        train_and_evaluate(split, preset="tiny", steps=1, precision="fp16")


def test_autocast_context_follows_precision() -> None:
    cpu = torch.device("cpu")
    a, b = torch.randn(4, 4), torch.randn(4, 4)
    with autocast_context(cpu, "bf16"):
        assert (a @ b).dtype == torch.bfloat16
    with autocast_context(cpu, "auto"):
        assert (a @ b).dtype == torch.float32
    with autocast_context(cpu, "fp32"):
        assert (a @ b).dtype == torch.float32
    with pytest.raises(ValueError):
        autocast_context(cpu, "half")


@pytest.mark.parametrize("pos", ["rope", "nope", "learned", "alibi"])
def test_left_padded_bf16_decoding_matches_each_prompt_alone(pos: str) -> None:
    """A left-padded bf16 batch decodes as each prompt alone under bf16 (cache or not)."""
    torch.manual_seed(5)
    model = build_model(pos, ModelShape(layers=2, d_model=32, heads=2), vocab_size=12, max_len=24)
    with torch.no_grad():  # a sharper model than the initialisation, so that argmax is not flat
        for p in model.parameters():
            p.mul_(4.0)
    generator = torch.Generator().manual_seed(1)
    prompts = [torch.randint(3, 12, (int(n),), generator=generator).tolist() for n in (2, 7, 4, 9, 3, 5)]
    limits = [6, 4, 8, 3, 7, 5]
    batched = greedy_decode(model, prompts, limits, end_id=2, batch_size=4, precision="bf16")
    recomputed = greedy_decode(model, prompts, limits, end_id=2, batch_size=4, use_cache=False, precision="bf16")
    alone = [greedy_decode(model, [p], [k], end_id=2, precision="bf16")[0] for p, k in zip(prompts, limits)]
    assert all(len(out) <= k for out, k in zip(batched, limits))
    assert len({tuple(out) for out in batched}) > 3  # not a constant output
    assert batched == recomputed == alone
