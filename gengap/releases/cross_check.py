"""What a release's manifest states about a config, checked against the config's files.

A forger can recompute every hash (data files, fingerprint, cards, SHA256SUMS) after changing
the data, say swapping train and test; what the manifest's split report states about the
parts then no longer matches them. ``report_problems(config, parts)`` recomputes from the
records of the three files (as read, in file order) what the report states and names each
difference:

- the sizes of the parts (``report.sizes``) and the manifest's bytes of each file;
- each part's summary (``report.parts``: size, tasks, length and difficulty ranges,
  duplicate inputs), test inputs also on the train side (``overlap``);
- atom and compound divergence of train vs test, the unseen atoms (``atom_divergence``,
  ``compound_divergence``, ``unseen_atoms``, ``unseen_atom_count``), computed on the records
  without their shortcut cues, as the split computed them: with the compounds its options name
  (``compounds``, ``local_size``, ``abstract_lexical``: gengap.splits.atoms.CompoundDefinition);
- the novelty of every validation and test record relative to train, and its summary
  (``report.novelty``), with the same compounds;
- the split's facts: a threshold split's ``train_range`` and ``test_range`` (every train and
  validation record's feature in the first, every test record's in the second; exposed
  examples, which the report names, excepted); a cued config's answer set (``cue.answers``
  holds every answer a cue names);
- what the rest of the config's entry promises (gengap.contracts: the settings a sampled split
  was drawn with, a holdout's held-out atoms, ``generation.sizes``, a pool's size and, for
  ``pool: all``, unique inputs).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from gengap.releases.contracts import contract_problems
from gengap.generators.cues import cue_answer, without_cue
from gengap.generators.markers import without_marker
from gengap.splits.atoms import CompoundDefinition, remembered
from gengap.splits.base import PARTS, build_report, part_summary
from gengap.splits.novelty import NOVELTY_KEY, annotate, novelty_summary
from gengap.splits.precision import rounded

Record = dict[str, Any]
RECOMPUTED = ("sizes", "overlap", "atom_divergence", "compound_divergence", "unseen_atoms", "unseen_atom_count")


def report_problems(config: Mapping[str, Any], parts: Mapping[str, Sequence[Record]], sizes: Mapping[str, int] | None = None) -> list[str]:
    """What config's manifest entry (its ``report`` and ``files``) states that its parts (the
    records of its three files) do not bear out; sizes: each file's size in bytes (checked
    against ``files.<part>.bytes`` when given). One line per difference."""
    name = config.get("name")
    report = config.get("report")
    if not isinstance(report, Mapping):
        return [f"manifest.json: config {name} has no split report"]
    problems = []
    files = config.get("files") if isinstance(config.get("files"), Mapping) else {}
    for part, size in (sizes or {}).items():
        stated = (files.get(part) or {}).get("bytes") if isinstance(files.get(part), Mapping) else None
        if stated != size:
            problems.append(f"manifest.json: config {name}'s files.{part} says {stated} bytes, data/{name}/{part}.jsonl has {size}")
    plain = {part: [without_marker(without_cue(record)) for record in parts[part]] for part in PARTS}  # as the split saw them
    options = report.get("options") if isinstance(report.get("options"), Mapping) else {}
    try:
        definition = CompoundDefinition.of(options)
    except (TypeError, ValueError) as err:
        return problems + [f"manifest.json: config {name}'s report names compounds no split defines ({err})"]
    with remembered():  # each record's atoms and compounds worked out once, for divergences and novelty
        recomputed = build_report(str(report.get("strategy")), dict(options), report.get("seed"), plain)
        problems += _novelty_problems(name, report, parts, plain, bool(options.get("abstract_lexical")), definition)
    for key in RECOMPUTED:
        if key in report and _json(report[key]) != _json(recomputed[key]):
            problems.append(f"manifest.json: config {name}'s report gives {key} {_short(report[key])}, its files give {_short(recomputed[key])}")
    if "sizes" not in report:
        problems.append(f"manifest.json: config {name}'s report states no sizes")
    stated_parts = report.get("parts") if isinstance(report.get("parts"), Mapping) else {}
    for part in PARTS:
        summary = rounded(part_summary(parts[part]))
        if _json(stated_parts.get(part)) != _json(summary):
            problems.append(f"manifest.json: config {name}'s report describes its {part} part otherwise than data/{name}/{part}.jsonl holds "
                            f"(size, tasks, ranges or duplicate inputs)")
    problems += _range_problems(name, report, parts)
    problems += _cue_problems(name, report, parts)
    problems += contract_problems(config, parts)  # settings, hold-outs, sizes, uniqueness (gengap.contracts)
    return problems


def _novelty_problems(name: Any, report: Mapping[str, Any], parts: Mapping[str, Sequence[Record]],
                      plain: Mapping[str, Sequence[Record]], abstract: bool, definition: CompoundDefinition) -> list[str]:
    problems = []
    expected = annotate(plain, abstract, definition)
    for part in PARTS:
        for number, (record, fresh) in enumerate(zip(parts[part], expected[part]), start=1):
            if record.get(NOVELTY_KEY) != fresh.get(NOVELTY_KEY):
                problems.append(f"record: data/{name}/{part}.jsonl line {number}: its novelty is not the one relative to the config's train part")
                break
    stated = report.get("novelty")
    if isinstance(stated, Mapping):
        for part in ("validation", "test"):
            if part in stated and _json(stated[part]) != _json(novelty_summary(parts[part])):
                problems.append(f"manifest.json: config {name}'s report summarizes the novelty of its {part} part otherwise than its records")
    return problems


def _within(value: Any, ranges: Any) -> bool:
    """Whether value lies in the range [lo, hi] or one of a list of them (None: unbounded)."""
    if not isinstance(ranges, list) or not ranges:
        return True  # not a range fact this check reads
    spans = ranges if isinstance(ranges[0], list) else [ranges]
    for span in spans:
        if not isinstance(span, list) or len(span) != 2:
            return True
        lo, hi = span
        if (lo is None or value >= lo) and (hi is None or value <= hi):
            return True
    return False


def _range_problems(name: Any, report: Mapping[str, Any], parts: Mapping[str, Sequence[Record]]) -> list[str]:
    feature = report.get("feature")
    if not isinstance(feature, str) or "train_range" not in report or "test_range" not in report:
        return []
    exposed = report.get("exposed") if isinstance(report.get("exposed"), Mapping) else {}
    exempt = set(exposed.get("ids") or [])
    problems = []
    for part, key in (("train", "train_range"), ("validation", "train_range"), ("test", "test_range")):
        for number, record in enumerate(parts[part], start=1):
            value = without_cue(record).get("difficulty", {}).get(feature)
            if record.get("id") in exempt or not isinstance(value, (int, float)):
                continue
            if not _within(value, report[key]):
                problems.append(f"record: data/{name}/{part}.jsonl line {number}: {feature}={value} lies outside the report's {key} {report[key]}")
                break
    return problems


def _cue_problems(name: Any, report: Mapping[str, Any], parts: Mapping[str, Sequence[Record]]) -> list[str]:
    cue = report.get("cue")
    if not isinstance(cue, Mapping) or not isinstance(cue.get("answers"), list):
        return []
    answers = set(cue["answers"])
    named = {answer for part in PARTS for record in parts[part] if (answer := cue_answer(record)) is not None}
    stray = sorted(named - answers)
    return [f"manifest.json: config {name}'s cues name {stray[0]!r}, which is not in its report's cue answers"] if stray else []


def _json(value: Any) -> Any:
    """value as JSON would give it back (tuples as lists), for comparisons."""
    if isinstance(value, Mapping):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    return value


def _short(value: Any, limit: int = 60) -> str:
    text = repr(_json(value))
    return text if len(text) <= limit else text[: limit - 3] + "..."
