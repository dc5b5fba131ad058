"""Validation is the train distribution: distinct inputs never seen in train, over input lengths
in the train part's proportions (gengap.splits.validation), for every sampled strategy and for
pool splits; what cannot be met is reported."""

from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

import numpy as np
import pytest
from hypothesis import given, strategies as st

from gengap.generators import get_task
from gengap.splits import sample_length_split, sample_level_split, split
from gengap.splits.api import generate_records, sample_split
from gengap.splits.base import SMALL_VALIDATION
from gengap.splits.validation import apportion, carve_validation, draw_validation, input_length


def toy(index: int, text: str, task: str = "toy") -> dict[str, Any]:
    return {"id": f"{task}-{index:016x}", "task": task, "input": text, "target": "x",
            "difficulty": {"input_length": len(text.split()), "output_length": 1}}


def lengths(records: Sequence[dict[str, Any]]) -> Counter[int]:
    return Counter(input_length(r) for r in records)


def check_contract(result: Any, share: float = 0.05) -> None:
    """Distinct validation inputs unseen in train; test unseen in both; no input over `share` of validation;
    the report's histograms are the parts' own."""
    train = {(r["task"], r["input"]) for r in result.train}
    validation = [(r["task"], r["input"]) for r in result.validation]
    assert len(set(validation)) == len(validation)
    assert not train & set(validation)
    assert not (train | set(validation)) & {(r["task"], r["input"]) for r in result.test}
    if validation:
        assert max(Counter(validation).values()) / len(validation) <= share
    for part in ("train", "validation", "test"):
        histogram = result.report["parts"][part]["input_lengths"]
        assert histogram == {str(k): v for k, v in sorted(lengths(result.parts()[part]).items())}


# -- apportionment -----------------------------------------------------------------------------


@given(st.integers(0, 500), st.lists(st.tuples(st.integers(0, 50), st.integers(0, 80)), min_size=1, max_size=12))
def test_apportion_is_proportional_within_caps(total: int, pairs: list[tuple[int, int]]) -> None:
    weights, caps = [w for w, _ in pairs], [c for _, c in pairs]
    shares = apportion(total, weights, caps)
    reachable = sum(c for w, c in pairs if w > 0)
    assert sum(shares) == min(total, reachable)
    assert all(0 <= s <= c for s, c in zip(shares, caps))
    assert all(s == 0 for s, w in zip(shares, weights) if w == 0)
    free = apportion(total, weights)
    if sum(weights):
        assert sum(free) == total
        assert all(abs(s - total * w / sum(weights)) < 1 for s, w in zip(free, weights))
        # a capped share never takes less than it could: an entry below its proportional share is at its cap
        assert all(s >= min(f, c) for s, f, c in zip(shares, free, caps))


def test_apportion_by_hand() -> None:
    assert apportion(10, [1, 1, 2]) == [3, 2, 5]  # 2.5, 2.5, 5: the earlier remainder wins the tie
    assert apportion(10, [1, 1, 2], [1, 9, 9]) == [1, 3, 6]  # the capped first share's 1.5 goes 1:2 to the others
    assert apportion(10, [1, 1], [2, 3]) == [2, 3]
    assert apportion(5, [0, 3], [9, 9]) == [0, 5]


# -- pool splits: carved from the records that occur once ----------------------------------------


def test_carve_keeps_the_train_proportions_by_hand() -> None:
    """Lengths 1 and 2 hold 20 records each, length 1 only two distinct inputs: its share moves to length 2."""
    side = [toy(i, "a" if i % 2 else "b") for i in range(20)] + [toy(20 + i, f"c{i} d") for i in range(20)]
    train, drawn = carve_validation(side, 0.2, np.random.default_rng(0))
    assert len(drawn.records) == 8 and lengths(drawn.records) == {2: 8}
    assert drawn.info["short"] == {"1": 4}
    assert drawn.warnings == ["validation: input length 1 could not give its share (4 records: too few of its inputs "
                              "occur only once on the train side); the other lengths gave them, in proportion"]
    assert sorted(r["id"] for r in train + drawn.records) == sorted(r["id"] for r in side)


@given(st.lists(st.integers(0, 30), min_size=1, max_size=300), st.floats(0.05, 0.5), st.integers(0, 2**32 - 1))
def test_carve_contract(codes: list[int], fraction: float, seed: int) -> None:
    side = [toy(i, " ".join(["t"] * (1 + code % 4)) + f" w{code}") for i, code in enumerate(codes)]
    train, drawn = carve_validation(side, fraction, np.random.default_rng(seed))
    counts = Counter(r["input"] for r in side)
    assert all(counts[r["input"]] == 1 for r in drawn.records)  # only inputs that occur once move
    assert sorted(r["id"] for r in train + drawn.records) == sorted(r["id"] for r in side)
    singles = sum(1 for c in counts.values() if c == 1)
    assert len(drawn.records) == min(int(round(fraction * len(side))), singles)
    again = carve_validation(side, fraction, np.random.default_rng(seed))
    assert again[1].records == drawn.records and again[0] == train


def test_pool_splits_with_repeated_inputs_give_distinct_unseen_validation() -> None:
    pool = generate_records("parity_check", get_task("parity_check").with_size(1, 12), 3000, 5)
    assert max(Counter(r["input"] for r in pool).values()) > 50  # short inputs repeat many times
    for strategy, options in (("iid", {"test_fraction": 0.2}), ("length", {"train_max": 8}), ("difficulty", {"train_max": 8})):
        result = split(pool, strategy, options, seed=1)
        check_contract(result, share=1 / 50)
        assert result.report["validation"]["method"] == "carved"


