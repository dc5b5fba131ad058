"""Histograms of difficulty features, train vs test, for the dataset card.

Per config: plots/<config>-input_length.png and plots/<config>-<main_feature>.png (one
plot when the main feature is input_length). Train and test are overlaid as step
histograms of the share of records per value, on shared integer-aligned bins, so parts of
different sizes compare directly.

matplotlib (the `release` extra) is imported inside render_plots. The figures are drawn
with matplotlib's default style (whatever the user's matplotlibrc) on an Agg canvas,
without pyplot, and saved without software metadata, so the same data gives the same
bytes on the same machine (font rendering may differ across matplotlib/freetype builds).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from gengap.data_cards.common import check_manifest, iter_records, plot_paths

WIDTH_IN, HEIGHT_IN, DPI = 6.4, 3.6, 100
MAX_BINS = 60
COLORS = {"train": "#1f77b4", "test": "#d62728"}


def feature_values(
    release_dir: Path, config: Mapping[str, Any], part: str, features: list[str]
) -> dict[str, list[int]]:
    """The values of each feature over the records of one part (one pass over the file)."""
    values: dict[str, list[int]] = {feature: [] for feature in features}
    info = config["files"].get(part)
    if not info:
        return values
    for record in iter_records(release_dir / info["path"]):
        difficulty = record.get("difficulty", {})
        for feature in features:
            if feature in difficulty:
                values[feature].append(int(difficulty[feature]))
    return values


def integer_bins(lo: int, hi: int) -> list[float]:
    """Bin edges at half-integers, one bin per value up to MAX_BINS bins, wider bins beyond."""
    span = hi - lo + 1
    step = max(1, -(-span // MAX_BINS))
    edges = [lo - 0.5 + step * i for i in range(-(-span // step) + 1)]
    return edges


def _draw(path: Path, config: Mapping[str, Any], feature: str, values: dict[str, list[int]]) -> None:
    import matplotlib.style
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator, PercentFormatter

    with matplotlib.style.context("default"):
        figure = Figure(figsize=(WIDTH_IN, HEIGHT_IN), dpi=DPI)
        axes = figure.add_subplot()
        present = [v for part in ("train", "test") for v in values[part]]
        if present:
            edges = integer_bins(min(present), max(present))
            for part in ("train", "test"):
                data = values[part]
                if not data:
                    continue
                weights = [1.0 / len(data)] * len(data)
                axes.hist(
                    data,
                    bins=edges,
                    weights=weights,
                    histtype="stepfilled",
                    alpha=0.35,
                    color=COLORS[part],
                    edgecolor=COLORS[part],
                    linewidth=1.2,
                    label=f"{part} (n={len(data):,})",
                )
            axes.legend(frameon=False)
        else:
            axes.text(0.5, 0.5, "no records", ha="center", va="center", transform=axes.transAxes)
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.yaxis.set_major_formatter(PercentFormatter(1.0))
        axes.set_xlabel(feature.replace("_", " "))
        axes.set_ylabel("share of records")
        axes.set_title(f"{config['name']}: {feature}, train vs test")
        axes.spines[["top", "right"]].set_visible(False)
        figure.tight_layout()
        path.parent.mkdir(exist_ok=True)  # plots/ in the release directory, never above it
        figure.savefig(path, format="png", dpi=DPI, metadata={"Software": None})


def render_plots(manifest: dict, release_dir: Path) -> list[str]:
    """Write the histograms of every config under release_dir/plots; return their relative paths."""
    check_manifest(manifest)
    release_dir = Path(release_dir)
    written: list[str] = []
    for config in manifest["configs"]:
        plots = plot_paths(config)
        features = [feature for feature, _ in plots]
        by_part = {part: feature_values(release_dir, config, part, features) for part in ("train", "test")}
        for feature, rel in plots:
            _draw(release_dir / rel, config, feature, {part: by_part[part][feature] for part in by_part})
            written.append(rel)
    return written
