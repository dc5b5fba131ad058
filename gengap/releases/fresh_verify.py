"""Verify a fresh test part against the release it was drawn from (``gengap verify DIR --release RELEASE``).

Checks, each a problem line when it fails: the directory holds exactly fresh.json and test.jsonl
(regular files; nothing else); fresh.json is a fresh part's report, sealed as gengap wrote it
(an edit that is not resealed shows) and with the derived seed its seed gives; the release passes plain
``gengap verify`` without its record pass (checksums, manifest, fingerprint, cards; and the
cited fingerprint with ``expect``) and is the one the report names (its fingerprint); test.jsonl
has the sha256, bytes and rows the report states, as many rows as were asked for; every record
is a valid record of the config's task that its checker accepts (gengap.checking.record_problem),
on the test side by the config's rule where it has one on one record, with an input that no
part of the release holds and no other record of the part repeats; the report's figures
(divergences, novelty, difficulty histograms of the fresh and the cited part) are those its
records give. With ``regenerate``, the part is drawn again from the report's seed and both files
must be byte-identical to the redraw.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import Any

from gengap.releases.checking import record_problem
from gengap.releases.fresh import DATA, MARKER, FreshError, TrainItems, config_rule, draw_fresh, figures, fresh_files
from gengap.generators.jsonl import is_sealed
from gengap.generators.reading import ReadError, iter_jsonl, read_json
from gengap.generators.seeding import fresh_seed
from gengap.releases.release_view import ReleaseReadError, ReleaseView, read_release
from gengap.splits import SplitError
from gengap.releases.verify import VerifyReport, first_difference, inventory, parse_fingerprint, verify_release

LISTED = 5  # record problems written out (the rest are counted)


def verify_fresh(directory: str | Path, release: str | Path, regenerate: bool = False, expect: str | None = None) -> VerifyReport:
    """Check the fresh test part in directory against release (module doc)."""
    root, report = Path(directory), VerifyReport()
    if not root.is_dir():
        report.problems.append(f"{root} is not a directory")
        return report
    files = inventory(root, report)
    report.extra += sorted(files - {MARKER, DATA})
    report.missing += [name for name in (MARKER, DATA) if name not in files]
    if report.missing:
        return report
    try:
        claimed = read_json(root / MARKER, f"{root}/{MARKER}")
    except ReadError as err:
        report.problems.append(str(err))
        return report
    if fresh_files(claimed) is None or not isinstance(claimed.get("release"), dict):
        report.problems.append(f"{root}/{MARKER} is not the report of a fresh test part gengap drew")
        return report
    if not is_sealed((root / MARKER).read_bytes(), claimed, 2):
        report.problems.append(f"{root}/{MARKER} was edited since gengap wrote it (its seal is not the sha256 of its text)")
    released = verify_release(release, records=False, expect=expect)
    report.problems += [f"release: {line}" for line in released.lines()]
    report.fingerprint = released.fingerprint
    if parse_fingerprint(str(claimed["release"].get("fingerprint"))) != released.fingerprint:
        report.problems.append(f"fresh.json names the release {claimed['release'].get('fingerprint')}, not {release} (sha256:{released.fingerprint})")
        return report
    try:
        view = read_release(release, keep=(str(claimed.get("config")),))
        view.entry(str(claimed.get("config")))
    except ReleaseReadError as err:
        report.problems.append(f"release: {err}")
        return report
    data = (root / DATA).read_bytes()
    report.checked = 2
    report.problems += _seed_problems(view, claimed)
    report.problems += _file_problems(claimed, data)
    records = _records(root, data, report)
    if records is None:
        return report
    report.records = len(records)
    report.problems += _record_problems(view, claimed, records)
    report.problems += _figure_problems(view, claimed, records)
    if regenerate and not report.problems:
        report.problems += _redraw_problems(view, claimed, data, (root / MARKER).read_bytes())
    return report


def _seed_problems(view: ReleaseView, claimed: dict[str, Any]) -> list[str]:
    """The report's derived seed is the one its seed and the config's seed give."""
    try:
        expected = fresh_seed(int(view.config(str(claimed["config"]))["seed"]), int(claimed["seed"]))
    except (KeyError, TypeError, ValueError, ReleaseReadError):
        return [f"{MARKER}: its seed or its config's seed cannot be read"]
    if claimed.get("derived_seed") != expected:
        return [f"{MARKER}: its derived seed {claimed.get('derived_seed')} is not the one seed {claimed.get('seed')} gives ({expected})"]
    return []


def _file_problems(claimed: dict[str, Any], data: bytes) -> list[str]:
    """test.jsonl against what fresh.json says of it."""
    stated = claimed["file"]
    found = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data), "rows": data.count(b"\n")}
    problems = [f"{DATA}: its {key} is {value}, fresh.json says {stated.get(key)}" for key, value in found.items() if stated.get(key) != value]
    if claimed.get("requested") != found["rows"]:
        problems.append(f"{DATA} has {found['rows']:,} rows, {claimed.get('requested')} were asked for")
    return problems


def _records(root: Path, data: bytes, report: VerifyReport) -> list[dict[str, Any]] | None:
    try:
        return [record for _, record in iter_jsonl(f"{root}/{DATA}", io.BytesIO(data))]
    except ReadError as err:
        report.problems.append(str(err))
        return None


def _record_problems(view: ReleaseView, claimed: dict[str, Any], records: list[Any]) -> list[str]:
    """Every record valid, of the config's task, on its test side, outside the release, once."""
    entry = view.entry(str(claimed["config"]))
    try:
        accept = config_rule(entry).accept
    except (FreshError, SplitError) as err:
        return [f"fresh.json: {err}"]
    problems, failures, seen = [], 0, set()
    in_release = repeated = 0
    for number, record in enumerate(records, start=1):
        problem = record_problem(record)
        if problem is None and record["task"] != entry["task"]:
            problem = f"task {record['task']!r} is not the config's task {entry['task']!r}"
        if problem is None and not _accepted(accept, record):
            problem = "it is not on the config's test side"
        if problem is not None:
            failures += 1
            if failures <= LISTED:
                problems.append(f"record: {DATA} line {number}: {problem}")
            continue
        in_release += view.inputs.excludes(record["input"])
        repeated += record["input"] in seen
        seen.add(record["input"])
    if failures > LISTED:
        problems.append(f"record: {DATA}: {failures - LISTED} more records fail")
    if in_release:
        problems.append(f"{DATA}: {in_release} inputs occur in the release")
    if repeated:
        problems.append(f"{DATA}: {repeated} inputs repeat an earlier record's")
    return problems


