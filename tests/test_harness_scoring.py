"""Harnesses: prompts, answer extraction and scoring with the tasks' checkers (no torch)."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gengap.generators import get_task, task_names
from gengap.harnesses import Alphabet, Prompter, answer_tokens, choose_shots, exact_match, explanation, extract_answer, score_output
from gengap.harnesses.extraction import ANSWER_FORMATS, format_ok
from gengap.harnesses.prompts import EXPLANATIONS, FORMAT_INSTRUCTIONS, instruction, reply
from gengap.harnesses.scoring import alphabet_of, task_alphabet, token_credit

TASKS = task_names()


def records_of(task: str, seed: int, n: int = 6) -> list[dict]:
    """n records of task at a level drawn from seed (levels 1..5 keep inputs short)."""
    spec = get_task(task)
    rng = np.random.default_rng(seed)
    level = int(rng.integers(1, 6))
    return list(spec.generate(rng, n, spec.level(level)).records(task))


# -- extraction ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "span"),
    [
        ("Answer: 1 0 1", "1 0 1"),
        ("answer:1 0", "1 0"),
        ("Let me think.\nThe parity is odd.\nFinal answer: 1", "1"),
        ("**Answer:** 1 1", "1 1"),
        ("**Answer:**\n\n1 1\nThat is all.", "1 1"),
        ("So the answer is 7.", "7."),
        ("The answer is \\boxed{\\text{yes}}.", "\\text{yes}"),
        ("\\boxed{3} but wait, Answer: 4", "4"),  # the last marker wins
        ("Answer: 4\nHmm, actually \\boxed{3}", "3"),
        ("\\boxed{{a} b}", "{a} b"),  # balanced braces
        ("<think>Answer: 0</think>\nAnswer: 1", "1"),  # reasoning is dropped
        ("thinking... </think> 0 1", "0 1"),
        (" 1 0 1\n", "1 0 1"),  # a completion after "Answer:": the last line
        ("first\n\nsecond line \n\n", "second line"),
        ("", None),
        ("   \n  ", None),
        (None, None),
        # answer tags: reasoning-gym's and most RL recipes' convention
        ("<answer>1</answer>", "1"),
        ("Reasoning first.\n<answer> 1 0 </answer>", "1 0"),
        ("<ANSWER>\n1 0\n1\n</ANSWER>", "1 0 1"),  # any case, over several lines
        ("<think>Answer: 0</think>\n<answer>1</answer>", "1"),
        ("<answer>0</answer> on second thought <answer>1</answer>", "1"),  # the last one wins
        ("<answer>1 0", "1 0"),  # cut at a </answer> stop string
        ("<answer>Answer: 1</answer>", "1"),  # a marker inside the tags gives what it marks
        ("<answer>\\boxed{1 0}</answer>", "1 0"),
        ("<answer>The answer is 1.</answer>", "1."),
        ("<answer>0</answer>\nAnswer: 1", "1"),
        ("Answer: 1\n<answer>0</answer>", "0"),
        ("<answer></answer>", None),
    ],
)
def test_extract_answer(output: str | None, span: str | None) -> None:
    assert extract_answer(output) == span


BITS = Alphabet.of(["0", "1"])
SCAN = Alphabet.of(["I_JUMP", "I_WALK", "I_TURN_LEFT"])
LOGIC = Alphabet.of("* cat ( x _ 1 ) ; AND like . agent , Emma".split())


@pytest.mark.parametrize(
    ("span", "alphabet", "tokens"),
    [
        ("1 0 1", BITS, ["1", "0", "1"]),
        ("101", BITS, ["1", "0", "1"]),
        ("[1, 0, 1].", BITS, ["1", "0", "1"]),
        ("`1 0`", BITS, ["1", "0"]),
        ("**1 0**", BITS, ["1", "0"]),
        ("\\text{1}\\,\\text{0}", BITS, ["1", "0"]),
        ("1 -> 0 → 1", BITS, ["1", "0", "1"]),
        ("i_jump I_WALK", SCAN, ["I_JUMP", "I_WALK"]),
        ("I_JUMP, I_TURN_LEFT.", SCAN, ["I_JUMP", "I_TURN_LEFT"]),
        ("IJUMP", SCAN, ["IJUMP"]),  # an underscore of a token is never decoration
        ("* cat ( x _ 1 ) ;", LOGIC, ["*", "cat", "(", "x", "_", "1", ")", ";"]),  # marks that are tokens stay
        ("1 0 1 (probably)", BITS, ["1", "0", "1", "p", "r", "o", "b", "a", "b", "l", "y"]),
        ("", BITS, []),
    ],
)
def test_answer_tokens(span: str, alphabet: Alphabet, tokens: list[str]) -> None:
    assert answer_tokens(span, alphabet) == tokens


LOGIC_ENDS = Alphabet.of(LOGIC.tokens, [")"])  # a logical form: "." is a token (cat . agent) but never the last one
GRID = Alphabet.of(". # |".split())  # every token may end an answer, "." too


@pytest.mark.parametrize(
    ("span", "alphabet", "tokens"),
    [
        ("* cat ( x _ 1 ) .", LOGIC_ENDS, ["*", "cat", "(", "x", "_", "1", ")"]),  # a sentence period: no answer ends with "."
        ("* cat ( x _ 1 ).", LOGIC_ENDS, ["*", "cat", "(", "x", "_", "1", ")"]),
        ("like . agent ( x _ 1 , Emma )", LOGIC_ENDS, "like . agent ( x _ 1 , Emma )".split()),  # "." inside stays
        ("* cat ( x _ 1 ) .", LOGIC, ["*", "cat", "(", "x", "_", "1", ")", "."]),  # "." may end an answer: kept
        ("# . .", GRID, ["#", ".", "."]),
        ("['*', 'cat', '(', 'x', '_', '1', ')']", LOGIC_ENDS, ["*", "cat", "(", "x", "_", "1", ")"]),  # a Python list of tokens
        ('["like", ".", "agent", "(", "x", "_", "1", ",", "Emma", ")"]', LOGIC_ENDS, "like . agent ( x _ 1 , Emma )".split()),
        ("[x, _, 1, ,, Emma]", LOGIC_ENDS, ["x", "_", "1", ",", "Emma"]),  # a "," token as an item
        ("['*', 'cat'].", LOGIC_ENDS, ["*", "cat"]),
        ("[i_jump, I_WALK]", SCAN, ["I_JUMP", "I_WALK"]),
        ("[* cat ( x _ 1 )]", LOGIC_ENDS, ["*", "cat", "(", "x", "_", "1", ")"]),  # not a list of tokens: the brackets are decoration
        ("['* cat', '(']", LOGIC_ENDS, ["*", "cat", ",", "("]),  # an item of two tokens: not a list of tokens, read as text
    ],
)
def test_trailing_periods_and_bracketed_lists(span: str, alphabet: Alphabet, tokens: list[str]) -> None:
    assert answer_tokens(span, alphabet) == tokens


def test_cogs_answers_with_a_sentence_period_or_as_a_list_of_tokens_are_right() -> None:
    """The rule of harnesses/extraction.py on COGS logical forms: a final "." is never a token of
    one, so it is decoration; a list of the tokens reads as them; wrong forms stay wrong."""
    for task in ("cogs", "cogs_like"):
        assert "." in task_alphabet(task).tokens and "." not in task_alphabet(task).finals
        for record in records_of(task, 5):
            target = record["target"].split()
            for output in (record["target"] + ".", record["target"] + " .", "Answer: " + record["target"] + ".", str(target),
                           "[" + ", ".join(target) + "]", f"<answer>{target!r}</answer>", f"The answer is {record['target']}."):
                assert score_output(record, output).correct, (task, output)
            for wrong in (target[:-1], target + ["AND"], target[1:]):
                for output in (" ".join(wrong) + " .", str(wrong), "[" + ", ".join(wrong) + "]"):
                    assert not score_output(record, output).correct, (task, output)


def test_alphabets_come_from_targets() -> None:
    assert task_alphabet("parity_check").tokens == {"0", "1"} and task_alphabet("parity_check").single_characters
    assert task_alphabet("multiplication").tokens == set("0123456789")  # '*' is an input token only
    cogs = task_alphabet("cogs_like")
    assert {"(", ")", "*", ";", ",", "AND", "."} <= cogs.tokens and not cogs.single_characters
    record = {"task": "addition", "input": "p0 1 + p0 2", "target": "p0 3", "meta": {"format": "index_hints"}}
    assert not alphabet_of(record).single_characters  # the record's own tokens join the task's


# -- correct answers in many wrappings score 1, wrong answers never ---------------------------


@dataclass(frozen=True)
class Wrapping:
    name: str
    render: Callable[[list[str]], str]
    marks: tuple[str, ...] = ()
    concatenated: bool = False
    cased: bool = False


WRAPPINGS = [
    Wrapping("bare", lambda a: " ".join(a)),
    Wrapping("label", lambda a: "Answer: " + " ".join(a)),
    Wrapping("lowercase label", lambda a: "answer:" + " ".join(a)),
    Wrapping("markdown label", lambda a: "**Answer:** " + " ".join(a)),
    Wrapping("final label after reasoning", lambda a: "We work it out step by step.\nAnswer: 3 is not it.\nFinal answer: " + " ".join(a)),
    Wrapping("label then next line", lambda a: "Answer:\n" + " ".join(a) + "\n"),
    Wrapping("phrase", lambda a: "I think the answer is " + " ".join(a), ()),
    Wrapping("phrase with period", lambda a: "The answer is " + " ".join(a) + ".", (".",)),
    Wrapping("boxed", lambda a: "Therefore \\boxed{" + " ".join(a) + "}"),
    Wrapping("boxed text", lambda a: "\\boxed{\\text{" + " ".join(a) + "}}"),
    Wrapping("last line", lambda a: "Some reasoning here.\n\n" + " ".join(a) + "\n"),
    Wrapping("reasoning block", lambda a: "<think>Answer: nothing</think>\n" + " ".join(a)),
    Wrapping("commas", lambda a: "Answer: " + ", ".join(a), (",",)),
    Wrapping("list", lambda a: "Answer: [" + ", ".join(a) + "]", ("[", "]", ",")),
    Wrapping("backticks", lambda a: "Answer: `" + " ".join(a) + "`", ("`",)),
    Wrapping("bold", lambda a: "Answer: **" + " ".join(a) + "**", ("**",)),
    Wrapping("quotes", lambda a: 'Answer: "' + " ".join(a) + '"', ('"',)),
    Wrapping("arrows", lambda a: "Answer: " + " -> ".join(a), ("->",)),
    Wrapping("math", lambda a: "Answer: $" + " ".join(a) + "$", ("$",)),
    Wrapping("concatenated", lambda a: "Answer: " + "".join(a), concatenated=True),
    Wrapping("uppercase", lambda a: "Answer: " + " ".join(t.upper() for t in a), cased=True),
    Wrapping("lowercase", lambda a: "Answer: " + " ".join(t.lower() for t in a), cased=True),
    Wrapping("tags", lambda a: "<answer>" + " ".join(a) + "</answer>"),
    Wrapping("tags spaced", lambda a: "Let me work it out.\n<answer> " + " ".join(a) + " </answer>\n"),
    Wrapping("tags on lines", lambda a: "<answer>\n" + "\n".join(a) + "\n</answer>"),
    Wrapping("think then tags", lambda a: "<think>\nAnswer: wrong\n<answer>no</answer>\n</think>\n<answer>" + " ".join(a) + "</answer>"),
    Wrapping("tags unclosed", lambda a: "<answer>" + " ".join(a)),
    Wrapping("tags with label", lambda a: "<answer>Answer: " + " ".join(a) + "</answer>"),
    Wrapping("tags boxed", lambda a: "<answer>\\boxed{" + " ".join(a) + "}</answer>"),
    Wrapping("tags list", lambda a: "<answer>[" + ", ".join(a) + "]</answer>", ("[", "]", ",")),
    Wrapping("sentence period", lambda a: "Answer: " + " ".join(a) + ".", (".",)),
    Wrapping("spaced period", lambda a: "The answer is " + " ".join(a) + " .", (".",)),
    Wrapping("list of tokens", lambda a: "Answer: [" + ", ".join(a) + "]", ("[", "]")),
    Wrapping("python list", lambda a: f"<answer>{a!r}</answer>", ("[", "]")),
    Wrapping("json list", lambda a: "Answer: [" + ", ".join(f'"{t}"' for t in a) + "]", ("[", "]")),
]
TRAILING_MARKS = (".", "!", "。")  # decoration at the end where no answer ends with them (extraction.TRAILING)


def applies(wrapping: Wrapping, tokens: list[str], alphabet: Alphabet) -> bool:
    """Whether the wrapping is one gengap promises to undo for these tokens."""
    if not all(alphabet.removable(mark) or (mark in TRAILING_MARKS and mark in alphabet.removable_trailing) for mark in wrapping.marks):
        return False
    if "list" in wrapping.name and "tags" not in wrapping.name and ("," in alphabet.tokens or '"' in alphabet.tokens) and any(
            not alphabet.token_of(t) for t in tokens):
        return False
    if wrapping.concatenated and not alphabet.single_characters and len(tokens) > 1:
        return False
    if wrapping.cased:
        folded = alphabet.casefolded()
        for token in tokens:
            for changed in (token.upper(), token.lower()):
                if changed != token and (changed in alphabet.tokens or folded.get(token.casefold()) != token):
                    return False
    return True


def wrong_answers(record: dict, rng: random.Random) -> list[list[str]]:
    """Token sequences over the record's answer alphabet that the checker rejects."""
    task = get_task(record["task"])
    alphabet = sorted(alphabet_of(record).tokens)
    target = record["target"].split()
    candidates = [target + [rng.choice(alphabet)], [rng.choice(alphabet) for _ in range(rng.randint(1, len(target) + 2))], target[::-1]]
    if len(target) > 1:
        candidates += [target[:-1], target[1:], target[:1] + target]
    position = rng.randrange(len(target))
    candidates.append(target[:position] + [rng.choice([t for t in alphabet if t != target[position]] or ["?"])] + target[position + 1 :])
    dropped = alphabet_of(record).removable_trailing  # an answer ending in one of these reads without it: not an answer of its own
    return [c for c in candidates if c and c[-1] not in dropped and not task.check(record, " ".join(c))]


