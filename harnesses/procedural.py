"""reasoning-gym-compatible datasets: gengap tasks and release parts in the shape of reasoning-gym's
``ProceduralDataset`` (checked against reasoning-gym 0.1.25).

Contract, as reasoning-gym's:

- a dataset is sized (``len``), indexable (``dataset[i]`` for ``0 <= i < len``; IndexError
  otherwise) and iterable (the items in index order); ``dataset.config``, ``.size`` and
  ``.seed`` are its configuration, length and seed;
- an item is a new dict ``{"question": str, "answer": str, "metadata": dict}`` each time: the
  question is the task's English instruction, the answer format asked for and the query
  ``Input: <tokens>`` (:class:`gengap.harnesses.prompts.Prompter`, one user message, no shots); the
  answer is the record's target; the metadata holds ``source_dataset`` (the dataset's name) and
  ``source_index`` (the item's index), ``task``, ``record`` (the whole gengap record),
  ``difficulty`` (the generation settings: the task's parameters, scalars, with ``level`` when one
  was given, or a release part's ``side``; reasoning-gym's score board groups scores by them) and
  ``answer_format``; items of a release part also ``config``, ``part``,
  ``side`` (``id`` for validation, ``ood`` for test) and ``fingerprint``;
- ``score_answer(answer, entry)`` is a float in [0, 1] read from ``entry["metadata"]["record"]``
  alone (so any dataset scores any gengap entry, as reasoning-gym's CompositeDataset needs):
  0.0 for None or an empty answer; otherwise the answer is read by gengap's extraction (the
  bare answer or a whole reply: ``<answer>`` tags, ``Answer:`` lines, ``\\boxed{}``) and judged
  by the task's own checker (:func:`gengap.harnesses.rewards.score_record`): 1.0 when it accepts, else
  0.0, or with ``partial_credit`` the per-token credit (:func:`gengap.harnesses.rewards.token_reward`,
  below 1.0 for any rejected answer).

A task dataset (:func:`create_dataset`) is deterministic in (task, level, parameters, seed,
size): item i is record i of ``gengap generate TASK --n SIZE --seed SEED [--level K] [--param
...]``, byte for byte. A seed of None draws one at random (reasoning-gym's convention), kept in
``dataset.seed``. A release dataset (:func:`from_release`) holds one part of one config of a
release, in file order (``limit`` keeps the first N of gengap's evaluation order, the records
``gengap eval --limit N`` scores).

Configs are mutable dataclasses, not frozen ones: reasoning-gym's ReseedingDataset assigns
``seed`` on a copy of a dataset's config. Registering a task with reasoning-gym's own registry
is :mod:`gengap.harnesses.rg_registry`.
"""

from __future__ import annotations

import copy
import operator
import random
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping

from gengap.generators import UnknownTaskError, get_task
from gengap.generators.blocks import BlockPlan
from gengap.generators.params import ParamError
from gengap.harnesses.errors import HarnessError
from gengap.harnesses.extraction import ANSWER_FORMATS
from gengap.harnesses.prompts import Prompter
from gengap.harnesses.releases import PARTS, SIDES, first_in_evaluation_order, open_release
from gengap.harnesses.rewards import score_record, token_reward

Record = dict[str, Any]
Entry = dict[str, Any]
DEFAULT_ANSWER_FORMAT = "tags"  # reasoning-gym's system prompts ask for <answer> tags
SEED_RANGE = 2**32  # a missing seed is drawn below this, as reasoning-gym draws one


def task_source(task: str) -> str:
    """The default ``source_dataset`` of a task dataset: ``gengap/<task>`` (a verl data source gengap routes)."""
    return f"gengap/{task}"


def part_source(config: str, part: str) -> str:
    """The default ``source_dataset`` of a release part: ``gengap/<config>/<side>``, as the verl export."""
    return f"gengap/{config}/{SIDES[part]}"


