"""Reward functions for reinforcement learning with verifiers: verl and TRL signatures.

Both score a completion with :func:`harnesses.scoring.score_output` (answer extraction, then
the task's own checker): 1.0 when the checker accepts the answer, else 0.0. They are routed
by task: the record's task comes from the row (``extra_info["task"]`` / a ``task`` column), or
from a ``data_source`` of the form ``gengap/<config>[/<side>]`` (config ``<task>-<split>``).

- verl: ``compute_score(data_source, solution_str, ground_truth, extra_info=None)`` as a
  ``custom_reward_function`` (``gengap export --to verl`` writes a ``reward.py`` that imports
  it). ``ground_truth`` is the record's target; ``extra_info`` (what the export writes) holds
  ``task``, ``input`` and ``meta`` so the checker can read the input (needed by tasks with
  several correct answers). Without them the answer's tokens are compared with the ground
  truth. Rows whose data_source is not gengap's go to verl's ``default_compute_score`` when
  verl is installed.
- TRL: ``gengap_reward(completions, **kwargs)`` for ``GRPOTrainer(reward_funcs=...)``: the
  dataset columns arrive as keyword lists, one value per completion. It reads either the
  columns of ``gengap export --to chat`` (``task``, ``input``, ``target``, ``meta``) or those of
  the verl Parquet (``reward_model``, ``extra_info``, ``data_source``); completions are strings
  or conversational message lists (the last message's content is scored). It returns one float
  per completion (None for a row that carries no gengap record, which TRL reads as "not
  applicable").
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from generators import UnknownTaskError, get_task
from harnesses.errors import HarnessError
from harnesses.scoring import read_answer, score_output

DATA_SOURCE_PREFIX = "gengap/"


def _meta(value: Any) -> dict[str, Any] | None:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, str) and value.strip():
        try:
            parsed = json.loads(value)
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict) else None
    return None


def task_of_source(data_source: Any) -> str | None:
    """The task of a ``gengap/<config>[/<side>]`` or ``gengap/<task>`` data source (None for others)."""
    if not isinstance(data_source, str) or not data_source.startswith(DATA_SOURCE_PREFIX):
        return None
    name = data_source[len(DATA_SOURCE_PREFIX) :].split("/")[0]
    return name.split("-")[0] or None


def make_record(task: str, input_text: str | None, target: str, meta: Any = None) -> dict[str, Any]:
    """A record the checker can read, from the fields a row carries."""
    record: dict[str, Any] = {"task": task, "input": input_text or "", "target": target}
    parsed = _meta(meta)
    if parsed:
        record["meta"] = parsed
    return record


def score_record(record: Mapping[str, Any], completion: str | None) -> float:
    """1.0 when the completion's answer is right for the record, else 0.0.

    With the record's input, the task's checker decides; without it (``input`` empty), the
    answer's tokens must equal the target's.
    """
    try:
        get_task(str(record["task"]))
    except UnknownTaskError as err:
        raise HarnessError(str(err)) from None
    if record.get("input"):
        return 1.0 if score_output(record, completion).correct else 0.0
    _, tokens = read_answer(record, completion)
    return 1.0 if tokens and tokens == str(record["target"]).split() else 0.0


def compute_score(data_source: Any, solution_str: str, ground_truth: Any, extra_info: Mapping[str, Any] | None = None, **kwargs: Any) -> float:
    """verl's custom reward: the score of one response (see the module doc)."""
    info = extra_info if isinstance(extra_info, Mapping) else {}
    if isinstance(ground_truth, Mapping):  # a whole reward_model struct
        ground_truth = ground_truth.get("ground_truth")
    task = info.get("task") if isinstance(info.get("task"), str) else task_of_source(data_source)
    if task is None:
        try:
            from verl.utils.reward_score import default_compute_score  # type: ignore[import-not-found]
        except ImportError:
            raise HarnessError(f"not a gengap row: data_source {data_source!r} and no extra_info task") from None
        return default_compute_score(data_source, solution_str, ground_truth, extra_info, **kwargs)
    if not isinstance(ground_truth, str):
        raise HarnessError(f"gengap rows need a string ground_truth, got {type(ground_truth).__name__}")
    return score_record(make_record(task, info.get("input"), ground_truth, info.get("meta")), solution_str)


def completion_text(completion: Any) -> str:
    """The text of a TRL completion: a string, or the content of the last message of a conversation."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion:
        last = completion[-1]
        if isinstance(last, Mapping):
            content = last.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, Sequence):  # multimodal content parts
                return "".join(part.get("text", "") for part in content if isinstance(part, Mapping))
    return ""


def _column(kwargs: Mapping[str, Any], name: str, index: int) -> Any:
    values = kwargs.get(name)
    if isinstance(values, Sequence) and not isinstance(values, (str, bytes)) and index < len(values):
        return values[index]
    return None


def row_record(kwargs: Mapping[str, Any], index: int) -> dict[str, Any] | None:
    """The record of row index of TRL's keyword columns (chat export or verl Parquet columns); None if none."""
    task = _column(kwargs, "task", index)
    target = _column(kwargs, "target", index)
    if isinstance(task, str) and isinstance(target, str):
        return make_record(task, _column(kwargs, "input", index), target, _column(kwargs, "meta", index))
    reward_model = _column(kwargs, "reward_model", index)
    info = _column(kwargs, "extra_info", index)
    info = info if isinstance(info, Mapping) else {}
    truth = reward_model.get("ground_truth") if isinstance(reward_model, Mapping) else None
    task = info.get("task") if isinstance(info.get("task"), str) else task_of_source(_column(kwargs, "data_source", index))
    if isinstance(task, str) and isinstance(truth, str):
        return make_record(task, info.get("input"), truth, info.get("meta"))
    return None


def gengap_reward(completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
    """TRL GRPOTrainer reward function: one float per completion (see the module doc)."""
    rewards: list[float | None] = []
    for index, completion in enumerate(completions):
        record = row_record(kwargs, index)
        rewards.append(None if record is None else score_record(record, completion_text(completion)))
    return rewards

