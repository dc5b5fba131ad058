"""Ranking stability: do two splits agree on which model is better?

A benchmark that reorders the models it compares when its config, seed or lexicon changes
tells an author little about the models. Over the rows of a gap report
(:func:`gengap.baselines.report.group_runs`), a *model* is what a row's ``model`` and ``preset``
columns name together (architecture, positional encoding, output mode and any setting that
tells setups apart, at one preset), and its score on a config is its OOD (test) exact match,
mean over seeds. Then:

- per config, the rank order of its models, best first; models whose means are equal to
  ``TIE_DECIMALS`` decimals are tied and share a place (written ``a = b``);
- for every pair of configs that score at least two models in common, Kendall's tau-b of the
  two configs' scores over those models (:func:`kendall_tau_b`: +1 same order, -1 reversed,
  ties counted as tau-b counts them; None when a config ties every common model); a pair of
  configs ``X`` and ``X-lexK`` (or ``X-lexJ`` and ``X-lexK``; a sweep of ``params.lexicon``
  names its configs ``X_lex0002``, read alike) are lexicon variants of ``X``, marked as such;
- per config whose models share at least two seeds, the rank order of each seed and tau-b
  between every two seeds (mean and least), so an author sees whether seeds alone reorder them.

The section needs at least two models on at least two configs with two models in common;
otherwise it says which is missing. :func:`ranking` gives the figures (report.json's
``ranking``), :func:`ranking_section` the markdown.
"""

from __future__ import annotations

import math
import re
from itertools import combinations
from typing import Any, Mapping, Sequence

TIE_DECIMALS = 9  # means equal to this many decimals are a tie (exact match is a share of records: finer is float noise)
LEXICON = re.compile(r"^(?P<base>.+)[-_]lex(?P<variant>[0-9]+)$")  # X-lex2, or a sweep's own X_lex0002 (gengap.suite.lexicon_split_name)


def kendall_tau_b(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Kendall's tau-b of paired scores: (concordant - discordant) / sqrt((n0 - ties in xs) x
    (n0 - ties in ys)), n0 = n(n-1)/2 pairs, a pair tied in both sides counted in both tie
    counts; None when fewer than two pairs or a side is constant (the denominator is 0)."""
    if len(xs) != len(ys):
        raise ValueError(f"{len(xs)} xs but {len(ys)} ys")
    concordant = discordant = tied_x = tied_y = 0
    for i, j in combinations(range(len(xs)), 2):
        dx, dy = xs[i] - xs[j], ys[i] - ys[j]
        if dx == 0:
            tied_x += 1
        if dy == 0:
            tied_y += 1
        if dx and dy:
            if (dx > 0) == (dy > 0):
                concordant += 1
            else:
                discordant += 1
    pairs = len(xs) * (len(xs) - 1) // 2
    denominator = math.sqrt((pairs - tied_x) * (pairs - tied_y))
    return None if denominator == 0 else max(-1.0, min(1.0, (concordant - discordant) / denominator))


def lexicon_base(config: str) -> str:
    """The config a lexicon variant ``X-lexK`` or ``X_lexKKKK`` varies (X); a config's own name otherwise."""
    found = LEXICON.match(config)
    return found.group("base") if found else config


def rank_order(scores: Mapping[str, float]) -> list[list[str]]:
    """Models best first, grouped into ties (equal to TIE_DECIMALS decimals); a tie lists its models
    in the order given."""
    tiers: dict[float, list[str]] = {}
    for model, score in scores.items():
        tiers.setdefault(round(score, TIE_DECIMALS), []).append(model)
    return [tiers[score] for score in sorted(tiers, reverse=True)]


def order_text(order: Sequence[Sequence[str]]) -> str:
    """``a > b = c > d``."""
    return " > ".join(" = ".join(tier) for tier in order)


def _model_names(rows: Sequence[Mapping[str, Any]]) -> dict[int, str]:
    """Each row's model: its model column, with its preset when the rows have several presets."""
    presets = {row.get("preset", "") for row in rows}
    return {id(row): f"{row['model']} [{row.get('preset', '')}]" if len(presets) > 1 else str(row["model"]) for row in rows}