def _balanced(tokens: list[str]) -> bool:
    """Whether the braces of an answer balance (only then can \\boxed{...} hold it whole)."""
    depth = 0
    for token in tokens:
        depth += token.count("{") - token.count("}")
        if depth < 0:
            return False
    return depth == 0


@pytest.mark.parametrize("task", TASKS)
@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_right_answers_score_1_and_wrong_ones_0_in_every_wrapping(task: str, seed: int) -> None:
    rng = random.Random(seed)
    for record in records_of(task, seed):
        alphabet = alphabet_of(record)
        target = record["target"].split()
        undone = [w for w in WRAPPINGS if applies(w, target, alphabet)]
        assert {"bare", "label", "boxed", "last line", "phrase", "tags", "think then tags", "tags unclosed"} <= {w.name for w in undone}
        for wrapping in undone:
            output = wrapping.render(target)
            assert score_output(record, output).correct, (wrapping.name, output, record)
        for wrong in wrong_answers(record, rng):
            for wrapping in WRAPPINGS:  # every wrapping, also those gengap does not undo
                if "boxed" in wrapping.name and not _balanced(wrong):
                    continue  # the first unmatched } closes the box: its content is another answer (cfq_like's queries)
                output = wrapping.render(wrong)
                assert not score_output(record, output).correct, (wrapping.name, output, record)


