"""Structurally diverse training sets: the greedy cover, train budgets of pool splits, sampled splits."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gengap.cli import main
from gengap.generators import get_task
from gengap.generators.seeding import train_sample_rng
from gengap.splits import SplitError, generate_records, sample_length_split, sample_level_split, split
from gengap.splits.atoms import CompoundDefinition, record_compounds
from gengap.splits.diverse import TrainSelection, covered_count, greedy_cover, random_choice
from gengap.splits.validation import task_input
from gengap.suite import SuiteError, parse_suite

item_lists = st.lists(st.frozensets(st.integers(0, 30).map(str), max_size=8), min_size=1, max_size=40)


def naive_greedy(items: list[frozenset[str]], k: int, rank: list[int]) -> list[int]:
    """The greedy cover written plainly: every step recounts every candidate's gain, ties to the lower rank."""
    covered: set[str] = set()
    left = list(range(len(items)))
    chosen = []
    while left and len(chosen) < k:
        best = max(left, key=lambda i: (len(items[i] - covered), -rank[i]))
        chosen.append(best)
        covered |= items[best]
        left.remove(best)
    return chosen


@settings(max_examples=80, deadline=None)
@given(item_lists, st.integers(0, 45), st.integers(0, 2**32 - 1))
def test_greedy_cover_is_the_greedy_algorithm_with_seeded_ties(items: list[frozenset[str]], k: int, seed: int) -> None:
    rank = np.random.default_rng(seed).permutation(len(items)).tolist()
    assert greedy_cover(items, k, np.random.default_rng(seed)) == naive_greedy(items, k, rank)


