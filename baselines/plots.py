"""PNG plots of baseline runs (matplotlib with the Agg backend, imported lazily).

Exact match against input length (one run, or a report's rows), OOD exact match against
compound divergence, and OOD exact match by novelty bucket. Every function returns the path
written, or None when matplotlib is not installed (the other outputs do not depend on it).
A plot is written through a temporary file that replaces it (gengap.generators.safe_files), or
through the ``opener`` given (the gengap CLI's output discipline for ``gengap report``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO, Callable, ContextManager, Mapping, Sequence

from gengap.generators.safe_files import atomic_file, make_directory

Opener = Callable[[Path], ContextManager[BinaryIO]]  # a binary handle whose content becomes the file at a path


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


def _canvas(path: str | Path, size: tuple[float, float]) -> tuple[Any, Any, Any, Path] | None:
    """(pyplot, figure, axis, path) of a one-axis plot; None without matplotlib."""
    plt = _pyplot()
    if plt is None:
        return None
    path = Path(path)
    figure, axis = plt.subplots(figsize=size)
    return plt, figure, axis, path


def _write(plt: Any, figure: Any, path: Path, opener: Opener | None = None) -> Path:
    """Save figure as a PNG at path through opener (default: a temporary file that replaces
    path, created exclusively, never through a link) and close it."""
    try:
        if opener is None:
            make_directory(path.parent)  # e.g. a run's plots/ folder (never its parents, never a link in its place)
        with (opener or atomic_file)(path) as handle:
            figure.savefig(handle, format="png", dpi=100)
    finally:
        plt.close(figure)
    return path


def _save(plt: Any, figure: Any, axis: Any, path: Path, legend: str = "small", opener: Opener | None = None) -> Path:
    axis.legend(loc="best", fontsize=legend)
    figure.tight_layout()
    return _write(plt, figure, path, opener)


def plot_run(results: Mapping[str, Any], path: str | Path) -> Path | None:
    """Exact match vs input length of one run: each seed thin, the mean thick, train range shaded."""
    canvas = _canvas(path, (7, 4))
    if canvas is None:
        return None
    plt, figure, axis, path = canvas
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
    from gengap.baselines.report import model_label

    model = model_label(results.get("arch", "transformer"), results["pos"])
    axis.set_title(f"{results['config']} / {model} / {results['preset']} ({len(results['per_seed'])} seed{'s' if len(results['per_seed']) != 1 else ''})")
    return _save(plt, figure, axis, path)


def plot_curriculum(results: Mapping[str, Any], path: str | Path) -> Path | None:
    """Curriculum level against training step of a stream run: the headline level of each seed
    (a step line from its trace) and the mean level trained between evaluations (dots)."""
    canvas = _canvas(path, (7, 3.5))
    if canvas is None:
        return None
    plt, figure, axis, path = canvas
    for seed in results["per_seed"]:
        curriculum = seed.get("curriculum") or {}
        parts = curriculum.get("components") or [curriculum]  # a mixture: one line per component
        for k, part in enumerate(parts):
            trace = part.get("trace") or []
            if not trace:
                continue
            steps = [step for step, _ in trace] + [results["steps"]]
            levels = [level for _, level in trace] + [trace[-1][1]]
            name = f" {part['task']}" if "task" in part else ""
            line = axis.step(steps, levels, where="post", linewidth=1.5, label=f"seed {seed['seed']}{name} level")[0]
            means = [(s, m[k] if isinstance(m, list) else m) for s, m in curriculum.get("mean_levels") or []]
            means = [(s, m) for s, m in means if m is not None]
            if means:
                axis.plot([s for s, _ in means], [m for _, m in means], ".", color=line.get_color(), alpha=0.6)
    from matplotlib.ticker import MaxNLocator

    axis.yaxis.set_major_locator(MaxNLocator(integer=True))
    axis.set_xlabel("training step")
    axis.set_ylabel("level")
    stream = results.get("stream") or {}
    what = f"{stream.get('task', results['config'])}: {stream.get('curriculum', '')}" if "components" not in stream else f"mixture of {len(stream['components'])} tasks"
    axis.set_title(f"{what} (dots: mean level trained)")
    return _save(plt, figure, axis, path)


def plot_report(rows: Sequence[Mapping[str, Any]], path: str | Path, opener: Opener | None = None) -> Path | None:
    """One panel per config: mean exact match vs input length per positional encoding.

    rows are report groups (see gengap.baselines.report.group_runs): config, pos, by_length
    {"id"|"ood": {length: {"mean"}}}, train_range.
    """
    plt = _pyplot()
    if plt is None:
        return None
    path = Path(path)
    configs = list(dict.fromkeys(row["config"] for row in rows))
    columns = min(3, len(configs))
    lines = -(-len(configs) // columns)
    figure, axes = plt.subplots(lines, columns, figsize=(5 * columns, 3.6 * lines), squeeze=False)
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    models = list(dict.fromkeys(row["model"] for row in rows))
    for index, config in enumerate(configs):
        axis = axes[index // columns][index % columns]
        group = [row for row in rows if row["config"] == config]
        _shade(axis, group[0].get("train_range"))
        for row in group:
            colour = cycle[models.index(row["model"]) % len(cycle)]
            for side, style in (("id", ":"), ("ood", "-")):
                xs, ys = _series(row["by_length"][side])
                axis.plot(xs, ys, style, color=colour, marker="." if side == "ood" else None, label=f"{row['model']} {side.upper()}")
        axis.set_ylim(-0.02, 1.02)
        axis.set_title(config, fontsize="medium")
        axis.set_xlabel("input length (tokens)")
        axis.set_ylabel("exact match")
        axis.legend(fontsize="x-small", loc="best")
    for index in range(len(configs), lines * columns):
        axes[index // columns][index % columns].axis("off")
    figure.tight_layout()
    return _write(plt, figure, path, opener)


def _series_label(point: Mapping[str, Any], presets: int) -> str:
    return f"{point['model']} {point['preset']}" if presets > 1 else str(point["model"])


def plot_divergence(
    points: Sequence[Mapping[str, Any]], path: str | Path, title: str = "OOD exact match vs compound divergence", opener: Opener | None = None
) -> Path | None:
    """Scatter of mean OOD exact match (± std over seeds) against compound divergence, one colour per encoding.

    points as gengap.baselines.report.divergence_points gives them (config, model, preset,
    compound_divergence, ood_exact_match, ood_std); each point is labelled with its config
    and each series' legend entry carries its Spearman correlation when it has one.
    """
    plt = _pyplot()
    if plt is None:
        return None
    from gengap.baselines.report import divergence_correlations

    path = Path(path)
    figure, axis = plt.subplots(figsize=(7, 4.5))
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    presets = len({p["preset"] for p in points})
    for index, series in enumerate(divergence_correlations(points)):
        group = [p for p in points if (p["model"], p["preset"]) == (series["model"], series["preset"])]
        rho = f" (ρ = {series['spearman']:.2f})" if series["spearman"] is not None else ""
        axis.errorbar(
            [p["compound_divergence"] for p in group], [p["ood_exact_match"] for p in group], yerr=[p["ood_std"] for p in group],
            fmt="o", color=cycle[index % len(cycle)], capsize=3, label=_series_label(group[0], presets) + rho,
        )
    highest: dict[str, Mapping[str, Any]] = {}
    for point in points:  # one label per config, beside its highest point
        if point["config"] not in highest or point["ood_exact_match"] > highest[point["config"]]["ood_exact_match"]:
            highest[point["config"]] = point
    for point in highest.values():
        axis.annotate(point["config"], (point["compound_divergence"], point["ood_exact_match"]), fontsize="x-small",
                      xytext=(4, 4), textcoords="offset points")
    axis.set_ylim(-0.02, 1.02)
    axis.set_xlabel("compound divergence D_C (train vs test)")
    axis.set_ylabel("OOD exact match (mean over seeds)")
    axis.set_title(title, fontsize="medium")
    axis.legend(loc="best", fontsize="small")
    figure.tight_layout()
    return _write(plt, figure, path, opener)


def plot_novelty(
    points: Sequence[Mapping[str, Any]], path: str | Path, title: str = "OOD exact match by novelty", opener: Opener | None = None
) -> Path | None:
    """OOD exact match (mean ± std over seeds) per novelty bucket (0, 1, 2, 3+ unseen compounds), one line per config x encoding.

    points as gengap.baselines.report.novelty_points gives them (config, model, preset, buckets
    {bucket: {mean, std}}); a bucket without records is a gap in its line.
    """
    plt = _pyplot()
    if plt is None:
        return None
    from gengap.baselines.metrics import NOVELTY_BUCKETS

    path = Path(path)
    figure, axis = plt.subplots(figsize=(7, 4.5))
    presets = len({p["preset"] for p in points})
    xs = list(range(len(NOVELTY_BUCKETS)))
    for point in points:
        cells = [point["buckets"].get(b) for b in NOVELTY_BUCKETS]
        ys = [c["mean"] if c and c["mean"] is not None else float("nan") for c in cells]
        errors = [c["std"] if c and c["std"] is not None else 0.0 for c in cells]
        axis.errorbar(xs, ys, yerr=errors, marker="o", capsize=3, label=f"{point['config']} {_series_label(point, presets)}")
    axis.set_xticks(xs)
    axis.set_xticklabels(NOVELTY_BUCKETS)
    axis.set_ylim(-0.02, 1.02)
    axis.set_xlabel("compounds of the test record unseen in train")
    axis.set_ylabel("OOD exact match (mean over seeds)")
    axis.set_title(title, fontsize="medium")
    axis.legend(loc="best", fontsize="x-small")
    figure.tight_layout()
    return _write(plt, figure, path, opener)


# -- training dynamics (rows of gengap.baselines.dynamics.dynamics_rows) ------------------------------

OUTCOME_COLOURS = {"generalized": "tab:green", "memorized": "tab:orange", "neither": "tab:grey"}


def plot_grokking(rows: Sequence[Mapping[str, Any]], path: str | Path, opener: Opener | None = None) -> Path | None:
    """Train (solid) and validation (dashed) exact match against step on a log axis, one panel per
    config x model (at most 9), one colour per seed or setting: the grokking curve."""
    plt = _pyplot()
    if plt is None:
        return None
    path = Path(path)
    panels = list(dict.fromkeys(f"{row['config']} / {row['model']}" for row in rows))[:9]
    columns = min(3, len(panels))
    lines = -(-len(panels) // columns)
    figure, axes = plt.subplots(lines, columns, figsize=(5 * columns, 3.4 * lines), squeeze=False)
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for index, panel in enumerate(panels):
        axis = axes[index // columns][index % columns]
        group = [row for row in rows if f"{row['config']} / {row['model']}" == panel]
        for number, row in enumerate(group):
            colour = cycle[number % len(cycle)]
            label = f"seed {row['seed']}" + (f", lr {row['lr']:g}, wd {row['weight_decay']:g}" if len(group) > 1 else "")
            steps = [point[0] for point in row["curve"]]
            for column, style, side in ((1, "-", "train"), (2, "--", "validation")):
                values = [point[column] for point in row["curve"]]
                if any(v is not None for v in values):
                    axis.plot(steps, values, style, color=colour, label=f"{label} {side}" if len(group) <= 3 else None)
        axis.set_xscale("log")
        axis.set_ylim(-0.02, 1.02)
        axis.set_xlabel("step")
        axis.set_ylabel("exact match")
        axis.set_title(panel, fontsize="medium")
        if len(group) <= 3:
            axis.legend(fontsize="x-small", loc="best")
    for index in range(len(panels), lines * columns):
        axes[index // columns][index % columns].axis("off")
    figure.tight_layout()
    return _write(plt, figure, path, opener)


def plot_delay(rows: Sequence[Mapping[str, Any]], path: str | Path, opener: Opener | None = None) -> Path | None:
    """The first step at which validation reaches the threshold against the training fraction, one
    series per model and label noise (a run that never reached it is drawn at its last step, hollow)."""
    canvas = _canvas(path, (7, 4.5))
    if canvas is None:
        return None
    plt, figure, axis, path = canvas
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for index, (name, noise) in enumerate(dict.fromkeys((row["model"], row["label_noise"]) for row in rows)):
        group = [row for row in rows if (row["model"], row["label_noise"]) == (name, noise) and row["fraction"] is not None]
        model = f"{name}, label noise {noise:g}" if noise else name
        reached = [(row["fraction"], row["id_step"]) for row in group if row["id_step"] is not None]
        never = [(row["fraction"], row["steps"]) for row in group if row["id_step"] is None]
        colour = cycle[index % len(cycle)]
        if reached:
            axis.scatter(*zip(*sorted(reached)), color=colour, label=f"{model}: validation reaches the threshold")
        if never:
            axis.scatter(*zip(*sorted(never)), facecolors="none", edgecolors=colour, label=f"{model}: never (last step)")
    axis.set_yscale("log")
    axis.set_xlabel("training fraction")
    axis.set_ylabel("first step validation reaches the threshold")
    axis.set_title("steps to generalize vs training fraction", fontsize="medium")
    return _save(plt, figure, axis, path, opener=opener)


def plot_grid(rows: Sequence[Mapping[str, Any]], path: str | Path, opener: Opener | None = None) -> Path | None:
    """Learning rate x weight decay, one panel per config x model with a grid, each point coloured
    by its seeds' most common outcome (generalized, memorized, neither)."""
    from gengap.baselines.dynamics import grid_cells

    plt = _pyplot()
    if plt is None:
        return None
    path = Path(path)
    panels = {name: points for name, points in grid_cells(rows).items() if len(points) > 1}
    names = list(panels)[:9]
    columns = min(3, len(names))
    lines = -(-len(names) // columns)
    figure, axes = plt.subplots(lines, columns, figsize=(4.5 * columns, 3.6 * lines), squeeze=False)
    for index, name in enumerate(names):
        axis = axes[index // columns][index % columns]
        points = panels[name]
        rates = sorted({lr for lr, _ in points})
        decays = sorted({wd for _, wd in points})
        for (lr, wd), outcomes in points.items():
            common = max(sorted(set(outcomes)), key=outcomes.count)
            axis.scatter(rates.index(lr), decays.index(wd), s=400, marker="s", color=OUTCOME_COLOURS[common])
            axis.annotate(f"{outcomes.count('generalized')}/{len(outcomes)}", (rates.index(lr), decays.index(wd)), ha="center", va="center", fontsize="x-small")
        axis.set_xticks(range(len(rates)), [f"{lr:g}" for lr in rates])
        axis.set_yticks(range(len(decays)), [f"{wd:g}" for wd in decays])
        axis.set_xlabel("learning rate")
        axis.set_ylabel("weight decay")
        axis.set_title(name, fontsize="small")
        axis.margins(0.3)
    for index in range(len(names), lines * columns):
        axes[index // columns][index % columns].axis("off")
    handles = [plt.Line2D([], [], marker="s", linestyle="", color=c, label=k) for k, c in OUTCOME_COLOURS.items()]
    figure.legend(handles=handles, loc="lower center", ncol=3, fontsize="small")
    figure.tight_layout(rect=(0, 0.06, 1, 1))
    return _write(plt, figure, path, opener)