def test_checker_decides_tasks_with_several_answers() -> None:
    # two shortest paths from 0 to 3: 0 1 3 (the generated target) and 0 2 3
    record = {"task": "shortest_path", "input": "0 1 , 0 2 , 1 3 , 2 3 ? 0 3", "target": "0 1 3"}
    assert score_output(record, "Answer: 0 1 3").correct
    assert score_output(record, "The shortest path is 0 -> 2 -> 3.\nAnswer: 0 -> 2 -> 3").correct
    assert not score_output(record, "Answer: 0 1 2 3").correct  # 1 2 is no edge
    assert not score_output(record, "Answer: 0 3").correct
    assert not score_output(record, "Answer: 0 1 3 2").correct
    assert exact_match([record, record], ["Answer: 0 2 3", "nothing"]) == 0.5


def test_empty_and_unreadable_outputs_score_0() -> None:
    record = {"task": "parity_check", "input": "1 1 0", "target": "0"}
    for output in ("", "   ", None, "Answer:", "\\boxed{}"):
        scored = score_output(record, output)
        assert not scored.correct and scored.answer == ""


# -- partial credit and the format reward --------------------------------------------------------

TOKENS = st.lists(st.sampled_from(["0", "1", "2", "I_JUMP", "x", "(", ")", "yes"]), min_size=1, max_size=8)


