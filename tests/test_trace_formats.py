"""The trace formats from the literature: inductive states, index hints, least-to-most
decompositions. Each trace is re-read here with rules written apart from the builders (every
inductive state from the previous one and the input, every hint against the input, every
sub-problem against the solver), and the steps the process labels judge are the format's steps."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gengap.generators import get_task
from gengap.generators.tasks.cogs_like import parse_sentence, split_logical_form
from gengap.generators.tasks._cogs_grammar import interpret
from gengap.generators.traces import SEPARATOR, STATE, SUB_ANSWER, SUB_END, is_hint, split_target
from tests.test_traces import PAIRS, TRACED, traced_records

INDUCTIVE = sorted(name for name, formats in TRACED.items() if "inductive" in formats)
HINTED = sorted(name for name, formats in TRACED.items() if "index_hints" in formats)
sizes = st.tuples(st.integers(1, 8), st.integers(3, 8), st.integers(0, 2**32 - 1))


def _states(trace: list[str]) -> list[list[str]]:
    """The states of an inductive trace: what follows each '#'."""
    assert not trace or trace[0] == "#"
    states: list[list[str]] = []
    for token in trace:
        if token == "#":
            states.append([])
        else:
            states[-1].append(token)
    return states


def _operands(record: dict, op: str) -> tuple[list[int], list[int], int]:
    """Little-endian digits of both operands and the base, read from the input here."""
    tokens = record["input"].split()
    if record["task"] == "binary_addition":
        cut = tokens.index(op)
        return [int(t) for t in tokens[:cut]], [int(t) for t in tokens[cut + 1 :]], 2
    if record["meta"]["format"] == "index_hints":
        tokens = [t for t in tokens if not is_hint(t)]
    cut = tokens.index(op)
    return [int(t) for t in reversed(tokens[:cut])], [int(t) for t in reversed(tokens[cut + 1 :])], 10


def _inductive_ok(record: dict, states: list[list[str]], answer: list[str]) -> bool:
    """Every state follows from the previous state and the input, and the last gives the answer."""
    name, tokens = record["task"], record["input"].split()
    if name in ("parity_check", "prefix_sums", "cycle_navigation"):
        step = {"L": -1, "S": 0, "R": 1}
        cycle = record.get("meta", {}).get("cycle_length")
        value, values = 0, []
        for token, state in zip(tokens, states, strict=True):
            value = (value + step[token]) % cycle if cycle else value ^ int(token)
            values.append(str(value))
            if state != [token, str(value)]:
                return False
        return (values if name == "prefix_sums" else values[-1:]) == answer
    if name == "bucket_sort":
        counts: dict[str, int] = {}
        for token, state in zip(tokens, states, strict=True):
            counts[token] = counts.get(token, 0) + 1
            if state != [token, *[v for s in sorted(counts) for v in (s, str(counts[s]))]]:
                return False
        return sorted(tokens) == answer
    if name in ("addition", "binary_addition"):
        a, b, base = _operands(record, "+")
        carry = 0
        for j, state in enumerate(states):
            x, y = (a[j] if j < len(a) else 0), (b[j] if j < len(b) else 0)
            written = [int(t) for t in state]
            if written[:2] != [x, y] or written[2] + base * written[3] != x + y + carry or written[3] > 1:
                return False
            carry = written[3]
        return len(states) == max(len(a), len(b))
    if name == "reverse_string":
        expected = len(tokens) - 1
        for position, symbol in states:
            if int(position) != expected or tokens[expected] != symbol:
                return False
            expected -= 1
        return expected == -1 and [s for _, s in states] == answer
    raise AssertionError(name)


@settings(max_examples=50, deadline=None)
@given(st.sampled_from(INDUCTIVE), sizes)
def test_every_inductive_state_follows_from_the_previous_and_the_input(name: str, size) -> None:
    lo, width, seed = size
    for record in traced_records(name, "inductive", lo, width, seed, n=8):
        trace, answer = split_target(record["target"])
        states = _states(trace)
        assert _inductive_ok(record, states, answer)
        if len(states) > 1:  # a state changed is caught by the independent reading and the checker
            bad = [list(s) for s in states]
            bad[len(bad) // 2][-1] = "9" if bad[len(bad) // 2][-1] != "9" else "0"
            forged = [t for s in bad for t in ("#", *s)]
            assert not _inductive_ok(record, bad, answer)
            assert get_task(name).check_parts(record, " ".join([*forged, SEPARATOR, *answer])) == (True, False)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(HINTED), sizes)
def test_every_index_hint_names_the_input_position_it_reads(name: str, size) -> None:
    lo, width, seed = size
    for record in traced_records(name, "index_hints", lo, width, seed, n=8):
        trace, answer = split_target(record["target"])
        hints = [int(t[1:]) for t in trace if is_hint(t)]
        steps = len(hints)
        assert steps and all(is_hint(trace[i]) for i in range(0, len(trace), len(trace) // steps))
        if name == "binary_addition":  # per column: p<j>, sum bit, carry; the sum read back is the answer
            assert hints == list(range(steps))
            bits = trace[1::3] + trace[-1:]
            assert "".join(bits).rstrip("0") or "0" == "".join(answer)
            continue
        symbols = record["input"].split()
        read = trace[1::2]
        assert [symbols[h] for h in hints] == read == answer  # each hint is the position of the symbol copied


def test_addition_index_hints_are_the_trace_layer_hint_tokens() -> None:
    """addition's format: index_hints writes the hint tokens of the index_hints traces (reused, one notation)."""
    task = get_task("addition")
    params = task.with_size(2, 5).replace(format="index_hints", trace="inductive")
    for record in task.generate(np.random.default_rng(4), 10, params).records("addition"):
        trace, answer = split_target(record["target"])
        hints = [t for t in record["input"].split() + answer if t.startswith("p")]
        assert hints and all(is_hint(t) for t in hints)
        assert answer[0] == f"p{len(answer) // 2 - 1}" and answer[-2] == "p0"
        assert _inductive_ok(record, _states(trace), answer)


