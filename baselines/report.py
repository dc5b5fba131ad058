"""Gap reports over baseline runs: a markdown table per config x positional encoding, and plots.

Runs are read from their ``results.json``; runs of the same config and training setup
(:mod:`gengap.baselines.setup`: model, preset, steps, stream or curriculum, optimizer, label noise,
data, ...) are pooled, so seeds trained in separate run directories (e.g. in parallel) are
aggregated together, and runs of different setups never are; a seed that two runs of one
setup hold is reported (:func:`duplicate_warnings`). Figures are mean ± sample standard deviation over
seeds. A row's ``model`` names what was trained: the positional encoding for a transformer
(``rope``), the architecture otherwise (``lstm``), with its encoding for the looped model
(``looped-rope``). The table also gives the length score of Deletang et al. (per-token
accuracy averaged over OOD input lengths, best seed), ID exact match averaged over input
lengths and, for runs trained with ``--until-id``, how many seeds met it. Each row has a
verdict, ``learned`` (:mod:`gengap.baselines.learned`): False ("not learned", marked beside
the gap) when some seed trained with ``--until-id`` never met it, or, trained without one,
ended with ID exact match averaged over input lengths below ``learned`` (``gengap report
--learned EM``, default 0.95): a model that never fit its train distribution measures no
generalization gap. A pretrained model's evaluation has no verdict (None: it was not trained
here). With ``--out FILE.md`` the rows also go to FILE.json (:func:`rows_json`).

Besides the table (with each config's compound divergence D_C when its runs recorded it) and
the plot of exact match by input length, a report has:

- "OOD exact match vs compound divergence" when the runs cover at least ``MIN_CONFIGS``
  configs with a known D_C: per (positional encoding, preset) the Spearman rank correlation
  of D_C with mean OOD exact match over the configs (:func:`spearman`,
  :func:`divergence_points`, :func:`divergence_correlations`) and a scatter plot;
- "OOD exact match by novelty" when any run has novelty buckets: mean OOD exact match per
  bucket of unseen compounds per config (:func:`novelty_points`, :func:`novelty_table`) and
  a plot;
- "Ranking stability" (:mod:`gengap.baselines.ranking`): the rank order of the models per
  config by OOD exact match and Kendall's tau-b between every two configs (lexicon variants
  ``X-lexK`` marked), and between the seeds of a config, when the runs cover at least two
  models on two configs; otherwise a line saying what is missing. FILE.json holds its
  figures under ``ranking``.

The pieces are plain functions over the rows of :func:`group_runs`, for benchmark scripts.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from gengap.baselines.data import DIVERGENCE_KEYS, divergence_of
from gengap.baselines.dynamics import dynamics_rows, dynamics_section, has_fractions, has_grid, read_history, with_curves
from gengap.baselines.errors import BaselineError
from gengap.baselines.learned import LEARNED, seed_learned
from gengap.baselines.metrics import NOVELTY_BUCKETS, aggregate
from gengap.baselines.run_files import strict_json
from gengap.baselines.plots import Opener
from gengap.baselines.ranking import ranking, ranking_section
from gengap.baselines.setup import SETUP_FIELDS, Setup, describe, differences, setup_of
from gengap.generators.safe_files import atomic_file
from gengap.generators.reading import ReadError, read_json

POS_ORDER = ("learned", "sinusoidal", "rope", "alibi", "nope", "randomized", "fire", "abacus")
ARCH_ORDER = ("transformer", "rnn", "lstm", "stack_rnn", "tape_rnn", "looped")


def model_label(arch: str, pos: str) -> str:
    """What a report calls a model: the encoding of a transformer, else the architecture (looped: with its encoding)."""
    if arch == "transformer":
        return pos
    return f"{arch}-{pos}" if arch == "looped" else arch
MIN_CONFIGS = 3  # configs with a known compound divergence needed for the correlation section


def find_runs(paths: Iterable[str | Path]) -> list[Path]:
    """The results.json files of run directories, or of every run below a directory."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_file() and path.name == "results.json":
            found.append(path)
        elif (path / "results.json").is_file():
            found.append(path / "results.json")
        elif path.is_dir():
            below = sorted(path.glob("**/results.json"))
            if not below:
                raise BaselineError(f"no results.json in {path} or below it")
            found.extend(below)
        else:
            raise BaselineError(f"{path} is not a run directory")
    unique = list(dict.fromkeys(p.resolve() for p in found))
    if not unique:
        raise BaselineError("no runs given")
    return unique