@given(target=TOKENS, answer=st.lists(st.sampled_from(["0", "1", "2", "I_JUMP", "x", "(", ")", "yes"]), max_size=10), extra=TOKENS)
def test_token_credit_is_a_share_of_agreeing_positions_and_padding_never_pays(target: list[str], answer: list[str], extra: list[str]) -> None:
    credit = token_credit(target, answer)
    assert 0.0 <= credit <= 1.0
    assert (credit == 1.0) == (answer == target)
    same = sum(a == b for a, b in zip(target, answer))
    assert credit == (same / max(len(target), len(answer)) if answer else 0.0)
    if len(answer) >= len(target):
        assert token_credit(target, answer + extra) < credit or credit == 0.0  # tokens beyond the target cost credit


@pytest.mark.parametrize("task", ["parity_check", "addition", "shortest_path", "scan", "cogs_like", "reverse_string"])
@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_per_token_credit_is_1_for_right_answers_and_below_1_for_wrong_ones(task: str, seed: int) -> None:
    rng = random.Random(seed)
    for record in records_of(task, seed, 4):
        target = record["target"].split()
        for form in ANSWER_FORMATS:
            scored = score_output(record, reply(record, form))
            assert scored.correct and scored.per_token == 1.0, (form, record)
        for wrong in wrong_answers(record, rng):
            scored = score_output(record, "<answer>" + " ".join(wrong) + "</answer>")
            assert not scored.correct and scored.per_token == token_credit(target, scored.answer.split()) < 1.0
        assert score_output(record, "no answer here at all <answer></answer>").per_token == 0.0


