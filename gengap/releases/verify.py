"""Verify a release, at two levels (see the README, "Verifying a release").

``verify_release`` (plain ``gengap verify``): every path under the release is accounted
for: a regular file listed in SHA256SUMS (which lists exactly manifest.json, the data files
of the manifest's configs and the card files the manifest names), or reported (an extra or
unlisted file, an empty directory, a symlink, a FIFO or other special file: none is ever
followed or read); every listed file against SHA256SUMS; manifest.json's configs against its
data files (each config has its train, validation and test file, each data file belongs to
a config) and its fingerprint against its data files; the fingerprint in README.md,
CITATION.cff and croissant.json against the manifest's; every record against its task
(gengap.audit); optionally the fingerprint against the one a citation gives, and the sha256 of
SHA256SUMS (which pins every file: manifest, license, cards) against a cited one.
``regenerate_and_compare`` (``--regenerate``): all that, then a rebuild from manifest.json
compared byte for byte, with the environment fields of the manifest (versions of gengap,
numpy and Python) set aside as notes; a rebuild beyond the record limits is refused before
anything is read or built (RebuildRefused).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gengap.data_cards import card_files
from gengap.generators import ParamError
from gengap.generators.digests import file_sha256
from gengap.generators.plugins import load_recorded, version_notes, without_versions
from gengap.generators.reading import MAX_JSON_BYTES, ReadError, read_json
from gengap.releases.audit import audit_records
from gengap.releases.fingerprints import fingerprint_problems
from gengap.ground.limits import LimitError, RecordLimit, check_disk_space
from gengap.releases.release import CONFIG_NAME, ENVIRONMENT_FIELDS, PARTS, ReleaseError, fingerprint, manifest_text, write_cards, write_release
from gengap.ground.staging import scratch_directory
from gengap.releases.suite import SuiteError, SuiteLimitError, check_suite_limits, resolve_suite, suite_data_bytes
from gengap.splits import SplitError

INFORMATIONAL = ("plots/",)  # rendered by matplotlib: bytes depend on its version
FINGERPRINT = re.compile(r"(?:sha256:)?([0-9a-fA-F]{64})")


class RebuildRefused(ValueError):
    """``--regenerate`` of a manifest whose suite asks for more than the record limits allow."""


def parse_fingerprint(text: str) -> str | None:
    """The 64 lowercase hex digits of a fingerprint written ``sha256:<hex>`` or ``<hex>``; None otherwise."""
    match = FINGERPRINT.fullmatch(text.strip())
    return match.group(1).lower() if match else None


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
    sums_sha256: str | None = None  # the sha256 of SHA256SUMS: what pins every file of the release

    @property
    def ok(self) -> bool:
        return not (self.missing or self.extra or self.changed or self.problems)

    def lines(self) -> list[str]:
        out = [f"missing: {p}" for p in self.missing]
        out += [f"extra: {p}" for p in self.extra]
        out += [f"changed: {p}" for p in self.changed]
        out += self.problems
        return out


_KINDS = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def inventory(root: Path, report: VerifyReport | None = None) -> set[str]:
    """The regular files under root (relative POSIX paths), found without following any
    symlink; symlinks, special files and empty directories go to report (when given)."""
    files: set[str] = set()
    stack: list[tuple[str, str]] = [(str(root), "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as err:
            if report is not None:
                report.problems.append(f"cannot list {prefix or root}: {err.strerror or err}")
            continue
        if not entries and prefix and report is not None:
            report.extra.append(f"{prefix}/ (an empty directory)")
        for entry in entries:
            name = f"{prefix}/{entry.name}" if prefix else entry.name
            mode = entry.stat(follow_symlinks=False).st_mode
            if stat.S_ISLNK(mode):
                if report is not None:
                    report.problems.append(f"symlink: {name} -> {os.readlink(entry.path)} (a release holds no symlinks; not followed)")
            elif stat.S_ISDIR(mode):
                stack.append((entry.path, name))
            elif stat.S_ISREG(mode):
                files.add(name)
            elif report is not None:
                kind = next((label for test, label in _KINDS if test(mode)), "a special file")
                report.problems.append(f"special file: {name} is {kind} (a release holds only files and directories; not read)")
    return files


def _read_sums(directory: Path, files: set[str], report: VerifyReport) -> dict[str, str] | None:
    if "SHA256SUMS" not in files:
        report.missing.append("SHA256SUMS")
        return None
    with open(directory / "SHA256SUMS", "rb") as handle:
        raw = handle.read(MAX_JSON_BYTES + 1)
    if len(raw) > MAX_JSON_BYTES:
        report.problems.append(f"SHA256SUMS is larger than {MAX_JSON_BYTES:,} bytes")
        return None
    report.sums_sha256 = hashlib.sha256(raw).hexdigest()
    sums: dict[str, str] = {}
    for number, line in enumerate(raw.decode("utf-8", errors="replace").splitlines(), start=1):
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64 or not name or name.startswith("/") or ".." in Path(name).parts:
            report.problems.append(f"SHA256SUMS line {number} is malformed")
            continue
        if name in sums:
            report.problems.append(f"SHA256SUMS line {number} lists {name} again (a path is listed once; sha256sum -c checks every line)")
            continue
        sums[name] = digest
    return sums


def verify_release(directory: str | Path, records: bool = True, expect: str | None = None, expect_sums: str | None = None) -> VerifyReport:
    """Account for every path under the release, check every listed file against SHA256SUMS,
    the manifest's configs, data files and fingerprint, the fingerprint in the card files,
    (unless records=False) every record, and (when given) that the fingerprint is `expect`
    and the sha256 of SHA256SUMS `expect_sums` (64 hex digits each, as parse_fingerprint
    gives): the fingerprint pins the data files, SHA256SUMS every file (manifest, cards, plots)."""
    root = Path(directory)
    report = VerifyReport()
    if not root.is_dir():
        report.problems.append(f"{root} is not a directory")
        return report
    files = inventory(root, report)
    sums = _read_sums(root, files, report)
    if sums is None:
        return report
    report.extra += sorted(files - set(sums) - {"SHA256SUMS"})
    for name, digest in sorted(sums.items()):
        if name not in files:
            report.missing.append(name)
            continue
        report.checked += 1
        if file_sha256(root / name) != digest:
            report.changed.append(name)
    manifest = _read_manifest(root, files, report)
    if manifest is not None:
        _check_manifest(root, manifest, sums, files, report, records)
    if expect is not None and report.fingerprint is not None and report.fingerprint != expect:
        report.problems.append(
            f"fingerprint: the release has sha256:{report.fingerprint}, not the expected sha256:{expect} (not the cited release)"
        )
    if expect_sums is not None and report.sums_sha256 != expect_sums:
        report.problems.append(
            f"SHA256SUMS: its sha256 is sha256:{report.sums_sha256}, not the expected sha256:{expect_sums} (a file differs from the "
            "cited release: its data, manifest, license, cards or plots)"
        )
    return report


def _check_manifest(root: Path, manifest: dict[str, Any], sums: dict[str, str], files: set[str], report: VerifyReport, records: bool) -> None:
    """The manifest against SHA256SUMS, its configs, its fingerprint, the card files and (optionally) the records."""
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
    report.problems += accounting_problems(manifest, data_files, sums)
    listed = set(sums) & files  # regular files only: nothing is read through a symlink
    if claimed != fingerprint(data_files):
        report.problems.append("manifest fingerprint does not match its data files")
    elif report.fingerprint is not None:
        report.problems += fingerprint_problems(root, report.fingerprint, listed)
    missing_plugins = load_recorded(manifest.get("plugins"))
    report.problems += missing_plugins
    report.notes += version_notes(manifest.get("plugins"))
    if records and missing_plugins:
        report.problems.append("records not checked: their tasks come from the missing plugins")
    elif records:
        audit = audit_records(root, manifest, set(sums) & set(data_files), files)
        report.records = audit.records
        report.problems += audit.problems


def accounting_problems(manifest: dict[str, Any], data_files: dict[str, Any], sums: dict[str, str]) -> list[str]:
    """Why the files the manifest accounts for are not exactly those SHA256SUMS lists, or its
    configs not exactly its data files: every config has a train, validation and test file at
    data/<config>/<part>.jsonl, each a data file with the same hash; every data file belongs to
    a config; the card files are those its configs give (gengap.data_cards.card_files) or none."""
    problems: list[str] = []
    configs = manifest.get("configs")
    if not isinstance(configs, list) or not configs:
        return ["manifest.json has no list of configs"]
    owned: set[str] = set()
    names: list[str] = []
    for index, config in enumerate(configs):
        name = config.get("name") if isinstance(config, dict) else None
        label = f"configs[{index}]" + (f" ({name})" if isinstance(name, str) else "")
        if not isinstance(name, str) or not CONFIG_NAME.fullmatch(name):
            problems.append(f"manifest.json: {label} has no valid name")
            continue
        if name in names:
            problems.append(f"manifest.json: config {name} appears twice")
        names.append(name)
        parts = config.get("files")
        parts = parts if isinstance(parts, dict) else {}
        for part in sorted(set(parts) - set(PARTS)):
            problems.append(f"manifest.json: config {name} has an unknown part {part!r}")
        for part in PARTS:
            info, path = parts.get(part), f"data/{name}/{part}.jsonl"
            if not isinstance(info, dict):
                problems.append(f"manifest.json: config {name} lacks files.{part} ({path})")
                continue
            if info.get("path") != path:
                problems.append(f"manifest.json: config {name}'s files.{part} is {info.get('path')!r}, not {path}")
                continue
            owned.add(path)
            if path not in data_files:
                problems.append(f"manifest.json: {path} of config {name} is not in data_files")
            elif info.get("sha256") != data_files[path].get("sha256"):
                problems.append(f"manifest.json: config {name}'s files.{part} and data_files disagree on {path}")
    for path in sorted(set(data_files) - owned):
        problems.append(f"manifest.json: data file {path} belongs to no config (a config removed from the manifest?)")
    cards = manifest.get("card_files")
    if not isinstance(cards, list) or not all(isinstance(c, str) for c in cards):
        problems.append("manifest.json does not say which card files the release has (card_files)")
        cards = []
    elif cards and sorted(cards) != card_files([c for c in configs if isinstance(c, dict) and isinstance(c.get("name"), str)]):
        problems.append("manifest.json: card_files are not the card files and plots of its configs")
    for name in sorted(cards):
        if name not in sums:
            problems.append(f"card file {name} of the manifest is not in SHA256SUMS")
    if "manifest.json" not in sums:
        problems.append("manifest.json is not in SHA256SUMS")
    for name in sorted(set(sums) - set(data_files) - set(cards) - {"manifest.json"}):
        problems.append(f"unaccounted: {name} is in SHA256SUMS, but manifest.json lists it neither as a data file of a config nor as a card file")
    return problems


def _read_manifest(root: Path, files: set[str], report: VerifyReport) -> dict[str, Any] | None:
    if "manifest.json" not in files:
        if "manifest.json" not in report.missing:
            report.missing.append("manifest.json")
        return None
    try:
        manifest = read_json(root / "manifest.json", "manifest.json")
    except ReadError as err:
        report.problems.append(str(err))
        return None
    if not isinstance(manifest, dict) or "suite" not in manifest:
        report.problems.append("manifest.json has no suite")
        return None
    return manifest


def regenerate_and_compare(directory: str | Path, workers: int = 1, limit: RecordLimit | None = None, expect: str | None = None,
                           expect_sums: str | None = None) -> VerifyReport:
    """Rebuild the release from its manifest into a temporary directory and compare it.

    Before anything is read or built, the manifest's suite is held to the record limits
    (limit, default RecordLimit.from_environment()) and its estimated data to the free space
    of the temporary directory: RebuildRefused when it asks for more. Then verify_release
    (expect: see there). Data files must be byte-identical. The environment fields of the
    manifest (release.ENVIRONMENT_FIELDS: gengap, numpy and Python versions) are set aside:
    where they differ, a note says so, the rebuilt manifest gets the release's values (or
    lacks the field, like the release) and the cards are rendered from it, and then
    manifest.json, README.md, CITATION.cff and croissant.json must be byte-identical too.
    Plots differ only as notes (their bytes depend on matplotlib); SHA256SUMS is checked
    against the files by verify_release. Every file of the release is read without
    following symlinks (inventory), so a symlinked data directory never matches the rebuild.
    """
    root = Path(directory)
    manifest = _read_manifest(root, inventory(root), VerifyReport()) if root.is_dir() else None
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
    report = verify_release(root, expect=expect, expect_sums=expect_sums)
    if manifest is None:
        return report
    if suite is None:
        report.problems.append(unbuildable or "cannot rebuild: manifest.json has no suite config")
        return report
    with scratch_directory("gengap-regenerate") as scratch:
        rebuilt = scratch / "release"
        try:
            write_release(suite, rebuilt, workers=workers, cards=False, list_cards=True)
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
        if "plugins" in aligned and without_versions(aligned["plugins"]) == without_versions(manifest.get("plugins")):
            aligned["plugins"] = manifest["plugins"]  # plugin versions are set aside like the environment's (notes)
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
    ours, theirs = inventory(root), inventory(rebuilt)
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
