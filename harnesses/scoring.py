"""Scoring model output with the task's own checker.

``score_output(record, output)`` extracts the answer span of free-form output
(:func:`gengap.harnesses.extraction.extract_answer`), reads its tokens against the task's answer
alphabet (:func:`gengap.harnesses.extraction.answer_tokens`) and asks the task's independent checker
``Task.check(record, answer)``, so tasks with several correct answers (shortest_path: any
shortest path) are scored right. A record needs ``task`` and ``input`` (and ``meta`` where the
task has one), and normally ``target``.

Fast path: the stored target decides an answer span that is exactly the target (its tokens
joined by single spaces, no LaTeX backslash): it scores 1.0 without the checker, since
reading such a span gives the target's tokens and the checker accepts a record's own target.
The stored target also decides every other answer of an answer-only record (no ``meta.trace``)
of a task with one correct answer: one that keeps Task's ``check``, ``check_parts`` and
``check_answer``, which accept exactly the tokens of ``solve`` (:func:`one_answer`); the
answer is read as the checker would read it and compared with the target's tokens. Answers
of tasks whose checker accepts several answers (shortest_path, maze, grid_program, plugins
that override the checker), of traced records and of records without a target go to the
checker.

Traced records (``meta.trace``: the target is ``trace => answer``) are scored on the final
answer: the answer read is cut at its first ``=>`` and what follows is checked
(``Task.check_parts``' answer verdict, from the record's input), and an answer without ``=>`` (an
answer-only reply) is checked whole; the trace is not scored (the baselines score it apart).
Partial credit compares with the target's answer (the tokens after its ``=>``).
:func:`score_output_checked` always asks the checker (tests/test_scoring_fast_path.py checks
that both give the same scores on every task).

Partial credit (:attr:`Score.per_token`): 1.0 when the checker accepts the answer; otherwise
the number of positions i at which answer token i equals target token i, divided by the
length of the longer of the two (0.0 when no answer is read). Unlike the baselines' token
accuracy, tokens beyond the target's length count against the answer, so padding an answer
never raises its credit; and an answer the checker rejects stays below 1.0 whenever it differs
from the target.

Execution (:func:`execution_span`): a task that executes its answers (``check_execution``:
cfq_like runs a predicted query on the gold query's probe worlds and on the record's knowledge
base, rebuilt from ``meta``, and compares its answers with the gold's and the question's) scores the answer read by that check instead; the
target itself executes to its own answers. For any other task execution is the checker's verdict.

The answer alphabet of a task is the set of tokens of its targets: those of a fixed sample of
the task (20 examples at each of its levels 1..10, default parameters, cached per process)
together with the record's own target tokens; its final tokens (what an answer can end with,
which decides whether a trailing ``.`` can be decoration) are the last tokens of those targets.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping, Sequence

import numpy as np

from gengap.generators import get_task
from gengap.generators.task import Task
from gengap.generators.traces import SEPARATOR
from gengap.harnesses.extraction import Alphabet, answer_tokens, extract_answer

Record = Mapping[str, Any]
SAMPLE_PER_LEVEL = 20
SAMPLE_SEED = 20261201


@lru_cache(maxsize=None)
def task_alphabet(task: str) -> Alphabet:
    """The target tokens of a fixed sample of the task (every level, default parameters otherwise)."""
    spec = get_task(task)
    tokens: set[str] = set()
    finals: set[str] = set()
    for level, params in sorted(spec.levels().items()):
        rng = np.random.default_rng([SAMPLE_SEED, level])
        for record in spec.generate(rng, SAMPLE_PER_LEVEL, params).records(task):
            words = record["target"].split()
            tokens.update(words)
            finals.update(words[-1:])
    return Alphabet.of(tokens, finals)


def target_tokens(record: Record) -> list[str]:
    """The tokens of the record's target ([] when it has none)."""
    target = record.get("target")
    return [] if target is None else str(target).split()


def alphabet_for(task: str, tokens: Sequence[str]) -> Alphabet:
    """The answer alphabet for a record of task whose target has these tokens: the task's
    sample alphabet and the target's tokens."""
    alphabet = task_alphabet(task)
    if alphabet.tokens.issuperset(tokens) and alphabet.finals.issuperset(tokens[-1:]):
        return alphabet
    return alphabet | Alphabet.of(tokens, tokens[-1:])


def alphabet_of(record: Record) -> Alphabet:
    """The answer alphabet for a record: its task's sample alphabet and its own target tokens."""
    return alphabet_for(str(record["task"]), target_tokens(record))


@dataclass(frozen=True)
class Score:
    """One scored output: whether the checker accepts it, the answer read (tokens joined by
    spaces, "" when none), the span it was read from (None when the output was empty) and the
    partial credit (see the module doc)."""

    correct: bool
    answer: str
    span: str | None
    per_token: float = 0.0


def token_credit(target: Sequence[str], answer: Sequence[str]) -> float:
    """Positions where answer and target agree, over the longer length (0.0 for an empty answer)."""
    if not answer:
        return 0.0
    same = sum(1 for a, b in zip(target, answer) if a == b)
    return same / max(len(target), len(answer))


def read_answer(record: Record, output: str | None) -> tuple[str | None, list[str]]:
    """(answer span, answer tokens) of an output for a record."""
    span = extract_answer(output)
    return span, answer_tokens(span, alphabet_of(record))


