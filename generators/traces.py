"""Reasoning traces: a target written as its intermediate steps, a separator, then the answer.

A task that supports traces has a ``trace`` parameter (:func:`trace_knob`): ``none`` (the
answer alone, as gengap always wrote it) or one of the task's formats (each task says what it
writes in ``trace_formats``, shown by `gengap list`):

- ``coarse`` and ``fine``: fewer or more intermediate states;
- ``inductive`` (Abbe et al. 2024): a sequence of states, each opened by ``#`` and computable
  from the previous state and the input alone (:func:`inductive`);
- ``index_hints`` (Zhou et al. 2023): every step tagged with the position token ``p<i>`` of
  what it reads (:func:`hinted`; the tokens addition's ``format: index_hints`` writes);
- ``least_to_most`` (Zhou et al. 2022): the sub-problems from the smallest up, each
  ``<sub-problem> = <its answer> |`` (:func:`least_to_most`).

A traced target is ``<trace tokens> => <answer tokens>`` (the trace may be empty: ``=> 1``),
and its record carries ``meta.trace`` (the format). The trace is a rendering: a traced setting
draws the same inputs, from the same seed, as its answer-only twin (``trace`` is left out of
the seed, see gengap.generators.params.knob). A trace is a list of steps
(:meth:`gengap.generators.task.Task.trace_steps`: what the process labels of
gengap.generators.process_labels corrupt and label one by one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence, TypeVar

from gengap.generators.batch import Batch
from gengap.generators.params import knob
from gengap.generators.text import from_strings

if TYPE_CHECKING:
    from gengap.generators.task import Task

SEPARATOR = "=>"
FORMATS = ("none", "coarse", "fine", "inductive", "index_hints", "least_to_most")
STATE = "#"  # inductive: opens every state
SUB_ANSWER = "="  # least_to_most: between a sub-problem and its answer
SUB_END = "|"  # least_to_most: closes every sub-problem
HINT = "p"  # index hints: p0, p1, ... (position 0 first)
COARSE_STRIDE = 4  # running-state tasks: coarse writes the state after every 4th step
S = TypeVar("S")


def trace_knob(*formats: str) -> Any:
    """The ``trace`` parameter of a task whose traces come in ``formats`` (default coarse and
    fine; a rendering knob, default none)."""
    formats = formats or ("coarse", "fine")
    unknown = [fmt for fmt in formats if fmt not in FORMATS[1:]]
    if unknown:
        raise ValueError(f"unknown trace format {unknown[0]!r}")
    named = "coarse or fine (intermediate states" if formats == ("coarse", "fine") else f"{', '.join(formats)} (a trace"
    return knob(
        "none",
        choices=("none", *formats),
        rendering=True,
        doc=f"target format: none (answer only), {named}, '=>', answer)",
    )


def trace_format(example: Mapping[str, Any]) -> str:
    """The record's trace format: ``meta.trace``, or none for a record without it (answer only)."""
    meta = example.get("meta")
    fmt = meta.get("trace", "none") if isinstance(meta, Mapping) else "none"
    if fmt not in FORMATS:
        raise ValueError(f"meta.trace={fmt!r} is not one of {', '.join(FORMATS)}")
    return fmt


def split_target(text: str) -> tuple[list[str], list[str]] | None:
    """(trace tokens, answer tokens) of a traced target or prediction, split at the first
    separator; None when it has no separator."""
    tokens = text.split()
    if SEPARATOR not in tokens:
        return None
    cut = tokens.index(SEPARATOR)
    return tokens[:cut], tokens[cut + 1 :]


COPY_HINTS = "per symbol written, the position token p<i> of the input symbol it copies (p0 for the first), then that symbol"


def hint_token(position: int) -> str:
    """The index-hint token of a position (0-based): ``p0``, ``p1``, ..."""
    return f"{HINT}{position}"


