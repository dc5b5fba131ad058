"""Registering gengap tasks with reasoning-gym's own registry (reasoning-gym 0.1.25; imported here only).

``register(task)`` adds the name ``gengap/<task>`` to ``reasoning_gym.factory``'s registry, so
``reasoning_gym.create_dataset("gengap/parity_check", size=100, seed=0)`` builds a
:class:`gengap.harnesses.procedural.TaskDataset` that is also a ``reasoning_gym.dataset.ProceduralDataset``,
and every consumer that creates datasets by name takes it: ``CompositeDataset`` (whose
``DatasetSpec.config`` may set ``level``, ``params``, ``answer_format``, ``partial_credit``),
``get_score_answer_fn``, ``ReseedingDataset`` and the coaching ``Experiment``. The registered
config is :class:`~gengap.harnesses.procedural.TaskConfig` with the task, the name and the given level
and parameters as defaults; items carry the registered name as ``source_dataset``, which is
how CompositeDataset routes ``score_answer``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from gengap.generators import UnknownTaskError, get_task
from gengap.harnesses.errors import HarnessError
from gengap.harnesses.procedural import TaskConfig, TaskDataset, task_source


def _reasoning_gym() -> tuple[Any, Any]:
    """reasoning-gym's registry (DATASETS, register_dataset) and ProceduralDataset; HarnessError without it."""
    try:
        from reasoning_gym import factory
        from reasoning_gym.dataset import ProceduralDataset
    except ImportError as err:
        raise HarnessError(f"registering with reasoning-gym needs reasoning-gym installed: {err}") from None
    return factory, ProceduralDataset


def register(task: str, name: str | None = None, *, level: int | None = None, **params: Any) -> str:
    """Register task under name (default ``gengap/<task>``) with the given level and task
    parameters as defaults; returns the name. Registering the same task under the same name
    again is a no-op; a name that reasoning-gym already holds for something else is a HarnessError."""
    try:
        get_task(task)
    except UnknownTaskError as err:
        raise HarnessError(str(err)) from None
    name = name or task_source(task)
    factory, procedural = _reasoning_gym()
    held = factory.DATASETS.get(name)
    if held is not None:
        if issubclass(held[0], TaskDataset) and held[1]().task == task:
            return name
        raise HarnessError(f"reasoning-gym already has a dataset named {name!r}; give another name")
    defaults = [
        ("task", str, dataclasses.field(default=task)),
        ("level", "int | None", dataclasses.field(default=level)),
        ("params", "dict[str, Any]", dataclasses.field(default_factory=lambda: dict(params))),
        ("name", "str | None", dataclasses.field(default=name)),
    ]
    config_cls = dataclasses.make_dataclass(f"{TaskConfig.__name__}[{name}]", defaults, bases=(TaskConfig,))
    config_cls.__module__ = __name__
    config_cls().validate()  # bad defaults fail here, not in reasoning-gym
    dataset_cls = type(f"{TaskDataset.__name__}[{name}]", (TaskDataset, procedural), {"__module__": __name__})
    factory.register_dataset(name, dataset_cls, config_cls)
    return name
