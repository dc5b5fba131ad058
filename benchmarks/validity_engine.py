"""The validity protocol's engine: every claim a declarative spec, one runner, one report.

A :class:`Claim` names the arms it compares (:class:`Arm`: a config's split, how to build it,
the training settings and seeds), the *learned* rule its arms must meet (:class:`Learned`),
the verdict rule in words and as a function of the arms' figures (``decide``, reading intervals
over seeds: benchmarks/validity_stats.py), its role (a claim, or a negative or positive
control), its tiers and an optional :class:`Premise` the splits alone decide. The specs live in
the axis modules of benchmarks/validity_axes/ and are written before any run; this module only
runs them:

1. check (edition 10): every arm of a claim has the same seeds (at least ``MIN_SEEDS``) and the
   same step budget, trained to it (no early stop; the scored checkpoint is the one validation
   selected): :func:`check_specs`, a SpecError before anything runs; premises are measured on
   the splits, and a claim whose premise is unmet is *not testable* and trains nothing;
2. plan: every (arm, seed) of the testable claims, arms that two claims share trained once (the
   same split, settings and seed give the same run);
3. run: ``workers`` runs at a time (one CPU thread each), each into its own directory under
   ``runs``; each judged run's *evidence* (what the rules read: the seed's result, its metric
   history, the run's header and timing) is written, compressed, beside the page as soon as the
   run finishes, with its sha256 in the document, so :func:`recompute` re-derives every verdict
   from shipped files alone. A finished run is reused: from its run directory, or, when that is
   gone (a fresh clone, another machine), from its evidence file, which names the run by its
   identity (config, split build, settings, preset, seed); so an interrupted protocol continues
   where it stopped, across machines, once its evidence is committed;
4. judge: per arm, which seeds learned; an arm learned when at least half its seeds did. The
   verdict of a claim is ``not learned`` when an arm it needs did not learn, or a premise its
   rule states was not met (``Decision.unmet``), else ``holds`` or ``does not hold`` by its
   rule; a comparison whose *losing* arm did not learn is marked vacuous beside the verdict.
   The verdict is then recomputed with each one seed left out of every arm: a holds that
   changes is *unstable* (not a holds), and every verdict records its stability;
5. report: one JSON document (every claim, arm, seed figure, the run context and the evidence
   map) and one markdown page rendered from it, docs/validity.md. Running one axis replaces that
   axis's claims in the committed JSON and renders the page again.

Figures a rule reads come from the arms' per-seed results (gengap.baselines.training):
``id`` is the scored checkpoint's validation figure (``selected_id``; older results: exact match
averaged over input lengths), ``ood`` test exact match, ``score`` Deletang et al.'s length score
(per-token accuracy averaged over the test lengths); :class:`ArmResult` means are over learned
seeds.
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

VERDICTS = ("holds", "does not hold", "not learned", "not testable", "unstable")
ROLES = ("claim", "negative control", "positive control")
TIERS = ("quick", "full")
MIN_SEEDS = 3  # every arm a claim compares, losing arms included (edition 10)
CODE = ("gengap", "baselines", "generators", "splits", "benchmarks", "pyproject.toml")  # what a run's figures depend on
TIMING = "protocol-timing.json"  # a run's wall and CPU seconds and the commit it was trained at, kept beside its results
EVIDENCE = "validity-evidence"  # beside the page: one compressed file per judged run, what the rules read
EDITION = 10


class SpecError(ValueError):
    """A claim spec breaks a rule of the protocol (equal seeds and budgets, no early stop): refused before any run."""


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
    """The learned rule.

    ``select`` (edition 10): every arm trains every step of its cap (equal budgets, no early stop)
    and the scored checkpoint is the one validation selected (gengap ``select: best``: the first
    evaluation with the highest ID figure ``over`` the whole validation part); a seed learned when
    that checkpoint's ID figure is at or above ``threshold``, so no seed counts as learned whose
    scored model is below it.

    ``stop``: a seed learned when its per-length-mean validation exact match reached ``threshold``
    at two consecutive evaluations (training then goes on ``extra`` x the steps taken, and stops;
    the step cap bounds both). Without ``stop`` or ``select`` the run trains every step and a seed
    learned when its final ID figure (``metric`` train: final train exact match) is at or above the
    threshold."""

    threshold: float = 0.95
    extra: float = 0.25
    stop: bool = True
    metric: str = "id"  # id: the validation figure above; train: final train exact match (memorization; stop must be false)
    over: str = "lengths"  # the ID figure: averaged over input lengths, over validation records, or weighted by train's length shares
    select: bool = False

    def settings(self) -> dict[str, Any]:
        if self.select:
            return {"select": "best", "until_over": self.over}
        if not self.stop:
            return {}
        return {"until_id": self.threshold, "until_extra": self.extra, **({"until_over": self.over} if self.over != "lengths" else {})}

    def met(self, seed: Mapping[str, Any]) -> bool:
        if self.select:
            value = seed.get("selected_id")
            return value is not None and float(value) >= self.threshold
        if self.stop:
            return bool(seed.get("converged"))
        value = seed.get("train_exact_match") if self.metric == "train" else id_figure(seed)
        return value is not None and value >= self.threshold

    def describe(self) -> str:
        figure = {"records": "exact match over validation records", "train_lengths": "exact match per input length weighted by "
                  "train's length shares"}.get(self.over, "exact match averaged over input lengths")
        if self.select:
            return (f"the checkpoint validation selected (the first evaluation with the highest ID, {figure}, on the whole validation "
                    f"part; every step of the cap trained) has ID ≥ {self.threshold}")
        if not self.stop and self.metric == "train":
            return f"final train exact match ≥ {self.threshold} (memorized), every step trained (no early stop)"
        if not self.stop:
            return f"final ID (exact match averaged over input lengths) ≥ {self.threshold}, every step trained (no early stop)"
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

    @property
    def steps(self) -> int | None:
        return thawed(self.train).get("steps")


Figures = Mapping[str, "ArmResult"]
Splits = Mapping[str, Any]  # arm label -> its gengap.splits.SplitResult


@dataclass(frozen=True)
class Decision:
    """A rule's outcome: whether the claim holds, the measured figures in a line, and details for the report."""

    holds: bool
    measured: str
    details: Mapping[str, Any] = field(default_factory=dict)
    unmet: tuple[str, ...] = ()  # premises the rule states that the runs did not meet (e.g. "the contaminated model fit the cited part"): not learned


