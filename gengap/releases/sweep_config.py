"""Sweep files: load YAML, validate against gengap/schemas/sweep.schema.json, resolve configs.

A sweep file names its data (``release: DIR`` or ``suite: SUITE.yaml``, paths relative to
the sweep file), the configs (names or globs), encodings, presets, seeds, steps, training
overrides (``train``), the resources of one run and the retries of a failed run (see the
README). Errors name the file, the line and the key (SweepError), as for suite configs.
Sweep files shipped with gengap (gengap/sweeps/<name>.yaml) are found by name.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

from gengap.releases.suite import YamlSource, _jsonable, read_config_text, validate_yaml_schema

DEFAULTS = {"architectures": ["transformer"], "encodings": ["rope"], "presets": ["small"], "seeds": [0], "retries": 2}


class SweepError(ValueError):
    """A sweep file is malformed or names something that does not exist."""


@dataclass(frozen=True)
class FailOnceHook:
    """Testing: the run's worker process ends itself after this step, on its first attempt."""

    run: str
    step: int


@dataclass(frozen=True)
class Sweep:
    """A validated sweep file (paths resolved against its folder)."""

    label: str
    release: Path | None
    suite: Path | None
    configs: tuple[str, ...]
    architectures: tuple[str, ...]
    encodings: tuple[str, ...]
    presets: tuple[str, ...]
    seeds: tuple[int, ...]
    overrides: dict[str, Any]
    gpus: float
    cpus: float
    retries: int
    fail_once: FailOnceHook | None
    data: dict[str, Any] = field(compare=False, repr=False)
    source: YamlSource = field(compare=False, repr=False)

    def select_configs(self, names: Sequence[str]) -> list[str]:
        """The configs among names that the patterns match, in pattern order; SweepError (at the
        pattern's line) for a pattern that matches none."""
        chosen: list[str] = []
        raw = self.data["configs"]
        for index, pattern in enumerate(self.configs):
            matches = sorted(fnmatch.filter(names, pattern))
            if not matches:
                where = ["configs", index] if isinstance(raw, list) else ["configs"]
                raise self.source.error(where, f"{pattern!r} matches no config of {self.data_label()}; it has: {', '.join(names)}")
            chosen.extend(name for name in matches if name not in chosen)
        return chosen

    def data_label(self) -> str:
        return f"release {self.release}" if self.release is not None else f"suite {self.suite}"


def shipped_sweeps() -> list[str]:
    """Names of the sweep files shipped in the package (gengap/sweeps/<name>.yaml)."""
    folder = resources.files("gengap").joinpath("sweeps")
    return sorted(p.name[: -len(".yaml")] for p in folder.iterdir() if p.name.endswith(".yaml") and not p.name.endswith("-suite.yaml"))


def find_sweep(name: str) -> Path:
    """The sweep file at name, or the shipped sweep of that name."""
    path = Path(name)
    if path.exists() or name.endswith((".yaml", ".yml")) or "/" in name:
        return path
    if name in shipped_sweeps():
        return Path(str(resources.files("gengap").joinpath(f"sweeps/{name}.yaml")))
    raise SweepError(f"{name} is neither a sweep file nor a shipped sweep ({', '.join(shipped_sweeps())})")


def load_sweep(path: str | Path) -> Sweep:
    path = Path(path)
    return parse_sweep(read_config_text(path, "sweep file", SweepError), str(path), path.resolve().parent)


def parse_sweep(text: str, label: str = "<sweep>", folder: Path = Path(".")) -> Sweep:
    """Validate a sweep file's text; relative data paths are taken from folder."""
    source = YamlSource(text, label, SweepError)
    data = source.data
    if not isinstance(data, dict):
        raise SweepError(f"{label}: a sweep file is a YAML mapping")
    validate_yaml_schema(source, "sweep")
    data = _jsonable(data)  # YAML dates as the strings the schema checked
    if ("release" in data) == ("suite" in data):
        raise source.error([], "give exactly one of release (a directory) and suite (a suite config)")
    key = "release" if "release" in data else "suite"
    where = (folder / data[key]).resolve() if not Path(data[key]).is_absolute() else Path(data[key])
    if key == "release" and not (where / "data").is_dir():
        raise source.error([key], f"{where} is not a release (no data/ directory)")
    if key == "suite" and not where.is_file():
        raise source.error([key], f"{where} is not a file")
    overrides = dict(data.get("train") or {})
    if "steps" in data:
        overrides["steps"] = data["steps"]
    resources_ = data.get("resources") or {}
    hook = data.get("fail_once")
    return Sweep(
        label=label,
        release=where if key == "release" else None,
        suite=where if key == "suite" else None,
        configs=tuple([data["configs"]] if isinstance(data["configs"], str) else data["configs"]),
        architectures=tuple(data.get("architectures", DEFAULTS["architectures"])),
        encodings=tuple(data.get("encodings", DEFAULTS["encodings"])),
        presets=tuple(data.get("presets", DEFAULTS["presets"])),
        seeds=tuple(data.get("seeds", DEFAULTS["seeds"])),
        overrides=overrides,
        gpus=float(resources_.get("gpus", 0)),
        cpus=float(resources_.get("cpus", 1)),
        retries=int(data.get("retries", DEFAULTS["retries"])),
        fail_once=FailOnceHook(hook["run"], hook["step"]) if hook else None,
        data=data,
        source=source,
    )
