"""Harnesses: reward functions with verl's and TRL's signatures (no torch)."""

from __future__ import annotations

import json

import pytest

from gengap.harnesses import HarnessError, compute_score, gengap_format_reward, gengap_reward, gengap_token_reward
from gengap.harnesses.rewards import completion_text, task_of_source

PATH = {"task": "shortest_path", "input": "0 1 , 0 2 , 1 3 , 2 3 ? 0 3", "target": "0 1 3"}
ADD = {"task": "addition", "input": "1 9 + 2", "target": "1 2", "meta": {"format": "reversed"}}  # 19 + 2 = 21, reversed


def extra_info(record: dict, config: str = "cfg-x", split: str = "test", index: int = 0, answer_format: str = "line") -> dict:
    """extra_info as gengap's verl export writes it."""
    return {"split": split, "side": "ood", "index": index, "id": "r", "config": config, "task": record["task"],
            "input": record["input"], "meta": json.dumps(record.get("meta") or {}), "answer_format": answer_format}


def test_verl_compute_score_uses_the_checker() -> None:
    source = "gengap/shortest_path-length/ood"
    assert compute_score(source, "Answer: 0 1 3", "0 1 3", extra_info(PATH)) == 1.0
    assert compute_score(source, "Let me see. 0 -> 2 -> 3 is as short.\nAnswer: 0 2 3", "0 1 3", extra_info(PATH)) == 1.0  # another shortest path
    assert compute_score(source, "Answer: 0 1 2 3", "0 1 3", extra_info(PATH)) == 0.0
    assert compute_score(source, "", "0 1 3", extra_info(PATH)) == 0.0
    # meta reaches the checker: reversed output format
    assert compute_score("gengap/addition-length/id", "\\boxed{12}", "1 2", extra_info(ADD)) == 1.0
    assert compute_score("gengap/addition-length/id", "Answer: 2 1", "1 2", extra_info(ADD)) == 0.0
    # keyword call, as verl's reward manager makes it, and a whole reward_model struct as ground truth
    assert compute_score(data_source=source, solution_str="Answer: 0 2 3", ground_truth={"style": "rule", "ground_truth": "0 1 3"}, extra_info=extra_info(PATH)) == 1.0
    assert isinstance(compute_score(source, "Answer: 0 1 3", "0 1 3", extra_info(PATH)), float)


def test_verl_compute_score_with_partial_credit_and_a_format_weight() -> None:
    source = "gengap/addition-length/id"
    info = extra_info(ADD, answer_format="tags")
    # by default a float: correct or not, whatever the format
    assert compute_score(source, "<answer>1 2</answer>", "1 2", info) == 1.0 and compute_score(source, "Answer: 1 3", "1 2", info) == 0.0
    # partial credit: the per-token share; a right answer (any correct one) gets 1.0
    assert compute_score(source, "<answer>1 3</answer>", "1 2", info, partial_credit=True) == {"score": 0.5, "acc": 0.0, "per_token": 0.5, "format": 1.0}
    assert compute_score(source, "<answer>1 2 2</answer>", "1 2", info, partial_credit=True)["score"] == pytest.approx(2 / 3)
    # the format reward follows the row's answer format, or the one given
    assert compute_score(source, "<answer>1 2</answer>", "1 2", info, format_weight=0.1) == {"score": 1.1, "acc": 1.0, "per_token": 1.0, "format": 1.0}
    assert compute_score(source, "Answer: 1 2", "1 2", info, format_weight=0.1)["score"] == 1.0  # right, but not in tags
    assert compute_score(source, "Answer: 1 2", "1 2", info, format_weight=0.1, answer_format="line")["score"] == pytest.approx(1.1)
    assert compute_score(source, "<answer>9</answer>", "1 2", info, format_weight=0.5, partial_credit=True)["score"] == 0.5
    # keyword arguments as verl's loader merges reward_kwargs into its call
    assert compute_score(data_source=source, solution_str="<answer>1 3</answer>", ground_truth="1 2", extra_info=info, partial_credit=True)["acc"] == 0.0
    with pytest.raises(HarnessError, match="unknown answer format"):
        compute_score(source, "x", "1 2", info, format_weight=0.1, answer_format="xml")


def test_verl_compute_score_without_extra_info_compares_with_the_ground_truth() -> None:
    assert task_of_source("gengap/parity_check-length/ood") == "parity_check"
    assert task_of_source("gengap/parity_check") == "parity_check"
    assert task_of_source("openai/gsm8k") is None
    assert compute_score("gengap/parity_check-length/ood", "Answer: 1", "1") == 1.0
    assert compute_score("gengap/parity_check-length/ood", "Answer: 0", "1") == 0.0
    # without the input the checker cannot run: only the ground truth itself scores
    assert compute_score("gengap/shortest_path-length/ood", "Answer: 0 2 3", "0 1 3", None) == 0.0
    assert compute_score("gengap/shortest_path-length/ood", "Answer: 0 1 3", "0 1 3", None) == 1.0


