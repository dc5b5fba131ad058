"""Reward functions for reinforcement learning with verifiers: verl and TRL signatures.

Every reward scores a completion as :func:`gengap.harnesses.scoring.score_output` does (answer
extraction, then the stored target for an answer that is exactly it and the task's own
checker for any other; a traced row's final answer, after its ``=>``, or the whole answer of
an answer-only reply). They are routed by task: the record's task comes
from the row (``extra_info["task"]`` / a ``task`` column), or from a ``data_source`` of the form
``gengap/<config>[/<side>]`` (config ``<task>-<split>``). Four signals, exactly:

- **correct**: 1.0 when the checker accepts the answer read, else 0.0 (an output with no
  answer read scores 0.0);
- **per-token** (partial credit): 1.0 when the checker accepts; otherwise the positions where
  the answer's tokens equal the target's, over the longer of the two lengths
  (:attr:`gengap.harnesses.scoring.Score.per_token`);
- **format**: 1.0 when the completion follows the row's answer format (``line``, ``tags``,
  ``think`` or ``boxed``: :func:`gengap.harnesses.extraction.format_ok`), else 0.0, whether or not the
  answer is right. The format is the row's ``answer_format`` (a column of the chat export, a
  field of the verl export's ``extra_info``), ``line`` when the row has none.
- **execution** (execution accuracy): 1.0 when the answer read, executed, gives the record's
  answers (:func:`gengap.harnesses.scoring.execution_span`: a cfq_like query run on the record's
  knowledge base, rebuilt from ``meta``, under the bindings of its placeholders the task's
  execution check uses, must answer as the question does, and on the gold query's probe worlds as
  the gold does, so an answer that merely comes back empty scores 0.0), else 0.0; an answer that is not a
  query, or cannot run, scores 0.0. For a task that does not execute its answers it is
  **correct**; for a row without its input, whether the answer is the target.

- verl: ``compute_score(data_source, solution_str, ground_truth, extra_info=None, *,
  partial_credit=False, format_weight=0.0, answer_format=None)`` as verl's custom reward
  function (``gengap export --to verl`` writes a ``reward.py`` that imports it). By default
  it returns correct, a float. With ``partial_credit`` or a ``format_weight`` it returns
  verl's dict form ``{"score": base + format_weight * format, "acc": correct, "per_token": ...,
  "format": ...}``, ``base`` being the per-token credit when ``partial_credit`` is true, else
  correct: verl trains on ``score`` and reports every key (``acc`` stays the exact match).
  The keyword settings come from verl's ``reward.custom_reward_function.reward_kwargs``;
  ``answer_format`` overrides the row's. ``ground_truth`` is the record's target; ``extra_info`` (what the export writes)
  holds ``task``, ``input`` and ``meta`` so the checker can read the input (needed by tasks with
  several correct answers). Without them the answer's tokens are compared with the ground
  truth. Rows whose data_source is not gengap's go to verl's ``default_compute_score`` when
  verl is installed. ``compute_execution_score`` (same arguments) returns execution, a float
  (``reward.custom_reward_function.name=compute_execution_score``; the export's ``reward.py``
  provides both).
- TRL: ``gengap_reward`` (correct), ``gengap_token_reward`` (per-token),
  ``gengap_format_reward`` (format) and ``gengap_execution_reward`` (execution), each ``f(completions, **kwargs)`` for
  ``GRPOTrainer(reward_funcs=[...], args=GRPOConfig(reward_weights=[...]))``: the dataset
  columns arrive as keyword lists, one value per completion. They read either the columns of
  ``gengap export --to chat`` (``task``, ``input``, ``target``, ``meta``, ``answer_format``) or
  those of the verl Parquet (``reward_model``, ``extra_info``, ``data_source``); completions are
  strings or conversational message lists (the last message's content is scored). Each
  returns one float per completion (None for a row that carries no gengap record, which TRL
  reads as "not applicable").
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from collections.abc import Callable, Mapping, Sequence  # isinstance with these is much faster than with typing's
from typing import Any

from gengap.generators import UnknownTaskError, get_task
from gengap.harnesses.errors import HarnessError
from gengap.harnesses.extraction import ANSWER_FORMATS, answer_tokens, extract_answer, format_ok, single_spaced
from gengap.harnesses.scoring import Score, alphabet_for, execution_span, one_answer, score_span, target_score, task_alphabet, untraced

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


def _untraced_row(meta: Any) -> bool:
    """Whether a row's meta (a mapping, JSON text or nothing) marks no trace."""
    return meta is None or untraced(meta if isinstance(meta, Mapping) else _meta(meta))


