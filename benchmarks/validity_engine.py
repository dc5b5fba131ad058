"""The validity protocol's engine: every claim a declarative spec, one runner, one report.

A :class:`Claim` names the arms it compares (:class:`Arm`: a config's split, how to build it,
the training settings and seeds), the *learned* rule its arms must meet (:class:`Learned`),
the verdict rule in words and as a function of the arms' figures (``decide``), and the
published figure it is set against. The specs live in the axis modules of
benchmarks/validity_axes/ and are written before any run; this module only runs them:

1. plan: every (arm, seed) of the chosen claims, arms that two claims share trained once (the
   same split, settings and seed give the same run);
2. run: ``workers`` runs at a time (one CPU thread each), each into its own directory under
   ``runs``; a finished run is reused, so an interrupted protocol continues where it stopped;
3. judge: per arm, which seeds learned (met the learned rule: per-length-mean validation exact
   match at or above the threshold at two consecutive evaluations, then ``extra`` x the steps
   taken more); an arm learned when at least half its seeds did. The verdict of a claim is
   ``not learned`` when an arm it needs did not learn, or a premise its rule states was not met
   (``Decision.unmet``; nothing was tested), else ``holds`` or
   ``does not hold`` by its rule; a comparison whose *losing* arm did not learn is marked
   vacuous beside the verdict (that arm's failure to generalize says nothing);
4. report: one JSON document (every claim, arm, seed figure and the run context) and one
   markdown page rendered from it, docs/validity.md. Running one axis replaces that axis's
   claims in the committed JSON and renders the page again.

Figures a rule reads come from the arms' per-seed results (gengap.baselines.training):
``id`` is validation exact match averaged over input lengths (each length once), ``ood`` test
exact match, ``score`` Deletang et al.'s length score (per-token accuracy averaged over the
test lengths).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import math
import os
import platform
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

BENCHMARKS = Path(__file__).resolve().parent
ROOT = BENCHMARKS.parent
for _path in (str(ROOT), str(BENCHMARKS)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

VERDICTS = ("holds", "does not hold", "not learned")
CODE = ("gengap", "baselines", "generators", "splits", "benchmarks", "pyproject.toml")  # what a run's figures depend on
TIMING = "protocol-timing.json"  # a run's wall and CPU seconds and the commit it was trained at, kept beside its results
EDITION = 9


def frozen(mapping: Mapping[str, Any] | None) -> tuple[tuple[str, Any], ...]:
    """A mapping as a sorted tuple of pairs (lists become tuples), so specs stay hashable."""
    def freeze(value: Any) -> Any:
        if isinstance(value, Mapping):
            return frozen(value)
        if isinstance(value, (list, tuple)):
            return tuple(freeze(v) for v in value)
        return value

    return tuple(sorted((str(k), freeze(v)) for k, v in (mapping or {}).items()))


def thawed(pairs: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """The mapping of :func:`frozen` (nested pairs become dicts, tuples lists)."""
    def thaw(value: Any) -> Any:
        if isinstance(value, tuple) and value and all(isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], str) for v in value):
            return thawed(value)
        if isinstance(value, tuple):
            return [thaw(v) for v in value]
        return value

    return {k: thaw(v) for k, v in pairs}


@dataclass(frozen=True)
class Build:
    """How a config's split is made: ``module:function(**args)``, a pure function of its
    arguments (fixed seeds) returning a gengap.splits.SplitResult."""

    builder: str
    args: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def of(cls, builder: str, **args: Any) -> "Build":
        return cls(builder, frozen(args))

    def key(self) -> str:
        return json.dumps([self.builder, thawed(self.args)], sort_keys=True)


@dataclass(frozen=True)
class Learned:
    """The learned rule. ``stop`` (default): a seed learned when its per-length-mean validation
    exact match reached ``threshold`` at two consecutive evaluations (training then goes on
    ``extra`` x the steps taken, and stops; the step cap bounds both). Without ``stop`` the run
    trains every step (claims that must not stop early) and a seed learned when its final
    per-length-mean validation exact match is at or above the threshold."""

    threshold: float = 0.95
    extra: float = 0.25
    stop: bool = True
    metric: str = "id"  # id: the validation figure above; train: final train exact match (memorization; stop must be false)
    over: str = "lengths"  # the ID figure of the stopping rule: averaged over input lengths, or over validation records

    def settings(self) -> dict[str, Any]:
        if not self.stop:
            return {}
        return {"until_id": self.threshold, "until_extra": self.extra, **({"until_over": self.over} if self.over != "lengths" else {})}

    def met(self, seed: Mapping[str, Any]) -> bool:
        if self.stop:
            return bool(seed.get("converged"))
        value = seed.get("train_exact_match") if self.metric == "train" else id_figure(seed)
        return value is not None and value >= self.threshold

    def describe(self) -> str:
        if not self.stop and self.metric == "train":
            return f"final train exact match ≥ {self.threshold} (memorized), every step trained (no early stop)"
        if not self.stop:
            return f"final ID (exact match averaged over input lengths) ≥ {self.threshold}, every step trained (no early stop)"
        figure = "exact match over validation records" if self.over == "records" else "exact match averaged over input lengths"
        return f"ID ({figure}) ≥ {self.threshold} at two consecutive evaluations, then {self.extra:.0%} more steps"


@dataclass(frozen=True)
class Arm:
    """One model trained on one config: ``label`` names it in its claim (unique there)."""

    label: str
    config: str
    build: Build
    train: tuple[tuple[str, Any], ...]
    seeds: tuple[int, ...] = (0,)
    preset: str = "tiny"
    cost: float = 1.0  # a rough rank of a run's cost: the longest start first

    def settings(self, learned: Learned) -> dict[str, Any]:
        """The arm's training settings (keyword overrides of gengap.baselines.training.TrainSettings)."""
        return {**learned.settings(), **thawed(self.train)}