@dataclass(frozen=True)
class Claim:
    """A claim of the protocol (module doc).

    ``role``: a claim, or a control: a *negative control* states that an effect is absent where it
    must be (it holds when the measurement does not fire), a *positive control* that a model can do
    what a claim says it fails at (a claim that could not fail without one). ``premise(splits)``
    returns what the claim's own premise needs and the splits alone do not give (before any run:
    the claim is *not testable* and trains nothing). ``level``: the interval's level its rule reads.
    ``tiers``: quick (a re-check of decided claims, <= 90 CPU min in all) and full."""

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
    role: str = "claim"
    premise: Callable[[Splits], tuple[str, ...]] | None = None
    level: float = 0.95
    tiers: tuple[str, ...] = ("full",)
    winner_only: bool = False  # no comparison: one model's figure decides (counted apart from comparative holds)
    compared: tuple[tuple[str, ...], ...] = ()  # the groups of arms the rule compares (each trains one budget); default: all arms

    def needed(self) -> list[str]:
        return [a.label for a in self.arms if a.label not in self.losing and a.label not in self.optional]

    @property
    def seeds(self) -> tuple[int, ...]:
        return tuple(sorted({s for a in self.arms for s in a.seeds}))


def spec_problems(claim: Claim) -> list[str]:
    """What breaks edition 10's rules in a claim: every arm the same seeds (at least MIN_SEEDS) and the
    same step budget, trained to it (no early stop), the checkpoint selected by validation, a known
    role and tier; empty when none."""
    problems = []
    seeds = {a.seeds for a in claim.arms}
    if len(seeds) != 1:
        problems.append(f"arms with different seeds ({', '.join(f'{a.label} {list(a.seeds)}' for a in claim.arms)})")
    elif len(claim.arms[0].seeds) < MIN_SEEDS:
        problems.append(f"{len(claim.arms[0].seeds)} seeds per arm, fewer than {MIN_SEEDS}")
    by_label = {a.label: a for a in claim.arms}
    for group in claim.compared or (tuple(by_label),):
        steps = {by_label[label].steps for label in group}
        if len(steps) != 1 or None in steps:
            problems.append(f"compared arms with different step budgets ({', '.join(f'{label} {by_label[label].steps}' for label in group)})")
    if claim.learned.stop and not claim.learned.select:
        problems.append("the learned rule stops early, so compared arms would train for different budgets")
    if claim.role not in ROLES:
        problems.append(f"role {claim.role!r} is not one of {', '.join(ROLES)}")
    if not claim.tiers or any(t not in TIERS for t in claim.tiers):
        problems.append(f"tiers {list(claim.tiers)} are not among {', '.join(TIERS)}")
    if not 0 < claim.level < 1:
        problems.append(f"level {claim.level} is not in (0, 1)")
    return [f"{claim.key}: {p}" for p in problems]


