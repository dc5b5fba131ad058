"""Fresh test parts: a new test part for a released config, drawn by the config's own test rule
from a seed that is not the release's, holding no input of the release.

A static test part leaks into pretraining corpora; a generator can draw another one nobody has
seen. ``draw_fresh(release, config, n, seed)`` reads the release (every data file checked
against its manifest, so the fingerprint it names is the release's: gengap.release_view) and
draws n records from the seed of stream ``fresh`` (seed63(config seed, "fresh", seed),
gengap.generators.seeding), keeping none whose input occurs anywhere in the release (any
config, any part, compared without cue or task marker: gengap.generators.exclusion) and no
input twice. "The same rule" is, for each kind of config:

- a sampled length or level split: records of the test side's own parameter settings (its
  size ranges, its levels), spread evenly over them as the cited part is;
- a pool split whose strategy has a test rule on one record (gengap.splits.base.Strategy.test_rule:
  iid, length, difficulty, holdout, category without per_category, gotu): records of the
  pool's parameters that the rule sends to test, generated afresh (``pool: {n: N}``) or taken
  from the records of the task's enumeration that the release does not hold (``pool: all``),
  chosen uniformly;
- MCD: candidates of the pool's parameters (or the enumeration's unreleased records), as many
  per test record as the cited search left unused per test record, and the MCD search with the
  config's train part held fixed (gengap.splits.mcd.search_test), aiming at the cited test
  part's compound divergence under the config's atom bound and steps.

Refused with one line (FreshError): multi-task configs, configs with shortcut cues, strategies
whose test side depends on the whole pool (facts, rule_holdout, category with per_category),
and draws that cannot find n fresh records (an enumeration used up, or candidates that the rule
or the release leave too few of).

The report (``fresh.json``) sets the fresh part's divergences from the config's train part,
its novelty relative to that part and its difficulty histograms beside the cited test part's,
computed the same way (and as the split reports compute them), and ``length_shift``: the
two-sample KS statistic of the two parts' input lengths against a bound fixed in advance
(gengap.fresh_shift), a warning when it exceeds it (the release holding most short inputs
makes a fresh part longer than the cited one); it names the
release, its fingerprint, the seeds, the candidates drawn and the data file's sha256. The same
release, config, n and seed give the same bytes (gengap.fresh_verify checks a fresh part).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from gengap.ground.files import atomic_directory
from gengap.releases.fresh_shift import length_shift, shift_warning
from gengap.generators import BlockPlan, dumps_record, get_task
from gengap.generators.jsonl import sealed_json_text
from gengap.generators.batch import Record
from gengap.generators.exclusion import Exclusion
from gengap.generators.params import Params
from gengap.generators.seeding import fresh_rng, fresh_round_seed, fresh_seed
from gengap.releases.multitask import is_multitask
from gengap.ground.ownership import Product
from gengap.releases.release_view import ReleaseView, read_release
from gengap.splits import SplitError, get_strategy, make_options
from gengap.splits.api import even_counts, size_settings
from gengap.splits.atoms import DERIVATION_COMPOUNDS, CompoundDefinition, record_atoms, record_compounds
from gengap.splits.divergence import atom_divergence, compound_divergence
from gengap.splits.mcd import TARGET_TOLERANCE, TEST, McdOptions, search_test
from gengap.splits.novelty import NOVELTY_KEY, novelty_summary, strip
from gengap.splits.precision import rounded
from gengap.splits.ranges import parse_ranges

FORMAT = "gengap-fresh/1"
MARKER = "fresh.json"
DATA = "test.jsonl"
ROUNDS = 6  # candidate rounds per setting: max(MIN_CANDIDATES, 2 x its share) x 1, 2, 4, ... 32
MIN_CANDIDATES = 1000


class FreshError(ValueError):
    """A fresh test part cannot be drawn for this config (one line: why)."""


@dataclass(frozen=True)
class FreshPart:
    """The records of a fresh test part and its report."""

    records: list[Record]
    report: dict[str, Any]

    def data(self) -> bytes:
        """The bytes of test.jsonl."""
        return records_bytes(self.records)

    def report_text(self) -> str:
        """The text of fresh.json, sealed by the sha256 of its own text (gengap.ownership)."""
        return sealed_json_text(self.report, 2)


def records_bytes(records: Iterable[Record]) -> bytes:
    return "".join(dumps_record(r) + "\n" for r in records).encode()


def fresh_files(report: Any, read: Any = None) -> dict[str, str] | None:
    """The files of a fresh test part whose fresh.json is report, with the sha256 fresh.json
    gives them (None: not one gengap wrote). The marker itself is sealed (FRESH)."""
    if not isinstance(report, dict) or report.get("format") != FORMAT:
        return None
    if not isinstance(report.get("file"), dict) or report["file"].get("path") != DATA:
        return None
    return {DATA: report["file"].get("sha256")}


FRESH = Product("fresh test part", MARKER, fresh_files, sealed_indent=2)


@dataclass
class Tally:
    """What became of the candidates examined."""

    drawn: int = 0
    off_rule: int = 0  # not on the test side
    in_release: int = 0  # on the test side, but their input is in the release
    repeated: int = 0  # their input was already taken

    def to_dict(self) -> dict[str, int]:
        return {"drawn": self.drawn, "off_rule": self.off_rule, "in_release": self.in_release, "repeated": self.repeated}


@dataclass(frozen=True)
class Rule:
    """How a config's test part is drawn afresh: from generated settings or the enumeration, kept by accept."""

    text: str  # one line: what "the same rule" is for this config
    settings: list[Params]  # generated candidates, one stream per setting (empty: the enumeration)
    accept: Callable[[Record], bool]
    mcd: McdOptions | None = None
    params: dict[str, Any] = field(default_factory=dict)  # the pool's parameters (an enumeration)


