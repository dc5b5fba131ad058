"""Check JSONL records: schema, id, measured lengths, the meta fields the task's checker reads
(present, and within their parameters' ranges: Task.meta_problem), every target by that
checker (for a traced record, its answer and, separately, its trace; a record with a
shortcut cue as its cue-less twin, gengap.generators.cues, whose cue must name an answer the
task can have: Task.possible_answer), the derivation of compositional records
(``structure`` must be the tree the task reads from the input, or, where the input does not
fix it, a tree the task re-checks against the record: Task.structure_problem), the
difficulty features (only the task's own: known_features; and those it can recompute,
Task.measure)."""

from __future__ import annotations

import collections
import functools
from dataclasses import dataclass, field
from typing import Any, Iterable

from gengap.generators import Task, UnknownTaskError, get_task, record_id
from gengap.generators.cues import CUE_FEATURE, cue_answer, cue_problem, cue_token, without_cue
from gengap.generators.markers import marker_problem, without_marker
from gengap.generators.derivation import is_tree
from gengap.generators.seeding import probe_rng
from gengap.generators.reading import ReadError, json_line
from gengap.releases.schema import record_errors


@dataclass
class CheckReport:
    """Outcome of checking a stream of records."""

    total: int = 0
    failed: int = 0
    per_task: collections.Counter[str] = field(default_factory=collections.Counter)
    failures: list[str] = field(default_factory=list)
    max_failures_kept: int = 20

    def fail(self, line: int, message: str) -> None:
        self.failed += 1
        if len(self.failures) < self.max_failures_kept:
            self.failures.append(f"line {line}: {message}")

    @property
    def ok(self) -> bool:
        return self.total > 0 and self.failed == 0

    def summary(self) -> str:
        tasks = ", ".join(f"{name} {count}" for name, count in sorted(self.per_task.items()))
        return (
            f"checked {self.total} record{'s' if self.total != 1 else ''}: {self.total - self.failed} passed, "
            f"{self.failed} failed" + (f" ({tasks})" if tasks else "")
        )


def record_problem(record: Any) -> str | None:
    """Why a parsed record is invalid, or None when it passes every check."""
    errors = record_errors(record)
    if errors:
        return "schema: " + errors[0]
    try:
        task = get_task(record["task"])
    except UnknownTaskError as err:
        return str(err)
    expected_id = record_id(record["task"], record["input"], record["target"])
    if record["id"] != expected_id:
        return f"id {record['id']} does not match its content (expected {expected_id})"
    difficulty = record["difficulty"]
    for key, text in (("input_length", record["input"]), ("output_length", record["target"])):
        if difficulty[key] != len(text.split()):
            return f"difficulty.{key}={difficulty[key]} but the {key.split('_')[0]} has {len(text.split())} tokens"
    known = known_features(task)
    unknown = sorted(set(difficulty) - known) if known is not None else []
    if unknown:
        return f"difficulty.{_clip(unknown[0], 40)} is not a difficulty feature of {task.name}"
    cue = cue_problem(record)
    if cue:
        return cue
    named = cue_answer(record)
    record = without_cue(record)  # the task's checks read the cue-less record (gengap.generators.cues)
    marker = marker_problem(record)
    if marker:
        return marker
    record = without_marker(record)  # and the unmarked one (gengap.generators.markers)
    meta = task.meta_problem(record)  # a missing field, or one asking for more work than the parameters allow
    if meta:
        return meta
    if named is not None and task.possible_answer(record, named) is False:
        return f"its cue {cue_token(named)} names no answer of {task.name}"
    if not task.check(record, record["target"]):
        if (record.get("meta") or {}).get("trace", "none") != "none" and task.check_parts(record, record["target"])[0]:
            return f"the trace of target {_clip(record['target'])!r} is not the computation of input {_clip(record['input'])!r} (its answer is right)"
        return f"target {_clip(record['target'])!r} is wrong for input {_clip(record['input'])!r}"
    return structure_problem(task, record) or feature_problem(task, record)


def known_features(task: Task) -> frozenset[str] | None:
    """The difficulty features a record of task may have: those a record generated with the
    task's default parameters carries (a task's features do not depend on its parameters),
    input_length and output_length, and a shortcut cue's (gengap.generators.cues); None when
    the task cannot generate one record (then the check cannot tell)."""
    return _known_features(task.name)


@functools.lru_cache(maxsize=None)
def _known_features(name: str) -> frozenset[str] | None:
    task = get_task(name)
    try:
        sample = next(iter(task.generate(probe_rng(), 1, task.default_params()).records(name)))
        features = set(sample["difficulty"])
    except Exception:  # a plugin task that cannot generate with its defaults
        return None
    return frozenset(features | {"input_length", "output_length", CUE_FEATURE})


def pool_record_problem(record: Any) -> str | None:
    """Why a record cannot go into a split or a divergence (None: it can): it fails the
    schema, or, for a compositional task, its input has no derivation or its ``structure``
    is not that derivation (splits read atoms and compounds from it). A record of a task
    gengap does not know is split by its tokens (gengap.splits.atoms). Targets are not re-checked
    here: that is `gengap check`."""
    errors = record_errors(record)
    if errors:
        return errors[0]
    try:
        task = get_task(record["task"])
    except UnknownTaskError:
        return None
    return derivation_problem(task, record)


def derivation_problem(task: Task, record: dict[str, Any]) -> str | None:
    """structure_problem, and for a record without ``structure`` of a compositional task,
    whether its input has a derivation at all."""
    if "structure" in record:
        return structure_problem(task, record)
    try:
        task.derive(record)
    except (ValueError, KeyError, IndexError, TypeError):
        return "its input has no derivation"
    return None


