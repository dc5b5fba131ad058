"""Facts: the reversal curse (Berglund et al. 2023): trained on "A is B", a model does not answer
"B is A" ("the likelihood of the correct answer will not be higher than for a random name").

Set-up (fixed before any run): fact_reverse over one world of 100 entities and 2 relations
(every relation one-to-one), every query; the facts split ``by: direction`` with half the
facts held out: train holds every forward fact and the reversed queries of the other half.
The arm's validation is the forward lookups of the held-out facts (records that are in train:
were they learned?), its test the reversed queries of the same facts. A tiny transformer,
seeds 0, 1 and 2, trained until learned (forward ID >= 0.95 at two evaluations, then 25 %
more steps; cap 3,000 steps). Two-hop composition at Wang et al.'s ratio waits for a GPU
(docs/validity.md, "Deferred to a GPU").
"""

from __future__ import annotations

from validity_axes.common import PREVIOUS, LEARNED, arm, build, f3
from validity_engine import Claim, Decision, Figures

CHANCE_FLOOR = 0.1
CHANCE_FACTOR = 3
WORLD = {"n_entities": 100, "n_relations": 2}


def claims(smoke: bool) -> list[Claim]:
    world = WORLD if not smoke else {"n_entities": 12, "n_relations": 2}
    train = {"steps": 3000, "eval_every": 250, "eval_examples": 512} if not smoke else {"steps": 10, "eval_every": 5, "eval_examples": 16}
    seeds = (0, 1, 2) if not smoke else (0,)
    split = build("reversal", params=world, holdout_fraction=0.5, label="fact_reverse-direction")
    model = arm("transformer", "fact_reverse-direction", split, seeds, cost=2, **train)
    ceiling = max(CHANCE_FLOOR, CHANCE_FACTOR / world["n_entities"])
    return [Claim(
        "facts", "reversal", "The reversal curse: a model that learned A → B does not answer B → A", (model,),
        f"reversed (OOD) exact match ≤ max({CHANCE_FLOOR}, {CHANCE_FACTOR} x chance) = {ceiling:g}",
        "Berglund et al. 2023: not above a random name (chance 1 / entities)",
        lambda figures: reversal(figures, ceiling, 1 / world["n_entities"]), learned=LEARNED,
        previous=PREVIOUS["reversal"],
        setup="fact_reverse, 100 entities, 2 relations, half the facts held out in the reversed direction.")]


def reversal(figures: Figures, ceiling: float, chance: float) -> Decision:
    (model,) = figures.values()
    return Decision(model.ood is not None and model.ood <= ceiling,
                    f"forward {f3(model.id)}, reversed {f3(model.ood)}, chance {chance:.3f}")