def test_verl_compute_score_refuses_rows_it_cannot_route() -> None:
    with pytest.raises(HarnessError, match="not a gengap row"):
        compute_score("openai/gsm8k", "Answer: 3", "3", {"split": "test"})
    with pytest.raises(HarnessError, match="unknown task"):
        compute_score("gengap/no_such_task-x/id", "Answer: 3", "3")


class TrainerState:
    global_step = 3


def call_like_grpo(reward_func, inputs: list[dict], completions: list) -> list:
    """What TRL's GRPOTrainer._calculate_rewards does with a plain reward function (trl 1.16)."""
    prompts = [example["prompt"] for example in inputs]
    keys = [key for key in inputs[0] if key not in ["prompt", "completion", "completion_ids"]]  # a dataset's completion column is dropped
    reward_kwargs = {key: [example[key] for example in inputs] for key in keys}
    reward_kwargs["trainer_state"] = TrainerState()
    reward_kwargs["log_extra"] = lambda *a, **k: None
    reward_kwargs["log_metric"] = lambda *a, **k: None
    completion_ids = [[1, 2, 3] for _ in completions]
    return reward_func(prompts=prompts, completions=completions, completion_ids=completion_ids, **reward_kwargs)


def chat_row(record: dict, answer_format: str = "line") -> dict:
    """A row of gengap's chat export: prompt, completion and the record's columns."""
    return {"prompt": [{"role": "user", "content": f"Input: {record['input']}"}], "completion": [{"role": "assistant", "content": "x"}],
            "id": "r", "task": record["task"], "config": "cfg-x", "split": "test", "side": "ood", "index": 0, "input": record["input"],
            "target": record["target"], "meta": json.dumps(record.get("meta") or {}), "answer_format": answer_format}


def verl_row(record: dict, answer_format: str = "line") -> dict:
    return {"data_source": f"gengap/{record['task']}-length/ood", "prompt": [{"role": "user", "content": f"Input: {record['input']}"}],
            "ability": "structured", "reward_model": {"style": "rule", "ground_truth": record["target"]},
            "extra_info": extra_info(record, answer_format=answer_format)}


@pytest.mark.parametrize("row", [chat_row, verl_row])
def test_trl_reward_called_as_grpo_calls_it(row) -> None:
    inputs = [row(PATH), row(PATH), row(ADD), row(ADD)]
    completions = ["Answer: 0 2 3", "Answer: 0 3", "The answer is 1 2.", "Answer: 21"]
    rewards = call_like_grpo(gengap_reward, inputs, completions)
    assert rewards == [1.0, 0.0, 1.0, 0.0] and all(isinstance(r, float) for r in rewards)
    conversational = [[{"role": "assistant", "content": text}] for text in completions]
    assert call_like_grpo(gengap_reward, inputs, conversational) == rewards


@pytest.mark.parametrize("row", [chat_row, verl_row])
def test_trl_token_and_format_rewards_called_as_grpo_calls_them(row) -> None:
    inputs = [row(PATH, "tags"), row(PATH, "tags"), row(ADD, "line"), row(ADD, "line")]
    completions = ["<answer>0 2 3</answer>", "Answer: 0 1 2", "The answer is 1 2.", "Answer: 1 3"]
    assert call_like_grpo(gengap_reward, inputs, completions) == [1.0, 0.0, 1.0, 0.0]
    assert call_like_grpo(gengap_token_reward, inputs, completions) == [1.0, pytest.approx(2 / 3), 1.0, 0.5]
    assert call_like_grpo(gengap_format_reward, inputs, completions) == [1.0, 0.0, 0.0, 1.0]  # each row's own format


def test_trl_reward_leaves_foreign_rows_to_other_functions() -> None:
    inputs = [chat_row(PATH), {"prompt": "What is 2 + 2?", "answer": "4"}]
    inputs[1] = {**{key: None for key in inputs[0]}, **inputs[1]}
    for reward in (gengap_reward, gengap_token_reward, gengap_format_reward):
        assert call_like_grpo(reward, inputs, ["Answer: 0 1 3", "4"]) == [1.0, None]


def test_completion_text() -> None:
    assert completion_text("x") == "x"
    assert completion_text([{"role": "assistant", "content": "y"}]) == "y"
    assert completion_text([{"role": "assistant", "content": [{"type": "text", "text": "z"}]}]) == "z"
    assert completion_text([]) == "" and completion_text(None) == ""
