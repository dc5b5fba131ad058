"""PNG plots of exact match against input length (matplotlib with the Agg backend, imported lazily).

Both functions return the path written, or None when matplotlib is not installed (the run's
other outputs do not depend on it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _series(by_length: Mapping[str, Any]) -> tuple[list[int], list[float]]:
    keys = sorted(by_length, key=int)
    values = [by_length[k]["mean"] if isinstance(by_length[k], Mapping) else by_length[k] for k in keys]
    return [int(k) for k in keys], [float(v) for v in values]


def _shade(axis: Any, train_range: Sequence[int] | None) -> None:
    if train_range:
        axis.axvspan(train_range[0] - 0.5, train_range[1] + 0.5, color="0.85", zorder=0, label="train lengths")


def plot_run(results: Mapping[str, Any], path: str | Path) -> Path | None:
    """Exact match vs input length of one run: each seed thin, the mean thick, train range shaded."""
    plt = _pyplot()
    if plt is None:
        return None
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure, axis = plt.subplots(figsize=(7, 4))
    _shade(axis, results["data"]["input_length"]["train"])
    colours = {"id": "tab:blue", "ood": "tab:red"}
    names = {"id": "validation (ID)", "ood": "test (OOD)"}
    for side in ("id", "ood"):
        for seed in results["per_seed"]:
            xs, ys = _series(seed["by_length"][side])
            axis.plot(xs, ys, color=colours[side], alpha=0.3, linewidth=0.8)
        xs, ys = _series(results["aggregate"]["by_length"][side])
        axis.plot(xs, ys, color=colours[side], linewidth=2, marker=".", label=names[side])
    axis.set_ylim(-0.02, 1.02)
    axis.set_xlabel("input length (tokens)")
    axis.set_ylabel("exact match")
    axis.set_title(f"{results['config']} / {results['pos']} / {results['preset']} ({len(results['per_seed'])} seeds)")
    axis.legend(loc="best", fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def plot_report(rows: Sequence[Mapping[str, Any]], path: str | Path) -> Path | None:
    """One panel per config: mean exact match vs input length per positional encoding.

    rows are report groups (see baselines.report.group_runs): config, pos, by_length
    {"id"|"ood": {length: {"mean"}}}, train_range.
    """
    plt = _pyplot()
    if plt is None:
        return None
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    configs = list(dict.fromkeys(row["config"] for row in rows))
    columns = min(3, len(configs))
    lines = -(-len(configs) // columns)
    figure, axes = plt.subplots(lines, columns, figsize=(5 * columns, 3.6 * lines), squeeze=False)
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    encodings = list(dict.fromkeys(row["pos"] for row in rows))
    for index, config in enumerate(configs):
        axis = axes[index // columns][index % columns]
        group = [row for row in rows if row["config"] == config]
        _shade(axis, group[0].get("train_range"))
        for row in group:
            colour = cycle[encodings.index(row["pos"]) % len(cycle)]
            for side, style in (("id", ":"), ("ood", "-")):
                xs, ys = _series(row["by_length"][side])
                axis.plot(xs, ys, style, color=colour, marker="." if side == "ood" else None, label=f"{row['pos']} {side.upper()}")
        axis.set_ylim(-0.02, 1.02)
        axis.set_title(config, fontsize="medium")
        axis.set_xlabel("input length (tokens)")
        axis.set_ylabel("exact match")
        axis.legend(fontsize="x-small", loc="best")
    for index in range(len(configs), lines * columns):
        axes[index // columns][index % columns].axis("off")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path
