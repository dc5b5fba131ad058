"""What a config's manifest entry promises about its parts, beyond its split report's figures.

gengap.cross_check recomputes the figures a split report states; a forger who restates them
(sizes, summaries, divergences) still cannot restate what the manifest says elsewhere, often
three times (the suite entry, ``generation``, the report's options). ``contract_problems``
holds each part to that contract:

- **settings**: a split drawn from parameter settings (a sampled length or level split: the
  report's ``train_params`` and ``test_params``) has every train and validation record within
  the bounds some train setting puts on its difficulty features (Task.size_bounds: a length
  split's input length in tokens, addition's digits per operand), and every test record within
  those of a test setting; so a test part swapped for in-distribution records is seen;
- **hold-outs**: a holdout split's test records all match its held-out atoms or templates, and
  no train or validation record does (but the bare primitives its ``primitive_repeats`` pins in
  train);
- **sizes**: a sampled split's train and test parts have the sizes its ``generation.sizes``
  asks for (test less the ``removed_overlap`` the report names), validation no more; a pool
  capped by ``sizes`` no part above its cap; an uncapped pool of ``n`` records accounts for
  them all (parts, ``unused``, ``removed_overlap``; unless the split pins copies in train, or
  the config has several tasks: n records each);
- **uniqueness**: a pool of every example (``pool: all``) holds each input once across its
  parts (but the pinned primitives' copies), and, uncapped, those inputs and ``unused`` make
  up the task's enumeration.

Records are read as the split saw them (without shortcut cues and task markers).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Mapping, Sequence

from gengap.generators import UnknownTaskError, get_task
from gengap.generators.cues import without_cue
from gengap.generators.markers import without_marker
from gengap.generators.params import ParamError
from gengap.splits import SplitError
from gengap.splits.api import get_strategy, make_options
from gengap.splits.base import PARTS

Record = dict[str, Any]
SIDES = {"train": "train_params", "validation": "train_params", "test": "test_params"}


def contract_problems(config: Mapping[str, Any], parts: Mapping[str, Sequence[Record]]) -> list[str]:
    """What config's manifest entry promises (module doc) that its parts (as read) break; one line each."""
    name = config.get("name")
    report = config.get("report") if isinstance(config.get("report"), Mapping) else {}
    generation = config.get("generation") if isinstance(config.get("generation"), Mapping) else {}
    plain = {part: [without_marker(without_cue(record)) for record in parts[part]] for part in PARTS}
    problems = _setting_problems(name, config.get("task"), report, plain)
    problems += _holdout_problems(name, report, plain)
    problems += _size_problems(name, report, generation, parts)
    problems += _pool_problems(name, config.get("task"), report, generation, plain)
    return problems


def _setting_problems(name: Any, task_name: Any, report: Mapping[str, Any], plain: Mapping[str, Sequence[Record]]) -> list[str]:
    if not report.get("sampled") or not isinstance(task_name, str):
        return []
    try:
        task = get_task(task_name)
    except UnknownTaskError:
        return []
    problems = []
    for part, key in SIDES.items():
        settings = report.get(key)
        if not isinstance(settings, list) or not settings:
            problems.append(f"manifest.json: config {name}'s report states no {key} (the settings its {part} part was drawn with)")
            continue
        bounds = [task.size_bounds(s) if isinstance(s, Mapping) else {} for s in settings]
        if not any(bounds):
            continue
        for number, record in enumerate(plain[part], start=1):
            if not any(_fits(record, b) for b in bounds):
                shown = ", ".join(f"{feature}={record.get('difficulty', {}).get(feature)}" for feature in bounds[0])
                problems.append(f"record: data/{name}/{part}.jsonl line {number}: {shown} lies outside every setting of the report's "
                                f"{key} ({_spans(bounds)})")
                break
    return problems


def _fits(record: Record, bounds: Mapping[str, tuple[int, int]]) -> bool:
    difficulty = record.get("difficulty") if isinstance(record.get("difficulty"), Mapping) else {}
    return all(isinstance(difficulty.get(f), int) and lo <= difficulty[f] <= hi for f, (lo, hi) in bounds.items())


def _spans(bounds: Sequence[Mapping[str, tuple[int, int]]]) -> str:
    return "; ".join(", ".join(f"{f} {lo}..{hi}" for f, (lo, hi) in b.items()) for b in bounds if b)


