"""Harnesses: `gengap export --to chat|verl|lm-eval` (no torch; Parquet through pyarrow and datasets)."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest
import yaml

from gengap.generators import get_task
from gengap.cli import main
from gengap.harnesses import HarnessError, Prompter, export_release, gengap_format_reward, gengap_reward, open_release
from gengap.harnesses.export import EXPORT_MARKER
from gengap.harnesses.extraction import format_ok
from gengap.harnesses.prompts import FORMAT_INSTRUCTIONS
from gengap.harnesses.releases import evaluation_order
from tests.harness_fixture import CONFIGS, build_release, other_shortest_path


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_release(tmp_path_factory.mktemp("harness"))


def export(release: Path, tmp_path: Path, to: str, *extra: str) -> Path:
    out = tmp_path / f"export-{to}"
    assert main(["export", str(release), "--to", to, "--out", str(out), *extra]) == 0
    return out


def records(release: Path, config: str, part: str) -> list[dict]:
    path = release / "data" / config / f"{part}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# -- chat ---------------------------------------------------------------------------------------


def test_chat_export_is_prompt_completion_and_deterministic(release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = export(release, tmp_path, "chat", "--shots", "2", "--seed", "3")
    captured = capsys.readouterr()
    assert "3 configs" in captured.out and "shortest_path-length/validation is empty" in captured.err
    manifest = json.loads((out / EXPORT_MARKER).read_text())
    fingerprint = json.loads((release / "manifest.json").read_text())["fingerprint"]
    assert manifest["release"]["fingerprint"] == fingerprint and manifest["to"] == "chat"
    assert manifest["settings"] == {"shots": 2, "seed": 3, "system": False, "answer_format": "line"}
    assert manifest["skipped"] == ["shortest_path-length/validation"]
    assert [entry["name"] for entry in manifest["configs"]] == sorted(CONFIGS)
    rc = open_release(release).load("addition-iid")
    prompter = Prompter(rc.task, rc.params, rc.train, k=2, seed=3)
    for part in ("train", "validation", "test"):
        rows = [json.loads(line) for line in (out / "addition-iid" / f"{part}.jsonl").read_text().splitlines()]
        source = records(release, "addition-iid", part)
        assert len(rows) == len(source) == manifest["configs"][0]["files"][f"addition-iid/{part}.jsonl"]
        for index, (row, record) in enumerate(zip(rows, source)):
            assert list(row)[:2] == ["prompt", "completion"] and "messages" not in row  # TRL's conversational prompt/completion form
            assert row["prompt"] + row["completion"] == prompter.sft(record)
            assert [m["role"] for m in row["prompt"]] == ["user", "assistant"] * 2 + ["user"]
            assert row["completion"] == [{"role": "assistant", "content": f"Answer: {record['target']}"}]
            assert "reversed" in row["prompt"][0]["content"]  # the instruction states the config's output format
            assert (row["id"], row["task"], row["config"], row["split"], row["index"]) == (record["id"], "addition", "addition-iid", part, index)
            assert row["answer_format"] == "line"
            assert row["side"] == {"train": "train", "validation": "id", "test": "ood"}[part]
            assert json.loads(row["meta"]) == record["meta"] and row["input"] == record["input"] and row["target"] == record["target"]
    assert not (out / "shortest_path-length" / "validation.jsonl").exists()
    (tmp_path / "again").mkdir()
    again = export(release, tmp_path / "again", "chat", "--shots", "2", "--seed", "3")
    for path in sorted(out.rglob("*.jsonl")):
        assert path.read_bytes() == (again / path.relative_to(out)).read_bytes()
    import datasets

    loaded = datasets.load_dataset("json", data_files=str(out / "parity_check-length" / "test.jsonl"), split="train")
    assert loaded.column_names[:2] == ["prompt", "completion"] and loaded[0]["completion"][0]["role"] == "assistant"


@pytest.mark.parametrize("form", ["tags", "think", "boxed"])
def test_chat_export_with_a_system_message_and_an_answer_format(release: Path, tmp_path: Path, form: str) -> None:
    out = export(release, tmp_path, "chat", "--system", "--answer-format", form, "--shots", "1",
                 "--config", "parity_check-length", "--config", "parity_check-length")
    assert [p.name for p in out.iterdir() if p.is_dir()] == ["parity_check-length"]
    assert json.loads((out / EXPORT_MARKER).read_text())["settings"]["answer_format"] == form
    row = json.loads((out / "parity_check-length" / "test.jsonl").read_text().splitlines()[0])
    assert [m["role"] for m in row["prompt"]] == ["system", "user", "assistant", "user"]
    assert row["prompt"][0]["content"].endswith(FORMAT_INSTRUCTIONS[form]) and row["prompt"][1]["content"].startswith("Input: ")
    for reply in (row["prompt"][2]["content"], row["completion"][0]["content"]):
        assert format_ok(reply, form)
    assert row["answer_format"] == form
    assert gengap_format_reward([row["completion"]], **{key: [value] for key, value in row.items()}) == [1.0]
    assert gengap_reward([row["completion"]], **{key: [value] for key, value in row.items()}) == [1.0]


# -- verl ---------------------------------------------------------------------------------------


def load_reward(out: Path):
    spec = importlib.util.spec_from_file_location("gengap_export_reward", out / "reward.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.compute_score


def test_verl_parquet_round_trips_through_datasets_and_the_reward_scores_it(release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import datasets

    out = export(release, tmp_path, "verl", "--shots", "1")
    printed = capsys.readouterr().out  # the keys verl 0.9.1's main_ppo reads (it ignores top-level custom_reward_function.*)
    assert f"verl 0.9.1 main_ppo): reward.custom_reward_function.path={out}/reward.py reward.custom_reward_function.name=compute_score" in printed
    assert " custom_reward_function." not in printed
    assert "reward.custom_reward_function.path=<this file>" in (out / "reward.py").read_text()
    compute_score = load_reward(out)
    rc = open_release(release).load("shortest_path-length")
    prompter = Prompter(rc.task, rc.params, rc.train, k=1)
    files = {part: str(out / "shortest_path-length" / f"{part}.parquet") for part in ("train", "test")}
    assert not (out / "shortest_path-length" / "validation.parquet").exists()
    loaded = datasets.load_dataset("parquet", data_files=files)
    test = loaded["test"]
    assert test.column_names == ["data_source", "prompt", "ability", "reward_model", "extra_info"]
    features = test.features
    assert set(features["reward_model"]) == {"style", "ground_truth"}
    assert set(features["extra_info"]) == {"split", "side", "index", "id", "config", "task", "input", "meta", "answer_format"}
    assert features["prompt"].feature["role"].dtype == "string" and features["extra_info"]["index"].dtype == "int64"
    source = records(release, "shortest_path-length", "test")
    alternatives = 0
    for index, (row, record) in enumerate(zip(test, source)):
        assert row["data_source"] == "gengap/shortest_path-length/ood" and row["ability"] == "structured"
        assert row["prompt"] == prompter.chat(record)
        assert row["reward_model"] == {"style": "rule", "ground_truth": record["target"]}
        info = row["extra_info"]
        assert (info["split"], info["side"], info["index"], info["id"], info["config"], info["task"], info["input"], info["answer_format"]) == (
            "test", "ood", index, record["id"], "shortest_path-length", "shortest_path", record["input"], "line")
        truth = row["reward_model"]["ground_truth"]
        assert compute_score(row["data_source"], f"The path:\nAnswer: {truth}", truth, info) == 1.0
        assert compute_score(row["data_source"], f"Answer: {truth} {truth.split()[0]}", truth, info) == 0.0
        assert compute_score(row["data_source"], "I do not know.", truth, info) == 0.0
        other = other_shortest_path(record)
        if other is not None:  # another shortest path is right too: the checker decides
            assert get_task("shortest_path").check(record, other)
            assert compute_score(row["data_source"], f"Answer: {other}", truth, info) == 1.0
            alternatives += 1
    assert alternatives >= 1  # the test part holds a graph with two shortest paths
    assert len(test) == 30 and loaded["train"][0]["data_source"] == "gengap/shortest_path-length/train"
    # the reversed format of addition reaches the checker through extra_info.meta
    addition = datasets.load_dataset("parquet", data_files=str(out / "addition-iid" / "validation.parquet"), split="train")[0]
    truth = addition["reward_model"]["ground_truth"]
    assert json.loads(addition["extra_info"]["meta"]) == {"format": "reversed"}
    assert compute_score(addition["data_source"], f"\\boxed{{{truth.replace(' ', '')}}}", truth, addition["extra_info"]) == 1.0
    assert addition["data_source"] == "gengap/addition-iid/id"


# -- lm-eval (layout; the runs are in test_harness_models.py) ----------------------------------


class FunctionTag(yaml.SafeLoader):
    pass


FunctionTag.add_constructor("!function", lambda loader, node: ("function", loader.construct_scalar(node)))


def load_yaml(path: Path) -> dict:
    return yaml.load(path.read_text(), Loader=FunctionTag)


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_lm_eval_export_layout(release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = export(release, tmp_path, "lm-eval", "--shots", "2")
    assert "--tasks harness-suite " in capsys.readouterr().out
    manifest = json.loads((out / EXPORT_MARKER).read_text())
    assert manifest["group"] == "harness-suite"
    assert manifest["groups"] == {"id_tag": "harness-suite_id_tasks", "ood_tag": "harness-suite_ood_tasks", "id": "harness-suite_id", "ood": "harness-suite_ood",
                                  "cot_id_tag": "harness-suite_id_cot_tasks", "cot_ood_tag": "harness-suite_ood_cot_tasks",
                                  "cot_id": "harness-suite_cot_id", "cot_ood": "harness-suite_cot_ood", "cot": "harness-suite_cot"}
    # release-wide: <release> holds the ID and OOD groups, each the tag of its tasks with the mean exact match over configs
    assert load_yaml(out / "harness-suite.yaml") == {"group": "harness-suite", "task": ["harness-suite_id", "harness-suite_ood"], "metadata": {"version": 2.0}}
    for side in ("id", "ood"):
        group = load_yaml(out / f"harness-suite_{side}.yaml")
        assert group["task"] == [f"harness-suite_{side}_tasks"]
        assert group["aggregate_metric_list"] == [{"metric": "exact_match", "aggregation": "mean", "weight_by_size": False}]
    group = load_yaml(out / "parity_check-length" / "parity_check-length.yaml")
    assert group["task"] == ["parity_check-length_id", "parity_check-length_ood"] and "aggregate_metric_list" not in group
    assert load_yaml(out / "shortest_path-length" / "shortest_path-length.yaml")["task"] == ["shortest_path-length_ood"]
    tags = {}
    for path in sorted(out.glob("*/*_id.yaml")) + sorted(out.glob("*/*_ood.yaml")):
        tags[load_yaml(path)["task"]] = load_yaml(path)["tag"]
    assert tags == {f"{c}_{side}": [f"harness-suite_{side}_tasks"] for c in CONFIGS for side in ("id", "ood") if (c, side) != ("shortest_path-length", "id")}
    task = load_yaml(out / "parity_check-length" / "parity_check-length_ood.yaml")
    assert task["task"] == "parity_check-length_ood" and task["test_split"] == "test" and task["output_type"] == "generate_until"
    # shots are lm-eval's, drawn from the train part only; --shots sets the default number (reported as n-shot)
    assert task["fewshot_split"] == "train" and task["num_fewshot"] == 2
    assert (task["description"], task["doc_to_text"], task["doc_to_target"]) == ("description", "query", "target")
    assert (task["target_delimiter"], task["fewshot_delimiter"]) == (" ", "\n\n")
    assert task["custom_dataset"] == ("function", "utils.load_docs") and task["process_results"] == ("function", "utils.process_results")
    assert task["generation_kwargs"]["until"] == ["\n"] and task["generation_kwargs"]["do_sample"] is False
    assert task["metric_list"] == [{"metric": "exact_match", "aggregation": "mean", "higher_is_better": True}]
    rc = open_release(release).load("parity_check-length")
    prompter = Prompter(rc.task, rc.params, rc.train)
    for part in ("validation", "test"):
        docs = jsonl(out / "parity_check-length" / f"{part}.jsonl")
        records = rc.parts[part]
        order = evaluation_order(records)
        assert order != sorted(order)  # written in gengap's evaluation order, not the file's
        assert [d["index"] for d in docs] == order and [d["id"] for d in docs] == [records[i]["id"] for i in order]
        for doc in docs:  # description + query is the zero-shot text prompt; the query holds no example
            record = records[doc["index"]]
            assert doc["description"] + doc["query"] == prompter.text(record)
            assert doc["query"] == f"Input: {record['input']}\nAnswer:" and doc["description"].endswith("\n\n")
    assert json.loads(jsonl(out / "parity_check-length" / "test.jsonl")[0]["novelty"]) == rc.parts["test"][evaluation_order(rc.parts["test"])[0]]["novelty"]
    train = jsonl(out / "parity_check-length" / "train.jsonl")
    assert [d["id"] for d in train] == [r["id"] for r in rc.train] and {d["split"] for d in train} == {"train"}
    # the hooks: documents relative to utils.py, exact match by gengap's scoring
    spec = importlib.util.spec_from_file_location("exported_utils", out / "parity_check-length" / "utils.py")
    utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(utils)
    loaded = utils.load_docs(version=1.0)
    assert set(loaded) == {"train", "validation", "test"} and len(loaded["test"]) == len(rc.parts["test"]) and len(loaded["train"]) == len(train)
    doc = loaded["test"][0]
    assert utils.process_results(doc, [f" {doc['target']}"]) == {"exact_match": 1.0}
    assert utils.process_results(doc, [" 0 1"]) == {"exact_match": 0.0}
    # without --shots the tasks name no number of shots (lm-eval's --num_fewshot decides)
    (tmp_path / "bare").mkdir()
    bare = export(release, tmp_path / "bare", "lm-eval")
    assert "num_fewshot" not in load_yaml(bare / "parity_check-length" / "parity_check-length_id.yaml")
    assert main(["export", str(release), "--to", "lm-eval", "--out", str(tmp_path / "tags"), "--answer-format", "tags"]) == 2
    assert main(["export", str(release), "--to", "lm-eval", "--out", str(tmp_path / "system"), "--system"]) == 2


def test_lm_eval_shot_pool_holds_no_held_out_input(release: Path, tmp_path: Path) -> None:
    """A release written by hand: a train record with a test input never becomes a shot; no train part -> num_fewshot 0."""
    import shutil

    copy = tmp_path / "hand-made"
    shutil.copytree(release / "data", copy / "data")
    folder = copy / "data" / "parity_check-length"
    leak = records(release, "parity_check-length", "test")[0]
    (folder / "train.jsonl").write_text((folder / "train.jsonl").read_text() + json.dumps(leak) + "\n")
    (copy / "data" / "addition-iid" / "train.jsonl").write_text("")
    out = export(copy, tmp_path, "lm-eval")
    train = jsonl(out / "parity_check-length" / "train.jsonl")
    assert len(train) == len(records(release, "parity_check-length", "train")) and leak["input"] not in {d["input"] for d in train}
    held_out = {r["input"] for part in ("validation", "test") for r in records(release, "parity_check-length", part)}
    assert not held_out & {d["input"] for d in train}
    assert not (out / "addition-iid" / "train.jsonl").exists()
    assert load_yaml(out / "addition-iid" / "addition-iid_ood.yaml")["num_fewshot"] == 0  # lm-eval then ignores --num_fewshot
    assert "addition-iid/train" in json.loads((out / EXPORT_MARKER).read_text())["skipped"]


# -- lm-eval through lm-eval itself (its task loader and prompt builder; no model) --------------

MULTI_SUITE = """\
name: multi-suite
version: 0.0.1
seed: 5
license: mit
created: "2026-01-01"
entries:
  - split: held
    tasks:
      - {task: parity_check, params: {max_length: 8}}
      - {task: reverse_string, params: {max_length: 8}}
      - {task: bucket_sort, params: {max_length: 8}}
    pool: {n: 60}
    strategy: task_holdout
    options: {test_tasks: [bucket_sort]}
  - {task: parity_check, split: length, train_range: [1, 8], test_range: [9, 12], sizes: {train: 30, validation: 6, test: 10}}
