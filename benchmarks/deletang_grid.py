"""Symmetric selection for the Deletang et al. protocol (``gpu_protocol.py --protocol deletang --paper``).

Deletang et al. 2023 (Table 2) report, for every task and architecture, the best score over the
same grid: 10 seeds x the learning rates {1e-4, 3e-4, 5e-4}. :func:`grid` gives every architecture
that one grid (no architecture gets more seeds or learning rates than another), and :func:`table`
refuses rows that do not cover it. Per task and architecture the table states

- **best**: the highest length score (per-token accuracy averaged over the test lengths) over
  every seed and learning rate, as the paper reports it (a maximum over 30 runs is optimistic);
- **mean [95 % interval]**: the mean length score over the seeds of one learning rate, the one
  whose seeds' mean validation (ID) exact match is highest (chosen on validation, never on the test
  figures; ties go to the smaller rate), with a percentile-bootstrap interval over those seeds
  (validity_stats.bootstrap: fixed draws, the same interval on every machine).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from validity_stats import bootstrap, mean_of

PAPER_SEEDS = tuple(range(10))
PAPER_ARCHS = ("encoder", "rnn", "lstm", "stack_rnn", "tape_rnn")  # the paper's transformer is the encoder


@dataclass(frozen=True)
class GridPoint:
    """One run of the grid."""

    task: str
    arch: str
    seed: int
    lr: float


def grid(tasks: Sequence[str], archs: Sequence[str], seeds: Sequence[int], lrs: Sequence[float]) -> list[GridPoint]:
    """Every (task, architecture) x the same seeds x the same learning rates (ValueError for an empty or repeated axis)."""
    for name, axis in (("tasks", tasks), ("architectures", archs), ("seeds", seeds), ("learning rates", lrs)):
        if not axis or len(set(axis)) != len(axis):
            raise ValueError(f"the grid's {name} must be distinct and non-empty, got {list(axis)}")
    return [GridPoint(task, arch, int(seed), float(lr)) for task in tasks for arch in archs for lr in lrs for seed in seeds]


def _cells(rows: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], dict[tuple[float, int], Mapping[str, Any]]]:
    cells: dict[tuple[str, str], dict[tuple[float, int], Mapping[str, Any]]] = {}
    for row in rows:
        cells.setdefault((row["task"], row["arch"]), {})[(float(row["lr"]), int(row["seed"]))] = row
    return cells


def check_symmetric(rows: Sequence[Mapping[str, Any]]) -> tuple[list[int], list[float]]:
    """(seeds, learning rates) every (task, architecture) of rows has run; ValueError naming a cell that lacks some."""
    cells = _cells(rows)
    seeds = sorted({int(r["seed"]) for r in rows})
    lrs = sorted({float(r["lr"]) for r in rows})
    for (task, arch), runs in sorted(cells.items()):
        missing = [f"lr {lr:g} seed {seed}" for lr in lrs for seed in seeds if (lr, seed) not in runs]
        if missing:
            raise ValueError(f"{task} {arch}: the grid is not symmetric, {len(missing)} runs missing ({', '.join(missing[:4])}, ...)")
    return seeds, lrs


def _score(row: Mapping[str, Any]) -> float:
    value = row.get("length_score")
    return float(value) if value is not None else 0.0


def cell_figures(runs: Mapping[tuple[float, int], Mapping[str, Any]], lrs: Sequence[float], seeds: Sequence[int]) -> dict[str, Any]:
    """best (score, lr, seed), the learning rate chosen on validation, and the mean [interval] over its seeds."""
    best_lr, best_seed = max(runs, key=lambda key: (_score(runs[key]), -key[0], -key[1]))
    validation = {lr: sum(float(runs[(lr, s)].get("id") or 0.0) for s in seeds) / len(seeds) for lr in lrs}
    chosen = max(lrs, key=lambda lr: (validation[lr], -lr))
    interval = bootstrap({"x": [_score(runs[(chosen, s)]) for s in seeds]}, mean_of("x"))
    return {"best": _score(runs[(best_lr, best_seed)]), "best_lr": best_lr, "best_seed": best_seed, "chosen_lr": chosen,
            "mean": interval.value, "low": interval.low, "high": interval.high}


def table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The markdown table of rows (``task``, ``arch``, ``seed``, ``lr``, ``length_score``, ``id``); see the module doc."""
    seeds, lrs = check_symmetric(rows)
    lines = [f"Every architecture: seeds {', '.join(map(str, seeds))} x learning rates {', '.join(f'{lr:g}' for lr in lrs)} "
             f"({len(seeds) * len(lrs)} runs a cell). Length score: per-token accuracy averaged over the test lengths.", "",
             "| task | architecture | best (as the paper) | best's lr, seed | lr chosen on validation | mean [95 % interval] over its seeds |",
             "|---|---|---|---|---|---|"]
    for (task, arch), runs in sorted(_cells(rows).items()):
        f = cell_figures(runs, lrs, seeds)
        spread = f"{f['mean']:.3f} [{f['low']:.3f}, {f['high']:.3f}]" if f["low"] is not None else f"{f['mean']:.3f}"
        lines.append(f"| {task} | {arch} | {f['best']:.3f} | {f['best_lr']:g}, {f['best_seed']} | {f['chosen_lr']:g} | {spread} |")
    return "\n".join(lines) + "\n"
