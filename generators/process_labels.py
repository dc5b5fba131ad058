"""Process labels: a traced record's trace with a chosen share of its steps made wrong, every
step labelled correct or incorrect by the task's checker (process supervision, Uesato et al.
2022; Lightman et al. 2023).

:func:`label_steps` takes a traced record (``meta.trace`` one of its task's formats) and a
:class:`Corruption` (``share`` of the steps to corrupt, ``seed``):

- the steps are the task's (``Task.trace_steps``: an inductive state, a column, a sub-problem,
  ...); a step can be corrupted when one of its value tokens (not ``#``, ``=``, ``|``, ``;``,
  ``,``, ``-`` or a hint ``p<i>``; in a least_to_most step, a token of the sub-answer) has
  another value to take: a number becomes another number (one written in the trace, or one
  more or less), any other token another token of the trace's values or of the answer;
- round(share x steps) of the corruptible steps (at least one when share > 0 and one is
  corruptible) are drawn, and in each one value token is replaced, all from the ``process``
  stream of (seed, record id) (gengap.generators.seeding.process_rng): the same record, share
  and seed always give the same trace, whatever the other records;
- every step is labelled by ``Task.step_verdicts`` (the step the correct computation has at
  its place, re-derived from the input), and the answer after ``=>`` by ``Task.check_answer``.

The answer is never corrupted, so a labelled trace of a record is wrong in its steps alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from gengap.generators.registry import get_task
from gengap.generators.seeding import process_rng
from gengap.generators.traces import SEPARATOR, STATE, SUB_ANSWER, SUB_END, is_hint, split_target, trace_format

STRUCTURE = frozenset({STATE, SUB_ANSWER, SUB_END, ";", ",", "-", SEPARATOR})


class ProcessLabelError(ValueError):
    """A record that process labels cannot take (answer-only, or a trace its checker rejects)."""


@dataclass(frozen=True)
class Corruption:
    """Which steps of each trace are made wrong: ``share`` of them (0..1), drawn with ``seed``."""

    share: float = 0.0
    seed: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.share, bool) or not isinstance(self.share, (int, float)) or not 0 <= self.share <= 1:
            raise ProcessLabelError(f"the corrupted share of steps must be in [0, 1], got {self.share!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ProcessLabelError(f"the corruption seed must be a non-negative integer, got {self.seed!r}")


@dataclass(frozen=True)
class LabelledTrace:
    """A trace as steps (each a token list), one label per step (True: correct), the answer
    tokens and their label, and the indices of the steps corrupted."""

    steps: list[list[str]]
    labels: list[bool]
    answer: list[str]
    answer_label: bool
    corrupted: tuple[int, ...]


def _values(step: list[str], fmt: str) -> list[int]:
    """Positions of a step's value tokens (see the module doc)."""
    start = step.index(SUB_ANSWER) + 1 if fmt == "least_to_most" and SUB_ANSWER in step else 0
    return [i for i in range(start, len(step)) if step[i] not in STRUCTURE and not is_hint(step[i])]


def _number(token: str) -> bool:
    return token.isascii() and token.isdigit()


def _others(token: str, pool: set[str]) -> list[str]:
    """The values a token can take instead of its own, sorted (numbers in numeric order)."""
    if _number(token):
        value = int(token)
        numbers = {int(t) for t in pool if _number(t)} | {value + 1} | ({value - 1} if value else set())
        return [str(v) for v in sorted(numbers - {value})]
    return sorted(t for t in pool if not _number(t) and t != token)


def label_steps(record: Mapping[str, Any], corruption: Corruption) -> LabelledTrace:
    """The record's trace with corruption applied and every step labelled (see the module doc)."""
    task = get_task(str(record["task"]))
    fmt = trace_format(record)
    parts = split_target(str(record["target"])) if fmt != "none" else None
    if parts is None:
        raise ProcessLabelError(f"record {record.get('id')!r} has no trace (process labels need a traced config: trace=...)")
    trace, answer = parts
    steps = task.trace_steps(trace, fmt, record)
    if not all(task.step_verdicts(record, trace, fmt)):
        raise ProcessLabelError(f"record {record.get('id')!r}: its own trace is not the computation of its input")
    pool = {step[i] for step in steps for i in _values(step, fmt)} | {t for t in answer if t not in STRUCTURE and not is_hint(t)}
    choices = {at: [(i, _others(step[i], pool)) for i in _values(step, fmt)] for at, step in enumerate(steps)}
    choices = {at: [(i, others) for i, others in options if others] for at, options in choices.items()}
    eligible = [at for at, options in choices.items() if options]
    count = min(len(eligible), max(math.floor(corruption.share * len(steps) + 0.5), 1 if corruption.share > 0 else 0))
    changed = [list(step) for step in steps]
    chosen: tuple[int, ...] = ()
    if count:
        rng = process_rng(corruption.seed, str(record.get("id", record["input"])))
        chosen = tuple(sorted(int(at) for at in rng.choice(eligible, size=count, replace=False)))
        for at in chosen:
            position, others = choices[at][int(rng.integers(len(choices[at])))]
            changed[at][position] = others[int(rng.integers(len(others)))]
    flat = [token for step in changed for token in step]
    labels = task.step_verdicts(record, flat, fmt)
    return LabelledTrace(changed, labels, answer, task.check_answer(record, " ".join(answer)), chosen)