"""
EXAMPLE = re.compile(r"Input: ([^\n]*)\n(?:Answer: ([^\n]*)|<answer>(.*?)</answer>)")  # a shot: its query and its answer


def lm_eval_contexts(include: Path, names: list[str], shots: int) -> dict[str, list[tuple[dict, str, dict]]]:
    """(document, context, generation settings) of every request lm-eval 0.4.13 builds for the tasks, with `shots` shots."""
    from lm_eval.tasks import TaskManager

    manager = TaskManager(include_path=str(include), include_defaults=False)
    built: dict[str, list[tuple[dict, str, dict]]] = {}
    for name, task in manager.load(names)["tasks"].items():
        task.set_config(key="num_fewshot", value=shots)
        task.set_fewshot_seed(1234)
        task.build_all_requests(rank=0, world_size=1)
        built[str(name)] = [(inst.doc, inst.args[0], inst.args[1]) for inst in task.instances]
    return built


@pytest.fixture(scope="module")
def multi_export(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("multi")
    (root / "suite.yaml").write_text(MULTI_SUITE)
    assert main(["release", str(root / "suite.yaml"), "--out", str(root / "release"), "--workers", "1"]) == 0
    assert main(["export", str(root / "release"), "--to", "lm-eval", "--out", str(root / "lm"), "--shots", "2"]) == 0
    return root / "release", root / "lm"


def test_lm_eval_shots_come_from_the_querys_own_task(multi_export: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """In a multi-task config every shot lm-eval puts in a prompt is a train record of the query's
    own task; the held-out task gets none; a one-task config keeps lm-eval's own draw from train."""
    release, out = multi_export
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    loaded = open_release(release)
    train = {config: {(r["input"], r["target"]): r["task"] for r in loaded.load(config).train} for config in ("multi-held", "parity_check-length")}
    assert {"parity_check", "reverse_string"} == set(train["multi-held"].values())
    built = lm_eval_contexts(out, ["multi-held_id", "multi-held_ood", "multi-held_id_cot", "multi-held_ood_cot", "parity_check-length_id"], 3)
    counts: dict[str, int] = {}
    for name, requests in built.items():
        assert requests, name
        config = "multi-held" if name.startswith("multi") else "parity_check-length"
        for doc, context, _ in requests:
            found = [(q, (a or b).strip()) for q, a, b in EXAMPLE.findall(context)]
            assert len(found) == (0 if doc["task"] == "bucket_sort" else 3), (name, context)
            assert all(train[config].get(shot) == doc["task"] for shot in found), (name, found, doc["task"])
            counts[doc["task"]] = counts.get(doc["task"], 0) + len(found)
    assert counts["bucket_sort"] == 0 and counts["parity_check"] > 0 and counts["reverse_string"] > 0
    held = load_yaml(out / "multi-held" / "multi-held_ood.yaml")
    assert held["fewshot_split"] == "test" and held["fewshot_config"] == {"sampler": ("function", "utils.OwnTaskSampler")}
    assert load_yaml(out / "parity_check-length" / "parity_check-length_ood.yaml")["fewshot_split"] == "train"
    assert "fewshot_config" not in load_yaml(out / "parity_check-length" / "parity_check-length_ood.yaml")


