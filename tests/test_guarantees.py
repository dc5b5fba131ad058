"""Guarantees checked directly, with figures computed by hand (not by the code under test).

Issue 17 lists mutations that used to survive the suite; the docstring of each test here
names the one it kills.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gengap.generators import BlockPlan, get_task, task_names
from gengap.checking import record_problem
from gengap.splits import split
from gengap.splits.base import Partition, carve_validation, finish
from gengap.splits.divergence import atom_divergence, compound_divergence

from tests.conftest import corruptions


def toy(index: int, text: str, **features: int) -> dict[str, Any]:
    """A record of a task gengap does not know: atoms are its tokens, compounds adjacent pairs."""
    difficulty = {"input_length": len(text.split()), "output_length": 1, **features}
    return {"id": f"toy-{index:016x}", "task": "toy", "input": text, "target": "x", "difficulty": difficulty}


# -- a split report, figure by figure ------------------------------------------------------

POOL = [
    toy(1, "a b", f=1),
    toy(2, "a c", f=1),
    toy(3, "a c", f=2),  # the same input again: a duplicate on the train side
    toy(4, "b", f=1),
    toy(5, "e", f=3),  # between the sides: unused
    toy(6, "a b c", f=5),
    toy(7, "c c a", f=5),
    toy(8, "a b", f=6),  # on the test side, but its input is on the train side: removed
    toy(9, "d a", f=7),  # d never occurs in train
]


@pytest.mark.smoke
def test_split_report_matches_hand_computed_figures() -> None:
    """Kills: removing the test-vs-train overlap removal (removed_overlap, sizes, test inputs)."""
    result = split(POOL, "difficulty", {"feature": "f", "train_max": 2, "test_min": 5, "validation_fraction": 0}, seed=0)
    report = result.report
    assert [r["input"] for r in result.train] == ["a b", "a c", "a c", "b"]
    assert [r["input"] for r in result.test] == ["a b c", "c c a", "d a"]
    assert report["sizes"] == {"train": 4, "validation": 0, "test": 3}
    assert (report["removed_overlap"], report["overlap"], report["unused"]) == (1, 0, 1)
    assert report["warnings"] == ["1 test examples were removed because their input also occurs on the train side"]
    # atoms: train a:3 b:2 c:2 (of 7), test a:3 b:1 c:3 d:1 (of 8)
    # D_A = 1 - (sqrt(3/7 * 3/8) + sqrt(2/7 * 1/8) + sqrt(2/7 * 3/8)) = 1 - 0.917201 = 0.082799
    assert report["atom_divergence"] == 0.082799
    # compounds: train "a b":1 "a c":2 (of 3); test "a b" "b c" "c c" "c a" "d a" (1 each, of 5)
    # D_C = 1 - (1/3)^0.1 * (1/5)^0.9 = 1 - 0.895958 * 0.234924 = 0.789518
    assert report["compound_divergence"] == 0.789518
    assert (report["unseen_atoms"], report["unseen_atom_count"], report["atoms_source"]) == (["d"], 1, "tokens")
    train, test = report["parts"]["train"], report["parts"]["test"]
    assert train["ranges"] == {"input_length": [1, 2], "output_length": [1, 1], "f": [1, 2]}
    assert test["ranges"] == {"input_length": [2, 3], "output_length": [1, 1], "f": [5, 7]}
    assert (train["duplicate_inputs"], test["duplicate_inputs"]) == (1, 0)
    assert train["tasks"] == {"toy": 4}
    # novelty against train compounds {a b, a c} and atoms {a, b, c}:
    # "a b c" -> b c (1, atoms 0); "c c a" -> c c, c a (2, 0); "d a" -> d a (1, d: 1)
    assert [r["novelty"] for r in result.test] == [
        {"unseen_compounds": 1, "unseen_atoms": 0},
        {"unseen_compounds": 2, "unseen_atoms": 0},
        {"unseen_compounds": 1, "unseen_atoms": 1},
    ]
    assert report["novelty"]["test"] == {
        "records": 3,
        "unseen_compounds_histogram": {"0": 0, "1": 2, "2": 1, "3+": 0},
        "with_unseen_compound": 1.0,
        "with_unseen_atom": 0.333333,
        "mean_unseen_compounds": 1.333333,
    }
    assert report["novelty"]["validation"] is None


def test_divergences_by_hand() -> None:
    """The divergence functions on their own, against the same hand computation."""
    assert round(atom_divergence({"a": 3, "b": 2, "c": 2}, {"a": 3, "b": 1, "c": 3, "d": 1}), 6) == 0.082799
    assert round(compound_divergence({"a b": 1, "a c": 2}, {"a b": 1, "b c": 1, "c c": 1, "c a": 1, "d a": 1}), 6) == 0.789518
    assert atom_divergence({"a": 1}, {"a": 5}) == 0.0 and compound_divergence({"a": 1}, {"b": 1}) == 1.0


def test_overlap_removal_covers_train_and_pinned_records() -> None:
    """Kills: removing the test-vs-train overlap removal (finish called directly, no strategy)."""
    train = [toy(1, "a a"), toy(2, "b b")]
    pinned = [toy(3, "p p")] * 2
    test = [toy(4, "a a"), toy(5, "c a"), toy(6, "p p"), toy(7, "c d"), toy(8, "b b")]
    result = finish("t", {}, 0, Partition(train, test, pinned=pinned), 0.0, np.random.default_rng(0))
    assert [r["input"] for r in result.test] == ["c a", "c d"]
    assert [r["input"] for r in result.train] == ["a a", "b b", "p p", "p p"]
    assert result.report["removed_overlap"] == 3 and result.report["overlap"] == 0
    assert result.report["sizes"] == {"train": 4, "validation": 0, "test": 2}


# -- validation carving ----------------------------------------------------------------------


def test_validation_takes_inputs_that_occur_once() -> None:
    """Kills: carving an input that train also holds, or one that repeats in validation."""
    side = [toy(i * 3 + k, f"w{i}") for i in range(10) for k in range(3)]  # 10 inputs with 3 records
    side += [toy(100 + i, f"s{i}") for i in range(10)]  # 10 inputs with 1 record
    for seed in range(5):
        train, drawn = carve_validation(side, 0.25, np.random.default_rng(seed))
        validation = drawn.records
        assert (len(train), len(validation)) == (30, 10)  # 0.25 * 40 = 10: the ten inputs that occur once
        assert {r["input"] for r in validation} == {f"s{i}" for i in range(10)}
        assert sorted(r["id"] for r in train + validation) == sorted(r["id"] for r in side)
        assert [r["id"] for r in train] == sorted((r["id"] for r in train), key=[s["id"] for s in side].index)


# -- MCD never leaves a test atom unseen in train ----------------------------------------------


def _rare_atom_pool() -> list[dict[str, Any]]:
    """300 strings over six common tokens, and eight rare tokens in two records each: moving
    both holders of a rare token to test would raise compound divergence, so only the rule
    keeps one of them in train."""
    rng = random.Random(0)
    common = "a b c d e f".split()
    texts = [" ".join(rng.choice(common) for _ in range(rng.randint(2, 5))) for _ in range(300)]
    for rare in "p q r s t u v w".split():
        texts += [" ".join([rng.choice(common), rare, rng.choice(common)]) for _ in range(2)]
    return [toy(i, text) for i, text in enumerate(dict.fromkeys(texts))]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mcd_keeps_every_test_atom_in_train(seed: int) -> None:
    """Kills: dropping MCD's "no unseen test atom" rule (the rejected move and the objective term)."""
    pool = _rare_atom_pool()
    options = {"train_size": 150, "test_size": 60, "steps": 20000, "validation_fraction": 0, "atom_divergence_max": 0.05}
    result = split(pool, "mcd", options, seed=seed)
    train_tokens = {token for r in result.train for token in r["input"].split()}
    test_tokens = {token for r in result.test for token in r["input"].split()}
    assert test_tokens <= train_tokens
    assert result.report["unseen_atom_count"] == 0
    assert not any("never occur in train" in w for w in result.report["warnings"])
    assert all(r["novelty"]["unseen_atoms"] == 0 for r in result.test)
    assert (len(result.train), len(result.test)) == (150, 60)
    assert result.report["compound_divergence"] > 0.55  # the search did work against the rule


