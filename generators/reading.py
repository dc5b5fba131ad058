"""Bounded, error-mapped reading of JSON, JSONL and YAML: the one reader of every gengap input.

Every command that reads JSON or YAML reads it here (records, manifests, split reports,
suite and sweep configs, CITATION.cff, run files), so that hostile input is one
:class:`ReadError` naming the file and line, never an exception from deep inside a parser
or, later, from code that trusted what the parser returned. Refused, besides malformed
syntax and text that is not UTF-8:

- nesting deeper than ``MAX_JSON_DEPTH`` (JSON) or ``MAX_YAML_DEPTH`` (YAML): found by
  counting brackets before the parser sees the text (Python's parsers recurse, and
  100,000 brackets are a RecursionError);
- numbers with more than ``MAX_NUMBER_DIGITS`` digits (Python refuses to convert integers
  of more than 4,300 digits, and code that receives one overflows numpy's int64 anyway);
- NaN and infinities: JSON's ``NaN``/``Infinity`` (not JSON, but Python's parser takes
  them), a float literal that overflows (``1e999``), and YAML's ``.nan``/``.inf``;
- lone UTF-16 surrogates (``"\\ud800"``): JSON can spell them, UTF-8 cannot encode them;
- an object with the same key twice (``{"target": "1", "target": "0"}``): Python keeps the
  last, other readers the first or refuse the file, so no reading of it is the true one (in
  YAML too: two ``entries:`` in a suite; keys a merge ``<<: *base`` brings in may be overridden);
- JSONL lines longer than ``MAX_LINE_BYTES``, JSON files larger than ``MAX_JSON_BYTES``,
  YAML documents larger than ``MAX_YAML_BYTES`` or expanding through aliases to more than
  ``MAX_YAML_VALUES`` values.

YAML timestamps are read as the strings they are written as (``created: 2026-11-30`` is
the string "2026-11-30", as if quoted): whoever needs a date validates it (gengap.suite),
and an impossible date (``2026-02-30``) is an error there, not a traceback of the YAML
library. Mapping keys of YAML stay as the loader makes them (callers validate).
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Iterator

import numpy as np

if TYPE_CHECKING:
    import yaml

MAX_JSON_DEPTH = 300  # the deepest record a task writes nests 254 levels (scan, 250 conjuncts)
MAX_NUMBER_DIGITS = 100
MAX_LINE_BYTES = 16 << 20
MAX_JSON_BYTES = 256 << 20
MAX_YAML_BYTES = 1 << 20
MAX_YAML_DEPTH = 32
MAX_YAML_VALUES = 100_000  # scalars and collections, with every alias expanded


class ReadError(ValueError):
    """Input that cannot be read: ``where`` (file and line, when known) and ``reason``."""

    def __init__(self, reason: str, where: str = "") -> None:
        self.reason = reason
        self.where = where
        super().__init__(f"{where}: {reason}" if where else reason)


# -- JSON -------------------------------------------------------------------------------------

_STRING = re.compile(rb'"(?:[^"\\\n]|\\.)*"')
_DIGITS_AS_ZERO = bytes(ord("0") if 48 <= i <= 57 else i for i in range(256))
_LONG_DIGITS = b"0" * (MAX_NUMBER_DIGITS + 1)  # a run of more digits, once every digit reads 0
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_CONSTANT = re.compile(rb"-?\b(?:NaN|Infinity)\b")
_OPEN, _CLOSE = np.zeros(256, dtype=np.int8), np.zeros(256, dtype=np.int8)
_OPEN[[ord("["), ord("{")]] = 1
_CLOSE[[ord("]"), ord("}")]] = 1


def _line_at(data: bytes, position: int) -> int:
    return data.count(b"\n", 0, position) + 1


def _too_deep(data: bytes) -> int | None:
    """The line where the nesting of data (outside strings) first exceeds MAX_JSON_DEPTH; None if it never does."""
    if data.count(b"[") + data.count(b"{") <= MAX_JSON_DEPTH:
        return None
    bare = np.frombuffer(_STRING.sub(b'""', data), dtype=np.uint8)  # strings cannot hold a raw newline
    depth = np.cumsum(_OPEN[bare].astype(np.int64) - _CLOSE[bare])
    over = np.flatnonzero(depth > MAX_JSON_DEPTH)
    if not len(over):
        return None
    return int((bare[: over[0]] == ord("\n")).sum()) + 1


class _Refused(ValueError):
    """Raised by the parser hooks: a value the reader does not accept."""


def _refuse_constant(name: str) -> Any:
    raise _Refused(f"{name} is not a number JSON allows")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"the number {text[:20]}{'...' if len(text) > 20 else ''} is too large for a float")
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_NUMBER_DIGITS:
        raise _Refused(f"an integer has {len(text.lstrip('-')):,} digits (at most {MAX_NUMBER_DIGITS} are read)")
    return int(text)


def _lone_surrogate(value: Any) -> bool:
    """True when some string (or key) in value holds a UTF-16 surrogate on its own."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """The object of pairs; _Refused when a key occurs twice."""
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        twice = next(key for key, _ in pairs if key in seen or seen.add(key))
        raise _Refused(f"an object has the key {_clip_key(twice)!r} twice (readers disagree on which value it has)")
    return value


def _clip_key(key: str, limit: int = 40) -> str:
    return key if len(key) <= limit else key[: limit - 3] + "..."


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float, object_pairs_hook=_unique_keys)
_BOUNDED_DECODER = json.JSONDecoder(
    parse_constant=_refuse_constant, parse_float=_finite_float, parse_int=_bounded_int, object_pairs_hook=_unique_keys
)


def json_value(data: bytes | str, where: str = "") -> Any:
    """The JSON value of data (one document, UTF-8); ReadError (at `where`, with the line
    within data when it has several) for anything the module doc refuses."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    multiline = raw.count(b"\n", 0, len(raw.rstrip(b"\r\n"))) > 0

    def error(reason: str, position: int | None = None, line: int | None = None) -> ReadError:
        if line is None and position is not None and multiline:
            line = _line_at(raw, position)
        at = f"line {line}" if line is not None and multiline else ""
        return ReadError(reason, f"{where} {at}".strip() if where else at)

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise error(f"not UTF-8 text (byte {err.start})", err.start) from None
    line = _too_deep(raw)
    if line is not None:
        raise error(f"nested deeper than {MAX_JSON_DEPTH} levels", line=line)
    long_number = _LONG_DIGITS in raw.translate(_DIGITS_AS_ZERO)  # then ints are parsed with a bound
    try:
        value = (_BOUNDED_DECODER if long_number else _DECODER).decode(text)
    except json.JSONDecodeError as err:
        raise error(f"not valid JSON ({err.msg}, column {err.colno})", line=err.lineno) from None
    except _Refused as err:
        if "twice" in str(err):
            position = None
        elif "allows" in str(err):
            found = _CONSTANT.search(raw)
            position = found.start() if found else None
        else:
            position = raw.translate(_DIGITS_AS_ZERO).find(_LONG_DIGITS)
        raise error(str(err), position) from None
    except (ValueError, RecursionError) as err:  # int conversion limits, or a parser recursing anyway
        raise error(f"cannot be read ({err.__class__.__name__})") from None
    if _SURROGATE_ESCAPE.search(raw) and _lone_surrogate(value):
        found = _SURROGATE_ESCAPE.search(raw)
        raise error("a string holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is not Unicode text", found.start() if found else None)
    return value