def _check_common(size: int | None, answer_format: str, partial_credit: bool) -> None:
    if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 0):
        raise HarnessError(f"size must be a non-negative integer, got {size!r}")
    if answer_format not in ANSWER_FORMATS:
        raise HarnessError(f"unknown answer format {answer_format!r}; choose one of {', '.join(ANSWER_FORMATS)}")
    if not isinstance(partial_credit, bool):
        raise HarnessError(f"partial_credit must be True or False, got {partial_credit!r}")


def entry_record(entry: Mapping[str, Any]) -> Mapping[str, Any]:
    """The gengap record of an item (``entry["metadata"]["record"]``); HarnessError when it has none."""
    metadata = entry.get("metadata") if isinstance(entry, Mapping) else None
    record = metadata.get("record") if isinstance(metadata, Mapping) else None
    if not isinstance(record, Mapping) or not isinstance(record.get("task"), str):
        raise HarnessError("not a gengap entry: its metadata holds no gengap record")
    return record


def score_entry(answer: str | None, entry: Mapping[str, Any], partial_credit: bool = False) -> float:
    """The score of an answer to a gengap item (see the module doc)."""
    if not isinstance(answer, str) or not answer.strip():
        return 0.0
    record = entry_record(entry)
    return token_reward(record, answer) if partial_credit else score_record(record, answer)


class GengapDataset:
    """The reasoning-gym dataset protocol over gengap records; subclasses provide :meth:`record`."""

    config: Any
    size: int
    seed: int | None
    task: str
    name: str
    prompter: Prompter

    def record(self, index: int) -> Record:
        """Record ``index`` (0 <= index < size)."""
        raise NotImplementedError

    def settings(self) -> dict[str, Any]:
        """The metadata every item adds to its index and record: difficulty, and a release part's fields."""
        raise NotImplementedError

    @property
    def category(self) -> str:
        """The task's family (reasoning-gym: the dataset's category)."""
        return get_task(self.task).family

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[Entry]:
        return (self[index] for index in range(self.size))

    def __getitem__(self, idx: int) -> Entry:
        index = operator.index(idx)
        if not 0 <= index < self.size:
            raise IndexError(f"index {index} out of range for a dataset of {self.size} items")
        record = copy.deepcopy(self.record(index))
        metadata = {"source_dataset": self.name, "source_index": index, "task": self.task, "record": record}
        metadata.update(self.settings())
        metadata["answer_format"] = self.prompter.answer_format
        return {"question": self.prompter.chat(record)[0]["content"], "answer": record["target"], "metadata": metadata}

    def score_answer(self, answer: str | None, entry: Mapping[str, Any]) -> float:
        """1.0 when the task's checker accepts the answer (0.0 for None or ""; see the module doc)."""
        return score_entry(answer, entry, self.config.partial_credit)


@dataclass
class TaskConfig:
    """A task dataset's settings: the task, its level and parameters (``gengap generate``'s
    ``--level`` and ``--param``, typed values), size and seed, the answer format the question asks
    for, per-token partial credit, and the name (default ``gengap/<task>``)."""

    task: str = ""
    level: int | None = None
    params: dict[str, Any] = field(default_factory=dict)
    size: int = 500
    seed: int | None = None
    answer_format: str = DEFAULT_ANSWER_FORMAT
    partial_credit: bool = False
    name: str | None = None

    def validate(self) -> None:
        """HarnessError naming the first bad setting."""
        try:
            get_task(self.task)
        except UnknownTaskError as err:
            raise HarnessError(str(err)) from None
        _check_common(self.size, self.answer_format, self.partial_credit)
        if self.seed is not None and (not isinstance(self.seed, int) or isinstance(self.seed, bool) or self.seed < 0):
            raise HarnessError(f"seed must be None or a non-negative integer, got {self.seed!r}")
        self.resolved_params()

    def resolved_params(self) -> Any:
        """The task's parameters: the level's (or the defaults), then ``params``."""
        try:
            return get_task(self.task).make_params(self.params, self.level)
        except ParamError as err:
            raise HarnessError(str(err)) from None
        except TypeError as err:  # params not a mapping
            raise HarnessError(f"{self.task}: {err}") from None


