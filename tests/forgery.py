"""A forger who recomputes every hash: after changing a release's data files, every figure a
hash covers is made consistent again (data_files, each config's files, the fingerprint, the
card files, SHA256SUMS), so plain verify sees no checksum problem. What is left to catch is
what the files say against what the manifest states (tests/test_verify_cross_checks.py) and
each record against its task (tests/test_record_bounds.py)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Callable

from gengap.release import fingerprint, manifest_text, write_checksums


def rehash(root: Path, change_manifest: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Recompute every hash of the release at root from its data files as they are now (after
    change_manifest(manifest), if given); returns the manifest written."""
    from gengap.data_cards import write_cards

    manifest = json.loads((root / "manifest.json").read_text())
    if change_manifest is not None:
        change_manifest(manifest)
    for path in manifest["data_files"]:
        data = (root / path).read_bytes()
        info = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data), "rows": data.count(b"\n")}
        manifest["data_files"][path] = info
        for config in manifest["configs"]:
            for part in config["files"].values():
                if part["path"] == path:
                    part.update(info)
    manifest["fingerprint"] = fingerprint(manifest["data_files"])
    (root / "manifest.json").write_text(manifest_text(manifest), encoding="utf-8")
    write_cards(manifest, root)
    write_checksums(root)
    return manifest


def edit_records(path: Path, change: Callable[[list[dict[str, Any]]], None]) -> None:
    """Rewrite a JSONL data file after change(records) (records as parsed)."""
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    change(records)
    path.write_text("".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


def restate(root: Path) -> None:
    """A forger who also rewrites what the manifest states: every config's split report
    (sizes, part summaries, divergences, novelty) and its records' novelty made those of its
    files as they are now (call rehash afterwards)."""
    from gengap.generators.cues import without_cue
    from gengap.splits.base import PARTS, build_report, part_summary
    from gengap.splits.novelty import NOVELTY_KEY, annotate, novelty_summary
    from gengap.splits.precision import rounded

    manifest = json.loads((root / "manifest.json").read_text())
    for config in manifest["configs"]:
        paths = {part: root / config["files"][part]["path"] for part in PARTS}
        parts = {part: [json.loads(line) for line in path.read_text().splitlines()] for part, path in paths.items()}
        report = config["report"]
        plain = {part: [without_cue(r) for r in parts[part]] for part in PARTS}
        fresh = annotate(plain, bool(report.get("options", {}).get("abstract_lexical")))
        for part in PARTS:
            for record, new in zip(parts[part], fresh[part]):
                record.pop(NOVELTY_KEY, None)
                if NOVELTY_KEY in new:
                    record[NOVELTY_KEY] = new[NOVELTY_KEY]
            edit_records(paths[part], lambda records, part=part: records.__setitem__(slice(None), parts[part]))
        recomputed = build_report(report["strategy"], report.get("options", {}), report.get("seed"), plain)
        for key in ("sizes", "overlap", "atom_divergence", "compound_divergence", "unseen_atoms", "unseen_atom_count"):
            report[key] = recomputed[key]
        report["parts"] = {part: rounded(part_summary(parts[part])) for part in PARTS}
        report["novelty"] = {part: novelty_summary(parts[part]) for part in ("validation", "test")}
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