def read_json(path: str | Path, what: str = "", max_bytes: int = MAX_JSON_BYTES) -> Any:
    """The JSON value of a regular file, read up to max_bytes; ReadError naming the file
    otherwise, a named pipe or device included (what: how to call the file in an error, e.g.
    "manifest.json"; default its path)."""
    label = what or str(path)
    try:
        with _open_regular(path) as handle:
            raw = handle.read(max_bytes + 1)
    except OSError as err:
        raise ReadError(f"cannot read it: {err.strerror or err}", label) from None
    if len(raw) > max_bytes:
        raise ReadError(f"larger than {max_bytes:,} bytes", label)
    return json_value(raw, label)


def _open_regular(path: str | Path) -> IO[bytes]:
    """A binary handle on the regular file at path; OSError for a named pipe, socket or device
    (opened without blocking and never read: a FIFO would wait for a writer forever)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    handle = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        handle.close()
        raise OSError(errno.EINVAL, "not a regular file (a named pipe, socket or device is not read)", str(path))
    return handle


def jsonl_lines(handle: IO[bytes], max_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, bytes | None]]:
    """(line number from 1, the line's bytes) for each line of a binary stream; None for a
    line longer than max_bytes (the rest of it is skipped, never held in memory)."""
    number = 0
    while True:
        line = handle.readline(max_bytes + 1)
        if not line:
            return
        number += 1
        if len(line) > max_bytes and not line.endswith(b"\n"):
            while True:  # skip the rest of the long line
                rest = handle.readline(1 << 20)
                if not rest or rest.endswith(b"\n"):
                    break
            yield number, None
            continue
        yield number, line


def json_line(line: bytes | None, max_bytes: int = MAX_LINE_BYTES) -> Any:
    """The JSON value of one JSONL line from jsonl_lines (ReadError without a location:
    the caller names the file and line)."""
    if line is None:
        raise ReadError(f"longer than {max_bytes:,} bytes")
    return json_value(line)


def iter_jsonl(path: str | Path, handle: IO[bytes] | None = None) -> Iterator[tuple[int, Any]]:
    """(line number, value) for each non-blank line of a JSONL file (or of handle, read as
    that file); ReadError naming the file and line for the first line that cannot be read."""
    if handle is None:
        try:
            handle = open(path, "rb")
        except OSError as err:
            raise ReadError(f"cannot read it: {err.strerror or err}", str(path)) from None
        with handle:
            yield from iter_jsonl(path, handle)
        return
    for number, value in jsonl_values(handle):
        if isinstance(value, ReadError):
            raise ReadError(value.reason, f"{path}: line {number}") from None
        yield number, value


def jsonl_values(handle: IO[bytes]) -> Iterator[tuple[int, Any]]:
    """(line number, value) for each non-blank line of a binary stream, where the value of a
    line that cannot be read is its ReadError (without a location), so a caller can collect
    every such line."""
    for number, line in jsonl_lines(handle):
        if line is not None and not line.strip():
            continue
        try:
            value = json_line(line)
        except ReadError as err:
            value = err
        yield number, value


# -- YAML -------------------------------------------------------------------------------------


def yaml_document(text: str, label: str = "", max_bytes: int = MAX_YAML_BYTES) -> tuple[Any, yaml.Node | None]:
    """(value, node tree) of one YAML document (the node tree gives line numbers); ReadError
    "<label> line N: ..." for anything the module doc refuses or malformed YAML. PyYAML is
    imported on the first call (gengap.generators.yaml_reading), not with this module."""
    from gengap.generators.yaml_reading import yaml_document as read

    return read(text, label, max_bytes)


def read_text(path: str | Path, what: str, max_bytes: int) -> str:
    """The UTF-8 text of a file, read up to max_bytes; ReadError naming the file otherwise."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(max_bytes + 1)
    except OSError as err:
        raise ReadError(f"cannot read {what} {path}: {err.strerror or err}") from None
    if len(raw) > max_bytes:
        raise ReadError(f"a {what} may have at most {max_bytes:,} bytes", str(path))
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ReadError(f"not UTF-8 text (byte {err.start})", f"{path} line {_line_at(raw, err.start)}") from None



# -- releases -----------------------------------------------------------------------------------

_CONFIG_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def _real(path: Path, kind: str) -> bool:
    """True when path exists as a `kind` ("dir" or "file") itself, not through a symlink."""
    try:
        mode = path.lstat().st_mode
    except OSError:
        return False
    return stat.S_ISDIR(mode) if kind == "dir" else stat.S_ISREG(mode)


def release_configs(root: Path, manifest: Any = None) -> list[str]:
    """The configs of a release directory that a reader (export, train, eval) may read.

    With a manifest (the parsed manifest.json: a mapping whose ``configs`` is a list), the
    configs it lists; without one (None), every directory under ``data/``; sorted by name;
    only those with a ``data/<config>/train.jsonl``. ReadError when the manifest lists no
    configs, or a config whose ``data/<config>/train.jsonl`` is gone (a deleted data folder
    is no config to leave out silently), or when ``data/``, ``data/<config>`` or its
    ``train.jsonl`` is a symlink or another kind of file than a directory and a regular file:
    a symlink could point a reader at data the release's checksums never covered, and a
    reader never follows one.
    """
    data = root / "data"
    if not os.path.lexists(data):
        return []
    _require(data, "dir")
    if manifest is None:
        names = [p.name for p in data.iterdir() if _CONFIG_NAME.fullmatch(p.name)]
    else:
        listed = manifest.get("configs") if isinstance(manifest, dict) else None
        if not isinstance(listed, list):
            raise ReadError("has no list of configs", str(root / "manifest.json"))
        names = [entry.get("name") for entry in listed if isinstance(entry, dict) and isinstance(entry.get("name"), str)]
    found = []
    for name in sorted(set(names)):
        if not _CONFIG_NAME.fullmatch(name):
            continue
        if not os.path.lexists(data / name / "train.jsonl"):
            if manifest is not None:
                raise ReadError(f"config {name} of manifest.json has no data/{name}/train.jsonl (a deleted data folder? gengap verify names what is missing)", str(root))
            continue
        _require(data / name, "dir")
        _require(data / name / "train.jsonl", "file")
        found.append(name)
    return found


def _require(path: Path, kind: str) -> None:
    if not _real(path, kind):
        what = "a directory" if kind == "dir" else "a regular file"
        raise ReadError(f"is a symlink or not {what}: a release is read only through its own files and directories", str(path))


def release_part(root: Path, config: str, part: str) -> Path | None:
    """data/<config>/<part>.jsonl of a config release_configs gave; None when it is absent;
    ReadError when it is a symlink or not a regular file."""
    path = root / "data" / config / f"{part}.jsonl"
    if not os.path.lexists(path):
        return None
    _require(path, "file")
    return path
