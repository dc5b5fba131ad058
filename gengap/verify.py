"""Verify a release, at two levels (see the README, "Verifying a release").

``verify_release`` (plain ``gengap verify``): every file against SHA256SUMS; manifest.json
against SHA256SUMS and its fingerprint against its data files; the fingerprint in
README.md, CITATION.cff and croissant.json against the manifest's; every record against
its task (gengap.audit). ``regenerate_and_compare`` (``--regenerate``): all that, then a
rebuild from manifest.json compared byte for byte, with the environment fields of the
manifest (versions of gengap, numpy and Python) set aside as notes; a rebuild beyond the
record limits is refused before anything is read or built (RebuildRefused).
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generators import ParamError
from generators.reading import ReadError, read_json
from gengap.audit import audit_records
from gengap.fingerprints import fingerprint_problems
from gengap.release import ENVIRONMENT_FIELDS, ReleaseError, fingerprint, manifest_text, sha256_bytes, write_cards, write_release
from gengap.staging import scratch_directory
from gengap.limits import LimitError, RecordLimit, check_disk_space
from gengap.suite import SuiteError, SuiteLimitError, check_suite_limits, resolve_suite, suite_data_bytes
from splits import SplitError

INFORMATIONAL = ("plots/",)  # rendered by matplotlib: bytes depend on its version


class RebuildRefused(ValueError):
    """``--regenerate`` of a manifest whose suite asks for more than the record limits allow."""


@dataclass
class VerifyReport:
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    checked: int = 0
    records: int = 0
    fingerprint: str | None = None  # the manifest's, when it could be read

    @property
    def ok(self) -> bool:
        return not (self.missing or self.extra or self.changed or self.problems)

    def lines(self) -> list[str]:
        out = [f"missing: {p}" for p in self.missing]
        out += [f"extra: {p}" for p in self.extra]
        out += [f"changed: {p}" for p in self.changed]
        out += self.problems
        return out


def _read_sums(directory: Path, report: VerifyReport) -> dict[str, str] | None:
    path = directory / "SHA256SUMS"
    if not path.is_file():
        report.missing.append("SHA256SUMS")
        return None
    sums: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64 or not name or name.startswith("/") or ".." in Path(name).parts:
            report.problems.append(f"SHA256SUMS line {number} is malformed")
            continue
        sums[name] = digest
    return sums


def verify_release(directory: str | Path, records: bool = True) -> VerifyReport:
    """Check every file against SHA256SUMS, the manifest's data hashes and fingerprint, the
    fingerprint in the card files, and (unless records=False) every record."""
    root = Path(directory)
    report = VerifyReport()
    if not root.is_dir():
        report.problems.append(f"{root} is not a directory")
        return report
    sums = _read_sums(root, report)
    if sums is None:
        return report
    present = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()} - {"SHA256SUMS"}
    report.extra = sorted(present - set(sums))
    for name, digest in sorted(sums.items()):
        path = root / name
        if not path.is_file():
            report.missing.append(name)
            continue
        report.checked += 1
        if sha256_bytes(path.read_bytes()) != digest:
            report.changed.append(name)
    manifest = _read_manifest(root, report)
    if manifest is not None:
        _check_manifest(root, manifest, sums, report, records)
    return report


def _check_manifest(root: Path, manifest: dict[str, Any], sums: dict[str, str], report: VerifyReport, records: bool) -> None:
    """The manifest against SHA256SUMS, its fingerprint, the card files and (optionally) the records."""
    data_files = manifest.get("data_files")
    if not isinstance(data_files, dict) or not all(isinstance(i, dict) and "sha256" in i for i in data_files.values()):
        report.problems.append("manifest.json has no valid data_files")
        return
    for name, info in sorted(data_files.items()):
        if name in sums and sums[name] != info.get("sha256"):
            report.problems.append(f"manifest.json and SHA256SUMS disagree on {name}")
        if name not in sums:
            report.problems.append(f"data file {name} of the manifest is not in SHA256SUMS")
    claimed = manifest.get("fingerprint")
    report.fingerprint = claimed if isinstance(claimed, str) else None
    if claimed != fingerprint(data_files):
        report.problems.append("manifest fingerprint does not match its data files")
    elif report.fingerprint is not None:
        report.problems += fingerprint_problems(root, report.fingerprint, set(sums))
    if records:
        audit = audit_records(root, manifest, set(sums) & set(data_files))
        report.records = audit.records
        report.problems += audit.problems


def _read_manifest(root: Path, report: VerifyReport) -> dict[str, Any] | None:
    path = root / "manifest.json"
    if not path.is_file():
        if "manifest.json" not in report.missing:
            report.missing.append("manifest.json")
        return None
    try:
        manifest = read_json(path, "manifest.json")
    except ReadError as err:
        report.problems.append(str(err))
        return None
    if not isinstance(manifest, dict) or "suite" not in manifest:
        report.problems.append("manifest.json has no suite")
        return None
    return manifest


def regenerate_and_compare(directory: str | Path, workers: int = 1, limit: RecordLimit | None = None) -> VerifyReport:
    """Rebuild the release from its manifest into a temporary directory and compare it.

    Before anything is read or built, the manifest's suite is held to the record limits
    (limit, default RecordLimit.from_environment()) and its estimated data to the free space
    of the temporary directory: RebuildRefused when it asks for more. Then verify_release.
    Data files must be byte-identical. The environment fields of the manifest
    (release.ENVIRONMENT_FIELDS: gengap, numpy and Python versions) are set aside: where
    they differ, a note says so, the rebuilt manifest gets the release's values (or lacks
    the field, like the release) and the cards are rendered from it, and then manifest.json,
    README.md, CITATION.cff and croissant.json must be byte-identical too. Plots differ only
    as notes (their bytes depend on matplotlib); SHA256SUMS is checked against the files by
    verify_release.
    """
    root = Path(directory)
    manifest = _read_manifest(root, VerifyReport()) if root.is_dir() else None
    suite, unbuildable = None, None
    if manifest is not None:
        try:
            suite = resolve_suite(manifest["suite"]["config"])
            check_suite_limits(suite, limit)
            check_disk_space(suite_data_bytes(suite), tempfile.gettempdir(), "the rebuild")
        except (SuiteLimitError, LimitError) as err:
            raise RebuildRefused(f"cannot rebuild {root} from its manifest: {err}") from None
        except (SuiteError, ParamError, KeyError, TypeError) as err:
            unbuildable = f"cannot rebuild: {err}"
    report = verify_release(root)
    if manifest is None:
        return report
    if suite is None:
        report.problems.append(unbuildable or "cannot rebuild: manifest.json has no suite config")
        return report
    with scratch_directory("gengap-regenerate") as scratch:
        rebuilt = scratch / "release"
        try:
            write_release(suite, rebuilt, workers=workers, cards=False)
        except (ReleaseError, SplitError, ParamError) as err:
            report.problems.append(f"cannot rebuild: {err}")
            return report
        theirs = json.loads((rebuilt / "manifest.json").read_text(encoding="utf-8"))
        report.notes += environment_notes(manifest, theirs)
        aligned = {
            key: manifest.get(key, value) if key in ENVIRONMENT_FIELDS else value
            for key, value in theirs.items()
            if key not in ENVIRONMENT_FIELDS or key in manifest
        }
        (rebuilt / "manifest.json").write_text(manifest_text(aligned), encoding="utf-8")
        try:
            write_cards(aligned, rebuilt)
        except ReleaseError as err:
            report.problems.append(f"cannot rebuild the cards: {err}")
            return report
        _compare_files(root, rebuilt, manifest, aligned, report)
    return report


def environment_notes(ours: dict[str, Any], theirs: dict[str, Any]) -> list[str]:
    """One note per environment field whose value differs between a release and its rebuild."""
    return [
        f"environment set aside: {key} is {ours.get(key)} in the release, {theirs.get(key)} in the rebuild"
        for key in ENVIRONMENT_FIELDS
        if ours.get(key) != theirs.get(key)
    ]


def _compare_files(root: Path, rebuilt: Path, ours_manifest: Any, theirs_manifest: Any, report: VerifyReport) -> None:
    """Every file of the release against the rebuild (see regenerate_and_compare)."""
    ours = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    theirs = {p.relative_to(rebuilt).as_posix() for p in rebuilt.rglob("*") if p.is_file()}
    for name in sorted((ours | theirs) - {"SHA256SUMS"}):
        if name in ours and name in theirs and (root / name).read_bytes() == (rebuilt / name).read_bytes():
            continue
        if name.startswith(INFORMATIONAL):
            report.notes.append(f"{name} differs from the rebuild (plots depend on the matplotlib version)")
        elif name not in theirs:
            report.problems.append(f"regenerate: {name} is not produced by the rebuild")
        elif name not in ours:
            report.problems.append(f"regenerate: the rebuild produces {name}, which the release lacks")
        elif name == "manifest.json":
            where = first_difference(ours_manifest, theirs_manifest)
            detail = f" at {where}" if where else " (formatting)"
            report.problems.append(f"regenerate: manifest.json differs from the rebuild{detail}")
        else:
            report.problems.append(f"regenerate: {name} differs from the rebuild")


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """The path (``configs[3].report.sizes``) of the first place two JSON values differ; None if equal."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            if key not in a or key not in b:
                return f"{path}.{key}" if path else str(key)
            found = first_difference(a[key], b[key], f"{path}.{key}" if path else str(key))
            if found is not None:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for index, (x, y) in enumerate(zip(a, b)):
            found = first_difference(x, y, f"{path}[{index}]")
            if found is not None:
                return found
        return None if len(a) == len(b) else f"{path}[{min(len(a), len(b))}]"
    if a == b and type(a) is type(b):
        return None
    return path or "(top)"
