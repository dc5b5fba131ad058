"""Training from a stream: adaptive curriculum on a tiny CPU run, exact resume, no test leakage, CLI; torch and HF adapters."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
import torch

from gengap.baselines.errors import BaselineError
from gengap.baselines.stream_datasets import TorchRecordStream, hf_iterable_dataset
from gengap.baselines.stream_train import StreamPlan, StreamSource
from gengap.baselines.training import train_and_evaluate
from gengap.generators import get_task
from gengap.generators.curriculum import parse_curriculum
from gengap.generators.streams import RecordStream
from gengap.splits import sample_length_split

PARITY = get_task("parity_check")
ADAPTIVE = "adaptive:start=1,end=3,threshold=0.9,window=10"
RUN = dict(pos="rope", preset="tiny", steps=80, eval_every=40, checkpoint_every=20, eval_examples=8, eval_limit=16, seeds=(0,), stream="parity_check", curriculum=ADAPTIVE)


@pytest.fixture(scope="module")
def parity_split():
    """Train lengths 1..5 (level 1), test 6..8: validation and test inputs are in the stream's levels 1-2."""
    return sample_length_split("parity_check", (1, 5), (6, 8), {"train": 50, "validation": 20, "test": 20}, seed=0)


def _comparable(results: dict) -> list[dict]:
    return [{k: v for k, v in seed.items() if k not in ("tokens_per_s", "train_seconds")} for seed in results["per_seed"]]


def _rows(run: Path) -> list[dict]:
    timing = ("tokens_per_s", "train_seconds")
    return [{k: v for k, v in json.loads(line).items() if k not in timing} for line in (run / "metrics.jsonl").read_text().splitlines()]


def test_adaptive_curriculum_advances_and_resumes_exactly(parity_split, tmp_path: Path) -> None:
    whole = train_and_evaluate(parity_split, "parity", out=tmp_path / "whole", progress=False, **RUN)
    curriculum = whole["per_seed"][0]["curriculum"]
    assert curriculum["final_level"] >= 2 and curriculum["promotions"]  # it advanced at least one level
    promoted_at = curriculum["promotions"][0][0]
    assert curriculum["trace"][:2] == [[1, 1], [promoted_at + 1, 2]]  # the new level trains from the next step
    rows = _rows(tmp_path / "whole")
    assert [r["step"] for r in rows] == [40, 80] and all("level" in r and "mean_level" in r for r in rows)
    assert rows[-1]["level"] == curriculum["final_level"]
    assert (tmp_path / "whole" / "plots" / "curriculum.png").stat().st_size > 1000
    assert whole["stream"]["excluded_inputs"] == len({r["input"] for r in parity_split.validation + parity_split.test})

    def kill(event: dict) -> None:
        if event["step"] == 73:  # after the checkpoint of step 60
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_and_evaluate(parity_split, "parity", out=tmp_path / "cut", progress=False, callback=kill, **RUN)
    with pytest.raises(BaselineError, match="curriculum"):
        train_and_evaluate(parity_split, "parity", out=tmp_path / "cut", resume=True, progress=False, **{**RUN, "curriculum": "fixed:1"})
    seen: list[int] = []
    resumed = train_and_evaluate(parity_split, "parity", out=tmp_path / "cut", resume=True, progress=False, callback=lambda e: seen.append(e["step"]), **RUN)
    assert seen[0] == 61  # it went on from the checkpoint, with the stream's cursor and the curriculum's state
    assert _comparable(resumed) == _comparable(whole)
    assert _rows(tmp_path / "cut") == rows


def test_the_stream_never_trains_on_a_held_out_input(parity_split, monkeypatch: pytest.MonkeyPatch) -> None:
    from gengap.baselines.training import Run

    trained: list[str] = []
    original = Run.encode

    def spy(self, records):
        trained.extend(r["input"] for r in records)
        return original(self, records)

    monkeypatch.setattr(Run, "encode", spy)
    train_and_evaluate(parity_split, "parity", progress=False, plots=False, **{**RUN, "steps": 20, "curriculum": "mixture:1=0.9,2=0.1", "eval_every": 20})
    held_out = {r["input"] for r in parity_split.validation + parity_split.test}
    assert len(trained) == 20 * 64
    assert not held_out & set(trained)
    # level 1 (lengths 1..5: 62 inputs) overlaps validation: without exclusion these would be trained
    unfiltered = {r["input"] for r in itertools.islice(RecordStream.fixed("parity_check", PARITY.level(1), 0).records(), 1000)}
    assert held_out & unfiltered and sum(len(x.split()) <= 5 for x in trained) > 20 * 64 // 2


