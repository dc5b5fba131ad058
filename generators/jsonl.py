"""Serialize a Batch to JSONL bytes (vectorized over the batch, or record by record when it
carries derivations: see batch_to_jsonl); read JSONL records back.

The line format is fixed so that output is byte-identical wherever it is produced:
keys in the order id, task, input, target, difficulty (input_length, output_length, then
task features), meta, structure; no spaces; UTF-8; one record per line ending in "\\n".
Each line equals ``json.dumps(record, separators=(",", ":"), ensure_ascii=False)``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import IO, Any, Callable

import numpy as np

from gengap.generators.batch import Batch, Record
from gengap.generators.reading import ReadError, iter_jsonl
from gengap.generators.text import ZERO, as_matrix

_ESCAPED = np.zeros(256, dtype=bool)
_ESCAPED[1:32] = True
_ESCAPED[[34, 92]] = True  # '"' and '\\'


def read_records(path: Path | str, error: type[Exception], check: Callable[[Any, str], None], handle: IO[bytes] | None = None) -> list[Record]:
    """The records of a JSONL file, blank lines skipped, read by gengap.generators.reading (bounded:
    nesting, numbers, line length; no NaN, no lone surrogates). A file that cannot be opened
    or a line that cannot be read raises `error` naming it; check(record, "<path>: line <n>")
    raises for a record its caller does not accept. handle: read it instead of opening path
    (standard input), path naming it in errors."""
    records: list[Record] = []
    try:
        for number, record in iter_jsonl(path, handle):
            check(record, f"{path}: line {number}")
            records.append(record)
    except ReadError as err:
        raise error(str(err)) from None
    return records


class NonFiniteError(ValueError):
    """A value gengap was to write as JSON holds NaN or an infinity (JSON has no such numbers)."""


def json_text(value: Any, indent: int | None = 2) -> str:
    """value as JSON text (indented) with a final newline, the form of every report and
    manifest gengap writes; NonFiniteError when a number in it is NaN or infinite: gengap never
    writes the non-standard ``NaN``/``Infinity`` tokens, which its own reader refuses."""
    try:
        return json.dumps(value, indent=indent, allow_nan=False) + "\n"
    except ValueError:
        raise NonFiniteError("a number to write as JSON is NaN or infinite (gengap writes only finite numbers); nothing was written") from None


SEAL = "marker_sha256"  # the last key of a sealed document: the sha256 of its text without it


def sealed_json_text(value: dict[str, Any], indent: int | None = 2) -> str:
    """json_text of value with SEAL added last: the sha256 of json_text(value), so that any edit
    of the file shows (a marker gengap writes, gengap.ownership)."""
    text = json_text(value, indent)
    return json_text({**value, SEAL: hashlib.sha256(text.encode()).hexdigest()}, indent)


def is_sealed(data: bytes, document: Any, indent: int | None = 2) -> bool:
    """Whether data (whose parsed JSON is document) is exactly what sealed_json_text writes."""
    if not isinstance(document, dict) or not isinstance(document.get(SEAL), str) or list(document)[-1] != SEAL:
        return False
    unsealed = {key: item for key, item in document.items() if key != SEAL}
    try:
        return sealed_json_text(unsealed, indent).encode() == data
    except NonFiniteError:
        return False


def dumps_record(record: Record) -> str:
    """The canonical JSON text of one record (no newline)."""
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False)


# dumps_record's text, for generated records: their derivations are trees (no cycle to look for)
_encode_generated = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False).encode


class _Ragged:
    """Rows of variable-length bytes: an (n, w) uint8 matrix and per-row lengths."""

    def __init__(self, matrix: np.ndarray, lengths: np.ndarray) -> None:
        self.matrix = matrix
        self.lengths = lengths.astype(np.int64)


def _strings(column: np.ndarray) -> _Ragged:
    """A JSON string body (without quotes) per entry of an S array."""
    matrix = as_matrix(column)
    if _ESCAPED[matrix].any():
        escaped = [json.dumps(b.decode(), ensure_ascii=False)[1:-1].encode() for b in column.tolist()]
        column = np.array(escaped, dtype=bytes)
        matrix = as_matrix(column)
    return _Ragged(matrix, (matrix != 0).sum(axis=1))


def _integers(values: np.ndarray) -> _Ragged:
    """Decimal text of an int64 column."""
    values = np.asarray(values, dtype=np.int64)
    negative = values < 0
    magnitude = np.abs(values)
    digits = np.ones(len(values), dtype=np.int64)
    power = 10
    while power <= max(int(magnitude.max(initial=0)), 1):
        digits += magnitude >= power
        power *= 10
    sign = negative.astype(np.int64)
    lengths = digits + sign
    width = int(lengths.max(initial=1))
    matrix = np.zeros((len(values), width), dtype=np.uint8)
    matrix[negative, 0] = ord("-")
    rest = magnitude.copy()
    rows = np.arange(len(values))
    for k in range(int(digits.max(initial=1))):
        live = digits > k
        matrix[rows[live], (lengths - 1 - k)[live]] = (rest[live] % 10 + ZERO).astype(np.uint8)
        rest //= 10
    return _Ragged(matrix, lengths)


def _constant(text: str, n: int) -> _Ragged:
    raw = np.frombuffer(text.encode(), dtype=np.uint8)
    return _Ragged(np.broadcast_to(raw, (n, len(raw))), np.full(n, len(raw)))


_HEX_DIGITS = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)


def _hex_ids(batch: Batch) -> _Ragged:
    """The first 16 hex digits of sha256(input "\\n" target) per record (hex written with numpy)."""
    sha = hashlib.sha256
    digests = b"".join([sha(a + b"\n" + b).digest()[:8] for a, b in zip(batch.inputs.tolist(), batch.targets.tolist())])
    octets = np.frombuffer(digests, dtype=np.uint8).reshape(len(batch), 8)
    matrix = np.empty((len(batch), 16), dtype=np.uint8)
    matrix[:, 0::2] = _HEX_DIGITS[octets >> 4]
    matrix[:, 1::2] = _HEX_DIGITS[octets & 15]
    return _Ragged(matrix, np.full(len(batch), 16))


def _concat_rows(parts: list[_Ragged]) -> bytes:
    """Concatenate, row by row, the parts' bytes; rows follow each other.

    Parts are laid left to right into a NUL-filled (n, total width) matrix, each starting
    where the previous part's content ended (a part's NUL padding is overwritten by the
    next part or stays NUL), then the NULs are dropped. Text never contains NUL.
    """
    n = len(parts[0].lengths)
    rows = np.zeros((n, sum(part.matrix.shape[1] for part in parts)), dtype=np.uint8)
    cursor = np.zeros(n, dtype=np.int64)
    uniform = True
    for part in parts:
        width = part.matrix.shape[1]
        if uniform:
            start = int(cursor[0])
            rows[:, start : start + width] = part.matrix
        else:
            np.put_along_axis(rows, cursor[:, None] + np.arange(width)[None, :], part.matrix, axis=1)
        cursor += part.lengths
        uniform = uniform and bool((part.lengths == part.lengths[0]).all())
    if uniform and int(cursor[0]) == rows.shape[1]:
        return rows.tobytes()  # every row is full: no NUL to drop
    return rows[rows != 0].tobytes()


def batch_to_jsonl(batch: Batch, task: str) -> bytes:
    """JSONL bytes of all records of the batch, one line each, in batch order.

    A batch with derivations is written record by record (each tree takes a json.dumps call
    anyway, and whole records cost little more than the trees alone; the padded matrices of
    the columnar path grow with the longest line); one without is written column by column.
    """
    n = len(batch)
    if n == 0:
        return b""
    if batch.structure is not None:
        return "".join([_encode_generated(record) + "\n" for record in batch.records(task)]).encode()
    parts = [_constant('{"id":"' + json.dumps(task)[1:-1] + "-", n), _hex_ids(batch)]
    parts += [_constant('","task":' + json.dumps(task) + ',"input":"', n), _strings(batch.inputs)]
    parts += [_constant('","target":"', n), _strings(batch.targets), _constant('","difficulty":{', n)]
    for i, (name, column) in enumerate(batch.difficulty().items()):
        parts += [_constant(("," if i else "") + json.dumps(name) + ":", n), _integers(column)]
    tail = "}"
    if batch.meta:
        tail += ',"meta":' + json.dumps(dict(batch.meta), separators=(",", ":"), ensure_ascii=False)
    parts.append(_constant(tail + "}\n", n))
    return _concat_rows(parts)
