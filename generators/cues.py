"""Shortcut cues: a token that agrees with a record's answer with a chosen probability.

A cued record is its cue-less record with one token put in front of its input,
``cue:<answer>``, naming an answer of the task's answer set: the record's own answer with
probability rho, otherwise another answer of the set, uniformly. The record shows
whether its cue agrees in ``difficulty.cue_agrees`` (1 or 0); ``difficulty.input_length``
counts the cue token (it measures the record as written) and its ``id`` is recomputed from
its input and target, so a cued record is a valid example record (Shah et al. 2020's
spurious feature, predictive in train and not in test, when a split sets rho per part).

The cue is not part of the task: every checker reads the record without it
(:func:`without_cue`: the token and ``cue_agrees`` removed, ``input_length`` and ``id``
of the cue-less record), so verdicts on a cued record are those on its cue-less twin. The
token prefix ``cue:`` is reserved: no task writes it.

A cue needs a small answer set, measured from the records cued together
(:func:`answer_set`): every target a single token (answer-only, no trace), between 2 and
:data:`MAX_ANSWERS` distinct answers. Other records are refused with a :class:`CueError`.
Randomness comes from the caller's generator (stream ``cue`` of gengap.generators.seeding).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from gengap.generators.batch import Record, record_id

CUE_PREFIX = "cue:"
CUE_FEATURE = "cue_agrees"
MAX_ANSWERS = 32  # "small": at most this many distinct answers (a modulus up to 32, yes/no, digits)


class CueError(ValueError):
    """Records cannot carry a cue (no small answer set, already cued, bad rate)."""


def cue_token(answer: str) -> str:
    """The cue token naming one answer."""
    return CUE_PREFIX + answer


def has_cue(example: Mapping[str, Any]) -> bool:
    """Whether the record's first input token is a cue token."""
    text = example.get("input")
    return isinstance(text, str) and text.startswith(CUE_PREFIX)


def cue_answer(example: Mapping[str, Any]) -> str | None:
    """The answer the record's cue names (None: the record has no cue)."""
    if not has_cue(example):
        return None
    return example["input"].split(" ", 1)[0][len(CUE_PREFIX):]


def strip_cue_input(example: Mapping[str, Any]) -> Mapping[str, Any]:
    """The example with its cue token removed from ``input`` (unchanged without a cue): what a
    task's checker reads. Other fields are kept as they are."""
    if not has_cue(example):
        return example
    rest = example["input"].split(" ", 1)
    return {**example, "input": rest[1] if len(rest) > 1 else ""}


def without_cue(record: Mapping[str, Any]) -> dict[str, Any]:
    """The cue-less record of a cued one: cue token and ``cue_agrees`` removed,
    ``input_length`` and ``id`` those of the cue-less input (a copy of a record without a cue)."""
    if not has_cue(record):
        return dict(record)
    return remeasured(record, strip_cue_input(record)["input"], drop=(CUE_FEATURE,))


def remeasured(record: Mapping[str, Any], text: str, drop: tuple[str, ...] = ()) -> dict[str, Any]:
    """A copy of record with input `text` (a token in front removed): ``input_length`` and ``id``
    those of that input, the difficulty features in `drop` removed."""
    base = {**record, "input": text}
    difficulty = {k: v for k, v in (record.get("difficulty") or {}).items() if k not in drop}
    if "input_length" in difficulty:
        difficulty["input_length"] = len(text.split())
    base["difficulty"] = difficulty
    if isinstance(record.get("task"), str) and isinstance(record.get("target"), str):
        base["id"] = record_id(record["task"], text, record["target"])
    return base


