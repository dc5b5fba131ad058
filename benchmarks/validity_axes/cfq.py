"""CFQ-style compositional generalization (Keysers et al. 2020, issue 42): on questions mapped to
SPARQL-like queries over a knowledge base (``cfq_like``), does a transformer that learned a random
split fall far lower on maximum-compound-divergence splits, and does its accuracy fall with the
compound divergence of graded splits?

Set-up (fixed before any run): cfq_like at level 5's grammar (no nesting, up to 3 conjuncts and
2 modifiers: questions of 10 tokens and queries of 23 on average), default world; a random split
(strategy iid, test fraction 0.111, of a pool of 10,000 records: ~8,000 / 900 / 1,150) and MCD
splits of one pool of 40,000 records at 8,000 train-side / 1,000 test records (validation 10 %
of the train side): the maximum compound divergence with three split seeds (mcd1-3, as CFQ's
MCD1-3) and graded targets 0.45, 0.60 and 0.75 (atom divergence ≤ 0.02 on every MCD split); a
tiny transformer (2 x 64, RoPE, autoregressive), one seed per config (a run takes 5-12 CPU
minutes), trained until learned (ID >= 0.95 at two evaluations, then 25 % more steps; cap
6,000 steps).
"""

from __future__ import annotations

from typing import Any

from validity_axes.common import LEARNED, PREVIOUS, arm, build, f3, permutation_p, spearman
from validity_engine import Claim, Decision, Figures

PARAMS = {"max_depth": 0, "max_conjuncts": 3, "max_modifiers": 2}  # cfq_like level 5
DROP_MIN = 0.3  # random-split OOD exact match minus the mean of mcd1-3
RHO_MAX = -0.7  # graded: Spearman over the configs at or below this ...
P_MAX = 0.05  # ... and its permutation p-value at or below this
TARGETS = (0.45, 0.6, 0.75)
PUBLISHED = ("Keysers et al. 2020 (CFQ): Transformer 98.5 % exact match on the random split, 34.9 / 8.2 / 10.6 % on MCD1-3 "
             "(mean 17.9); LSTM 14.9, Universal Transformer 18.9")


def _configs(smoke: bool) -> dict[str, Any]:
    pool_n, random_n, train_size, test_size = (40_000, 10_000, 8000, 1000) if not smoke else (1500, 600, 300, 60)
    steps = {} if not smoke else {"steps": 20000}
    common = {"task": "cfq_like", "params": PARAMS}
    configs = {"cfq-random": build("pool", **common, n=random_n, strategy="iid", options={"test_fraction": 0.111}, label="cfq-random")}
    for target in TARGETS if not smoke else (0.6,):
        name = f"cfq-mcd_dc{round(target * 1000):04d}"
        configs[name] = build("pool", **common, n=pool_n, strategy="mcd", label=name, pool_label="cfq-mcd",
                              options={"train_size": train_size, "test_size": test_size, "compound_divergence": target, **steps})
    for k in (1, 2, 3) if not smoke else (1,):
        configs[f"cfq-mcd{k}"] = build("pool", **common, n=pool_n, strategy="mcd", label=f"cfq-mcd{k}", pool_label="cfq-mcd",
                                       options={"train_size": train_size, "test_size": test_size, **steps})
    return configs


def claims(smoke: bool, steps: int = 6000, preset: str = "tiny") -> list[Claim]:
    """The claims at CPU scale, or with the ``steps`` and ``preset`` of the GPU protocol (validity_axes.gpu)."""
    train = {"steps": steps, "eval_every": 250, "eval_examples": 256} if not smoke else {"steps": 10, "eval_every": 5, "eval_examples": 16}
    seeds = (0,)
    arms = tuple(arm(config, config, split, seeds, cost=5, preset=preset, **train) for config, split in _configs(smoke).items())
    maximal = tuple(a for a in arms if a.config == "cfq-random" or a.config[len("cfq-mcd"):].isdigit())
    return [
        Claim("cfq", "cfq:mcd", "A transformer that learned a random CFQ-style split falls far lower on MCD splits", maximal,
              f"OOD exact match on the random split minus the mean over mcd1-3 ≥ {DROP_MIN}", PUBLISHED, mcd_drop, learned=LEARNED, previous=PREVIOUS["cfq:mcd"],
              setup="cfq_like (level 5 grammar); random split of 10,000 records vs three maximum-divergence MCD splits (split seeds 1-3) "
                    "of one 40,000-record pool at 8,000 / 1,000."),
        Claim("cfq", "cfq:divergence", "On CFQ-style splits, OOD exact match falls as compound divergence rises", arms,
              f"Spearman ρ of (D_C, OOD exact match) over the configs ≤ {RHO_MAX} with permutation p ≤ {P_MAX}",
              "Keysers et al. 2020: a surprisingly strong negative correlation between compound divergence and accuracy",
              divergence, learned=LEARNED, previous=PREVIOUS["cfq:divergence"],
              setup="The random split, graded MCD splits at D_C targets 0.45, 0.60, 0.75 and mcd1-3 (maximum)."),
    ]


def _dc(result: Any) -> float:
    return float(result.results[0]["divergence"]["compound_divergence"])


def mcd_drop(figures: Figures) -> Decision:
    random = figures["cfq-random"].ood
    mcd = [f.ood for label, f in figures.items() if label != "cfq-random"]
    mean = None if any(v is None for v in mcd) else sum(mcd) / len(mcd)  # type: ignore[arg-type]
    drop = None if random is None or mean is None else random - mean
    return Decision(drop is not None and drop >= DROP_MIN,
                    f"OOD exact match: random {f3(random)}, mcd1-3 {' / '.join(f3(v) for v in mcd)} (mean {f3(mean)}), drop {f3(drop)}",
                    {"D_C": " / ".join(f"{label} {_dc(f):.3f}" for label, f in figures.items())})


def divergence(figures: Figures) -> Decision:
    points = [(_dc(f), f.ood) for f in figures.values() if f.ood is not None]
    rho = spearman([p[0] for p in points], [p[1] for p in points]) if len(points) >= 3 else None
    p = permutation_p([x for x, _ in points], [y for _, y in points], rho) if rho is not None else None
    holds = rho is not None and rho <= RHO_MAX and p is not None and p <= P_MAX
    series = [{"config": label, "D_C": _dc(f), "OOD exact match": f.ood} for label, f in sorted(figures.items(), key=lambda kv: _dc(kv[1]))]
    return Decision(holds, f"ρ = {f3(rho)} over {len(points)} configs, p = {f3(p)}", {"series": series})
