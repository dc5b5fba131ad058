"""Compositional splits on SCAN (all 20,910 commands): does compound divergence predict OOD
accuracy (Keysers et al. 2020), and are the test records with unseen compounds the hard ones
(Bogin et al. 2022)?

Set-up (fixed before any run): a random split (iid, test fraction 0.2) and graded MCD splits
at 8,365 train-side / 1,045 test records with compound divergence targets 0.15, 0.30, 0.45,
0.60 and the maximum; one split seed per config; a tiny transformer (RoPE) per config.

Tenth edition (fixed before its runs; every earlier run is retrained): seeds 0, 1 and 2 for every
config; every run trains all 3,000 steps (in the ninth edition the seeds learned at 1,750-2,500);
the scored checkpoint is the one validation selected, learned when its ID (exact match per length
weighted by train's length shares, on the whole validation part) is >= 0.95. Rules read intervals
over seeds (95 %, percentile bootstrap). New: ``drop`` (random vs the maximum-divergence MCD split),
``mcd_max:gap`` (the quick tier's re-check: the maximum-divergence split's gap) and the negative control ``random:no_gap`` (on the random split, where
train and test share one distribution, ID and OOD agree). ``novelty``'s premise (at least 3 MCD
splits with 30 test records in both groups) is decided from the splits before training: in the
ninth edition only 2 splits had records without an unseen compound.
"""

from __future__ import annotations

from typing import Any, Mapping

from validity_axes.common import LEVEL, PREVIOUS, SELECTED, SMOKE_SEEDS, SEEDS, arm, build, compare, f3, paired, permutation_p, spearman
from validity_engine import Claim, Decision, Figures, Premise
from validity_stats import at_least, at_most, bootstrap, mean, within

TARGETS = (0.15, 0.30, 0.45, 0.60)
RHO_MAX = -0.7  # divergence: the interval of Spearman's rho over the (config, seed) points at or below this ...
P_MAX = 0.01  # ... and its permutation p-value at or below this
MAX_GAP = 0.5  # mcd_max:gap: ID - OOD exact match on the maximum-divergence split
DROP_MIN = 0.3  # drop: OOD exact match on the random split minus on the maximum-divergence split
NO_GAP = 0.05  # random:no_gap: ID exact match minus OOD exact match on the random split, within +-this
MARGIN = 0.05  # novelty: mean over splits of EM(no unseen compound) - EM(>= 1 unseen), each split positive
MIN_RECORDS = 30  # novelty: test records in each group of a split for it to count
MIN_SPLITS = 3  # novelty: splits with enough records in both groups


def _configs(smoke: bool) -> dict[str, Any]:
    n_train, n_test = (8365, 1045) if not smoke else (600, 150)
    steps = {} if not smoke else {"steps": 20000}
    configs = {"scan-simple": build("scan", strategy="iid", options={"test_fraction": 0.2}, label="scan-simple")}
    for target in (TARGETS if not smoke else (0.3,)):
        name = f"scan-mcd_dc{round(target * 1000):04d}"
        configs[name] = build("scan", strategy="mcd", options={"train_size": n_train, "test_size": n_test, "compound_divergence": target, **steps}, label=name)
    configs["scan-mcd_max"] = build("scan", strategy="mcd", options={"train_size": n_train, "test_size": n_test, **steps}, label="scan-mcd_max")
    return configs


def novelty_facts(splits: Mapping[str, Any]) -> dict[str, Any]:
    """Per MCD split: test records with no unseen compound and with at least one (the split's novelty)."""
    out = {}
    for label, result in splits.items():
        counts = [0, 0]
        for record in result.test:
            counts[0 if (record.get("novelty") or {}).get("unseen_compounds", 0) == 0 else 1] += 1
        out[label] = {"0 unseen": counts[0], "≥ 1 unseen": counts[1]}
    return out


def novelty_unmet(facts: Mapping[str, Any]) -> tuple[str, ...]:
    enough = [label for label, c in facts.items() if min(c.values()) >= MIN_RECORDS]
    if len(enough) >= MIN_SPLITS:
        return ()
    return (f"{len(enough)} of {len(facts)} MCD splits hold ≥ {MIN_RECORDS} test records in both groups ({', '.join(enough) or 'none'}); "
            f"the rule needs {MIN_SPLITS}",)


