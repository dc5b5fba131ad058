"""reasoning-gym-compatible datasets (gengap.harnesses.procedural, gengap.rg): shape, determinism, scoring.

reasoning-gym's own consumers (its registry, CompositeDataset, ReseedingDataset, coaching) are
tests/test_rg_consumers.py.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gengap.generators import get_task, task_names
from gengap.rg import create_dataset, from_release, score_entry
from gengap.harnesses import HarnessError
from gengap.harnesses.procedural import TaskConfig, TaskDataset
from tests.conftest import corruptions, random_params

TASKS = task_names()


@given(st.sampled_from(TASKS), st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1), st.booleans())
def test_the_answer_scores_one_and_a_wrong_answer_less(task: str, seed: int, draw: int, partial: bool) -> None:
    """For random tasks, parameters and seeds: score_answer(entry["answer"], entry) == 1.0 (also as a
    whole reply in <answer> tags), every corruption of it < 1.0, None and "" 0.0."""
    params = random_params(get_task(task), random.Random(draw)).to_dict()
    dataset = create_dataset(task, size=2, seed=seed, partial_credit=partial, **params)
    for entry in dataset:
        assert set(entry) == {"question", "answer", "metadata"}
        assert entry["answer"] == entry["metadata"]["record"]["target"]
        assert entry["question"].endswith(f"Input: {entry['metadata']['record']['input']}")
        assert dataset.score_answer(entry["answer"], entry) == 1.0
        assert dataset.score_answer(f"Let me think.\n<answer>{entry['answer']}</answer>", entry) == 1.0
        for wrong in corruptions(entry["answer"]):
            score = dataset.score_answer(wrong, entry)
            assert isinstance(score, float) and 0.0 <= score < 1.0
        assert dataset.score_answer(None, entry) == 0.0 and dataset.score_answer("", entry) == 0.0


def test_items_are_the_records_gengap_generate_writes(tmp_path: Path) -> None:
    """Item i is record i of `gengap generate TASK --n SIZE --seed SEED --level K --param ...`."""
    from gengap.cli import main

    out = tmp_path / "pool.jsonl"
    assert main(["generate", "reverse_string", "--n", "7", "--seed", "5", "--level", "3", "--param", "alphabet_size=3", "--out", str(out)]) == 0
    written = [json.loads(line) for line in out.read_text().splitlines()]
    dataset = create_dataset("reverse_string", size=7, seed=5, level=3, alphabet_size=3)
    assert [entry["metadata"]["record"] for entry in dataset] == written
    assert list(dataset) == list(create_dataset("reverse_string", size=7, seed=5, level=3, alphabet_size=3))


def test_the_reasoning_gym_protocol() -> None:
    dataset = create_dataset("parity_check", size=3, seed=0, min_length=2, max_length=5)
    assert len(dataset) == 3 and [e["metadata"]["source_index"] for e in dataset] == [0, 1, 2]
    entry = dataset[2]
    meta = entry["metadata"]
    assert meta["source_dataset"] == "gengap/parity_check" and meta["task"] == "parity_check"
    assert meta["difficulty"] == {"min_length": 2, "max_length": 5} and meta["answer_format"] == "tags"
    assert "<answer>" in entry["question"] and dataset.category == "regular"
    entry["metadata"]["record"]["target"] = "changed"  # items are new dicts: the dataset is not changed
    assert dataset[2]["answer"] == dataset[2]["metadata"]["record"]["target"] != "changed"
    for bad in (3, -1):
        with pytest.raises(IndexError):
            dataset[bad]
    with pytest.raises(TypeError):
        dataset["0"]  # type: ignore[index]
    drawn = create_dataset("parity_check", size=1)  # no seed: one drawn at random, kept
    assert isinstance(drawn.seed, int) and list(drawn) == list(create_dataset("parity_check", size=1, seed=drawn.seed))


def test_levels_names_and_answer_formats() -> None:
    dataset = create_dataset("addition", size=2, seed=1, level=4, format="reversed", answer_format="boxed", name="mine")
    entry = dataset[0]
    assert entry["metadata"]["source_dataset"] == "mine" and entry["metadata"]["difficulty"]["level"] == 4
    assert entry["metadata"]["difficulty"]["format"] == "reversed" and "\\boxed{}" in entry["question"]
    assert dataset.score_answer(f"\\boxed{{{entry['answer']}}}", entry) == 1.0


def test_partial_credit_is_the_per_token_reward() -> None:
    dataset = create_dataset("reverse_string", size=1, seed=0, min_length=4, max_length=4, partial_credit=True)
    entry = dataset[0]
    tokens = entry["answer"].split()
    half = " ".join(tokens[:2] + ["x", "x"])
    assert dataset.score_answer(half, entry) == 0.5
    assert create_dataset("reverse_string", size=1, seed=0, min_length=4, max_length=4).score_answer(half, entry) == 0.0


def test_any_dataset_scores_any_gengap_entry_and_nothing_else() -> None:
    scan = create_dataset("scan", size=1, seed=0)[0]
    assert create_dataset("parity_check", size=1).score_answer(scan["answer"], scan) == 1.0
    assert score_entry(scan["answer"], scan) == 1.0
    with pytest.raises(HarnessError, match="not a gengap entry"):
        score_entry("1", {"question": "q", "answer": "1", "metadata": {"source_dataset": "count_bits"}})


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"task": "no_such_task"}, "no_such_task"),
        ({"task": "parity_check", "size": -1}, "size"),
        ({"task": "parity_check", "seed": -2}, "seed"),
        ({"task": "parity_check", "answer_format": "xml"}, "answer format"),
        ({"task": "parity_check", "level": 11}, "level 11"),
        ({"task": "parity_check", "params": {"colour": 1}}, "colour"),
        ({"task": "parity_check", "params": {"min_length": 9, "max_length": 3}}, "parity_check"),
    ],
)
def test_bad_settings_are_a_clear_error(settings: dict, message: str) -> None:
    with pytest.raises(HarnessError, match=message):
        TaskDataset(TaskConfig(**settings))


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.harness_fixture import build_release

    return build_release(tmp_path_factory.mktemp("rg"))


def test_a_release_part_is_a_dataset(release: Path) -> None:
    from gengap.harnesses import open_release
    from gengap.harnesses.releases import first_in_evaluation_order

    records = open_release(release).load("shortest_path-length").parts["test"]
    dataset = from_release(release, "shortest_path-length", "test")
    assert [e["metadata"]["record"] for e in dataset] == records
    entry = dataset[0]
    meta = entry["metadata"]
    assert meta["source_dataset"] == "gengap/shortest_path-length/ood" and (meta["part"], meta["side"]) == ("test", "ood")
    assert meta["fingerprint"] == open_release(release).fingerprint and meta["difficulty"]["side"] == "ood"
    assert all(dataset.score_answer(e["answer"], e) == 1.0 for e in dataset)
    limited = from_release(release, "shortest_path-length", "test", limit=5)
    assert [e["metadata"]["record"] for e in limited] == first_in_evaluation_order(records, 5)
    assert len(from_release(release, "shortest_path-length", "validation")) == 0  # an empty part
    with pytest.raises(HarnessError, match="part"):
        from_release(release, "shortest_path-length", "dev")
    with pytest.raises(HarnessError, match="no config"):
        from_release(release, "nope-length")