def is_hint(token: str) -> bool:
    """Whether token is an index-hint token ``p<i>`` (i written without leading zeros)."""
    digits = token[len(HINT) :]
    return token.startswith(HINT) and digits.isdigit() and digits.isascii() and (digits == "0" or digits[0] != "0")


def hinted(steps: Iterable[tuple[int, Sequence[str]]]) -> list[str]:
    """An index_hints trace: per (position, tokens) step, the position's hint token, then the tokens."""
    return [token for position, tokens in steps for token in (hint_token(position), *tokens)]


def inductive(states: Iterable[Sequence[str]]) -> list[str]:
    """An inductive trace: every state opened by ``#``."""
    return [token for state in states for token in (STATE, *state)]


def least_to_most(subproblems: Iterable[tuple[Sequence[str], Sequence[str]]]) -> list[str]:
    """A least_to_most trace: per (sub-problem, answer), ``<sub-problem> = <answer> |``."""
    return [token for problem, answer in subproblems for token in (*problem, SUB_ANSWER, *answer, SUB_END)]


def split_steps(trace: Sequence[str], fmt: str, width: int = 1) -> list[list[str]]:
    """The steps of a trace: inductive states (each from its ``#``), least_to_most
    sub-problems (each up to its ``|``), index_hints steps (each from its hint token), and for
    coarse and fine runs of ``width`` tokens (the last may be shorter)."""
    tokens = list(trace)
    if fmt in ("inductive", "index_hints"):
        opens = (lambda t: t == STATE) if fmt == "inductive" else is_hint
        steps: list[list[str]] = []
        for token in tokens:
            if opens(token) or not steps:
                steps.append([])
            steps[-1].append(token)
        return steps
    if fmt == "least_to_most":
        steps = [[]]
        for token in tokens:
            steps[-1].append(token)
            if token == SUB_END:
                steps.append([])
        return steps if steps[-1] else steps[:-1]
    return [tokens[i : i + width] for i in range(0, len(tokens), max(width, 1))]


def with_traces(task: "Task[Any]", batch: Batch, fmt: str) -> Batch:
    """The batch with each target replaced by ``trace => target`` (unchanged for none).

    The trace of each example comes from ``task.trace_tokens`` over the record's input and
    meta (plain Python per example); ``meta.trace`` records the format.
    """
    if fmt == "none":
        return batch
    meta = {**(batch.meta or {}), "trace": fmt}
    targets = []
    for raw_in, raw_out in zip(batch.inputs.tolist(), batch.targets.tolist()):
        steps = task.trace_tokens({"input": raw_in.decode(), "meta": meta}, fmt)
        targets.append(" ".join([*steps, SEPARATOR, raw_out.decode()]))
    return Batch(batch.inputs, from_strings(targets), batch.features, batch.structure, meta)


def running_states(start: S, steps: Sequence[Any], update: Callable[[S, Any], S], fmt: str) -> list[S]:
    """The state after every step (fine) or after every COARSE_STRIDE-th step (coarse)."""
    states = []
    state = start
    for step in steps:
        state = update(state, step)
        states.append(state)
    return states if fmt == "fine" else states[COARSE_STRIDE - 1 :: COARSE_STRIDE]


def inductive_states(start: S, steps: Sequence[Any], update: Callable[[S, Any], S], read: Sequence[str]) -> list[str]:
    """The inductive trace of a running state: per step, ``#``, the input token read, the state after it."""
    return inductive([token, str(state)] for token, state in zip(read, running_states(start, steps, update, "fine")))


def describe_running(state: str, step: str, read: str | None = None) -> dict[str, str]:
    """The coarse and fine descriptions of a running-state trace (and the inductive one, whose
    states are the input token read and the state after it, when read names that token)."""
    described = {
        "coarse": f"{state} after every {COARSE_STRIDE}th {step} (steps {COARSE_STRIDE}, {2 * COARSE_STRIDE}, ...)",
        "fine": f"{state} after every {step}",
    }
    if read is not None:
        described["inductive"] = f"per {step}, a state: '#', the {read} read, then {state}"
    return described


