"""Harness prompts of traced configs (the format stated, one worked example from train), the
final answer read after the trace, and pause tokens between the input and the answer."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gengap.baselines.layout import Layout
from gengap.baselines.tokenizer import Tokenizer
from gengap.cli import main
from gengap.generators import get_task
from gengap.generators.traces import SEPARATOR, split_target
from gengap.harnesses import Prompter, compute_score, gengap_reward, score_output
from gengap.harnesses.prompts import CONVENTIONS, TEXT_FORMAT, Pause, explanation, instruction
from tests.test_traces import PAIRS, traced_records


def parts(name: str, fmt: str, seed: int = 0) -> tuple[list[dict], list[dict]]:
    """(train, test) records of one traced setting: test records longer than every train one."""
    task = get_task(name)
    train = traced_records(name, fmt, 3, 3, seed, n=10)
    test = [r for r in traced_records(name, fmt, 7, 3, seed + 1, n=10) if r["input"] not in {t["input"] for t in train}]
    assert test and task
    return train, test


@pytest.mark.parametrize("name,fmt", PAIRS)
def test_traced_prompts_state_the_format_with_a_worked_example_from_train(name: str, fmt: str) -> None:
    train, test = parts(name, fmt)
    prompter = Prompter(name, {"trace": fmt}, train)
    described = get_task(name).trace_formats[fmt]
    for record in [*test, *train]:
        text = prompter.text(record)
        head = text.split("\n\nInput: ")[0]
        assert described in head and "=>" in head
        example = head.split("Worked example: Input: ")[1].split(" -> Answer: ")
        worked = next(r for r in train if r["input"] == example[0])  # from train, never the evaluated part
        assert example[1].split("\n")[0] == worked["target"] and worked["input"] != record["input"]
        assert len({prompter.text(r).split("\n\nInput: ")[0] for r in test}) == 1  # one example for every test query
    bare = Prompter(name, {"trace": fmt}, []).text(test[0])
    assert described in bare and "Worked example" not in bare  # no train part: the statement alone


def test_the_worked_example_is_the_shortest_train_record_and_never_the_query() -> None:
    train, test = parts("parity_check", "inductive")
    shortest = min(train, key=lambda r: len(r["input"].split()))
    prompter = Prompter("parity_check", {"trace": "inductive"}, train)
    assert f"Worked example: Input: {shortest['input']} -> " in prompter.text(test[0])
    own = prompter.text(shortest)  # a train query: another record is its example
    assert f"Worked example: Input: {shortest['input']} -> " not in own and "Worked example: Input: " in own


def test_answer_only_prompts_are_as_before() -> None:
    record = {"task": "parity_check", "input": "1 0 1", "target": "0"}
    expected = f"{explanation('parity_check', {}, record)}\n{CONVENTIONS} {TEXT_FORMAT}"
    assert instruction("parity_check", {}, record) == expected
    assert Prompter("parity_check", {}, [record]).text(record) == f"{expected}\n\nInput: 1 0 1\nAnswer:"


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(PAIRS), st.integers(0, 2**32 - 1))
def test_the_final_answer_after_the_trace_is_what_is_scored(pair, seed: int) -> None:
    name, fmt = pair
    for record in traced_records(name, fmt, 3, 4, seed, n=4):
        trace, answer = split_target(record["target"])
        meta = json.dumps(record["meta"])
        wrong = answer[:-1] + ["5" if answer[-1] != "5" else "6"]
        garbled = (["0"] * len(trace)) if trace else ["0"]
        cases = {
            f"Answer: {record['target']}": True,  # the trace, then the answer
            f"Answer: {' '.join(answer)}": True,  # answer-only: scored on the answer
            f"Answer: {' '.join([*garbled, SEPARATOR, *answer])}": True,  # a wrong trace: the final answer decides
            f"Answer: {' '.join([*trace, SEPARATOR, *wrong])}": False,
            f"Answer: {' '.join(wrong)}": False,
        }
        for reply, right in cases.items():
            assert score_output(record, reply).correct is right, reply
            info = {"task": name, "input": record["input"], "meta": meta}
            assert compute_score(f"gengap/{name}-x/ood", reply, record["target"], info) == float(right)
            assert gengap_reward([reply], task=[name], input=[record["input"]], target=[record["target"]], meta=[meta]) == [float(right)]


def test_pause_tokens_fill_k_or_k_per_input_token_and_match_computation_steps() -> None:
    record = {"task": "parity_check", "input": "1 0 1 1", "target": "1"}
    assert Prompter("parity_check", pause=Pause(3)).query(record) == "Input: 1 0 1 1\n<pause> <pause> <pause>"
    assert Pause(1, 2, "...").line(record).split() == ["..."] * 9
    assert Prompter("parity_check").query(record) == "Input: 1 0 1 1"
    tokenizer = Tokenizer.build(["1 0 1 1", "1"], blank=True)
    for c in (1, 2, 3):  # --pause-per-token c puts as many fillers where --computation-steps c puts its blanks
        blanks = Layout("autoregressive", c).prompt(tokenizer, record["input"], 1).count(tokenizer.blank_id)
        assert Pause(per_token=c).length(record) == blanks
    for bad in ({"count": -1}, {"per_token": 1.5}, {"token": "a b"}, {"token": ""}):
        with pytest.raises(ValueError):
            Pause(**bad)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["parity_check", "addition", "scan"]), st.integers(0, 4), st.integers(0, 3), st.integers(0, 2**32 - 1))
def test_pause_tokens_never_change_the_answer_the_checker_accepts(name: str, k: int, per: int, seed: int) -> None:
    task = get_task(name)
    records = list(task.generate(np.random.default_rng(seed), 4, task.with_size(2, 5)).records(name))
    plain, paused = Prompter(name, {}, records), Prompter(name, {}, records, pause=Pause(k, per))
    for record in records:
        assert paused.reply(record) == plain.reply(record)  # the answer asked for is the same
        filler = paused.query(record)[len(plain.query(record)) :]
        assert filler.split() == ["<pause>"] * (k + per * len(record["input"].split()))
        for reply in (plain.reply(record), "Answer: " + record["target"] + " x"):
            assert score_output(record, reply).correct == score_output(record, f"{filler}\n{reply}").correct


def test_export_with_pause_and_traced_configs(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: s\nversion: 0.0.1\nseed: 3\nlicense: mit\ncreated: \"2026-01-01\"\nentries:\n"
        "  - {task: parity_check, split: length, train_range: [1, 5], test_range: [7, 9], params: {trace: fine}, sizes: {train: 20, validation: 5, test: 5}}\n"
    )
    assert main(["release", str(suite), "--out", str(tmp_path / "r"), "--workers", "1"]) == 0
    out = tmp_path / "chat"
    assert main(["export", str(tmp_path / "r"), "--to", "chat", "--out", str(out), "--pause-per-token", "2"]) == 0
    train = {json.loads(line)["input"] for line in (tmp_path / "r" / "data" / "parity_check-length" / "train.jsonl").read_text().splitlines()}
    for line in (out / "parity_check-length" / "test.jsonl").read_text().splitlines():
        row = json.loads(line)
        user = row["prompt"][0]["content"]
        assert user.endswith("\n" + " ".join(["<pause>"] * (2 * len(row["input"].split()))))
        assert user.split("Worked example: Input: ")[1].split(" -> ")[0] in train
        assert row["completion"][0]["content"] == f"Answer: {row['target']}"
    settings_ = json.loads((out / "gengap-export.json").read_text())["settings"]
    assert settings_["pause"] == {"count": 0, "per_token": 2, "token": "<pause>"}
