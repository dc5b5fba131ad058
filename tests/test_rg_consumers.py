"""gengap datasets in reasoning-gym's own consumers (reasoning-gym, pinned in the dev extra).

gengap tasks registered with reasoning-gym's registry (gengap.rg.register) are created by name
by ``reasoning_gym.create_dataset``, mixed with reasoning-gym's own datasets in its
``CompositeDataset`` (which routes ``score_answer`` by ``metadata["source_dataset"]``), versioned
and scored by entry id, grouped by difficulty on the coaching ``Experiment``'s score board,
reseeded by ``ReseedingDataset``, reconfigured by ``update_dataset_config``, and scored through
``get_score_answer_fn``; replies go through reasoning-gym's own ``extract_answer``.
"""

from __future__ import annotations

import re
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from gengap.rg import create_dataset, register
from gengap.harnesses import HarnessError

ROOT = Path(__file__).resolve().parents[1]


def test_the_installed_reasoning_gym_is_the_pinned_one() -> None:
    """The "checked with" version of docs/harnesses.md is the dev extra's pin, and that is what runs here."""
    import tomllib  # Python 3.11+

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    pins = {re.sub(r"\s", "", spec) for spec in extras["dev"] + extras["reasoning-gym"] if spec.startswith("reasoning-gym")}
    assert pins == {f"reasoning-gym=={version('reasoning-gym')}"}


def test_registered_tasks_are_created_by_reasoning_gym() -> None:
    import reasoning_gym
    from reasoning_gym.dataset import ProceduralDataset

    name = register("parity_check")
    assert name == "gengap/parity_check" and register("parity_check") == name  # again: a no-op
    dataset = reasoning_gym.create_dataset(name, size=6, seed=3)
    assert isinstance(dataset, ProceduralDataset) and len(dataset) == 6
    assert list(dataset) == list(create_dataset("parity_check", size=6, seed=3))
    entry = dataset[4]
    assert reasoning_gym.get_score_answer_fn(name)(entry["answer"], entry) == 1.0
    assert reasoning_gym.get_score_answer_fn(name)(None, entry) == 0.0
    hard = reasoning_gym.create_dataset(register("reverse_string", "gengap/reverse-long", min_length=41, max_length=50), size=2, seed=0)
    assert all(len(e["metadata"]["record"]["input"].split()) >= 41 for e in hard)
    assert hard[0]["metadata"]["source_dataset"] == "gengap/reverse-long"


def test_registration_errors() -> None:
    with pytest.raises(HarnessError, match="already has a dataset named 'count_bits'"):
        register("parity_check", "count_bits")
    with pytest.raises(HarnessError, match="no_such_task"):
        register("no_such_task")
    with pytest.raises(HarnessError, match="level 12"):
        register("parity_check", "gengap/too-hard", level=12)


def test_registering_without_reasoning_gym_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "reasoning_gym", None)
    with pytest.raises(HarnessError, match="needs reasoning-gym installed"):
        register("parity_check", "gengap/elsewhere")


def test_composite_dataset_mixes_and_routes_scores() -> None:
    from reasoning_gym.coaching.experiment import Experiment
    from reasoning_gym.composite import CompositeConfig, CompositeDataset, DatasetSpec
    from reasoning_gym.utils import extract_answer
    from reasoning_gym.version_manager import DatasetVersionManager

    parity, path = register("parity_check"), register("shortest_path", "gengap/shortest_path-2", level=2)
    specs = [DatasetSpec(parity, 1.0, {}), DatasetSpec(path, 1.0, {"partial_credit": True}), DatasetSpec("count_bits", 1.0, {})]
    composite = CompositeDataset(CompositeConfig(size=30, seed=5, datasets=specs), version_manager=DatasetVersionManager())
    sources = set()
    for entry in composite:
        sources.add(entry["metadata"]["source_dataset"])
        reply = f"<think>Counting.</think>\n<answer>{entry['answer']}</answer>"
        assert composite.score_answer(extract_answer(reply), entry) == 1.0
        assert composite.score_answer_with_id(entry["answer"], entry["metadata"]["entry_id"]) == 1.0
        if entry["metadata"]["source_dataset"] != "count_bits":
            assert composite.score_answer(entry["answer"] + " 7", entry) < 1.0
    assert sources == {parity, path, "count_bits"}

    experiment = Experiment("gengap", composite)
    for index in range(12):
        entry = experiment.get_dataset_entry(index)
        experiment.score_answer_with_id(entry["answer"], entry["metadata"]["entry_id"])
    board = experiment.score_board.aggregate()
    groups = [key for name in (parity, path) if name in board for key in board[name].scores]
    assert groups and all(dict(key[1:]) for key in groups)  # grouped by the gengap difficulty settings
    assert all(score == 1.0 for name in board for scores in board[name].scores.values() for score in scores)

    composite.update_dataset_config(parity, {"level": 3})
    entry = composite.datasets[parity][0]
    assert entry["metadata"]["difficulty"]["level"] == 3 and composite.score_answer(entry["answer"], entry) == 1.0