Figures = Mapping[str, "ArmResult"]


@dataclass(frozen=True)
class Decision:
    """A rule's outcome: whether the claim holds, the measured figures in a line, and details for the report."""

    holds: bool
    measured: str
    details: Mapping[str, Any] = field(default_factory=dict)
    unmet: tuple[str, ...] = ()  # premises the rule states that the runs did not meet (e.g. "the contaminated model fit the cited part"): not learned


@dataclass(frozen=True)
class Claim:
    """A claim of the protocol (module doc)."""

    axis: str
    key: str
    title: str
    arms: tuple[Arm, ...]
    rule: str
    published: str
    decide: Callable[[Figures], Decision]
    learned: Learned = Learned()
    losing: tuple[str, ...] = ()  # arms expected to fail out of distribution: not learning marks the comparison vacuous
    optional: tuple[str, ...] = ()  # arms reported beside the claim that need not learn (no verdict rests on them)
    previous: str = ""  # what the previous edition measured
    setup: str = ""  # the set-up in a sentence (lengths, sizes, mode)

    def needed(self) -> list[str]:
        return [a.label for a in self.arms if a.label not in self.losing and a.label not in self.optional]


# -- runs ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """One (arm, seed) to train: its split, settings and folder."""

    config: str
    build: Build
    settings: tuple[tuple[str, Any], ...]
    preset: str
    seed: int
    cost: float

    @property
    def name(self) -> str:
        digest = hashlib.sha256(json.dumps([self.build.key(), thawed(self.settings), self.preset], sort_keys=True).encode()).hexdigest()
        arch = thawed(self.settings).get("arch", "transformer")
        return f"{self.config}/{arch}-{digest[:10]}-seed{self.seed}"


def plan(claims: Sequence[Claim]) -> dict[tuple[str, str, int], Run]:
    """Every (claim, arm label, seed) -> its run; an arm two claims share maps to one run."""
    runs: dict[str, Run] = {}
    out: dict[tuple[str, str, int], Run] = {}
    for claim in claims:
        for arm in claim.arms:
            for seed in arm.seeds:
                run = Run(arm.config, arm.build, frozen(arm.settings(claim.learned)), arm.preset, seed, arm.cost)
                out[(claim.key, arm.label, seed)] = runs.setdefault(run.name, run)
    return out


@lru_cache(maxsize=4)
def build_split(build: Build) -> Any:
    module, _, function = build.builder.partition(":")
    return getattr(importlib.import_module(module), function)(**thawed(build.args))


