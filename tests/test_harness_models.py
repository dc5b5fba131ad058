"""Harnesses with models (torch): lm-evaluation-harness on exported tasks, `gengap eval`, TRL's GRPO and SFT trainers.

Models are tiny Llamas built from a config and saved locally (tests/harness_models.py): the
"answering" model says `` 1`` after "Answer:" (and after a chat template's newline), so its exact
match is known exactly: the share of records whose target is 1. lm-eval 0.4.13 and trl 1.16.0
(the dev extra) run for real; what they logged (lm-eval's samples, the columns TRL hands the
reward functions, the labels of SFT batches) is what the tests check.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import torch  # noqa: F401  (the train extra)

from gengap.cli import main
from gengap.harnesses import gengap_format_reward, gengap_reward, open_release, score_output
from gengap.harnesses.lmeval import doc_record
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
    docs = [json.loads(line) for path in sorted(exports["lm-eval"].rglob("*.jsonl")) for line in path.read_text().splitlines()]
    texts = [doc["description"] + doc["query"] + " " + doc["target"] for doc in docs]
    return answering_model(tmp_path_factory.mktemp("model") / "answers-one", texts)


def share_of_ones(release: Path, config: str, part: str) -> float:
    records = open_release(release).load(config).parts[part]
    return sum(r["target"] == "1" for r in records) / len(records)


# -- lm-evaluation-harness ----------------------------------------------------------------------


def run_lm_eval(include: Path, tasks: str, model: Path, out: Path, *extra: str) -> dict:
    """`lm_eval` on a local HF model (a subprocess, offline); its results file."""
    command = [
        sys.executable, "-m", "lm_eval", "--include_path", str(include), "--tasks", tasks,
        "--model", "hf", "--model_args", f"pretrained={model},dtype=float32", "--device", "cpu", "--batch_size", "8",
        "--log_samples", "--output_path", str(out), *extra,
    ]
    done = subprocess.run(command, capture_output=True, text=True, env=OFFLINE, cwd=out.parent, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    (results_file,) = out.rglob("results_*.json")
    return json.loads(results_file.read_text())


def logged_samples(out: Path, task: str) -> list[dict]:
    (samples_file,) = out.rglob(f"samples_{task}_*.jsonl")
    return [json.loads(line) for line in samples_file.read_text().splitlines()]


def logged_prompt(sample: dict) -> str:
    """The context of a logged sample: serialized by the command line, tuples from the Python API."""
    arguments = sample["arguments"]
    return arguments["gen_args_0"]["arg_0"] if isinstance(arguments, dict) else arguments[0][0]


SHOT = re.compile(r"Input: ([^\n]*)\nAnswer: ([^\n]+)")  # an example with its answer; the query ends in "Answer:" alone


def shots_from_train_only(release: Path, config: str, samples: list[dict], k: int, chat: bool = False) -> int:
    """Every example in every logged prompt is a train record (input and target), none a validation or test input; returns the count."""
    rc = open_release(release).load(config)
    train = {(r["input"], r["target"]) for r in rc.train}
    held_out = {r["input"] for part in ("validation", "test") for r in rc.parts[part]}
    count = 0
    for sample in samples:
        prompt = logged_prompt(sample)
        if chat:  # --fewshot_as_multiturn: each example is a user turn and an assistant turn of its own
            shots = re.findall(r"<\|user\|>\nInput: ([^\n]*)\nAnswer:<\|end\|>\n<\|assistant\|>\n([^<\n]+)<\|end\|>", prompt)
        else:
            shots = SHOT.findall(prompt)
        assert len(shots) == k, prompt
        assert prompt.rstrip().endswith(sample["doc"]["query"].rstrip() if not chat else "<|assistant|>")
        assert sample["doc"]["query"] in prompt and prompt.count(sample["doc"]["description"].strip()) == 1  # the instruction once
        for shot_input, shot_target in shots:
            assert (shot_input, shot_target.strip()) in train, (shot_input, shot_target)
            assert shot_input not in held_out and shot_input != sample["doc"]["input"]
        count += len(shots)
    return count


@pytest.mark.slow
def test_lm_eval_num_fewshot_draws_only_train_records_and_agrees_with_gengap_scoring(exports: dict[str, Path], model: Path, release: Path, tmp_path: Path) -> None:
    """`lm_eval --num_fewshot 3` on the whole export: every shot of every logged prompt is a train record; exact match is gengap's."""
    out = tmp_path / "lm-eval-out"
    report = run_lm_eval(exports["lm-eval"], "harness-suite", model, out, "--num_fewshot", "3")
    results = report["results"]
    expected = {
        "parity_check-length_id": share_of_ones(release, "parity_check-length", "validation"),
        "parity_check-length_ood": share_of_ones(release, "parity_check-length", "test"),
        "addition-iid_id": share_of_ones(release, "addition-iid", "validation"),
        "addition-iid_ood": share_of_ones(release, "addition-iid", "test"),
        "shortest_path-length_ood": 0.0,
    }
    assert 0 < expected["parity_check-length_id"] < 1 and 0 < expected["parity_check-length_ood"] < 1
    shots = 0
    for task, share in expected.items():
        assert results[task]["exact_match,none"] == pytest.approx(share), task
        assert report["n-shot"][task] == 3  # the export's default (--shots 1) overridden by --num_fewshot
        samples = logged_samples(out, task)
        ours = [score_output(doc_record(s["doc"]), s["filtered_resps"][0]).correct for s in samples]
        assert [s["exact_match"] for s in samples] == [float(ok) for ok in ours]
        assert sum(ours) / len(ours) == pytest.approx(results[task]["exact_match,none"])
        shots += shots_from_train_only(release, task.rsplit("_", 1)[0], samples, 3)
    assert shots == 3 * sum(len(logged_samples(out, task)) for task in expected)
    # the groups: the mean over configs of each side (each config once), the release group holding both
    assert results["harness-suite_id"]["exact_match,none"] == pytest.approx((expected["parity_check-length_id"] + expected["addition-iid_id"]) / 2)
    ood = [expected[t] for t in expected if t.endswith("_ood")]
    assert results["harness-suite_ood"]["exact_match,none"] == pytest.approx(sum(ood) / len(ood))
    assert {"harness-suite", "harness-suite_id", "harness-suite_ood"} <= set(report["group_subtasks"])


