"""multiplication, modular_operation, variable_binding and pointer_chasing; addition regression."""

from __future__ import annotations

import hashlib
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gengap.generators import BlockPlan, ParamError, get_task
from gengap.generators.tasks.reasoning import distinct_draws, variable_name

MUL = get_task("multiplication")
MOD = get_task("modular_operation")
VB = get_task("variable_binding")
PC = get_task("pointer_chasing")


def rec(text: str, **meta: object) -> dict:
    return {"input": text, "meta": meta} if meta else {"input": text}


def records(task, params, n: int = 300, seed: int = 0) -> list[dict]:
    return list(task.generate(np.random.default_rng(seed), n, params).records(task.name))


# -- addition stays byte-identical after the helpers were shared --------------------------

# sha256 of "input\ttarget" lines of `gengap generate addition --n 2000 --seed 3
# --param format=F`, taken before multiplication was added
ADDITION_DIGESTS = {
    "plain": "3aae93d4643acf872120226cdce3bdf0",
    "reversed": "121dadb9ff09d5ff16c01278707deb10",
    "index_hints": "4452c3b44facfebf3172fb0b0949cd5d",
}


@pytest.mark.parametrize("fmt", sorted(ADDITION_DIGESTS))
def test_addition_output_is_unchanged(fmt: str) -> None:
    task = get_task("addition")
    plan = BlockPlan("addition", task.default_params().replace(format=fmt), 2000, 3)
    lines = [
        r["input"] + "\t" + r["target"] for batch in plan.batches() for r in batch.records("addition")
    ]
    assert hashlib.sha256("\n".join(lines).encode()).hexdigest()[:32] == ADDITION_DIGESTS[fmt]


# -- multiplication --------------------------------------------------------------------


def test_multiplication_hand_worked() -> None:
    assert MUL.solve(rec("1 2 * 3 4", format="plain")) == "4 0 8"
    assert MUL.solve(rec("1 2 * 3 4", format="reversed")) == "8 0 4"
    assert MUL.solve(rec("p1 1 p0 2 * p1 3 p0 4", format="index_hints")) == "p2 4 p1 0 p0 8"
    assert MUL.solve(rec("9 9 9 * 9 9 9", format="plain")) == "9 9 8 0 0 1"
    assert MUL.solve(rec("0 * 7 5", format="reversed")) == "0"
    assert MUL.solve(rec("p0 0 * p1 7 p0 5", format="index_hints")) == "p0 0"
    assert MUL.check(rec("1 2 * 3 4", format="plain"), "4 0 8")
    for wrong in ("4 0 9", "8 0 4", "4 0", "4 0 8 0"):
        assert not MUL.check(rec("1 2 * 3 4", format="plain"), wrong)


@pytest.mark.parametrize(
    "text,fmt",
    [("1 2 + 3 4", "plain"), ("1 * 2 * 3", "plain"), ("* 3", "plain"), ("1 x * 3", "plain"),
     ("p0 1 p0 2 * p0 3", "index_hints"), ("1 * 2", "octal")],
)
def test_multiplication_rejects_malformed_inputs(text: str, fmt: str) -> None:
    with pytest.raises(ValueError):
        MUL.solve(rec(text, format=fmt))
    assert not MUL.check(rec(text, format=fmt), "2")


@pytest.mark.parametrize("fmt", ["plain", "reversed", "index_hints"])
def test_multiplication_generated_examples(fmt: str) -> None:
    params = MUL.default_params().replace(
        min_digits_a=1, max_digits_a=12, min_digits_b=1, max_digits_b=5, format=fmt
    )
    for r in records(MUL, params, 400):
        digits = [t for t in r["input"].split() if not t.startswith("p")]
        split = digits.index("*")
        a, b = "".join(digits[:split]), "".join(digits[split + 1 :])
        assert (a == "0" or a[0] != "0") and (b == "0" or b[0] != "0")
        product = str(int(a) * int(b))
        written = [t for t in r["target"].split() if not t.startswith("p")]
        assert "".join(written if fmt != "reversed" else written[::-1]) == product
        d = r["difficulty"]
        assert (d["digits_a"], d["digits_b"]) == (len(a), len(b))
        assert 1 <= len(a) <= 12 and 1 <= len(b) <= 5
        assert d["partial_products"] == (0 if a == "0" else sum(c != "0" for c in b))
        assert r["meta"] == {"format": fmt}


