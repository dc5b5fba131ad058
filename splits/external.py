"""Your own data: plain JSONL records made into records gengap can split.

A plain record is a JSON object with ``input`` and ``target`` (strings of whitespace-separated
tokens) and optionally

- ``structure``: a tree, nested lists ``[label, child, ...]`` with string leaves, from which
  atoms (labels and leaves) and compounds (connected subtrees of 2 to 5 internal nodes) are
  read as for gengap's compositional tasks (gengap.generators.derivation);
- ``atoms`` and/or ``compounds``: lists of strings (a multiset each), the record's own;
- ``meta``: an object, kept;
- ``difficulty``: an object of integer features (for the ``difficulty`` strategy); its
  ``input_length``/``output_length``, when given, must be the token counts.

``plain_records`` gives each the fields a gengap record has: ``task`` (ExternalFormat.task,
``external`` by default, a name of no registered task), ``id`` (task + sha256 of input and
target), ``difficulty.input_length``/``output_length``; tokens are written with single
spaces. Given atoms and compounds go to ``meta.atoms``/``meta.compounds``, where
gengap.splits.atoms reads them for records of a task gengap does not know. With ``ngrams`` N >= 2
every record's compounds are its input-token n-grams of 2..N tokens (``meta.compounds``),
and its atoms the input tokens. Without any of these a record's atoms are its input tokens
and its compounds adjacent input-token pairs (gengap.splits.atoms).

Every problem of every line is collected and reported at once (ExternalDataError, one line: each
problem once, with the first line it is true of and the count of the others; unknown keys point to
``meta``).
The output is a function of the input bytes and the options alone.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import IO, Any

from gengap.generators.batch import Record, record_id
from gengap.generators.derivation import is_tree
from gengap.generators.reading import ReadError, jsonl_values

KEYS = ("input", "target", "structure", "atoms", "compounds", "meta", "difficulty")
SHOWN = 8  # problems written out in the error; the rest are counted
NGRAMS_MAX = 8
TASK_NAME = re.compile(r"[a-z][a-z0-9_]*")


class ExternalDataError(ValueError):
    """Plain records that cannot be used; the message lists the problems found (one line)."""


@dataclass(frozen=True)
class ExternalFormat:
    """How plain records become gengap records: their task name, and n-gram compounds (0: none)."""

    task: str = "external"
    ngrams: int = 0


def make_format(task: str = "external", ngrams: int = 0) -> ExternalFormat:
    """ExternalFormat after checking its fields: task a snake_case name of no registered task,
    ngrams 0 or 2..NGRAMS_MAX; ExternalDataError otherwise."""
    from gengap.generators import task_names

    if not TASK_NAME.fullmatch(task):
        raise ExternalDataError(f"task name {task[:80]!r} is not snake_case (lowercase letters, digits, _; a letter first)")
    if task in task_names():
        raise ExternalDataError(f"task name {task!r} is a gengap task: plain records need a name of their own")
    if ngrams and not 2 <= ngrams <= NGRAMS_MAX:
        raise ExternalDataError(f"n-gram compounds have 2 to {NGRAMS_MAX} tokens, got {ngrams}")
    return ExternalFormat(task, ngrams)


def is_plain(first: Any) -> bool:
    """Whether the first record of a file makes it a file of plain records (an object without ``id``)."""
    return isinstance(first, dict) and "id" not in first


def id_hint(first: Any) -> str:
    """What to add to the errors of a file read as gengap records because its first record has an
    ``id``, when that record looks like a plain record instead (input and target, no task); ""
    otherwise."""
    if not isinstance(first, dict) or "id" not in first or "task" in first or not {"input", "target"} <= set(first):
        return ""
    return (" (the file was read as gengap records because its first record has an \"id\"; a plain record has none:"
            " drop it, or keep it in meta, e.g. {\"input\": ..., \"target\": ..., \"meta\": {\"id\": ...}})")


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v for v in value)


def ngrams(tokens: list[str], n: int) -> list[str]:
    """Contiguous token n-grams of 2..n tokens, in order of length, then position."""
    return [" ".join(tokens[i : i + k]) for k in range(2, n + 1) for i in range(len(tokens) - k + 1)]


def _problems(value: Any, fmt: ExternalFormat) -> list[str]:
    """What is wrong with one plain record (phrases completed by ``line N``)."""
    if not isinstance(value, dict):
        return ["is not a JSON object"]
    found = [f"lacks {key}" for key in ("input", "target") if key not in value]
    if len(found) == 2:
        found = ["lacks input and target"]
    for key in ("input", "target"):
        if key in value and (not isinstance(value[key], str) or not value[key].split()):
            found.append(f"has no tokens in {key}" if isinstance(value[key], str) else f"has a {key} that is not a string")
    unknown = sorted(set(value) - set(KEYS))
    if unknown:
        found.append("has unknown key" + ("s " if len(unknown) > 1 else " ") + ", ".join(repr(k[:40]) for k in unknown))
    if "structure" in value and not is_tree(value["structure"]):
        found.append("has a structure that is not a tree ([label, child, ...] with string leaves)")
    for key in ("atoms", "compounds"):
        if key in value and not _strings(value[key]):
            found.append(f"has {key} that are not a list of strings")
    if "structure" in value and ("atoms" in value or "compounds" in value):
        found.append("has both a structure and atoms or compounds")
    if fmt.ngrams and ("structure" in value or "compounds" in value):
        found.append("has its own compounds or structure, but n-gram compounds were asked for")
    meta = value.get("meta", {})
    if not isinstance(meta, dict):
        found.append("has a meta that is not an object")
    elif ("atoms" in meta and "atoms" in value) or ("compounds" in meta and "compounds" in value):
        found.append("gives atoms or compounds both at the top and in meta")
    difficulty = value.get("difficulty", {})
    if not isinstance(difficulty, dict) or not all(isinstance(v, int) and not isinstance(v, bool) for v in difficulty.values()):
        found.append("has a difficulty that is not an object of integers")
    else:
        for key, field in (("input_length", "input"), ("output_length", "target")):
            text = value.get(field)
            if key in difficulty and isinstance(text, str) and text.split() and difficulty[key] != len(text.split()):
                found.append(f"has difficulty.{key} {difficulty[key]}, but its {field} has {len(text.split())} tokens")
    return found


def gengap_record(value: dict[str, Any], fmt: ExternalFormat) -> Record:
    """The gengap record of a valid plain record (see the module doc)."""
    text_in, text_out = " ".join(value["input"].split()), " ".join(value["target"].split())
    difficulty = {"input_length": len(text_in.split()), "output_length": len(text_out.split())}
    difficulty.update({k: v for k, v in (value.get("difficulty") or {}).items() if k not in difficulty})
    record: Record = {
        "id": record_id(fmt.task, text_in, text_out),
        "task": fmt.task,
        "input": text_in,
        "target": text_out,
        "difficulty": difficulty,
    }
    meta = dict(value.get("meta") or {})
    for key in ("atoms", "compounds"):
        if key in value:
            meta[key] = list(value[key])
    if fmt.ngrams:
        meta["compounds"] = ngrams(text_in.split(), fmt.ngrams)
    if meta:
        record["meta"] = meta
    if "structure" in value:
        record["structure"] = value["structure"]
    return record


def plain_records(handle: IO[bytes], label: str, fmt: ExternalFormat = ExternalFormat()) -> list[Record]:
    """The gengap records of a stream of plain JSONL records (blank lines skipped); label names
    it in errors. ExternalDataError listing every problem found, or when there is no record."""
    records: list[Record] = []
    problems: dict[str, list[int]] = {}  # phrase -> the lines it is true of, in order of first occurrence
    extra: list[str] = []  # the unknown keys, in order of first occurrence
    for number, value in jsonl_values(handle):
        if isinstance(value, ReadError):
            problems.setdefault(f"cannot be read ({value.reason})", []).append(number)
            continue
        found = _problems(value, fmt)
        for phrase in found:
            problems.setdefault(phrase, []).append(number)
        if found and isinstance(value, dict):
            extra += [key for key in value if key not in KEYS and key not in extra]
        if not found:
            records.append(gengap_record(value, fmt))
    if problems:
        raise ExternalDataError(f"{label}: {problem_summary(problems)}{_key_hint(extra)}")
    if not records:
        raise ExternalDataError(f"{label}: no records")
    return records


def problem_summary(problems: dict[str, list[int]]) -> str:
    """The problems, each phrase once with the first line it is true of (``line 3 has ...``, and
    ``(and N more lines)`` when it holds for others too), the first SHOWN of them, then the count."""
    items = list(problems.items())
    shown = [f"line {lines[0]} {phrase}" + (f" (and {len(lines) - 1:,} more line{'s' if len(lines) > 2 else ''})" if len(lines) > 1 else "")
             for phrase, lines in items[:SHOWN]]
    total = sum(len(lines) for lines in problems.values())
    return "; ".join(shown) + ("; ..." if len(items) > SHOWN else "") + f" ({total:,} problem{'s' if total > 1 else ''})"


def _key_hint(extra: list[str]) -> str:
    """The hint for unknown keys: which keys a plain record has, and that meta keeps any other field."""
    if not extra:
        return ""
    example = extra[0][:40]
    return (" (a plain record has input, target and optionally " + ", ".join(KEYS[2:])
            + f"; keep any other field in meta, an object carried with the record: \"meta\": {{{json.dumps(example)}: ...}})")


def declared(record: Record, key: str) -> Counter[str] | None:
    """The record's own atoms or compounds (meta.atoms, meta.compounds), when it gives them."""
    meta = record.get("meta")
    value = meta.get(key) if isinstance(meta, dict) else None
    return Counter(value) if _strings(value) else None


def tree_of(record: Record) -> Any:
    """The record's ``structure`` when it is a tree (see _is_tree); else None."""
    structure = record.get("structure")
    return structure if structure is not None and is_tree(structure) else None
