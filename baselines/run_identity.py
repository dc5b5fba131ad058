"""What a run directory holds, recorded in every file a resume reads, and checked there.

A run's identity is its config, the fingerprint of its data, a digest of its vocabulary and
the settings that decide its trajectory (architecture, model shape, optimisation, data
order). ``run.json`` holds the config, fingerprint and settings; every checkpoint and every
``seed-N/result.json`` holds the whole identity under ``"run"``. A resume compares each of
them with the identity the command would train under, so that deleting any one file (say
``run.json``) never lets a run continue, or merge results, as another config, release,
vocabulary or model. Settings added after a run was made compare by their defaults.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping

from gengap.baselines.errors import BaselineError, RunFileError
from gengap.baselines.setup import TRAJECTORY  # the settings a resumed run must share with the interrupted one

KEY = "run"  # where checkpoints and seed results carry the identity


def vocabulary_digest(tokens: list[str]) -> str:
    """sha256 of a tokenizer's tokens in id order."""
    return hashlib.sha256(json.dumps(tokens, ensure_ascii=False).encode("utf-8")).hexdigest()


def run_identity(record: Mapping[str, Any], tokens: list[str]) -> dict[str, Any]:
    """The identity of a run from its run.json record and its tokenizer's tokens (plain JSON types)."""
    settings = record["settings"]
    return {
        "config": record["config"],
        "data_fingerprint": record["data_fingerprint"],
        "vocabulary": vocabulary_digest(tokens),
        "settings": {name: settings[name] for name in TRAJECTORY},
    }


def settings_changes(recorded: Any, expected: Mapping[str, Any], defaults: Mapping[str, Any]) -> list[str]:
    """'name old -> new' for each trajectory setting recorded differently from expected
    (a setting the record lacks counts as its default)."""
    if not isinstance(recorded, Mapping):
        return ["settings (none recorded)"]
    before = {name: recorded.get(name, defaults[name]) for name in TRAJECTORY}
    return [f"{name} {before[name]!r} -> {expected[name]!r}" for name in TRAJECTORY if before[name] != expected[name]]


def check_identity(found: Any, expected: Mapping[str, Any], defaults: Mapping[str, Any], what: str) -> None:
    """BaselineError unless found (the ``"run"`` entry of a file) is the identity expected;
    RunFileError when the file records none (an older gengap or another program wrote it)."""
    if not isinstance(found, Mapping):
        raise RunFileError(f"{what} records no run identity (written by an older gengap or not by gengap): remove it to resume")
    if found.get("config") != expected["config"] or found.get("data_fingerprint") != expected["data_fingerprint"]:
        raise BaselineError(f"{what} belongs to a run of other data (config {found.get('config')!r}, not {expected['config']!r}); cannot resume")
    if found.get("vocabulary") != expected["vocabulary"]:
        raise BaselineError(f"{what} belongs to a run of another vocabulary; cannot resume")
    changes = settings_changes(found.get("settings"), expected["settings"], defaults)
    if changes:
        raise BaselineError(f"{what} belongs to a run with other settings ({', '.join(changes)}); cannot resume")
