"""gengap.repeats.input_keys: the keys that count repeated inputs for generate's and split's warning."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gengap.repeats import input_keys, record_input_keys, repeated

TOKENS = st.lists(st.sampled_from(["0", "1", "a", "bb", "ccc", "é", "x" * 9]), min_size=1, max_size=30)
INPUTS = TOKENS.map(" ".join)


@given(st.lists(INPUTS, min_size=1, max_size=60), st.integers(0, 40))
@settings(max_examples=200, deadline=None)
def test_equal_inputs_get_equal_keys_whatever_the_array_width(inputs: list[str], extra: int) -> None:
    encoded = [x.encode() for x in inputs]
    narrow = np.array(encoded, dtype=np.bytes_)
    wide = np.array(encoded, dtype=f"S{narrow.dtype.itemsize + extra}")
    assert input_keys(narrow).tolist() == input_keys(wide).tolist()
    for single, key in zip(encoded, input_keys(narrow).tolist()):
        assert input_keys(np.array([single], dtype=np.bytes_)).tolist() == [key]


@given(st.lists(INPUTS, min_size=0, max_size=80))
@settings(max_examples=200, deadline=None)
def test_the_repeat_count_is_the_exact_count(inputs: list[str]) -> None:
    records = [{"input": x} for x in inputs]
    halves = [record_input_keys(records[: len(records) // 2]), record_input_keys(records[len(records) // 2 :])]
    assert repeated(halves) == (len(inputs) - len(set(inputs)), len(inputs))


def test_distinct_inputs_get_distinct_keys() -> None:
    rng = np.random.default_rng(0)
    words = {" ".join(map(str, rng.integers(0, 3, rng.integers(1, 24)))) for _ in range(200_000)}
    keys = record_input_keys([{"input": w} for w in sorted(words)])
    assert len(set(keys.tolist())) == len(words)
    # inputs that differ in one byte, and only in length (a trailing token), differ in key
    base = "1 0 " * 20
    variants = [base + "1", base + "0", base + "1 1", base.strip(), "1"]
    assert len(set(record_input_keys([{"input": v} for v in variants]).tolist())) == len(variants)