def is_target(target: Any, span: str, tokens: Sequence[str] | None = None) -> bool:
    """Whether an answer span is exactly a record's target (None: no target), so that reading
    it gives the target's tokens (a span with a backslash may hold LaTeX to undo: never).
    tokens: the target's tokens, when the caller has them."""
    if target is None or "\\" in span:
        return False
    target = str(target)
    return span == target or span == " ".join(target.split() if tokens is None else tokens)


CHECKER_METHODS = ("check", "check_parts", "check_answer")


@lru_cache(maxsize=None)
def one_answer(task: str) -> bool:
    """Whether the task's checker accepts exactly the tokens of its ``solve`` (its class keeps
    Task's check, check_parts and check_answer), so a valid answer-only record's target is its
    only correct answer."""
    spec = type(get_task(task))
    return all(getattr(spec, name) is getattr(Task, name) for name in CHECKER_METHODS)


def untraced(meta: Any) -> bool:
    """Whether a record with this meta is answer-only (no ``meta.trace``, or trace none)."""
    return meta is None or not isinstance(meta, Mapping) or meta.get("trace", "none") == "none"


def _target_decides(record: Record) -> bool:
    """Whether the stored target decides every answer of the record (see the module doc)."""
    return record.get("target") is not None and one_answer(str(record["task"])) and untraced(record.get("meta"))


def final_answer(record: Record, tokens: list[str]) -> list[str]:
    """The final answer of a traced record's answer tokens: those after the first ``=>`` (all of
    them when there is none); the tokens themselves for an answer-only record."""
    if untraced(record.get("meta")) or SEPARATOR not in tokens:
        return tokens
    return tokens[tokens.index(SEPARATOR) + 1 :]


def target_score(record: Record, span: str | None) -> Score:
    """The score of a span by the record's target alone: correct when the tokens read from it
    are the target's (a traced record's: its final answer's), partial credit otherwise."""
    tokens = final_answer(record, answer_tokens(span, alphabet_of(record)))
    target = final_answer(record, target_tokens(record))
    correct = bool(tokens) and tokens == target
    return Score(correct, " ".join(tokens), span, 1.0 if correct else token_credit(target, tokens))


def score_span(record: Record, span: str | None) -> Score:
    """Score an extracted answer span: the target decides a span that is exactly it, and
    every span of a one-answer task's answer-only record; the checker every other (see the
    module doc)."""
    if span is not None and is_target(record.get("target"), span):
        answer = span if untraced(record.get("meta")) else " ".join(final_answer(record, span.split()))
        return Score(True, answer, span, 1.0)
    if _target_decides(record):
        return target_score(record, span)
    return _checked(record, span)


def score_output(record: Record, output: str | None) -> Score:
    """Extract one output and score it (:func:`score_span`)."""
    return score_span(record, extract_answer(output))


def score_output_checked(record: Record, output: str | None) -> Score:
    """Extract, read and check one output, the checker deciding every answer (no fast path)."""
    return _checked(record, extract_answer(output))


def _checked(record: Record, span: str | None) -> Score:
    tokens = answer_tokens(span, alphabet_of(record))
    if not untraced(record.get("meta")):  # scored on the final answer (module doc)
        tokens = final_answer(record, tokens)
        answer = " ".join(tokens)
        correct = bool(tokens) and get_task(str(record["task"])).check_parts(record, f"{SEPARATOR} {answer}")[0]
        target = final_answer(record, target_tokens(record))
        return Score(correct, answer, span, 1.0 if correct else token_credit(target, tokens))
    answer = " ".join(tokens)
    if not tokens:
        return Score(False, answer, span)
    correct = bool(get_task(str(record["task"])).check(record, answer))
    return Score(correct, answer, span, 1.0 if correct else token_credit(target_tokens(record), tokens))


def executable(task: str) -> bool:
    """Whether the task checks an answer by executing it (a ``check_execution(record, answer)``
    method: cfq_like runs a query on the record's knowledge base)."""
    return callable(getattr(get_task(task), "check_execution", None))


def execution_span(record: Record, span: str | None) -> bool:
    """Whether an extracted answer span executes to the record's answers: the record's target
    itself does; any other span is read as :func:`score_span` reads it (a traced record's final
    answer) and handed to the task's ``check_execution``. For a task that does not execute its
    answers this is the checker's verdict (:func:`score_span`)."""
    task = str(record["task"])
    if not executable(task):
        return score_span(record, span).correct
    if span is not None and is_target(record.get("target"), span) and untraced(record.get("meta")):
        return True  # the target's answers are its own
    tokens = final_answer(record, answer_tokens(span, alphabet_of(record)))
    return bool(tokens) and bool(get_task(task).check_execution(record, " ".join(tokens)))


def score_outputs(records: Sequence[Record], outputs: Sequence[str | None]) -> list[Score]:
    if len(records) != len(outputs):
        raise ValueError(f"{len(records)} records but {len(outputs)} outputs")
    return [score_output(record, output) for record, output in zip(records, outputs)]


def exact_match(records: Sequence[Record], outputs: Sequence[str | None]) -> float:
    """The share of outputs the checker accepts (0.0 for no records)."""
    scores = score_outputs(records, outputs)
    return sum(s.correct for s in scores) / len(scores) if scores else 0.0
