"""Multi-task suite entries: several tasks pooled into one release config.

An entry with ``tasks`` (instead of ``task``) pools the records of several tasks, each with
its own ``params``/``level`` and optionally its own record count ``n``:

    - split: unseen_tasks
      tasks:
        - {task: parity_check, params: {max_length: 12}}
        - {task: reverse_string, level: 3, n: 300}
      pool: {n: 200}                 # records per task (a task's own n wins); or pool: all
      strategy: task_holdout
      options: {test_tasks: [reverse_string]}     # or test_families: [regular]
      sizes: {train: 400, validation: 50, test: 100}   # caps on the whole config's parts

With ``task_marker: true`` every record's input starts with the token ``task:<task>``
(gengap.generators.markers: put on the finished parts, so the split, its divergences and its
novelty are those of the unmarked records; ``input_length`` counts the token; the report gains
``task_marker``). Without it, a config whose tasks give one input different targets warns
(:func:`conflict_warning`): a model that sees only the input cannot tell those tasks apart.

The config is named ``multi-<split>``; its records keep their own ``task``. ``pool.n`` is
the number of records of each task (``pool: all``: every example of each task, for finite
tasks); ``sizes`` (optional) cap each part of the config as a whole (a seeded subsample, as
for one-task pool entries). The strategy is any pool strategy that accepts several tasks
(gengap.splits.tasks); option values that are lists of names (``test_tasks``, ``test_families``)
are joined with ``|``. Each task's records come from its own seed (gengap.splits.tasks.generate_task_pool).

This module holds everything multi-task of gengap.suite and gengap.release (resolution,
record counts for the limits, the pool, the manifest fields), so that those modules only
dispatch here.
"""

from __future__ import annotations

from typing import Any, Callable

from gengap.generators import ParamError, Params, Task, UnknownTaskError, get_task
from gengap.generators.batch import Record
from gengap.generators.markers import MARKER_PREFIX, with_marker
from gengap.splits import SplitError, SplitResult, get_strategy, make_options
from gengap.splits.api import strategy_problem
from gengap.splits.base import PARTS, part_summary
from gengap.splits.tasks import PoolTask, generate_task_pool

MULTI_PREFIX = "multi"
LISTED_OPTIONS = ("test_tasks", "test_families")  # options a suite may give as a list of names


def is_multitask(entry: dict[str, Any]) -> bool:
    """True for a suite entry (raw or resolved) that pools several tasks."""
    return isinstance(entry, dict) and "tasks" in entry


def config_name(split: str) -> str:
    """The release config name of a multi-task entry: multi-<split>."""
    return f"{MULTI_PREFIX}-{split}"


def entry_tasks(entry: dict[str, Any]) -> list[str]:
    """The task names of a resolved entry: its tasks in order, or its one task."""
    return [str(item["task"]) for item in entry["tasks"]] if is_multitask(entry) else [str(entry["task"])]


def resolve_multitask_entry(entry: dict[str, Any], path: list[Any], error: Callable[[list[Any], str], ValueError]) -> dict[str, Any]:
    """The resolved form of a multi-task entry (see the module doc); error(path, message) makes
    the one-line error naming the offending key and its line."""
    for key in ("task", "params", "level", "train_range", "test_range", "level_max", "test_levels"):
        if key in entry:
            raise error(path + [key], f"a multi-task entry gives {key} per task (in tasks) or not at all: sampled splits need one task")
    if "pool" not in entry:
        raise error(path, "a multi-task entry needs a pool: {n: N} records per task, or all")
    if isinstance(entry["pool"], dict) and "shared" in entry["pool"]:
        raise error(path + ["pool", "shared"], "a shared pool is one task's: a multi-task entry draws each task's records from its own seed")
    problem = strategy_problem(entry)
    if problem:
        raise error(path + [problem[0]], problem[1])
    strategy = get_strategy(entry.get("strategy") or entry["split"])
    tasks = []
    seen: set[str] = set()
    for index, item in enumerate(entry["tasks"]):
        where = path + ["tasks", index]
        try:
            task = get_task(item["task"])
        except UnknownTaskError as err:
            raise error(where + ["task"], str(err)) from None
        if task.name in seen:
            raise error(where + ["task"], f"task {task.name} appears twice in tasks")
        seen.add(task.name)
        try:
            params = task.make_params(item.get("params") or {}, level=item.get("level"))
        except ParamError as err:
            raise error(where + ["params"], str(err)) from None
        if entry["pool"] == "all":
            if "n" in item:
                raise error(where + ["n"], "pool: all takes every example of each task: drop n")
            if type(task).enumerate is Task.enumerate:
                raise error(path + ["pool"], f"task {task.name} cannot enumerate all its examples: give pool.n")
            n = None
        else:
            n = int(item.get("n", entry["pool"]["n"]))
        tasks.append({
            "task": task.name, "params": params.to_dict(), "base_params": dict(item.get("params") or {}),
            "level": item.get("level"), "n": n,
        })
    if len(tasks) < 2:
        raise error(path + ["tasks"], "a multi-task entry pools at least two tasks (one task: use task)")
    raw_options = dict(entry.get("options") or {})
    for key in LISTED_OPTIONS:
        if isinstance(raw_options.get(key), list):
            raw_options[key] = "|".join(str(name) for name in raw_options[key])
    try:
        options = make_options(strategy, raw_options)
    except SplitError as err:
        raise error(path + ["options"], str(err)) from None
    resolved = {
        "name": config_name(entry["split"]),
        "tasks": tasks,
        "split": entry["split"],
        "strategy": strategy.name,
        "kind": "multitask",
        "pool": entry["pool"],
        "options": options.to_dict(),
        "sizes": dict(entry.get("sizes") or {}),
    }
    if entry.get("task_marker"):  # absent when false: the resolved form (and the manifest) of unmarked entries is unchanged
        resolved["task_marker"] = True
    if "seed_split" in entry:  # an exposure sweep: every value draws the unswept config's pool and split
        resolved["seed_of"] = config_name(entry["seed_split"])
    if "cue" in entry:  # shortcut cues on the finished parts (gengap.splits.cues), as for one-task entries
        from gengap.splits.cues import cue_option

        try:
            resolved["cue"] = cue_option(entry["cue"]).to_dict()
        except SplitError as err:
            raise error(path + ["cue"], str(err)) from None
    return resolved


