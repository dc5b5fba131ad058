"""Trace formats: every trace passes its checker, corrupted steps and wrong answers are caught,
answer-only output is unchanged, and the trace's last state agrees with the independent solver."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gengap.generators import Task, get_task, record_id, task_names
from gengap.generators.blocks import BlockPlan
from gengap.generators.params import ParamError
from gengap.generators.traces import SEPARATOR, split_target, trace_format
from gengap.checking import record_problem

# every traced task and its formats, written out here (not read from the code)
TRACED = {
    "addition": ("coarse", "fine", "inductive"),
    "multiplication": ("coarse", "fine"),
    "parity_check": ("coarse", "fine", "inductive"),
    "binary_addition": ("coarse", "fine", "inductive", "index_hints"),
    "cycle_navigation": ("coarse", "fine", "inductive"),
    "stack_manipulation": ("coarse", "fine"),
    "modular_arithmetic": ("coarse", "fine"),
    "bucket_sort": ("coarse", "fine", "inductive"),
    "variable_binding": ("coarse", "fine"),
    "pointer_chasing": ("coarse", "fine"),
    "listops": ("coarse", "fine"),
    "prefix_sums": ("inductive",),
    "reverse_string": ("inductive", "index_hints"),
    "duplicate_string": ("index_hints",),
    "odds_first": ("index_hints",),
    "scan": ("least_to_most",),
    "cogs_like": ("least_to_most",),
}
PAIRS = [(name, fmt) for name, formats in TRACED.items() for fmt in formats]
FORMATS = ("coarse", "fine")
# (task, format) whose trace can be empty: coarse ones (fewer than 4 steps), a stack without
# actions, a command or sentence without a smaller sub-command or sub-phrase
MAY_BE_EMPTY = {"stack_manipulation", "scan", "cogs_like"}


def traced_records(name: str, fmt: str, lo: int, width: int, seed: int, n: int = 12) -> list[dict]:
    """n records of task name with size knob lo..lo+width and the trace format fmt."""
    task = get_task(name)
    params = task.with_size(lo, lo + width).replace(trace=fmt)
    if name == "variable_binding":
        params = params.replace(negation=bool(seed % 2))
    return list(task.generate(np.random.default_rng(seed), n, params).records(name))


cases = st.tuples(st.sampled_from(PAIRS), st.integers(1, 8), st.integers(3, 10), st.integers(0, 2**32 - 1)).map(
    lambda c: (*c[0], *c[1:])
)


def test_the_traced_tasks_are_exactly_those_with_trace_formats() -> None:
    with_formats = {name for name in task_names() if get_task(name).trace_formats}
    assert with_formats == set(TRACED)
    for name, formats in TRACED.items():
        task = get_task(name)
        assert tuple(task.trace_formats) == formats and all(task.trace_formats.values())
        choices = next(row["choices"] for row in task.params_type.describe() if row["name"] == "trace")
        assert choices == ["none", *formats]  # the knob takes exactly the task's formats


@settings(max_examples=60, deadline=None)
@given(cases)
def test_every_trace_passes_its_checker_and_gengap_check(case) -> None:
    name, fmt, lo, width, seed = case
    task = get_task(name)
    for record in traced_records(name, fmt, lo, width, seed):
        assert record["meta"]["trace"] == fmt and trace_format(record) == fmt
        parts = split_target(record["target"])
        assert parts is not None and parts[1] == task.solve(record).split()
        assert task.check_parts(record, record["target"]) == (True, True)
        assert record_problem(record) is None
        assert record["difficulty"]["output_length"] == len(parts[0]) + 1 + len(parts[1])


def corrupt(trace: list[str], at: int, record: dict) -> list[str]:
    """trace with the token at position at replaced by another token the task could write."""
    vocabulary = sorted(set(trace) | set(record["input"].split()) | set("0123456789"))
    other = next(t for t in vocabulary if t != trace[at] and t != SEPARATOR)
    return trace[:at] + [other] + trace[at + 1 :]


@settings(max_examples=60, deadline=None)
@given(cases, st.integers(0, 10_000))
def test_a_corrupted_step_is_rejected_though_the_answer_is_right(case, where: int) -> None:
    name, fmt, lo, width, seed = case
    task = get_task(name)
    corrupted = 0
    for record in traced_records(name, fmt, lo, width, seed):
        trace, answer = split_target(record["target"])
        if not trace:
            continue
        changed = corrupt(trace, where % len(trace), record)
        prediction = " ".join([*changed, SEPARATOR, *answer])
        assert task.check_parts(record, prediction) == (True, False)
        assert not task.check(record, prediction)
        forged = {**record, "target": prediction, "id": record_id(name, record["input"], prediction)}
        assert "is not the computation of input" in record_problem(forged)  # what gengap check says
        dropped = " ".join([*trace[:-1], SEPARATOR, *answer])  # a missing last step
        assert task.check_parts(record, dropped) == (True, False)
        corrupted += 1
    assert corrupted or fmt == "coarse" or name in MAY_BE_EMPTY  # the other traces are never empty


@settings(max_examples=40, deadline=None)
@given(cases)
def test_a_wrong_answer_is_rejected_though_the_trace_is_right(case) -> None:
    name, fmt, lo, width, seed = case
    task = get_task(name)
    for record in traced_records(name, fmt, lo, width, seed, n=6):
        trace, answer = split_target(record["target"])
        wrong = answer[:-1] + ["5" if answer[-1] != "5" else "6"]
        assert task.check_parts(record, " ".join([*trace, SEPARATOR, *wrong])) == (False, True)
        assert task.check_parts(record, " ".join(answer)) == (False, False)  # no separator
        assert task.check_parts(record, " ".join([*trace, *answer])) == (False, False)


@pytest.mark.parametrize("name", sorted(TRACED))
def test_trace_is_a_rendering_same_inputs_and_answers_and_none_is_unchanged(name: str) -> None:
    task = get_task(name)
    base = task.level(3)
    assert base.trace == "none"
    assert "trace" not in base.to_dict() and "trace" not in base.canonical()
    plain = [r for b in BlockPlan(name, base, 40, 11, block_size=16).batches() for r in b.records(name)]
    assert all("trace" not in (r.get("meta") or {}) and SEPARATOR not in r["target"].split() for r in plain)
    for fmt in TRACED[name]:
        traced_params = base.replace(trace=fmt)
        assert traced_params.canonical() == base.canonical()  # same seed key
        assert traced_params.to_dict() == {**base.to_dict(), "trace": fmt}
        traced = [r for b in BlockPlan(name, traced_params, 40, 11, block_size=16).batches() for r in b.records(name)]
        assert [r["input"] for r in traced] == [r["input"] for r in plain]
        assert [split_target(r["target"])[1] for r in traced] == [r["target"].split() for r in plain]
        assert [{k: v for k, v in r["meta"].items() if k != "trace"} for r in traced] == [r.get("meta") or {} for r in plain]


def test_bad_trace_values_are_one_line_errors() -> None:
    with pytest.raises(ParamError, match="parameter trace='medium' is not one of none, coarse, fine, inductive$"):
        get_task("parity_check").make_params({"trace": "medium"})
    with pytest.raises(ParamError, match="parameter trace='fine' is not one of none, least_to_most$"):
        get_task("scan").make_params({"trace": "fine"})  # a format another task has
    record = traced_records("parity_check", "fine", 3, 3, 0, n=1)[0]
    assert not get_task("parity_check").check({**record, "meta": {"trace": "medium"}}, record["target"])
    with pytest.raises(ValueError, match="meta.trace='medium'"):
        trace_format({"meta": {"trace": "medium"}})


# The last state of a fine trace, read back with rules written here (not the generators'),
# must agree with the independent solver.
def _answer_from_fine(name: str, trace: list[str], record: dict) -> str:
    if name in ("parity_check", "cycle_navigation", "pointer_chasing", "listops", "variable_binding"):
        return trace[-1]
    if name == "modular_arithmetic":
        return str((int(trace[-2]) + int(trace[-1])) % record["meta"]["modulus"])
    if name == "stack_manipulation":
        return "EMPTY" if trace[-2] == "0" else None  # height 0 <=> EMPTY; otherwise the top is checked below
    if name == "multiplication":
        comma = max(i for i, token in enumerate(trace) if token == ",")
        return "".join(trace[comma + 1 : -1])  # the last running total, before the final ';'
    if name in ("addition", "binary_addition"):
        sums, last_carry = trace[3::5], trace[-1]
        return "".join(reversed(sums + [last_carry])).lstrip("0") or "0"
    if name == "bucket_sort":
        counts = trace[len(record["input"].split()) :]
        return " ".join(s for s, c in zip(counts[0::2], counts[1::2]) for _ in range(int(c)))
    raise AssertionError(name)


@settings(max_examples=40, deadline=None)
@given(cases)
def test_the_fine_trace_ends_in_the_solvers_answer(case) -> None:
    name, _, lo, width, seed = case
    if "fine" not in TRACED[name]:
        return
    task = get_task(name)
    for record in traced_records(name, "fine", lo, width, seed, n=6):
        trace, answer = split_target(record["target"])
        solved = task.solve(record)
        if not trace:  # only a stack without actions has no step to write
            assert name == "stack_manipulation" and len(record["input"].split()) == 1
            continue
        read = _answer_from_fine(name, trace, record)
        if name == "stack_manipulation":
            assert (read == "EMPTY") == (solved == "EMPTY")
            if solved != "EMPTY":
                assert trace[-1] == solved.split()[0] and int(trace[-2]) == len(solved.split())
        elif name in ("addition", "multiplication"):
            assert record["meta"]["format"] == "plain" and read == "".join(solved.split())
        elif name == "binary_addition":
            assert read == "".join(reversed(solved.split()))  # the answer is little-endian
        else:
            assert read.split() == solved.split()


def test_coarse_writes_fewer_states_than_fine() -> None:
    for name in (name for name, formats in TRACED.items() if "coarse" in formats):
        coarse = traced_records(name, "coarse", 6, 6, 5, n=8)
        fine = traced_records(name, "fine", 6, 6, 5, n=8)
        assert [r["input"] for r in coarse] == [r["input"] for r in fine]
        shorter = [len(split_target(c["target"])[0]) < len(split_target(f["target"])[0]) for c, f in zip(coarse, fine)]
        assert sum(shorter) >= len(shorter) // 2, name
        assert all(len(split_target(c["target"])[0]) <= len(split_target(f["target"])[0]) for c, f in zip(coarse, fine))


def test_examples_of_each_format_are_as_documented() -> None:
    parity = get_task("parity_check")
    record = {"input": "1 0 1 1 0 1 1 1 1", "meta": {"trace": "fine"}}
    assert parity.trace_tokens(record, "fine") == "1 1 0 1 1 0 1 0 1".split()
    assert parity.trace_tokens(record, "coarse") == ["1", "0"]  # after bits 4 and 8
    addition = get_task("addition")
    record = {"input": "9 5 + 7", "meta": {"format": "reversed"}}
    assert addition.trace_tokens(record, "coarse") == "2 1 0 1".split()  # 5+7=12: 2 carry 1; 9+0+1=10: 0 carry 1
    assert addition.trace_tokens(record, "fine") == "5 7 0 2 1 9 0 1 0 1".split()
    multiplication = get_task("multiplication")
    record = {"input": "1 2 * 3 4", "meta": {"format": "plain"}}
    assert multiplication.trace_tokens(record, "coarse") == "4 8 ; 3 6 ;".split()
    assert multiplication.trace_tokens(record, "fine") == "4 8 , 4 8 ; 3 6 , 4 0 8 ;".split()
    modular = get_task("modular_arithmetic")
    record = {"input": "2 * 3 - 4 + 1", "meta": {"modulus": 5}}
    assert modular.trace_tokens(record, "coarse") == ["1", "1", "1"]  # 6 mod 5, -4 mod 5, 1
    assert modular.trace_tokens(record, "fine") == "0 2 0 1 1 1 2 1".split()
    stack = get_task("stack_manipulation")
    record = {"input": "1 0 POP POP POP PUSH1"}
    assert stack.trace_tokens(record, "coarse") == "1 0 0 1".split()
    assert stack.trace_tokens(record, "fine") == "1 1 0 EMPTY 0 EMPTY 1 1".split()
    buckets = get_task("bucket_sort")
    assert buckets.trace_tokens({"input": "2 0 2 2"}, "coarse") == "0 1 2 3".split()
    assert buckets.trace_tokens({"input": "2 0 2 2"}, "fine") == "1 1 2 3 0 1 2 3".split()
    binding = get_task("variable_binding")
    record = {"input": "b = 3 ; c = - b ; a = c ; ? a", "meta": {"values": 10}}
    assert binding.trace_tokens(record, "coarse") == "a c - b 3".split()
    assert binding.trace_tokens(record, "fine") == "a c - b 3 3 6 6".split()
    pointers = get_task("pointer_chasing")
    record = {"input": "3 7 7 3 5 7 ? 5 5"}
    assert pointers.trace_tokens(record, "fine") == "7 3 7 3 7".split()
    assert pointers.trace_tokens(record, "coarse") == ["3"]
    listops = get_task("listops")
    record = {"input": "[MAX 2 [MIN 4 7 ] [SM 5 6 ] ]"}
    assert listops.trace_tokens(record, "coarse") == "4 1".split()
    assert listops.trace_tokens(record, "fine") == "4 1 4".split()
    cycle = get_task("cycle_navigation")
    assert cycle.trace_tokens({"input": "R R L S R", "meta": {"cycle_length": 3}}, "fine") == "1 2 1 1 2".split()
    binary = get_task("binary_addition")
    assert binary.trace_tokens({"input": "1 1 + 1"}, "coarse") == "0 1 0 1".split()


def test_gengap_list_shows_every_format(capsys: pytest.CaptureFixture[str]) -> None:
    from gengap.cli import main

    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name, formats in TRACED.items():
        section = ("\n" + out).split(f"\n{name}  [", 1)[1].split("\n    levels:", 1)[0]
        for fmt in formats:
            assert f"trace={fmt}: {get_task(name).trace_formats[fmt]}" in section
    assert main(["list", "--json"]) == 0
    described = {t["name"]: t for t in json.loads(capsys.readouterr().out)}
    assert described["listops"]["traces"] == get_task("listops").trace_formats
    assert described["scan"]["traces"] == get_task("scan").trace_formats
    assert described["even_pairs"]["traces"] == {}


VERIFIED_APART = ("addition", "binary_addition", "multiplication", "modular_arithmetic", "variable_binding")


@pytest.mark.parametrize("name", VERIFIED_APART)
def test_checkers_written_apart_from_the_builders_agree_with_them(name: str) -> None:
    task = get_task(name)
    assert type(task).verify_trace is not Task.verify_trace  # its own check, not the builder comparison
    for fmt in TRACED[name]:
        for record in traced_records(name, fmt, 2, 6, 3, n=30):
            built = task.trace_tokens(record, fmt)
            assert task.verify_trace(record, built, fmt)
            for at in range(len(built)):  # every single-token change is caught
                assert not task.check_trace(record, corrupt(built, at, record), fmt)
            assert not task.check_trace(record, built + built[-1:], fmt)  # an extra step


def test_column_checks_catch_an_inconsistent_carry() -> None:
    addition = get_task("addition")
    record = {"input": "9 5 + 7", "meta": {"format": "plain", "trace": "fine"}}
    assert addition.check_trace(record, "5 7 0 2 1 9 0 1 0 1".split(), "fine")
    assert not addition.check_trace(record, "5 7 0 2 1 9 0 0 9 0".split(), "fine")  # drops the carry in
    assert not addition.check_trace(record, "2 1 9 0".split(), "coarse")  # 9 + 0 + 1 is not 9