COLUMN_WIDTHS = {"coarse": 2, "fine": 5, "inductive": 5, "index_hints": 3}  # tokens per column


def _column_cell(fmt: str, j: int, x: int, y: int, carry: int, digit: int, out: int) -> list[str]:
    """One column of a column trace in format fmt (see column_trace)."""
    if fmt == "coarse":
        return [str(digit), str(out)]
    if fmt == "fine":
        return [str(v) for v in (x, y, carry, digit, out)]
    if fmt == "inductive":
        return [STATE, str(x), str(y), str(digit), str(out)]
    return [hint_token(j), str(digit), str(out)]


def column_trace(a: Sequence[int], b: Sequence[int], base: int, fmt: str) -> list[str]:
    """Schoolbook addition of two little-endian digit lists, column by column from the least
    significant (a missing digit is 0): coarse writes ``sum_digit carry_out`` per column,
    fine ``a_digit b_digit carry_in sum_digit carry_out``, inductive the state ``# a_digit
    b_digit sum_digit carry_out`` (the carry in is the previous state's carry out),
    index_hints ``p<j> sum_digit carry_out`` (j the column, 0 for the least significant)."""
    out: list[str] = []
    carry = 0
    for j in range(max(len(a), len(b))):
        x = a[j] if j < len(a) else 0
        y = b[j] if j < len(b) else 0
        total = x + y + carry
        out += _column_cell(fmt, j, x, y, carry, total % base, total // base)
        carry = total // base
    return out


COLUMN_FORMATS = {
    "coarse": "per column from the least significant (a missing digit is 0): the sum digit and the carry out",
    "fine": "per column from the least significant (a missing digit is 0): the two operand digits, the carry in, "
    "the sum digit and the carry out",
    "inductive": "per column from the least significant, a state: '#', the two operand digits, the sum digit and "
    "the carry out (the carry in is the previous state's)",
    "index_hints": "per column from the least significant: its position token p<j> (p0 for the least significant), "
    "the sum digit and the carry out",
}


def read_digit(token: str, base: int = 10) -> int:
    """The value of a one-digit token below base; ValueError otherwise."""
    if len(token) != 1 or not "0" <= token <= "9" or int(token) >= base:
        raise ValueError(f"{token!r} is not a base-{base} digit")
    return int(token)


def read_number(tokens: Sequence[str]) -> int:
    """A decimal number written one digit per token, without leading zeros; ValueError otherwise."""
    if not tokens or (tokens[0] == "0" and len(tokens) > 1):
        raise ValueError("a number needs digits and no leading zero")
    return int("".join(str(read_digit(t)) for t in tokens))


def verify_columns(trace: Sequence[str], a: Sequence[int], b: Sequence[int], base: int, fmt: str) -> bool:
    """Whether trace is column_trace's addition of a and b: one cell per column, each cell
    repeating what it reads (fine: the column's operand digits and the previous cell's carry;
    inductive: '#' and the operand digits; index_hints: the column's hint) and each sum digit
    and carry satisfying digit + base * carry = x + y + carry in (checked, not recomputed)."""
    width = COLUMN_WIDTHS[fmt]
    columns = max(len(a), len(b))
    if len(trace) != width * columns:
        return False
    carry = 0
    for j in range(columns):
        cell = list(trace[width * j : width * (j + 1)])
        x, y = (a[j] if j < len(a) else 0), (b[j] if j < len(b) else 0)
        if fmt == "inductive":
            if cell[0] != STATE:
                return False
            cell = cell[1:]
        if fmt == "index_hints":
            if cell[0] != hint_token(j):
                return False
            cell = cell[1:]
        values = [read_digit(t, base) for t in cell]
        read = {"fine": [x, y, carry], "inductive": [x, y]}.get(fmt, [])
        if values[: len(read)] != read:
            return False
        digit, out = values[-2:]
        if out > 1 or digit + base * out != x + y + carry:
            return False
        carry = out
    return True