def claims(smoke: bool) -> list[Claim]:
    seeds = SEEDS if not smoke else SMOKE_SEEDS
    train = {"steps": 3000, "eval_every": 250, "eval_examples": 256} if not smoke else {"steps": 10, "eval_every": 5, "eval_examples": 16}
    arms = tuple(arm(config, config, split, seeds, cost=3 if "mcd" in config else 2, **train) for config, split in _configs(smoke).items())
    by_label = {a.label: a for a in arms}
    mcd = tuple(a for a in arms if "mcd" in a.config)
    extremes = (by_label["scan-simple"], by_label["scan-mcd_max"])
    return [
        Claim("compositional", "divergence", "OOD exact match falls as compound divergence rises (SCAN: random + graded MCD)", arms,
              f"Spearman ρ of (D_C, OOD exact match) over the (config, learned seed) points: its {LEVEL:.0%} interval ≤ {RHO_MAX}, and "
              f"permutation p ≤ {P_MAX}",
              "Keysers et al. 2020: strong negative correlation; SCAN random 100 %, MCD mean 1.1 % (CFQ: 98.5 % vs 17.9 %)",
              divergence, learned=SELECTED, previous=PREVIOUS["divergence"], level=LEVEL,
              setup="All 20,910 SCAN commands; random split (test 0.2) and MCD at 8,365 / 1,045 with D_C targets 0.15-0.60 and the "
                    "maximum; tiny transformer, RoPE, autoregressive; seeds 0-2 per config, 3,000 steps each."),
        Claim("compositional", "drop", "The maximum-divergence MCD split is far harder than the random split", extremes,
              f"OOD exact match on the random split minus on scan-mcd_max: its {LEVEL:.0%} interval ≥ {DROP_MIN}",
              "Keysers et al. 2020: SCAN random 100 %, MCD mean 1.1 %",
              drop, learned=SELECTED, level=LEVEL,
              setup="The random and the maximum-divergence configs of the claim above (their runs)."),
        Claim("compositional", "random:no_gap", "On the random split, where train and test share one distribution, ID and OOD agree",
              (by_label["scan-simple"],),
              f"ID exact match (over validation records) minus OOD exact match, per seed: its {LEVEL:.0%} interval within ±{NO_GAP}",
              "Keysers et al. 2020: a random split measures in-distribution accuracy (SCAN random 100 %)",
              no_gap, learned=SELECTED, level=LEVEL, role="negative control",
              setup="scan-simple of the claims above (its runs): the drop the other claims read must be absent here."),
        Claim("compositional", "mcd_max:gap", "A transformer that learned the maximum-divergence MCD split fails on its test part",
              (by_label["scan-mcd_max"],),
              f"ID (the scored checkpoint's) minus OOD exact match on scan-mcd_max, per seed: its {LEVEL:.0%} interval ≥ {MAX_GAP}",
              "Keysers et al. 2020: SCAN MCD mean 1.1 % exact match", max_gap, learned=SELECTED, level=LEVEL, tiers=("quick", "full"),
              setup="scan-mcd_max of the claims above (its runs): the quick tier's re-check of this axis."),
        Claim("compositional", "novelty", "Within each MCD split, test records with an unseen compound are solved less often", mcd,
              f"over the MCD splits with ≥ {MIN_RECORDS} test records in both groups (at least {MIN_SPLITS} such splits), "
              f"EM(0 unseen compounds) - EM(≥ 1) is positive in every one and ≥ {MARGIN} on average (splits weighted equally)",
              "Bogin et al. 2022: unobserved local structures predict instance-level failure",
              novelty, learned=SELECTED, previous=PREVIOUS["novelty"], level=LEVEL,
              premise=Premise(f"at least {MIN_SPLITS} MCD splits with ≥ {MIN_RECORDS} test records with no unseen compound and with at least one",
                              novelty_facts, novelty_unmet),
              setup="The MCD configs of the claim above; records of the learned seeds pooled within each split, never across splits."),
    ]


def _dc(result: Any) -> float:
    return float(result.results[0]["divergence"]["compound_divergence"])


def divergence(figures: Figures) -> Decision:
    dcs = {label: _dc(f) for label, f in figures.items()}
    groups = {label: f.values("ood_exact_match") for label, f in figures.items()}

    def rho(values: Mapping[str, Any]) -> float | None:
        points = [(dcs[label], v) for label, vs in values.items() for v in vs]
        return spearman([p[0] for p in points], [p[1] for p in points])

    interval = bootstrap(groups, rho, LEVEL)
    points = [(dcs[label], v) for label, vs in groups.items() for v in vs]
    p = permutation_p([x for x, _ in points], [y for _, y in points], interval.value) if interval.value is not None else None
    rows = [{"config": f.arm.config, "D_C": dcs[label], "OOD exact match (mean of learned seeds)": mean(groups[label])} for label, f in figures.items()]
    rows.sort(key=lambda row: row["D_C"])
    holds = at_most(interval, RHO_MAX) and p is not None and p <= P_MAX
    return Decision(holds, f"ρ = {interval.text()} over {len(points)} points, p = {p:.4f}" if p is not None else "ρ = n/a",
                    {"series": rows, "rho": interval.value, "p": p})


def drop(figures: Figures) -> Decision:
    interval, random, hardest = compare(figures, "ood_exact_match", "scan-simple", "scan-mcd_max")
    return Decision(at_least(interval, DROP_MIN), f"OOD exact match: random {f3(random)}, mcd_max {f3(hardest)}, drop {interval.text()}")


def max_gap(figures: Figures) -> Decision:
    (label,) = figures
    gaps = paired(figures, label, label, lambda s: s.get("selected_id"), "ood_exact_match")
    interval = bootstrap({"gap": gaps}, lambda g: mean(g["gap"]), LEVEL)
    return Decision(at_least(interval, MAX_GAP), f"ID {f3(figures[label].id)}, OOD {f3(figures[label].ood)}, gap {interval.text()}")


def no_gap(figures: Figures) -> Decision:
    (label,) = figures
    gaps = paired(figures, label, label, "id_exact_match", "ood_exact_match")
    interval = bootstrap({"gap": gaps}, lambda g: mean(g["gap"]), LEVEL)
    return Decision(within(interval, NO_GAP), f"ID - OOD exact match {interval.text()}")


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
    if claim is None or not claim["details"].get("series"):
        return
    points = [{"config": r["config"], "model": "rope", "preset": "tiny", "compound_divergence": r["D_C"],
               "ood_exact_match": r["OOD exact match (mean of learned seeds)"], "ood_std": 0.0} for r in claim["details"]["series"]]
    plot_divergence(points, Path(out) / "validity-divergence.png", title="SCAN: OOD exact match vs compound divergence")