def component_records(resolved: dict[str, Any]) -> list[tuple[str, Params, int]]:
    """(task, parameters, records built) per task of a resolved multi-task entry; ParamError
    when a task refuses to enumerate its examples."""
    out = []
    for item in resolved["tasks"]:
        task = get_task(item["task"])
        params = task.make_params(item["params"])
        n = (task.enumeration_size(params) or 0) if item["n"] is None else int(item["n"])
        out.append((task.name, params, n))
    return out


def written_records(resolved: dict[str, Any]) -> int:
    """Records a resolved multi-task entry writes at most (its pool, or the sum of its sizes)."""
    n = sum(count for _, _, count in component_records(resolved))
    sizes = resolved.get("sizes") or {}
    return min(n, sum(sizes.values())) if all(part in sizes for part in ("train", "validation", "test")) else n


def multitask_pool(resolved: dict[str, Any], seed: int) -> list[Record]:
    """The pool of a resolved multi-task entry: every task's records (each from its own seed,
    or its enumeration for pool: all), in task order."""
    if resolved["pool"] == "all":
        records: list[Record] = []
        for name, params, _ in component_records(resolved):
            batch = get_task(name).enumerate(params)
            if batch is None:
                raise SplitError(f"{resolved['name']}: task {name} cannot enumerate its examples")
            records.extend(batch.records(name))
        return records
    components = [PoolTask(name, params, n) for name, params, n in component_records(resolved)]
    return generate_task_pool(components, seed)


CONFLICTS_SHOWN = 1


def conflict_warning(parts: dict[str, list[Record]]) -> str | None:
    """The warning for inputs that occur with different targets in different tasks of a config
    (over all its parts), or None when there are none."""
    seen: dict[str, dict[str, str]] = {}  # input -> task -> target
    for part in PARTS:
        for record in parts[part]:
            seen.setdefault(record["input"], {}).setdefault(record["task"], record["target"])
    conflicts = [(text, tasks) for text, tasks in seen.items() if len(tasks) > 1 and len(set(tasks.values())) > 1]
    if not conflicts:
        return None
    text, tasks = conflicts[0]
    example = ", ".join(f"{task} -> {target[:40]!r}" for task, target in sorted(tasks.items()))
    names = sorted({task for _, tasks in conflicts for task in tasks})
    return (f"{len(conflicts):,} inputs have different targets in different tasks ({', '.join(names)}; e.g. {text[:40]!r}: {example}): "
            f"a model that sees only the input cannot tell them apart; task_marker: true puts a {MARKER_PREFIX}<task> token in front of every input")


def finish_multitask_split(result: SplitResult, resolved: dict[str, Any]) -> SplitResult:
    """The finished split of a multi-task entry: with ``task_marker``, every record marked (the
    parts' summaries remeasured, the report's ``task_marker`` added); otherwise the split as it is,
    its report warning about inputs the tasks give different targets."""
    parts = result.parts()
    report = dict(result.report)
    if not resolved.get("task_marker"):
        warning = conflict_warning(parts)
        if warning:
            report["warnings"] = [*(report.get("warnings") or []), warning]
        return SplitResult(parts["train"], parts["validation"], parts["test"], report)
    marked = {part: [with_marker(record) for record in parts[part]] for part in PARTS}
    report["parts"] = {part: part_summary(marked[part]) for part in PARTS}
    report["task_marker"] = {"token": f"{MARKER_PREFIX}<task>"}
    return SplitResult(marked["train"], marked["validation"], marked["test"], report)


def manifest_task_fields(resolved: dict[str, Any]) -> dict[str, Any]:
    """The task fields of a config in manifest.json: task, family and task_description (for
    a multi-task config, its tasks' names, families and descriptions joined) and, for a
    multi-task config, ``tasks``: [{task, family, task_description}, ...] in task order."""
    items = []
    for name in entry_tasks(resolved):
        task = get_task(name)
        items.append({"task": task.name, "family": task.family, "task_description": task.description})
    if not is_multitask(resolved):
        return items[0]
    return {
        "task": "+".join(item["task"] for item in items),
        "family": "+".join(dict.fromkeys(item["family"] for item in items)),
        "task_description": "several tasks: " + "; ".join(f"{item['task']}: {item['task_description']}" for item in items),
        "tasks": items,
    }