def check_specs(claims: Sequence[Claim]) -> None:
    """SpecError naming every problem of the claims (spec_problems; duplicate keys), before any run."""
    problems = [p for c in claims for p in spec_problems(c)]
    keys = Counter(c.key for c in claims)
    problems += [f"{key}: {n} claims share this key" for key, n in keys.items() if n > 1]
    if problems:
        raise SpecError("; ".join(problems))


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


def train_run(run: Run, runs_dir: str, device: str = "cpu", evidence: str | None = None) -> dict[str, Any]:
    """Train and evaluate one run (or read it when finished); its results with wall and CPU seconds.
    With ``evidence`` (a folder), a run trained here writes its evidence file there as it finishes."""
    result = _train_run(run, runs_dir, device)
    if evidence is not None and not result["reused"]:
        from gengap.generators.safe_files import atomic_write_bytes

        Path(evidence).mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(Path(evidence) / evidence_file(run.name), evidence_bytes(evidence_of(run.name, result)))
    return result


def _train_run(run: Run, runs_dir: str, device: str) -> dict[str, Any]:
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
    chosen = (f"selected at {seed['selected_step']}, ID {seed['selected_id']:.3f}" if seed.get("selected_id") is not None
              else f"learned {bool(seed.get('converged'))}")
    print(f"{run.name}: ID {id_figure(seed):.3f} OOD {seed['ood_exact_match']:.3f} {chosen} (step {seed.get('stopped_at')}), "
          f"{time.perf_counter() - start:.0f} s", flush=True)
    timing = {"wall_seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - cpu, "commit": code_commit(),
              "machine": cpu_model()}
    (out / TIMING).write_text(json.dumps(timing) + "\n", encoding="utf-8")
    return {**results, **timing, "reused": False, "run_dir": str(out)}


def run_all(runs: Sequence[Run], runs_dir: Path, workers: int, device: str = "cpu",
            evidence: Path | None = None) -> dict[str, dict[str, Any]]:
    """Results by run name; the costliest runs start first so the workers finish together (with
    ``evidence``, each run trained here writes its evidence there as it finishes)."""
    ordered = sorted(runs, key=lambda r: -r.cost)
    folder = None if evidence is None else str(evidence)
    if workers > 1 and len(ordered) > 1:
        import multiprocessing

        context = multiprocessing.get_context("spawn" if device != "cpu" else None)  # CUDA cannot be forked
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            n = len(ordered)
            results = list(pool.map(train_run, ordered, [str(runs_dir)] * n, [device] * n, [folder] * n))
    else:
        results = [train_run(run, str(runs_dir), device, folder) for run in ordered]
    return {run.name: result for run, result in zip(ordered, results)}


def shipped_runs(runs: Sequence[Run], runs_dir: Path, evidence: Path | None) -> dict[str, dict[str, Any]]:
    """run name -> its evidence record, for the runs that have no finished run directory but an
    evidence file in ``evidence`` (trained by an earlier invocation, perhaps on another machine);
    SpecError when such a file is not that run's evidence."""
    import gzip

    out: dict[str, dict[str, Any]] = {}
    if evidence is None:
        return out
    for run in runs:
        path = evidence / evidence_file(run.name)
        if (runs_dir / run.name / "results.json").is_file() or not path.is_file():
            continue
        try:
            record = json.loads(gzip.decompress(path.read_bytes()).decode("utf-8"))
        except (OSError, ValueError, EOFError):
            record = None
        if not isinstance(record, dict) or record.get("format") != EVIDENCE_FORMAT or record.get("run") != run.name:
            raise SpecError(f"{path} is not the evidence of run {run.name}: remove it to train the run again")
        out[run.name] = record
    return out


# -- evidence: what the rules read, shipped with the page ------------------------------------