def test_multiplication_edges_and_levels() -> None:
    one = MUL.with_size(1, 1)
    assert all(r["difficulty"]["input_length"] == 3 for r in records(MUL, one, 100))
    wide = MUL.with_size(300, 300).replace(format="index_hints")
    for r in records(MUL, wide, 3):
        assert MUL.check(r, r["target"])
        assert r["target"].split()[0] in ("p599", "p598")
    assert MUL.input_space_size(MUL.with_size(1, 2)) == 100 * 100
    lows = [p.min_digits_a for p in MUL.levels().values()]
    assert lows == sorted(lows)


def test_multiplication_parameter_errors() -> None:
    with pytest.raises(ParamError):
        MUL.default_params().replace(min_digits_a=5, max_digits_a=4)
    with pytest.raises(ParamError):
        MUL.default_params().replace(format="octal")
    with pytest.raises(ParamError):
        MUL.default_params().replace(max_digits_b=0)


@given(a=st.integers(0, 10**30), b=st.integers(0, 10**30))
def test_multiplication_solve_matches_python(a: int, b: int) -> None:
    text = " ".join(str(a)) + " * " + " ".join(str(b))
    assert MUL.solve(rec(text, format="reversed")) == " ".join(str(a * b)[::-1])


# -- modular_operation -----------------------------------------------------------------


@pytest.mark.parametrize(
    "text,p,answer",
    [("3 + 5", 97, "8"), ("90 + 10", 97, "3"), ("3 - 5", 97, "95"), ("50 * 2", 97, "3"),
     ("90 / 47", 97, "37"), ("3 / 5", 7, "2"), ("0 / 1", 2, "0"), ("1 - 1", 2, "0")],
)
def test_modular_hand_worked(text: str, p: int, answer: str) -> None:
    assert MOD.solve(rec(text, p=p)) == answer
    assert MOD.check(rec(text, p=p), answer)
    assert not MOD.check(rec(text, p=p), str((int(answer) + 1) % p))


@pytest.mark.parametrize(
    "text,meta",
    [("3 / 0", {"p": 7}), ("7 + 1", {"p": 7}), ("03 + 1", {"p": 7}), ("3 % 1", {"p": 7}),
     ("3 + 1 + 1", {"p": 7}), ("3 + 1", {"p": 8}), ("3 + 1", {}), ("-1 + 1", {"p": 7})],
)
def test_modular_rejects_malformed_inputs(text: str, meta: dict) -> None:
    with pytest.raises(ValueError):
        MOD.solve(rec(text, **meta))


@pytest.mark.parametrize("op", ["+", "-", "*", "/"])
def test_modular_enumerate_is_the_full_table(op: str) -> None:
    params = MOD.default_params().replace(p=7, op=op)
    batch = MOD.enumerate(params)
    rows = list(batch.records(MOD.name))
    assert len(rows) == MOD.input_space_size(params) == (42 if op == "/" else 49)
    inputs = [r["input"] for r in rows]
    assert len(set(inputs)) == len(inputs)
    start = 1 if op == "/" else 0
    assert inputs[:2] == [f"0 {op} {start}", f"0 {op} {start + 1}"]
    assert inputs[-1] == f"6 {op} 6"
    for r in rows:
        assert r["meta"] == {"p": 7} and r["difficulty"]["modulus"] == 7
        assert MOD.check(r, r["target"])


def test_modular_generation_and_division_never_by_zero() -> None:
    for r in records(MOD, MOD.default_params().replace(p=2, op="/"), 200):
        assert r["input"].split()[2] == "1"
    rows = records(MOD, MOD.default_params(), 2000)
    xs = {int(r["input"].split()[0]) for r in rows}
    assert xs == set(range(97))
    assert all(r["difficulty"]["input_length"] == 3 and r["difficulty"]["output_length"] == 1 for r in rows)