def load_results(path: Path) -> dict[str, Any]:
    try:
        results = read_json(path)
    except ReadError as err:
        raise BaselineError(f"cannot read {err}") from None
    if not isinstance(results, dict) or "per_seed" not in results or "config" not in results:
        raise BaselineError(f"{path} is not a baseline results file")
    problem = results_problem(results)
    if problem is not None:
        raise BaselineError(f"{path} is not a baseline results file: {problem}")
    return results


def results_problem(results: Mapping[str, Any]) -> str | None:
    """Why a results.json object cannot be reported on (None: it can): the fields the report
    reads must have their types (``per_seed`` a list of objects, each with an integer seed and
    numeric exact matches; ``config`` and ``pos`` strings; ``settings`` and ``data`` objects)."""
    if not isinstance(results.get("config"), str) or not isinstance(results.get("pos", ""), str):
        return "config and pos must be strings"
    for key in ("settings", "data", "divergence"):
        if results.get(key) is not None and not isinstance(results[key], dict):
            return f"{key} must be an object"
    seeds = results.get("per_seed")
    if not isinstance(seeds, list):
        return "per_seed must be a list of seeds"
    for index, seed in enumerate(seeds):
        if not isinstance(seed, dict) or isinstance(seed.get("seed"), bool) or not isinstance(seed.get("seed"), int):
            return f"per_seed[{index}] must be an object with an integer seed"
        for key, value in seed.items():
            if key.endswith(("exact_match", "token_accuracy", "_score")) and value is not None and (
                    isinstance(value, bool) or not isinstance(value, (int, float))):
                return f"per_seed[{index}].{key} must be a number"
    return None


