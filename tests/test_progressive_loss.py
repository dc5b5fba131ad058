"""The looped model's progressive loss (Bansal et al. 2022): the draws, the detached pass, the
mixed loss, and runs that use it (deterministic, resumable)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, strategies as st

from gengap.baselines.errors import BaselineError
from gengap.baselines.looped import LoopedTransformer, progressive_draw
from gengap.baselines.settings import TrainSettings
from gengap.baselines.training import IGNORE, Trainer, train_and_evaluate

K = 4  # training iterations of the models here


def model(seed: int = 0, iterations: int = K) -> LoopedTransformer:
    torch.manual_seed(seed)
    return LoopedTransformer("rope", 1, 16, 2, iterations=iterations, vocab_size=7)


IDS = torch.tensor([[3, 4, 5, 1, 6, 2], [4, 4, 3, 1, 5, 2]])
LABELS = torch.tensor([[IGNORE, IGNORE, IGNORE, 6, 2, IGNORE], [IGNORE, IGNORE, IGNORE, 5, 2, IGNORE]])


def by_hand(m: LoopedTransformer, ids: torch.Tensor, frozen: int, iterations: int) -> torch.Tensor:
    """frozen iterations of the block under no_grad, then iterations more with gradient, each
    adding the input embedding back (recall), written out from the model's parts."""
    length = ids.shape[1]
    positions = torch.arange(length)[None].expand(ids.shape[0], length)
    allowed = torch.tril(torch.ones(length, length, dtype=torch.bool))[None].expand(ids.shape[0], length, length)
    e = m.embed(ids)
    h = torch.zeros_like(e)

    def block(x: torch.Tensor) -> torch.Tensor:
        for layer in m.block:
            x = layer(x, positions, allowed, None)[0]
        return x

    with torch.no_grad():
        for _ in range(frozen):
            h = block(h + e)
    for _ in range(iterations):
        h = block(h + e)
    return m.head(m.norm(h))


def ce(logits: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), LABELS.reshape(-1), ignore_index=IGNORE)


# -- the draws ----------------------------------------------------------------------------------


@given(seed=st.integers(0, 2**63 - 1), step=st.integers(1, 10**9), k=st.integers(1, 64))
def test_a_draw_runs_0_to_k_minus_1_iterations_frozen_then_1_to_k_minus_n_and_is_a_function_of_seed_and_step(seed: int, step: int, k: int) -> None:
    frozen, iterations = progressive_draw(seed, step, k)
    assert 0 <= frozen <= k - 1 and 1 <= iterations <= k - frozen
    assert progressive_draw(seed, step, k) == (frozen, iterations)


def test_the_draws_cover_every_pair_and_change_with_step_and_seed() -> None:
    pairs = Counter(progressive_draw(7, step, K) for step in range(1, 4001))
    assert set(pairs) == {(n, j) for n in range(K) for j in range(1, K - n + 1)}
    assert all(sum(c for (n, _), c in pairs.items() if n == frozen) > 800 for frozen in range(K))  # n uniform: about 1000 each
    assert [progressive_draw(7, s, 16) for s in range(1, 20)] != [progressive_draw(8, s, 16) for s in range(1, 20)]


# -- the progressive pass --------------------------------------------------------------------------


@pytest.mark.parametrize("frozen, iterations", [(0, K), (1, 2), (3, 1), (2, 2)])
def test_the_progressive_logits_are_the_frozen_iterations_then_the_trained_ones(frozen: int, iterations: int) -> None:
    m = model()
    assert torch.allclose(m.forward_progressive(IDS, frozen, iterations), by_hand(m, IDS, frozen, iterations), atol=1e-6)
    assert torch.equal(m.forward_progressive(IDS, 0, K), m(IDS))  # frozen 0 is the plain forward pass


def grads(m: LoopedTransformer) -> dict[str, torch.Tensor]:
    return {name: p.grad.clone() for name, p in m.named_parameters() if p.grad is not None}


def test_no_gradient_reaches_what_the_frozen_iterations_computed() -> None:
    """n = k - 1 frozen, j = 1: the gradients are those of one block call on the detached state,
    unlike backpropagation through all k iterations."""
    m = model()
    ce(m.forward_progressive(IDS, K - 1, 1)).backward()
    progressive = grads(m)
    m.zero_grad(set_to_none=True)
    ce(by_hand(m, IDS, K - 1, 1)).backward()
    manual = grads(m)
    assert progressive.keys() == manual.keys()
    assert all(torch.allclose(progressive[name], manual[name], atol=1e-6) for name in manual)
    m.zero_grad(set_to_none=True)
    ce(m(IDS)).backward()  # the same logits, but the gradient flows through every iteration
    full = grads(m)
    assert torch.allclose(m.forward_progressive(IDS, K - 1, 1), m(IDS), atol=1e-6)
    assert any(not torch.allclose(full[name], manual[name], atol=1e-6) for name in manual)