@settings(max_examples=80, deadline=None)
@given(item_lists, st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_greedy_cover_keeps_its_guarantee_over_any_draw(items: list[frozenset[str]], k: int, seed: int) -> None:
    """Greedy max coverage covers at least 1 - 1/e of the best k-set, hence of any random k-set."""
    chosen = greedy_cover(items, k, np.random.default_rng(seed))
    assert len(chosen) == min(k, len(items)) == len(set(chosen))
    for draw in range(5):
        drawn = random_choice(len(items), k, np.random.default_rng([seed, draw]))
        assert covered_count(items, chosen) >= (1 - 1 / math.e) * covered_count(items, drawn)
    assert covered_count(items, chosen[:1]) == max(len(found) for found in items)  # the first pick is a largest record


def _pool(task: str, n: int, seed: int) -> list[dict]:
    return generate_records(task, get_task(task).default_params(), n, seed)


@settings(max_examples=10, deadline=None)
@given(st.sampled_from(["scan", "cogs_like", "pcfg_set", "cfq_like"]), st.sampled_from(["derivation", "local"]),
       st.integers(0, 2**16), st.integers(20, 150))
def test_diverse_train_sets_cover_at_least_as_many_structures_as_random_draws(task: str, kind: str, seed: int, budget: int) -> None:
    pool = _pool(task, 400, seed)
    definition = CompoundDefinition(kind, 3)
    items = [set(record_compounds(r, False, definition)) for r in pool]
    where = {id(r): i for i, r in enumerate(pool)}  # records are compared by identity: a pool may repeat one
    diverse, info = TrainSelection("diverse", budget, False, definition).choose(pool, train_sample_rng(seed))
    chosen = [where[id(r)] for r in diverse]
    assert len(set(chosen)) == budget and info["compounds_covered"] == covered_count(items, chosen)
    for draw in range(8):
        random, _ = TrainSelection("random", budget, False, definition).choose(pool, np.random.default_rng([seed, draw]))
        assert info["compounds_covered"] >= covered_count(items, [where[id(r)] for r in random])
    again, _ = TrainSelection("diverse", budget, False, definition).choose(pool, train_sample_rng(seed))
    assert [where[id(r)] for r in again] == chosen == sorted(chosen)  # deterministic, in pool order


def test_a_train_budget_chooses_the_train_part_after_validation_is_carved() -> None:
    pool = _pool("cogs_like", 800, 3)
    whole = split(pool, "iid", {}, seed=1)
    options = {"train_budget": 200, "train_sampler": "diverse", "compounds": "local"}
    diverse = split(pool, "iid", options, seed=1)
    random = split(pool, "iid", {**options, "train_sampler": "random"}, seed=1)
    for result in (diverse, random):
        order = {r["id"]: i for i, r in enumerate(whole.train)}
        assert len(result.train) == 200 and {r["id"] for r in result.train} <= set(order)
        assert [order[r["id"]] for r in result.train] == sorted(order[r["id"]] for r in result.train)  # the pool's order
        ids = lambda records: [r["id"] for r in records]  # noqa: E731  (novelty differs: it is relative to the train part)
        assert ids(result.validation) == ids(whole.validation) and ids(result.test) == ids(whole.test)
        assert result.report["unused"] == len(whole.train) - 200
        assert not {task_input(r) for r in result.test} & {task_input(r) for r in result.train + result.validation}
    sample = diverse.report["train_sample"]
    assert sample["candidates"] == len(whole.train) and sample["chosen"] == 200 and sample["sampler"] == "diverse"
    assert sample["compounds_covered"] >= random.report["train_sample"]["compounds_covered"]
    assert split(pool, "iid", options, seed=1).parts() == diverse.parts()
    assert "train_sample" not in whole.report and "train_budget" not in whole.report["options"]  # the default: as before


def test_train_budget_refusals() -> None:
    pool = _pool("scan", 200, 1)
    with pytest.raises(SplitError, match="train_sampler=diverse chooses train_budget records: set train_budget"):
        split(pool, "iid", {"train_sampler": "diverse"})
    with pytest.raises(SplitError, match=r"its search chooses the train side itself \(train_size\)"):
        split(pool, "mcd", {"train_budget": 10, "steps": 10})
    whole = split(pool, "iid", {"train_budget": 10_000}, seed=0)  # more than the train side: all of it, and a warning
    side = len(split(pool, "iid", {}, seed=0).train)
    assert len(whole.train) == side and whole.report["train_sample"]["chosen"] == side
    assert f"train_budget 10000 is more than the {side} train-side records left once validation was carved: train holds them all" \
        in whole.report["warnings"]


def test_a_sampled_split_with_the_diverse_sampler() -> None:
    sizes = {"train": 300, "validation": 60, "test": 100}
    plain = sample_length_split("scan", (1, 4), (5, 9), sizes, seed=2)
    diverse = sample_length_split("scan", (1, 4), (5, 9), sizes, seed=2, sampling={"train_sampler": "diverse", "compounds": "local"})
    assert "train_sample" not in plain.report and "train_sampler" not in plain.report["options"]
    assert sample_length_split("scan", (1, 4), (5, 9), sizes, seed=2, sampling={}).parts() == plain.parts()  # defaults: the same split
    sample = diverse.report["train_sample"]
    assert len(diverse.train) == 300 and sample["candidates"] == 1200 and sample["candidates_per_record"] == 4
    assert diverse.report["options"]["train_sampler"] == "diverse" and diverse.report["compounds"].startswith("local structures")
    local = CompoundDefinition("local", 3)
    covered = lambda records: len(set().union(*(record_compounds(r, False, local) for r in records)))  # noqa: E731
    assert sample["compounds_covered"] == covered(diverse.train) >= covered(plain.train)
    assert not {task_input(r) for r in diverse.validation} & {task_input(r) for r in diverse.train}
    assert [r["id"] for r in diverse.test] == [r["id"] for r in plain.test] and len(diverse.validation) == 60
    assert sample_length_split("scan", (1, 4), (5, 9), sizes, seed=2, sampling={"train_sampler": "diverse", "compounds": "local"}).parts() == diverse.parts()
    level = sample_level_split("pcfg_set", 3, {"train": 100, "validation": 10, "test": 20}, seed=1, sampling={"train_sampler": "diverse"})
    assert level.report["train_sample"]["chosen"] == 100
    with pytest.raises(SplitError, match="sampler_candidates=8 is for train_sampler=diverse"):
        sample_length_split("scan", (1, 4), (5, 9), sizes, sampling={"sampler_candidates": 8})
    with pytest.raises(SplitError, match="sampled split: unknown option 'train_budget'"):
        sample_length_split("scan", (1, 4), (5, 9), sizes, sampling={"train_budget": 8})


def test_suite_entries_take_the_sampler(tmp_path: Path) -> None:
    head = "name: d\nversion: 0.1.0\nseed: 3\nlicense: cc-by-4.0\nentries:\n"
    suite = tmp_path / "suite.yaml"
    suite.write_text(head + "  - {task: scan, split: length, train_range: [1, 4], test_range: [5, 9], sizes: {train: 200, test: 80},"
                     " options: {train_sampler: diverse}}\n"
                     "  - {task: scan, split: iid, strategy: iid, pool: {n: 600}, options: {train_budget: 150, train_sampler: diverse}}\n")
    release = tmp_path / "release"
    assert main(["release", str(suite), "--out", str(release), "--workers", "1"]) == 0
    assert main(["verify", str(release), "--regenerate", "--workers", "1"]) == 0
    manifest = json.loads((release / "manifest.json").read_text())
    samples = {c["name"]: c["report"]["train_sample"] for c in manifest["configs"]}
    assert samples["scan-length"]["chosen"] == 200 and samples["scan-iid"]["chosen"] == 150
    with pytest.raises(SuiteError, match=r"line 6: entries\[0\].options: sampled split: unknown option 'steps'"):
        parse_suite(head + "  - {task: scan, split: length, train_range: [1, 4], test_range: [5, 9], sizes: {train: 9, test: 9}, options: {steps: 3}}\n")


def test_strategies_that_choose_their_train_side_do_not_offer_a_train_budget() -> None:
    from gengap.splits import get_strategy

    offered = {name: {row["name"] for row in get_strategy(name).option_rows()} for name in ("iid", "holdout", "mcd")}
    assert {"train_budget", "train_sampler"} <= offered["iid"] and {"train_budget", "train_sampler"} <= offered["holdout"]
    assert not {"train_budget", "train_sampler"} & offered["mcd"]
    listing = subprocess.run([sys.executable, "-m", "gengap", "list"], capture_output=True, text=True, check=True).stdout
    mcd = listing[listing.index("\nmcd  ") + 1:].split("\n")[1:]
    block = mcd[: next(i for i, line in enumerate(mcd) if line and not line.startswith(" "))]
    assert block and not any("train_budget" in line for line in block)