def _holdout_problems(name: Any, report: Mapping[str, Any], plain: Mapping[str, Sequence[Record]]) -> list[str]:
    if report.get("strategy") != "holdout":
        return []
    strategy = get_strategy("holdout")
    try:
        options = make_options(strategy, report.get("options") if isinstance(report.get("options"), Mapping) else {})
        held = strategy.test_rule(options)
    except (SplitError, ParamError, TypeError) as err:
        return [f"manifest.json: config {name}'s report gives options holdout does not take ({err})"]
    primitive = options.primitive or (options.atom if options.atom and "+" not in options.atom else "")
    pinned = set(primitive.split("|")) if options.primitive_repeats and primitive else set()
    what = options.atom or options.template
    for part in PARTS:
        for number, record in enumerate(plain[part], start=1):
            try:
                matches = held(record)
            except (ValueError, KeyError, TypeError):
                matches = None
            if part == "test" and matches is not True:
                return [f"record: data/{name}/{part}.jsonl line {number}: it does not hold {what!r}, which the split holds out for test"]
            if part != "test" and matches is not False and record.get("input") not in pinned:
                return [f"record: data/{name}/{part}.jsonl line {number}: it holds {what!r}, which the split holds out of {part}"]
    return []


def _size_problems(name: Any, report: Mapping[str, Any], generation: Mapping[str, Any], parts: Mapping[str, Sequence[Record]]) -> list[str]:
    sizes = generation.get("sizes")
    if not isinstance(sizes, Mapping) or not sizes:
        return []
    rows = {part: len(parts[part]) for part in PARTS}
    removed = report.get("removed_overlap") if isinstance(report.get("removed_overlap"), int) else 0
    problems = []
    if generation.get("kind") in ("sampled_length", "sampled_level"):
        wanted = {"train": rows["train"], "test": rows["test"] + removed}
        for part in ("train", "test"):
            if part in sizes and sizes[part] != wanted[part]:
                problems.append(f"manifest.json: config {name}'s generation.sizes asks for {sizes[part]} {part} records, "
                                f"data/{name}/{part}.jsonl holds {rows[part]}" + (f" ({removed} removed as overlap)" if part == "test" and removed else ""))
        if isinstance(sizes.get("validation"), int) and rows["validation"] > sizes["validation"]:
            problems.append(f"manifest.json: config {name}'s generation.sizes asks for {sizes['validation']} validation records, "
                            f"data/{name}/validation.jsonl holds {rows['validation']}")
        return problems
    for part in PARTS:
        if isinstance(sizes.get(part), int) and rows[part] > sizes[part]:
            problems.append(f"manifest.json: config {name}'s generation.sizes caps {part} at {sizes[part]}, data/{name}/{part}.jsonl holds {rows[part]}")
    return problems


def _pool_problems(name: Any, task_name: Any, report: Mapping[str, Any], generation: Mapping[str, Any],
                   plain: Mapping[str, Sequence[Record]]) -> list[str]:
    pool = generation.get("pool")
    unused = report.get("unused") if isinstance(report.get("unused"), int) else 0
    removed = report.get("removed_overlap") if isinstance(report.get("removed_overlap"), int) else 0
    total = sum(len(plain[part]) for part in PARTS)
    pinned = _pinned_inputs(report)
    capped, multitask = bool(generation.get("sizes")), "tasks" in generation  # a multi-task config draws n records per task
    if isinstance(pool, Mapping) and isinstance(pool.get("n"), int) and not capped and not multitask and not pinned:
        if total + unused + removed != pool["n"]:  # (pinned copies are made, not drawn: a split that pins any is not counted)
            return [f"manifest.json: config {name} is a pool of {pool['n']} records, but its parts hold {total} "
                    f"and its report names {unused} unused and {removed} removed as overlap"]
        return []
    if pool != "all" or not isinstance(task_name, str):
        return []
    counts = Counter((str(record.get("task")), str(record.get("input"))) for part in PARTS for record in plain[part])  # a task's own inputs
    twice = next((key for key, count in counts.items() if count > 1 and key[1] not in pinned), None)
    if twice is not None:
        return [f"manifest.json: config {name} is a pool of every example, but the input {twice[1][:40]!r} occurs {counts[twice]} times in its parts"]
    if capped:  # a subsample of the enumeration (sizes): its inputs are unique, their count is the sizes'
        return []
    try:
        task = get_task(task_name)
        size = task.enumeration_size(task.make_params(generation.get("params") if isinstance(generation.get("params"), Mapping) else {}))
    except (UnknownTaskError, ParamError, TypeError):
        return []
    if isinstance(size, int) and len(counts) + unused + removed != size:
        return [f"manifest.json: config {name} is a pool of every example ({size:,}), but its parts hold {len(counts):,} "
                f"distinct inputs and its report names {unused:,} unused and {removed:,} removed as overlap"]
    return []


def _pinned_inputs(report: Mapping[str, Any]) -> set[str]:
    """Inputs a split puts in train several times on purpose: a holdout's bare primitives, a category split's exposure examples."""
    options = report.get("options") if isinstance(report.get("options"), Mapping) else {}
    pinned: set[str] = set()
    if report.get("strategy") == "holdout" and options.get("primitive_repeats"):
        atom = str(options.get("atom") or "")
        primitive = str(options.get("primitive") or "") or (atom if "+" not in atom else "")
        pinned.update(p for p in primitive.split("|") if p)
    exposure = report.get("exposure")
    if isinstance(exposure, list):
        pinned.update(str(text) for text in exposure)
    return pinned
