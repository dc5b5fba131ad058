"""Claims whose published set-up does not fit 2 CPU cores: the same engine and rules, GPU scale.
Run by ``python benchmarks/gpu_protocol.py --protocol NAME`` (NAME a key of GPU_PROTOCOLS);
never part of the CPU protocol's page except as the list of what is deferred."""

from __future__ import annotations

from validity_axes import authors, cfq, chomsky, grokking, looped, rules
from validity_axes.common import LEARNED, arm, build, f3
from validity_engine import Claim, Decision, Figures, Learned



def _preset(smoke: bool) -> str:
    return "tiny" if smoke else "small"


def easy_to_hard(smoke: bool) -> list[Claim]:
    sizes = {"train": 20000, "validation": 1000, "test": 2000} if not smoke else {"train": 200, "validation": 40, "test": 40}
    train = {"steps": 20000, "eval_every": 500, "eval_examples": 512, "batch_size": 128} if not smoke else {"steps": 10, "eval_every": 5, "eval_examples": 16}
    split = build("level", task="multiplication", level_max=4, test_levels=[5, 6, 7], sizes=sizes, label="multiplication-easy_to_hard")
    model = arm("transformer", "multiplication-easy_to_hard", split, (0, 1, 2) if not smoke else (0,), cost=5, preset=_preset(smoke), **train)
    return [Claim("gpu", "easy_to_hard", "A transformer that learned multiplication levels 1-4 fails on levels 5-7", (model,),
                  "ID - OOD exact match ≥ 0.2", "Schwarzschild et al. 2021: easy-to-hard needs more computation at test time",
                  _gap, learned=LEARNED, setup="multiplication, levels 1-4 → 5-7, the sum written plainly; preset small.")]


def two_hop(smoke: bool) -> list[Claim]:
    world = {"n_entities": 200, "n_relations": 20, "hops": 2} if not smoke else {"n_entities": 12, "n_relations": 3, "hops": 2}
    train = {"steps": 100_000, "eval_every": 2000, "eval_examples": 1000, "batch_size": 512} if not smoke else {"steps": 10, "eval_every": 5, "eval_examples": 16}
    split = build("pool", task="fact_two_hop", params=world, n=None, strategy="facts",
                  options={"by": "bridge", "holdout_fraction": 0.2, "validation_fraction": 0.05}, label="fact_two_hop-bridge")
    model = arm("transformer", "fact_two_hop-bridge", split, (0,), cost=5, preset=_preset(smoke), **train)
    return [Claim("gpu", "two_hop", "Composition over held-out bridges fails where composition over seen bridges is learned", (model,),
                  "learned, and ID - OOD exact match ≥ 0.2",
                  "Wang et al. 2024: implicit reasoning emerges through grokking at inferred/atomic ratio ≥ 3.6; composition does not generalize OOD",
                  _gap, learned=LEARNED, setup="fact_two_hop, 200 entities x 20 relations (every query: ratio 20), bridge split; ~10^5 steps.")]


def grokking_97(smoke: bool) -> list[Claim]:
    return [_with(c, "gpu") for c in grokking.claims_at(97 if not smoke else 7, 20000 if not smoke else 20, 200 if not smoke else 5,
                                                   fractions=(0.3, 0.4, 0.5), layers=2, seeds=(0, 1, 2) if not smoke else (0,),
                                                   d_model=128 if not smoke else 32)]


def label_noise(smoke: bool) -> list[Claim]:
    p, steps, every = (97, 20000, 200) if not smoke else (7, 20, 5)
    train = {**grokking.train_settings(steps, every, layers=2, d_model=128 if not smoke else 32), "label_noise": 0.1}
    model = arm("f=0.5 noise 0.1", "modular_operation-grok_f0500-noise10", grokking.split(p, 0.5), (0, 1, 2) if not smoke else (0,), cost=5, **train)
    return [Claim("gpu", "label_noise", "With 10 % of the labels corrupted, the network generalizes and does not keep the corrupted labels",
                  (model,), "final held-out exact match ≥ 0.9 and train exact match (against the labels trained on) within 0.05 of 0.9",
                  "Doshi et al. 2024: with regularization the generalizing network's train accuracy is about 100 (1 - xi) %",
                  _noise, learned=Learned(threshold=0.85, stop=False, metric="train"),
                  setup="x + y mod 97 at training fraction 0.5, 10 % of the training labels corrupted.")]


def looped_models(smoke: bool) -> list[Claim]:
    """The looped claims (validity_axes.looped) with a cap of 20,000 steps and three seeds."""
    return [_with(c, "gpu", c.key) for c in looped.claims(smoke, steps=20000 if not smoke else 10, seeds=(0, 1, 2))]


def duplicate_string(smoke: bool) -> list[Claim]:
    """The context-sensitive Chomsky claim (the tape RNN on duplicate_string, empty output tape) with a
    cap of 40,000 steps and three seeds of the tape RNN."""
    return [_with(c, "gpu", c.key) for c in chomsky.claims_of(("context_sensitive",), smoke, steps=40000, winner_seeds=(0, 1, 2))]


CFQ_LEARNED = Learned(threshold=0.95, extra=0.25, over="records")


def cfq_small(smoke: bool) -> list[Claim]:
    """The cfq axis's claims (validity_axes.cfq) with preset small, a cap of 20,000 steps and the learned rule
    over validation records (CFQ reports exact match over records; averaged over question lengths, the rare
    long questions weigh as much as the common ones: on the CPU 0.49-0.68 against 0.80-0.90 over records).
    Fixed before any GPU run."""
    from dataclasses import replace

    return [replace(_with(c, "gpu", c.key), learned=CFQ_LEARNED) for c in cfq.claims(smoke, steps=20000, preset=_preset(smoke))]


def rules_small(smoke: bool) -> list[Claim]:
    """The rules axis's claim (validity_axes.rules) with preset small, a cap of 40,000 steps and three seeds."""
    return [_with(c, "gpu", c.key) for c in rules.claims(smoke, steps=40000, preset=_preset(smoke), seeds=(0, 1, 2))]


def memorized_small(smoke: bool) -> list[Claim]:
    """fresh:memorized (validity_axes.authors): the contaminated model of preset small, every step of 20,000 trained, 3 seeds."""
    return authors.memorized_claims(smoke, preset=_preset(smoke))


GPU_PROTOCOLS = {"easy-to-hard": easy_to_hard, "two-hop": two_hop, "grokking": grokking_97, "label-noise": label_noise,
                 "looped": looped_models, "duplicate-string": duplicate_string, "cfq": cfq_small, "rules": rules_small,
                 "memorized": memorized_small}


def _with(claim: Claim, axis: str, key: str | None = None) -> Claim:
    from dataclasses import replace

    return replace(claim, axis=axis, key=key or f"grokking_97:{claim.key}")


def _gap(figures: Figures) -> Decision:
    (model,) = figures.values()
    difference = None if model.id is None or model.ood is None else model.id - model.ood
    return Decision(difference is not None and difference >= 0.2, f"ID {f3(model.id)}, OOD {f3(model.ood)}, gap {f3(difference)}")


def _noise(figures: Figures) -> Decision:
    (model,) = figures.values()
    train = model.mean("train_exact_match", False)
    held = model.mean("ood_exact_match", False)
    holds = train is not None and held is not None and held >= 0.9 and abs(train - 0.9) <= 0.05
    return Decision(holds, f"held-out {f3(held)}, train (as trained) {f3(train)}")
