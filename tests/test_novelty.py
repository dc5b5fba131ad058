"""Per-example novelty: counts on hand-built splits, brute-force agreement, CLI and releases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gengap.generators import get_task
from gengap.cli import main
from gengap.release import build_entry
from gengap.schema import python_validator
from gengap.suite import parse_suite
from gengap.splits import generate_records, split
from gengap.splits.novelty import annotate, bucket, novelty_summary


def toy(text: str) -> dict:
    """A record of an unregistered task: atoms are its tokens, compounds adjacent token pairs."""
    return {"id": "toy-0000000000000000", "task": "toy", "input": text, "target": "x", "difficulty": {"input_length": len(text.split()), "output_length": 1}}


def pairs(text: str) -> set[str]:
    tokens = text.split()
    return {f"{a} {b}" for a, b in zip(tokens, tokens[1:])}


def toy_pool(n: int, seed: int) -> list[dict]:
    """Strings of 2..9 letters over a 12-letter alphabet (an unregistered task: token atoms and pairs)."""
    import random

    rng = random.Random(seed)
    letters = "abcdefghijkl"
    return [toy(" ".join(rng.choice(letters) for _ in range(rng.randint(2, 9)))) for _ in range(n)]


def brute_novelty(record: dict, train: list[dict]) -> dict[str, int]:
    """Independent count: distinct token pairs / tokens of record absent from every train input."""
    seen_pairs = set().union(*(pairs(r["input"]) for r in train))
    seen_tokens = {t for r in train for t in r["input"].split()}
    return {
        "unseen_compounds": len(pairs(record["input"]) - seen_pairs),
        "unseen_atoms": len(set(record["input"].split()) - seen_tokens),
    }


def test_hand_built_split_has_exactly_k_unseen_compounds() -> None:
    train = [toy("a b c"), toy("c d")]
    test = [
        toy("a b c d"),  # a b, b c, c d: all seen -> 0
        toy("b c a"),  # b c seen, c a new -> 1
        toy("d c b a"),  # d c, c b, b a: all new -> 3, no new atom
        toy("a b e a b"),  # a b seen (twice), b e, e a new -> 2 distinct; atom e new
        toy("e f g h i"),  # 4 new pairs, 5 new atoms
    ]
    parts = annotate({"train": train, "validation": [toy("c d c")], "test": test})
    counts = [r["novelty"] for r in parts["test"]]
    assert counts == [
        {"unseen_compounds": 0, "unseen_atoms": 0},
        {"unseen_compounds": 1, "unseen_atoms": 0},
        {"unseen_compounds": 3, "unseen_atoms": 0},
        {"unseen_compounds": 2, "unseen_atoms": 1},
        {"unseen_compounds": 4, "unseen_atoms": 5},
    ]
    assert parts["validation"][0]["novelty"] == {"unseen_compounds": 1, "unseen_atoms": 0}  # d c
    assert all("novelty" not in r for r in parts["train"])
    assert all("novelty" not in r for r in test)  # inputs are not modified
    summary = novelty_summary(parts["test"])
    assert summary["unseen_compounds_histogram"] == {"0": 1, "1": 1, "2": 1, "3+": 2}
    assert summary["with_unseen_compound"] == pytest.approx(0.8)
    assert summary["with_unseen_atom"] == pytest.approx(0.4)
    assert summary["mean_unseen_compounds"] == pytest.approx(2.0)
    assert [bucket(k) for k in (0, 1, 2, 3, 17)] == ["0", "1", "2", "3+", "3+"]
    assert novelty_summary(parts["train"]) is None


def test_stale_novelty_is_dropped_and_recomputed() -> None:
    stale = {**toy("a b"), "novelty": {"unseen_compounds": 9, "unseen_atoms": 9}}
    parts = annotate({"train": [stale], "test": [{**toy("a b"), "novelty": {"unseen_compounds": 5, "unseen_atoms": 5}}]})
    assert "novelty" not in parts["train"][0]
    assert parts["test"][0]["novelty"] == {"unseen_compounds": 0, "unseen_atoms": 0}


@pytest.mark.parametrize(
    "strategy, options",
    [
        ("iid", {"test_fraction": 0.3}),
        ("length", {"by": "input_length", "train_max": 6}),
        ("mcd", {"train_size": 300, "test_size": 60, "steps": 3000}),
    ],
)
def test_every_split_annotates_validation_and_test_against_train(strategy: str, options: dict) -> None:
    result = split(toy_pool(600, 3), strategy, options, seed=2)
    assert result.train and result.validation and result.test
    assert all("novelty" not in r for r in result.train)
    for part in (result.validation, result.test):
        for record in part:
            assert record["novelty"] == brute_novelty(record, result.train)
    validator = python_validator("example")
    assert not [error for r in result.test[:50] for error in validator.iter_errors(r)]
    summary = result.report["novelty"]["test"]
    assert sum(summary["unseen_compounds_histogram"].values()) == len(result.test)
    assert summary["with_unseen_compound"] == pytest.approx(
        sum(r["novelty"]["unseen_compounds"] > 0 for r in result.test) / len(result.test), abs=1e-6
    )


def test_length_split_test_records_are_novel_where_train_never_reached() -> None:
    """Tokens beyond the train lengths are the only novelty of a sequence task's length split."""
    pool = generate_records("cycle_navigation", get_task("cycle_navigation").with_size(1, 12), 2000, 4)
    result = split(pool, "length", {"by": "input_length", "train_max": 8}, seed=0)
    assert result.report["novelty"]["test"]["with_unseen_compound"] == 0.0  # every token pair occurs in train