def test_modular_params_levels_and_size() -> None:
    for p in (1, 4, 91, 100):
        with pytest.raises(ParamError):
            MOD.default_params().replace(p=p)
    with pytest.raises(ParamError):
        MOD.default_params().replace(op="%")
    assert MOD.with_size(20, 30).p == 29
    assert MOD.with_size(41, 500).p == 499
    with pytest.raises(ParamError):
        MOD.with_size(24, 28)
    moduli = [p.p for p in MOD.levels().values()]
    assert moduli == sorted(set(moduli)) and moduli[-1] == 97


# -- variable_binding --------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,values,answer",
    [
        ("a = 1 ; b = a ; c = b ; ? c", 2, "1"),
        ("a = 1 ; ? a", 2, "1"),
        ("c = b ; x = 0 ; b = a ; y = x ; a = 1 ; ? y", 2, "0"),
        ("c = b ; x = 0 ; b = a ; y = x ; a = 1 ; ? c", 2, "1"),
        ("a = 1 ; b = - a ; ? b", 2, "0"),
        ("a = 3 ; b = - a ; ? b", 10, "6"),
        ("a = 3 ; b = - a ; c = - b ; ? c", 10, "3"),
        ("zz = 2 ; aaa = - zz ; ? aaa", 5, "2"),
    ],
)
def test_variable_binding_hand_worked(text: str, values: int, answer: str) -> None:
    assert VB.solve(rec(text, values=values)) == answer
    assert VB.check(rec(text, values=values), answer)
    assert not VB.check(rec(text, values=values), str((int(answer) + 1) % values))


@pytest.mark.parametrize(
    "text,meta",
    [
        ("a = 1 ; a = 0 ; ? a", {"values": 2}),  # assigned twice
        ("a = b ; b = a ; ? a", {"values": 2}),  # cycle
        ("a = b ; ? a", {"values": 2}),  # never assigned
        ("a = 5 ; ? a", {"values": 2}),  # value out of range
        ("a = - 1 ; ? a", {"values": 2}),  # negated literal
        ("a 1 ; ? a", {"values": 2}),
        ("a = 1 ? a", {"values": 2}),
        ("a = 1 ; ?", {"values": 2}),
        ("A = 1 ; ? A", {"values": 2}),
        ("a = 1 ; ? a", {}),
    ],
)
def test_variable_binding_rejects_malformed_inputs(text: str, meta: dict) -> None:
    with pytest.raises(ValueError):
        VB.solve(rec(text, **meta))


def _statements(text: str) -> tuple[list[list[str]], str]:
    tokens = text.split()
    body, asked = tokens[:-2], tokens[-1]
    out, current = [], []
    for token in body:
        if token == ";":
            out.append(current)
            current = []
        else:
            current.append(token)
    return out, asked


