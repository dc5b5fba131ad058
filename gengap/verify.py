"""Verify a release, at two levels (see the README, "Verifying a release").

``verify_release`` (plain ``gengap verify``): every file against SHA256SUMS; manifest.json
against SHA256SUMS and its fingerprint against its data files; the fingerprint in
README.md, CITATION.cff and croissant.json against the manifest's; every record against
its task (gengap.audit). ``regenerate_and_compare`` (``--regenerate``): all that, then a
rebuild from manifest.json compared byte for byte.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gengap.audit import audit_records
from gengap.fingerprints import fingerprint_problems
from gengap.release import fingerprint, sha256_bytes, write_release
from gengap.staging import scratch_directory
from gengap.suite import SuiteError, check_suite_limits, resolve_suite

INFORMATIONAL = ("plots/",)  # rendered by matplotlib: bytes depend on its version


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
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        report.problems.append("manifest.json is not valid JSON")
        return None
    if not isinstance(manifest, dict) or "suite" not in manifest:
        report.problems.append("manifest.json has no suite")
        return None
    return manifest


def regenerate_and_compare(directory: str | Path, workers: int = 1) -> VerifyReport:
    """Rebuild the release from its manifest into a temporary directory; compare every file."""
    root = Path(directory)
    report = verify_release(root)
    manifest = _read_manifest(root, VerifyReport())
    if manifest is None:
        return report
    try:
        suite = resolve_suite(manifest["suite"]["config"])
        check_suite_limits(suite)
    except (SuiteError, KeyError, TypeError) as err:
        report.problems.append(f"cannot rebuild: {err}")
        return report
    from gengap import __version__

    if manifest.get("gengap_version") != __version__:
        report.notes.append(f"built with gengap {manifest.get('gengap_version')}, rebuilding with {__version__}")
    with scratch_directory("gengap-regenerate") as scratch:
        rebuilt = scratch / "release"
        write_release(suite, rebuilt, workers=workers)
        ours = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
        theirs = {p.relative_to(rebuilt).as_posix() for p in rebuilt.rglob("*") if p.is_file()}
        for name in sorted(ours | theirs):
            informational = name.startswith(INFORMATIONAL)
            if name == "SHA256SUMS":
                same = _sums_without_plots(root / name) == _sums_without_plots(rebuilt / name)
            elif name in ours and name in theirs:
                same = (root / name).read_bytes() == (rebuilt / name).read_bytes()
            else:
                same = False
            if same:
                continue
            if informational:
                report.notes.append(f"{name} differs from the rebuild (plots depend on the matplotlib version)")
            elif name not in theirs:
                report.problems.append(f"regenerate: {name} is not produced by the rebuild")
            elif name not in ours:
                report.problems.append(f"regenerate: the rebuild produces {name}, which the release lacks")
            else:
                report.problems.append(f"regenerate: {name} differs from the rebuild")
    return report


def _sums_without_plots(path: Path) -> list[str]:
    if not path.is_file():
        return []
    return [line for line in path.read_text(encoding="utf-8").splitlines() if "  plots/" not in line]