REASONING = st.text(alphabet=st.characters(blacklist_characters="<>\\{}", blacklist_categories=("Cs",)), max_size=40)


@given(target=TOKENS, reasoning=REASONING)
def test_each_format_accepts_its_own_replies_and_refuses_broken_ones(target: list[str], reasoning: str) -> None:
    answer = " ".join(target)
    record = {"task": "parity_check", "input": "1", "target": answer}
    for form in ANSWER_FORMATS:
        own = reply(record, form)
        assert format_ok(own, form), (form, own)
        assert extract_answer(own) == answer
    thought = f"<think>{reasoning}</think>\n"
    assert format_ok(f"{reasoning}\n<answer>{answer}</answer>\n", "tags")
    assert format_ok(f"{reasoning}\n<answer>{answer}", "tags")  # stopped at a </answer> stop string
    assert format_ok(f"{thought}<answer>{answer}</answer>", "think")
    assert format_ok(f"{reasoning}</think>\n<answer>{answer}</answer>", "think")  # the template opened the block
    assert format_ok(f"{reasoning}\nAnswer: {answer}", "line") and format_ok(f"{thought}**Answer:** {answer}", "line")
    assert format_ok(f"{reasoning} so \\boxed{{{answer}}}.", "boxed")
    # broken: a second answer, text after it, an empty answer, a missing part
    assert not format_ok(f"<answer>{answer}</answer><answer>{answer}</answer>", "tags")
    assert not format_ok(f"<answer>{answer}</answer> and more", "tags")
    assert not format_ok("<answer> </answer>", "tags")
    assert not format_ok(f"<answer>{answer}</answer>", "think")  # no reasoning block
    assert not format_ok(f"{thought}more text <answer>{answer}</answer>", "think")
    assert not format_ok(f"<think>{reasoning}<answer>{answer}</answer>", "think")  # the block never closes
    assert not format_ok(f"Answer: {answer}\nand then more", "line")
    assert not format_ok(f"\\boxed{{{answer}}} \\boxed{{{answer}}}", "boxed") and not format_ok("\\boxed{}", "boxed")
    assert not format_ok(answer, "line") and not format_ok(answer, "tags") and not format_ok(answer, "boxed")
    assert not format_ok(None, "line")
    with pytest.raises(ValueError, match="unknown answer format"):
        format_ok(answer, "xml")