def test_curriculum_experiment_takes_the_registered_curricula() -> None:
    """reasoning-gym's CurriculumExperiment over a gengap task and one of its own: the attribute
    ``level`` is the task's levels (reasoning-gym level i = gengap level i + 1), the experiment's
    seed and size apply to gengap's items, and update_difficulty moves the level."""
    import reasoning_gym
    from reasoning_gym.coaching.curriculum_config import CurriculumAttributeConfig, CurriculumExperimentConfig
    from reasoning_gym.coaching.experiment import CurriculumExperiment

    name = register("parity_check")
    assert reasoning_gym.factory.has_curriculum(name)
    curriculum = reasoning_gym.factory.create_curriculum(name)
    assert curriculum.attributes["level"].levels == list(range(1, 11))
    config = CurriculumExperimentConfig(curricula={name: CurriculumAttributeConfig({"level": 2}), "count_bits": CurriculumAttributeConfig({"*": 0})})
    runs = [CurriculumExperiment("gengap", config, size=700, seed=3) for _ in range(2)]
    items = [[run.get_dataset_entry(i) for i in range(700)] for run in runs]
    ours = [[e for e in run if e["metadata"]["source_dataset"] == name] for run in items]
    assert ours[0] == ours[1] and len(ours[0]) > 100  # seeded by the experiment, not at random
    assert max(e["metadata"]["source_index"] for e in ours[0]) >= 500  # the experiment's size, not the config's 500
    assert {e["metadata"]["difficulty"]["level"] for e in ours[0]} == {3}
    expected = create_dataset("parity_check", size=700, seed=runs[0].composite.datasets[name].seed, level=3)
    assert all(e["metadata"]["record"] == expected[e["metadata"]["source_index"]]["metadata"]["record"] for e in ours[0][:50])
    assert all(runs[0].score_answer_with_id(e["answer"], e["metadata"]["entry_id"]) == 1.0 for e in ours[0][:20])
    runs[0].update_difficulty(name, "increment")
    assert runs[0].composite.datasets[name][0]["metadata"]["difficulty"]["level"] == 4
    everything = CurriculumExperiment("all", CurriculumExperimentConfig(curricula={name: CurriculumAttributeConfig({"*": 9})}), size=5, seed=0)
    assert everything.get_dataset_entry(0)["metadata"]["difficulty"]["level"] == 10


def test_reseeding_dataset_runs_past_its_chunks() -> None:
    import reasoning_gym
    from reasoning_gym.dataset import ReseedingDataset

    name = register("parity_check")
    endless = ReseedingDataset(reasoning_gym.create_dataset(name, size=3, seed=10), chunk_size=3)
    items = [entry for entry, _ in zip(endless, range(7))]
    assert [e["metadata"]["source_index"] for e in items] == [0, 1, 2, 0, 1, 2, 0]
    assert items[3]["metadata"]["record"] == create_dataset("parity_check", size=3, seed=11)[0]["metadata"]["record"]
    assert all(endless.score_answer(e["answer"], e) == 1.0 for e in items)


def test_the_readme_examples_run_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The three Python examples of the "reasoning-gym-compatible datasets" section of docs/harnesses.md."""
    page = (ROOT / "docs" / "harnesses.md").read_text(encoding="utf-8")
    section = page.split("## reasoning-gym-compatible datasets\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    assert len(blocks) == 3
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        exec(compile(block, "docs/harnesses.md", "exec"), {})
