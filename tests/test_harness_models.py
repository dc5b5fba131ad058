"""Harnesses with models (torch): lm-evaluation-harness on exported tasks, `gengap eval`, TRL's GRPO and SFT trainers.

Models are tiny Llamas built from a config and saved locally (tests/harness_models.py): the
"answering" model says `` 1`` after "Answer:" (and after a chat template's newline), so its exact
match is known exactly: the share of records whose target is 1.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

import torch  # noqa: F401  (the train extra)

from gengap.cli import main
from harnesses import gengap_reward, open_release, score_output
from harnesses.lmeval import doc_record
from tests.harness_fixture import build_release, other_shortest_path
from tests.harness_models import answering_model

OFFLINE = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_release(tmp_path_factory.mktemp("harness"))


@pytest.fixture(scope="module")
def exports(release: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("exports")
    made = {}
    for to in ("lm-eval", "verl", "chat"):
        made[to] = root / to
        assert main(["export", str(release), "--to", to, "--out", str(made[to]), "--shots", "1"]) == 0
    return made


@pytest.fixture(scope="module")
def model(exports: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    texts = [json.loads(line)["prompt"] + " " + json.loads(line)["target"] for path in sorted(exports["lm-eval"].rglob("*.jsonl")) for line in path.read_text().splitlines()]
    return answering_model(tmp_path_factory.mktemp("model") / "answers-one", texts)


def share_of_ones(release: Path, config: str, part: str) -> float:
    records = open_release(release).load(config).parts[part]
    return sum(r["target"] == "1" for r in records) / len(records)


# -- lm-evaluation-harness ----------------------------------------------------------------------


def test_lm_eval_runs_two_exported_configs_and_agrees_with_gengap_scoring(exports: dict[str, Path], model: Path, release: Path, tmp_path: Path) -> None:
    """`lm_eval --include_path DIR --tasks ...` with a local HF model: its exact match is gengap's scoring of the same generations."""
    command = [
        sys.executable, "-m", "lm_eval", "--include_path", str(exports["lm-eval"]), "--tasks", "parity_check-length,addition-iid",
        "--model", "hf", "--model_args", f"pretrained={model},dtype=float32", "--device", "cpu", "--batch_size", "8",
        "--log_samples", "--output_path", str(tmp_path / "lm-eval-out"),
    ]
    done = subprocess.run(command, capture_output=True, text=True, env=OFFLINE, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    (results_file,) = (tmp_path / "lm-eval-out").rglob("results_*.json")
    results = json.loads(results_file.read_text())["results"]
    expected = {
        "parity_check-length_id": share_of_ones(release, "parity_check-length", "validation"),
        "parity_check-length_ood": share_of_ones(release, "parity_check-length", "test"),
        "addition-iid_id": share_of_ones(release, "addition-iid", "validation"),
        "addition-iid_ood": share_of_ones(release, "addition-iid", "test"),
    }
    assert 0 < expected["parity_check-length_id"] < 1 and 0 < expected["parity_check-length_ood"] < 1
    for task, share in expected.items():
        assert results[task]["exact_match,none"] == pytest.approx(share), task
        (samples_file,) = (tmp_path / "lm-eval-out").rglob(f"samples_{task}_*.jsonl")
        samples = [json.loads(line) for line in samples_file.read_text().splitlines()]
        ours = [score_output(doc_record(s["doc"]), s["filtered_resps"][0]).correct for s in samples]
        assert [s["exact_match"] for s in samples] == [float(ok) for ok in ours]
        assert sum(ours) / len(ours) == pytest.approx(results[task]["exact_match,none"])
    assert {"parity_check-length", "addition-iid"} <= set(json.loads(results_file.read_text())["group_subtasks"])


def test_lm_eval_scores_many_answer_wrappings_like_gengap(exports: dict[str, Path]) -> None:
    """lm-eval's Python API with a scripted model answering right or wrong in assorted wrappings (and other shortest paths)."""
    import lm_eval
    from lm_eval.api.model import LM
    from lm_eval.tasks import TaskManager

    wrappings = ["Answer: {}", " {}", "The answer is {}.", "\\boxed{{{}}}", "**Answer:** {}", "Answer: [{}]"]

    class Scripted(LM):
        def __init__(self) -> None:
            super().__init__()
            self.count = 0

        def generate_until(self, requests):
            outputs = []
            for request in requests:
                doc = request.doc
                self.count += 1
                answer = doc["target"]
                if doc["task"] == "shortest_path":
                    answer = other_shortest_path(doc) or answer
                if self.count % 3 == 0:  # every third answer is wrong
                    answer = answer + " " + answer.split()[0]
                wrap = wrappings[self.count % len(wrappings)]
                outputs.append(wrap.format(", ".join(answer.split()) if wrap.endswith("[{}]") else answer))
            return outputs

        def loglikelihood(self, requests):
            raise NotImplementedError

        def loglikelihood_rolling(self, requests):
            raise NotImplementedError

    manager = TaskManager(include_path=str(exports["lm-eval"]))
    out = lm_eval.simple_evaluate(model=Scripted(), tasks=["shortest_path-length_ood", "addition-iid_ood"], task_manager=manager, log_samples=True)
    for task in ("shortest_path-length_ood", "addition-iid_ood"):
        samples = out["samples"][task]
        ours = [score_output(doc_record(s["doc"]), s["filtered_resps"][0]).correct for s in samples]
        assert [s["exact_match"] for s in samples] == [float(ok) for ok in ours]
        assert out["results"][task]["exact_match,none"] == pytest.approx(sum(ours) / len(ours))
        assert 0.5 < out["results"][task]["exact_match,none"] < 0.8  # two thirds right, whatever the wrapping


# -- gengap eval --------------------------------------------------------------------------------


def test_gengap_eval_on_cpu_and_report_beside_a_trained_run(model: Path, release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "eval-run"
    assert main(["eval", str(model), "--release", str(release), "--config", "parity_check-length", "--shots", "2", "--out", str(run), "--batch-size", "5"]) == 0
    assert "pos=pretrained" in capsys.readouterr().out
    results = json.loads((run / "results.json").read_text())
    seed = results["per_seed"][0]
    assert seed["id_exact_match"] == pytest.approx(share_of_ones(release, "parity_check-length", "validation"))
    assert seed["ood_exact_match"] == pytest.approx(share_of_ones(release, "parity_check-length", "test"))
    assert seed["gap"] == pytest.approx(seed["id_exact_match"] - seed["ood_exact_match"])
    assert (results["pos"], results["preset"], results["steps"], results["kind"]) == ("pretrained", "answers-one 2-shot", 0, "pretrained")
    records = open_release(release).load("parity_check-length").parts
    assert set(seed["by_length"]["ood"]) == {str(len(r["input"].split())) for r in records["test"]}
    assert sum(cell["n"] for cell in seed["by_novelty"]["ood"].values()) == len(records["test"])
    assert results["divergence"]["compound_divergence"] is not None
    assert set(results["aggregate"]["id_exact_match"]) == {"mean", "std", "min", "max", "n"}
    assert results["data"]["evaluated"] == {"id": 12, "ood": 20} and results["model"]["hf_class"] == "LlamaForCausalLM"
    generations = [json.loads(line) for line in (run / "generations.jsonl").read_text().splitlines()]
    assert len(generations) == 32 and {g["output"] for g in generations} == {" 1"}
    assert all(g["prompt"].endswith("Answer:") and g["prompt"].count("Input: ") == 3 for g in generations)
    assert all(g["correct"] == (r["target"] == "1") for g, r in zip(generations, records["validation"] + records["test"]))
    assert seed["mistakes"]["ood"] and seed["mistakes"]["ood"][0]["output"] == " 1"
    # chat prompts through the tokenizer's template, a limit per side
    chat = tmp_path / "eval-chat"
    assert main(["eval", str(model), "--release", str(release), "--config", "parity_check-length", "--chat", "--limit", "5",
                 "--max-new-tokens", "4", "--out", str(chat)]) == 0
    chat_results = json.loads((chat / "results.json").read_text())
    assert chat_results["data"]["evaluated"] == {"id": 5, "ood": 5} and chat_results["preset"] == "answers-one 0-shot chat"
    replies = [json.loads(line) for line in (chat / "generations.jsonl").read_text().splitlines()]
    assert all(r["prompt"].startswith("<|user|>") and r["output"].startswith(" 1\n") and r["answer"] == "1" for r in replies)
    # a from-scratch run on the same config, then one report over both
    from baselines.training import train_and_evaluate

    train_and_evaluate(str(release), "parity_check-length", pos="rope", preset="tiny", steps=2, eval_every=2, eval_examples=4,
                       seeds=(0,), d_model=32, heads=2, out=tmp_path / "train-run", plots=False)
    assert main(["report", str(run), str(tmp_path / "train-run")]) == 0
    table = capsys.readouterr().out
    assert "| parity_check-length | rope | tiny | 2 | 1 |" in table
    assert f"| parity_check-length | pretrained | answers-one 2-shot | 0 | 1 | {seed['id_exact_match']:.3f} ± 0.000 |" in table


def test_gengap_eval_refuses_bad_requests(model: Path, release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", str(tmp_path / "no-model"), "--release", str(release), "--config", "parity_check-length", "--out", str(tmp_path / "a")]) == 2
    assert main(["eval", str(model), "--release", str(release), "--out", str(tmp_path / "b")]) == 2  # several configs
    assert "choose one with --config" in capsys.readouterr().err
    assert main(["eval", str(model), "--release", str(release), "--config", "parity_check-length", "--limit", "0", "--out", str(tmp_path / "c")]) == 2
    assert main(["eval", str(model), "--release", str(release), "--config", "shortest_path-length", "--out", str(tmp_path / "d")]) == 2  # empty validation
    assert not any((tmp_path / name).exists() for name in "abcd")


# -- TRL ----------------------------------------------------------------------------------------


def test_grpo_trainer_calls_the_reward_on_the_verl_export(exports: dict[str, Path], model: Path, tmp_path: Path) -> None:
    import datasets
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    calls: list[tuple[list, dict, list]] = []

    def reward(completions, **kwargs):
        rewards = gengap_reward(completions, **kwargs)
        calls.append((completions, kwargs, rewards))
        return rewards

    data = datasets.load_dataset("parquet", data_files=str(exports["verl"] / "parity_check-length" / "train.parquet"), split="train")
    data = data.select(range(4))
    args = GRPOConfig(output_dir=str(tmp_path / "grpo"), per_device_train_batch_size=4, num_generations=2, max_completion_length=4,
                      max_steps=2, report_to="none", use_cpu=True, logging_steps=1, save_strategy="no", bf16=False)
    trainer = GRPOTrainer(model=str(model), reward_funcs=reward, args=args, train_dataset=data,
                          processing_class=AutoTokenizer.from_pretrained(model))
    trainer.train()
    assert calls
    for completions, kwargs, rewards in calls:
        assert {"prompts", "reward_model", "extra_info", "data_source"} <= set(kwargs)
        assert all(isinstance(r, float) for r in rewards) and len(rewards) == len(completions)
        for completion, truth, value in zip(completions, kwargs["reward_model"], rewards):
            assert completion[-1]["content"].startswith(" 1\n")  # the answering model's reply
            assert value == (1.0 if truth["ground_truth"] == "1" else 0.0)
    logged = [row["reward"] for row in trainer.state.log_history if "reward" in row]
    assert logged and all(math.isfinite(float(value)) for value in logged)


def test_sft_trainer_reads_the_chat_export(exports: dict[str, Path], model: Path, tmp_path: Path) -> None:
    import datasets
    from transformers import AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    data = datasets.load_dataset("json", data_files=str(exports["chat"] / "addition-iid" / "train.jsonl"), split="train")
    args = SFTConfig(output_dir=str(tmp_path / "sft"), per_device_train_batch_size=4, max_steps=2, report_to="none", use_cpu=True,
                     logging_steps=1, save_strategy="no", bf16=False)
    trainer = SFTTrainer(model=str(model), args=args, train_dataset=data, processing_class=AutoTokenizer.from_pretrained(model))
    output = trainer.train()
    assert math.isfinite(output.training_loss) and output.global_step == 2


def test_gengap_eval_default_run_directory(model: Path, release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["eval", str(model), "--release", str(release), "--config", "addition-iid", "--limit", "2"]) == 0
    results = json.loads((tmp_path / "runs" / "eval-answers-one-addition-iid" / "results.json").read_text())
    assert results["config"] == "addition-iid" and results["data"]["evaluated"] == {"id": 2, "ood": 2}
    assert main(["eval", str(model), "--release", str(release), "--config", "addition-iid", "--limit", "2"]) == 2  # not empty now
