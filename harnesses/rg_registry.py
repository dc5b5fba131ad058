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

Each name is registered with a curriculum too (:func:`curriculum_class`, reasoning-gym's
``BaseCurriculum``), so ``reasoning_gym.create_curriculum`` and the coaching
``CurriculumExperiment`` take it: one attribute, ``level``, whose values are the task's levels
(1..10) in order; reasoning-gym counts an attribute's levels from 0, so ``attribute_levels:
{"level": 2}`` (or ``"*": 2``) is gengap level 3, and ``update_difficulty(name, "increment")``
moves one gengap level up. A configuration the curriculum makes carries no ``size``, ``seed`` or
``name`` of its own (the experiment passes the name; its CompositeDataset fills in the size and a
seed derived from its own when a config leaves them out), so the same experiment seed gives the
same items, and any experiment size works.
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


LEVEL_ATTRIBUTE = "level"
LEFT_TO_COMPOSITE = ("size", "seed", "name")  # CompositeDataset fills size and seed when a config lacks them, and passes name itself


def curriculum_class(task: str, name: str, config_cls: type) -> type:
    """A reasoning-gym curriculum class (built with no arguments, as ``create_curriculum`` does)
    for the dataset `name` of `task`: one scalar attribute ``level`` over the task's levels."""
    from reasoning_gym.coaching.attributes import ScalarAttributeDefinition
    from reasoning_gym.coaching.base_curriculum import BaseCurriculum

    levels = sorted(get_task(task).levels())

    def __init__(self: Any) -> None:
        BaseCurriculum.__init__(self, name, config_cls)
        self._define_attributes(ScalarAttributeDefinition(
            name=LEVEL_ATTRIBUTE, field_name=LEVEL_ATTRIBUTE, levels=list(levels),
            description=f"gengap level of {task} ({levels[0]}..{levels[-1]}); reasoning-gym level i is gengap level {levels[0]} + i",
        ))

    def generate_configuration(self: Any, defaults: dict[str, Any] | None = None, context: Any = None) -> Any:
        config = BaseCurriculum.generate_configuration(self, defaults, context)
        for key in LEFT_TO_COMPOSITE:  # the class defaults still answer config.size and .name; the composite's size and seed apply
            if key not in (defaults or {}):
                vars(config).pop(key, None)
        return config

    return type(f"TaskCurriculum[{name}]", (BaseCurriculum,), {
        "__init__": __init__, "generate_configuration": generate_configuration, "__module__": __name__,
    })


def register(task: str, name: str | None = None, *, level: int | None = None, **params: Any) -> str:
    """Register task under name (default ``gengap/<task>``) with the given level and task
    parameters as defaults, and its curriculum (:func:`curriculum_class`); returns the name.
    Registering the same task under the same name again is a no-op; a name that reasoning-gym
    already holds for something else is a HarnessError."""
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
    factory.register_dataset(name, dataset_cls, config_cls, curriculum_class(task, name, config_cls))
    return name