def config_scores(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """config -> {model: mean OOD exact match over seeds}, configs and models in row order (rows without one left out)."""
    names = _model_names(rows)
    out: dict[str, dict[str, float]] = {}
    for row in rows:
        mean = (row.get("aggregate") or {}).get("ood_exact_match", {}).get("mean")
        if mean is not None and math.isfinite(mean):
            out.setdefault(str(row["config"]), {})[names[id(row)]] = float(mean)
    return out


def seed_scores(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    """config -> {seed: {model: OOD exact match of that seed}} (rows' ``ood_exact_match_by_seed``)."""
    names = _model_names(rows)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for row in rows:
        for seed, value in (row.get("ood_exact_match_by_seed") or {}).items():
            if value is not None and math.isfinite(value):
                out.setdefault(str(row["config"]), {}).setdefault(str(seed), {})[names[id(row)]] = float(value)
    return out


def _pair(a: str, b: str, first: Mapping[str, float], second: Mapping[str, float]) -> dict[str, Any] | None:
    common = [model for model in first if model in second]
    if len(common) < 2:
        return None
    return {"a": a, "b": b, "models": len(common),
            "tau_b": kendall_tau_b([first[m] for m in common], [second[m] for m in common])}


def _relation(a: str, b: str) -> str:
    base = lexicon_base(a)
    return f"lexicon variants of {base}" if base == lexicon_base(b) and (a != base or b != base) else "configs"


def ranking(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The ranking-stability figures of a report's rows (module doc): ``shown`` (bool), ``reason``
    (why not, when not), ``configs`` ({config: {order, scores}}), ``pairs`` (a, b, relation,
    models, tau_b), ``seeds`` (per config: seeds, models, orders per seed, seed pairs' mean and
    least tau_b)."""
    scores = config_scores(rows)
    models = {model for found in scores.values() for model in found}
    pairs = []
    for a, b in combinations(scores, 2):
        pair = _pair(a, b, scores[a], scores[b])
        if pair is not None:
            pairs.append({**pair, "relation": _relation(a, b)})
    if len(models) < 2 or len(scores) < 2 or not pairs:
        if len(models) < 2:
            why = f"the runs compare {len(models)} model{'' if len(models) == 1 else 's'} (a ranking needs at least 2)"
        elif len(scores) < 2:
            why = f"the runs cover {len(scores)} config{'' if len(scores) == 1 else 's'} (stability needs at least 2)"
        else:
            why = "no two configs score two models in common"
        return {"shown": False, "reason": why}
    configs = {config: {"order": rank_order(found), "scores": found} for config, found in scores.items()}
    return {"shown": True, "configs": configs, "pairs": pairs, "seeds": _seed_stability(seed_scores(rows))}


def _seed_stability(by_seed: Mapping[str, Mapping[str, Mapping[str, float]]]) -> list[dict[str, Any]]:
    out = []
    for config, seeds in by_seed.items():
        taus = [pair["tau_b"] for a, b in combinations(seeds, 2) if (pair := _pair(a, b, seeds[a], seeds[b])) is not None]
        if not taus:
            continue
        known = [t for t in taus if t is not None]
        out.append({
            "config": config,
            "seeds": list(seeds),
            "orders": {seed: rank_order(found) for seed, found in seeds.items()},
            "seed_pairs": len(taus),
            "mean_tau_b": sum(known) / len(known) if known else None,
            "least_tau_b": min(known) if known else None,
        })
    return out


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.3f}"


def ranking_section(figures: Mapping[str, Any]) -> str:
    """The markdown of "Ranking stability" (:func:`ranking`'s figures); when not shown, why."""
    lines = ["## Ranking stability", ""]
    if not figures["shown"]:
        return "\n".join(lines + [f"Not shown: {figures['reason']}. It ranks the models of each config by OOD exact match "
                                  "and compares the orders of every two configs (Kendall's tau-b)."]) + "\n"
    lines += [
        "Models ranked by OOD exact match (mean over seeds) per config, best first (= : equal means); "
        "Kendall's tau-b between two configs over the models both score: +1 the same order, -1 reversed, "
        "n/a when one config ties them all.",
        "",
        "| config | rank order (OOD exact match) |",
        "|---|---|",
    ]
    for config, entry in figures["configs"].items():
        shown = " > ".join(" = ".join(f"{m} ({entry['scores'][m]:.3f})" for m in tier) for tier in entry["order"])
        lines.append(f"| {config} | {shown} |")
    lines += ["", "| config | config | relation | models | Kendall's tau-b |", "|---|---|---|---|---|"]
    for pair in figures["pairs"]:
        lines.append(f"| {pair['a']} | {pair['b']} | {pair['relation']} | {pair['models']} | {_num(pair['tau_b'])} |")
    if figures["seeds"]:
        lines += ["", "Across seeds: each seed's rank order of a config's models, and tau-b between every two seeds.", "",
                  "| config | seeds | seed pairs | mean tau-b | least tau-b |", "|---|---|---|---|---|"]
        for entry in figures["seeds"]:
            lines.append(f"| {entry['config']} | {len(entry['seeds'])} | {entry['seed_pairs']} | {_num(entry['mean_tau_b'])} | "
                         f"{_num(entry['least_tau_b'])} |")
    return "\n".join(lines) + "\n"