def _always(record: Record) -> bool:
    return True


def config_rule(entry: dict[str, Any]) -> Rule:
    """The rule of a resolved suite entry (module doc); FreshError where there is none."""
    name = entry["name"]
    if is_multitask(entry):
        raise FreshError(f"{name}: a multi-task config has no fresh test part (its tasks are split together, not one by one)")
    if "cue" in entry:
        raise FreshError(f"{name}: its records carry shortcut cues; fresh test parts are drawn for configs without cues")
    task = get_task(entry["task"])
    if entry["kind"] == "sampled_length":
        ranges = parse_ranges(entry["test_range"], "test_range")
        spans = ", ".join(f"{lo}..{hi}" for lo, hi in ranges)
        text = f"{task.name} with {task.size_knob} in {spans}, spread evenly over the test ranges as the cited part"
        return Rule(text, size_settings(task.name, ranges, entry["base_params"]), _always)
    if entry["kind"] == "sampled_level":
        levels = ", ".join(str(k) for k in entry["test_levels"])
        return Rule(f"{task.name} at levels {levels}, spread evenly over them as the cited part", [task.level(k) for k in entry["test_levels"]], _always)
    strategy = get_strategy(entry["strategy"])
    options = make_options(strategy, entry["options"])
    settings = [] if entry["pool"] == "all" else [task.make_params(entry["params"])]
    source = f"records of {task.name}'s enumeration that the release does not hold" if not settings else f"new records of {task.name} with the pool's parameters"
    if isinstance(options, McdOptions):
        text = f"MCD: {source}, chosen by the MCD search against the config's train part, which stays fixed"
        return Rule(text, settings, _always, options, entry["params"])
    if strategy.name == "iid":
        return Rule(f"{source} (iid: its test side is a uniform share of the pool, so any record)", settings, _always, None, entry["params"])
    accept = strategy.test_rule(options)
    if accept is None:
        raise FreshError(f"{name}: strategy {strategy.name} sends a record to test by the whole pool, not by a rule on one record, so it has no fresh test part")
    shown = _options_text(entry["options"], strategy.options_type().to_dict())
    return Rule(f"{source} that {strategy.name}'s test rule accepts ({shown})", settings, accept, None, entry["params"])


def _options_text(options: dict[str, Any], defaults: dict[str, Any]) -> str:
    """The options set away from their defaults, as key=value (validation and exposure left out)."""
    skipped = ("validation_fraction", "exposure", "exposure_copies", "primitive_repeats", "exposure_repeats")
    shown = {k: v for k, v in options.items() if defaults.get(k) != v and k not in skipped}
    return ", ".join(f"{k}={v}" for k, v in shown.items()) or "its default options"


