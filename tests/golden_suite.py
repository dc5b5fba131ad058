"""The golden suite: a small release covering every kind of suite entry, with pinned fingerprints.

``python -m tests.golden_suite`` builds it (data and manifest, no cards) in a temporary
directory and prints the fingerprint of its data files and the sha256 of its manifest
with the environment fields (gengap, numpy, Python versions) left out; ``--check`` exits 1
unless both are the pinned values. tests/test_golden.py runs it in a subprocess with
another PYTHONHASHSEED; .ci/run runs it under the oldest and the newest numpy the project
supports. A change of these values changes every release: update them only on purpose,
and say why in the commit.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from pathlib import Path

import numpy as np

# Every entry kind: sampled length split, sampled level split, a pool of n generated records
# (capped by sizes: the subsample stream), a pool of every example (pool: all), and the
# strategies iid, length, difficulty, holdout (atom with repeated primitive, and template),
# mcd (maximize) and a graded-MCD sweep; a float parameter written as an integer; an MCD split
# of cfq_like (derivation atoms and compounds, a knowledge base's knobs in every record's meta),
# pinned to compound_weighting: unweighted (its data as before cfq_like's MCD default became cfq;
# the manifest changed only by the option it echoes).
SUITE = """\
name: golden
version: 1.0.0
seed: 17
license: cc-by-4.0
created: "2026-12-01"
entries:
  - {task: parity_check, split: length, train_range: [1, 10], test_range: [11, 20], sizes: {train: 200, validation: 20, test: 50}}
  - {task: addition, split: length, params: {format: reversed}, train_range: [1, 3], test_range: [4, 5], sizes: {train: 100, test: 30}}
  - {task: multiplication, split: easy_to_hard, strategy: difficulty, level_max: 2, test_levels: [3, 4], sizes: {train: 100, validation: 10, test: 40}}
  - {task: shortest_path, split: iid, params: {edges_per_node: 2, max_edges: 8}, pool: {n: 300}, options: {test_fraction: 0.25}, sizes: {train: 150, test: 40}}
  - {task: cogs_like, split: pp_depth, strategy: difficulty, params: {max_pp_depth: 3}, pool: {n: 400}, options: {feature: pp_depth, train_max: 1, test_min: 2}, sizes: {train: 150, validation: 15, test: 50}}
  - {task: scan, split: length, params: {max_actions: 8}, pool: all, options: {by: output_length, train_max: 4, test_min: 6}}
  - {task: scan, split: addprim_jump, strategy: holdout, params: {max_actions: 8}, pool: all, options: {atom: jump, primitive_repeats: 20}}
  - {task: pcfg_set, split: holdout, pool: {n: 300}, options: {template: "X -> reverse X(X -> reverse X(_))", validation_fraction: 0.2}}
  - {task: scan, split: mcd, params: {max_actions: 8}, pool: all, options: {train_size: 120, test_size: 40, steps: 3000}}
  - {task: scan, split: graded, strategy: mcd, params: {max_actions: 8}, pool: all, options: {train_size: 120, test_size: 40, steps: 20000, compound_divergence: [0.3]}}
  - {task: cfq_like, split: mcd, params: {max_depth: 1, n_films: 40, n_people: 80, n_companies: 5}, pool: {n: 300}, options: {train_size: 120, test_size: 30, steps: 5000, compound_weighting: unweighted}}
"""

FINGERPRINT = "24c722bfeea1bf90b72d4ac343c7a909797b8a0d76ffa624614096269ff71018"
MANIFEST = "647c85939f4552943b30a699bcb4b86d2c3f4a52ead35125380096880f57508b"


def build() -> tuple[str, str]:
    """(fingerprint, sha256 of manifest.json without environment fields) of the golden suite."""
    from gengap.release import ENVIRONMENT_FIELDS, manifest_text, write_release
    from gengap.suite import parse_suite

    suite = parse_suite(SUITE, "<golden>")
    with tempfile.TemporaryDirectory() as scratch:
        manifest = write_release(suite, Path(scratch) / "release", cards=False)
    portable = {k: v for k, v in manifest.items() if k not in ENVIRONMENT_FIELDS}
    return manifest["fingerprint"], hashlib.sha256(manifest_text(portable).encode()).hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 unless the pinned values come out")
    args = parser.parse_args(argv)
    fingerprint, manifest = build()
    print(f"numpy {np.__version__} python {sys.version.split()[0]}")
    print(f"fingerprint {fingerprint}")
    print(f"manifest {manifest}")
    if args.check and (fingerprint, manifest) != (FINGERPRINT, MANIFEST):
        print(f"golden suite: expected fingerprint {FINGERPRINT} and manifest {MANIFEST}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
