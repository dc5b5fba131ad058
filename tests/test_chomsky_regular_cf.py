"""Regular and context-free Chomsky tasks: even_pairs, modular_arithmetic, cycle_navigation,
stack_manipulation, modular_arithmetic_brackets, solve_equation.

Hand-worked examples, checker verdicts, edge lengths, parameter errors, and independent
re-computations (Python's own expression evaluator) over generated batches.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import given, strategies as st

from gengap.generators import ParamError, get_task

SEEDS = st.integers(0, 2**32 - 1)


def record(text: str, **meta: Any) -> dict[str, Any]:
    example: dict[str, Any] = {"input": text}
    if meta:
        example["meta"] = meta
    return example


def records(name: str, params: Any, n: int = 200, seed: int = 0) -> list[dict[str, Any]]:
    task = get_task(name)
    return list(task.generate(np.random.default_rng(seed), n, params).records(name))


def paren_depth(tokens: list[str]) -> int:
    depth = deepest = 0
    for token in tokens:
        depth += (token == "(") - (token == ")")
        deepest = max(deepest, depth)
    return deepest


# -- even_pairs ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, target",
    [("1", "0"), ("0 1", "1"), ("0 1 1 0", "0"), ("1 0 1", "0"), ("1 1 1 0", "1"), ("0 0 0 0", "0")],
)
def test_even_pairs_by_hand(text: str, target: str) -> None:
    task = get_task("even_pairs")
    assert task.solve(record(text)) == target
    assert task.check(record(text), target)
    assert not task.check(record(text), "1" if target == "0" else "0")


def test_even_pairs_rejects_malformed_input() -> None:
    task = get_task("even_pairs")
    for text in ("", "0 2", "01", "a"):
        with pytest.raises(ValueError):
            task.solve(record(text))


@given(seed=SEEDS)
def test_even_pairs_transitions_and_target_agree(seed: int) -> None:
    task = get_task("even_pairs")
    for r in records("even_pairs", task.with_size(1, 30), 50, seed):
        bits = r["input"].split()
        transitions = sum(a != b for a, b in zip(bits, bits[1:]))
        assert r["difficulty"]["transitions"] == transitions
        assert r["target"] == str(int(bits[0] != bits[-1]))


# -- modular_arithmetic ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, modulus, target",
    [
        ("3", 5, "3"),
        ("1 + 2 * 3", 5, "2"),  # 7
        ("4 - 2 * 3 + 1", 5, "4"),  # -1
        ("2 * 3 * 4", 5, "4"),  # 24
        ("0 - 1 - 1", 5, "3"),  # left-associative: -2
        ("4 * 0 + 1 * 1", 5, "1"),
        ("6 * 6", 7, "1"),  # 36 mod 7
        ("1 + 1", 2, "0"),
    ],
)
def test_modular_arithmetic_by_hand(text: str, modulus: int, target: str) -> None:
    task = get_task("modular_arithmetic")
    assert task.solve(record(text, modulus=modulus)) == target
    assert not task.check(record(text, modulus=modulus), str((int(target) + 1) % modulus))


def test_modular_arithmetic_reads_its_modulus_and_never_assumes_one() -> None:
    task = get_task("modular_arithmetic")
    assert task.default_params().modulus == 5
    assert task.solve(record("4 + 4", modulus=5)) == "3"
    assert task.solve(record("4 + 4", modulus=7)) == "1"
    with pytest.raises(ValueError, match="meta.modulus is missing"):
        task.solve(record("4 + 4"))


def test_modular_arithmetic_rejects_malformed_input() -> None:
    task = get_task("modular_arithmetic")
    for text in ("", "1 +", "1 2", "+ 1 2", "5 + 1", "1 / 2", "12 + 1"):
        with pytest.raises(ValueError):
            task.solve(record(text, modulus=5))


@given(seed=SEEDS, modulus=st.integers(2, 10))
def test_modular_arithmetic_matches_python_eval(seed: int, modulus: int) -> None:
    task = get_task("modular_arithmetic")
    params = task.with_size(1, 41).replace(modulus=modulus)
    for r in records("modular_arithmetic", params, 40, seed):
        tokens = r["input"].split()
        assert len(tokens) % 2 == 1 and 1 <= len(tokens) <= 41
        assert r["target"] == str(eval("".join(tokens)) % modulus)  # noqa: S307 - digits and + - * only
        assert r["meta"] == {"modulus": modulus}
        ops = tokens[1::2]
        assert r["difficulty"]["additions"] == ops.count("+")
        assert r["difficulty"]["subtractions"] == ops.count("-")
        assert r["difficulty"]["multiplications"] == ops.count("*")


def test_modular_arithmetic_long_inputs_every_modulus() -> None:
    task = get_task("modular_arithmetic")
    for modulus in range(2, 11):
        params = task.with_size(480, 501).replace(modulus=modulus)
        for r in records("modular_arithmetic", params, 30, modulus):
            assert r["target"] == str(eval("".join(r["input"].split())) % modulus)  # noqa: S307


def test_modular_arithmetic_odd_lengths_and_params() -> None:
    task = get_task("modular_arithmetic")
    for params in task.levels().values():
        assert params.min_length % 2 == 1 and params.max_length % 2 == 1
    assert task.level(1).min_length == 1 and task.level(10).max_length == 499
    assert (task.with_size(500, 500).min_length, task.with_size(500, 500).max_length) == (501, 501)
    assert task.with_size(2, 9).min_length == 2  # the range keeps its bounds; only odd lengths are drawn
    lengths = {r["difficulty"]["input_length"] for r in records("modular_arithmetic", task.with_size(2, 9), 300)}
    assert lengths == {3, 5, 7, 9}
    with pytest.raises(ParamError):
        task.make_params({"min_length": 4, "max_length": 4})
    with pytest.raises(ParamError):
        task.make_params({"modulus": 11})
    with pytest.raises(ParamError):
        task.make_params({"modulus": 1})
    # Several lengths in one instance (the reference generator breaks on a second length).
    assert len(records("modular_arithmetic", task.with_size(1, 1), 5)) == 5
    assert len(records("modular_arithmetic", task.with_size(301, 301), 5)) == 5


def test_modular_arithmetic_input_space_size() -> None:
    task = get_task("modular_arithmetic")
    params = task.make_params({"min_length": 1, "max_length": 4, "modulus": 3})
    assert task.input_space_size(params) == 3 + 3 * 3 * 3  # "d" and "d op d"


# -- cycle_navigation --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, cycle, target",
    [("S", 5, "0"), ("L", 5, "4"), ("R R L", 5, "1"), ("R R R R R R", 5, "1"), ("L L S", 5, "3"), ("R R R R", 3, "1")],
)
def test_cycle_navigation_by_hand(text: str, cycle: int, target: str) -> None:
    task = get_task("cycle_navigation")
    assert task.solve(record(text, cycle_length=cycle)) == target
    assert not task.check(record(text, cycle_length=cycle), str((int(target) + 1) % cycle))


def test_cycle_navigation_rejects_malformed_input_and_params() -> None:
    task = get_task("cycle_navigation")
    for text in ("", "U", "L R X", "LR"):
        with pytest.raises(ValueError):
            task.solve(record(text))
    with pytest.raises(ParamError):
        task.make_params({"cycle_length": 1})
    with pytest.raises(ParamError):
        task.make_params({"min_length": 0})


@given(seed=SEEDS, cycle=st.integers(2, 10))
def test_cycle_navigation_features(seed: int, cycle: int) -> None:
    task = get_task("cycle_navigation")
    for r in records("cycle_navigation", task.with_size(1, 30).replace(cycle_length=cycle), 40, seed):
        tokens = r["input"].split()
        net = tokens.count("R") - tokens.count("L")
        assert r["target"] == str(net % cycle)
        assert r["difficulty"]["displacement"] == abs(net)
        assert r["difficulty"]["moves"] == len(tokens) - tokens.count("S")
        assert r["meta"] == {"cycle_length": cycle}


# -- stack_manipulation ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, target",
    [
        ("0 1 1 0 PUSH1 POP POP", "1 1 0"),  # the reference generator's docstring example
        ("1 1 0 POP POP POP", "EMPTY"),
        ("0 POP POP PUSH1", "1"),  # POP on an empty stack is ignored
        ("1", "1"),
        ("0 1", "1 0"),
        ("1 PUSH0 PUSH0 PUSH1", "1 0 0 1"),
    ],
)
def test_stack_manipulation_by_hand(text: str, target: str) -> None:
    task = get_task("stack_manipulation")
    assert task.solve(record(text)) == target
    assert task.check(record(text), target)
    assert not task.check(record(text), "EMPTY" if target != "EMPTY" else "0")


def test_stack_manipulation_rejects_malformed_input() -> None:
    task = get_task("stack_manipulation")
    for text in ("", "POP", "PUSH1 0", "0 POP 1", "0 PUSH2", "0 push0"):
        with pytest.raises(ValueError):
            task.solve(record(text))
    assert not task.check(record("POP"), "EMPTY")


@given(seed=SEEDS)
def test_stack_manipulation_layout_and_features(seed: int) -> None:
    task = get_task("stack_manipulation")
    for r in records("stack_manipulation", task.with_size(1, 25), 40, seed):
        tokens = r["input"].split()
        initial = next((i for i, t in enumerate(tokens) if t not in ("0", "1")), len(tokens))
        d = r["difficulty"]
        assert initial >= 1 and (len(tokens) == 1 or initial < len(tokens))  # >= 1 action from length 2
        assert all(t in ("POP", "PUSH0", "PUSH1") for t in tokens[initial:])
        assert d["initial_height"] == initial and d["stack_operations"] == len(tokens) - initial
        height = highest = initial
        for t in tokens[initial:]:
            height = max(height - 1, 0) if t == "POP" else height + 1
            highest = max(highest, height)
        assert d["max_stack_height"] == highest
        assert (r["target"] == "EMPTY") == (height == 0)
        assert height == 0 or d["output_length"] == height


def test_stack_manipulation_edges_and_space() -> None:
    task = get_task("stack_manipulation")
    single = records("stack_manipulation", task.with_size(1, 1), 50)
    assert {r["input"] for r in single} == {"0", "1"}
    assert all(r["target"] == r["input"] for r in single)
    two = records("stack_manipulation", task.with_size(2, 2), 200)
    assert any(r["target"] == "EMPTY" for r in two)
    long = records("stack_manipulation", task.with_size(500, 500), 20)
    assert all(task.check(r, r["target"]) for r in long)
    # L = 1: 2 inputs; L >= 2: 2*3^L - 3*2^L (initial stack 1..L-1, then actions).
    for length, expected in ((1, 2), (2, 6), (3, 30), (4, 114)):
        assert task.input_space_size(task.with_size(length, length)) == expected


# -- modular_arithmetic_brackets ---------------------------------------------------------------


@pytest.mark.parametrize(
    "text, modulus, target",
    [
        ("3", 5, "3"),
        ("- 3", 5, "2"),
        ("( 4 )", 5, "4"),
        ("( - 1 )", 5, "4"),
        ("( 1 + ( - 3 ) )", 5, "3"),
        ("( 1 - - 3 )", 5, "4"),
        ("( ( 1 - 2 ) - ( 3 + 4 ) )", 5, "2"),  # -1 - 7 = -8
        ("( 6 + 6 )", 7, "5"),
    ],
)
def test_brackets_by_hand(text: str, modulus: int, target: str) -> None:
    task = get_task("modular_arithmetic_brackets")
    assert task.solve(record(text, modulus=modulus)) == target
    assert not task.check(record(text, modulus=modulus), str((int(target) + 1) % modulus))


def test_brackets_rejects_expressions_outside_the_grammar() -> None:
    task = get_task("modular_arithmetic_brackets")
    bad = ("", "( ( 1 ) )", "1 + 2", "( 1 + 2 + 3 )", "- ( 1 + 2 )", "( 1 + 2", "( 1 + 2 ) )", "5", "( 1 * 2 )", "x")
    for text in bad:
        with pytest.raises(ValueError):
            task.solve(record(text, modulus=5))


def test_brackets_parser_accepts_exactly_the_counted_strings() -> None:
    task = get_task("modular_arithmetic_brackets")
    for length in range(1, 7):
        accepted = 0
        for chars in itertools.product("01()+-", repeat=length):
            try:
                task.solve(record(" ".join(chars), modulus=2))
            except ValueError:
                continue
            accepted += 1
        params = task.make_params({"min_length": length, "max_length": length, "modulus": 2})
        assert task.input_space_size(params) == accepted


def test_brackets_every_length_is_exact() -> None:
    task = get_task("modular_arithmetic_brackets")
    for length in list(range(1, 41)) + [499, 500]:
        for r in records("modular_arithmetic_brackets", task.with_size(length, length), 20, length):
            assert r["difficulty"]["input_length"] == length
            tokens = r["input"].split()
            assert r["target"] == str(eval("".join(tokens)) % 5)  # noqa: S307 - digits, + -, brackets
    assert {r["input"] for r in records("modular_arithmetic_brackets", task.with_size(2, 2), 100)} == {
        f"- {d}" for d in range(5)
    }


@given(seed=SEEDS, modulus=st.integers(2, 10))
def test_brackets_match_python_eval(seed: int, modulus: int) -> None:
    task = get_task("modular_arithmetic_brackets")
    for r in records("modular_arithmetic_brackets", task.with_size(1, 60).replace(modulus=modulus), 30, seed):
        tokens = r["input"].split()
        assert r["target"] == str(eval("".join(tokens)) % modulus)  # noqa: S307
        assert r["difficulty"]["nesting_depth"] == paren_depth(tokens)
        assert r["difficulty"]["operators"] == _binary_operators(tokens)
        assert max(int(t) for t in tokens if t.isdigit()) < modulus


def _binary_operators(tokens: list[str]) -> int:
    """Binary + and -: those after an operand (a digit or a closing bracket)."""
    return sum(1 for a, b in zip(tokens, tokens[1:]) if b in "+-" and (a.isdigit() or a == ")"))


def test_brackets_params() -> None:
    task = get_task("modular_arithmetic_brackets")
    assert task.level(1).min_length == 1 and task.level(10).max_length == 500
    with pytest.raises(ParamError):
        task.make_params({"modulus": 11})
    with pytest.raises(ParamError):
        task.make_params({"min_length": 10, "max_length": 5})
    assert task.input_space_size(task.with_size(1, 5)) == 4 * 5 + 2 * 5 * 5
    assert task.input_space_size(task.with_size(1, 5000)) is None


# -- solve_equation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, modulus, target",
    [
        ("x = 4", 5, "4"),
        ("- x = 2", 5, "3"),
        ("( x + 2 ) = 1", 5, "4"),
        ("( 3 - x ) = 1", 5, "2"),
        ("( - x ) = 2", 5, "3"),
        ("( ( 1 - x ) - ( 3 + 4 ) ) = 0", 5, "4"),  # 1 - x - 7 = 0 -> x = -6
        ("( 2 - - x ) = 0", 7, "5"),
    ],
)
def test_solve_equation_by_hand(text: str, modulus: int, target: str) -> None:
    task = get_task("solve_equation")
    assert task.solve(record(text, modulus=modulus)) == target
    assert not task.check(record(text, modulus=modulus), str((int(target) + 1) % modulus))


def test_solve_equation_rejects_malformed_input() -> None:
    task = get_task("solve_equation")
    bad = ("", "x", "x =", "( x + x ) = 1", "( 1 + 2 ) = 3", "x = 5", "( x + 1 ) 1", "x = = 1", "( x ) = 1 1")
    for text in bad:
        with pytest.raises(ValueError):
            task.solve(record(text, modulus=5))


@given(seed=SEEDS, modulus=st.integers(2, 10))
def test_solve_equation_answer_is_unique(seed: int, modulus: int) -> None:
    task = get_task("solve_equation")
    for r in records("solve_equation", task.with_size(3, 40).replace(modulus=modulus), 30, seed):
        tokens = r["input"].split()
        assert tokens[-2] == "=" and tokens.count("x") == 1
        expression = "".join(tokens[:-2])
        solutions = [d for d in range(modulus) if eval(expression.replace("x", str(d))) % modulus == int(tokens[-1])]  # noqa: S307
        assert solutions == [int(r["target"])]
        assert r["difficulty"]["nesting_depth"] == paren_depth(tokens)
        x = tokens.index("x")
        assert r["difficulty"]["x_depth"] == _open_at(tokens, x)


def _open_at(tokens: list[str], index: int) -> int:
    return tokens[:index].count("(") - tokens[:index].count(")")


def test_solve_equation_lengths_and_params() -> None:
    task = get_task("solve_equation")
    assert task.level(1).min_length == 3 and task.level(10).max_length == 500
    for length in (3, 4, 5, 6, 7, 500):
        for r in records("solve_equation", task.with_size(length, length), 20, length):
            assert r["difficulty"]["input_length"] == length
            assert task.check(r, r["target"])
    assert {r["input"].split()[0] for r in records("solve_equation", task.with_size(3, 3), 30)} == {"x"}
    with pytest.raises(ParamError):
        task.make_params({"min_length": 2})
    # Length 3: "x = v" (5 inputs); length 4: "- x = v" (5); length 7: "( a op b ) = v" has 2 * 2 * 5 * 5.
    assert task.input_space_size(task.with_size(3, 4)) == 10
    assert task.input_space_size(task.with_size(7, 7)) == 2 * 2 * 5 * 5