def test_lm_eval_chain_of_thought_tasks(multi_export: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Each evaluated part has a chain-of-thought task: it asks for reasoning and the answer in
    tags, stops at </answer> with a larger budget, and scores what lm-eval returns (the stop string cut off)."""
    release, out = multi_export
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    manifest = json.loads((out / EXPORT_MARKER).read_text())
    entry = next(e for e in manifest["configs"] if e["name"] == "parity_check-length")
    assert entry["cot_tasks"] == ["parity_check-length_id_cot", "parity_check-length_ood_cot"] and entry["cot_group"] == "parity_check-length_cot"
    assert load_yaml(out / "parity_check-length" / "parity_check-length_cot.yaml")["task"] == entry["cot_tasks"]
    assert load_yaml(out / "multi-suite_cot.yaml")["task"] == ["multi-suite_cot_id", "multi-suite_cot_ood"]
    assert load_yaml(out / "multi-suite_cot_ood.yaml")["task"] == ["multi-suite_ood_cot_tasks"]
    assert "multi-suite_cot" not in load_yaml(out / "multi-suite.yaml")["task"]  # the plain run stays the plain tasks
    built = lm_eval_contexts(out, ["parity_check-length_ood", "parity_check-length_ood_cot"], 2)
    plain, cot = built["parity_check-length_ood"], built["parity_check-length_ood_cot"]
    assert [doc["id"] for doc, _, _ in plain] == [doc["id"] for doc, _, _ in cot]
    spec = importlib.util.spec_from_file_location("cot_utils", out / "parity_check-length" / "utils.py")
    utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(utils)
    for (doc, context, settings), (_, plain_context, plain_settings) in zip(cot, plain):
        assert settings["until"] == ["</answer>"] and settings["max_gen_toks"] == plain_settings["max_gen_toks"] + 1024
        assert plain_settings["until"] == ["\n"]
        assert FORMAT_INSTRUCTIONS["tags"] in context and FORMAT_INSTRUCTIONS["tags"] not in plain_context
        assert context.endswith(f"Input: {doc['input']}\n") and context.count("\n<answer>") == 2  # two shots, each its answer in tags
        reasoning = f"Count the ones of {doc['input']}.\n<answer>{doc['target']}"  # lm-eval cuts the stop string off
        assert utils.process_results(doc, [reasoning]) == {"exact_match": 1.0}
        wrong = "1" if doc["target"] == "0" else "0"
        assert utils.process_results(doc, [f"Hmm.\n<answer>{wrong}"]) == {"exact_match": 0.0}
    files = set(export_files_of(out))
    assert {"parity_check-length/parity_check-length_ood_cot.yaml", "parity_check-length/parity_check-length_cot.yaml",
            "multi-suite_cot.yaml", "multi-suite_cot_id.yaml"} <= files
    on_disk = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    assert on_disk <= files  # --force accounts for every file the export wrote


def export_files_of(out: Path) -> list[str]:
    from gengap.harnesses.export import export_files

    return export_files(json.loads((out / EXPORT_MARKER).read_text())) or []


# -- the command line ---------------------------------------------------------------------------


def test_export_refuses_bad_requests_and_leaves_nothing(release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["export", str(release), "--to", "parquet", "--out", str(out)]) == 2
    assert main(["export", str(tmp_path), "--to", "chat", "--out", str(out)]) == 2
    assert main(["export", str(release), "--to", "chat", "--out", str(out), "--config", "nope"]) == 2
    assert "no config 'nope'" in capsys.readouterr().err
    assert main(["export", str(release), "--to", "chat", "--out", str(out), "--shots", "-1"]) == 2
    assert not out.exists() and not [p for p in tmp_path.iterdir() if "gengap-staging" in p.name]
    first = export(release, tmp_path, "chat", "--config", "parity_check-length")
    assert main(["export", str(release), "--to", "chat", "--out", str(first)]) == 2  # exists
    assert main(["export", str(release), "--to", "verl", "--out", str(first), "--force"]) == 0  # an export is replaced
    assert (first / "reward.py").exists() and not (first / "parity_check-length" / "train.jsonl").exists()
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    assert main(["export", str(release), "--to", "chat", "--out", str(foreign), "--force"]) == 2
    assert (foreign / "notes.txt").read_text() == "mine"
    with pytest.raises(HarnessError, match="not an empty directory"):
        export_release(release, foreign, "chat")
    with pytest.raises(HarnessError, match="unknown export format"):
        export_release(release, tmp_path / "x", "csv")


@pytest.mark.parametrize("deleted", ["a config's data folder", "a test.jsonl"])
def test_export_of_a_release_with_deleted_data_is_refused_not_silent(release: Path, tmp_path: Path, deleted: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 38, item 10: a deleted data folder left its config silently out (exit 0); a deleted
    test.jsonl was reported as an empty part and the OOD side dropped."""
    import shutil

    copy = Path(shutil.copytree(release, tmp_path / "release"))
    config = sorted(CONFIGS)[0]
    if deleted == "a test.jsonl":
        (copy / "data" / config / "test.jsonl").unlink()
        expected = f"data/{config}/test.jsonl is missing (a part of config {config} that manifest.json lists"
    else:
        shutil.rmtree(copy / "data" / config)
        expected = f"config {config} of manifest.json has no data/{config}/train.jsonl"
    out = tmp_path / "out"
    assert main(["export", str(copy), "--to", "chat", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1 and "is empty" not in err
    assert not out.exists()