def _accepted(accept: Any, record: dict[str, Any]) -> bool:
    try:
        return bool(accept(record))
    except SplitError:
        return False


def _figure_problems(view: ReleaseView, claimed: dict[str, Any], records: list[dict[str, Any]]) -> list[str]:
    """The report's figures recomputed from the records and the release."""
    name = str(claimed["config"])
    try:
        found = figures(TrainItems.of_options(view.part(name, "train"), view.entry(name).get("options") or {}), view.part(name, "test"), records)
    except (KeyError, TypeError, ValueError) as err:
        return [f"{DATA}: its figures cannot be recomputed ({err})"]
    if "length_shift" not in claimed:  # a report written before issue 54 added it
        found.pop("length_shift", None)
    stated = {key: claimed.get(key) for key in found}
    where = first_difference(stated, found)
    return [] if where is None else [f"fresh.json: its figures are not those of its records (first at {where})"]


def _redraw_problems(view: ReleaseView, claimed: dict[str, Any], data: bytes, marker: bytes) -> list[str]:
    """Both files against a redraw from the report's config, size and seed."""
    try:
        part = draw_fresh(view, str(claimed["config"]), int(claimed["requested"]), int(claimed["seed"]))
    except (FreshError, KeyError, TypeError, ValueError) as err:
        return [f"regenerate: cannot redraw: {err}"]
    problems = []
    if part.data() != data:
        problems.append(f"regenerate: {DATA} differs from a redraw")
    if part.report_text().encode() != marker:
        problems.append(f"regenerate: {MARKER} differs from a redraw")
    return problems