def draw_fresh(release: str | Path | ReleaseView, config: str, n: int, seed: int) -> FreshPart:
    """A fresh test part of n records for a config of a release (module doc), from draw `seed`."""
    if n < 1:
        raise FreshError(f"a fresh test part needs at least one record, got {n}")
    if seed < 0:
        raise FreshError(f"the seed of a fresh draw is non-negative, got {seed}")
    view = release if isinstance(release, ReleaseView) else read_release(release, keep=(config,))
    entry = view.entry(config)
    rule = config_rule(entry)
    manifest_config = view.config(config)
    derived = fresh_seed(int(manifest_config["seed"]), seed)
    train = view.part(config, "train")
    others = [str(e.get("name")) for e in view.manifest["suite"]["entries"] if e.get("name") != config and e.get("task") == entry.get("task")]
    tally = Tally()
    search: dict[str, Any] | None = None
    warnings: list[str] = []
    try:
        if rule.mcd is not None:
            records, search, warnings = _mcd_part(entry, manifest_config["report"], rule, train, n, derived, view.inputs, tally, others)
        elif rule.settings:
            records = _generated(entry, rule, even_counts(n, rule.settings), derived, view.inputs, tally)
        else:
            records = _choose(_enumerated(entry, rule, view.inputs, tally), n, fresh_rng(derived), entry["name"], tally, others)
    except SplitError as err:
        raise FreshError(f"{config}: {err}") from None
    items = TrainItems.of_options(train, entry.get("options") or {})
    _, novelty = part_figures(items, records)
    records = [{**strip(r), NOVELTY_KEY: own} for r, own in zip(records, novelty)]
    report = fresh_report(view, entry, rule, n, seed, derived, records, items, tally, search, warnings)
    return FreshPart(records, report)


def _take(records: list[Record], want: int, got: list[Record], seen: set[str], accept: Callable[[Record], bool],
          exclusion: Exclusion, tally: Tally) -> bool:
    """Examine candidates in order, taking those on the test side, outside the release and new,
    until got holds want; True once it does."""
    fresh = exclusion.keep([r["input"] for r in records]).tolist()
    for record, outside in zip(records, fresh):
        if len(got) >= want:
            return True
        tally.drawn += 1
        if not accept(record):
            tally.off_rule += 1
        elif not outside:
            tally.in_release += 1
        elif record["input"] in seen:
            tally.repeated += 1
        else:
            seen.add(record["input"])
            got.append(record)
    return len(got) >= want


def _generated(entry: dict[str, Any], rule: Rule, counts: list[int], seed: int, exclusion: Exclusion, tally: Tally) -> list[Record]:
    """counts[i] fresh records of setting i, each from its own candidate rounds (stream fresh)."""
    task = entry["task"]
    seen: set[str] = set()
    out: list[Record] = []
    for index, (params, want) in enumerate(zip(rule.settings, counts)):
        got: list[Record] = []
        for round_ in range(ROUNDS):
            before = len(got)
            plan = BlockPlan(task, params, max(MIN_CANDIDATES, 2 * want) << round_, fresh_round_seed(seed, index, round_))
            for batch in plan.batches():
                if _take(list(batch.records(task)), want, got, seen, rule.accept, exclusion, tally):
                    break
            if len(got) >= want or (round_ > 0 and len(got) == before):
                break
        if len(got) < want:
            where = f" of setting {index}" if len(rule.settings) > 1 else ""
            raise FreshError(
                f"{entry['name']}: only {len(got):,} of the {want:,} fresh test records{where} found in {tally.drawn:,} candidates "
                f"({tally.off_rule:,} off the test side, {tally.in_release:,} in the release, {tally.repeated:,} repeated): "
                "its test side has too few inputs the release does not hold; ask for fewer"
            )
        out += got
    return out


def _enumerated(entry: dict[str, Any], rule: Rule, exclusion: Exclusion, tally: Tally) -> list[Record]:
    """The records of the task's enumeration that the rule accepts and the release does not hold."""
    task = get_task(entry["task"])
    batch = task.enumerate(task.make_params(rule.params))
    if batch is None:
        raise FreshError(f"{entry['name']}: task {task.name} cannot enumerate its examples")
    records = list(batch.records(task.name))
    got: list[Record] = []
    _take(records, len(records), got, set(), rule.accept, exclusion, tally)
    return got


