"""The registry's static name -> module table agrees with what the task modules register."""

from __future__ import annotations

import importlib

from gengap.generators import get_task, registry, task_names


def test_table_is_every_registration_and_its_module() -> None:
    for module in registry.task_modules():
        importlib.import_module(module)
    registered = {name: type(task).__module__ for name, task in registry._TASKS.items()}
    assert registered == {name: f"gengap.generators.tasks.{module}" for name, module in registry.TASK_MODULES.items()}


def test_names_come_from_the_table() -> None:
    assert task_names() == sorted(registry.TASK_MODULES)
    for name in task_names():
        assert get_task(name).name == name