def task_of_source(data_source: Any) -> str | None:
    """The task of a ``gengap/<config>[/<side>]`` or ``gengap/<task>`` data source (None for others)."""
    if not isinstance(data_source, str) or not data_source.startswith(DATA_SOURCE_PREFIX):
        return None
    name = data_source[len(DATA_SOURCE_PREFIX) :].split("/")[0]
    return name.split("-")[0] or None


def make_record(task: str, input_text: str | None, target: str, meta: Any = None, answer_format: Any = None) -> dict[str, Any]:
    """A record the checker can read, from the fields a row carries (and the row's answer format, if any)."""
    record: dict[str, Any] = {"task": task, "input": input_text or "", "target": target}
    parsed = _meta(meta)
    if parsed:
        record["meta"] = parsed
    if isinstance(answer_format, str) and answer_format:
        record["answer_format"] = answer_format
    return record


def known_task(task: str) -> None:
    """HarnessError unless task is a gengap task."""
    try:
        get_task(task)
    except UnknownTaskError as err:
        raise HarnessError(str(err)) from None


def score_completion(record: Mapping[str, Any], completion: str | None) -> Score:
    """The score of a completion for a record.

    With the record's input, :func:`gengap.harnesses.scoring.score_span` decides (the target for an
    answer that is exactly it, else the task's checker); without it (``input`` empty), the
    answer's tokens must equal the target's.
    """
    known_task(str(record["task"]))
    return _score_span(record, extract_answer(completion))


def _score_span(record: Mapping[str, Any], span: str | None) -> Score:
    return score_span(record, span) if record.get("input") else target_score(record, span)


def score_record(record: Mapping[str, Any], completion: str | None) -> float:
    """1.0 when the completion's answer is right for the record, else 0.0 (see :func:`score_completion`)."""
    return 1.0 if score_completion(record, completion).correct else 0.0


def token_reward(record: Mapping[str, Any], completion: str | None) -> float:
    """The per-token partial credit of a completion (1.0 when right)."""
    return score_completion(record, completion).per_token


def execution_reward(record: Mapping[str, Any], completion: str | None) -> float:
    """1.0 when the completion's answer executes to the record's answers, else 0.0 (see the
    module doc; :func:`gengap.harnesses.scoring.execution_span`)."""
    known_task(str(record["task"]))
    span = extract_answer(completion)
    right = execution_span(record, span) if record.get("input") else target_score(record, span).correct
    return 1.0 if right else 0.0


def answer_format_of(record: Mapping[str, Any], override: str | None = None) -> str:
    """The answer format a row asked for: override, else the row's ``answer_format``, else ``line``."""
    chosen = override if override is not None else record.get("answer_format") or "line"
    if chosen not in ANSWER_FORMATS:
        raise HarnessError(f"unknown answer format {chosen!r}; choose one of {', '.join(ANSWER_FORMATS)}")
    return str(chosen)


def format_reward(record: Mapping[str, Any], completion: str | None, answer_format: str | None = None) -> float:
    """1.0 when the completion follows the row's answer format (or answer_format), else 0.0."""
    return 1.0 if format_ok(completion, answer_format_of(record, answer_format)) else 0.0


