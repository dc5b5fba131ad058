"""Golden fingerprints: the golden suite (tests/golden_suite.py, every entry kind) rebuilt in a
fresh process with another PYTHONHASHSEED gives the pinned data fingerprint and manifest."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gengap.suite import parse_suite
from tests import golden_suite

ROOT = Path(__file__).resolve().parents[1]


def test_the_golden_suite_covers_every_entry_kind() -> None:
    suite = parse_suite(golden_suite.SUITE, "<golden>")
    entries = suite["entries"]
    assert {e["kind"] for e in entries} == {"sampled_length", "sampled_level", "pool"}
    assert {e["strategy"] for e in entries} == {"iid", "length", "difficulty", "holdout", "mcd"}
    pools = [e["pool"] for e in entries if e["kind"] == "pool"]
    assert "all" in pools and any(isinstance(p, dict) for p in pools)
    assert any(e["kind"] == "pool" and e["sizes"] for e in entries)  # capped: the subsample stream
    assert any(e["name"].endswith("_dc0300") for e in entries)  # a graded-MCD sweep
    assert any(e["options"].get("template") for e in entries if e["kind"] == "pool")
    assert any(e["options"].get("primitive_repeats") for e in entries if e["kind"] == "pool")
    assert any(e["base_params"].get("edges_per_node") == 2 for e in entries)  # an int for a float knob


def test_golden_fingerprint_in_a_process_with_another_hash_seed() -> None:
    hash_seed = "4243" if os.environ.get("PYTHONHASHSEED") == "4242" else "4242"
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "tests.golden_suite", "--check"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1] == f"fingerprint {golden_suite.FINGERPRINT}"
    assert lines[2] == f"manifest {golden_suite.MANIFEST}"