class TaskDataset(GengapDataset):
    """Records of one task generated on demand, block by block (see the module doc)."""

    def __init__(self, config: TaskConfig) -> None:
        config.validate()
        self.config = config
        self.task = config.task
        self.size = config.size
        self.seed = config.seed if config.seed is not None else random.Random().randrange(SEED_RANGE)
        self.name = config.name or task_source(config.task)
        self.params = config.resolved_params()
        self.plan = BlockPlan(config.task, self.params, config.size, self.seed)
        self.prompter = Prompter(config.task, self.params.to_dict(), answer_format=config.answer_format)
        self.difficulty = {**self.params.to_dict(), **({"level": config.level} if config.level is not None else {})}
        self._block: tuple[int, list[Record]] | None = None

    def record(self, index: int) -> Record:
        block, offset = divmod(index, self.plan.block_size)
        if self._block is None or self._block[0] != block:
            self._block = (block, list(self.plan.generate_block(block).records(self.task)))
        return self._block[1][offset]

    def settings(self) -> dict[str, Any]:
        return {"difficulty": dict(self.difficulty)}


@dataclass
class ReleasePartConfig:
    """A release dataset's settings: the release directory, config and part (train, validation or
    test), at most ``limit`` records (None: all), the answer format the question asks for,
    per-token partial credit, and the name (default ``gengap/<config>/<side>``)."""

    release: str = ""
    config: str = ""
    part: str = "test"
    limit: int | None = None
    answer_format: str = DEFAULT_ANSWER_FORMAT
    partial_credit: bool = False
    name: str | None = None

    def validate(self) -> None:
        if self.part not in PARTS:
            raise HarnessError(f"unknown part {self.part!r}; choose one of {', '.join(PARTS)}")
        _check_common(self.limit, self.answer_format, self.partial_credit)


class ReleaseDataset(GengapDataset):
    """The records of one part of one release config (see the module doc)."""

    def __init__(self, config: ReleasePartConfig) -> None:
        config.validate()
        release = open_release(config.release)
        loaded = release.load(config.config)
        self.config = config
        self.task = loaded.task
        self.records = first_in_evaluation_order(loaded.parts[config.part], config.limit)
        self.size = len(self.records)
        self.seed = None
        self.name = config.name or part_source(config.config, config.part)
        self.prompter = Prompter(loaded.task, loaded.params, answer_format=config.answer_format)
        self.fingerprint = release.fingerprint
        self.difficulty = {**loaded.params, "side": SIDES[config.part]}

    def record(self, index: int) -> Record:
        return self.records[index]

    def settings(self) -> dict[str, Any]:
        part = self.config.part
        return {
            "difficulty": dict(self.difficulty),
            "config": self.config.config,
            "part": part,
            "side": SIDES[part],
            "fingerprint": self.fingerprint,
        }


def create_dataset(
    task: str,
    size: int = 500,
    seed: int | None = None,
    *,
    level: int | None = None,
    answer_format: str = DEFAULT_ANSWER_FORMAT,
    partial_credit: bool = False,
    name: str | None = None,
    **params: Any,
) -> TaskDataset:
    """A task dataset, like ``reasoning_gym.create_dataset(name, size=, seed=)``; keyword
    arguments beyond the named ones are task parameters (``min_length=41``). HarnessError on bad input."""
    return TaskDataset(TaskConfig(task, level, params, size, seed, answer_format, partial_credit, name))


def from_release(
    release: str,
    config: str,
    part: str = "test",
    *,
    limit: int | None = None,
    answer_format: str = DEFAULT_ANSWER_FORMAT,
    partial_credit: bool = False,
    name: str | None = None,
) -> ReleaseDataset:
    """A dataset of one part of one config of a release directory. HarnessError on bad input."""
    return ReleaseDataset(ReleasePartConfig(str(release), config, part, limit, answer_format, partial_credit, name))
