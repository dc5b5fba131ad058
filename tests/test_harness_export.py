"""Harnesses: `gengap export --to chat|verl|lm-eval` (no torch; Parquet through pyarrow and datasets)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import yaml

from generators import get_task
from gengap.cli import main
from harnesses import HarnessError, Prompter, export_release, open_release
from harnesses.export import EXPORT_MARKER
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


def test_chat_export_is_sft_ready_and_deterministic(release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = export(release, tmp_path, "chat", "--shots", "2", "--seed", "3")
    captured = capsys.readouterr()
    assert "3 configs" in captured.out and "shortest_path-length/validation is empty" in captured.err
    manifest = json.loads((out / EXPORT_MARKER).read_text())
    fingerprint = json.loads((release / "manifest.json").read_text())["fingerprint"]
    assert manifest["release"]["fingerprint"] == fingerprint and manifest["to"] == "chat"
    assert manifest["settings"] == {"shots": 2, "seed": 3, "system": False}
    assert manifest["skipped"] == ["shortest_path-length/validation"]
    assert [entry["name"] for entry in manifest["configs"]] == sorted(CONFIGS)
    rc = open_release(release).load("addition-iid")
    prompter = Prompter(rc.task, rc.params, rc.train, k=2, seed=3)
    for part in ("train", "validation", "test"):
        rows = [json.loads(line) for line in (out / "addition-iid" / f"{part}.jsonl").read_text().splitlines()]
        source = records(release, "addition-iid", part)
        assert len(rows) == len(source) == manifest["configs"][0]["files"][f"addition-iid/{part}.jsonl"]
        for index, (row, record) in enumerate(zip(rows, source)):
            assert row["messages"] == prompter.sft(record)
            assert [m["role"] for m in row["messages"]] == ["user", "assistant"] * 3
            assert row["messages"][-1] == {"role": "assistant", "content": f"Answer: {record['target']}"}
            assert "reversed" in row["messages"][0]["content"]  # the instruction states the config's output format
            assert (row["id"], row["task"], row["config"], row["split"], row["index"]) == (record["id"], "addition", "addition-iid", part, index)
            assert row["side"] == {"train": "train", "validation": "id", "test": "ood"}[part]
            assert json.loads(row["meta"]) == record["meta"] and row["input"] == record["input"] and row["target"] == record["target"]
    assert not (out / "shortest_path-length" / "validation.jsonl").exists()
    (tmp_path / "again").mkdir()
    again = export(release, tmp_path / "again", "chat", "--shots", "2", "--seed", "3")
    for path in sorted(out.rglob("*.jsonl")):
        assert path.read_bytes() == (again / path.relative_to(out)).read_bytes()
    import datasets

    loaded = datasets.load_dataset("json", data_files=str(out / "parity_check-length" / "test.jsonl"), split="train")
    assert loaded.column_names[0] == "messages" and loaded[0]["messages"][-1]["role"] == "assistant"


def test_chat_export_with_a_system_message(release: Path, tmp_path: Path) -> None:
    out = export(release, tmp_path, "chat", "--system", "--config", "parity_check-length", "--config", "parity_check-length")
    assert [p.name for p in out.iterdir() if p.is_dir()] == ["parity_check-length"]
    row = json.loads((out / "parity_check-length" / "test.jsonl").read_text().splitlines()[0])
    assert [m["role"] for m in row["messages"]] == ["system", "user", "assistant"]
    assert row["messages"][1]["content"].startswith("Input: ")


# -- verl ---------------------------------------------------------------------------------------


def load_reward(out: Path):
    spec = importlib.util.spec_from_file_location("gengap_export_reward", out / "reward.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.compute_score


def test_verl_parquet_round_trips_through_datasets_and_the_reward_scores_it(release: Path, tmp_path: Path) -> None:
    import datasets

    out = export(release, tmp_path, "verl", "--shots", "1")
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
    assert set(features["extra_info"]) == {"split", "side", "index", "id", "config", "task", "input", "meta"}
    assert features["prompt"].feature["role"].dtype == "string" and features["extra_info"]["index"].dtype == "int64"
    source = records(release, "shortest_path-length", "test")
    alternatives = 0
    for index, (row, record) in enumerate(zip(test, source)):
        assert row["data_source"] == "gengap/shortest_path-length/ood" and row["ability"] == "structured"
        assert row["prompt"] == prompter.chat(record)
        assert row["reward_model"] == {"style": "rule", "ground_truth": record["target"]}
        info = row["extra_info"]
        assert (info["split"], info["side"], info["index"], info["id"], info["config"], info["task"], info["input"]) == (
            "test", "ood", index, record["id"], "shortest_path-length", "shortest_path", record["input"])
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


def test_lm_eval_export_layout(release: Path, tmp_path: Path) -> None:
    out = export(release, tmp_path, "lm-eval", "--shots", "2")
    manifest = json.loads((out / EXPORT_MARKER).read_text())
    assert manifest["group"] == "harness-suite"
    top = yaml.load((out / "harness-suite.yaml").read_text(), Loader=FunctionTag)
    assert top["group"] == "harness-suite" and top["task"] == sorted(CONFIGS)
    group = yaml.load((out / "parity_check-length" / "parity_check-length.yaml").read_text(), Loader=FunctionTag)
    assert group["task"] == ["parity_check-length_id", "parity_check-length_ood"] and "aggregate_metric_list" not in group
    assert yaml.load((out / "shortest_path-length" / "shortest_path-length.yaml").read_text(), Loader=FunctionTag)["task"] == ["shortest_path-length_ood"]
    task = yaml.load((out / "parity_check-length" / "parity_check-length_ood.yaml").read_text(), Loader=FunctionTag)
    assert task["task"] == "parity_check-length_ood" and task["test_split"] == "test" and task["output_type"] == "generate_until"
    assert task["custom_dataset"] == ("function", "utils.load_docs") and task["process_results"] == ("function", "utils.process_results")
    assert task["doc_to_text"] == "prompt" and task["doc_to_target"] == "target"
    assert task["generation_kwargs"]["until"] == ["\n"] and task["generation_kwargs"]["do_sample"] is False
    assert task["metric_list"] == [{"metric": "exact_match", "aggregation": "mean", "higher_is_better": True}]
    docs = [json.loads(line) for line in (out / "parity_check-length" / "test.jsonl").read_text().splitlines()]
    rc = open_release(release).load("parity_check-length")
    prompter = Prompter(rc.task, rc.params, rc.train, k=2)
    assert [d["prompt"] for d in docs] == [prompter.text(r) for r in rc.parts["test"]]
    assert all(d["prompt"].endswith("\nAnswer:") and d["prompt"].count("Input: ") == 3 for d in docs)
    assert json.loads(docs[0]["novelty"]) == rc.parts["test"][0]["novelty"]
    # the hooks: documents relative to utils.py, exact match by gengap's scoring
    spec = importlib.util.spec_from_file_location("exported_utils", out / "parity_check-length" / "utils.py")
    utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(utils)
    loaded = utils.load_docs(version=1.0)
    assert set(loaded) == {"validation", "test"} and len(loaded["test"]) == len(docs)
    doc = loaded["test"][0]
    assert utils.process_results(doc, [f" {doc['target']}"]) == {"exact_match": 1.0}
    assert utils.process_results(doc, [" 0 1"]) == {"exact_match": 0.0}


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
