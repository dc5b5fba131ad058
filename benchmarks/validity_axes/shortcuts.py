"""Shortcut cues (Shah et al. 2020: networks "can exclusively rely on the simplest feature and
remain invariant to all predictive complex features"): a cue token that agrees with the answer
in training pulls the model off the real feature, more so the more often it agrees.

Set-up (fixed before any run): parity_check, inputs of 1..12 bits, train, validation and test
from the one distribution (train 2,000, validation 300, test 500; validation and test hold
distinct inputs unseen in train, so both cover the same lengths); a cue ``cue:<answer>`` in
front of every input agreeing with the answer at rate rho in train and validation and 0.5 in
test, rho in 0.5, 0.8, 0.95, 1.0, and the same split without cues (the no-cue run); a tiny
transformer per setting, seeds 0, 1 and 2 (fifth edition: a third seed, the runs take under a
minute; rules unchanged), every one trained 2,000 steps (no early stop: a
cued run would stop as soon as the cue is learned). A run's drop is validation exact match
(cued as in training) minus test exact match (uninformative cue); the shortcut effect is a cued
run's drop minus the no-cue run's drop (same seed). Learned: final ID >= 0.95.
"""

from __future__ import annotations

from validity_axes.common import PREVIOUS, arm, build, f3, mean, spearman
from validity_engine import Claim, Decision, Figures, Learned

RHOS = (0.5, 0.8, 0.95, 1.0)
EFFECT_MIN = 0.2
FIXED = Learned(threshold=0.95, stop=False)


def claims(smoke: bool) -> list[Claim]:
    sizes = {"train": 2000, "validation": 300, "test": 500} if not smoke else {"train": 120, "validation": 30, "test": 40}
    lengths = [1, 12] if not smoke else [1, 6]
    train = {"steps": 2000, "eval_every": 250, "eval_examples": 300} if not smoke else {"steps": 10, "eval_every": 5, "eval_examples": 16}
    seeds = (0, 1, 2) if not smoke else (0,)
    base = arm("no cue", "parity_check-nocue", build("same_distribution", task="parity_check", lengths=lengths, sizes=sizes, label="parity_check-shortcuts"),
               seeds, cost=1, **train)
    cued = tuple(arm(f"rho={rho:g}", f"parity_check-cue{round(rho * 100):03d}",
                     build("same_distribution", task="parity_check", lengths=lengths, sizes=sizes, label="parity_check-shortcuts",
                           cue={"train": rho, "test": 0.5}), seeds, cost=1, **train) for rho in RHOS)
    arms = (base, *cued)
    return [
        Claim("shortcuts", "monotone", "The shortcut effect grows with the cue's agreement rate", arms,
              "Spearman ρ(rho, shortcut effect) over the (rho, seed) points > 0", "Shah et al. 2020: the simplest feature wins",
              monotone, learned=FIXED, optional=tuple(a.label for a in cued[:-1]),
              previous=PREVIOUS["monotone"],
              setup="parity_check 1..12 bits; every run 2,000 steps; effect = (ID - OOD) of the cued run minus that of the no-cue run."),
        Claim("shortcuts", "size", "A cue that always agrees in training displaces the real feature", arms,
              f"shortcut effect at rho = 1 (mean over seeds) ≥ {EFFECT_MIN}", "Shah et al. 2020",
              size, learned=FIXED, optional=tuple(a.label for a in cued[:-1]),
              previous=PREVIOUS["size"],
              setup="As above; the no-cue run and the rho = 1 run must learn (final ID ≥ 0.95)."),
    ]


def _drops(figures: Figures, label: str) -> dict[int, float]:
    return {s["seed"]: s["id_exact_match"] - s["ood_exact_match"] for s in figures[label].seeds}


def _effects(figures: Figures) -> dict[float, dict[int, float]]:
    baseline = _drops(figures, "no cue")
    return {float(label.split("=")[1]): {seed: drop - baseline[seed] for seed, drop in _drops(figures, label).items()}
            for label in figures if label != "no cue"}


def monotone(figures: Figures) -> Decision:
    effects = _effects(figures)
    points = [(rho, value) for rho, by_seed in effects.items() for value in by_seed.values()]
    rho = spearman([p[0] for p in points], [p[1] for p in points])
    text = ", ".join(f"{r:g}: {f3(mean(list(v.values())))}" for r, v in effects.items())
    return Decision(rho is not None and rho > 0, f"effect by rho {text}; ρ = {f3(rho)}",
                    {"no-cue run: ID / OOD exact match (mean)": f"{f3(figures['no cue'].mean('id_exact_match', False))} / "
                                                               f"{f3(figures['no cue'].mean('ood_exact_match', False))}"})


def size(figures: Figures) -> Decision:
    top = mean(list(_effects(figures)[max(RHOS)].values()))
    return Decision(top is not None and top >= EFFECT_MIN, f"effect at rho 1: {f3(top)}")
