"""Context-sensitive Chomsky tasks: missing_duplicate_string, odds_first, binary_addition,
binary_multiplication and compute_sqrt (hand-worked examples, edge cases, parameters)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from gengap.generators import ParamError, get_task

NEW = ("missing_duplicate_string", "odds_first", "binary_addition", "binary_multiplication", "compute_sqrt")
MINIMUM = {"missing_duplicate_string": 2, "odds_first": 1, "binary_addition": 3, "binary_multiplication": 3, "compute_sqrt": 1}


def solve(name: str, text: str) -> str:
    return get_task(name).solve({"input": text})


def records(name: str, n: int, seed: int = 0, **values: object) -> list[dict]:
    task = get_task(name)
    params = task.make_params(values)
    return list(task.generate(np.random.default_rng(seed), n, params).records(name))


def little(bits: list[str]) -> int:
    return sum(int(b) << i for i, b in enumerate(bits))


# -- hand-worked examples -------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, text, target",
    [
        ("odds_first", "0 0 1 1 0 1 0 1", "0 1 0 0 0 1 1 1"),  # REFERENCE.md (docstring version)
        ("odds_first", "1 0 0", "1 0 0"),
        ("odds_first", "1 2 3 4 5", "1 3 5 2 4"),
        ("odds_first", "1", "1"),
        ("missing_duplicate_string", "0 1 _ 1", "0"),
        ("missing_duplicate_string", "1 0 1 _ 0 1 #", "1"),
        ("missing_duplicate_string", "_ 1", "1"),
        ("missing_duplicate_string", "0 _ #", "0"),
        ("binary_addition", "1 + 1", "0 1"),
        ("binary_addition", "1 1 + 1", "0 0 1"),  # 3 + 1 = 4
        ("binary_addition", "1 0 1 + 1 1", "0 0 0 1"),  # 5 + 3 = 8
        ("binary_addition", "1 0 0 + 1", "0 1"),  # padded 1 + 1 = 2
        ("binary_addition", "0 1 + 1 1 1 0 0", "1 0 0 1"),  # 2 + 7 = 9
        ("binary_multiplication", "1 * 1", "1"),
        ("binary_multiplication", "1 1 * 1 1", "1 0 0 1"),  # 3 * 3 = 9
        ("binary_multiplication", "0 1 * 1 0 1", "0 1 0 1"),  # 2 * 5 = 10
        ("binary_multiplication", "0 * 1 1", "0"),  # zero operand (never generated)
        ("compute_sqrt", "1", "1"),
        ("compute_sqrt", "0 0 0 1", "0 1"),  # sqrt 1, padded to 2 digits
        ("compute_sqrt", "1 1 1 1 1", "1 0 1"),  # floor(sqrt 31) = 5
        ("compute_sqrt", "1 0 1 1 1 0 0 0", "1 1 0 1"),  # floor(sqrt 184) = 13
        ("compute_sqrt", "1 0 0 0 0 0 0 0 0", "1 0 0 0 0"),  # sqrt 256 = 16
    ],
)
def test_hand_worked_examples(name: str, text: str, target: str) -> None:
    assert solve(name, text) == target
    task = get_task(name)
    assert task.check({"input": text}, target)
    tokens = target.split()
    flipped = " ".join(tokens[:-1] + [{"0": "1", "1": "0"}.get(tokens[-1], "0")])
    assert not task.check({"input": text}, flipped)


@pytest.mark.parametrize(
    "name, text",
    [
        ("missing_duplicate_string", "0 1 0 1"),  # nothing masked
        ("missing_duplicate_string", "_ 1 _ 1"),  # two masks
        ("missing_duplicate_string", "0 _ 1"),  # odd length without '#'
        ("missing_duplicate_string", "0 _ 1 #"),  # '#' at even length
        ("missing_duplicate_string", "0 1 _ 0"),  # halves differ
        ("missing_duplicate_string", "#"),
        ("odds_first", "0 x 1"),
        ("binary_addition", "1 0 1"),  # no operator
        ("binary_addition", "+ 1"),
        ("binary_addition", "1 + 1 + 1"),
        ("binary_addition", "1 + 2"),
        ("binary_multiplication", "1 + 1"),
        ("binary_multiplication", "1 1 *"),
        ("compute_sqrt", "1 2"),
        ("compute_sqrt", ""),
    ],
)
def test_malformed_inputs_are_rejected(name: str, text: str) -> None:
    with pytest.raises(ValueError):
        solve(name, text)
    assert not get_task(name).check({"input": text}, "0")


# -- generated examples: exact lengths and features ---------------------------------------------


def test_odds_first_generator_matches_the_definition_fixed_and_variable_lengths() -> None:
    for lo, hi in ((8, 8), (1, 30), (499, 500)):
        for r in records("odds_first", 50, seed=lo, min_length=lo, max_length=hi, alphabet_size=10):
            s = r["input"].split()
            assert r["target"].split() == s[0::2] + s[1::2]
            assert r["difficulty"]["displaced"] == sum(a != b for a, b in zip(s, s[0::2] + s[1::2]))


def test_missing_duplicate_string_layout() -> None:
    seen_halves = set()
    for r in records("missing_duplicate_string", 400, min_length=2, max_length=41):
        tokens = r["input"].split()
        length, half = len(tokens), r["difficulty"]["string_length"]
        assert half == length // 2 >= 1
        assert (tokens[-1] == "#") == (length % 2 == 1)
        body = tokens[: 2 * half]
        position = r["difficulty"]["missing_position"]
        assert body.index("_") == position and body.count("_") == 1
        other = body[(position + half) % (2 * half)]
        assert r["target"] == other and other in "01"
        assert [t for i, t in enumerate(body[:half]) if i != position % half] == [
            t for i, t in enumerate(body[half:]) if i != position % half
        ]
        seen_halves.add(position < half)
    assert seen_halves == {True, False}


@pytest.mark.parametrize("name", ["binary_addition", "binary_multiplication"])
def test_binary_operations_widths_and_values(name: str) -> None:
    op = "+" if name == "binary_addition" else "*"
    widths = set()
    for r in records(name, 400, min_length=3, max_length=12):
        tokens = r["input"].split()
        d = r["difficulty"]
        assert tokens.count(op) == 1
        split = tokens.index(op)
        left, right = tokens[:split], tokens[split + 1 :]
        assert (len(left), len(right)) == (d["width_n"], d["width_m"])
        assert d["width_n"] + d["width_m"] + 1 == d["input_length"] == len(tokens)
        x, y = little(left), little(right)
        assert 1 <= x < 2 ** len(left) and 1 <= y < 2 ** len(right)
        expected = x + y if op == "+" else x * y
        assert little(r["target"].split()) == expected and r["target"].split()[-1] == "1"
        if op == "+":
            carries, carry = 0, 0
            for j in range(max(len(left), len(right))):
                carry = ((x >> j & 1) + (y >> j & 1) + carry) >> 1
                carries += carry
            assert d["carries"] == carries
        else:
            assert d["partial_products"] == right.count("1")
        widths.add(d["width_n"])
    assert widths == set(range(1, 11))  # w_n ranges over 1..L-2


def test_compute_sqrt_layout() -> None:
    for r in records("compute_sqrt", 300, min_length=1, max_length=25):
        tokens = r["input"].split()
        value = int("".join(tokens), 2)
        assert 1 <= value < 2 ** len(tokens)
        assert r["difficulty"]["value_bits"] == value.bit_length()
        out = r["target"].split()
        assert len(out) == (len(tokens) + 1) // 2
        assert int("".join(out), 2) == math.isqrt(value)


@pytest.mark.parametrize("name", NEW)
def test_input_length_is_exactly_the_requested_length(name: str) -> None:
    lo = MINIMUM[name]
    for length in list(range(lo, lo + 12)) + [500]:
        for r in records(name, 5, seed=length, min_length=length, max_length=length):
            assert r["difficulty"]["input_length"] == length
            assert get_task(name).check(r, r["target"])


@pytest.mark.parametrize("name", NEW)
def test_minimum_length_examples(name: str) -> None:
    lo = MINIMUM[name]
    inputs = {r["input"] for r in records(name, 200, min_length=lo, max_length=lo)}
    expected = {
        "missing_duplicate_string": {"_ 0", "_ 1", "0 _", "1 _"},
        "odds_first": {"0", "1"},
        "binary_addition": {"1 + 1"},
        "binary_multiplication": {"1 * 1"},
        "compute_sqrt": {"1"},
    }[name]
    assert inputs == expected


def test_long_inputs() -> None:
    for name in NEW:
        for r in records(name, 3, min_length=2000, max_length=2000):
            assert r["difficulty"]["input_length"] == 2000
            assert get_task(name).check(r, r["target"])


# -- independent arithmetic of the checkers -------------------------------------------------------


@given(st.integers(1, 2**300), st.integers(0, 40))
def test_compute_sqrt_checker_matches_isqrt(value: int, padding: int) -> None:
    text = " ".join("0" * padding + bin(value)[2:])
    width = (padding + value.bit_length() + 1) // 2
    assert solve("compute_sqrt", text) == " ".join(format(math.isqrt(value), f"0{width}b"))


@given(st.integers(1, 2**200), st.integers(1, 2**200), st.integers(0, 5), st.integers(0, 5))
def test_binary_checkers_match_python_ints(x: int, y: int, pad_x: int, pad_y: int) -> None:
    def encode(v: int, pad: int) -> str:
        return " ".join(bin(v)[2:][::-1] + "0" * pad)

    assert solve("binary_addition", f"{encode(x, pad_x)} + {encode(y, pad_y)}") == " ".join(bin(x + y)[2:][::-1])
    assert solve("binary_multiplication", f"{encode(x, pad_x)} * {encode(y, pad_y)}") == " ".join(bin(x * y)[2:][::-1])


# -- parameters, levels, sizes --------------------------------------------------------------------


@pytest.mark.parametrize("name", NEW)
def test_parameters_below_the_minimum_are_rejected(name: str) -> None:
    task = get_task(name)
    lo = MINIMUM[name]
    if lo > 1:
        with pytest.raises(ParamError):
            task.make_params({"min_length": lo - 1})
        with pytest.raises(ParamError):
            task.with_size(1, lo - 1)
    with pytest.raises(ParamError):
        task.make_params({"min_length": 30, "max_length": 20})
    with pytest.raises(ParamError):
        task.make_params({"max_length": 10_001})
    clamped = task.with_size(1, 40)
    assert (clamped.min_length, clamped.max_length) == (lo, 40)
    assert task.with_size(41, 500).min_length == 41


@pytest.mark.parametrize("name", NEW)
def test_levels_start_at_the_minimum_and_cover_500(name: str) -> None:
    levels = get_task(name).levels()
    assert levels[1].min_length == MINIMUM[name]
    assert levels[4].max_length == 40 and levels[5].min_length == 41
    assert levels[10].max_length == 500


def _brute_space(name: str, lo: int, hi: int) -> int:
    """Distinct inputs over all lengths lo..hi, by enumeration (binary alphabet)."""
    seen = set()
    for length in range(lo, hi + 1):
        if name == "missing_duplicate_string":
            half = length // 2
            for v in range(2**half):
                s = format(v, f"0{half}b") * 2
                for p in range(2 * half):
                    seen.add(s[:p] + "_" + s[p + 1 :] + "#" * (length % 2))
        elif name in ("binary_addition", "binary_multiplication"):
            for w in range(1, length - 1):
                for x in range(1, 2**w):
                    for y in range(1, 2 ** (length - 1 - w)):
                        seen.add((format(x, f"0{w}b"), format(y, f"0{length - 1 - w}b")))
        elif name == "compute_sqrt":
            seen.update(format(v, f"0{length}b") for v in range(1, 2**length))
        else:
            seen.update(format(v, f"0{length}b") for v in range(2**length))
    return len(seen)


@pytest.mark.parametrize("name", NEW)
def test_input_space_size_matches_enumeration(name: str) -> None:
    task = get_task(name)
    lo = MINIMUM[name]
    params = task.make_params({"min_length": lo, "max_length": 9})
    assert task.input_space_size(params) == _brute_space(name, lo, 9)