def group_runs(runs: Sequence[Mapping[str, Any]], sources: Sequence[str | Path] | None = None, learned: float = LEARNED) -> list[dict[str, Any]]:
    """Pool runs by their whole setup (:func:`gengap.baselines.setup.setup_of`: config, model, preset, steps,
    stream and curriculum, optimizer, label noise, data, ...), so that only seeds of one training
    setup are aggregated; per group the seeds' aggregate, the train length range, the divergence
    figures (``atom_divergence``, ``compound_divergence``, ``compounds``: None when no run of the
    group recorded them; a later run's known value wins) and, from the aggregate, ``by_novelty``
    with ``novelty_records`` (records per side and bucket).

    Groups of one config, model and preset that differ in setup get the differing settings in their
    ``model`` label (``rope (stream=none)`` and ``rope (stream="addition")``) and in ``setup``.
    A seed given twice with one setup: the later run counts, and the row's ``duplicates`` lists
    (seed, [sources]) with sources (default: the runs' positions) naming the runs. ``learned``
    and ``unlearned_seeds``: the row's verdict (:func:`verdict`, threshold ``learned``).
    """
    names = [str(s) for s in sources] if sources is not None else [f"run {i + 1}" for i in range(len(runs))]
    groups: dict[tuple[str, Setup], dict[str, Any]] = {}
    for results, source in zip(runs, names):
        setup = setup_of(results)
        key = (results["config"], setup)
        group = groups.setdefault(key, {
            "config": key[0], "arch": results.get("arch", "transformer"), "pos": results["pos"], "preset": results.get("preset", ""),
            "per_seed": {}, "sources": {}, "steps": set(), "train_range": None, "divergence": divergence_of(None), "until_id": results.get("until_id"),
            "until_over": (results.get("settings") or {}).get("until_over") or "lengths",
            "pretrained": results.get("kind") == "pretrained",
        })
        for seed in results["per_seed"]:
            group["per_seed"][seed["seed"]] = seed  # the same seed twice: the later run counts
            group["sources"].setdefault(seed["seed"], []).append(source)
        for name, value in divergence_of(results.get("divergence")).items():
            if value is not None:
                group["divergence"][name] = value
        group["steps"].add(results.get("steps"))
        train = results.get("data", {}).get("input_length", {}).get("train")
        if train:
            old = group["train_range"]
            group["train_range"] = train if old is None else [min(old[0], train[0]), max(old[1], train[1])]
    labels = _setup_labels(groups)
    order = {name: i for i, name in enumerate(POS_ORDER)}
    arch_order = {name: i for i, name in enumerate(ARCH_ORDER)}
    configs = list(dict.fromkeys(k[0] for k in groups))
    rows = []
    for key in sorted(groups, key=lambda k: (configs.index(k[0]), arch_order.get(groups[k]["arch"], 99), order.get(groups[k]["pos"], 99),
                                             groups[k]["preset"], labels[k])):
        group = groups[key]
        seeds = [group["per_seed"][s] for s in sorted(group["per_seed"])]
        summary = aggregate(seeds)
        label = model_label(group["arch"], group["pos"])
        unlearned = [] if group["pretrained"] else [s["seed"] for s in seeds if seed_learned(s, learned) is False]
        rows.append({
            "config": group["config"],
            "arch": group["arch"],
            "pos": group["pos"],
            "model": _with_setup(label, labels[key]),
            "setup": labels[key],
            "preset": group["preset"],
            "until_id": group["until_id"],
            "until_over": group["until_over"],
            "learned": verdict(seeds, learned) if not group["pretrained"] else None,
            "unlearned_seeds": unlearned,
            "steps": sorted(s for s in group["steps"] if s is not None),
            "seeds": sorted(group["per_seed"]),
            "duplicates": [(seed, runs_of) for seed, runs_of in sorted(group["sources"].items()) if len(runs_of) > 1],
            "aggregate": summary,
            "by_length": summary["by_length"],
            "train_range": group["train_range"],
            **{name: group["divergence"][name] for name in DIVERGENCE_KEYS},
            "by_novelty": summary["by_novelty"],
            "by_task": summary["by_task"],
            "ood_exact_match_by_seed": {str(s["seed"]): s["ood_exact_match"] for s in seeds},
            "novelty_records": _novelty_records(seeds),
        })
    return rows


def _with_setup(label: str, setup: str) -> str:
    return f"{label} ({setup})" if setup else label