EVIDENCE_FORMAT = "gengap-validity-evidence/1"
HEADER = ("config", "arch", "pos", "output_mode", "preset", "steps", "batch_size", "data", "divergence", "select")


def evidence_of(name: str, result: Mapping[str, Any]) -> dict[str, Any]:
    """What the rules read of one run (a run trains one seed): its results' header (config, sizes,
    divergence), the seed's result without its sample of mistakes, the seed's metric history
    (from the run directory's metrics.jsonl) and the run's timing."""
    from gengap.baselines.dynamics import read_history

    seed = {k: v for k, v in result["per_seed"][0].items() if k != "mistakes"}
    history = [row for row in read_history(result["run_dir"]) if row.get("seed") == seed["seed"]] if result.get("run_dir") else []
    header = {k: result[k] for k in HEADER if k in result}
    timing = {k: result.get(k) for k in ("wall_seconds", "cpu_seconds", "commit", "machine") if k in result or k != "machine"}
    return {"format": EVIDENCE_FORMAT, "run": name, "results": header, "seed": seed, "history": history, "timing": timing}


def evidence_file(name: str) -> str:
    """The file name of a run's evidence (its run name, folders joined by ``__``)."""
    return name.replace("/", "__") + ".json.gz"


def evidence_bytes(record: Mapping[str, Any]) -> bytes:
    """One evidence record as canonical JSON, gzip-compressed without a timestamp (the same record, the same bytes)."""
    import gzip

    text = json.dumps(record, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


def write_evidence(folder: Path, records: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Write each record to folder (atomically); run name -> sha256 of its file."""
    from gengap.generators.safe_files import atomic_write_bytes

    folder.mkdir(parents=True, exist_ok=True)
    shipped = {}
    for name in sorted(records):
        data = evidence_bytes(records[name])
        atomic_write_bytes(folder / evidence_file(name), data)
        shipped[name] = hashlib.sha256(data).hexdigest()
    return shipped


def read_evidence(folder: Path, name: str, sha256: str | None) -> dict[str, Any]:
    """A run's shipped evidence, checked against the sha256 the document records (SpecError when
    missing, altered or not evidence)."""
    import gzip

    path = folder / evidence_file(name)
    try:
        data = path.read_bytes()
    except OSError:
        raise SpecError(f"the evidence of run {name} is missing: {path}") from None
    if sha256 is None or hashlib.sha256(data).hexdigest() != sha256:
        raise SpecError(f"{path} does not match the sha256 the document records for run {name}")
    record = json.loads(gzip.decompress(data).decode("utf-8"))
    if not isinstance(record, dict) or record.get("format") != EVIDENCE_FORMAT or record.get("run") != name:
        raise SpecError(f"{path} is not the evidence of run {name}")
    return record


# -- figures ------------------------------------------------------------------------------


def id_figure(seed: Mapping[str, Any]) -> float:
    """Validation exact match averaged over input lengths (exact match over records for results without it)."""
    value = seed.get("id_length_mean_exact_match")
    return float(value if value is not None else seed["id_exact_match"])


def scored_id(seed: Mapping[str, Any]) -> float | None:
    """The ID figure of the scored checkpoint: the one selection read (select best), else the per-length mean."""
    value = seed.get("selected_id")
    return float(value) if value is not None else id_figure(seed)


@dataclass
class ArmResult:
    """An arm's seeds (per-seed results, each with its metric ``history``), the runs' headers, and whether it learned."""

    arm: Arm
    seeds: list[dict[str, Any]]
    results: list[dict[str, Any]]
    rule: Learned = Learned()

    @property
    def learned_seeds(self) -> list[dict[str, Any]]:
        return [s for s in self.seeds if self.rule.met(s)]

    @property
    def learned(self) -> bool:
        return bool(self.seeds) and 2 * len(self.learned_seeds) >= len(self.seeds)

    def without(self, seed: int) -> "ArmResult":
        """The arm with one seed left out."""
        keep = [i for i, s in enumerate(self.seeds) if s["seed"] != seed]
        return ArmResult(self.arm, [self.seeds[i] for i in keep], [self.results[i] for i in keep], self.rule)

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
        return self.mean(scored_id)

    @property
    def ood(self) -> float | None:
        return self.mean("ood_exact_match")

    @property
    def score(self) -> float | None:
        return self.mean("ood_length_score")

    def summary(self) -> dict[str, Any]:
        def rounded(values: Iterable[Any]) -> list[float | None]:
            return [None if v is None else round(float(v), 4) for v in values]

        return {
            "label": self.arm.label,
            "config": self.arm.config,
            "settings": thawed(self.arm.train),
            "runs": [r.get("run") for r in self.results],
            "seeds": [s["seed"] for s in self.seeds],
            "learned_seeds": [s["seed"] for s in self.learned_seeds],
            "learned": self.learned,
            "steps": [s.get("steps") for s in self.seeds],
            "stopped_at": [s.get("stopped_at") for s in self.seeds],
            "learned_at": [s.get("learned_at") for s in self.seeds],
            "selected_at": [s.get("selected_step") for s in self.seeds],
            "id_selected": rounded(s.get("selected_id") for s in self.seeds),
            "id": rounded(id_figure(s) for s in self.seeds),
            "id_records": rounded(s.get("id_exact_match") for s in self.seeds),
            "ood": rounded(s.get("ood_exact_match") for s in self.seeds),
            "score": rounded(s.get("ood_length_score") for s in self.seeds),
            "cpu_seconds": sum(float(r.get("cpu_seconds") or 0.0) for r in self.results),
        }


def outcome(claim: Claim, figures: Figures) -> tuple[str, Decision, list[str], list[str]]:
    """(verdict before stability, the rule's decision, arms or premises not learned, losing arms not learned)."""
    decision = claim.decide(figures)
    unlearned = [label for label in claim.needed() if not figures[label].learned] + list(decision.unmet)
    vacuous = [label for label in claim.losing if not figures[label].learned]
    verdict = "not learned" if unlearned else "holds" if decision.holds else "does not hold"
    return verdict, decision, unlearned, vacuous


def left_out(claim: Claim, figures: Figures) -> dict[str, str]:
    """The verdict with each one seed left out of every arm (seed -> verdict); empty with fewer than 2 seeds."""
    seeds = sorted({s["seed"] for f in figures.values() for s in f.seeds})
    if len(seeds) < 2:
        return {}
    return {str(seed): outcome(claim, {label: f.without(seed) for label, f in figures.items()})[0] for seed in seeds}


def _header(claim: Claim) -> dict[str, Any]:
    return {
        "axis": claim.axis,
        "key": claim.key,
        "title": claim.title,
        "role": claim.role,
        "tiers": list(claim.tiers),
        "setup": claim.setup,
        "rule": claim.rule,
        "level": claim.level,
        "learned_rule": claim.learned.describe(),
        "published": claim.published,
        "previous": claim.previous,
        "winner_only": claim.winner_only,
    }


def judge(claim: Claim, figures: Figures, premise: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The claim's verdict (module doc, step 3): the rule on every seed, then with each one seed left
    out; a holds that changes when a seed is left out is *unstable*, not a holds."""
    verdict, decision, unlearned, vacuous = outcome(claim, figures)
    loo = left_out(claim, figures)
    stable = all(v == verdict for v in loo.values()) if loo else None
    counts = [len(f.learned_seeds or f.seeds) for f in figures.values()]
    from validity_stats import resolution

    return {
        **_header(claim),
        "verdict": "unstable" if verdict == "holds" and stable is False else verdict,
        "rule_verdict": verdict,
        "stability": "n/a" if stable is None else "stable" if stable else "unstable",
        "left_out": loo,
        "resolution": resolution(counts, claim.level),
        "premise": dict(premise or {}),
        "rule_outcome": decision.holds,
        "not_learned": unlearned,
        "vacuous": vacuous,
        "measured": decision.measured,
        "details": dict(decision.details),
        "arms": [figures[a.label].summary() for a in claim.arms],
        "cpu_minutes": sum(figures[a.label].summary()["cpu_seconds"] for a in claim.arms) / 60,
    }


def not_testable(claim: Claim, premise: Mapping[str, Any], unmet: Sequence[str]) -> dict[str, Any]:
    """The entry of a claim whose premise the splits do not meet: nothing trained for it."""
    return {
        **_header(claim),
        "verdict": "not testable",
        "rule_verdict": "not testable",
        "stability": "n/a",
        "left_out": {},
        "resolution": None,
        "premise": dict(premise),
        "rule_outcome": None,
        "not_learned": [],
        "vacuous": [],
        "measured": "premise not met: " + "; ".join(unmet),
        "details": {},
        "arms": [{"label": a.label, "config": a.config, "settings": thawed(a.train), "runs": [], "seeds": list(a.seeds),
                  "learned_seeds": [], "learned": None, "cpu_seconds": 0.0} for a in claim.arms],
        "cpu_minutes": 0.0,
    }


def figures_of(claim: Claim, runs: Mapping[tuple[str, str, int], Run], records: Mapping[str, Mapping[str, Any]]) -> dict[str, ArmResult]:
    """Each arm's figures from the evidence records of its runs (run name -> evidence_of's record)."""
    out = {}
    for arm in claim.arms:
        chosen = [records[runs[(claim.key, arm.label, seed)].name] for seed in arm.seeds]
        seeds = [{**r["seed"], "history": r["history"]} for r in chosen]
        results = [{**r["results"], **r["timing"], "run": r["run"]} for r in chosen]
        out[arm.label] = ArmResult(arm, seeds, results, claim.learned)
    return out


# -- premises: what a claim's splits must give before it trains ------------------------------


@dataclass(frozen=True)
class Premise:
    """A premise the splits alone decide: ``facts(splits)`` measures them (a JSON-able mapping kept
    in the document), ``unmet(facts)`` names what is not met (empty: testable)."""

    text: str
    facts: Callable[[Splits], Mapping[str, Any]]
    unmet: Callable[[Mapping[str, Any]], tuple[str, ...]]


def premise_facts(claims: Sequence[Claim]) -> dict[str, dict[str, Any]]:
    """claim key -> its premise's facts, for the claims that state a premise (their splits are built here)."""
    out = {}
    for claim in claims:
        premise = claim.premise
        if premise is not None:
            out[claim.key] = dict(premise.facts({a.label: build_split(a.build) for a in claim.arms}))
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


def cpu_model() -> str:
    """The CPU a run trained on (its model name and whether it has AVX-512): float training is
    bit-identical run to run on one machine, not across CPU types, so each run records it."""
    info: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            info.setdefault(key.strip(), value.strip())  # the first CPU's
    except OSError:
        pass
    model = info.get("model name") or platform.processor() or platform.machine()
    return f"{model} ({platform.machine()}{', AVX-512' if 'avx512f' in info.get('flags', '').split() else ''})"


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
        "run_machines": dict(Counter(result.get("machine") or "not recorded" for result in results.values()).most_common()),
        "date": time.strftime("%Y-%m-%d"),
        "wall_minutes": (time.perf_counter() - start) / 60,
        "runs": len(results),
        "reused": sum(1 for r in results.values() if r.get("reused")),
        "reused_from_evidence": sum(1 for r in results.values() if r.get("from_evidence")),
        "axes": list(axes),
    }


def run_cpu_minutes(results: Mapping[str, Mapping[str, Any]], names: Iterable[str]) -> float:
    """CPU minutes of the named runs, each counted once (claims of an axis share runs)."""
    return sum(float(results[name].get("cpu_seconds") or 0.0) for name in set(names)) / 60


def judge_all(claims: Sequence[Claim], premises: Mapping[str, Mapping[str, Any]], records: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every claim judged from the evidence records of its runs; a claim whose premise is unmet is not testable."""
    judged = []
    testable = [c for c in claims if not (c.premise and c.premise.unmet(premises[c.key]))]
    runs = plan(testable)
    for claim in claims:
        if claim in testable:
            judged.append(judge(claim, figures_of(claim, runs, records), premises.get(claim.key)))
        else:
            judged.append(not_testable(claim, premises[claim.key], claim.premise.unmet(premises[claim.key])))  # type: ignore[union-attr]
    return judged


def run_protocol(claims: Sequence[Claim], runs_dir: Path, workers: int, command: str, device: str = "cpu",
                 evidence: Path | None = None, tier: str = "full") -> dict[str, Any]:
    """Check the premises, plan, run and judge the claims; the JSON document of their results (with
    ``evidence``, every judged run's evidence written there and its sha256 in the document)."""
    start = time.perf_counter()
    premises = premise_facts(claims)
    testable = [c for c in claims if not (c.premise and c.premise.unmet(premises[c.key]))]
    runs = plan(testable)
    planned = list(dict.fromkeys(runs.values()))
    earlier = shipped_runs(planned, runs_dir, evidence)
    if earlier:
        print(f"{len(earlier)} of {len(planned)} runs reused from their evidence files in {evidence}", flush=True)
    trained = run_all([run for run in planned if run.name not in earlier], runs_dir, workers, device, evidence)
    records = {name: evidence_of(name, result) for name, result in trained.items()}
    shipped = write_evidence(evidence, records) if evidence is not None else {}
    for name in earlier:  # kept as they are: their bytes are what the document's sha256 names
        shipped[name] = hashlib.sha256((evidence / evidence_file(name)).read_bytes()).hexdigest()  # type: ignore[operator]
    records.update(earlier)
    shipped = dict(sorted(shipped.items()))
    results = {**trained, **{name: {**record["timing"], "reused": True, "from_evidence": True} for name, record in earlier.items()}}
    judged = judge_all(claims, premises, records)
    axes = list(dict.fromkeys(c.axis for c in claims))
    ctx = context(command, start, results, axes)
    ctx["cpu_minutes"] = {axis: run_cpu_minutes(results, {run.name for (key, _, _), run in runs.items() if key in keys})
                          for axis in axes for keys in [{c.key for c in claims if c.axis == axis}]}
    ctx["cpu_minutes_all"] = run_cpu_minutes(results, set(results))
    return {"edition": EDITION, "tier": tier, "claims": judged, "context": {axis: ctx for axis in axes}, "evidence": shipped,
            "run_cpu_seconds": {name: float(result.get("cpu_seconds") or 0.0) for name, result in sorted(results.items())}}


def recompute(document: Mapping[str, Any], claims: Sequence[Claim], evidence: Path) -> dict[str, Any]:
    """The document re-derived from shipped files alone: every claim of ``document`` judged again by
    its current spec from the evidence the document names (each file checked against its sha256)
    and the premise facts it records; no training, no split building. Context and evidence map are
    the document's."""
    by_key = {c.key: c for c in claims}
    missing = [c["key"] for c in document["claims"] if c["key"] not in by_key]
    if missing:
        raise SpecError(f"the document holds claims no spec defines: {', '.join(missing)}")
    chosen = [by_key[c["key"]] for c in document["claims"]]
    premises = {c["key"]: dict(c.get("premise") or {}) for c in document["claims"] if by_key[c["key"]].premise is not None}
    testable = [c for c in chosen if not (c.premise and c.premise.unmet(premises[c.key]))]
    shipped = document.get("evidence") or {}
    names = {run.name for run in plan(testable).values()}
    records = {name: read_evidence(evidence, name, shipped.get(name)) for name in sorted(names)}
    return {**document, "claims": judge_all(chosen, premises, records)}


def merge(old: Mapping[str, Any] | None, new: Mapping[str, Any], order: Sequence[str]) -> dict[str, Any]:
    """The document with new's axes replacing old's (claims in axis order, then spec order); the
    evidence map keeps the runs the merged claims name."""
    if not old or old.get("edition") != EDITION or old.get("tier", "full") != new.get("tier", "full"):
        old = {"claims": [], "context": {}, "evidence": {}}
    axes = set(new["context"])
    claims = [c for c in old["claims"] if c["axis"] not in axes] + list(new["claims"])
    rank = {axis: i for i, axis in enumerate(order)}
    claims.sort(key=lambda c: rank.get(c["axis"], len(rank)))
    contexts = {**{k: v for k, v in old["context"].items() if k not in axes}, **new["context"]}
    shipped = {**(old.get("evidence") or {}), **(new.get("evidence") or {})}
    seconds = {**(old.get("run_cpu_seconds") or {}), **(new.get("run_cpu_seconds") or {})}
    named = {run for c in claims for arm in c["arms"] for run in arm.get("runs") or []}
    return {"edition": EDITION, "tier": new.get("tier", "full"), "claims": claims,
            "context": {axis: contexts[axis] for axis in order if axis in contexts},
            "evidence": {name: shipped[name] for name in sorted(named) if name in shipped},
            "run_cpu_seconds": {name: seconds[name] for name in sorted(named) if name in seconds}}


def read_document(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def document_text(document: Mapping[str, Any]) -> str:
    return json.dumps(document, indent=1, default=str) + "\n"


def write_document(path: Path, document: Mapping[str, Any]) -> None:
    path.write_text(document_text(document), encoding="utf-8")


def fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else f"{value:.{digits}f}"
    return str(value)


def seeds_text(arms: Iterable[Mapping[str, Any]]) -> str:
    return "; ".join(f"{a['label']} {len(a['learned_seeds'])}/{len(a['seeds'])}" for a in arms)