def structure_problem(task: Task, record: dict[str, Any]) -> str | None:
    """Why the record's ``structure`` is not the derivation its task reads from the input, or, for
    a task whose input does not fix one, not a tree the task accepts for the record
    (Task.structure_problem: grid_program's program must map the demonstrations and make the
    target); None: it is, or the record has none."""
    if "structure" not in record:
        return None
    try:
        derived = task.derive(record)
    except (ValueError, KeyError, IndexError, TypeError):
        return "its input has no derivation"
    if derived is None:  # the input does not fix it: a tree the task re-checks (splits read atoms and compounds from it)
        if not is_tree(record["structure"]):
            return "structure is not a tree ([rule, child, ...] with string leaves)"
        return task.structure_problem(record)
    if record["structure"] != derived:
        return "structure is not the derivation of its input"
    return None


def feature_problem(task: Task, record: dict[str, Any]) -> str | None:
    """Why the record's difficulty features disagree with those the task recomputes (None: they agree,
    or the task cannot recompute them)."""
    try:
        measured = task.measure(record)
    except (ValueError, KeyError, IndexError, TypeError):
        return "its difficulty features cannot be recomputed from its input"
    for name, value in (measured or {}).items():
        stated = record["difficulty"].get(name)
        if stated != value:
            return f"difficulty.{name}={stated} but the record measures {value}"
    return None


REQUIRED_FEATURES = ("input_length", "output_length")
OPTIONAL_FIELDS = ("meta", "structure", "novelty")  # a table's column that some records lack reads back null


def null_features(record: Any) -> list[str]:
    """The difficulty features of a parsed record that are null (never the required lengths)."""
    difficulty = record.get("difficulty") if isinstance(record, dict) else None
    if not isinstance(difficulty, dict):
        return []
    return [key for key, value in difficulty.items() if value is None and key not in REQUIRED_FEATURES]


class RoundTrip:
    """The nulls of a file that went through a table (``datasets.load_dataset`` of a release config,
    above all a multi-task one, written back to JSONL row by row): one column per field and per
    difficulty feature of any record, null where a record has none. A null ``meta``, ``structure``
    or ``novelty`` reads as absent. A null difficulty feature reads as absent for a feature that
    no record of the record's own task in the file gives (another task of its config does, perhaps
    in another part); a null where other records of its task give a value fails (:meth:`problems`,
    once the whole file is read), and so does a feature the task recomputes (:func:`feature_problem`)."""

    def __init__(self) -> None:
        self.given: dict[str, set[str]] = collections.defaultdict(set)  # feature -> tasks whose records give it a value
        self.nulls: dict[tuple[str, str], list[int]] = collections.defaultdict(list)  # (task, feature) -> lines

    def read(self, number: int, record: Any) -> Any:
        """The record without its null features (each noted with its line), for the checks of one
        record; the features it gives are noted too."""
        if not isinstance(record, dict):
            return record
        if any(key in record and record[key] is None for key in OPTIONAL_FIELDS):
            record = {key: value for key, value in record.items() if not (value is None and key in OPTIONAL_FIELDS)}
        difficulty = record.get("difficulty")
        if not isinstance(difficulty, dict):
            return record
        task = str(record.get("task"))
        nulls = False
        for key, value in difficulty.items():
            if value is None and key not in REQUIRED_FEATURES:
                self.nulls[(task, key)].append(number)
                nulls = True
            else:
                self.given[key].add(task)
        if not nulls:
            return record
        return {**record, "difficulty": {k: v for k, v in difficulty.items() if v is not None or k in REQUIRED_FEATURES}}

    def problems(self) -> list[tuple[int, str]]:
        """(line, why) of every null that is not a round trip's, in line order."""
        found = []
        for (task, key), numbers in self.nulls.items():
            if task in self.given.get(key, ()):
                why = (f"difficulty/{key}: null, while other {task} records give it a value (a null is read as absent only "
                       "for a feature no record of its task has: another task's column in a table)")
                found += [(number, why) for number in numbers]
        return sorted(found)


def check_lines(lines: Iterable[bytes | str | None], report: CheckReport | None = None) -> CheckReport:
    """Check every line of a JSONL stream (line numbers from 1), each read by
    gengap.generators.reading (None: a line too long to read, as gengap.generators.reading.jsonl_lines gives).
    Nulls are read as :class:`RoundTrip` says: a null ``meta``, ``structure`` or ``novelty`` as
    absent, a null difficulty feature as absent when no record of the record's own task gives it."""
    report = report or CheckReport()
    round_trip = RoundTrip()
    failed: set[int] = set()
    for number, line in enumerate(lines, start=1):
        report.total += 1
        if line is not None and not line.strip():
            report.fail(number, "empty line")
            continue
        try:
            record = json_line(line)
        except ReadError as err:
            report.fail(number, err.reason)
            continue
        if isinstance(record, dict) and isinstance(record.get("task"), str):
            report.per_task[record["task"]] += 1
        nulls = null_features(record)
        record = round_trip.read(number, record)
        problem = record_problem(record)
        if problem:
            report.fail(number, problem)
            if nulls:
                failed.add(number)
    for number, why in round_trip.problems():
        if number not in failed:
            failed.add(number)
            report.fail(number, why)
    report.failures.sort(key=lambda text: int(text.split(":", 1)[0].split()[1]))
    return report


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