def test_examples_of_the_new_formats_are_as_documented() -> None:
    assert get_task("parity_check").trace_tokens({"input": "1 0 1"}, "inductive") == "# 1 1 # 0 1 # 1 0".split()
    addition = {"input": "9 5 + 7", "meta": {"format": "plain"}}
    assert get_task("addition").trace_tokens(addition, "inductive") == "# 5 7 2 1 # 9 0 0 1".split()  # 5+7 = 2 carry 1
    assert get_task("binary_addition").trace_tokens({"input": "1 1 + 1"}, "index_hints") == "p0 0 1 p1 0 1".split()
    assert get_task("reverse_string").trace_tokens({"input": "0 1 1"}, "inductive") == "# 2 1 # 1 1 # 0 0".split()
    assert get_task("reverse_string").trace_tokens({"input": "0 1 1"}, "index_hints") == "p2 1 p1 1 p0 0".split()
    assert get_task("odds_first").trace_tokens({"input": "3 4 5"}, "index_hints") == "p0 3 p2 5 p1 4".split()
    assert get_task("duplicate_string").trace_tokens({"input": "1 0"}, "index_hints") == "p0 1 p1 0 p0 1 p1 0".split()
    cycle = {"input": "R L L", "meta": {"cycle_length": 3}}
    assert get_task("cycle_navigation").trace_tokens(cycle, "inductive") == "# R 1 # L 0 # L 2".split()
    assert get_task("bucket_sort").trace_tokens({"input": "2 0 2"}, "inductive") == "# 2 2 1 # 0 0 1 2 1 # 2 0 1 2 2".split()
    assert get_task("prefix_sums").trace_tokens({"input": "1 1"}, "inductive") == "# 1 1 # 1 0".split()
    scan = get_task("scan").trace_tokens({"input": "jump twice after walk left"}, "least_to_most")
    assert " ".join(scan) == "jump = I_JUMP | jump twice = I_JUMP I_JUMP | walk left = I_TURN_LEFT I_WALK |"
    assert get_task("scan").trace_tokens({"input": "walk"}, "least_to_most") == []  # nothing smaller
    cogs = get_task("cogs_like").trace_tokens({"input": "Emma said that the cat on a mat slept ."}, "least_to_most")
    assert " ".join(cogs) == (
        "the cat on a mat = * cat ( x _ 4 ) ; cat . nmod . on ( x _ 4 , x _ 7 ) AND mat ( x _ 7 ) | "
        "the cat on a mat slept = * cat ( x _ 4 ) ; cat . nmod . on ( x _ 4 , x _ 7 ) AND mat ( x _ 7 ) "
        "AND sleep . agent ( x _ 8 , x _ 4 ) |"
    )


def _subproblems(trace: list[str]) -> list[tuple[list[str], list[str]]]:
    text = " ".join(trace)
    assert not trace or trace[-1] == "|"
    parts = [p.strip() for p in text.split("|")[:-1]]
    return [(p.split(" = ")[0].split(), p.split(" = ")[1].split()) for p in parts]


def _span(words: list[str], part: list[str]) -> int:
    """Where part occurs in words (its only occurrence, as a contiguous run)."""
    starts = [i for i in range(len(words) - len(part) + 1) if words[i : i + len(part)] == part]
    assert starts, part
    return starts[0]


def _shifted(form: str, by: int) -> str:
    tokens = form.split()
    return " ".join(str(int(t) + by) if i >= 2 and tokens[i - 1] == "_" and tokens[i - 2] == "x" else t for i, t in enumerate(tokens))