def test_stream_settings_are_checked(parity_split) -> None:
    with pytest.raises(BaselineError, match="need a stream"):
        train_and_evaluate(parity_split, "parity", level=2)
    with pytest.raises(BaselineError, match="not both"):
        StreamPlan.from_settings("parity_check", level=2, curriculum="fixed:2")
    with pytest.raises(BaselineError, match="unknown curriculum"):
        StreamPlan.from_settings("parity_check", curriculum="zigzag:1")
    with pytest.raises(BaselineError, match="unknown task"):
        StreamPlan.from_settings("no_such_task")
    with pytest.raises(BaselineError, match="max_length"):
        StreamPlan.from_settings("parity_check", params=(("max_length", "3"),), curriculum="fixed:4")
    plan = StreamPlan.from_settings("reverse_string", sizes=((1, 4), (5, 9)), curriculum="step:start=1,end=2,every=5")
    assert plan.levels[2] == get_task("reverse_string").with_size(5, 9)
    assert StreamPlan.from_settings("addition", params=(("format", "reversed"),), level=3).levels[3].format == "reversed"


def test_cli_trains_from_a_stream_and_rejects_bad_flags(parity_split, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from gengap.cli import main

    folder = tmp_path / "split"
    folder.mkdir()
    for part in ("train", "validation", "test"):
        records = getattr(parity_split, part)
        (folder / f"{part}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "run"
    base = [str(folder), "--stream", "parity_check", "--preset", "tiny", "--steps", "6", "--eval-every", "3", "--eval-limit", "8", "--eval-examples", "8"]
    assert main(["train", *base, "--level", "2", "--param", "max_length=7", "--out", str(out)]) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["stream"]["levels"] == {"2": {"min_length": 6, "max_length": 7}} and results["stream"]["curriculum"] == "fixed:2"
    assert [json.loads(l)["level"] for l in (out / "metrics.jsonl").read_text().splitlines()] == [2, 2]
    capsys.readouterr()
    bad = {
        "bogus": ["--curriculum", "zigzag"],
        "outside": ["--curriculum", "fixed:12"],
        "param": ["--param", "nope"],
        "sizes": ["--sizes", "5-1"],
    }
    for name, flags in bad.items():
        target = tmp_path / f"bad-{name}"
        assert main(["train", *base, *flags, "--out", str(target)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("gengap") and len(err.splitlines()) == 1 and not target.exists()
    assert main(["train", str(folder), "--level", "2", "--out", str(tmp_path / "nostream")]) == 2
    assert "need a stream" in capsys.readouterr().err


# -- adapters ---------------------------------------------------------------------------


def _stream() -> RecordStream:
    return RecordStream.of_task("parity_check", 5, block_size=10)


def test_torch_dataset_shards_over_workers_and_ranks() -> None:
    curriculum = parse_curriculum("step:start=1,end=3,every=4")
    whole = list(itertools.islice(iter(TorchRecordStream(_stream(), curriculum=curriculum, records_per_step=8)), 120))
    expected = [r for _, _, r in itertools.islice(_stream().iterate(chooser=_stream().chooser(curriculum.choose, 8)), 120)]
    assert whole == expected
    seen: list[dict] = []
    for rank in range(2):
        dataset = TorchRecordStream(_stream(), curriculum=curriculum, records_per_step=8, rank=rank, world_size=2)
        loader = torch.utils.data.DataLoader(dataset, batch_size=None, num_workers=2)
        got = list(itertools.islice(iter(loader), 60))  # workers alternate blocks of 10: 3 blocks each
        seen.extend(got)
    assert sorted(json.dumps(r, sort_keys=True) for r in seen) == sorted(json.dumps(r, sort_keys=True) for r in expected)
    adaptive = TorchRecordStream(_stream(), curriculum=parse_curriculum(ADAPTIVE))
    with pytest.raises(Exception, match="num_workers=0"):
        list(itertools.islice(iter(torch.utils.data.DataLoader(adaptive, batch_size=None, num_workers=1)), 1))


def test_hf_dataset_rows_are_the_stream() -> None:
    from datasets.distributed import split_dataset_by_node

    from gengap.harnesses import gengap_reward

    stream = RecordStream.fixed("parity_check", PARITY.level(2), 4, block_size=10)
    expected = list(itertools.islice(stream.iterate(), 40))
    rows = list(itertools.islice(iter(hf_iterable_dataset(stream)), 40))
    assert [(r["position"], r["input"], r["target"], json.loads(r["difficulty"])) for r in rows] == [
        (p, r["input"], r["target"], r["difficulty"]) for p, _, r in expected
    ]
    for world in (2, 3):
        ranks = [list(itertools.islice(iter(hf_iterable_dataset(stream, rank=k, world_size=world)), 20)) for k in range(world)]
        nodes = [list(itertools.islice(iter(split_dataset_by_node(hf_iterable_dataset(stream), k, world)), 10)) for k in range(world)]
        for parts in (ranks, nodes):
            positions = [r["position"] for part in parts for r in part]
            assert len(positions) == len(set(positions))
            assert set(range(10)) <= set(positions)
    # the rows carry what the TRL reward reads: the right answer scores 1, a wrong one 0
    columns = {key: [r[key] for r in rows[:4]] for key in ("task", "input", "target", "meta")}
    flipped = ["1" if r["target"] == "0" else "0" for r in rows[:4]]
    assert gengap_reward([f"Answer: {r['target']}" for r in rows[:4]], **columns) == [1.0] * 4
    assert gengap_reward([f"Answer: {x}" for x in flipped], **columns) == [0.0] * 4
    with pytest.raises(ValueError, match="adaptive"):
        hf_iterable_dataset(stream, curriculum=parse_curriculum(ADAPTIVE))
    # the GRPO dataset of docs/streams.md: a chat prompt per row from the harnesses' Prompter
    from gengap.harnesses import Prompter

    prompter = Prompter("parity_check")
    prompted = hf_iterable_dataset(stream).map(lambda row: {"prompt": prompter.chat({**row, "meta": json.loads(row["meta"])})})
    first = next(iter(prompted))
    assert first["prompt"][-1]["role"] == "user" and first["prompt"][-1]["content"].endswith(f"Input: {rows[0]['input']}")


def test_grpo_records_per_step_reads_the_trainers_settings() -> None:
    """Rows per optimizer step of TRL's GRPOTrainer (its settings as GRPOConfig resolves them; the real trainer runs in test_harness_models)."""
    from types import SimpleNamespace

    from gengap.baselines.stream_datasets import grpo_records_per_step

    def args(per_device=8, processes=1, accumulation=1, generations=8, steps_per_generation=None, iterations=1, shuffle=False):
        steps_per_generation = steps_per_generation or accumulation  # TRL's default
        return SimpleNamespace(
            generation_batch_size=per_device * processes * steps_per_generation, num_generations=generations,
            gradient_accumulation_steps=accumulation, steps_per_generation=steps_per_generation, num_iterations=iterations,
            shuffle_dataset=shuffle,
        )

    assert grpo_records_per_step(args()) == 1  # the docs' old example: 8 prompts of 8 generations are 1 row, not 8
    assert grpo_records_per_step(args(per_device=4, accumulation=2, generations=2)) == 4
    assert grpo_records_per_step(args(per_device=8, processes=4, accumulation=4, generations=8)) == 16
    assert grpo_records_per_step(args(per_device=8, accumulation=2, generations=4, iterations=2)) == 2  # one generation serves 2 steps
    assert grpo_records_per_step(args(per_device=8, accumulation=4, generations=8, steps_per_generation=2)) == 4  # 2 generations of 2 rows a step
    with pytest.raises(ValueError, match="shuffle_dataset=False"):
        grpo_records_per_step(args(shuffle=True))
    with pytest.raises(ValueError, match="whole optimizer steps"):
        grpo_records_per_step(args(per_device=2, generations=2, iterations=3))


def test_a_stream_whose_levels_reach_the_test_lengths_is_warned_about(parity_split) -> None:
    """Issue 39 item 11: levels 1-3 of parity_check reach lengths 11..15, over the test part's 6..8."""
    from gengap.baselines.stream_train import reach_warnings

    reached = train_and_evaluate(parity_split, **{**RUN, "steps": 4, "eval_every": 2, "checkpoint_every": 2}, progress=False, plots=False)
    (warning,) = reached["warnings"]
    assert warning.startswith("the stream's levels reach input length ") and "inside the test part's lengths 6..8: 20 of its 20 records" in warning
    below = train_and_evaluate(parity_split, **{**RUN, "steps": 4, "eval_every": 2, "checkpoint_every": 2, "curriculum": "fixed:1",
                                                "stream_params": (("max_length", "5"),)}, progress=False, plots=False)
    assert below["warnings"] == []
    short = [{"input": "1 0", "difficulty": {"input_length": 2}}]
    assert reach_warnings(short, [{"input": "1 0 1", "difficulty": {"input_length": 3}}]) == []
    assert reach_warnings([], []) == []