@pytest.mark.slow
def test_lm_eval_fewshot_as_multiturn_and_limit_match_gengap_eval(exports: dict[str, Path], model: Path, release: Path, tmp_path: Path) -> None:
    """Chat prompts with --fewshot_as_multiturn: shots from train only, as turns of their own; `--limit N` takes the records `gengap eval --limit N` takes."""
    out = tmp_path / "lm-eval-chat"
    report = run_lm_eval(exports["lm-eval"], "parity_check-length,addition-iid", model, out,
                         "--num_fewshot", "2", "--apply_chat_template", "--fewshot_as_multiturn", "--limit", "4")
    for config in ("parity_check-length", "addition-iid"):
        run = tmp_path / f"eval-{config}"
        assert main(["eval", str(model), "--release", str(release), "--config", config, "--limit", "4", "--out", str(run)]) == 0
        evaluated = {}
        for line in (run / "generations.jsonl").read_text().splitlines():
            generation = json.loads(line)
            evaluated.setdefault(generation["side"], set()).add(generation["id"])
        for side in ("id", "ood"):
            samples = logged_samples(out, f"{config}_{side}")
            assert len(samples) == 4 and report["n-shot"][f"{config}_{side}"] == 2
            assert {s["doc"]["id"] for s in samples} == evaluated[side]  # the same records
            assert shots_from_train_only(release, config, samples, 2, chat=True) == 8
            for sample in samples:  # the instruction is the system message, every example a user and an assistant turn
                assert logged_prompt(sample).startswith("<|system|>\n" + sample["doc"]["description"].strip())


def test_lm_eval_scores_many_answer_wrappings_like_gengap(exports: dict[str, Path], release: Path) -> None:
    """lm-eval's Python API with a scripted model answering right or wrong in assorted wrappings (and other shortest paths).

    The export's tasks default to one shot (--shots 1): lm-eval's own few-shot machinery draws it,
    and every logged prompt's example is a train record (the command-line run with
    --num_fewshot 3 over the whole export is the slow test above)."""
    import lm_eval
    from lm_eval.api.model import LM
    from lm_eval.tasks import TaskManager

    wrappings = ["Answer: {}", " {}", "The answer is {}.", "\\boxed{{{}}}", "**Answer:** {}", "Answer: [{}]", "<answer>{}</answer>"]

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
        assert out["n-shot"][task] == 1 and shots_from_train_only(release, task.rsplit("_", 1)[0], samples, 1) == len(samples)


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
                 "--max-new-tokens", "4", "--answer-format", "tags", "--out", str(chat)]) == 0
    chat_results = json.loads((chat / "results.json").read_text())
    assert chat_results["data"]["evaluated"] == {"id": 5, "ood": 5} and chat_results["preset"] == "answers-one 0-shot chat tags"
    replies = [json.loads(line) for line in (chat / "generations.jsonl").read_text().splitlines()]
    assert all(r["prompt"].startswith("<|user|>") and r["output"].startswith(" 1\n") and r["answer"] == "1" for r in replies)
    assert all("<answer> and </answer>" in r["prompt"] for r in replies)
    # --limit: the first N records of gengap's evaluation order, kept in file order
    from gengap.harnesses.releases import evaluation_order

    first = sorted(evaluation_order(records["validation"])[:5])
    assert [r["id"] for r in replies if r["side"] == "id"] == [records["validation"][i]["id"] for i in first]
    # a from-scratch run on the same config, then one report over both
    from gengap.baselines.training import train_and_evaluate

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


