"""The shipped Deletang et al. (2023) suite: the fifteen tasks, lengths 1..40 vs 41..500."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from gengap.generators import get_task
from gengap.release import build_entry
from gengap.suite import load_suite

SUITE = Path(__file__).resolve().parents[1] / "gengap" / "suites" / "deletang.yaml"
FIFTEEN = {
    "regular": {"even_pairs", "modular_arithmetic", "parity_check", "cycle_navigation"},
    "context_free": {"stack_manipulation", "reverse_string", "modular_arithmetic_brackets", "solve_equation"},
    "context_sensitive": {"duplicate_string", "missing_duplicate_string", "odds_first", "binary_addition",
                          "binary_multiplication", "compute_sqrt", "bucket_sort"},
}


def test_the_suite_holds_the_fifteen_tasks_with_the_papers_lengths() -> None:
    suite = load_suite(SUITE)
    entries = suite["entries"]
    assert {entry["task"] for entry in entries} == set().union(*FIFTEEN.values()) and len(entries) == 15
    for entry in entries:
        assert entry["name"] == f"{entry['task']}-deletang"
        assert (entry["train_range"], entry["test_range"]) == ([1, 40], [41, 500])
        assert entry["sizes"] == {"train": 10000, "validation": 1000, "test": 2000}


def test_a_small_build_spreads_test_lengths_over_41_to_500_and_every_record_checks() -> None:
    suite = load_suite(SUITE)
    for entry in suite["entries"]:
        if entry["task"] not in ("parity_check", "duplicate_string", "binary_multiplication"):
            continue
        small = {**entry, "sizes": {"train": 200, "validation": 20, "test": 400}}
        result = build_entry(small, suite["seed"])
        task = get_task(entry["task"])
        lengths = Counter(len(r["input"].split()) for r in result.test)
        assert min(lengths) >= 41 and max(lengths) <= 500
        assert sum(1 for n in lengths if n <= 270) > 100 and sum(1 for n in lengths if n > 270) > 100  # both halves of the range
        assert all(1 <= len(r["input"].split()) <= 40 for r in result.train + result.validation)
        assert all(task.check(r, r["target"]) for r in result.test[:50] + result.train[:50])
