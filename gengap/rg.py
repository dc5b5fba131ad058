"""reasoning-gym-compatible datasets of gengap tasks and releases, under one import.

``create_dataset(task, size=, seed=, **params)`` and ``from_release(dir, config, part)`` are
:mod:`gengap.harnesses.procedural` (items, metadata and scoring as reasoning-gym's
``ProceduralDataset``); ``register(task)`` is :mod:`gengap.harnesses.rg_registry` (the task in
reasoning-gym's own registry, for its ``CompositeDataset`` and the other consumers that create
datasets by name).
"""

from gengap.harnesses.procedural import (
    GengapDataset,
    ReleaseDataset,
    ReleasePartConfig,
    TaskConfig,
    TaskDataset,
    create_dataset,
    from_release,
    score_entry,
)
from gengap.harnesses.rg_registry import register

__all__ = [
    "GengapDataset",
    "ReleaseDataset",
    "ReleasePartConfig",
    "TaskConfig",
    "TaskDataset",
    "create_dataset",
    "from_release",
    "register",
    "score_entry",
]