def test_every_format_prompt_names_its_markers() -> None:
    assert set(FORMAT_INSTRUCTIONS) == set(ANSWER_FORMATS)
    assert '"Answer: "' in FORMAT_INSTRUCTIONS["line"] and "<answer>" in FORMAT_INSTRUCTIONS["tags"]
    assert "<think>" in FORMAT_INSTRUCTIONS["think"] and "<answer>" in FORMAT_INSTRUCTIONS["think"] and "\\boxed{}" in FORMAT_INSTRUCTIONS["boxed"]


# -- prompts ------------------------------------------------------------------------------------


def test_every_task_has_an_explanation_filled_from_its_parameters() -> None:
    assert set(EXPLANATIONS) <= set(TASKS)
    for task in TASKS:
        text = explanation(task)
        assert text and not re.search(r"\{\w*\}", text) and "None" not in text, task  # no unfilled {field} (cfq_like's queries hold braces)
    assert "modulo 7" in explanation("modular_arithmetic", {"modulus": 7}) and "0 to 6" in explanation("modular_arithmetic", {"modulus": 7})
    assert "modulo 11" in explanation("modular_operation", record={"meta": {"p": 11}, "input": "1 + 2", "target": "3"})
    assert "reversed" in explanation("addition", {"format": "reversed"}) and "p0" in explanation("addition", {"format": "index_hints"})
    assert "minus" in explanation("variable_binding", {"negation": True}) and "minus" not in explanation("variable_binding")
    assert "0 to 3" in explanation("bucket_sort", {"alphabet_size": 4})
    assert "cycle of 7" in explanation("cycle_navigation", record={"meta": {"cycle_length": 7}, "input": "L", "target": "6"})