def run_models(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """Per run, the ``model`` of its row in :func:`group_runs` (with the settings that tell its setup
    from the other setups of its config, model and preset), for tables of runs or seeds."""
    keys = [(results["config"], setup_of(results)) for results in runs]
    groups = {key: {"arch": results.get("arch", "transformer"), "pos": results["pos"], "preset": results.get("preset", "")}
              for key, results in zip(keys, runs)}
    labels = _setup_labels(groups)
    return [_with_setup(model_label(groups[key]["arch"], groups[key]["pos"]), labels[key]) for key in keys]


def _setup_labels(groups: Mapping[tuple[str, Setup], Mapping[str, Any]]) -> dict[tuple[str, Setup], str]:
    """Per group the settings that tell it from other groups of its config, model and preset
    (for every group of that model and preset, so that its configs stay comparable); "" when none do."""
    def model_of(key: tuple[str, Setup]) -> tuple[str, str, str]:
        return groups[key]["arch"], groups[key]["pos"], groups[key]["preset"]

    same: dict[tuple[str, str, str, str], list[Setup]] = {}
    for key in groups:
        same.setdefault((key[0], *model_of(key)), []).append(key[1])
    varying: dict[tuple[str, str, str], list[str]] = {}
    for (_, *model), setups in same.items():
        known = varying.setdefault(tuple(model), [])
        known += [name for name in differences(setups) if name not in known]
    return {key: describe(key[1], [n for n in SETUP_FIELDS if n in varying[model_of(key)]]) for key in groups}


def duplicate_warnings(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per seed that more than one run of a row's setup holds (the later run counts)."""
    return [
        f"{row['config']} {row['model']} {row['preset']}: seed {seed} is in {len(runs_of)} runs of the same setup "
        f"({', '.join(runs_of)}); the report counts the last one"
        for row in rows for seed, runs_of in row.get("duplicates", ())
    ]


def _novelty_records(seeds: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Records per side and novelty bucket (the largest count over the seeds: seeds evaluate the same records)."""
    out: dict[str, dict[str, int]] = {}
    for side in ("id", "ood"):
        counts: dict[str, int] = {}
        for seed in seeds:
            for bucket, figures in ((seed.get("by_novelty") or {}).get(side) or {}).items():
                counts[bucket] = max(counts.get(bucket, 0), int(figures.get("n") or 0))
        out[side] = {b: counts[b] for b in NOVELTY_BUCKETS if b in counts}
    return out


def _pm(figures: Mapping[str, Any]) -> str:
    if figures.get("mean") is None:
        return "n/a"
    return f"{figures['mean']:.3f} ± {figures['std']:.3f}"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


NOT_LEARNED = "†"
REPORT_FORMAT = "gengap-baseline-report/1"  # FILE.json beside a report FILE.md


def verdict(seeds: Sequence[Mapping[str, Any]], threshold: float = LEARNED) -> bool | None:
    """A row's verdict: False when some seed did not learn (:func:`gengap.baselines.learned.seed_learned`),
    True when every seed did, None when no seed says (no ID figures)."""
    verdicts = [seed_learned(seed, threshold) for seed in seeds]
    if any(v is False for v in verdicts):
        return False
    return True if verdicts and all(verdicts) else None


def not_learned(row: Mapping[str, Any]) -> bool:
    """Whether a row's verdict is "not learned" (its gap measures nothing)."""
    return row.get("learned") is False


def markdown(rows: Sequence[Mapping[str, Any]], learned: float = LEARNED) -> str:
    """The report table (one row per config x model x preset); D_C = compound divergence, n/a when unknown;
    length score = per-token accuracy averaged over OOD input lengths, best seed (Deletang et al.);
    ID by length = ID exact match averaged over input lengths; † beside the gap: not learned
    (the footnote names ``learned``, the threshold the rows were judged by)."""
    lines = [
        "| config | model | preset | steps | seeds | ID exact match | ID by length | OOD exact match | gap (ID - OOD) | OOD token acc. | "
        "length score (best seed) | OOD solved (>= 0.95) | met --until-id | D_C |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        a = row["aggregate"]
        n = len(row["seeds"])
        solved = round(a["ood_solved_fraction"] * n) if a["ood_solved_fraction"] is not None else 0
        steps = ",".join(str(s) for s in row["steps"]) or "?"
        met = a.get("converged") or {}
        over = " over records" if row.get("until_over") == "records" else ""
        until = f"{met['met']}/{met['checked']} (ID{over} ≥ {row['until_id']})" if met.get("checked") else "–"
        gap = _pm(a["gap"]) + (f" {NOT_LEARNED}" if not_learned(row) else "")
        lines.append(
            f"| {row['config']} | {row['model']} | {row['preset']} | {steps} | {n} | {_pm(a['id_exact_match'])} | "
            f"{_pm(a.get('id_length_mean_exact_match') or {})} | {_pm(a['ood_exact_match'])} | {gap} | {_pm(a['ood_token_accuracy'])} | "
            f"{_num((a.get('ood_length_score') or {}).get('max'))} | {solved}/{n} | {until} | {_num(row.get('compound_divergence'))} |"
        )
    if any(not_learned(row) for row in rows):
        lines += ["", f"{NOT_LEARNED} not learned: the model never fit its train distribution, so its gap measures nothing "
                  f"(a seed trained with --until-id never met it, or, trained without it, ended with ID exact match averaged "
                  f"over input lengths below {learned:g}: gengap report --learned EM)."]
    return "\n".join(lines) + "\n"


def rows_json(rows: Sequence[Mapping[str, Any]], learned: float = LEARNED, stability: Mapping[str, Any] | None = None) -> str:
    """The report's rows as JSON (``format`` gengap-baseline-report/1, the ``learned`` threshold,
    ``rows``: every row of :func:`group_runs`, with its ``learned`` verdict; ``ranking``: the
    ranking-stability figures, when given), NaN written as null."""
    body: dict[str, Any] = {"format": REPORT_FORMAT, "learned": learned, "rows": list(rows)}
    if stability is not None:
        body["ranking"] = stability
    return strict_json(body, indent=1) + "\n"


def iterations_section(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """Looped models evaluated at several iteration counts (None when no row has them)."""
    looped = [row for row in rows if len(row["aggregate"].get("by_iterations") or {}) > 0]
    if not looped:
        return None
    lines = [
        "## Looped models by test iterations",
        "",
        "The same trained model decoded with each iteration count (the first listed gives the headline figures above).",
        "",
        "| config | model | preset | iterations | ID exact match | OOD exact match | OOD length score |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in looped:
        for count, figures in row["aggregate"]["by_iterations"].items():
            lines.append(f"| {row['config']} | {row['model']} | {row['preset']} | {count} | {_pm(figures['id_exact_match'])} | "
                         f"{_pm(figures['ood_exact_match'])} | {_pm(figures['ood_length_score'])} |")
    return "\n".join(lines) + "\n"


def _figure_table(rows: Sequence[Mapping[str, Any]], title: str, note: str, columns: Sequence[tuple[str, str]]) -> str | None:
    """A section of one row per config that has every aggregate figure named in ``columns``
    ((header, aggregate key) pairs, in order); None when no config has them."""
    chosen = [row for row in rows if all(key in row["aggregate"] for _, key in columns)]
    if not chosen:
        return None
    lines = [f"## {title}", "", note, "", "| config | model | preset | " + " | ".join(h for h, _ in columns) + " |",
             "|---|---|---|" + "---|" * len(columns)]
    for row in chosen:
        figures = " | ".join(_pm(row["aggregate"][key]) for _, key in columns)
        lines.append(f"| {row['config']} | {row['model']} | {row['preset']} | {figures} |")
    return "\n".join(lines) + "\n"


def trace_section(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """Answer and trace exact match of the configs trained on traced targets (None when none is)."""
    return _figure_table(
        rows, "Answer vs trace (traced targets)",
        "Exact match above compares the whole target (trace => answer); here the answer after `=>` and the trace before it apart.",
        [(f"{side.upper()} {part} EM", f"{side}_{part}_exact_match") for part in ("answer", "trace") for side in ("id", "ood")])


def execution_section(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """Execution accuracy beside exact match for the configs whose task executes its answers
    (cfq_like, scored by ``gengap eval``); None when no run has it."""
    return _figure_table(
        rows, "Execution accuracy (answers run on each record's knowledge base)",
        "Exact match compares the query in normal form; execution accuracy runs it and compares the answers.",
        [(f"{side.upper()} {label}", f"{side}_{name}") for side in ("id", "ood")
         for label, name in (("exact match", "exact_match"), ("execution", "execution_accuracy"))])


# -- OOD exact match vs compound divergence ------------------------------------------------


def ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks of values; tied values share the average of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for i in order[start : end + 1]:
            out[i] = (start + end) / 2 + 1
        start = end + 1
    return out


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Spearman rank correlation: the Pearson correlation of the average ranks (ties averaged).

    None with fewer than two pairs or when either side is constant (the correlation is undefined).
    """
    if len(xs) != len(ys):
        raise ValueError(f"{len(xs)} xs but {len(ys)} ys")
    if len(xs) < 2:
        return None
    rx, ry = ranks([float(x) for x in xs]), ranks([float(y) for y in ys])
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))


def divergence_points(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One point per row with a known compound divergence and OOD exact match.

    Each: config, model, preset, compound_divergence, atom_divergence, compounds,
    ood_exact_match (mean over seeds), ood_std, seeds.
    """
    points = []
    for row in rows:
        ood = row["aggregate"]["ood_exact_match"]
        if row.get("compound_divergence") is None or ood.get("mean") is None:
            continue
        points.append({
            "config": row["config"], "model": row["model"], "preset": row["preset"],
            "compound_divergence": float(row["compound_divergence"]),
            "atom_divergence": row.get("atom_divergence"),
            "compounds": row.get("compounds"),
            "ood_exact_match": float(ood["mean"]), "ood_std": float(ood["std"] or 0.0), "seeds": len(row["seeds"]),
        })
    return points


def divergence_correlations(points: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per (model, preset) series of divergence points: configs, n and spearman(D_C, OOD exact match) (None under MIN_CONFIGS points)."""
    series: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for point in points:
        series.setdefault((point["model"], point["preset"]), []).append(point)
    out = []
    for (model, preset), group in series.items():
        rho = spearman([p["compound_divergence"] for p in group], [p["ood_exact_match"] for p in group]) if len(group) >= MIN_CONFIGS else None
        out.append({"model": model, "preset": preset, "configs": [p["config"] for p in group], "n": len(group), "spearman": rho})
    return out


def divergence_section(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """The markdown of "OOD exact match vs compound divergence", or None under MIN_CONFIGS configs with a known D_C."""
    points = divergence_points(rows)
    if len({p["config"] for p in points}) < MIN_CONFIGS:
        return None
    lines = [
        "## OOD exact match vs compound divergence",
        "",
        "Spearman rank correlation (ties averaged) of each config's compound divergence D_C (train vs test) "
        "with its mean OOD exact match, over the configs of one model and preset; "
        "a negative value means OOD exact match falls as D_C rises.",
        "",
    ]
    kinds = sorted({str(p["compounds"]) for p in points if p["compounds"] is not None})
    if len(kinds) > 1:
        lines += [f"Warning: the configs measure compounds differently ({'; '.join(kinds)}); their D_C are not on one scale.", ""]
    lines += ["| model | preset | configs | Spearman ρ |", "|---|---|---|---|"]
    for c in divergence_correlations(points):
        lines.append(f"| {c['model']} | {c['preset']} | {c['n']} | {_num(c['spearman'])} |")
    return "\n".join(lines) + "\n"


# -- OOD exact match by novelty ------------------------------------------------------------


def novelty_points(rows: Sequence[Mapping[str, Any]], side: str = "ood") -> list[dict[str, Any]]:
    """Per row with novelty buckets on side: config, model, preset and buckets {bucket: {mean, std, seeds, records}} in bucket order."""
    out = []
    for row in rows:
        cells = (row.get("by_novelty") or {}).get(side) or {}
        if not cells:
            continue
        records = (row.get("novelty_records") or {}).get(side) or {}
        buckets = {
            b: {"mean": cells[b]["mean"], "std": cells[b]["std"], "seeds": cells[b]["n"], "records": records.get(b)}
            for b in NOVELTY_BUCKETS if b in cells
        }
        out.append({"config": row["config"], "model": row["model"], "preset": row["preset"], "buckets": buckets})
    return out


def novelty_table(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """The markdown of "OOD exact match by novelty" (one line per config x model x preset), or None when no run has novelty buckets."""
    points = novelty_points(rows)
    if not points:
        return None
    lines = [
        "## OOD exact match by novelty",
        "",
        "OOD (test) exact match by how many of a record's compounds never occur in train "
        "(novelty.unseen_compounds); mean ± standard deviation over seeds, records per bucket in brackets.",
        "",
        "| config | model | preset | " + " | ".join(f"{b} unseen" for b in NOVELTY_BUCKETS) + " |",
        "|---|---|---|" + "---|" * len(NOVELTY_BUCKETS),
    ]
    for point in points:
        cells = []
        for bucket in NOVELTY_BUCKETS:
            cell = point["buckets"].get(bucket)
            if cell is None:
                cells.append("–")
                continue
            count = f" ({cell['records']})" if cell["records"] is not None else ""
            cells.append(_pm(cell) + count)
        lines.append(f"| {point['config']} | {point['model']} | {point['preset']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


# -- exact match by task (multi-task configs) ------------------------------------------------


def task_table(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """The markdown of "Exact match by task" (one line per config x model x preset x task) for the
    rows whose records come from several tasks (multi-task configs), or None when there are none."""
    lines = []
    for row in rows:
        by_task = row.get("by_task") or {}
        names = list(dict.fromkeys(name for side in ("id", "ood") for name in by_task.get(side) or {}))
        if len(names) < 2:
            continue
        for name in names:
            cells = [_pm((by_task.get(side) or {}).get(name) or {}) if name in (by_task.get(side) or {}) else "–" for side in ("id", "ood")]
            lines.append(f"| {row['config']} | {row['model']} | {row['preset']} | {name} | " + " | ".join(cells) + " |")
    if not lines:
        return None
    head = [
        "## Exact match by task",
        "",
        "Configs that pool several tasks: exact match per task, mean ± standard deviation over seeds; "
        "– where the task has no records on that side (a task held out for test has none in ID).",
        "",
        "| config | model | preset | task | ID | OOD |",
        "|---|---|---|---|---|---|",
    ]
    return "\n".join(head + lines) + "\n"


# -- the report ----------------------------------------------------------------------------


PLOT_SUFFIXES = ("divergence", "novelty", "dynamics", "delay", "grid")  # FILE-<suffix>.png beside FILE.png


def report_paths(out: str | Path) -> list[Path]:
    """Every file a report written to out may write: out itself, FILE.png and FILE-<plot>.png for
    the divergence, novelty, dynamics (grokking curves), delay and grid plots, and FILE.json (the
    rows) (FILE: out without its suffix)."""
    target = Path(out)
    if target.name in ("", ".", "..") or str(out).endswith(("/", os.sep)):
        raise BaselineError(f"the report --out {str(out)!r} names a directory, not a file: give a file name ending in .md")
    paths = [target, target.with_suffix(".png"), *(target.with_name(f"{target.stem}-{name}.png") for name in PLOT_SUFFIXES),
             target.with_suffix(".json")]
    if len(set(paths)) < len(paths):
        raise BaselineError(f"the report {target} would overwrite its own plots or rows: give --out a name ending in .md")
    return paths


def make_report(paths: Iterable[str | Path], out: str | Path | None = None, opener: Opener | None = None,
                learned: float = LEARNED) -> dict[str, Any]:
    """{"text", "rows", "rows_file", "plots", "warnings", "ranking"}: with out, writes out (markdown), its plots and
    FILE.json (the rows and the ranking figures, :func:`rows_json`) next to it; rows are judged learned or not at
    threshold ``learned``.

    warnings: one line per seed held by more than one run of one setup (:func:`duplicate_warnings`).

    plots maps "length" (FILE.png), "divergence" (FILE-divergence.png) and "novelty"
    (FILE-novelty.png) to the paths written; a plot is absent when its section is, or when
    matplotlib is not installed. Every file is written through opener (default: a temporary
    file that replaces it, created exclusively, never through a link); the gengap CLI gives
    its output discipline (existing files refused without --force).
    """
    found = find_runs(paths)
    runs = [load_results(p) for p in found]
    try:
        rows, seeds, dynamics, head, stability, sections = _tables(runs, found, learned)
    except BaselineError:
        raise
    except (TypeError, AttributeError, KeyError, IndexError, ValueError) as err:  # a field of a results.json that is not what gengap writes
        raise BaselineError(f"{_unreadable(runs, found, learned)} is not a baseline results file: a field the report reads is missing "
                            f"or of another type ({err.__class__.__name__}: {str(err)[:80]})") from None
    plots: dict[str, Path] = {}
    rows_path: Path | None = None
    if out is not None:
        target, length_png, divergence_png, novelty_png, dynamics_png, delay_png, grid_png, rows_path = report_paths(out)
        if target.parent and not target.parent.exists():
            raise BaselineError(f"the folder of {target} does not exist")
        from gengap.baselines.plots import plot_delay, plot_divergence, plot_grid, plot_grokking, plot_novelty, plot_report

        made = {
            "length": plot_report(rows, length_png, opener=opener),
            "divergence": plot_divergence(divergence_points(rows), divergence_png, opener=opener) if sections["divergence"] else None,
            "novelty": plot_novelty(novelty_points(rows), novelty_png, opener=opener) if sections["novelty"] else None,
            "dynamics": plot_grokking(dynamics, dynamics_png, opener=opener) if sections["dynamics"] else None,
            "delay": plot_delay(dynamics, delay_png, opener=opener) if sections["dynamics"] and has_fractions(dynamics) else None,
            "grid": plot_grid(dynamics, grid_png, opener=opener) if sections["dynamics"] and has_grid(dynamics) else None,
        }
        plots = {name: path for name, path in made.items() if path is not None}
    captions = {"length": "exact match by input length", "divergence": "OOD exact match vs compound divergence", "novelty": "OOD exact match by novelty",
                "dynamics": "train and validation exact match against step (log axis)", "delay": "steps to generalize vs training fraction",
                "grid": "outcome over learning rate x weight decay"}
    text = head
    if "length" in plots:
        text += f"\n![{captions['length']}]({plots['length'].name})\n"
    for name, section in sections.items():
        if section is not None:
            text += "\n" + section
            for plot in (name, "delay", "grid") if name == "dynamics" else (name,):
                if plot in plots:
                    text += f"\n![{captions[plot]}]({plots[plot].name})\n"
    if out is not None:
        with (opener or atomic_file)(rows_path) as handle:
            handle.write(rows_json(rows, learned, stability).encode("utf-8"))
        with (opener or atomic_file)(Path(out)) as handle:
            handle.write(text.encode("utf-8"))
    return {"text": text, "rows": rows, "rows_file": rows_path, "plots": plots, "warnings": duplicate_warnings(rows), "ranking": stability}


def _tables(runs: Sequence[Mapping[str, Any]], found: Sequence[Path], learned: float) -> tuple[Any, ...]:
    """(rows, seeds, dynamics, head, stability, sections) of make_report, from the runs' results."""
    rows = group_runs(runs, [path.parent for path in found], learned)
    seeds = dynamics_rows([(results, read_history(path.parent)) for results, path in zip(runs, found)], run_models(runs))
    dynamics = with_curves(seeds)  # what the dynamics plots draw
    head = "# Baseline gap report\n\nMean ± standard deviation over seeds; ID = validation, OOD = test; D_C = compound divergence (train vs test).\n\n" + markdown(rows, learned)
    stability = ranking(rows)
    sections = {"traces": trace_section(rows), "execution": execution_section(rows), "iterations": iterations_section(rows), "dynamics": dynamics_section(seeds, learned),
                "divergence": divergence_section(rows), "novelty": novelty_table(rows), "tasks": task_table(rows),
                "ranking": ranking_section(stability)}
    return rows, seeds, dynamics, head, stability, sections


def _unreadable(runs: Sequence[Mapping[str, Any]], found: Sequence[Path], learned: float) -> str:
    """The first results.json the report cannot read on its own (its tables raise); "a results.json" when none alone fails."""
    for results, path in zip(runs, found):
        try:
            _tables([results], [path], learned)
        except (TypeError, AttributeError, KeyError, IndexError, ValueError):
            return str(path)
    return "a results.json"


def build_report(paths: Iterable[str | Path], out: str | Path | None = None) -> tuple[str, list[dict[str, Any]], Path | None]:
    """(markdown, rows, path of the by-length plot): with out, writes out (markdown) and the plots next to it (see make_report)."""
    report = make_report(paths, out)
    return report["text"], report["rows"], report["plots"].get("length")
