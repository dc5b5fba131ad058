"""Reading and writing the files of a run directory: strict JSON, never through a link.

- :func:`strict_json` is ``json.dumps`` that writes ``null`` for a float that is not finite
  (a diverged loss), so every file of a run is JSON that any parser (and gengap's bounded
  reader, on resume) accepts;
- :func:`append_line` appends a line to ``metrics.jsonl``; :func:`keep_metrics` trims it on
  resume, dropping a torn last line (what a full disk or a kill in mid-write leaves);
- :func:`make_folder` makes ``seed-N`` and ``plots``; :func:`read_object` reads ``run.json``.

A symbolic link, named pipe or other special file at any of these names is refused with one
line and left as it is: a link to a folder or file outside would take the writes outside.
"""

from __future__ import annotations

import errno
import json
import math
from pathlib import Path
from typing import Any, Sequence

from gengap.baselines.errors import BaselineError, RunFileError
from gengap.generators.reading import MAX_JSON_BYTES, ReadError, json_value, read_json
from gengap.generators.safe_files import append_text, atomic_write_text, make_directory, read_regular


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def strict_json(value: Any, indent: int | None = None) -> str:
    """value as JSON, every NaN or infinity written as null (never the NaN/Infinity tokens)."""
    return json.dumps(_finite(value), indent=indent, allow_nan=False)


def _refuse_links(err: OSError, path: Path) -> BaseException:
    if err.errno in (errno.ELOOP, errno.EINVAL, errno.ENOTDIR):
        return BaselineError(f"{path} is a symbolic link or not a regular file: gengap never writes through one; remove it")
    return err


def make_folder(path: Path) -> Path:
    """A folder of the run directory, created if absent; BaselineError for a link or a file there."""
    try:
        return make_directory(path)
    except OSError as err:
        raise _refuse_links(err, path) from None


def append_line(path: Path, line: str) -> None:
    """Append line and a newline to the regular file at path, never through a link."""
    try:
        append_text(path, line + "\n")
    except OSError as err:
        raise _refuse_links(err, path) from None


def keep_metrics(path: Path, seed: int, upto: int) -> None:
    """Rewrite metrics.jsonl without seed's rows after step upto and without a torn last line
    (a partial row without its newline); RunFileError for a damaged line before the last."""
    try:
        raw = read_regular(path, MAX_JSON_BYTES)
    except FileNotFoundError:
        return
    except OSError as err:
        raise _refuse_links(err, path) from None
    if len(raw) > MAX_JSON_BYTES:
        raise RunFileError(f"{path} is larger than {MAX_JSON_BYTES:,} bytes")
    lines = raw.split(b"\n")
    torn = lines.pop()  # after the last newline: empty, or a row cut short
    kept = []
    for number, line in enumerate([*lines, torn], start=1):
        if not line.strip():
            continue
        try:
            row = json_value(line, f"{path} line {number}")
        except ReadError as err:
            if line is torn:
                continue  # a write that did not finish: the checkpoint has every row before it
            raise RunFileError(f"cannot read the metrics of the run: {err}") from None
        if not isinstance(row, dict):
            raise RunFileError(f"{path} line {number} is not a metrics row")
        if row.get("seed") == seed and isinstance(row.get("step"), int) and row["step"] > upto:
            continue
        kept.append(line.decode("utf-8") + "\n")
    atomic_write_text(path, "".join(kept))


def seed_folders(out: Path) -> list[int]:
    """The seeds N of the seed-N entries of a run directory (folders or not, links included)."""
    if not out.is_dir():
        return []
    names = (entry.name for entry in out.iterdir())
    return sorted(int(name[5:]) for name in names if name.startswith("seed-") and name[5:].isdigit() and str(int(name[5:])) == name[5:])


def read_object(path: Path, keys: Sequence[str]) -> dict[str, Any]:
    """The JSON object of a run file that has every key of keys; RunFileError otherwise."""
    try:
        value = read_json(path)
    except ReadError as err:
        raise RunFileError(f"cannot read {err}") from None
    if not isinstance(value, dict) or any(key not in value for key in keys):
        raise RunFileError(f"{path} is not the record of a gengap run (a JSON object with {', '.join(keys)})")
    return value
