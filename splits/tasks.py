"""Multi-task pools and the ``task_holdout`` strategy (Natural Instructions-style unseen tasks).

A multi-task pool is the records of several tasks, each generated from its own parameters
and its own seed (stream ``component`` of gengap.generators.seeding: the pool's seed, the task
and its position), concatenated in the order the tasks are given. Records carry their
``task``, so every strategy can split such a pool; ``task_holdout`` sends whole tasks
(``test_tasks``) or whole task families (``test_families``, the family the registry gives a
task: ``gengap list``) to test and keeps the others on the train side (train and an
in-distribution validation). Its report lists the train and test tasks and the records of
each task in each part (``parts.<part>.tasks``, as for every split).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from gengap.generators import get_task
from gengap.generators.batch import Record
from gengap.generators.params import Params, knob
from gengap.generators.seeding import component_seed
from gengap.splits.base import Partition, SplitError, SplitOptions, Strategy


@dataclass(frozen=True)
class PoolTask:
    """One task of a multi-task pool: its name, parameters and number of records."""

    task: str
    params: Params
    n: int


def generate_task_pool(components: Sequence[PoolTask], seed: int) -> list[Record]:
    """The records of every component, each generated block-wise from component_seed(seed,
    task, position), in component order (the same bytes whatever the worker count)."""
    from gengap.splits.api import generate_records

    records: list[Record] = []
    for index, component in enumerate(components):
        records.extend(generate_records(component.task, component.params, component.n, component_seed(seed, component.task, index)))
    return records


def pool_tasks(records: Sequence[Record]) -> list[str]:
    """The tasks of a pool's records, in first-seen order."""
    return list(dict.fromkeys(str(r["task"]) for r in records))


def task_family(task: str) -> str:
    """The family the registry gives a task (a task gengap does not know: its own name)."""
    from gengap.generators import UnknownTaskError

    try:
        return get_task(task).family
    except UnknownTaskError:
        return task


def names_of(text: str) -> list[str]:
    """The |-separated names of an option value (empty ones dropped)."""
    return [name for name in text.split("|") if name]


@dataclass(frozen=True)
class TaskHoldoutOptions(SplitOptions):
    test_tasks: str = knob("", doc="tasks held out for test, joined by | (a suite may give a list)")
    test_families: str = knob("", doc="task families held out for test (every task of the family), joined by | (a suite may give a list)")


class TaskHoldout(Strategy):
    """Hold out whole tasks (or task families) of a multi-task pool: test = every record of a
    held-out task, train side = every record of the other tasks. Needs at least one task on
    each side; a named task or family absent from the pool is an error."""

    name = "task_holdout"
    description = "multi-task pools: hold out whole tasks (test_tasks) or task families (test_families) for test"
    options_type = TaskHoldoutOptions

    def partition(self, records: Sequence[Record], options: TaskHoldoutOptions, rng: np.random.Generator) -> Partition:
        if bool(options.test_tasks) == bool(options.test_families):
            raise SplitError("task_holdout needs exactly one of the options test_tasks and test_families")
        tasks = pool_tasks(records)
        families = {task: task_family(task) for task in tasks}
        if options.test_tasks:
            wanted = names_of(options.test_tasks)
            absent = [name for name in wanted if name not in families]
            if absent:
                raise SplitError(f"test task {absent[0]!r} is not in the pool (its tasks: {', '.join(tasks)})")
            held = set(wanted)
        else:
            wanted = names_of(options.test_families)
            absent = [name for name in wanted if name not in families.values()]
            if absent:
                pool_families = sorted(set(families.values()))
                raise SplitError(f"test family {absent[0]!r} is not in the pool (its families: {', '.join(pool_families)})")
            held = {task for task, family in families.items() if family in wanted}
        if len(held) == len(tasks):
            raise SplitError(f"task_holdout would hold out every task of the pool ({', '.join(tasks)}): keep one for train")
        train = [r for r in records if r["task"] not in held]
        test = [r for r in records if r["task"] in held]
        notes = {
            "train_tasks": [t for t in tasks if t not in held],
            "test_tasks": [t for t in tasks if t in held],
            "families": families,
        }
        return Partition(train, test, notes=notes)


SINGLE_TASK_STRATEGIES = ("category", "gotu")  # strategies whose options speak of one task's structure


def check_single_task(strategy: str, records: Sequence[Record]) -> None:
    """SplitError when a strategy that reads one task's structure is given a pool of several tasks."""
    tasks = pool_tasks(records)
    if strategy in SINGLE_TASK_STRATEGIES and len(tasks) > 1:
        raise SplitError(f"{strategy} splits need a pool of one task, got {len(tasks)} ({', '.join(tasks)}): use task_holdout, iid, length, difficulty, holdout or mcd")