def _choose(records: list[Record], n: int, rng: np.random.Generator, name: str, tally: Tally, others: Sequence[str] = ()) -> list[Record]:
    """n of records chosen uniformly, in their order; FreshError when there are fewer (used up),
    saying what to do instead (others: the release's other configs of the task, which hold inputs too)."""
    if len(records) < n:
        side = tally.drawn - tally.off_rule
        instead = [f"ask for --n {len(records):,} or fewer"] if records else []
        if others:
            shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
            instead.append(f"release this config in a suite of its own (here {shown} hold inputs of the task too) and draw from that release")
        else:
            instead.append("release it with fewer records (a smaller train_size/test_size or pool), leaving inputs for a fresh part")
        raise FreshError(
            f"{name}: its pool is the task's whole enumeration ({tally.drawn:,} examples), and only {len(records):,} of its {side:,} "
            f"test-side inputs lie outside the release, fewer than the {n:,} asked for: the enumeration is used up; instead, "
            + ", or ".join(instead)
        )
    keep = np.sort(rng.choice(len(records), size=n, replace=False)) if len(records) > n else np.arange(n)
    return [records[i] for i in keep.tolist()]


def _mcd_part(entry: dict[str, Any], report: dict[str, Any], rule: Rule, train: list[Record], n: int, seed: int,
              exclusion: Exclusion, tally: Tally, others: Sequence[str] = ()) -> tuple[list[Record], dict[str, Any], list[str]]:
    """n records chosen by the MCD search against the fixed train part (module doc)."""
    options = rule.mcd
    assert options is not None
    unique = int(report["search"]["pool_unique_inputs"])
    train_size = options.train_size or int(0.8 * unique)
    test_size = options.test_size or max(1, int(0.1 * unique))
    per_test = max(1.0, (unique - train_size) / test_size)  # unused pool records per test record in the cited search
    wanted = max(n + 1, math.ceil(n * per_test))
    rng = fresh_rng(seed)
    if rule.settings:
        candidates = _generated(entry, rule, [wanted], seed, exclusion, tally)
    else:
        found = _enumerated(entry, rule, exclusion, tally)
        candidates = _choose(found, max(n, min(len(found), wanted)), rng, entry["name"], tally, others)  # fewer than n: used up
    abstract, definition = options.abstract_lexical, options.compound_definition()
    cited = report.get("compound_divergence")
    result = search_test(
        (record_atoms(r) for r in train), (record_compounds(r, abstract, definition) for r in train),
        (record_atoms(r) for r in candidates), (record_compounds(r, abstract, definition) for r in candidates),
        n, options.atom_divergence_max, rng, steps=options.steps, target=cited,
    )
    chosen = [r for r, where in zip(candidates, result.assignment[len(train):].tolist()) if where == TEST]
    search = {
        "objective": "maximize" if cited is None else f"the cited compound divergence {cited}",
        "candidates": len(candidates),
        "candidates_per_test_record": per_test,
        "steps": result.steps,
        "accepted": result.accepted,
    }
    warnings = []
    if cited is not None and abs(result.compound_divergence - cited) > TARGET_TOLERANCE:
        warnings.append(f"compound divergence {result.compound_divergence:.4f} against the cited part's {cited} "
                        f"(the search with train fixed did not reach it in {result.steps:,} steps)")
    if result.atom_divergence > options.atom_divergence_max:
        warnings.append(f"atom divergence {result.atom_divergence:.4f} exceeds the bound {options.atom_divergence_max}")
    if result.unseen_test_atoms:
        warnings.append(f"{result.unseen_test_atoms} atoms of the fresh part never occur in train")
    return chosen, search, warnings


def difficulty_histograms(records: Iterable[Record]) -> dict[str, dict[str, int]]:
    """feature -> {value: records}, features and values in ascending order."""
    counts: dict[str, Counter[int]] = {}
    for record in records:
        for name, value in record["difficulty"].items():
            counts.setdefault(name, Counter())[value] += 1
    return {name: {str(v): counts[name][v] for v in sorted(counts[name])} for name in sorted(counts)}