@settings(max_examples=30, deadline=None)
@given(sizes)
def test_scan_sub_commands_are_smaller_phrases_and_each_answer_is_its_meaning(size) -> None:
    lo, width, seed = size
    scan = get_task("scan")
    for record in traced_records("scan", "least_to_most", lo, width, seed, n=8):
        trace, answer = split_target(record["target"])
        words = record["input"].split()
        parts = _subproblems(trace)
        for part, actions in parts:
            _span(words, part)  # a run of the command's words
            assert len(part) < len(words) and actions == scan.solve({"input": " ".join(part)}).split()
        # every conjunct (the words between connectives) is a sub-command of a command with several
        conjuncts = " ".join(words).replace(" after ", " and ").split(" and ")
        if len(conjuncts) > 1:
            assert all(c.split() in [p for p, _ in parts] for c in conjuncts)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2), st.integers(0, 2), st.integers(0, 2**32 - 1))
def test_cogs_like_sub_phrases_hold_their_part_of_the_logical_form(cp: int, pp: int, seed: int) -> None:
    task = get_task("cogs_like")
    params = task.default_params().replace(min_cp_depth=cp, max_cp_depth=cp, min_pp_depth=pp, max_pp_depth=pp, trace="least_to_most")
    for record in task.generate(np.random.default_rng(seed), 6, params).records("cogs_like"):
        trace, answer = split_target(record["target"])
        words = record["input"].split()
        parts = _subproblems(trace)
        assert sum(parse_ok(p) for p, _ in parts) == cp  # one sub-phrase per embedded clause
        assert len(parts) >= cp + (pp > 0)  # and one per noun phrase carrying PPs
        for part, form in parts:
            start = _span(words, part)
            if parse_ok(part):  # a clause: its own sentence's logical form, positions moved to where it stands
                alone = " ".join([part[0].capitalize(), *part[1:], "."])
                assert " ".join(form) == _shifted(interpret(parse_sentence(alone)), start)
            variables = [int(form[i + 2]) for i in range(len(form) - 2) if form[i] == "x" and form[i + 1] == "_"]
            assert variables and all(start <= v < start + len(part) for v in variables)
            whole = [" ".join(c) for group in split_logical_form(" ".join(answer)) for c in group]
            assert all(" ".join(c) in whole for group in split_logical_form(" ".join(form)) for c in group)


def parse_ok(words: list[str]) -> bool:
    try:
        parse_sentence(" ".join([words[0].capitalize(), *words[1:], "."]))
    except ValueError:
        return False
    return True


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(PAIRS), sizes, st.integers(0, 1000))
def test_step_verdicts_judge_each_step_apart(pair, size, where: int) -> None:
    """The record's own trace: every step right; one step changed: that step alone wrong, and
    the checker rejects the trace exactly when some step is wrong."""
    name, fmt = pair
    lo, width, seed = size
    task = get_task(name)
    for record in traced_records(name, fmt, lo, width, seed, n=6):
        trace, answer = split_target(record["target"])
        steps = task.trace_steps(trace, fmt, record)
        assert [t for s in steps for t in s] == trace
        assert task.step_verdicts(record, trace, fmt) == [True] * len(steps)
        if not steps:
            continue
        at = where % len(steps)
        changed = [list(s) for s in steps]
        value = max(i for i, t in enumerate(changed[at]) if t not in (STATE, SUB_ANSWER, SUB_END, ";", ",", "-") and not is_hint(t))
        changed[at][value] = "7" if changed[at][value] != "7" else "3"
        flat = [t for s in changed for t in s]
        verdicts = task.step_verdicts(record, flat, fmt)
        assert verdicts == [i != at for i in range(len(steps))]
        assert task.check_trace(record, flat, fmt) is False


@pytest.mark.parametrize("name,fmt", PAIRS)
def test_each_format_has_its_steps(name: str, fmt: str) -> None:
    task = get_task(name)
    records = traced_records(name, fmt, 4, 4, 2, n=6)
    widths = {len(s) for r in records for s in task.trace_steps(split_target(r["target"])[0], fmt, r)}
    if fmt == "inductive":
        assert all(s[0] == "#" for r in records for s in task.trace_steps(split_target(r["target"])[0], fmt, r))
    if fmt == "least_to_most":
        assert all(s[-1] == "|" and s.count("=") == 1 for r in records for s in task.trace_steps(split_target(r["target"])[0], fmt, r))
    if fmt == "index_hints":
        assert all(is_hint(s[0]) for r in records for s in task.trace_steps(split_target(r["target"])[0], fmt, r))
    assert widths or name in ("scan", "cogs_like", "stack_manipulation", "listops", "pointer_chasing")