@dataclass(frozen=True)
class _Reading:
    """What reading an answer of a task needs, looked up once per task (see _target_verdict).
    ``tokens``: fullmatch of any text of the task's alphabet tokens and spaces, where each
    token is one character (``single``), else of tokens joined by single spaces. ``tagged``:
    fullmatch (from a position) of ``<answer>``, alphabet tokens joined by single spaces,
    ``</answer>`` and whitespace; None when a token could hold part of an answer marker (a
    backslash, w or W), so that the content of such tags could be anything but the answer.
    ``dropped``: the alphabet's tokens that are decoration at the end of an answer (a ``.`` no
    answer ends with: extraction.Alphabet.removable_trailing), so a span ending in one has a mark to drop."""

    one_answer: bool
    single: bool
    tokens: Callable[[str], Any]
    tagged: Callable[[str, int], Any] | None
    dropped: tuple[str, ...] = ()


_READINGS: dict[str, _Reading] = {}  # tasks compute_score has found in the registry


def _reading(task: str) -> _Reading:
    """The task's reading, remembered; HarnessError for a name that is not a gengap task."""
    found = _READINGS.get(task)
    if found is None:
        known_task(task)
        found = _READINGS[task] = _new_reading(task)
    return found


def _new_reading(task: str) -> _Reading:
    alphabet = task_alphabet(task)
    if not alphabet.tokens:
        return _Reading(one_answer(task), alphabet.single_characters, re.compile("(?!)").fullmatch, None)  # matches nothing
    if alphabet.single_characters:
        characters = "[" + "".join(re.escape(t) for t in sorted(alphabet.tokens)) + "]"
        pattern, spaced = characters[:-1] + " ]*", f"{characters}(?: {characters})*"
    else:
        token = "(?:" + "|".join(re.escape(t) for t in sorted(alphabet.tokens, key=lambda t: (-len(t), t))) + ")"
        pattern = spaced = f"{token}(?: {token})*"
    markers = any(mark in token for token in alphabet.tokens for mark in ("\\", "w", "W"))
    tagged = None if markers else re.compile(f"<answer>({spaced})</answer>\\s*").fullmatch
    dropped = tuple(sorted(alphabet.removable_trailing & alphabet.tokens))
    return _Reading(one_answer(task), alphabet.single_characters, re.compile(pattern).fullmatch, tagged, dropped)


def _target_verdict(task: str, reading: _Reading, span: str, ground_truth: str, meta: Any, spaced: bool = False) -> float | None:
    """The plain reward of an extracted span (words joined by single spaces) when the target
    decides it without a record: 1.0 for the target itself; for an answer-only row of a
    one-answer task, whether the tokens read from the span (:func:`answer_tokens`) are the
    target's. None: the checker decides. ``spaced``: the span is known to be alphabet tokens
    joined by single spaces (``reading.tagged`` matched it)."""
    latex = not spaced and "\\" in span  # LaTeX to undo before the span can be the target
    if not latex and span == ground_truth:
        return 1.0
    decides = reading.one_answer and (meta is None or (meta.get("trace", "none") == "none" if type(meta) is dict else _untraced_row(meta)))
    if (decides and (spaced or (not latex and reading.tokens(span) is not None and (not reading.single or 2 * span.count(" ") + 1 == len(span))))
            and not (reading.dropped and span.endswith(reading.dropped))):
        # the span is alphabet tokens joined by single spaces: no mark to drop, nothing to fold
        # or split (under any alphabet the target's tokens add), so it reads as span.split()
        if len(ground_truth) < len(span) or single_spaced(ground_truth):
            return 0.0  # a target written as its tokens joined by single spaces that is not the span
        return 1.0 if span == " ".join(ground_truth.split()) else 0.0
    target = ground_truth.split()
    if not latex and span == " ".join(target):
        return 1.0
    if not decides:
        return None
    tokens = answer_tokens(span, alphabet_for(task, target))
    return 1.0 if tokens and tokens == target else 0.0


def _tagged_span(reading: _Reading, output: Any) -> str | None:
    """The span extract_answer finds in the common output, text then ``<answer>tokens</answer>``
    (alphabet tokens joined by single spaces), read by one match: no reasoning block to drop,
    and the last tag's content holds no marker (see extraction._closing_tags). None when the
    output is not of that form (extract_answer then decides)."""
    if reading.tagged is None or type(output) is not str or "</t" in output or "</T" in output:
        return None
    at = output.rfind("<answer>")
    closed = reading.tagged(output, at) if at >= 0 else None
    return None if closed is None else closed[1]