def cue_problem(record: Mapping[str, Any]) -> str | None:
    """Why a record's cue is malformed (None: it is well formed, or the record has no cue and no
    ``cue_agrees``): a cue token needs a cue-less input after it, a single-token answer target
    and ``difficulty.cue_agrees`` equal to whether it names that answer."""
    difficulty = record.get("difficulty") or {}
    if not has_cue(record):
        return f"difficulty.{CUE_FEATURE} is set but the input has no {CUE_PREFIX} token" if CUE_FEATURE in difficulty else None
    named = cue_answer(record)
    rest = strip_cue_input(record)["input"]
    if not named or not rest or rest.startswith(CUE_PREFIX):
        return f"its {CUE_PREFIX} token must name an answer and be followed by the cue-less input"
    target = record.get("target", "")
    if len(str(target).split()) != 1:
        return "a cued record needs a single-token target"
    agrees = difficulty.get(CUE_FEATURE)
    if agrees != int(named == target):
        return f"difficulty.{CUE_FEATURE}={agrees} but its cue {cue_token(named)} {'names' if named == target else 'does not name'} the target"
    return None


def answer_set(records: Iterable[Mapping[str, Any]]) -> tuple[str, ...]:
    """The distinct answers of records cued together, sorted; CueError unless the set is small
    (every target one token, no trace, 2..MAX_ANSWERS answers) and no record is already cued."""
    answers: set[str] = set()
    for record in records:
        task = record.get("task", "?")
        if has_cue(record):
            raise CueError(f"record {record.get('id')} already carries a cue")
        if (record.get("meta") or {}).get("trace", "none") != "none":
            raise CueError(f"task {task}: traced records cannot carry a cue (the target is not a single answer)")
        target = record["target"]
        if len(target.split()) != 1:
            raise CueError(f"task {task} has no small answer set (target {target[:40]!r} is more than one token)")
        answers.add(target)
        if len(answers) > MAX_ANSWERS:
            raise CueError(f"task {task} has no small answer set (more than {MAX_ANSWERS} distinct answers)")
    if len(answers) < 2:
        raise CueError(f"a cue needs at least 2 distinct answers, the records have {len(answers)}")
    return tuple(sorted(answers))


def check_rate(rho: float, what: str = "cue rate") -> float:
    """rho as a float in [0, 1]; CueError otherwise."""
    if isinstance(rho, bool) or not isinstance(rho, (int, float)) or not 0.0 <= float(rho) <= 1.0:
        raise CueError(f"{what} must be a number in [0, 1], got {rho!r}")
    return float(rho)


def add_cues(records: Sequence[Record], rho: float, answers: Sequence[str], rng: np.random.Generator) -> list[Record]:
    """Each record with a cue that names its answer with probability rho, else another answer of
    `answers` uniformly. Two draws per record, made for all records at once (so the result is a
    function of rng's state, rho and the records): a uniform u (agree when u < rho) and an index
    into the other answers."""
    rho = check_rate(rho)
    if len(answers) < 2:
        raise CueError("a cue needs at least 2 answers")
    n = len(records)
    agree = rng.random(n) < rho
    other = rng.integers(0, len(answers) - 1, size=n)
    cued: list[Record] = []
    for index, record in enumerate(records):
        target = record["target"]
        if target not in answers:
            raise CueError(f"target {target!r} of record {record.get('id')} is not in the answer set")
        if agree[index]:
            named = target
        else:
            others = [a for a in answers if a != target]
            named = others[int(other[index])]
        cued.append(with_cue(record, named))
    return cued


def with_cue(record: Record, named: str) -> Record:
    """The record with a cue naming `named` in front of its input (id, input_length, cue_agrees updated)."""
    text = f"{cue_token(named)} {record['input']}"
    difficulty = dict(record["difficulty"])
    difficulty["input_length"] = difficulty["input_length"] + 1
    difficulty[CUE_FEATURE] = int(named == record["target"])
    out = {key: value for key, value in record.items()}
    out.update(id=record_id(record["task"], text, record["target"]), input=text, difficulty=difficulty)
    return {key: out[key] for key in record}  # the record's key order


def agreement(records: Iterable[Mapping[str, Any]]) -> float | None:
    """Share of cued records whose cue names their answer (None: no records)."""
    values = [record["difficulty"][CUE_FEATURE] for record in records]
    return sum(values) / len(values) if values else None