def test_mcd_keeps_its_atom_bound_after_validation_is_carved() -> None:
    """README recipe (b): the search bounds train + validation; the train part left must keep the bound too."""
    pool = [toy(i, f"{a} {b} and {c}") for i, (a, b, c) in enumerate(
        (a, b, c) for a in "jump walk run look swim crawl".split() for b in "left right twice thrice x y".split()
        for c in "jump walk run look swim crawl".split())]
    result = split(pool, "mcd", {"train_size": 150, "test_size": 40, "steps": 20000, "validation_fraction": 0.2}, seed=3)
    assert result.report["atom_divergence"] <= result.report["options"]["atom_divergence_max"]
    assert 1 <= result.report["validation"]["atom_bound_tries"] <= 32
    check_contract(result, share=1 / 20)


# -- sampled splits: drawn from the train settings ------------------------------------------------


def test_sampled_length_split_validation_is_the_train_distribution() -> None:
    """The protocol's prefix_sums 1..20 config: 154 of 500 validation records were once the input "1"."""
    result = sample_length_split("prefix_sums", (1, 20), (21, 40), {"train": 5000, "validation": 500, "test": 500}, seed=3)
    check_contract(result, share=1 / 500)
    assert len(result.validation) == 500
    histogram = lengths(result.validation)
    short = {int(k) for k in result.report["validation"]["short"]}
    assert short and max(short) < 10 and min(histogram) > min(short)  # the short lengths have (nearly) no unseen inputs
    share = {k: v / 500 for k, v in histogram.items() if k >= 10}
    train = lengths(result.train)
    expected = {k: train[k] / sum(train[j] for j in train if j not in short) for k in share}
    assert all(abs(share[k] - expected[k]) < 0.02 for k in share)  # the other lengths in train's proportions
    assert any("could not give their share" in w for w in result.report["warnings"])


def test_sampled_level_split_draws_every_level_in_its_share() -> None:
    result = sample_level_split("addition", 4, {"train": 800, "validation": 200, "test": 200}, seed=2)
    check_contract(result, share=1 / 100)
    train_levels = Counter(r["difficulty"]["max_digits"] if "max_digits" in r["difficulty"] else input_length(r) for r in result.train)
    assert len(result.validation) == 200 and result.report["validation"]["method"] == "drawn"
    assert train_levels  # the stratum variable exists on every record


def test_sampled_iid_split_validation_matches_test() -> None:
    """The shortcuts set-up: both sides from one distribution; validation and test now cover the same lengths."""
    setting = [get_task("parity_check").with_size(1, 12)]
    result = sample_split("parity_check", setting, setting, {"train": 2000, "validation": 300, "test": 500}, 4, "iid", {})
    check_contract(result, share=1 / 300)
    val, test = lengths(result.validation), lengths(result.test)
    assert min(val) >= min(test) - 1 and max(val) == max(test) == 12


def test_draw_validation_is_deterministic_and_reports_candidates() -> None:
    params = get_task("reverse_string").with_size(1, 6)
    train = [generate_records("reverse_string", params, 300, 1)]
    calls: list[tuple[int, int, int]] = []

    def candidates(index: int, round_: int, count: int) -> list[dict[str, Any]]:
        calls.append((index, round_, count))
        return generate_records("reverse_string", params, count, 1000 + round_)

    first = draw_validation(train, 40, candidates)
    second = draw_validation(train, 40, candidates)
    assert [r["id"] for r in first.records] == [r["id"] for r in second.records]
    assert first.info["candidates"] == sum(count for _, _, count in calls) // 2
    assert calls[0] == (0, 0, 80)  # round 0: twice the setting's share


def test_small_validation_is_warned() -> None:
    result = sample_length_split("parity_check", (1, 12), (13, 16), {"train": 300, "validation": 17, "test": 50}, seed=1)
    assert any(w.startswith("validation holds only 17 records") for w in result.report["warnings"])
    big = sample_length_split("parity_check", (1, 12), (13, 16), {"train": 300, "validation": SMALL_VALIDATION, "test": 50}, seed=1)
    assert not any(w.startswith("validation holds only") for w in big.report["warnings"])


def test_rule_holdout_says_when_train_records_is_not_met() -> None:
    pool = generate_records("string_rewrite", get_task("string_rewrite").make_params({"systems": 24, "max_steps": 4}), 900, 3)
    small = split(pool, "rule_holdout", {"train_systems": 2, "train_records": 500}, seed=2)
    assert any(w.startswith("train_records=500 not met: the pool holds only") for w in small.report["warnings"])
    enough = split(pool, "rule_holdout", {"train_systems": 16, "train_records": 60}, seed=2)
    assert not any("not met" in w for w in enough.report["warnings"])


@pytest.mark.parametrize("workers", [1, 2])
def test_sampled_validation_is_the_same_in_a_release_with_any_worker_count(tmp_path: Any, workers: int) -> None:
    from gengap.release import write_release
    from gengap.suite import parse_suite

    suite = parse_suite("""\
name: v
version: 1.0.0
seed: 5
license: cc-by-4.0
entries:
  - {task: parity_check, split: length, train_range: [1, 10], test_range: [11, 14], sizes: {train: 400, validation: 60, test: 50}}
  - {task: bucket_sort, split: length, train_range: [1, 8], test_range: [9, 12], sizes: {train: 400, validation: 60, test: 50}}
""", "<v>")
    manifest = write_release(suite, tmp_path / f"r{workers}", cards=False, workers=workers)
    assert manifest["fingerprint"] == write_release(suite, tmp_path / "again", cards=False, workers=1)["fingerprint"]
    for config in manifest["configs"]:
        report = config["report"]
        assert report["sizes"]["validation"] == 60 and report["validation"]["method"] == "drawn"