def test_sft_trainer_trains_on_the_completion_of_the_chat_export_only(exports: dict[str, Path], model: Path, tmp_path: Path) -> None:
    import datasets
    from transformers import AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    data = datasets.load_dataset("json", data_files=str(exports["chat"] / "addition-iid" / "train.jsonl"), split="train")
    tokenizer = AutoTokenizer.from_pretrained(model)
    args = SFTConfig(output_dir=str(tmp_path / "sft"), per_device_train_batch_size=4, max_steps=2, report_to="none", use_cpu=True,
                     logging_steps=1, save_strategy="no", bf16=False)
    trainer = SFTTrainer(model=str(model), args=args, train_dataset=data, processing_class=tokenizer)
    assert trainer.completion_only_loss  # chosen by TRL from the prompt/completion columns
    batch = trainer.data_collator([trainer.train_dataset[i] for i in range(4)])
    for ids, labels, row in zip(batch["input_ids"], batch["labels"], data.select(range(4))):
        trained = tokenizer.decode(ids[labels != -100])
        assert trained.startswith(f"Answer: {row['target']}") and "Input:" not in trained  # no prompt token carries a loss
        assert "Input:" in tokenizer.decode(ids[labels == -100])
    output = trainer.train()
    assert math.isfinite(output.training_loss) and output.global_step == 2


@pytest.mark.slow
def test_grpo_trainer_reads_the_prompt_column_of_the_chat_export(release: Path, model: Path, tmp_path: Path) -> None:
    """GRPO on the chat export in an answer format: TRL takes its `prompt`, the rewards its columns (correct and format)."""
    import datasets
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    out = tmp_path / "chat-tags"
    assert main(["export", str(release), "--to", "chat", "--out", str(out), "--answer-format", "tags", "--config", "parity_check-length"]) == 0
    data = datasets.load_dataset("json", data_files=str(out / "parity_check-length" / "train.jsonl"), split="train").select(range(4))
    seen: list[dict] = []

    def correct(completions, **kwargs):
        seen.append({"completions": completions, **kwargs})
        return gengap_reward(completions, **kwargs)

    args = GRPOConfig(output_dir=str(tmp_path / "grpo"), per_device_train_batch_size=4, num_generations=2, max_completion_length=4,
                      max_steps=1, report_to="none", use_cpu=True, logging_steps=1, save_strategy="no", bf16=False, reward_weights=[1.0, 0.1])
    GRPOTrainer(model=str(model), reward_funcs=[correct, gengap_format_reward], args=args, train_dataset=data,
                processing_class=AutoTokenizer.from_pretrained(model)).train()
    assert seen
    for call in seen:
        assert {"task", "input", "target", "meta", "answer_format", "prompts"} <= set(call) and "completion" not in call
        assert set(call["answer_format"]) == {"tags"}
        assert all(p[-1]["content"].endswith(f"Input: {i}") for p, i in zip(call["prompts"], call["input"]))
        assert "<answer>" in call["prompts"][0][0]["content"]  # the instruction asks for the tags
        assert gengap_format_reward(call["completions"], **{k: v for k, v in call.items() if k != "completions"}) == [0.0] * len(call["completions"])


