"""Facts: the reversal curse (Berglund et al. 2023): trained on "A is B", a model does not answer
"B is A" ("the likelihood of the correct answer will not be higher than for a random name").

Set-up (fixed before any run): fact_reverse over one world of 100 entities and 2 relations
(every relation one-to-one), every query; the facts split ``by: direction`` with half the
facts held out: train holds every forward fact and the reversed queries of the other half.
The arm's validation is the forward lookups of the held-out facts (records that are in train:
were they learned?), its test the reversed queries of the same facts. A tiny transformer.
Two-hop composition at Wang et al.'s ratio waits for a GPU (docs/validity.md, "Deferred to a GPU").

Tenth edition (fixed before its runs; every earlier run is retrained): seeds 0-4 (a run costs
under a minute), every run all 3,000 steps, the checkpoint validation selected scored (learned:
ID >= 0.95); the rule reads the interval of the reversed exact match (95 %). New: the positive
control ``reversal:both`` (the reversed queries of the facts trained in both directions are
answered: the model can give a reversed answer, so the curse is not a failure to produce one) and
the negative control ``reversal:forward`` (holding one direction of a fact out does not hurt its
other direction: forward lookups of the facts held out reversed and of the facts trained both ways
score alike). The three arms train on the same train and validation parts with the same seeds:
the same model, scored on three test parts.
"""

from __future__ import annotations

from validity_axes.common import CHEAP_SEEDS, LEVEL, PREVIOUS, SELECTED, SMOKE_SEEDS, arm, build, f3, paired
from validity_engine import Claim, Decision, Figures
from validity_stats import at_least, at_most, bootstrap, mean, within

CHANCE_FLOOR = 0.1
CHANCE_FACTOR = 3
BOTH_MIN = 0.95  # reversal:both: reversed queries trained on are answered
FORWARD_SAME = 0.05  # reversal:forward: forward lookups of the two halves within +-this
WORLD = {"n_entities": 100, "n_relations": 2}


def claims(smoke: bool) -> list[Claim]:
    world = WORLD if not smoke else {"n_entities": 12, "n_relations": 2}
    train = {"steps": 3000, "eval_every": 250, "eval_examples": 512} if not smoke else {"steps": 10, "eval_every": 5, "eval_examples": 16}
    seeds = CHEAP_SEEDS if not smoke else SMOKE_SEEDS
    split = lambda test: build("reversal", params=world, holdout_fraction=0.5, label="fact_reverse-direction", test=test)  # noqa: E731
    model = arm("transformer", "fact_reverse-direction", split("reversed"), seeds, cost=2, **train)
    both = arm("transformer, trained both ways", "fact_reverse-direction-both", split("both"), seeds, cost=2, **train)
    forward = arm("transformer, forward of both-way facts", "fact_reverse-direction-forward", split("forward"), seeds, cost=2, **train)
    ceiling = max(CHANCE_FLOOR, CHANCE_FACTOR / world["n_entities"])
    chance = 1 / world["n_entities"]
    return [
        Claim("facts", "reversal", "The reversal curse: a model that learned A → B does not answer B → A", (model,),
              f"reversed (OOD) exact match: its {LEVEL:.0%} interval ≤ max({CHANCE_FLOOR}, {CHANCE_FACTOR} x chance) = {ceiling:g}",
              "Berglund et al. 2023: not above a random name (chance 1 / entities)",
              lambda figures: reversal(figures, ceiling, chance), learned=SELECTED, previous=PREVIOUS["reversal"], level=LEVEL,
              tiers=("quick", "full"),
              setup="fact_reverse, 100 entities, 2 relations, half the facts held out in the reversed direction; seeds 0-4."),
        Claim("facts", "reversal:both", "Facts seen in both directions are answered reversed", (both,),
              f"exact match on the reversed queries of the facts trained in both directions: its {LEVEL:.0%} interval ≥ {BOTH_MIN}",
              "Berglund et al. 2023: the model answers in the order it was trained on", answered, learned=SELECTED, level=LEVEL,
              role="positive control",
              setup="The model of the claim above (same train and validation parts, same seeds), scored on the reversed queries it trained on."),
        Claim("facts", "reversal:forward", "Holding out a fact's reversed direction does not hurt its forward direction", (model, forward),
              f"forward exact match of the facts held out reversed minus of the facts trained both ways, per seed: its {LEVEL:.0%} "
              f"interval within ±{FORWARD_SAME}",
              "Berglund et al. 2023: the curse is in the held-out direction only", forward_alike, learned=SELECTED, level=LEVEL,
              role="negative control",
              setup="The same model: validation (forward lookups of the facts held out reversed) against the forward lookups of the facts "
                    "trained in both directions."),
    ]


def reversal(figures: Figures, ceiling: float, chance: float) -> Decision:
    (label,) = figures
    model = figures[label]
    interval = bootstrap({label: model.values("ood_exact_match")}, lambda g: mean(g[label]), LEVEL)
    return Decision(at_most(interval, ceiling), f"forward {f3(model.id)}, reversed {interval.text()}, chance {chance:.3f}")


def answered(figures: Figures) -> Decision:
    (label,) = figures
    interval = bootstrap({label: figures[label].values("ood_exact_match")}, lambda g: mean(g[label]), LEVEL)
    return Decision(at_least(interval, BOTH_MIN), f"reversed queries trained on: {interval.text()}")


def forward_alike(figures: Figures) -> Decision:
    held, both = list(figures)
    differences = paired(figures, held, both, "id_exact_match", "ood_exact_match")
    interval = bootstrap({"d": differences}, lambda g: mean(g["d"]), LEVEL)
    return Decision(within(interval, FORWARD_SAME), f"forward exact match: held out reversed {f3(figures[held].mean('id_exact_match'))}, "
                    f"trained both ways {f3(figures[both].ood)}, difference {interval.text()}")
