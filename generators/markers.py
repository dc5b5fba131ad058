"""Task markers: a token naming a record's task in front of its input, for multi-task data.

A model trained from scratch sees only a record's input. When the tasks of a multi-task config
or mixture share inputs (parity_check, reverse_string and duplicate_string over binary strings),
one input has several targets, and nothing in it says which is asked for. A marked record is its
unmarked record with one token put in front of its input, ``task:<task>`` (the record's own task):
``difficulty.input_length`` counts the token (it measures the record as written) and its ``id`` is
recomputed from its input and target, so a marked record is a valid example record.

The marker is not part of the task: every checker reads the record without it
(:func:`task_input`, :func:`without_marker`), so verdicts on a marked record are those on its
unmarked twin. A shortcut cue (gengap.generators.cues) goes in front of the marker: ``cue:1
task:parity_check 1 0 1``. The token prefix ``task:`` is reserved: no task writes it.
"""

from __future__ import annotations

from typing import Any, Mapping

from gengap.generators.batch import Record, record_id
from gengap.generators.cues import CUE_PREFIX, remeasured, strip_cue_input

MARKER_PREFIX = "task:"


def marker_token(task: str) -> str:
    """The marker token of a task."""
    return MARKER_PREFIX + task


def has_marker(example: Mapping[str, Any]) -> bool:
    """Whether the record's first input token is a task marker."""
    text = example.get("input")
    return isinstance(text, str) and text.startswith(MARKER_PREFIX)


def strip_marker_input(example: Mapping[str, Any]) -> Mapping[str, Any]:
    """The example with its marker token removed from ``input`` (unchanged without one)."""
    if not has_marker(example):
        return example
    rest = example["input"].split(" ", 1)
    return {**example, "input": rest[1] if len(rest) > 1 else ""}


def task_input(example: Mapping[str, Any]) -> Mapping[str, Any]:
    """The example as its task reads it: without a shortcut cue and without a task marker."""
    return strip_marker_input(strip_cue_input(example))


def bare_input(text: str) -> str:
    """An input text without a cue token and a marker token in front (what a generator wrote)."""
    for prefix in (CUE_PREFIX, MARKER_PREFIX):
        if text.startswith(prefix):
            text = text.split(" ", 1)[1] if " " in text else ""
    return text


def with_marker(record: Record) -> Record:
    """The record with its task's marker in front of its input (id and input_length updated);
    a record that already has one is returned as it is."""
    if has_marker(record):
        return record
    text = f"{marker_token(record['task'])} {record['input']}"
    difficulty = dict(record["difficulty"])
    difficulty["input_length"] = difficulty["input_length"] + 1
    out = dict(record)
    out.update(id=record_id(record["task"], text, record["target"]), input=text, difficulty=difficulty)
    return {key: out[key] for key in record}  # the record's key order


def without_marker(record: Mapping[str, Any]) -> dict[str, Any]:
    """The unmarked record of a marked one: marker removed, ``input_length`` and ``id`` those of
    the unmarked input (a copy of a record without a marker)."""
    if not has_marker(record):
        return dict(record)
    return remeasured(record, strip_marker_input(record)["input"])


def marker_problem(record: Mapping[str, Any]) -> str | None:
    """Why a record's marker is malformed (None: well formed, or no marker): it must name the
    record's own task and be followed by the unmarked input."""
    if not has_marker(record):
        return None
    head, _, rest = str(record["input"]).partition(" ")
    if head != marker_token(str(record.get("task"))):
        return f"its marker {head} does not name its task {record.get('task')}"
    if not rest or rest.startswith(MARKER_PREFIX):
        return f"its {MARKER_PREFIX} token must be followed by the unmarked input"
    return None
