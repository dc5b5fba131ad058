"""The fast reward path gives the same verdicts as the checker on every task.

score_output lets the stored target decide an answer that is exactly it; score_output_checked
asks the checker about every answer. On records of every task, with the right answer in
many wrappings, corrupted answers and other correct answers (where a task has several), both
give the same Score, and verl's compute_score the same reward. The shortcuts inside answer
extraction agree with the full scan on random texts.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gengap.generators import get_task, task_names
from gengap.generators.tasks.structured import parse_graph_query
from gengap.harnesses import extraction
from gengap.harnesses.rewards import compute_score
from gengap.harnesses.scoring import score_output, score_output_checked
from tests.test_harness_scoring import WRAPPINGS


def random_records(task: str, seed: int, n: int = 4) -> list[dict]:
    spec = get_task(task)
    rng = np.random.default_rng([seed, 29])
    return list(spec.generate(rng, n, spec.level(int(rng.integers(1, 5)))).records(task))


def corrupted(target: list[str], rng: random.Random) -> list[list[str]]:
    """The target with a token appended, dropped, replaced or moved, and reversed."""
    other = rng.choice(target)
    answers = [target + [other], target[::-1], [other] + target]
    if len(target) > 1:
        answers += [target[:-1], target[1:], rng.sample(target, len(target))]
    position = rng.randrange(len(target))
    answers.append(target[:position] + ["0" if target[position] != "0" else "1"] + target[position + 1 :])
    return answers


def shortest_paths(record: dict) -> list[list[str]]:
    """Every path of the target's hop count between the query's nodes (shortest_path only)."""
    adjacency, source, goal = parse_graph_query(record["input"])
    hops = len(record["target"].split()) - 1
    paths: list[list[str]] = []

    def walk(path: list[int]) -> None:
        if len(paths) > 20:
            return
        if len(path) == hops + 1:
            if path[-1] == goal:
                paths.append([str(node) for node in path])
            return
        for node in sorted(adjacency.get(path[-1], ())):
            if node not in path:
                walk(path + [node])

    walk([source])
    return paths


def other_answers(record: dict, rng: random.Random) -> list[list[str]]:
    """Candidate answers besides the target: corruptions, reorderings (a maze's moves) and, for
    shortest_path, other paths; the checker decides which are correct."""
    target = record["target"].split()
    answers = corrupted(target, rng) + [rng.sample(target, len(target)) for _ in range(3)]
    if record["task"] == "shortest_path" and record["target"] != "NONE":
        answers += shortest_paths(record)
    return answers


@pytest.mark.parametrize("task", task_names())
@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_fast_and_checked_paths_agree(task: str, seed: int) -> None:
    rng = random.Random(seed)
    for record in random_records(task, seed):
        target = record["target"].split()
        outputs = [wrapping.render(target) for wrapping in WRAPPINGS]
        outputs += [f"Reasoning.\n<answer>{' '.join(answer)}</answer>" for answer in other_answers(record, rng)]
        outputs += ["", None, "Answer:", "\\boxed{" + " ".join(target) + "}"]
        info = {"task": task, "input": record["input"], "meta": record.get("meta")}
        for output in outputs:
            checked = score_output_checked(record, output)
            assert score_output(record, output) == checked, (output, record)
            reward = compute_score(f"gengap/{task}-iid/test", output, record["target"], info)
            assert reward == (1.0 if checked.correct else 0.0), (output, record)


def test_other_correct_answers_go_to_the_checker() -> None:
    record = {"task": "shortest_path", "input": "0 1 , 0 2 , 1 3 , 2 3 ? 0 3", "target": "0 1 3"}
    assert shortest_paths(record) == [["0", "1", "3"], ["0", "2", "3"]]
    assert score_output(record, "<answer>0 2 3</answer>").correct
    assert not score_output(record, "<answer>0 1 2 3</answer>").correct
    without_target = {"task": "shortest_path", "input": record["input"]}
    assert score_output(without_target, "Answer: 0 2 3") == score_output_checked(without_target, "Answer: 0 2 3")


PIECES = ["<answer>", "</answer>", "<ANSWER>", "</Answer>", "Answer:", "final answer:", "the answer is", "\\boxed{", "}", "anſWer:", "w",
          "<think>", "</think>", "</THINK>", " ", "  ", "\n", "\t", "1", "0 1", "x", "ſ", "**", "é"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12))
def test_extraction_shortcuts_agree_with_the_scan(pieces: list[str]) -> None:
    text = "".join(pieces)
    tagged = extraction._closing_tags(text)
    if tagged is not None:
        assert tagged == extraction._scanned(text)
    if extraction._THINK_END.search(text) is not None:  # drop_reasoning's shortcut sees every closing tag
        assert "</t" in text or "</T" in text
    if extraction.single_spaced(text):
        assert " ".join(text.split()) == text


def test_the_target_decides_wrong_answers_of_one_answer_tasks_only() -> None:
    from gengap.harnesses.scoring import one_answer

    assert one_answer("parity_check") and one_answer("addition") and one_answer("regex_match")
    assert not any(one_answer(task) for task in ("shortest_path", "maze", "grid_program"))


def test_wrong_answers_of_one_answer_tasks_skip_the_checker(monkeypatch: pytest.MonkeyPatch) -> None:
    record = random_records("addition", 3, n=1)[0]
    calls: list[str] = []
    spec = type(get_task("addition"))
    monkeypatch.setattr(spec, "solve", lambda self, example: calls.append("solve") or record["target"])
    wrong = record["target"] + " 1"
    scored = score_output(record, f"<answer>{wrong}</answer>")
    assert not scored.correct and scored.answer == wrong and 0 < scored.per_token < 1
    assert calls == []
    score_output_checked(record, f"<answer>{wrong}</answer>")
    assert calls == ["solve"]


@pytest.mark.parametrize("task", [name for name in task_names() if get_task(name).trace_formats])
@settings(max_examples=2, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_traced_records_agree_too(task: str, seed: int) -> None:
    spec = get_task(task)
    rng = np.random.default_rng([seed, 30])
    fmt = sorted(spec.trace_formats)[int(rng.integers(len(spec.trace_formats)))]
    params = spec.level(int(rng.integers(1, 4))).replace(trace=fmt)
    for record in spec.generate(rng, 3, params).records(task):
        target = record["target"].split()
        for answer in [target] + corrupted(target, random.Random(seed)):
            output = f"<answer>{' '.join(answer)}</answer>"
            assert score_output(record, output) == score_output_checked(record, output), (output, record)


def reference_reward(task: str, output: str, ground_truth: str) -> float:
    """The plain reward of an answer-only row of a one-answer task, by its definition: 1.0 when
    the span is the target, else whether the tokens answer_tokens reads are the target's."""
    from gengap.harnesses.scoring import alphabet_for, is_target

    span = extraction.extract_answer(output)
    if span is None:
        return 0.0
    target = ground_truth.split()
    if is_target(ground_truth, span, target):
        return 1.0
    tokens = extraction.answer_tokens(span, alphabet_for(task, target))
    return 1.0 if tokens and tokens == target else 0.0


EXTRA_PIECES = [" ", "  ", "\t", ".", "!", "*", "**", "->", ",", "A", "Ab", "10", "x", "\\text{", "}", "é", "ſ"]


@pytest.mark.parametrize("task", ["parity_check", "addition", "reverse_string", "scan", "cogs_like"])
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_target_verdicts_read_spans_like_answer_tokens(task: str, data: st.DataObject) -> None:
    """compute_score's shortcuts for spans of alphabet tokens give answer_tokens' verdict on any
    span and any stored target (odd spacing, tokens outside the alphabet, marks, case)."""
    from gengap.harnesses.scoring import one_answer, task_alphabet

    assert one_answer(task)
    alphabet = sorted(task_alphabet(task).tokens)
    pieces = st.sampled_from(alphabet) | st.sampled_from(EXTRA_PIECES)
    spaced = st.lists(st.sampled_from(alphabet), min_size=1, max_size=6).map(" ".join)
    text = st.lists(pieces, min_size=1, max_size=8).map("".join)
    target = data.draw(spaced | text)
    respaced = st.sampled_from([" ".join(target.split()), "".join(target.split()), "  ".join(target.split())])
    span = data.draw(st.just(target) | respaced | spaced | text | st.builds(lambda a, b: a + b, st.just(target), text))
    output = f"Work.\n<answer>{span}</answer>"
    reward = compute_score(f"gengap/{task}-iid/test", output, target, {"task": task, "input": "", "meta": None})
    assert reward == reference_reward(task, output, target), (span, target)


@pytest.mark.parametrize(
    ("task", "span", "target"),
    [
        ("parity_check", "1 0", "1\t0"),  # a target spaced otherwise, as long as the span
        ("parity_check", "1 0", "1\u30000"),
        ("parity_check", "10", "1 0"),  # a run of single-character tokens
        ("parity_check", "1 0", "10"),  # a target token outside the alphabet
        ("addition", "1 2", "1 2 "),
        ("scan", "I_JUMP I_WALK", "I_JUMP\tI_WALK"),
        ("scan", "I_JUMP I_WALK", "i_jump I_WALK"),
    ],
)
def test_target_verdict_edge_cases(task: str, span: str, target: str) -> None:
    output = f"<answer>{span}</answer>"
    reward = compute_score(f"gengap/{task}-iid/test", output, target, {"task": task, "input": "", "meta": None})
    assert reward == reference_reward(task, output, target)


@pytest.mark.parametrize("task", ["parity_check", "addition", "scan", "fact_lookup", "reverse_string"])
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_tagged_answers_read_like_extract_answer(task: str, data: st.DataObject) -> None:
    """compute_score's read of text ending in <answer>tokens</answer> (no extraction) is the span
    extract_answer finds, and its reward the reference reward, on texts of markers, reasoning
    blocks, odd whitespace and alphabet tokens."""
    from gengap.harnesses.rewards import _reading
    from gengap.harnesses.scoring import task_alphabet

    alphabet = sorted(task_alphabet(task).tokens)
    piece = st.sampled_from(PIECES + ["\u2003", "\x1c", "\u00a0"]) | st.sampled_from(alphabet)
    spaced = st.lists(st.sampled_from(alphabet), min_size=1, max_size=5).map(" ".join)
    texts = st.lists(piece | spaced, max_size=10).map("".join)
    output = data.draw(texts) + data.draw(st.sampled_from(["", "<answer>", "<ANSWER>"])) + data.draw(spaced | texts)
    output += data.draw(st.sampled_from(["", "</answer>", "</ANSWER>"])) + data.draw(st.sampled_from(["", " ", "\n\t", "\u2003", "x"]))
    reading = _reading(task)
    if reading.tagged is not None and "</t" not in output and "</T" not in output:
        at = output.rfind("<answer>")
        closed = reading.tagged(output, at) if at >= 0 else None
        if closed is not None:
            assert closed[1] == extraction.extract_answer(output), output
    target = data.draw(spaced)
    reward = compute_score(f"gengap/{task}-iid/test", output, target, {"task": task, "input": "", "meta": None})
    assert reward == reference_reward(task, output, target), (output, target)


def test_tagged_answers_skip_extraction(monkeypatch: pytest.MonkeyPatch) -> None:
    """The common output of a task whose tokens hold no marker letter is read without
    extract_answer; one whose tokens could (a W, a w or a backslash) goes through it."""
    from gengap.harnesses import rewards

    calls: list[str] = []
    monkeypatch.setattr(rewards, "extract_answer", lambda output: calls.append(output) or extraction.extract_answer(output))
    row = {"task": "addition", "input": "", "meta": None}
    assert compute_score("gengap/addition", "Sum.\n<answer>1 2 3</answer>\n", "1 2 3", row) == 1.0
    assert compute_score("gengap/addition", "Sum.\n<answer>1 2 3 4</answer>", "1 2 3", row) == 0.0
    assert calls == []
    assert compute_score("gengap/addition", "</think><answer>1 2 3</answer>", "1 2 3", row) == 1.0  # a reasoning block to drop
    assert len(calls) == 1
    assert rewards._reading("scan").tagged is None  # I_WALK
    assert compute_score("gengap/scan", "<answer>I_WALK</answer>", "I_WALK", {"task": "scan", "input": ""}) == 1.0
    assert len(calls) == 2