# -- the loss --------------------------------------------------------------------------------------


def trainer(alpha: float, data_seed: int = 5) -> Trainer:
    settings = TrainSettings(arch="looped", preset="tiny", d_model=16, heads=2, layers=1, iterations=K, progressive_loss=alpha).resolve()
    return Trainer(model(), None, settings, torch.device("cpu"), False, data_seed)  # type: ignore[arg-type]


@pytest.mark.parametrize("alpha", [0.0, 0.3, 1.0])
def test_the_loss_mixes_the_full_and_progressive_cross_entropies(alpha: float) -> None:
    t = trainer(alpha)
    frozen, iterations = progressive_draw(5, 17, K)
    full, partial = ce(t.model(IDS)), ce(by_hand(t.model, IDS, frozen, iterations))
    loss, logits = t.loss_logits(IDS, LABELS, 17)
    if alpha == 0:
        assert torch.equal(loss, full) and torch.equal(logits, t.model(IDS))  # exactly the plain loss
    else:
        assert torch.allclose(loss, (1 - alpha) * full + alpha * partial, atol=1e-6)
    assert torch.equal(t.loss(IDS, LABELS, 17), loss)  # a pure function of (data seed, step)


def test_alpha_1_trains_on_the_progressive_pass_only() -> None:
    t = trainer(1.0)
    steps = [s for s in range(1, 50) if progressive_draw(5, s, K) == (K - 1, 1)][:1]
    t.loss(IDS, LABELS, steps[0]).backward()
    progressive = grads(t.model)
    t.model.zero_grad(set_to_none=True)
    ce(by_hand(t.model, IDS, K - 1, 1)).backward()
    assert all(torch.allclose(progressive[name], p.grad, atol=1e-6) for name, p in t.model.named_parameters())


def test_the_progressive_loss_is_for_the_looped_model_in_0_to_1() -> None:
    with pytest.raises(BaselineError, match="progressive_loss applies to the looped architecture only, not lstm"):
        TrainSettings(arch="lstm", progressive_loss=0.5).resolve()
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(BaselineError, match="progressive_loss must be"):
            TrainSettings(arch="looped", progressive_loss=bad).resolve()
    assert TrainSettings(arch="looped", progressive_loss=1.0).resolve().progressive_loss == 1.0


# -- in a run --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_split():
    from gengap.splits import sample_length_split

    return sample_length_split("reverse_string", (1, 4), (5, 6), {"train": 100, "validation": 16, "test": 16}, seed=2)


RUN = dict(arch="looped", preset="tiny", d_model=16, heads=2, iterations=3, steps=12, eval_every=4, checkpoint_every=4,
           eval_examples=4, seeds=(0,), plots=False)


def _rows(run: Path) -> list[tuple]:
    return [(r["step"], r["loss"], r["id_exact_match"]) for r in map(json.loads, (run / "metrics.jsonl").read_text().splitlines())]


def test_a_run_with_the_progressive_loss_is_deterministic_resumable_and_not_the_plain_run(small_split, tmp_path: Path) -> None:
    whole = train_and_evaluate(small_split, out=tmp_path / "whole", progressive_loss=0.5, **RUN)
    plain = train_and_evaluate(small_split, out=tmp_path / "plain", **RUN)
    assert _rows(tmp_path / "whole") != _rows(tmp_path / "plain")  # the loss differs

    def kill(event: dict) -> None:
        if event["step"] == 6:  # after the checkpoint of step 4
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_and_evaluate(small_split, out=tmp_path / "cut", callback=kill, progressive_loss=0.5, **RUN)
    with pytest.raises(BaselineError, match="progressive_loss 0.5 -> 0.25"):
        train_and_evaluate(small_split, out=tmp_path / "cut", resume=True, progressive_loss=0.25, **RUN)
    resumed = train_and_evaluate(small_split, out=tmp_path / "cut", resume=True, progressive_loss=0.5, **RUN)
    assert _rows(tmp_path / "cut") == _rows(tmp_path / "whole")
    timing = {"tokens_per_s", "train_seconds"}
    assert [{k: v for k, v in s.items() if k not in timing} for s in resumed["per_seed"]] == [
        {k: v for k, v in s.items() if k not in timing} for s in whole["per_seed"]]
    assert whole["settings"]["progressive_loss"] == 0.5 and plain["settings"]["progressive_loss"] == 0.0
