"""Gap reports over baseline runs: a markdown table per config x positional encoding, and a plot.

Runs are read from their ``results.json``; runs of the same (config, positional encoding,
preset) are pooled, so seeds trained in separate run directories (e.g. in parallel) are
aggregated together. Figures are mean ± sample standard deviation over seeds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from baselines.errors import BaselineError
from baselines.metrics import aggregate

POS_ORDER = ("learned", "sinusoidal", "rope", "alibi", "nope")


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
        results = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise BaselineError(f"cannot read {path}: {err}") from None
    if not isinstance(results, dict) or "per_seed" not in results or "config" not in results:
        raise BaselineError(f"{path} is not a baseline results file")
    return results


def group_runs(runs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Pool runs by (config, pos, preset); per group the seeds' aggregate and the train length range."""
    groups: dict[tuple[str, str, str], dict[str, Any]] = {}
    for results in runs:
        key = (results["config"], results["pos"], results.get("preset", ""))
        group = groups.setdefault(key, {"config": key[0], "pos": key[1], "preset": key[2], "per_seed": {}, "steps": set(), "train_range": None})
        for seed in results["per_seed"]:
            group["per_seed"][seed["seed"]] = seed  # the same seed twice: the later run counts
        group["steps"].add(results.get("steps"))
        train = results.get("data", {}).get("input_length", {}).get("train")
        if train:
            old = group["train_range"]
            group["train_range"] = train if old is None else [min(old[0], train[0]), max(old[1], train[1])]
    order = {name: i for i, name in enumerate(POS_ORDER)}
    configs = list(dict.fromkeys(k[0] for k in groups))
    rows = []
    for key in sorted(groups, key=lambda k: (configs.index(k[0]), order.get(k[1], 99), k[2])):
        group = groups[key]
        seeds = [group["per_seed"][s] for s in sorted(group["per_seed"])]
        summary = aggregate(seeds)
        rows.append({
            "config": group["config"],
            "pos": group["pos"],
            "preset": group["preset"],
            "steps": sorted(s for s in group["steps"] if s is not None),
            "seeds": sorted(group["per_seed"]),
            "aggregate": summary,
            "by_length": summary["by_length"],
            "train_range": group["train_range"],
        })
    return rows


def _pm(figures: Mapping[str, Any]) -> str:
    if figures.get("mean") is None:
        return "n/a"
    return f"{figures['mean']:.3f} ± {figures['std']:.3f}"


def markdown(rows: Sequence[Mapping[str, Any]]) -> str:
    """The report table (one row per config x positional encoding x preset)."""
    lines = [
        "| config | pos | preset | steps | seeds | ID exact match | OOD exact match | gap (ID - OOD) | OOD token acc. | OOD solved (>= 0.95) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        a = row["aggregate"]
        n = len(row["seeds"])
        solved = round(a["ood_solved_fraction"] * n) if a["ood_solved_fraction"] is not None else 0
        steps = ",".join(str(s) for s in row["steps"]) or "?"
        lines.append(
            f"| {row['config']} | {row['pos']} | {row['preset']} | {steps} | {n} | {_pm(a['id_exact_match'])} | "
            f"{_pm(a['ood_exact_match'])} | {_pm(a['gap'])} | {_pm(a['ood_token_accuracy'])} | {solved}/{n} |"
        )
    return "\n".join(lines) + "\n"


def build_report(paths: Iterable[str | Path], out: str | Path | None = None) -> tuple[str, list[dict[str, Any]], Path | None]:
    """(markdown, rows, plot path): with out, writes out (markdown) and the plot next to it (.png)."""
    runs = [load_results(p) for p in find_runs(paths)]
    rows = group_runs(runs)
    text = "# Baseline gap report\n\nMean ± standard deviation over seeds; ID = validation, OOD = test.\n\n" + markdown(rows)
    plot = None
    if out is not None:
        target = Path(out)
        if target.parent and not target.parent.exists():
            raise BaselineError(f"the folder of {target} does not exist")
        from baselines.plots import plot_report

        plot = plot_report(rows, target.with_suffix(".png"))
        if plot is not None:
            text += f"\n![exact match by input length]({plot.name})\n"
        target.write_text(text, encoding="utf-8")
    return text, rows, plot