def test_explanation_falls_back_to_the_description(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(EXPLANATIONS, "bucket_sort")
    text = explanation("bucket_sort", {"alphabet_size": 3, "min_length": 1, "max_length": 40})
    assert get_task("bucket_sort").description in text
    assert "alphabet_size=3" in text and "min_length" not in text  # size knobs differ between train and test: never stated


def test_text_and_chat_prompts() -> None:
    pool = records_of("parity_check", 1, 40)
    record = records_of("parity_check", 2, 1)[0]
    prompter = Prompter("parity_check", {}, pool, k=3, seed=5)
    text = prompter.text(record)
    assert text.startswith(explanation("parity_check")) and text.endswith(f"Input: {record['input']}\nAnswer:")
    assert text.count("Input: ") == 4 and text.count("\nAnswer: ") == 3
    assert text == Prompter("parity_check", {}, list(pool), k=3, seed=5).text(record)  # deterministic
    shots = prompter.shots(record)
    assert len(shots) == 3 and all(s in pool and s["input"] != record["input"] for s in shots)
    for shot in shots:
        assert f"Input: {shot['input']}\nAnswer: {shot['target']}" in text
    chat = prompter.chat(record)
    assert [m["role"] for m in chat] == ["user", "assistant"] * 3 + ["user"]
    assert chat[0]["content"].startswith(instruction("parity_check", chat=True)) and chat[-1]["content"] == f"Input: {record['input']}"
    assert chat[1]["content"] == f"Answer: {shots[0]['target']}"
    sft = prompter.sft(record)
    assert sft[:-1] == chat and sft[-1] == {"role": "assistant", "content": f"Answer: {record['target']}"}
    system = Prompter("parity_check", {}, pool, k=1, seed=5, system=True).chat(record)
    assert [m["role"] for m in system] == ["system", "user", "assistant", "user"] and system[1]["content"].startswith("Input: ")
    bare = Prompter("parity_check").text(record)
    assert bare.count("Input: ") == 1
    # every reply in a prompt reads back as its target
    assert score_output(record, prompter.sft(record)[-1]["content"]).correct
    # an answer format: the instruction asks for it, the examples' replies and the completion use it
    tags = Prompter("parity_check", {}, pool, k=2, seed=5, answer_format="tags")
    turns = tags.chat(record)
    assert turns[0]["content"].startswith(instruction("parity_check", chat=True, answer_format="tags"))
    assert FORMAT_INSTRUCTIONS["tags"] in turns[0]["content"] and FORMAT_INSTRUCTIONS["line"] not in turns[0]["content"]
    assert turns[1]["content"] == f"<answer>{tags.shots(record)[0]['target']}</answer>"
    assert tags.completion(record) == [{"role": "assistant", "content": f"<answer>{record['target']}</answer>"}]
    assert tags.sft(record) == turns + tags.completion(record)
    assert tags.text(record) == Prompter("parity_check", {}, pool, k=2, seed=5).text(record)  # text prompts keep "Answer:"
    with pytest.raises(ValueError, match="unknown answer format"):
        Prompter("parity_check", answer_format="xml")


def test_shots_are_drawn_per_record_by_seed() -> None:
    pool = records_of("reverse_string", 3, 200)
    records = records_of("reverse_string", 4, 20)
    first = [choose_shots(r, pool, 2, seed=0) for r in records]
    assert first == [choose_shots(r, pool, 2, seed=0) for r in reversed(records)][::-1]  # independent of order
    assert first != [choose_shots(r, pool, 2, seed=1) for r in records]
    assert len({tuple(s["id"] for s in shots) for shots in first}) > 10  # different examples per query
    own = pool[7]
    copies = [own] * 30 + pool[:3]
    assert all(s["input"] != own["input"] for s in choose_shots(own, copies, 3, seed=0))  # never itself
    assert len(choose_shots(own, copies, 3, seed=0)) == 3
    assert choose_shots(own, [own], 2) == [] and choose_shots(own, pool, 0) == []


def test_harnesses_import_neither_torch_nor_baselines_nor_gengap() -> None:
    import subprocess
    import sys

    code = (  # gengap's own layers allowed: the package itself, its import-name aliases, generators and harnesses
        "import sys, gengap.harnesses, gengap.harnesses.prompts, gengap.harnesses.scoring, gengap.harnesses.rewards, gengap.harnesses.export, gengap.harnesses.lmeval\n"
        "own = ('gengap.harnesses', 'gengap.generators', 'gengap.legacy_names')\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'pyarrow', 'datasets'}"
        " | {m for m in sys.modules if m.startswith('gengap.') and not m.startswith(own)}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