def train_run(run: Run, runs_dir: str, device: str = "cpu") -> dict[str, Any]:
    """Train and evaluate one run (or read it when finished); its results with wall and CPU seconds."""
    out = Path(runs_dir) / run.name
    if (out / "results.json").is_file():
        timing = json.loads((out / TIMING).read_text()) if (out / TIMING).is_file() else {}
        return {**json.loads((out / "results.json").read_text()), **timing, "reused": True, "run_dir": str(out)}
    from gengap.baselines.training import train_and_evaluate

    start, cpu = time.perf_counter(), time.process_time()
    split = build_split(run.build)
    results = train_and_evaluate(split, run.config, out=out, resume=out.exists(), progress=False, plots=False, preset=run.preset,
                                 seeds=(run.seed,), device=device, **thawed(run.settings))
    seed = results["per_seed"][0]
    print(f"{run.name}: ID {id_figure(seed):.3f} OOD {seed['ood_exact_match']:.3f} learned {bool(seed.get('converged'))} "
          f"(step {seed.get('stopped_at')}), {time.perf_counter() - start:.0f} s", flush=True)
    timing = {"wall_seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - cpu, "commit": code_commit()}
    (out / TIMING).write_text(json.dumps(timing) + "\n", encoding="utf-8")
    return {**results, **timing, "reused": False, "run_dir": str(out)}


def run_all(runs: Sequence[Run], runs_dir: Path, workers: int, device: str = "cpu") -> dict[str, dict[str, Any]]:
    """Results by run name; the costliest runs start first so the workers finish together."""
    ordered = sorted(runs, key=lambda r: -r.cost)
    if workers > 1 and len(ordered) > 1:
        import multiprocessing

        context = multiprocessing.get_context("spawn" if device != "cpu" else None)  # CUDA cannot be forked
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            results = list(pool.map(train_run, ordered, [str(runs_dir)] * len(ordered), [device] * len(ordered)))
    else:
        results = [train_run(run, str(runs_dir), device) for run in ordered]
    return {run.name: result for run, result in zip(ordered, results)}


# -- figures ------------------------------------------------------------------------------


def id_figure(seed: Mapping[str, Any]) -> float:
    """Validation exact match averaged over input lengths (exact match over records for results without it)."""
    value = seed.get("id_length_mean_exact_match")
    return float(value if value is not None else seed["id_exact_match"])


@dataclass
class ArmResult:
    """An arm's seeds (per-seed results of gengap.baselines.training) and whether it learned."""

    arm: Arm
    seeds: list[dict[str, Any]]
    results: list[dict[str, Any]]
    rule: Learned = Learned()

    @property
    def learned_seeds(self) -> list[dict[str, Any]]:
        return [s for s in self.seeds if self.rule.met(s)]

    @property
    def learned(self) -> bool:
        return 2 * len(self.learned_seeds) >= len(self.seeds)

    def values(self, key: str | Callable[[Mapping[str, Any]], Any], learned_only: bool = True) -> list[float]:
        """A figure of each (learned) seed; all seeds when none learned or learned_only is false."""
        pick = key if callable(key) else (lambda s: s.get(key))
        seeds = self.learned_seeds if learned_only and self.learned_seeds else self.seeds
        return [float(v) for v in (pick(s) for s in seeds) if v is not None]

    def mean(self, key: str | Callable[[Mapping[str, Any]], Any], learned_only: bool = True) -> float | None:
        values = self.values(key, learned_only)
        return sum(values) / len(values) if values else None

    def best(self, key: str | Callable[[Mapping[str, Any]], Any], learned_only: bool = True) -> float | None:
        values = self.values(key, learned_only)
        return max(values) if values else None

    @property
    def id(self) -> float | None:
        return self.mean(id_figure)

    @property
    def ood(self) -> float | None:
        return self.mean("ood_exact_match")

    @property
    def score(self) -> float | None:
        return self.best("ood_length_score")

    def summary(self) -> dict[str, Any]:
        return {
            "label": self.arm.label,
            "config": self.arm.config,
            "settings": thawed(self.arm.train),
            "seeds": [s["seed"] for s in self.seeds],
            "learned_seeds": [s["seed"] for s in self.learned_seeds],
            "learned": self.learned,
            "stopped_at": [s.get("stopped_at") for s in self.seeds],
            "learned_at": [s.get("learned_at") for s in self.seeds],
            "id": [round(id_figure(s), 4) for s in self.seeds],
            "id_records": [None if s.get("id_exact_match") is None else round(float(s["id_exact_match"]), 4) for s in self.seeds],
            "ood": [round(float(s["ood_exact_match"]), 4) for s in self.seeds],
            "score": [None if s.get("ood_length_score") is None else round(float(s["ood_length_score"]), 4) for s in self.seeds],
            "cpu_seconds": sum(r.get("cpu_seconds", 0.0) for r in self.results),
        }


def judge(claim: Claim, figures: Figures) -> dict[str, Any]:
    """The claim's verdict (module doc, step 3), rule outcome and the arms' summaries."""
    decision = claim.decide(figures)
    unlearned = [label for label in claim.needed() if not figures[label].learned] + list(decision.unmet)
    vacuous = [label for label in claim.losing if not figures[label].learned]
    verdict = "not learned" if unlearned else "holds" if decision.holds else "does not hold"
    return {
        "axis": claim.axis,
        "key": claim.key,
        "title": claim.title,
        "setup": claim.setup,
        "rule": claim.rule,
        "learned_rule": claim.learned.describe(),
        "published": claim.published,
        "previous": claim.previous,
        "verdict": verdict,
        "rule_outcome": decision.holds,
        "not_learned": unlearned,
        "vacuous": vacuous,
        "measured": decision.measured,
        "details": dict(decision.details),
        "arms": [figures[a.label].summary() for a in claim.arms],
        "cpu_minutes": sum(figures[a.label].summary()["cpu_seconds"] for a in claim.arms) / 60,
    }


def figures_of(claim: Claim, runs: Mapping[tuple[str, str, int], Run], results: Mapping[str, Mapping[str, Any]]) -> dict[str, ArmResult]:
    out = {}
    for arm in claim.arms:
        chosen = [results[runs[(claim.key, arm.label, seed)].name] for seed in arm.seeds]
        out[arm.label] = ArmResult(arm, [r["per_seed"][0] for r in chosen], chosen, claim.learned)
    return out


# -- the whole protocol -------------------------------------------------------------------


def code_commit() -> str:
    """The short commit of the checkout, "+changes" when tracked code (not docs) differs from it; "unknown" outside git."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True).stdout.strip()

    commit = git("rev-parse", "--short", "HEAD")
    if not commit:
        return "unknown"
    return commit + ("+changes" if git("status", "--porcelain", "--untracked-files=no", "--", *CODE) else "")


def run_commits(results: Mapping[str, Mapping[str, Any]]) -> dict[str, int]:
    """Runs per commit they were trained at (runs older than this record: "not recorded"), most runs first."""
    counts = Counter(result.get("commit") or "not recorded" for result in results.values())
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def context(command: str, start: float, results: Mapping[str, Mapping[str, Any]], axes: Sequence[str]) -> dict[str, Any]:
    return {
        "command": command,
        "machine": f"{os.cpu_count()} CPU cores ({platform.machine()}, Python {platform.python_version()})",
        "commit": code_commit(),
        "run_commits": run_commits(results),
        "date": time.strftime("%Y-%m-%d"),
        "wall_minutes": (time.perf_counter() - start) / 60,
        "runs": len(results),
        "reused": sum(1 for r in results.values() if r.get("reused")),
        "axes": list(axes),
    }


def run_cpu_minutes(results: Mapping[str, Mapping[str, Any]], names: Iterable[str]) -> float:
    """CPU minutes of the named runs, each counted once (claims of an axis share runs)."""
    return sum(float(results[name].get("cpu_seconds") or 0.0) for name in set(names)) / 60


def run_protocol(claims: Sequence[Claim], runs_dir: Path, workers: int, command: str, device: str = "cpu") -> dict[str, Any]:
    """Plan, run and judge the claims; the JSON document of their results."""
    start = time.perf_counter()
    runs = plan(claims)
    results = run_all(list(dict.fromkeys(runs.values())), runs_dir, workers, device)
    judged = [judge(claim, figures_of(claim, runs, results)) for claim in claims]
    axes = list(dict.fromkeys(c.axis for c in claims))
    ctx = context(command, start, results, axes)
    ctx["cpu_minutes"] = {axis: run_cpu_minutes(results, {run.name for (key, _, _), run in runs.items() if key in keys})
                          for axis in axes for keys in [{c.key for c in claims if c.axis == axis}]}
    ctx["cpu_minutes_all"] = run_cpu_minutes(results, set(results))
    return {"edition": EDITION, "claims": judged, "context": {axis: ctx for axis in axes}}


def merge(old: Mapping[str, Any] | None, new: Mapping[str, Any], order: Sequence[str]) -> dict[str, Any]:
    """The document with new's axes replacing old's (claims in axis order, then spec order)."""
    if not old or old.get("edition") != EDITION:
        old = {"claims": [], "context": {}}
    axes = set(new["context"])
    claims = [c for c in old["claims"] if c["axis"] not in axes] + list(new["claims"])
    rank = {axis: i for i, axis in enumerate(order)}
    claims.sort(key=lambda c: rank.get(c["axis"], len(rank)))
    contexts = {**{k: v for k, v in old["context"].items() if k not in axes}, **new["context"]}
    return {"edition": EDITION, "claims": claims, "context": {axis: contexts[axis] for axis in order if axis in contexts}}


def read_document(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def write_document(path: Path, document: Mapping[str, Any]) -> None:
    path.write_text(json.dumps(document, indent=1, default=str) + "\n", encoding="utf-8")


def fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else f"{value:.{digits}f}"
    return str(value)


def seeds_text(arms: Iterable[Mapping[str, Any]]) -> str:
    return "; ".join(f"{a['label']} {len(a['learned_seeds'])}/{len(a['seeds'])}" for a in arms)