def test_split_cli_writes_novelty(tmp_path: Path) -> None:
    pool = toy_pool(400, 5)
    source = tmp_path / "pool.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in pool))
    out = tmp_path / "split"
    assert main(["split", str(source), "--strategy", "iid", "--seed", "1", "--out", str(out)]) == 0
    read = lambda name: [json.loads(line) for line in (out / f"{name}.jsonl").read_text().splitlines()]  # noqa: E731
    train, test = read("train"), read("test")
    assert all("novelty" not in r for r in train)
    assert [r["novelty"] for r in test] == [brute_novelty(r, train) for r in test]
    report = json.loads((out / "report.json").read_text())
    assert report["novelty"]["test"]["records"] == len(test)


def test_capped_release_parts_count_against_the_capped_train() -> None:
    suite = parse_suite(
        """
name: t
version: 0.1.0
seed: 3
license: cc-by-4.0
entries:
  - {task: bucket_sort, split: iid, params: {min_length: 2, max_length: 3}, pool: {n: 800}, options: {test_fraction: 0.3}, sizes: {train: 8, validation: 20, test: 40}}
"""
    )
    result = build_entry(suite["entries"][0], suite["seed"])
    assert len(result.train) == 8
    assert all("novelty" not in r for r in result.train)
    novel = [r["novelty"] for r in result.test]
    assert novel == [brute_novelty(r, result.train) for r in result.test]
    assert any(n["unseen_compounds"] > 0 for n in novel)  # 8 short train inputs cannot show all 25 pairs


def test_release_records_card_and_schema_carry_novelty(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        """
name: t
version: 0.1.0
seed: 3
license: cc-by-4.0
entries:
  - {task: scan, split: mcd, params: {max_actions: 8}, pool: all, options: {train_size: 120, test_size: 40, steps: 3000}}
"""
    )
    out = tmp_path / "release"
    assert main(["release", str(suite), "--out", str(out), "--workers", "1"]) == 0
    folder = out / "data" / "scan-mcd"
    read = lambda name: [json.loads(line) for line in (folder / f"{name}.jsonl").read_text().splitlines()]  # noqa: E731
    train, test = read("train"), read("test")
    assert all("novelty" not in r for r in train) and all("novelty" in r for r in test)
    validator = python_validator("example")
    assert not [e for r in test for e in validator.iter_errors(r)]
    manifest = json.loads((out / "manifest.json").read_text())
    summary = manifest["configs"][0]["report"]["novelty"]["test"]
    share = sum(r["novelty"]["unseen_compounds"] > 0 for r in test) / len(test)
    assert summary["with_unseen_compound"] == pytest.approx(share, abs=1e-6)
    card = (out / "README.md").read_text()
    assert f"test records with a compound unseen in train: {100 * share:.1f} %" in card
    assert "name: novelty" in card  # declared as a struct feature for `datasets`
    assert main(["verify", str(out)]) == 0
