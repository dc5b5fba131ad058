"""Inputs a record stream must never yield: the validation and test side of a split it is paired with.

An :class:`Exclusion` holds the 64-bit hashes of the excluded inputs: the first
``HASH_BYTES`` bytes of sha256(input), little-endian, as a sorted unique ``uint64`` array
(8 bytes per excluded input). Membership is tested by hash, so an excluded input is never
let through (it has the same hash); an input whose hash merely collides with an excluded
one is dropped too, with probability at most (number excluded) / 2**64 per record. Inputs
are compared as written in records (tokens separated by single spaces), without a shortcut cue
or a task marker in front (gengap.generators.markers.bare_input): streams generate unmarked
inputs, so a cued or marked config's held-out inputs are excluded all the same (a marked input
is excluded for every task of a stream, whichever task it was held out for).

Pairing with a release reads only the ``input`` field of ``data/<config>/validation.jsonl``
and ``test.jsonl`` (or of ``validation.jsonl`` and ``test.jsonl`` in a split directory).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from gengap.generators.jsonl import read_records
from gengap.generators.markers import bare_input

HASH_BYTES = 8
SIDES = ("validation", "test")


def input_hashes(inputs: Iterable[str | bytes]) -> np.ndarray:
    """uint64 hash of each input: the first 8 bytes of its sha256, little-endian."""
    sha = hashlib.sha256
    digests = b"".join(sha(x.encode() if isinstance(x, str) else x).digest()[:HASH_BYTES] for x in inputs)
    return np.frombuffer(digests, dtype="<u8").astype(np.uint64)


@dataclass(frozen=True, eq=False)
class Exclusion:
    """A set of excluded inputs, by hash; ``source`` says where they came from."""

    hashes: np.ndarray  # sorted, unique uint64
    source: str = "inputs"

    @classmethod
    def from_inputs(cls, inputs: Iterable[str | bytes], source: str = "inputs") -> "Exclusion":
        bare = (bare_input(x) if isinstance(x, str) else x for x in inputs)
        return cls(np.unique(input_hashes(bare)), source)

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]], source: str = "records") -> "Exclusion":
        return cls.from_inputs((r["input"] for r in records), source)

    @classmethod
    def from_split(cls, split: Any, source: str = "split") -> "Exclusion":
        """The validation and test inputs of a split: an object with ``validation`` and ``test``
        record lists (``gengap.splits.SplitResult``) or a mapping with those keys."""
        parts = [split[side] if isinstance(split, Mapping) else getattr(split, side) for side in SIDES]
        return cls.from_records((r for part in parts for r in part), source)

    @classmethod
    def from_release(cls, root: str | Path, config: str | None = None) -> "Exclusion":
        """The validation and test inputs of a release config (``root/data/<config>/``), or of a
        split directory when ``config`` is None; ValueError when a file is missing or malformed."""
        folder = Path(root) / "data" / config if config is not None else Path(root)
        inputs: list[str] = []
        for side in SIDES:
            inputs += [record["input"] for record in read_records(folder / f"{side}.jsonl", ValueError, _check_input)]
        return cls.from_inputs(inputs, str(folder))

    def __len__(self) -> int:
        return len(self.hashes)

    @property
    def nbytes(self) -> int:
        """Memory held: 8 bytes per excluded input."""
        return int(self.hashes.nbytes)

    def keep(self, inputs: Sequence[str | bytes] | np.ndarray) -> np.ndarray:
        """Boolean mask: True where the input is not excluded."""
        if len(self.hashes) == 0:
            return np.ones(len(inputs), dtype=bool)
        values = input_hashes(inputs.tolist() if isinstance(inputs, np.ndarray) else inputs)
        where = np.minimum(np.searchsorted(self.hashes, values), len(self.hashes) - 1)
        return self.hashes[where] != values

    def excludes(self, input_text: str | bytes) -> bool:
        return not bool(self.keep([input_text])[0])


def _check_input(record: Any, where: str) -> None:
    if not isinstance(record, dict) or not isinstance(record.get("input"), str):
        raise ValueError(f"{where}: no input string")
