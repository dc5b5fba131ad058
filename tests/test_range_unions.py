"""Unions of ranges (gengap.splits.ranges): pool length/difficulty splits, sampled length splits and
suite entries take a union a side; sides never share a value; every record lies in its side's
ranges; each test range is interpolation or extrapolation; one range a side is unchanged."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gengap.generators import get_task
from gengap.suite import SuiteError, parse_suite
from gengap.splits import SplitError, generate_records, sample_length_split, split
from gengap.splits.ranges import check_disjoint, parse_ranges, parse_ranges_text, regime

PARITY = get_task("parity_check")


@pytest.fixture(scope="module")
def pool() -> list[dict]:
    return generate_records("parity_check", PARITY.with_size(1, 30), 900, 5)


@st.composite
def sides(draw: st.DrawFn, top: int = 30) -> tuple[list[list[int]], list[list[int]]]:
    """Consecutive intervals of 1..top, each given to train, test or neither (both sides non-empty)."""
    cuts = sorted(draw(st.sets(st.integers(2, top), min_size=1, max_size=8)))
    bounds = [1, *cuts, top + 1]
    intervals = [[lo, hi - 1] for lo, hi in zip(bounds, bounds[1:])]
    owners = draw(st.lists(st.sampled_from(("train", "test", None)), min_size=len(intervals), max_size=len(intervals)))
    train = [r for r, o in zip(intervals, owners) if o == "train"]
    test = [r for r, o in zip(intervals, owners) if o == "test"]
    if not train:
        train = [intervals[0]]
        test = [r for r in test if r != intervals[0]]
    if not test:
        test = [intervals[-1]] if intervals[-1] not in train else [[top + 1, top + 5]]
    return train, test


def text(ranges: list[list[int]]) -> str:
    return ",".join(f"{lo}..{hi}" for lo, hi in ranges)


def inside(ranges: list[list[int]], value: int) -> bool:
    return any(lo <= value <= hi for lo, hi in ranges)


@settings(max_examples=25, deadline=None)
@given(sides(), st.integers(0, 2**32))
def test_pool_union_puts_every_record_in_its_sides_ranges(pool: list[dict], drawn: tuple, seed: int) -> None:
    train, test = drawn
    result = split(pool, "length", {"train_ranges": text(train), "test_ranges": text(test)}, seed=seed)
    for record in result.train + result.validation:
        assert inside(train, record["difficulty"]["input_length"])
    for record in result.test:
        assert inside(test, record["difficulty"]["input_length"])
    hull = (min(lo for lo, _ in train), max(hi for _, hi in train))
    if len(train) > 1 or len(test) > 1:
        assert result.report["train_range"] == sorted(train) and result.report["test_range"] == sorted(test)
        assert [row["range"] for row in result.report["regimes"]] == sorted(test)
        for row in result.report["regimes"]:
            between = hull[0] < row["range"][0] and row["range"][1] < hull[1]
            assert row["regime"] == ("interpolation" if between else "extrapolation")
    again = split(pool, "length", {"train_ranges": text(train), "test_ranges": text(test)}, seed=seed)
    assert again.parts() == result.parts() and again.report == result.report


@settings(max_examples=25, deadline=None)
@given(sides(), st.integers(0, 30), st.integers(0, 30))
def test_overlapping_sides_are_one_line_errors(pool: list[dict], drawn: tuple, lo: int, width: int) -> None:
    train, _ = drawn
    hit = train[0][0]  # a test range through a train value
    bad = [[min(hit, lo), max(hit, lo + width)]]
    with pytest.raises(SplitError, match="overlap") as err:
        split(pool, "length", {"train_ranges": text(train), "test_ranges": text(bad)})
    assert "\n" not in str(err.value)
    with pytest.raises(SplitError, match="overlap"):
        check_disjoint(parse_ranges(train, "train"), parse_ranges(bad, "test"))


def test_single_range_behaviour_is_unchanged(pool: list[dict]) -> None:
    old = split(pool, "length", {"train_max": 10}, seed=3)
    new = split(pool, "length", {"train_ranges": "0..10"}, seed=3)
    assert new.parts() == old.parts()
    for key in ("feature", "train_range", "test_range"):
        assert new.report[key] == old.report[key]
    assert old.report["train_range"] == [0, 10] and old.report["test_range"] == [11, None]
    assert "regimes" not in old.report and "regimes" not in new.report
    assert "train_ranges" not in old.report["options"]  # added knobs at their default stay out of reports


def test_union_defaults_and_mixing_errors(pool: list[dict]) -> None:
    result = split(pool, "length", {"train_ranges": "1..5,11..15"}, seed=0)  # test: above the highest train range
    assert result.report["test_range"] == [[16, None]] and result.report["regimes"][0]["regime"] == "extrapolation"
    assert {r["difficulty"]["input_length"] for r in result.train + result.validation} <= set(range(1, 6)) | set(range(11, 16))
    with pytest.raises(SplitError, match="give train_ranges or train_min/train_max, not both"):
        split(pool, "length", {"train_ranges": "1..5", "train_max": 5})
    with pytest.raises(SplitError, match="not a range lo..hi"):
        split(pool, "length", {"train_ranges": "1-5"})
    with pytest.raises(SplitError, match="overlap"):
        parse_ranges_text("1..5,4..9", "train_ranges")
    with pytest.raises(SplitError, match="is empty"):
        parse_ranges([5, 1], "train_range")
    difficulty = split(pool, "difficulty", {"feature": "input_length", "train_ranges": "1..4,9..12", "test_ranges": "5..8"}, seed=0)
    assert difficulty.report["regimes"] == [{"range": [5, 8], "regime": "interpolation"}]
    assert {r["difficulty"]["input_length"] for r in difficulty.test} <= set(range(5, 9))


def test_regime_of_a_test_range() -> None:
    train = parse_ranges([[1, 8], [17, 24]], "train")
    assert regime((9, 16), train) == "interpolation"
    assert regime((25, 32), train) == "extrapolation"
    assert regime((0, 0), parse_ranges([[1, 8], [17, 24]], "train")) == "extrapolation"
    assert regime((9, 16), parse_ranges([1, 8], "train")) == "extrapolation"


SIZES = {"train": 120, "validation": 12, "test": 60}


@settings(max_examples=10, deadline=None)
@given(sides(top=16), st.integers(0, 2**32))
def test_sampled_union_draws_each_side_from_its_ranges(drawn: tuple, seed: int) -> None:
    train, test = drawn
    result = sample_length_split("reverse_string", train, test, SIZES, seed=seed)
    for record in result.train + result.validation:
        assert inside(train, record["difficulty"]["input_length"])
    for record in result.test:
        assert inside(test, record["difficulty"]["input_length"])
    if len(train) > 1 or len(test) > 1:
        assert [row["range"] for row in result.report["regimes"]] == sorted(test)
    assert sample_length_split("reverse_string", train, test, SIZES, seed=seed).parts() == result.parts()


def test_sampled_single_range_is_unchanged() -> None:
    result = sample_length_split("reverse_string", (1, 6), (7, 9), SIZES, seed=4)
    nested = sample_length_split("reverse_string", [[1, 6]], [[7, 9]], SIZES, seed=4)
    assert nested.parts() == result.parts()
    assert result.report["options"]["train_range"] == [1, 6] and "regimes" not in result.report
    with pytest.raises(SplitError, match="overlap"):
        sample_length_split("reverse_string", [[1, 4], [9, 12]], [[4, 8]], SIZES)


ENTRY = "  - {task: reverse_string, split: length, train_range: %s, test_range: %s, sizes: {train: 60, validation: 6, test: 30}}\n"
HEAD = "name: t\nversion: 1.0.0\nseed: 1\nlicense: mit\nentries:\n"


def test_suite_entries_take_unions() -> None:
    suite = parse_suite(HEAD + ENTRY % ("[[1, 4], [9, 12]]", "[[5, 8], [13, 16]]"))
    entry = suite["entries"][0]
    assert entry["kind"] == "sampled_length" and entry["train_range"] == [[1, 4], [9, 12]]
    single = parse_suite(HEAD + ENTRY % ("[1, 4]", "[5, 8]"))["entries"][0]
    assert single["train_range"] == [1, 4] and single["test_range"] == [5, 8]
    from gengap.release import build_entry

    result = build_entry(entry, 1)
    assert [row["regime"] for row in result.report["regimes"]] == ["interpolation", "extrapolation"]


@pytest.mark.parametrize(
    "train, test, message",
    [
        ("[[1, 4], [9, 12]]", "[[4, 8]]", "line 6: entries\\[0\\].test_range: train range \\[1, 4\\] and test range \\[4, 8\\] overlap"),
        ("[[1, 4], [3, 12]]", "[[13, 16]]", "entries\\[0\\].train_range: train_range: ranges \\[1, 4\\] and \\[3, 12\\] overlap"),
        ("[[1, 4], [12, 9]]", "[[13, 16]]", "range \\[12, 9\\] is empty"),
        ("[1, 4]", "[3, 8]", "test range \\[3, 8\\] overlaps train range \\[1, 4\\]"),
    ],
)
def test_suite_union_errors_are_one_line(train: str, test: str, message: str) -> None:
    with pytest.raises(SuiteError, match=message) as err:
        parse_suite(HEAD + ENTRY % (train, test))
    assert "\n" not in str(err.value)