@dataclass(frozen=True)
class TrainItems:
    """The atoms and compounds of a config's train part, counted once for every part set beside it."""

    atoms: Counter[str]
    compounds: Counter[str]
    abstract: bool
    size: int
    definition: CompoundDefinition = DERIVATION_COMPOUNDS

    @classmethod
    def of(cls, train: Iterable[Record], abstract: bool, definition: CompoundDefinition = DERIVATION_COMPOUNDS) -> "TrainItems":
        atoms: Counter[str] = Counter()
        compounds: Counter[str] = Counter()
        size = 0
        for record in train:
            atoms.update(record_atoms(record))
            compounds.update(record_compounds(record, abstract, definition))
            size += 1
        return cls(atoms, compounds, abstract, size, definition)

    @classmethod
    def of_options(cls, train: Iterable[Record], options: dict[str, Any]) -> "TrainItems":
        """The items with the compounds a config's split options name (abstract_lexical, compounds, local_size)."""
        return cls.of(train, bool(options.get("abstract_lexical")), CompoundDefinition.of(options))


def part_figures(items: TrainItems, test: list[Record]) -> tuple[dict[str, Any], list[dict[str, int]]]:
    """A test part beside its train part (the figures of a split report, computed the same way):
    size, atom and compound divergence from train, unseen atoms, the novelty summary and
    difficulty histograms; and each record's novelty relative to train."""
    atoms: Counter[str] = Counter()
    compounds: Counter[str] = Counter()
    novelty = []
    for record in test:
        own_atoms, own_compounds = record_atoms(record), record_compounds(record, items.abstract, items.definition)
        atoms.update(own_atoms)
        compounds.update(own_compounds)
        novelty.append({"unseen_compounds": sum(1 for c in own_compounds if c not in items.compounds),
                        "unseen_atoms": sum(1 for a in own_atoms if a not in items.atoms)})
    both = bool(test) and items.size > 0  # as gengap.splits.base.divergence_report: None and 0 when a side is empty
    figures = {
        "size": len(test),
        "atom_divergence": atom_divergence(items.atoms, atoms) if both and atoms and items.atoms else None,
        "compound_divergence": compound_divergence(items.compounds, compounds) if both and compounds and items.compounds else None,
        "unseen_atom_count": len(set(atoms) - set(items.atoms)) if both else 0,
        "novelty": novelty_summary([{NOVELTY_KEY: n} for n in novelty]),
        "difficulty": difficulty_histograms(test),
    }
    return figures, novelty


def figures(items: TrainItems, cited: list[Record], fresh: list[Record]) -> dict[str, Any]:
    """The report's comparison: the fresh part and the cited part beside each other."""
    return rounded({"fresh": part_figures(items, fresh)[0], "cited": part_figures(items, cited)[0], "length_shift": length_shift(cited, fresh)})


def fresh_report(view: ReleaseView, entry: dict[str, Any], rule: Rule, n: int, seed: int, derived: int, records: list[Record],
                 items: TrainItems, tally: Tally, search: dict[str, Any] | None, warnings: list[str]) -> dict[str, Any]:
    """fresh.json (module doc)."""
    data = records_bytes(records)
    name = entry["name"]
    report: dict[str, Any] = {
        "format": FORMAT,
        "release": {"name": view.manifest.get("name"), "version": view.manifest.get("version"), "fingerprint": f"sha256:{view.fingerprint}"},
        "config": name,
        "task": entry["task"],
        "strategy": entry["strategy"],
        "rule": rule.text,
        "seed": seed,
        "derived_seed": derived,
        "stream": "fresh",
        "requested": n,
        "candidates": tally.to_dict(),
        "excluded_inputs": len(view.inputs),
        "file": {"path": DATA, "rows": len(records), "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()},
        **figures(items, view.part(name, "test"), records),
    }
    if search is not None:
        report["search"] = search
    shifted = shift_warning(report["length_shift"])
    report["warnings"] = warnings + ([shifted] if shifted else [])
    return rounded(report)


def write_fresh(part: FreshPart, out: str | Path, force: bool = False, inputs: Iterable[str | Path] = ()) -> None:
    """test.jsonl and fresh.json in out, with the output discipline of gengap.files (force
    replaces only a fresh test part gengap wrote)."""
    with atomic_directory(out, force, inputs, FRESH) as staging:
        (staging / DATA).write_bytes(part.data())
        (staging / MARKER).write_text(part.report_text(), encoding="utf-8")
