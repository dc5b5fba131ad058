"""Columnar batches of generated examples and their record form.

A :class:`Batch` is what a task's ``generate`` returns: inputs and targets as numpy bytes
arrays, per-example difficulty features as integer arrays, and optionally a derivation
``structure`` per example and a ``meta`` mapping shared by the batch (settings a checker
needs to read the input, such as an output format or a modulus). ``input_length`` and
``output_length`` (token counts) are measured here, never supplied by the task.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from gengap.generators.text import from_strings, token_counts

Record = dict[str, Any]


def record_id(task: str, input_text: str | bytes, target_text: str | bytes) -> str:
    """Stable id: ``<task>-`` + first 16 hex digits of sha256(input + "\\n" + target)."""
    a = input_text.encode() if isinstance(input_text, str) else input_text
    b = target_text.encode() if isinstance(target_text, str) else target_text
    digest = hashlib.sha256(a + b"\n" + b).hexdigest()
    return f"{task}-{digest[:16]}"


@dataclass(frozen=True)
class Batch:
    """n generated examples of one task, column by column."""

    inputs: np.ndarray
    targets: np.ndarray
    features: Mapping[str, np.ndarray] = field(default_factory=dict)
    structure: Sequence[Any] | None = None
    meta: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        n = len(self.inputs)
        if self.inputs.dtype.kind != "S" or self.targets.dtype.kind != "S":
            raise TypeError("Batch inputs and targets must be numpy bytes (S) arrays")
        if len(self.targets) != n:
            raise ValueError("inputs and targets differ in length")
        for name, column in self.features.items():
            if name in ("input_length", "output_length"):
                raise ValueError(f"feature {name} is measured by the batch, not supplied")
            if len(column) != n:
                raise ValueError(f"feature {name} has {len(column)} values for {n} examples")
        if self.structure is not None and len(self.structure) != n:
            raise ValueError("structure has the wrong number of entries")

    @classmethod
    def from_lists(
        cls,
        inputs: Sequence[str],
        targets: Sequence[str],
        features: Mapping[str, Sequence[int]] | None = None,
        structure: Sequence[Any] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> "Batch":
        """Build from Python strings and integer lists (for tasks generated in plain Python)."""
        return cls(
            from_strings(inputs),
            from_strings(targets),
            {k: np.asarray(v, dtype=np.int64) for k, v in (features or {}).items()},
            structure,
            meta,
        )

    def __len__(self) -> int:
        return len(self.inputs)

    def difficulty(self) -> dict[str, np.ndarray]:
        """All difficulty columns in record order: input_length, output_length, then features."""
        columns = {
            "input_length": token_counts(self.inputs),
            "output_length": token_counts(self.targets),
        }
        columns.update({k: np.asarray(v, dtype=np.int64) for k, v in self.features.items()})
        return columns

    def records(self, task: str) -> Iterator[Record]:
        """The examples as record dicts (the JSONL form, before serialization)."""
        difficulty = self.difficulty()
        names = tuple(difficulty)
        rows = zip(*(difficulty[k].tolist() for k in names))
        sha = hashlib.sha256
        prefix = f"{task}-"
        meta = dict(self.meta) if self.meta else None
        structure = self.structure
        for i, (raw_in, raw_out, values) in enumerate(zip(self.inputs.tolist(), self.targets.tolist(), rows)):
            record: Record = {
                "id": prefix + sha(raw_in + b"\n" + raw_out).hexdigest()[:16],
                "task": task,
                "input": raw_in.decode(),
                "target": raw_out.decode(),
                "difficulty": dict(zip(names, values)),
            }
            if meta is not None:
                record["meta"] = dict(meta)
            if structure is not None:
                record["structure"] = structure[i]
            yield record


def concat(batches: Sequence[Batch]) -> Batch:
    """Concatenate batches that share feature names and meta."""
    if not batches:
        raise ValueError("nothing to concatenate")
    first = batches[0]
    for other in batches[1:]:
        if list(other.features) != list(first.features) or other.meta != first.meta:
            raise ValueError("batches differ in features or meta")
    width_in = max(b.inputs.dtype.itemsize for b in batches)
    width_out = max(b.targets.dtype.itemsize for b in batches)
    structure = None
    if first.structure is not None:
        structure = [s for b in batches for s in (b.structure or [])]
    return Batch(
        np.concatenate([b.inputs.astype(f"S{width_in}") for b in batches]),
        np.concatenate([b.targets.astype(f"S{width_out}") for b in batches]),
        {k: np.concatenate([b.features[k] for b in batches]) for k in first.features},
        structure,
        first.meta,
    )