def compute_score(
    data_source: Any,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    *,
    partial_credit: bool = False,
    format_weight: float = 0.0,
    answer_format: str | None = None,
    **kwargs: Any,
) -> float | dict[str, float]:
    """verl's custom reward: the score of one response (see the module doc)."""
    info = extra_info if type(extra_info) is dict or isinstance(extra_info, Mapping) else {}
    if type(ground_truth) is not str and isinstance(ground_truth, Mapping):  # a whole reward_model struct
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
    reading = _reading(task)
    span = _tagged_span(reading, solution_str)
    spaced = span is not None
    if not spaced:
        span = extract_answer(solution_str)
    plain = not (partial_credit or format_weight)
    if plain:
        if span is None:
            return 0.0  # no answer read: wrong
        verdict = _target_verdict(task, reading, span, ground_truth, info.get("meta"), spaced)
        if verdict is not None:
            return verdict
    record = make_record(task, info.get("input"), ground_truth, info.get("meta"), info.get("answer_format"))
    scored = _score_span(record, span)
    correct = 1.0 if scored.correct else 0.0
    if plain:
        return correct
    form = format_reward(record, solution_str, answer_format)
    base = scored.per_token if partial_credit else correct
    return {"score": base + float(format_weight) * form, "acc": correct, "per_token": scored.per_token, "format": form}


def compute_execution_score(
    data_source: Any,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> float:
    """verl's custom reward for execution accuracy: 1.0 when the response's answer executes to
    the row's answers (see the module doc), else 0.0; a row that does not name a gengap task
    goes to verl's ``default_compute_score`` as in :func:`compute_score`."""
    info = extra_info if isinstance(extra_info, Mapping) else {}
    if not isinstance(ground_truth, str) and isinstance(ground_truth, Mapping):
        ground_truth = ground_truth.get("ground_truth")
    task = info.get("task") if isinstance(info.get("task"), str) else task_of_source(data_source)
    if task is None:
        return compute_score(data_source, solution_str, ground_truth, extra_info, **kwargs)
    if not isinstance(ground_truth, str):
        raise HarnessError(f"gengap rows need a string ground_truth, got {type(ground_truth).__name__}")
    return execution_reward(make_record(task, info.get("input"), ground_truth, info.get("meta"), info.get("answer_format")), solution_str)


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
        return make_record(task, _column(kwargs, "input", index), target, _column(kwargs, "meta", index), _column(kwargs, "answer_format", index))
    reward_model = _column(kwargs, "reward_model", index)
    info = _column(kwargs, "extra_info", index)
    info = info if isinstance(info, Mapping) else {}
    truth = reward_model.get("ground_truth") if isinstance(reward_model, Mapping) else None
    task = info.get("task") if isinstance(info.get("task"), str) else task_of_source(_column(kwargs, "data_source", index))
    if isinstance(task, str) and isinstance(truth, str):
        return make_record(task, info.get("input"), truth, info.get("meta"), info.get("answer_format"))
    return None


def _per_row(score: Callable[[Mapping[str, Any], str], float], completions: Sequence[Any], kwargs: Mapping[str, Any]) -> list[float | None]:
    rewards: list[float | None] = []
    for index, completion in enumerate(completions):
        record = row_record(kwargs, index)
        rewards.append(None if record is None else score(record, completion_text(completion)))
    return rewards


def gengap_reward(completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
    """TRL GRPOTrainer reward function: correct (1.0 or 0.0) per completion (see the module doc)."""
    return _per_row(score_record, completions, kwargs)


def gengap_token_reward(completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
    """TRL GRPOTrainer reward function: per-token partial credit per completion (see the module doc)."""
    return _per_row(token_reward, completions, kwargs)


def gengap_format_reward(completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
    """TRL GRPOTrainer reward function: 1.0 when a completion keeps to its row's answer format (see the module doc)."""
    return _per_row(format_reward, completions, kwargs)


def gengap_execution_reward(completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
    """TRL GRPOTrainer reward function: execution accuracy (1.0 or 0.0) per completion (see the module doc)."""
    return _per_row(execution_reward, completions, kwargs)