@pytest.mark.slow
def test_grpo_on_a_stream_keeps_its_order_and_the_curriculum_follows_the_trainer_steps(model: Path, tmp_path: Path) -> None:
    """The stream recipe of docs/streams.md: rows arrive in stream order and step s trains on the rows of curriculum step s."""
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from gengap.baselines.stream_datasets import grpo_records_per_step, hf_iterable_dataset
    from gengap.generators import RecordStream, parse_curriculum
    from gengap.harnesses import Prompter

    args = GRPOConfig(output_dir=str(tmp_path / "grpo"), per_device_train_batch_size=4, gradient_accumulation_steps=2, num_generations=2,
                      max_completion_length=4, max_steps=3, report_to="none", use_cpu=True, logging_steps=1, save_strategy="no", bf16=False,
                      shuffle_dataset=False)
    per_step = grpo_records_per_step(args)
    assert per_step == 4  # 4 prompts x 2 accumulation steps / 2 generations each
    prompter = Prompter("parity_check")
    curriculum = parse_curriculum("step:start=1,end=4,every=1")
    rl = hf_iterable_dataset(RecordStream.of_task("parity_check", seed=0), curriculum=curriculum, records_per_step=per_step).map(
        lambda row: {"prompt": prompter.chat({**row, "meta": json.loads(row["meta"])})})
    steps: dict[int, list[tuple[int, int]]] = {}

    def reward(completions, trainer_state, **kwargs):
        steps.setdefault(trainer_state.global_step, []).extend(zip(kwargs["position"], kwargs["level"]))
        return gengap_reward(completions, **kwargs)

    GRPOTrainer(model=str(model), reward_funcs=reward, args=args, train_dataset=rl, processing_class=AutoTokenizer.from_pretrained(model)).train()
    assert sorted(steps) == [0, 1, 2]
    for step, seen in steps.items():
        positions = sorted({position for position, _ in seen})
        assert positions == list(range(per_step * step, per_step * (step + 1))), (step, positions)  # in order, none skipped
        assert {level for _, level in seen} == {step + 1}  # the curriculum's level of this very step
        assert len(seen) == 2 * per_step  # each prompt once per generation


@pytest.mark.slow
def test_grpo_on_a_task_mixture_keeps_stream_order_and_rewards_each_row_by_its_task(model: Path, tmp_path: Path) -> None:
    """A mixture stream through GRPOTrainer: rows in stream order, several tasks per step, each
    row's reward computed by its own task's checker (a right answer to every row scores 1)."""
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from gengap.baselines.stream_datasets import grpo_records_per_step, hf_iterable_dataset
    from gengap.generators import parse_curriculum
    from gengap.generators.mixtures import parse_mixture
    from gengap.harnesses import Prompter, gengap_token_reward

    args = GRPOConfig(output_dir=str(tmp_path / "grpo"), per_device_train_batch_size=4, gradient_accumulation_steps=2, num_generations=2,
                      max_completion_length=4, max_steps=3, report_to="none", use_cpu=True, logging_steps=1, save_strategy="no", bf16=False,
                      shuffle_dataset=False)
    per_step = grpo_records_per_step(args)
    mixture = parse_mixture("components: [{task: parity_check, weight: 1, curriculum: 'step:start=1,end=3,every=1'}, {task: addition, weight: 1, level: 1}]")
    prompters = {c.task: Prompter(c.task) for c in mixture.components}
    curricula = [parse_curriculum("step:start=1,end=3,every=1"), parse_curriculum("fixed:1")]
    rl = hf_iterable_dataset(mixture.stream(1), curriculum=curricula, records_per_step=per_step).map(
        lambda row: {"prompt": prompters[row["task"]].chat({**row, "meta": json.loads(row["meta"])})})
    steps: dict[int, list[tuple[int, str, int]]] = {}

    def reward(completions, trainer_state, **kwargs):
        steps.setdefault(trainer_state.global_step, []).extend(zip(kwargs["position"], kwargs["task"], kwargs["level"]))
        right = [f"Answer: {target}" for target in kwargs["target"]]
        assert gengap_reward(right, **kwargs) == [1.0] * len(right) and gengap_token_reward(right, **kwargs) == [1.0] * len(right)
        return gengap_reward(completions, **kwargs)

    GRPOTrainer(model=str(model), reward_funcs=reward, args=args, train_dataset=rl, processing_class=AutoTokenizer.from_pretrained(model)).train()
    assert sorted(steps) == [0, 1, 2]
    for step, seen in steps.items():
        assert sorted({position for position, _, _ in seen}) == list(range(per_step * step, per_step * (step + 1)))
        assert {level for _, task, level in seen if task == "parity_check"} <= {step + 1}
    assert {task for seen in steps.values() for _, task, _ in seen} == {"parity_check", "addition"}


def test_gengap_eval_default_run_directory(model: Path, release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["eval", str(model), "--release", str(release), "--config", "addition-iid", "--limit", "2"]) == 0
    results = json.loads((tmp_path / "runs" / "eval-answers-one-addition-iid" / "results.json").read_text())
    assert results["config"] == "addition-iid" and results["data"]["evaluated"] == {"id": 2, "ood": 2}
    assert main(["eval", str(model), "--release", str(release), "--config", "addition-iid", "--limit", "2"]) == 2  # not empty now
