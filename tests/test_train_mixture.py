"""Mixtures in training: gengap train --stream MIXTURE (tiny CPU runs, exact resume, no leaks, bad files),
the torch and Hugging Face adapters, and rewards routed per row's task (TRL and verl signatures)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
import torch

from gengap.baselines.errors import BaselineError
from gengap.baselines.stream_datasets import TorchRecordStream, hf_iterable_dataset
from gengap.baselines.stream_train import StreamPlan
from gengap.baselines.training import train_and_evaluate
from gengap.generators.curriculum import parse_curriculum
from gengap.generators.mixtures import parse_mixture
from tests.test_train_stream import _comparable, parity_split  # noqa: F401  (a fixture)

MIXTURE = """
components:
  - task: parity_check
    weight: 2
    curriculum: adaptive:start=1,end=2,threshold=0.5,window=2
  - task: addition
    weight: 1
    level: 1
  - task: reverse_string
    weight: 1
    sizes: [[1, 4], [5, 6]]
    curriculum: step:start=1,end=2,every=4
"""
RUN = dict(pos="rope", preset="tiny", steps=24, eval_every=12, checkpoint_every=8, eval_examples=8, eval_limit=16, seeds=(0,), batch_size=16)


@pytest.fixture()
def mixture_file(tmp_path: Path) -> Path:
    path = tmp_path / "mix.yaml"
    path.write_text(MIXTURE)
    return path


def test_training_from_a_mixture_trains_every_task_never_a_held_out_input_and_resumes_exactly(
    parity_split, mixture_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gengap.baselines.training import Run

    trained: list[dict] = []
    original = Run.encode
    monkeypatch.setattr(Run, "encode", lambda self, records: trained.extend(records) or original(self, records))
    whole = train_and_evaluate(parity_split, "parity", out=tmp_path / "whole", progress=False, stream=str(mixture_file), **RUN)
    assert len(trained) == 24 * 16 and {r["task"] for r in trained} == {"parity_check", "addition", "reverse_string"}
    held_out = {r["input"] for r in parity_split.validation + parity_split.test}
    assert not held_out & {r["input"] for r in trained}
    stream = whole["stream"]
    assert stream["mixture"] == str(mixture_file) and [c["task"] for c in stream["components"]] == ["parity_check", "addition", "reverse_string"]
    assert stream["excluded_inputs"] == len(held_out)
    curriculum = whole["per_seed"][0]["curriculum"]
    assert [c["task"] for c in curriculum["components"]] == ["parity_check", "addition", "reverse_string"]
    assert curriculum["components"][2]["trace"] == [[1, 1], [5, 2]] and curriculum["components"][1]["trace"] == [[1, 1]]
    assert curriculum["components"][0]["promotions"]  # the adaptive parity component observed its own records and promoted
    rows = [json.loads(line) for line in (tmp_path / "whole" / "metrics.jsonl").read_text().splitlines()]
    assert [r["levels"][2] for r in rows] == [2, 2] and all(abs(sum(r["shares"]) - 1) < 1e-9 for r in rows)
    assert (tmp_path / "whole" / "plots" / "curriculum.png").exists()

    def kill(event: dict) -> None:
        if event["step"] == 22:  # after the checkpoint of step 16
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_and_evaluate(parity_split, "parity", out=tmp_path / "cut", progress=False, callback=kill, stream=str(mixture_file), **RUN)
    seen: list[int] = []
    resumed = train_and_evaluate(parity_split, "parity", out=tmp_path / "cut", resume=True, progress=False,
                                 callback=lambda e: seen.append(e["step"]), stream=str(mixture_file), **RUN)
    assert seen[0] == 17 and _comparable(resumed) == _comparable(whole)
    # a mixture file changed under a run cannot resume it
    with pytest.raises(KeyboardInterrupt):
        train_and_evaluate(parity_split, "parity", out=tmp_path / "cut2", progress=False, callback=kill, stream=str(mixture_file), **RUN)
    mixture_file.write_text(MIXTURE.replace("weight: 2", "weight: 3"))
    with pytest.raises(BaselineError, match="components changed since the checkpoint"):
        train_and_evaluate(parity_split, "parity", out=tmp_path / "cut2", resume=True, progress=False, stream=str(mixture_file), **RUN)


def test_a_one_task_plan_is_a_one_component_mixture() -> None:
    plan = StreamPlan.from_settings("parity_check", curriculum="step:start=1,end=3,every=2")
    assert plan.single is not None and plan.describe() == {"task": "parity_check", "curriculum": "step:start=1,end=3,every=2",
                                                           "levels": {str(k): p.to_dict() for k, p in plan.levels.items()}}


BAD_FILES = {
    "negative.yaml": "components: [{task: parity_check, weight: -1}]",
    "zero.yaml": "components: [{task: parity_check, weight: 0}, {task: addition, weight: 0.0}]",
    "nan.yaml": "components: [{task: parity_check, weight: .nan}]",
    "nan.json": '{"components": [{"task": "parity_check", "weight": NaN}]}',
    "unknown.yaml": "components: [{task: no_such_task, weight: 1}]",
    "empty.yaml": "components: []",
    "absent.yaml": None,
}


def test_cli_trains_from_a_mixture_file_and_refuses_bad_ones(parity_split, mixture_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from gengap.cli import main

    folder = tmp_path / "split"
    folder.mkdir()
    for part in ("train", "validation", "test"):
        (folder / f"{part}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in getattr(parity_split, part)))
    base = [str(folder), "--preset", "tiny", "--steps", "4", "--batch-size", "8", "--eval-every", "2", "--eval-limit", "8", "--eval-examples", "8"]
    out = tmp_path / "run"
    assert main(["train", *base, "--stream", str(mixture_file), "--out", str(out)]) == 0
    results = json.loads((out / "results.json").read_text())
    assert len(results["stream"]["components"]) == 3 and results["settings"]["stream"] == str(mixture_file)
    capsys.readouterr()
    for name, text in BAD_FILES.items():
        path = tmp_path / name
        if text is not None:
            path.write_text(text)
        target = tmp_path / f"bad-{name}"
        assert main(["train", *base, "--stream", str(path), "--out", str(target)]) == 2, name
        err = capsys.readouterr().err.strip()
        assert err.startswith("gengap: error:") and len(err.splitlines()) == 1 and str(path) in err and not target.exists(), err
    target = tmp_path / "bad-flags"
    assert main(["train", *base, "--stream", str(mixture_file), "--level", "2", "--out", str(target)]) == 2
    assert "per component" in capsys.readouterr().err and not target.exists()


# -- adapters and rewards ------------------------------------------------------------------------


def _stream(block_size: int = 10):
    return parse_mixture(MIXTURE.replace("adaptive:start=1,end=2,threshold=0.5,window=2", "step:start=1,end=2,every=3")).stream(5, block_size=block_size)


def test_torch_dataset_of_a_mixture_shards_over_workers_and_ranks() -> None:
    expected = [r for _, _, _, r in itertools.islice(_stream().iterate(chooser=_stream().chooser(records_per_step=8)), 120)]
    assert list(itertools.islice(iter(TorchRecordStream(_stream(), records_per_step=8)), 120)) == expected
    seen: list[dict] = []
    for rank in range(2):
        loader = torch.utils.data.DataLoader(TorchRecordStream(_stream(), records_per_step=8, rank=rank, world_size=2), batch_size=None, num_workers=2)
        seen.extend(itertools.islice(iter(loader), 60))
    assert sorted(json.dumps(r, sort_keys=True) for r in seen) == sorted(json.dumps(r, sort_keys=True) for r in expected)
    with pytest.raises(ValueError, match="one curriculum per component"):
        TorchRecordStream(_stream(), curriculum=parse_curriculum("fixed:1"))
    adaptive = parse_mixture(MIXTURE).stream(0, block_size=10)
    with pytest.raises(Exception, match="num_workers=0"):
        list(itertools.islice(iter(torch.utils.data.DataLoader(TorchRecordStream(adaptive), batch_size=None, num_workers=1)), 1))
    with pytest.raises(ValueError, match="adaptive"):
        hf_iterable_dataset(adaptive)


def test_hf_rows_of_a_mixture_and_rewards_routed_per_rows_task() -> None:
    from gengap.harnesses import Prompter, compute_score, gengap_reward, gengap_token_reward

    stream = _stream()
    expected = list(itertools.islice(_stream().iterate(), 60))
    rows = list(itertools.islice(iter(hf_iterable_dataset(stream)), 60))
    assert [(r["position"], r["component"], r["level"], r["task"], r["input"], r["target"]) for r in rows] == [
        (p, k, level, rec["task"], rec["input"], rec["target"]) for p, k, level, rec in expected
    ]
    assert {r["task"] for r in rows} == {"parity_check", "addition", "reverse_string"}
    ranks = [list(itertools.islice(iter(hf_iterable_dataset(_stream(), rank=k, world_size=2)), 30)) for k in range(2)]
    positions = [r["position"] for part in ranks for r in part]
    assert len(positions) == len(set(positions)) and set(range(20)) <= set(positions)
    # a mixed batch: every right answer scores 1 and a wrong one 0, each by its own task's checker
    columns = {key: [r[key] for r in rows] for key in ("task", "input", "target", "meta")}
    assert gengap_reward([f"Answer: {r['target']}" for r in rows], **columns) == [1.0] * len(rows)
    assert gengap_token_reward([f"<answer>{r['target']}</answer>" for r in rows], **columns) == [1.0] * len(rows)
    wrong = [next((o["target"] for o in rows if o["task"] == r["task"] and o["target"] != r["target"]), None) for r in rows]
    scored = gengap_reward([f"Answer: {w}" for w in wrong], **columns)
    assert all(s == 0.0 for s, w in zip(scored, wrong) if w is not None) and sum(w is not None for w in wrong) > 40
    for r, w in zip(rows, wrong):  # verl's signature: the task from extra_info, per row
        info = {"task": r["task"], "input": r["input"], "meta": r["meta"]}
        assert compute_score(f"gengap/{r['task']}", f"Answer: {r['target']}", r["target"], info) == 1.0
        if w is not None:
            assert compute_score(f"gengap/{r['task']}", f"Answer: {w}", r["target"], info) == 0.0
    # the GRPO dataset for a mixture (docs/streams.md): a prompt per row from its task's Prompter
    prompters = {task: Prompter(task) for task in {r["task"] for r in rows}}
    prompted = hf_iterable_dataset(_stream()).map(lambda row: {"prompt": prompters[row["task"]].chat({**row, "meta": json.loads(row["meta"])})})
    for row in itertools.islice(iter(prompted), 10):
        assert row["prompt"][-1]["content"].endswith(f"Input: {row['input']}")
