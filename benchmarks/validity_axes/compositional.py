"""Compositional splits on SCAN (all 20,910 commands): does compound divergence predict OOD
accuracy (Keysers et al. 2020), and are the test records with unseen compounds the hard ones
(Bogin et al. 2022)?

Set-up (fixed before any run): a random split (iid, test fraction 0.2) and graded MCD splits
at 8,365 train-side / 1,045 test records with compound divergence targets 0.15, 0.30, 0.45,
0.60 and the maximum; one split seed per config; a tiny transformer (RoPE) per config and
training seed 0 and 1, trained until learned (ID >= 0.95 at two evaluations, then 25 % more
steps; cap 3,000 steps).
"""

from __future__ import annotations

from typing import Any

from validity_axes.common import PREVIOUS, LEARNED, arm, build, f3, permutation_p, spearman
from validity_engine import Claim, Decision, Figures

TARGETS = (0.15, 0.30, 0.45, 0.60)
RHO_MAX = -0.7  # claim 1: Spearman over the (config, seed) points at or below this ...
P_MAX = 0.01  # ... and its permutation p-value at or below this
MARGIN = 0.05  # claim 2: mean over splits of EM(no unseen compound) - EM(>= 1 unseen), each split positive
MIN_RECORDS = 30  # claim 2: records in each group of a split for it to count
MIN_SPLITS = 3  # claim 2: splits with enough records in both groups


def _configs(smoke: bool) -> dict[str, Any]:
    n_train, n_test = (8365, 1045) if not smoke else (600, 150)
    steps = {} if not smoke else {"steps": 20000}
    configs = {"scan-simple": build("scan", strategy="iid", options={"test_fraction": 0.2}, label="scan-simple")}
    for target in (TARGETS if not smoke else (0.3,)):
        name = f"scan-mcd_dc{round(target * 1000):04d}"
        configs[name] = build("scan", strategy="mcd", options={"train_size": n_train, "test_size": n_test, "compound_divergence": target, **steps}, label=name)
    configs["scan-mcd_max"] = build("scan", strategy="mcd", options={"train_size": n_train, "test_size": n_test, **steps}, label="scan-mcd_max")
    return configs


def claims(smoke: bool) -> list[Claim]:
    seeds = (0, 1) if not smoke else (0,)
    train = {"steps": 3000, "eval_every": 250, "eval_examples": 256} if not smoke else {"steps": 10, "eval_every": 5, "eval_examples": 16}
    arms = tuple(arm(config, config, split, seeds, cost=3 if "mcd" in config else 2, **train) for config, split in _configs(smoke).items())
    mcd = tuple(a for a in arms if "mcd" in a.config)
    return [
        Claim("compositional", "divergence", "OOD exact match falls as compound divergence rises (SCAN: random + graded MCD)", arms,
              f"Spearman ρ of (D_C, OOD exact match) over every (config, seed) point ≤ {RHO_MAX} with permutation p ≤ {P_MAX}",
              "Keysers et al. 2020: strong negative correlation; SCAN random 100 %, MCD mean 1.1 % (CFQ: 98.5 % vs 17.9 %)",
              divergence, learned=LEARNED, previous=PREVIOUS["divergence"],
              setup="All 20,910 SCAN commands; random split (test 0.2) and MCD at 8,365 / 1,045 with D_C targets 0.15-0.60 and the "
                    "maximum; tiny transformer, RoPE, autoregressive; 2 training seeds per config."),
        Claim("compositional", "novelty", "Within each MCD split, test records with an unseen compound are solved less often", mcd,
              f"over the MCD splits with ≥ {MIN_RECORDS} test records in both groups (at least {MIN_SPLITS} such splits), "
              f"EM(0 unseen compounds) - EM(≥ 1) is positive in every one and ≥ {MARGIN} on average (splits weighted equally)",
              "Bogin et al. 2022: unobserved local structures predict instance-level failure",
              novelty, learned=LEARNED, previous=PREVIOUS["novelty"],
              setup="The MCD configs of the claim above; records of both training seeds pooled within each split, never across splits."),
    ]


def _dc(result: Any) -> float:
    return float(result.results[0]["divergence"]["compound_divergence"])


def divergence(figures: Figures) -> Decision:
    points = [(_dc(f), s["ood_exact_match"]) for f in figures.values() for s in (f.learned_seeds or f.seeds)]
    rho = spearman([p[0] for p in points], [p[1] for p in points])
    p = permutation_p([x for x, _ in points], [y for _, y in points], rho) if rho is not None else None
    rows = [{"config": f.arm.config, "D_C": _dc(f), "OOD exact match (mean of learned seeds)": f.ood} for f in figures.values()]
    rows.sort(key=lambda row: row["D_C"])
    holds = rho is not None and rho <= RHO_MAX and p is not None and p <= P_MAX
    return Decision(holds, f"ρ = {f3(rho)} over {len(points)} points, p = {p:.4f}" if p is not None else "ρ = n/a",
                    {"series": rows, "rho": rho, "p": p})


def _buckets(result: Any) -> tuple[list[float], list[float]]:
    """(successes, counts) of the 0-unseen and >= 1-unseen test records, pooled over the learned seeds."""
    hits, counts = [0.0, 0.0], [0, 0]
    for seed in result.learned_seeds or result.seeds:
        for bucket, cell in (seed.get("by_novelty") or {}).get("ood", {}).items():
            group = 0 if bucket == "0" else 1
            hits[group] += cell["exact_match"] * cell["n"]
            counts[group] += cell["n"]
    return hits, counts


def novelty(figures: Figures) -> Decision:
    rows = []
    for f in figures.values():
        hits, counts = _buckets(f)
        zero, some = (hits[0] / counts[0] if counts[0] else None), (hits[1] / counts[1] if counts[1] else None)
        enough = min(counts) >= MIN_RECORDS * max(1, len(f.learned_seeds or f.seeds))
        rows.append({"config": f.arm.config, "EM 0 unseen": zero, "records 0": counts[0], "EM ≥1 unseen": some, "records ≥1": counts[1],
                     "difference": None if zero is None or some is None else zero - some, "counted": enough})
    counted = [r for r in rows if r["counted"]]
    average = sum(r["difference"] for r in counted) / len(counted) if counted else None
    holds = len(counted) >= MIN_SPLITS and all(r["difference"] > 0 for r in counted) and average >= MARGIN
    worst = min((r["difference"] for r in counted), default=None)
    return Decision(holds, f"mean difference {f3(average)} over {len(counted)} splits (smallest {f3(worst)})", {"by split": rows})


def plots(document: dict, runs_dir: Any, out: Any) -> None:
    """The divergence series as a plot beside the page."""
    from pathlib import Path

    from gengap.baselines.plots import plot_divergence

    claim = next((c for c in document["claims"] if c["axis"] == "compositional" and c["key"] == "divergence"), None)
    if claim is None:
        return
    points = [{"config": r["config"], "model": "rope", "preset": "tiny", "compound_divergence": r["D_C"],
               "ood_exact_match": r["OOD exact match (mean of learned seeds)"], "ood_std": 0.0} for r in claim["details"]["series"]]
    plot_divergence(points, Path(out) / "validity-divergence.png", title="SCAN: OOD exact match vs compound divergence")
