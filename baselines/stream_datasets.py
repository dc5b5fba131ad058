"""Record streams as PyTorch and Hugging Face iterable datasets (worker- and rank-aware).

- :class:`TorchRecordStream`: a ``torch.utils.data.IterableDataset`` of record dicts. In
  ``__iter__`` it takes its shard from the data-loader worker and the distributed rank
  (``torch.distributed`` when initialised, or the ``rank`` / ``world_size`` given):
  shard ``rank * workers + worker`` of ``world_size * workers`` (gengap.generators.streams.Shard),
  so the workers and ranks read disjoint blocks whose union is the stream.
- :func:`hf_iterable_dataset`: a ``datasets.IterableDataset`` built with ``from_generator``
  as one Hugging Face shard holding the stream shard of (``rank``, ``world_size``), the
  whole stream by default. (Hugging Face reads the shards of one dataset one after the
  other, so an infinite stream cannot be several of its shards; a data loader therefore
  reads it with one worker, and ``datasets.distributed.split_dataset_by_node`` keeps every
  world_size-th row per rank, which is also disjoint and complete.) Rows are flat:
  ``position``, ``component`` (the mixture component; 0 for a one-task stream), ``level``,
  ``id``, ``task``, ``input``, ``target``, and ``difficulty`` and ``meta`` as JSON text (the
  columns ``gengap.harnesses.gengap_reward`` reads, routing each row by its task).

Either takes a one-task :class:`~gengap.generators.streams.RecordStream` or a multi-task
:class:`~gengap.generators.mixtures.MixtureStream`; for a mixture, ``curriculum`` is one curriculum
per component (default: each component's own, from its spec).

A curriculum given to either is followed by position (``records_per_step`` records per
step, the step index is ``position // records_per_step``); an adaptive curriculum changes
only when the training loop calls ``observe`` on the same object, so it works in the main
process only (``num_workers=0``) and is refused inside a worker. Every record is a copy
the consumer may change.

:func:`grpo_records_per_step` reads, from a TRL ``GRPOConfig``, how many distinct stream rows
one optimizer step of ``GRPOTrainer`` consumes, so that a curriculum's step is the trainer's
step (and refuses a config that shuffles the stream).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import torch
from torch.utils.data import IterableDataset, get_worker_info

from gengap.generators.curriculum import Curriculum
from gengap.generators.mixtures import MixtureChooser, MixtureStream
from gengap.generators.streams import Chooser, RecordStream, Shard

ROW_COLUMNS = ("position", "component", "level", "id", "task", "input", "target", "difficulty", "meta")


def _world(rank: int | None, world_size: int | None) -> tuple[int, int]:
    if rank is not None or world_size is not None:
        rank, world_size = rank or 0, world_size or 1
    elif torch.distributed.is_available() and torch.distributed.is_initialized():
        rank, world_size = torch.distributed.get_rank(), torch.distributed.get_world_size()
    else:
        rank, world_size = 0, 1
    if not 0 <= rank < world_size:
        raise ValueError(f"rank {rank} is not in 0..{world_size - 1}")
    return rank, world_size


@dataclass(frozen=True, eq=False)
class StreamView:
    """What a dataset reads: the stream from `start`, levels by `curriculum` (a mixture: one per
    component, default their own) at ``position // records_per_step``, the shard of this rank
    (``rank`` / ``world_size``, else torch.distributed's)."""

    stream: RecordStream | MixtureStream
    curriculum: Curriculum | Sequence[Curriculum] | None = None
    records_per_step: int = 1
    start: int = 0
    rank: int | None = None
    world_size: int | None = None

    def __post_init__(self) -> None:
        mixture, one = isinstance(self.stream, MixtureStream), isinstance(self.curriculum, Curriculum)
        if (mixture and one) or (not mixture and self.curriculum is not None and not one):
            raise ValueError("a mixture stream takes one curriculum per component (or none), a one-task stream one curriculum")
        if isinstance(self.stream, MixtureStream):
            given = self.curriculum if self.curriculum is not None else self.stream.mixture.new_curricula()
            object.__setattr__(self, "curriculum", list(given))

    @property
    def adaptive(self) -> bool:
        """Whether a curriculum read is adaptive (updated by the training loop)."""
        chosen = [self.curriculum] if isinstance(self.curriculum, Curriculum) else self.curriculum or []
        return any(c.adaptive for c in chosen)

    def reading(self, worker: int = 0, workers: int = 1) -> tuple[int, Shard, Chooser | MixtureChooser | None]:
        """(start, shard, chooser) for the stream's iterate or records: shard ``rank * workers +
        worker`` of ``world_size * workers``."""
        rank, world = _world(self.rank, self.world_size)
        curriculum = self.curriculum
        if isinstance(self.stream, MixtureStream):
            chooser: Chooser | MixtureChooser | None = self.stream.chooser(curriculum, self.records_per_step)  # type: ignore[arg-type]
        else:
            chooser = self.stream.chooser(curriculum.choose, self.records_per_step) if isinstance(curriculum, Curriculum) else None
        return self.start, Shard.of(rank * workers + worker, world * workers), chooser

    def items(self) -> Iterator[tuple[int, int, int, Any]]:
        """(position, component, level, record) of this rank's shard (component 0 for a one-task stream)."""
        items = self.stream.iterate(*self.reading())  # type: ignore[arg-type]
        if isinstance(self.stream, MixtureStream):
            return items  # type: ignore[return-value]
        return ((position, 0, level, record) for position, level, record in items)


class TorchRecordStream(IterableDataset):
    """Record dicts of this worker's and rank's shard; options are the fields of :class:`StreamView`."""

    def __init__(self, stream: RecordStream, **options: Any) -> None:
        super().__init__()
        self.view = StreamView(stream, **options)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        info = get_worker_info()
        if info is not None and self.view.adaptive:
            raise ValueError("an adaptive curriculum is updated by the training loop: iterate it with num_workers=0")
        worker, workers = (info.id, info.num_workers) if info is not None else (0, 1)
        for record in self.view.stream.records(*self.view.reading(worker, workers)):  # type: ignore[arg-type]
            yield copy.deepcopy(record)


def _rows(view: StreamView) -> Iterator[dict[str, Any]]:
    for position, component, level, record in view.items():
        yield {
            "position": position, "component": component, "level": level, "id": record["id"], "task": record["task"],
            "input": record["input"], "target": record["target"],
            "difficulty": json.dumps(record["difficulty"]), "meta": json.dumps(record.get("meta") or {}),
        }


def grpo_records_per_step(args: Any) -> int:
    """The distinct rows of an iterable train dataset that one optimizer step of TRL's
    GRPOTrainer consumes, from its ``GRPOConfig`` (checked with trl 1.16).

    GRPOTrainer reads ``generation_batch_size / num_generations`` distinct rows per generation
    (each repeated ``num_generations`` times), and generates once every ``steps_per_generation
    * num_iterations`` micro-steps, ``gradient_accumulation_steps`` micro-steps making an
    optimizer step: ``generation_batch_size * gradient_accumulation_steps / (num_generations *
    steps_per_generation * num_iterations)`` rows per step (``generation_batch_size`` counts
    every process). With the defaults (``steps_per_generation = gradient_accumulation_steps``,
    ``num_iterations = 1``) that is ``per_device_train_batch_size * processes *
    gradient_accumulation_steps / num_generations``. A ValueError when ``shuffle_dataset`` is on
    (TRL then passes an iterable dataset through a shuffle buffer, so rows arrive out of stream
    order) or when a generation does not split into whole optimizer steps.
    """
    if getattr(args, "shuffle_dataset", False):
        raise ValueError("GRPOConfig(shuffle_dataset=True) shuffles the stream (a buffer of 1,000 rows): set shuffle_dataset=False")
    generation = int(args.generation_batch_size) // int(args.num_generations)
    per_generation = int(args.steps_per_generation) * int(getattr(args, "num_iterations", 1) or 1)
    accumulation = int(args.gradient_accumulation_steps)
    rows, remainder = divmod(generation * accumulation, per_generation)
    if remainder or rows < 1:
        raise ValueError(
            f"one generation of {generation} rows spans {per_generation} micro-steps, which do not make whole optimizer steps "
            f"of {accumulation}: choose steps_per_generation * num_iterations dividing {generation} * gradient_accumulation_steps"
        )
    return rows


def hf_iterable_dataset(stream: RecordStream, **options: Any) -> Any:
    """A ``datasets.IterableDataset`` of the stream's rows (see the module doc); options are the
    fields of :class:`StreamView`; imports datasets."""
    import datasets

    view = StreamView(stream, **options)
    if view.adaptive:
        raise ValueError("an adaptive curriculum is updated by the training loop: use TorchRecordStream with num_workers=0")
    features = datasets.Features({
        **{name: datasets.Value("int64") for name in ROW_COLUMNS[:3]},
        **{name: datasets.Value("string") for name in ROW_COLUMNS[3:]},
    })  # fmt: skip
    return datasets.IterableDataset.from_generator(_rows, features=features, gen_kwargs={"view": view})
