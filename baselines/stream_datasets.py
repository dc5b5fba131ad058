"""Record streams as PyTorch and Hugging Face iterable datasets (worker- and rank-aware).

- :class:`TorchRecordStream`: a ``torch.utils.data.IterableDataset`` of record dicts. In
  ``__iter__`` it takes its shard from the data-loader worker and the distributed rank
  (``torch.distributed`` when initialised, or the ``rank`` / ``world_size`` given):
  shard ``rank * workers + worker`` of ``world_size * workers`` (generators.streams.Shard),
  so the workers and ranks read disjoint blocks whose union is the stream.
- :func:`hf_iterable_dataset`: a ``datasets.IterableDataset`` built with ``from_generator``
  as one Hugging Face shard holding the stream shard of (``rank``, ``world_size``), the
  whole stream by default. (Hugging Face reads the shards of one dataset one after the
  other, so an infinite stream cannot be several of its shards; a data loader therefore
  reads it with one worker, and ``datasets.distributed.split_dataset_by_node`` keeps every
  world_size-th row per rank, which is also disjoint and complete.) Rows are flat:
  ``position``, ``level``, ``id``, ``task``, ``input``, ``target``, and ``difficulty`` and
  ``meta`` as JSON text (the columns ``harnesses.gengap_reward`` reads).

A curriculum given to either is followed by position (``records_per_step`` records per
step, the step index is ``position // records_per_step``); an adaptive curriculum changes
only when the training loop calls ``observe`` on the same object, so it works in the main
process only (``num_workers=0``) and is refused inside a worker. Every record is a copy
the consumer may change.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Iterator

import torch
from torch.utils.data import IterableDataset, get_worker_info

from generators.curriculum import Curriculum
from generators.streams import RecordStream, Shard

ROW_COLUMNS = ("position", "level", "id", "task", "input", "target", "difficulty", "meta")


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


class TorchRecordStream(IterableDataset):
    """Records of a stream from position `start`, this worker's and rank's shard only (see the module doc)."""

    def __init__(
        self,
        stream: RecordStream,
        curriculum: Curriculum | None = None,
        records_per_step: int = 1,
        start: int = 0,
        rank: int | None = None,
        world_size: int | None = None,
    ) -> None:
        super().__init__()
        self.stream = stream
        self.curriculum = curriculum
        self.records_per_step = records_per_step
        self.start = start
        self.rank = rank
        self.world_size = world_size

    def shard(self) -> Shard:
        rank, world = _world(self.rank, self.world_size)
        info = get_worker_info()
        worker, workers = (info.id, info.num_workers) if info is not None else (0, 1)
        if info is not None and self.curriculum is not None and self.curriculum.adaptive:
            raise ValueError("an adaptive curriculum is updated by the training loop: iterate it with num_workers=0")
        return Shard.of(rank * workers + worker, world * workers)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        chooser = self.stream.chooser(self.curriculum.choose, self.records_per_step) if self.curriculum is not None else None
        for record in self.stream.records(self.start, self.shard(), chooser):
            yield copy.deepcopy(record)


def _rows(stream: RecordStream, curriculum: Curriculum | None, records_per_step: int, start: int, shard: Shard) -> Iterator[dict[str, Any]]:
    chooser = stream.chooser(curriculum.choose, records_per_step) if curriculum is not None else None
    for position, level, record in stream.iterate(start, shard, chooser):
        yield {
            "position": position, "level": level, "id": record["id"], "task": record["task"],
            "input": record["input"], "target": record["target"],
            "difficulty": json.dumps(record["difficulty"]), "meta": json.dumps(record.get("meta") or {}),
        }


def hf_iterable_dataset(
    stream: RecordStream,
    curriculum: Curriculum | None = None,
    records_per_step: int = 1,
    start: int = 0,
    rank: int | None = None,
    world_size: int | None = None,
) -> Any:
    """A ``datasets.IterableDataset`` of the stream's rows from position `start` (see the module doc); imports datasets."""
    import datasets

    if curriculum is not None and curriculum.adaptive:
        raise ValueError("an adaptive curriculum is updated by the training loop: use TorchRecordStream with num_workers=0")
    features = datasets.Features({
        "position": datasets.Value("int64"), "level": datasets.Value("int64"),
        **{name: datasets.Value("string") for name in ROW_COLUMNS[2:]},
    })  # fmt: skip
    rank, world = _world(rank, world_size)
    kwargs = {"stream": stream, "curriculum": curriculum, "records_per_step": records_per_step, "start": start, "shard": Shard.of(rank, world)}
    return datasets.IterableDataset.from_generator(_rows, features=features, gen_kwargs=kwargs)
