"""Shortcut cues (Shah et al. 2020: networks "can exclusively rely on the simplest feature and
remain invariant to all predictive complex features"): a cue token that agrees with the answer
in training pulls the model off the real feature, more so the more often it agrees.

Set-up (fixed before any run): parity_check, inputs of 1..12 bits, train, validation and test
from the one distribution (train 2,000, validation 300, test 500; validation and test hold
distinct inputs unseen in train, so both cover the same lengths); a cue ``cue:<answer>`` in
front of every input agreeing with the answer at rate rho in train and validation and 0.5 in
test, rho in 0.5, 0.8, 0.95, 1.0, and the same split without cues (the no-cue run); a tiny
transformer per setting. A run's drop is validation exact match (cued as in training) minus test
exact match (uninformative cue); the shortcut effect is a cued setting's mean drop minus the
no-cue setting's.

Tenth edition (fixed before its runs; every earlier run is retrained): seeds 0-4 for every setting
(a run costs under a minute), every run all 2,000 steps with the checkpoint validation selected
scored (learned: ID >= 0.95); rules read 95 % intervals over seeds (each setting's seeds resampled
on their own). New: the negative control ``cue:uninformative``: at rho = 0.5 the cue carries no
information in training, so there is no effect.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from validity_axes.common import CHEAP_SEEDS, LEVEL, PREVIOUS, SELECTED, SMOKE_SEEDS, arm, build, f3, spearman
from validity_engine import Claim, Decision, Figures
from validity_stats import at_least, bootstrap, mean, within

RHOS = (0.5, 0.8, 0.95, 1.0)
EFFECT_MIN = 0.2
NO_EFFECT = 0.1  # cue:uninformative: the effect at rho 0.5 within +-this


def claims(smoke: bool) -> list[Claim]:
    sizes = {"train": 2000, "validation": 300, "test": 500} if not smoke else {"train": 120, "validation": 30, "test": 40}
    lengths = [1, 12] if not smoke else [1, 6]
    train = {"steps": 2000, "eval_every": 250, "eval_examples": 300} if not smoke else {"steps": 10, "eval_every": 5, "eval_examples": 16}
    seeds = CHEAP_SEEDS if not smoke else SMOKE_SEEDS
    base = arm("no cue", "parity_check-nocue", build("same_distribution", task="parity_check", lengths=lengths, sizes=sizes, label="parity_check-shortcuts"),
               seeds, cost=1, **train)
    cued = {rho: arm(f"rho={rho:g}", f"parity_check-cue{round(rho * 100):03d}",
                     build("same_distribution", task="parity_check", lengths=lengths, sizes=sizes, label="parity_check-shortcuts",
                           cue={"train": rho, "test": 0.5}), seeds, cost=1, **train) for rho in RHOS}
    arms = (base, *cued.values())
    return [
        Claim("shortcuts", "monotone", "The shortcut effect grows with the cue's agreement rate", arms,
              f"Spearman ρ of (rho, shortcut effect) over the four rates: its {LEVEL:.0%} interval > 0",
              "Shah et al. 2020: the simplest feature wins", monotone, learned=SELECTED, optional=tuple(a.label for a in arms[1:-1]),
              previous=PREVIOUS["monotone"], level=LEVEL,
              setup="parity_check 1..12 bits; every run 2,000 steps, seeds 0-4; effect = mean (ID - OOD) of the cued setting minus that of the no-cue setting."),
        Claim("shortcuts", "size", "A cue that always agrees in training displaces the real feature", (base, cued[1.0]),
              f"shortcut effect at rho = 1: its {LEVEL:.0%} interval ≥ {EFFECT_MIN}", "Shah et al. 2020",
              size, learned=SELECTED, previous=PREVIOUS["size"], level=LEVEL, tiers=("quick", "full"),
              setup="As above; the no-cue and the rho = 1 settings must learn."),
        Claim("shortcuts", "cue:uninformative", "A cue that agrees at chance in training has no effect", (base, cued[0.5]),
              f"shortcut effect at rho = 0.5: its {LEVEL:.0%} interval within ±{NO_EFFECT}", "Shah et al. 2020: a feature that predicts nothing is not used",
              uninformative, learned=SELECTED, level=LEVEL, role="negative control",
              setup="As above, rho = 0.5: the cue agrees with the answer half the time in training, as in test."),
    ]


def _drops(figures: Figures, label: str) -> list[float]:
    return [s["id_exact_match"] - s["ood_exact_match"] for s in figures[label].seeds]


def _effect(rho: str) -> Any:
    return lambda groups: None if not groups[rho] or not groups["no cue"] else mean(groups[rho]) - mean(groups["no cue"])  # type: ignore[operator]


def _groups(figures: Figures) -> dict[str, list[float]]:
    return {label: _drops(figures, label) for label in figures}


def monotone(figures: Figures) -> Decision:
    groups = _groups(figures)
    rates = {label: float(label.split("=")[1]) for label in figures if label != "no cue"}

    def rho(values: Mapping[str, Sequence[float]]) -> float | None:
        effects = {r: _effect(label)(values) for label, r in rates.items()}
        if any(v is None for v in effects.values()):
            return None
        return spearman(list(effects), list(effects.values()))

    interval = bootstrap(groups, rho, LEVEL)
    text = ", ".join(f"{r:g}: {f3(_effect(label)(groups))}" for label, r in rates.items())
    holds = interval.low is not None and interval.low > 0
    return Decision(holds, f"effect by rho {text}; ρ = {interval.text()}",
                    {"no-cue run: ID / OOD exact match (mean)": f"{f3(figures['no cue'].mean('id_exact_match', False))} / "
                                                               f"{f3(figures['no cue'].mean('ood_exact_match', False))}"})


def size(figures: Figures) -> Decision:
    interval = bootstrap(_groups(figures), _effect("rho=1"), LEVEL)
    return Decision(at_least(interval, EFFECT_MIN), f"effect at rho 1: {interval.text()}")


def uninformative(figures: Figures) -> Decision:
    interval = bootstrap(_groups(figures), _effect("rho=0.5"), LEVEL)
    return Decision(within(interval, NO_EFFECT), f"effect at rho 0.5: {interval.text()}")
