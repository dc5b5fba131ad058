"""Training dynamics over baseline runs: grokking curves, delays against the training fraction,
and outcomes over a learning-rate x weight-decay grid (no torch; read from run directories).

A run's periodic rows (metrics.jsonl) hold train exact match (on a fixed subset of the
targets trained on) beside validation (ID) and test (OOD); its results.json holds, per seed,
``first_step`` (the first evaluated step at which train and validation reach the run's
``reach`` threshold, None when never) and ``grokking_delay`` (validation's step over
train's). Per seed, the outcome is:

- ``generalized``: validation reached the threshold;
- ``memorized``: train reached it, validation did not;
- ``neither``: train did not reach it either.

The training fraction of a config is its train part's share of all its records (train,
validation and test): for a split of a whole finite task (``pool: all``), Power et al.'s
training fraction.

The "Training dynamics" table names each run's model as the gap table does (with the settings
that tell setups apart), counts a seed that two runs of one setup hold once (the later run's),
and names below it the seeds it leaves out for want of a train curve, with the reason (a
stream run has no fixed train part).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from gengap.generators.reading import MAX_JSON_BYTES
from gengap.generators.safe_files import read_regular
from gengap.baselines.setup import setup_of

OUTCOMES = ("generalized", "memorized", "neither")


def read_history(run_dir: Path) -> list[dict[str, Any]]:
    """The periodic rows of a run directory's metrics.jsonl (none when it is missing, a link or
    not a regular file; a torn or foreign line is skipped)."""
    path = Path(run_dir) / "metrics.jsonl"
    rows = []
    try:
        lines = read_regular(path, MAX_JSON_BYTES).decode("utf-8").splitlines()  # a named pipe is never read (it would block)
    except (OSError, UnicodeError):
        return []
    for line in lines:
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and isinstance(row.get("step"), int):
            rows.append(row)
    return rows


def outcome(seed: Mapping[str, Any]) -> str | None:
    """generalized, memorized or neither (None for a seed without first steps: an older run)."""
    first = seed.get("first_step")
    if not isinstance(first, Mapping):
        return None
    if first.get("id") is not None:
        return "generalized"
    return "memorized" if first.get("train") is not None else "neither"


def training_fraction(results: Mapping[str, Any]) -> float | None:
    """The train part's share of all the config's records (None without sizes)."""
    sizes = (results.get("data") or {}).get("sizes") or {}
    total = sum(int(sizes.get(part) or 0) for part in ("train", "validation", "test"))
    return int(sizes.get("train") or 0) / total if total else None


def dynamics_rows(runs: Sequence[tuple[Mapping[str, Any], Sequence[Mapping[str, Any]]]], models: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """One row per (run, seed) that recorded first steps: config, model (what the plots group
    by), label (what the table shows), preset, lr, weight decay, label noise, training fraction,
    first steps, delay, outcome, stream (None for a run on the train part), and the seed's
    periodic (step, train, validation) exact matches for the curve. models: per run, its label
    (gengap.baselines.report.run_models: the model with the settings that tell its setup from
    the others'; default the model). A seed that several runs of one setup hold is one row, the
    last run's (as the gap table counts it)."""
    from gengap.baselines.report import model_label

    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    for index, (results, history) in enumerate(runs):
        settings = results.get("settings") or {}
        model = model_label(results.get("arch", "transformer"), results["pos"])
        label = models[index] if models is not None else model
        for seed in results.get("per_seed", []):
            kind = outcome(seed)
            if kind is None:
                continue
            curve = [(row["step"], row.get("train_exact_match"), row.get("id_exact_match")) for row in history if row.get("seed") == seed["seed"]]
            first = seed["first_step"]
            key = (results["config"], setup_of(results), seed["seed"])
            out[key] = {  # the later run counts, in the place of the first
                "config": results["config"], "model": model, "label": label,
                "preset": results.get("preset", ""), "seed": seed["seed"], "lr": settings.get("lr"), "weight_decay": settings.get("weight_decay"),
                "label_noise": settings.get("label_noise", 0.0), "fraction": training_fraction(results), "stream": settings.get("stream"),
                "threshold": first.get("threshold"), "train_step": first.get("train"), "id_step": first.get("id"),
                "delay": seed.get("grokking_delay"), "outcome": kind, "steps": seed.get("stopped_at", results.get("steps")),
                "train_exact_match": seed.get("train_exact_match"), "id_exact_match": seed.get("id_exact_match"), "curve": curve,
            }
    return list(out.values())


def _step(value: int | None) -> str:
    return "never" if value is None else str(value)


def with_curves(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The rows whose periodic history has train exact match (runs made before it have none)."""
    return [row for row in rows if any(point[1] is not None for point in row["curve"])]


def dynamics_section(rows: Sequence[Mapping[str, Any]], learned: float | None = None) -> str | None:
    """The markdown of "Training dynamics" (None when no run recorded a train curve); the seeds
    without a train curve are named below the table with the reason. The threshold the steps and
    outcomes are read at (the runs' ``--reach``) is stated, in the column heads when the rows share
    one, and told apart from the gap table's "learned" (learned: its ``gengap report --learned``
    threshold)."""
    shown = with_curves(rows)
    if not shown:
        return None
    thresholds = sorted({float(row["threshold"]) for row in shown if row.get("threshold") is not None})
    one = thresholds[0] if len(thresholds) == 1 else None
    if one is not None:
        reach, head = f"exact match ≥ {one:g}", f"≥ {one:g} at"
    else:
        listed = f" ({', '.join(f'{t:g}' for t in thresholds)}; beside each step)" if thresholds else ""
        reach, head = f"exact match at or above the run's threshold{listed}", "reaches at"
    rule = f"ID exact match averaged over input lengths ≥ {learned:g} at the end" if learned is not None else "its final ID exact match"
    below = f"below {one:g}" if one is not None else "below the threshold"
    intro = (
        "Per seed: the first evaluated step at which train exact match (a fixed subset of the targets trained on) and "
        f"validation (ID) exact match reach {reach} (`gengap train --reach EM`, default 0.99), the delay between them "
        "(validation's step over train's: grokking when large), and the outcome at that threshold (generalized: validation "
        "reached it; memorized: only train did; neither). This threshold is not the gap table's \"learned\" (met --until-id, "
        f"or without it {rule}): a seed learned there can read memorized here when its validation stayed {below}. "
        "The training fraction is the train part's share of the config's records."
    )
    lines = [
        "## Training dynamics",
        "",
        intro,
        "",
        f"| config | model | preset | seed | lr | weight decay | label noise | training fraction | train {head} | validation {head} | delay | outcome |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in shown:
        fraction = "n/a" if row["fraction"] is None else f"{row['fraction']:.3f}"
        delay = "n/a" if row["delay"] is None else f"{row['delay']:.1f}"
        at = "" if one is not None or row.get("threshold") is None else f" (≥ {float(row['threshold']):g})"
        lines.append(
            f"| {row['config']} | {row['label']} | {row['preset']} | {row['seed']} | {row['lr']:g} | {row['weight_decay']:g} | "
            f"{row['label_noise']:g} | {fraction} | {_step(row['train_step'])}{at} | {_step(row['id_step'])}{at} | {delay} | {row['outcome']} |"
        )
    left_out = left_out_lines(rows)
    if left_out:
        lines += ["", "Not in the table (no train exact match to compare validation with):", "", *left_out]
    return "\n".join(lines) + "\n"


def left_out_lines(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per config, model and preset whose seeds have no train curve, with the reason: a
    stream run has no fixed train part to measure; another run recorded none (an older run, or
    its metrics.jsonl is missing)."""
    shown = {id(row) for row in with_curves(rows)}
    groups: dict[tuple[str, str, str, bool], list[int]] = {}
    for row in rows:
        if id(row) not in shown:
            groups.setdefault((row["config"], row["label"], row["preset"], row.get("stream") is not None), []).append(row["seed"])
    reasons = {True: "a stream run trains on generated records: it has no fixed train part to measure",
               False: "its metrics.jsonl holds no train exact match (a run made before it was recorded, or the file is missing)"}
    return [f"- {config} {model} {preset}, seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}: {reasons[stream]}"
            for (config, model, preset, stream), seeds in groups.items()]


def grid_cells(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[tuple[float, float], list[str]]]:
    """Per config x model: the outcomes of the seeds at each (lr, weight decay) point."""
    cells: dict[str, dict[tuple[float, float], list[str]]] = {}
    for row in rows:
        key = f"{row['config']} / {row['model']}"
        cells.setdefault(key, {}).setdefault((float(row["lr"]), float(row["weight_decay"])), []).append(row["outcome"])
    return cells


def has_grid(rows: Sequence[Mapping[str, Any]]) -> bool:
    """Whether some config x model was trained at two or more (lr, weight decay) points."""
    return any(len(points) > 1 for points in grid_cells(rows).values())


def has_fractions(rows: Sequence[Mapping[str, Any]]) -> bool:
    """Whether some model was trained at two or more training fractions."""
    fractions: dict[str, set[float]] = {}
    for row in rows:
        if row["fraction"] is not None:
            fractions.setdefault(row["model"], set()).add(round(row["fraction"], 3))
    return any(len(values) > 1 for values in fractions.values())
