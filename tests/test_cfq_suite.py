"""The shipped cfq-like suite (CFQ's random split and MCD1-3 on cfq_like): its entries, their splits
at a reduced size through the suite machinery (D_A within CFQ's bound on the parts the report
states), determinism over runs and worker counts, the card's citation; the real suite (slow)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gengap.cli import main
from gengap.generators import get_task
from gengap.release import build_entry, entry_seed, pool_seed
from gengap.splits import generate_records
from gengap.splits.atoms import record_atoms, record_compounds, sum_counters
from gengap.splits.divergence import atom_divergence, compound_divergence
from gengap.suite import load_suite, parse_suite

SUITE = Path(__file__).resolve().parents[1] / "gengap" / "suites" / "cfq-like.yaml"
ATOM_BOUND = 0.02  # CFQ's bound on atom divergence (Keysers et al. 2020)


def scaled(share: float, steps: int) -> str:
    """The shipped suite's text with every pool and part size times share and MCD steps set to steps."""
    raw = yaml.safe_load(SUITE.read_text())
    for entry in raw["entries"]:
        entry["pool"]["n"] = int(entry["pool"]["n"] * share)
        options = entry["options"]
        for key in ("train_size", "test_size"):
            if key in options:
                options[key] = int(options[key] * share)
        if "steps" in options:
            options["steps"] = steps
        if "sizes" in entry:
            entry["sizes"] = {part: int(size * share) for part, size in entry["sizes"].items()}
    return yaml.safe_dump(raw, sort_keys=False)


def parts_divergences(parts: dict[str, list[dict[str, Any]]]) -> tuple[float, float, int]:
    """(D_A, D_C, test atoms unseen in train) of train vs test, recomputed from the records."""
    train_atoms, test_atoms = (sum_counters(record_atoms(r) for r in parts[p]) for p in ("train", "test"))
    train_compounds, test_compounds = (sum_counters(record_compounds(r) for r in parts[p]) for p in ("train", "test"))
    return atom_divergence(train_atoms, test_atoms), compound_divergence(train_compounds, test_compounds), len(set(test_atoms) - set(train_atoms))


def test_the_suite_holds_a_random_split_and_three_mcd_splits_of_different_seeds() -> None:
    suite = load_suite(SUITE)
    entries = {entry["name"]: entry for entry in suite["entries"]}
    assert list(entries) == ["cfq_like-random", "cfq_like-mcd1", "cfq_like-mcd2", "cfq_like-mcd3"]
    assert entries["cfq_like-random"]["strategy"] == "iid" and entries["cfq_like-random"]["sizes"] == {"train": 8000, "validation": 1000, "test": 1000}
    mcd = [entries[f"cfq_like-mcd{i}"] for i in (1, 2, 3)]
    for entry in mcd:
        assert entry["strategy"] == "mcd" and entry["options"]["atom_divergence_max"] == ATOM_BOUND
        assert (entry["options"]["train_size"], entry["options"]["test_size"]) == (9000, 1000)  # train 8,000 + validation 1,000
        assert entry["params"] == mcd[0]["params"]
    assert all(entry["pool"] == {"n": 20000, "shared": "cfq"} for entry in entries.values())  # CFQ's splits are of one dataset
    assert len({pool_seed(entry, suite["seed"]) for entry in entries.values()}) == 1  # one pool ...
    assert len({entry_seed(entry, suite["seed"]) for entry in entries.values()}) == 4  # ... each config its own split seed