@pytest.mark.parametrize("negation", [False, True])
def test_variable_binding_structure(negation: bool) -> None:
    params = VB.default_params().replace(min_hops=2, max_hops=6, distractor_chains=2, values=3, negation=negation)
    query_positions, root_positions, negations = Counter(), Counter(), 0
    for r in records(VB, params, 400):
        statements, asked = _statements(r["input"])
        hops = r["difficulty"]["hops"]
        assert len(statements) == 3 * (hops + 1)
        assert r["difficulty"]["distractors"] == 2 * (hops + 1)
        defined = [s[0] for s in statements]
        assert len(set(defined)) == len(defined)
        assert all(name.isalpha() and name.islower() for name in defined)
        source = {s[0]: s for s in statements}
        chain, name = 0, asked
        while not source[name][-1].isdigit():
            negations += source[name][2] == "-"
            name, chain = source[name][-1], chain + 1
        assert chain == hops
        assert 0 <= int(r["target"]) < 3 and r["meta"] == {"values": 3}
        query_positions[defined.index(asked) * 4 // len(defined)] += 1
        root_positions[defined.index(name) * 4 // len(defined)] += 1
    # statements are shuffled: the query and its root land in every quarter of the program
    assert min(query_positions.values()) > 50 and min(root_positions.values()) > 50
    assert (negations > 0) == negation


def test_variable_binding_sizes_and_params() -> None:
    big = VB.with_size(500, 500)
    assert big.name_pool == 501 * 4
    r = records(VB, big, 2)[0]
    assert VB.check(r, r["target"]) and r["difficulty"]["hops"] == 500
    assert any(len(t) == 3 and t.isalpha() for t in r["input"].split())
    with pytest.raises(ParamError):
        VB.default_params().replace(name_pool=10)  # 4 chains of up to 9 names need 36
    with pytest.raises(ParamError):
        VB.default_params().replace(min_hops=5, max_hops=4)
    with pytest.raises(ParamError):
        VB.default_params().replace(values=11)
    tight = VB.default_params().replace(min_hops=3, max_hops=3, distractor_chains=0, name_pool=4)
    for r in records(VB, tight, 50):
        assert sorted(s[0] for s in _statements(r["input"])[0]) == ["a", "b", "c", "d"]
    hops = [(p.min_hops, p.max_hops) for p in VB.levels().values()]
    assert hops == sorted(hops) and hops[0] == (1, 1)


def test_variable_names() -> None:
    assert [variable_name(i) for i in (0, 25, 26, 27, 701, 702)] == ["a", "z", "aa", "ab", "zz", "aaa"]


@pytest.mark.parametrize("pool,k", [(50, 5), (20, 15), (7, 7)])
def test_distinct_draws(pool: int, k: int) -> None:
    draws = distinct_draws(np.random.default_rng(1), 3000, pool, k)
    assert draws.shape == (3000, k)
    assert all(len(set(row)) == k for row in draws.tolist())
    assert draws.min() >= 0 and draws.max() < pool
    counts = np.bincount(draws[:, 0], minlength=pool)  # first pick uniform over the pool
    assert counts.min() > 3000 / pool * 0.5
    counts = np.bincount(draws.ravel(), minlength=pool)
    assert counts.min() > 3000 * k / pool * 0.8


# -- pointer_chasing ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,answer",
    [
        ("3 7 7 3 5 7 ? 5 2", "3"),
        ("3 7 7 3 5 7 ? 5 1", "7"),
        ("0 1 1 2 2 1 ? 0 5", "1"),
        ("0 1 1 2 2 1 ? 0 1", "1"),
        ("1 2 2 1 ? 1 1000001", "2"),
        ("4 4 ? 4 3", "4"),
    ],
)
def test_pointer_chasing_hand_worked(text: str, answer: str) -> None:
    assert PC.solve(rec(text)) == answer
    assert PC.check(rec(text), answer)
    assert not PC.check(rec(text), answer + "0")


@pytest.mark.parametrize(
    "text",
    ["3 7 7 ? 3 2", "3 7 3 1 ? 3 1", "3 7 ? 3 2", "3 7 7 3 ? 9 1", "3 7 7 3 ? 3 x", "3 7 7 3 3 1", "? 3 1"],
)
def test_pointer_chasing_rejects_malformed_inputs(text: str) -> None:
    with pytest.raises(ValueError):
        PC.solve(rec(text))


@given(
    table=st.lists(st.integers(0, 5), min_size=1, max_size=6).filter(lambda t: max(t) < len(t)),
    start=st.integers(0, 5),
    hops=st.integers(1, 40),
)
def test_pointer_chasing_cycle_skip_matches_naive_walk(table: list[int], start: int, hops: int) -> None:
    start %= len(table)
    text = " ".join(f"{i} {v}" for i, v in enumerate(table)) + f" ? {start} {hops}"
    node = start
    for _ in range(hops):
        node = table[node]
    assert PC.solve(rec(text)) == str(node)


@pytest.mark.parametrize("mapping", ["function", "permutation"])
def test_pointer_chasing_structure(mapping: str) -> None:
    params = PC.default_params().replace(
        min_table_size=3, max_table_size=12, min_hops=1, max_hops=9, mapping=mapping, node_labels=40
    )
    for r in records(PC, params, 300):
        tokens = r["input"].split()
        size = r["difficulty"]["table_size"]
        assert 3 <= size <= 12 and len(tokens) == 2 * size + 3
        keys, values = tokens[0 : 2 * size : 2], tokens[1 : 2 * size : 2]
        assert len(set(keys)) == size and set(values) <= set(keys)
        assert all(0 <= int(k) < 40 for k in keys)
        if mapping == "permutation":
            assert sorted(values) == sorted(keys)
        assert tokens[-3] == "?" and tokens[-2] in keys
        assert int(tokens[-1]) == r["difficulty"]["hops"]
        assert r["target"] in keys


def test_pointer_chasing_sizes_and_params() -> None:
    assert PC.with_size(2000, 2000).node_labels == 2000
    r = records(PC, PC.with_size(40, 40), 5)[0]
    assert r["difficulty"]["input_length"] == 83
    one = PC.default_params().replace(min_table_size=1, max_table_size=1, node_labels=1)
    for r in records(PC, one, 10):
        assert r["input"].split()[:3] == ["0", "0", "?"] and r["target"] == "0"
    with pytest.raises(ParamError):
        PC.default_params().replace(node_labels=10)
    with pytest.raises(ParamError):
        PC.default_params().replace(min_hops=9, max_hops=8)
    with pytest.raises(ParamError):
        PC.default_params().replace(mapping="tree")
    levels = PC.levels()
    assert levels[10].max_table_size == 250 and levels[1].min_hops == 1


@pytest.mark.parametrize("task_name", ["addition", "multiplication"])
def test_the_reversed_format_checker_accepts_exactly_the_reversed_answer(task_name: str) -> None:
    """Lee et al. 2023's format: the answer's digits least significant first; the checker recomputes it
    from the input (independently here: int arithmetic) and takes nothing else, the plain order included."""
    task = get_task(task_name)
    params = task.default_params().replace(min_digits_a=1, max_digits_a=8, min_digits_b=1, max_digits_b=8, format="reversed")
    op = (lambda a, b: a + b) if task_name == "addition" else (lambda a, b: a * b)
    for r in records(task, params, 300):
        digits = r["input"].split()
        mark = digits.index("+" if task_name == "addition" else "*")
        value = str(op(int("".join(digits[:mark])), int("".join(digits[mark + 1 :]))))
        assert task.check(r, " ".join(reversed(value)))
        if value != value[::-1]:
            assert not task.check(r, " ".join(value))  # the plain order is wrong in this format
        assert not task.check(r, " ".join(reversed(value)) + " 0")  # a trailing zero is another number


@pytest.mark.parametrize("task_name", ["addition", "multiplication"])
@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), top=st.integers(1, 12))
def test_the_little_endian_format_writes_every_number_least_significant_first(task_name: str, seed: int, top: int) -> None:
    """McLeish et al. 2024's format: operands and answer least significant digit first. Read here
    independently (int arithmetic on the reversed digit strings): the operands have no trailing zero
    (no leading zero once reversed), the target is the reversed result, the checker takes exactly it
    (not the plain order, nor the operands read the other way)."""
    task = get_task(task_name)
    params = task.default_params().replace(min_digits_a=1, max_digits_a=top, min_digits_b=1, max_digits_b=top, format="little_endian")
    op = (lambda a, b: a + b) if task_name == "addition" else (lambda a, b: a * b)
    batch = task.generate(np.random.default_rng(seed), 60, params)
    for r in batch.records(task_name):
        digits = r["input"].split()
        mark = digits.index("+" if task_name == "addition" else "*")
        a, b = "".join(digits[:mark])[::-1], "".join(digits[mark + 1 :])[::-1]
        assert (len(a) == 1 or a[0] != "0") and (len(b) == 1 or b[0] != "0")
        assert r["difficulty"]["digits_a"] == len(a) and r["difficulty"]["digits_b"] == len(b)
        value = str(op(int(a), int(b)))
        assert r["target"] == " ".join(reversed(value))
        assert task.check(r, r["target"])
        if value != value[::-1]:
            assert not task.check(r, " ".join(value))
        misread = str(op(int(a[::-1]), int(b[::-1])))
        if misread != value:
            assert not task.check(r, " ".join(reversed(misread)))  # the operands read most significant first
