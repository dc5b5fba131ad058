"""Reasoning traces: a target written as its intermediate steps, a separator, then the answer.

A task that supports traces has a ``trace`` parameter (:func:`trace_knob`): ``none`` (the
answer alone, as gengap always wrote it), ``coarse`` or ``fine`` (fewer or more intermediate
states; each task says what it writes in ``trace_formats``, shown by `gengap list`). A traced
target is ``<trace tokens> => <answer tokens>`` (the trace may be empty: ``=> 1``), and its
record carries ``meta.trace`` (the format). The trace is a rendering: a traced setting draws
the same inputs, from the same seed, as its answer-only twin (``trace`` is left out of the
seed, see gengap.generators.params.knob).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence, TypeVar

from gengap.generators.batch import Batch
from gengap.generators.params import knob
from gengap.generators.text import from_strings

if TYPE_CHECKING:
    from gengap.generators.task import Task

SEPARATOR = "=>"
FORMATS = ("none", "coarse", "fine")
COARSE_STRIDE = 4  # running-state tasks: coarse writes the state after every 4th step
S = TypeVar("S")


def trace_knob() -> Any:
    """The ``trace`` parameter of a task that supports traces (a rendering knob, default none)."""
    return knob(
        "none",
        choices=FORMATS,
        rendering=True,
        doc="target format: none (answer only), coarse or fine (intermediate states, '=>', answer)",
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


def describe_running(state: str, step: str) -> dict[str, str]:
    """The coarse and fine descriptions of a running-state trace."""
    return {
        "coarse": f"{state} after every {COARSE_STRIDE}th {step} (steps {COARSE_STRIDE}, {2 * COARSE_STRIDE}, ...)",
        "fine": f"{state} after every {step}",
    }


def column_trace(a: Sequence[int], b: Sequence[int], base: int, fmt: str) -> list[str]:
    """Schoolbook addition of two little-endian digit lists, column by column from the least
    significant (a missing digit is 0): coarse writes ``sum_digit carry_out`` per column,
    fine ``a_digit b_digit carry_in sum_digit carry_out``."""
    out: list[str] = []
    carry = 0
    for j in range(max(len(a), len(b))):
        x = a[j] if j < len(a) else 0
        y = b[j] if j < len(b) else 0
        total = x + y + carry
        column = [total % base, total // base]
        out += [str(v) for v in ([x, y, carry, *column] if fmt == "fine" else column)]
        carry = total // base
    return out


COLUMN_FORMATS = {
    "coarse": "per column from the least significant (a missing digit is 0): the sum digit and the carry out",
    "fine": "per column from the least significant (a missing digit is 0): the two operand digits, the carry in, "
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
    """Whether trace is column_trace's addition of a and b: one cell per column, each fine cell
    repeating the column's operand digits and the previous cell's carry, and each sum digit and
    carry satisfying digit + base * carry = x + y + carry in (checked, not recomputed)."""
    width = 5 if fmt == "fine" else 2
    columns = max(len(a), len(b))
    if len(trace) != width * columns:
        return False
    carry = 0
    for j in range(columns):
        cell = [read_digit(t, base) for t in trace[width * j : width * (j + 1)]]
        x, y = (a[j] if j < len(a) else 0), (b[j] if j < len(b) else 0)
        if fmt == "fine" and cell[:3] != [x, y, carry]:
            return False
        digit, out = cell[-2:]
        if out > 1 or digit + base * out != x + y + carry:
            return False
        carry = out
    return True