def test_every_split_of_a_reduced_suite_keeps_the_atom_bound_and_mcd_diverges_more_than_random() -> None:
    suite = parse_suite(scaled(0.05, 15_000), "<cfq-like, 5 %>")
    reports = {}
    drawn = {}
    for entry in suite["entries"]:
        result = build_entry(entry, suite["seed"])
        report = result.report
        parts = {"train": result.train, "test": result.test}
        drawn[entry["name"]] = {r["input"] for part in (result.train, result.validation, result.test) for r in part}
        da, dc, unseen = parts_divergences(parts)
        assert report["atom_divergence"] == pytest.approx(da, abs=1e-4) and report["compound_divergence"] == pytest.approx(dc, abs=1e-4)
        assert report["sizes"] == {"train": 400, "validation": 50, "test": 50}
        if entry["strategy"] == "mcd":
            assert da <= ATOM_BOUND and unseen == 0 and not [w for w in report["warnings"] if "atom" in w], report["warnings"]
        reports[entry["name"]] = report
    first = suite["entries"][0]
    pool = generate_records("cfq_like", get_task("cfq_like").make_params(first["params"]), first["pool"]["n"], pool_seed(first, suite["seed"]))
    questions = {r["input"] for r in pool}
    assert all(drawn[name] <= questions for name in drawn)  # every config draws from the one shared pool
    assert len(set.union(*drawn.values())) > max(len(d) for d in drawn.values())  # and chooses its own part of it
    random_dc = reports["cfq_like-random"]["compound_divergence"]
    assert all(reports[f"cfq_like-mcd{i}"]["compound_divergence"] > random_dc + 0.2 for i in (1, 2, 3))


def test_a_small_release_is_the_same_bytes_at_1_and_2_workers_verifies_and_cites_keysers(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(scaled(0.02, 3_000))
    fingerprints = []
    for workers in ("1", "2"):
        out = tmp_path / f"release-{workers}"
        assert main(["release", str(tmp_path / "suite.yaml"), "--out", str(out), "--workers", workers]) == 0
        fingerprints.append(json.loads((out / "manifest.json").read_text())["fingerprint"])
    first, second = tmp_path / "release-1", tmp_path / "release-2"
    for path in sorted((first / "data").rglob("*.jsonl")):
        assert path.read_bytes() == (second / path.relative_to(first)).read_bytes(), path
    assert fingerprints[0] == fingerprints[1] and len(list((first / "data").rglob("*.jsonl"))) == 12
    for path in sorted((first / "data").rglob("*.jsonl")):  # like for like: every part of every split holds distinct questions
        inputs = [json.loads(line)["input"] for line in path.read_text().splitlines()]
        assert len(set(inputs)) == len(inputs), path
    assert main(["verify", str(first)]) == 0
    card = (first / "README.md").read_text()
    assert "@inproceedings{keysers2020measuring" in card and "Measuring Compositional Generalization" in card
    cited = next(line for line in card.splitlines() if line.startswith("- `keysers2020measuring`"))
    assert all(f"`cfq_like-{split}`" in cited for split in ("random", "mcd1", "mcd2", "mcd3"))  # the random split too: by its task


@pytest.mark.slow
def test_the_shipped_suite_builds_verifies_and_keeps_cfqs_bound(tmp_path: Path) -> None:
    out = tmp_path / "cfq-like-release"
    assert main(["release", str(SUITE), "--out", str(out), "--workers", "2"]) == 0
    assert main(["verify", str(out)]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    reports = {config["name"]: config["report"] for config in manifest["configs"]}
    for name in ("cfq_like-mcd1", "cfq_like-mcd2", "cfq_like-mcd3"):
        assert reports[name]["atom_divergence"] <= ATOM_BOUND and reports[name]["unseen_atom_count"] == 0
        assert reports[name]["compound_divergence"] > reports["cfq_like-random"]["compound_divergence"] + 0.3
        assert reports[name]["sizes"] == {"train": 8000, "validation": 1000, "test": 1000}


def test_a_distinct_random_split_holds_each_question_once_and_the_default_keeps_repeats() -> None:
    """iid's ``distinct``: one record per input before splitting (as the MCD search), so train,
    validation and test hold distinct inputs; left out, the split is as before (repeats in train)."""
    from gengap.splits.api import split

    task = get_task("cfq_like")
    pool = generate_records("cfq_like", task.default_params(), 2000, 1)
    plain, default, distinct = (split(pool, "iid", options, seed=2) for options in
                                ({"test_fraction": 0.1}, {"test_fraction": 0.1, "distinct": False}, {"test_fraction": 0.1, "distinct": True}))
    assert [r["id"] for r in plain.train] == [r["id"] for r in default.train] and "distinct" not in default.report["options"]
    assert len({r["input"] for r in plain.train}) < len(plain.train)  # the pool repeats short questions
    seen = [r["input"] for part in (distinct.train, distinct.validation, distinct.test) for r in part]
    assert len(seen) == len(set(seen)) == len({r["input"] for r in pool}) and distinct.report["options"]["distinct"] is True
