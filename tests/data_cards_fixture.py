"""A small, fake but valid release directory for the data_cards tests.

`build_release(root)` writes real JSONL data files under root/release/data/ and
manifest.json, and returns (manifest, release_dir). The manifest follows the release
contract (sha256, bytes and rows of every file are computed from the files written; the
split reports come from gengap.splits.base.build_report), so the renderers can be tested without
the release builder. Two configs:

- parity_check-length: parity of bit strings, train on lengths 1-8, test on 9-16;
  difficulty input_length, output_length, ones (main feature "ones").
- toy_scan-mcd: a SCAN-like toy task with a derivation tree in ``structure`` and a
  ``meta`` object; "jump" never appears with a repetition modifier in train; an empty
  validation part; main feature input_length (so it has a single plot).
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

from gengap.splits.base import build_report

PARTS = ("train", "validation", "test")
VERBS = {"walk": "I_WALK", "run": "I_RUN", "jump": "I_JUMP", "look": "I_LOOK"}
REPEATS = {"twice": 2, "thrice": 3}


def _record(task: str, input_: str, target: str, difficulty: dict[str, int], **extra: Any) -> dict[str, Any]:
    digest = hashlib.sha256(f"{input_}\n{target}".encode()).hexdigest()[:16]
    record: dict[str, Any] = {"id": f"{task}-{digest}", "task": task, "input": input_, "target": target}
    record["difficulty"] = difficulty
    record.update(extra)
    return record


def parity_record(bits: list[int]) -> dict[str, Any]:
    ones = sum(bits)
    return _record(
        "parity_check",
        " ".join(map(str, bits)),
        str(ones % 2),
        {"input_length": len(bits), "output_length": 1, "ones": ones},
    )


def _phrase(rng: random.Random, allow_jump_repeat: bool) -> tuple[list[str], list[str], Any]:
    verb = rng.choice(sorted(VERBS))
    leaf = [f"V -> {verb}", verb]
    repeat = rng.choice([None, "twice", "thrice"])
    if verb == "jump" and not allow_jump_repeat:
        repeat = None
    if repeat is None:
        return [verb], [VERBS[verb]], ["S -> V", leaf]
    return [verb, repeat], [VERBS[verb]] * REPEATS[repeat], [f"S -> V {repeat}", leaf, repeat]


def toy_scan_record(rng: random.Random, allow_jump_repeat: bool) -> dict[str, Any]:
    words, actions, tree = _phrase(rng, allow_jump_repeat)
    if rng.random() < 0.5:
        words2, actions2, tree2 = _phrase(rng, allow_jump_repeat)
        words, actions, tree = words + ["and"] + words2, actions + actions2, ["C -> S and S", tree, "and", tree2]
    else:
        tree = ["C -> S", tree]
    depth = _depth(tree)
    return _record(
        "toy_scan",
        " ".join(words),
        " ".join(actions),
        {"input_length": len(words), "output_length": len(actions), "depth": depth},
        meta={"variant": "toy", "max_repeat": 3},
        structure=tree,
    )


def _depth(tree: Any) -> int:
    if isinstance(tree, str):
        return 0
    return 1 + max((_depth(child) for child in tree[1:]), default=0)


def _has_jump_repeat(record: dict[str, Any]) -> bool:
    words = record["input"].split()
    return any(a == "jump" and b in REPEATS for a, b in zip(words, words[1:]))


def parity_parts(seed: int) -> dict[str, list[dict[str, Any]]]:
    rng = random.Random(seed)
    train_side = [parity_record([rng.randint(0, 1) for _ in range(rng.randint(1, 8))]) for _ in range(46)]
    test = [parity_record([rng.randint(0, 1) for _ in range(rng.randint(9, 16))]) for _ in range(20)]
    return {"train": train_side[:40], "validation": train_side[40:], "test": test}


def toy_scan_parts(seed: int) -> dict[str, list[dict[str, Any]]]:
    rng = random.Random(seed)
    train = [toy_scan_record(rng, allow_jump_repeat=False) for _ in range(30)]
    test: list[dict[str, Any]] = []
    while len(test) < 12:
        record = toy_scan_record(rng, allow_jump_repeat=True)
        if _has_jump_repeat(record):
            test.append(record)
    return {"train": train, "validation": [], "test": test}


def _config(
    release: Path,
    name: str,
    task: str,
    family: str,
    description: str,
    strategy: str,
    options: dict[str, Any],
    generation: dict[str, Any],
    seed: int,
    parts: dict[str, list[dict[str, Any]]],
    main_feature: str,
) -> dict[str, Any]:
    files = {}
    for part in PARTS:
        data = "".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in parts[part]).encode()
        rel = f"data/{name}/{part}.jsonl"
        (release / rel).parent.mkdir(parents=True, exist_ok=True)
        (release / rel).write_bytes(data)
        files[part] = {
            "path": rel,
            "sha256": hashlib.sha256(data).hexdigest(),
            "bytes": len(data),
            "rows": len(parts[part]),
        }
    report = build_report(strategy, options, seed, parts)
    report["removed_overlap"] = 0
    report["unused"] = 0
    features: list[str] = []
    for part in PARTS:
        for feature in report["parts"][part]["ranges"]:
            if feature not in features:
                features.append(feature)
    return {
        "name": name,
        "task": task,
        "family": family,
        "task_description": description,
        "split": {"name": name.split("-", 1)[1], "strategy": strategy, "options": options},
        "generation": generation,
        "seed": seed,
        "files": files,
        "features": features,
        "main_feature": main_feature,
        "report": report,
    }


def build_release(root: Path, homepage: str = "https://github.com/gengap/gengap") -> tuple[dict[str, Any], Path]:
    """Write a small release under root/release; return (manifest, release_dir)."""
    release = Path(root) / "release"
    release.mkdir(parents=True, exist_ok=True)
    configs = [
        _config(
            release,
            "parity_check-length",
            "parity_check",
            "regular",
            "binary string -> 1 if the number of 1s is odd, else 0",
            "length",
            {"validation_fraction": 0.1, "train_max": 8},
            {"kind": "pool", "params": {"min_length": 1, "max_length": 16}, "pool": {"n": 66}},
            1234567,
            parity_parts(1),
            "ones",
        ),
        _config(
            release,
            "toy_scan-mcd",
            "toy_scan",
            "compositional",
            "SCAN-like commands | actions (toy)",
            "mcd",
            {"validation_fraction": 0.0, "held_out": "jump x repeat"},
            {"kind": "pool", "params": {"max_conjuncts": 2}, "pool": {"n": 42}},
            7654321,
            toy_scan_parts(2),
            "input_length",
        ),
    ]
    data_files = {}
    for config in configs:
        for part in PARTS:
            info = config["files"][part]
            data_files[info["path"]] = {k: info[k] for k in ("sha256", "bytes", "rows")}
    lines = "".join(f"{info['sha256']}  {path}\n" for path, info in sorted(data_files.items()))
    suite = {"name": "gengap-test", "seed": 0, "entries": [c["name"] for c in configs]}
    manifest = {
        "name": "gengap-test",
        "pretty_name": "gengap test suite",
        "version": "1.0.0",
        "description": "A tiny release built by the data_cards tests: parity with a length split and a toy SCAN task.",
        "license": "cc-by-4.0",
        "authors": [{"name": "gengap contributors"}, {"given-names": "Ada", "family-names": "Lovelace"}],
        "homepage": homepage,
        "seed": 0,
        "gengap_version": "0.1.0",
        "numpy_version": "2.4.6",
        "created": "2026-11-30",
        "suite": suite,
        "configs": configs,
        "data_files": data_files,
        "fingerprint": hashlib.sha256(lines.encode()).hexdigest(),
    }
    (release / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest, release