# -- every task at every level -------------------------------------------------------------------


@pytest.mark.parametrize("name", task_names())
def test_every_level_generates_records_that_pass_every_check(name: str) -> None:
    """Kills: flipping parity targets above 60 tokens (levels 6..10 are longer than that), and any
    generator bug that only shows at high levels. Each level: 30 records, all checks of
    `gengap check` (schema, id, lengths, meta, checker, derivation, difficulty features), and a
    corrupted target rejected."""
    task = get_task(name)
    longest = 0
    by_length = "min_length" in task.default_params().to_dict()
    for level in range(1, 11):
        records = [r for b in BlockPlan(name, task.level(level), 30, level).batches() for r in b.records(name)]
        assert len(records) == 30
        for record in records:
            assert record_problem(record) is None, (level, record["input"][:80])
            for wrong in corruptions(record["target"]):
                assert not task.check(record, wrong), (level, record["input"][:80], wrong)
        longest = max(longest, max(r["difficulty"]["input_length"] for r in records))
    if by_length:  # the sequence tasks reach past the training range of Deletang et al.
        assert longest > 60


# Oracles written here, from the input tokens alone: a generator and its solver that agree on
# a wrong answer (both flipped above 60 tokens) pass every check that compares the two.
ORACLES = {
    "parity_check": lambda tokens: str(tokens.count("1") % 2),
    "even_pairs": lambda tokens: "1" if tokens[0] != tokens[-1] else "0",
    "reverse_string": lambda tokens: " ".join(reversed(tokens)),
    "duplicate_string": lambda tokens: " ".join(tokens + tokens),
    "bucket_sort": lambda tokens: " ".join(sorted(tokens, key=int)),
    "addition": lambda tokens: " ".join(str(
        int("".join(tokens[: tokens.index("+")])) + int("".join(tokens[tokens.index("+") + 1 :]))
    )),
}


@pytest.mark.parametrize("name", sorted(ORACLES))
@settings(max_examples=4)
@given(level=st.integers(6, 10), seed=st.integers(0, 2**32 - 1))
def test_long_inputs_get_the_oracles_answer(name: str, level: int, seed: int) -> None:
    """Kills: flipping parity targets above 60 tokens, in the generator alone or in the
    generator and its solver together (levels 6..10: every input is longer than 60 tokens)."""
    task = get_task(name)
    records = [r for b in BlockPlan(name, task.level(level), 20, seed).batches() for r in b.records(name)]
    for record in records:
        tokens = record["input"].split()
        if "min_length" in task.default_params().to_dict():
            assert len(tokens) > 60
        assert record["target"] == ORACLES[name](tokens), record["input"][:80]
