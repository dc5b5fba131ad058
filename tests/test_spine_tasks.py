"""Hand-worked examples of the five spine tasks and their checkers."""

from __future__ import annotations

import numpy as np
import pytest

from gengap.generators import BlockPlan, ParamError, get_task


def rec(task: str, input_text: str, meta: dict | None = None) -> dict:
    record = {"task": task, "input": input_text}
    if meta:
        record["meta"] = meta
    return record


@pytest.mark.parametrize(
    "task, input_text, target",
    [
        ("parity_check", "1 0 1 1", "1"),
        ("parity_check", "1 0 1", "0"),
        ("parity_check", "0", "0"),
        ("reverse_string", "1 1 0", "0 1 1"),
        ("reverse_string", "0", "0"),
        ("duplicate_string", "1 0", "1 0 1 0"),
        ("bucket_sort", "3 0 4 0 1", "0 0 1 3 4"),
    ],
)
def test_hand_worked(task: str, input_text: str, target: str) -> None:
    t = get_task(task)
    assert t.solve(rec(task, input_text)) == target
    assert t.check(rec(task, input_text), target)
    assert t.check(rec(task, input_text), "  " + target + " ")  # whitespace is not significant


@pytest.mark.parametrize(
    "fmt, input_text, target",
    [
        ("plain", "9 9 + 1", "1 0 0"),
        ("reversed", "9 9 + 1", "0 0 1"),
        ("plain", "1 2 3 + 4 5", "1 6 8"),
        ("reversed", "1 2 3 + 4 5", "8 6 1"),
        ("index_hints", "p2 1 p1 2 p0 3 + p1 4 p0 5", "p2 1 p1 6 p0 8"),
        ("plain", "0 + 0", "0"),
    ],
)
def test_addition_formats(fmt: str, input_text: str, target: str) -> None:
    task = get_task("addition")
    record = rec("addition", input_text, {"format": fmt})
    assert task.solve(record) == target
    assert task.check(record, target)
    assert not task.check(record, target + " 0")


@pytest.mark.parametrize(
    "task, input_text",
    [("parity_check", "1 2"), ("parity_check", "x"), ("reverse_string", "a b"), ("bucket_sort", "10")],
)
def test_checkers_reject_malformed_inputs(task: str, input_text: str) -> None:
    assert not get_task(task).check(rec(task, input_text), "0")


def test_addition_rejects_bad_hints() -> None:
    task = get_task("addition")
    assert not task.check(rec("addition", "p0 1 p1 2 + p0 3", {"format": "index_hints"}), "p1 1 p0 5")


def test_addition_carries_and_digits_are_measured() -> None:
    task = get_task("addition")
    params = task.make_params({"min_digits_a": 3, "max_digits_a": 6, "min_digits_b": 1, "max_digits_b": 2})
    for record in BlockPlan("addition", params, 300, 4).generate_block(0).records("addition"):
        a, b = record["input"].replace(" ", "").split("+")
        assert record["difficulty"]["digits_a"] == len(a) and 3 <= len(a) <= 6
        assert record["difficulty"]["digits_b"] == len(b) and 1 <= len(b) <= 2
        assert len(a) == 1 or a[0] != "0"
        carries, carry = 0, 0
        for da, db in zip(reversed(a.zfill(7)), reversed(b.zfill(7))):
            carry = (int(da) + int(db) + carry) // 10
            carries += carry
        assert record["difficulty"]["carries"] == carries


def test_lengths_follow_the_params() -> None:
    task = get_task("parity_check")
    batch = BlockPlan("parity_check", task.make_params({"min_length": 7, "max_length": 9}), 500, 0).generate_block(0)
    lengths = batch.difficulty()["input_length"]
    assert lengths.min() == 7 and lengths.max() == 9
    assert set(np.unique(lengths)) == {7, 8, 9}


def test_param_validation_messages() -> None:
    task = get_task("reverse_string")
    with pytest.raises(ParamError, match="alphabet_size=11 is out of range"):
        task.make_params({"alphabet_size": 11})
    with pytest.raises(ParamError, match="must be an integer"):
        task.make_params({"max_length": 3.5})
    with pytest.raises(ParamError, match="unknown parameter"):
        task.make_params({"length": 3})


def test_input_space_size_counts_strings() -> None:
    task = get_task("parity_check")
    assert task.input_space_size(task.make_params({"min_length": 1, "max_length": 3})) == 2 + 4 + 8
    addition = get_task("addition")
    assert addition.input_space_size(addition.make_params({"max_digits_a": 1, "max_digits_b": 2})) == 10 * 100
