"""Weighted multi-task mixtures of record streams, each task with its own curriculum.

Contract. A :class:`TaskMixture` lists components; component k is one task's stream (a level
table and a curriculum spec: :class:`Component`) with a weight w_k >= 0 (finite, positive
sum). Its :class:`MixtureStream` of seed S is an infinite sequence of positions 0, 1, 2, ...:

- **component**: position p belongs to component c(p), the first k (in listed order) with
  v(p) < (w_0 + ... + w_k) / (w_0 + ... + w_{K-1}), v(p) a uniform in [0, 1) from the
  seeding stream ``mixture`` at p (block p // block_size, offset p % block_size). So
  P(c(p) = k) = w_k / sum(w), independently for every position; a zero weight is never drawn;
- **record**: the record at position p of component k's own stream
  ``RecordStream(task_k, levels_k, S)`` (gengap.generators.streams), at the level its curriculum
  chooses for p: every component's stream is aligned on the global positions, and the
  mixture keeps, at each position, the record of the component drawn there. A one-component
  mixture is therefore that component's stream, record for record;
- **curricula**: component k's level at p is ``curriculum_k.choose(t, u(p))`` with u(p) the
  ``curriculum`` uniform of one-task streams and t the step: ``p // records_per_step`` by
  default (:meth:`MixtureStream.chooser`), the trainer's step in ``gengap train``. Every
  curriculum runs on the global step clock (``step:every=500`` moves at global step 500
  whatever the component's weight); a one-level component keeps its level;
- **shards and resume** are those of one-task streams (:class:`~gengap.generators.streams.Shard`
  over blocks of positions, ``start=p`` in O(1)): c(p), u(p) and the records are pure
  functions of (S, p), so shard k of n holds exactly its blocks' positions of the full
  stream, and starting at p yields exactly the full stream's suffix;
- **exclusion** applies to every component (one :class:`~gengap.generators.exclusion.Exclusion`
  for all, or one per component); positions never shift. block_size excluded positions of
  one component in a row (counted over that component's positions) raise ValueError naming
  its task.

Cost: a block of positions generates, for each component and level drawn in it, that
level's whole block, so K components do up to K times the generation work of one stream.

- **task markers**: with ``task_marker`` (a mixture file's ``task_marker: true``) every record
  the mixture yields has the token ``task:<task>`` in front of its input
  (gengap.generators.markers), as a multi-task release config with ``task_marker: true`` has;
  exclusion compares inputs without it (gengap.generators.exclusion), so a marked config's
  held-out inputs are excluded from a marked stream too.

:func:`load_mixture` reads a mixture file (YAML, or JSON for ``.json``) through the bounded
reader (gengap.generators.reading); every problem is one :class:`MixtureError` line naming the file
and the component.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from gengap.generators.batch import Record
from gengap.generators.blocks import BLOCK_SIZE
from gengap.generators.curriculum import Curriculum, CurriculumError, parse_curriculum
from gengap.generators.exclusion import Exclusion
from gengap.generators.markers import with_marker
from gengap.generators.params import ParamError, Params
from gengap.generators.reading import MAX_YAML_BYTES, ReadError, json_value, read_text, yaml_document
from gengap.generators.registry import UnknownTaskError, get_task
from gengap.generators.seeding import mixture_rng
from gengap.generators.streams import RecordStream, Shard, Uniforms, size_levels

MixtureChooser = Callable[[int, int], int]  # (component, position) -> level
MIXTURE_SUFFIXES = (".yaml", ".yml", ".json")
COMPONENT_KEYS = ("task", "weight", "params", "level", "curriculum", "sizes")
MIXTURE_KEYS = ("components", "task_marker")


class MixtureError(ValueError):
    """A malformed mixture or mixture file (one line, naming the file and the component)."""


def resolve_stream(
    task: str,
    params: Sequence[tuple[str, str]] = (),
    level: int | None = None,
    curriculum: str | None = None,
    sizes: Sequence[tuple[int, int]] = (),
) -> tuple[dict[int, Params], str]:
    """(level table, curriculum spec) of one task's stream settings, as ``gengap train --stream``
    takes them: ``params`` (KEY, text) set at every level; ``sizes`` make levels 1..k bands of
    the size knob, else the task's levels 1..10 (or its defaults as level 0 when neither a
    level nor a curriculum is given); a one-level stream gets ``fixed:<level>``. The table
    holds the levels the curriculum may choose. ValueError naming the problem."""
    spec = get_task(task)
    if level is not None and curriculum is not None:
        raise ParamError("give a level or a curriculum, not both")
    typed = {key: spec.params_type.parse_value(key, value) for key, value in params}
    if sizes:
        base = size_levels(task, sizes)
    elif level is None and curriculum is None:
        base = {0: spec.default_params()}
    else:
        base = spec.levels()
    chosen = parse_curriculum(curriculum or f"fixed:{level if level is not None else min(base)}", sorted(base))
    return {k: base[k].replace(**typed) if typed else base[k] for k in chosen.levels()}, chosen.spec


@dataclass(frozen=True, eq=False)
class Component:
    """One task of a mixture: its level table, curriculum spec (over the table's levels) and weight."""

    task: str
    levels: Mapping[int, Params]
    curriculum: str
    weight: float = 1.0

    def __post_init__(self) -> None:
        get_task(self.task)
        if isinstance(self.weight, bool) or not isinstance(self.weight, (int, float)) or not math.isfinite(self.weight) or self.weight < 0:
            raise MixtureError(f"{self.task}: a weight must be a finite number >= 0, got {self.weight!r}")
        if not self.levels:
            raise MixtureError(f"{self.task}: a component needs at least one level")
        parse_curriculum(self.curriculum, sorted(self.levels))
        object.__setattr__(self, "levels", dict(sorted(self.levels.items())))
        object.__setattr__(self, "weight", float(self.weight))

    @classmethod
    def from_settings(cls, task: str, weight: float = 1.0, **settings: Any) -> "Component":
        """A component from stream settings (see :func:`resolve_stream`)."""
        levels, curriculum = resolve_stream(task, **settings)
        return cls(task, levels, curriculum, weight)

    @classmethod
    def of_stream(cls, stream: RecordStream, curriculum: str | None = None, weight: float = 1.0) -> "Component":
        """A component of an existing one-task stream's task and levels (its seed and exclusion are the mixture's)."""
        spec = curriculum if curriculum is not None else f"fixed:{stream.single if stream.single is not None else min(stream.levels)}"
        return cls(stream.task, stream.levels, spec, weight)

    def new_curriculum(self) -> Curriculum:
        return parse_curriculum(self.curriculum)

    def describe(self) -> dict[str, Any]:
        return {"task": self.task, "weight": self.weight, "curriculum": self.curriculum,
                "levels": {str(k): p.to_dict() for k, p in self.levels.items()}}


@dataclass(frozen=True, eq=False)
class TaskMixture:
    """Components with weights (see the module doc); ``probabilities`` are the weights normalized;
    ``task_marker``: every record with its task's marker token in front of its input."""

    components: tuple[Component, ...]
    task_marker: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "components", tuple(self.components))
        if not isinstance(self.task_marker, bool):
            raise MixtureError(f"task_marker must be true or false, got {self.task_marker!r}")
        if not self.components:
            raise MixtureError("a mixture needs at least one component")
        if not sum(c.weight for c in self.components) > 0:
            raise MixtureError("a mixture's weights must have a positive sum")

    @property
    def probabilities(self) -> tuple[float, ...]:
        total = sum(c.weight for c in self.components)
        return tuple(c.weight / total for c in self.components)

    def stream(self, seed: int, exclusion: Exclusion | Sequence[Exclusion | None] | None = None, block_size: int = BLOCK_SIZE) -> "MixtureStream":
        return MixtureStream(self, seed, exclusion, block_size)

    def new_curricula(self) -> list[Curriculum]:
        return [c.new_curriculum() for c in self.components]

    def describe(self) -> list[dict[str, Any]]:
        return [c.describe() for c in self.components]


class MixtureStream:
    """The records of a :class:`TaskMixture` at seed ``seed`` (see the module doc)."""

    def __init__(self, mixture: TaskMixture, seed: int, exclusion: Exclusion | Sequence[Exclusion | None] | None = None,
                 block_size: int = BLOCK_SIZE) -> None:
        parts = list(exclusion) if isinstance(exclusion, (list, tuple)) else [exclusion] * len(mixture.components)
        if len(parts) != len(mixture.components):
            raise MixtureError(f"{len(parts)} exclusions for {len(mixture.components)} components")
        self.mixture = mixture
        self.seed = seed
        self.block_size = block_size
        self.streams = [RecordStream(c.task, c.levels, seed, part, block_size) for c, part in zip(mixture.components, parts)]
        self.cumulative = np.cumsum(mixture.probabilities)
        self.cumulative[-1] = 1.0  # v < 1 always lands in a component
        self._choices = Uniforms(seed, block_size, mixture_rng)

    def mark(self, record: Record) -> Record:
        """The record as the mixture yields it: with its task's marker when the mixture marks (else itself)."""
        return with_marker(record) if self.mixture.task_marker else record

    def __getstate__(self) -> dict:
        """Pickled without caches (data-loader workers, Hugging Face fingerprints)."""
        state = dict(self.__dict__)
        state["_choices"] = Uniforms(self.seed, self.block_size, mixture_rng)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def components(self, block: int) -> np.ndarray:
        """c(p) for every position p of `block`."""
        chosen = np.searchsorted(self.cumulative, self._choices.values(block), side="right")
        return np.minimum(chosen, len(self.streams) - 1)

    def component(self, position: int) -> int:
        block, offset = divmod(position, self.block_size)
        return int(self.components(block)[offset])

    def chooser(self, curricula: Sequence[Curriculum] | None = None, records_per_step: int = 1) -> MixtureChooser:
        """(component, position) -> level: ``curricula[k].choose(p // records_per_step, u(p))``
        (default: each component's own curriculum, new)."""
        if records_per_step < 1:
            raise ValueError(f"records_per_step must be at least 1, got {records_per_step}")
        chosen = list(curricula) if curricula is not None else self.mixture.new_curricula()
        if len(chosen) != len(self.streams):
            raise MixtureError(f"{len(chosen)} curricula for {len(self.streams)} components")
        uniforms = Uniforms(self.seed, self.block_size)
        return lambda k, position: chosen[k].choose(position // records_per_step, uniforms(position))

    def iterate(self, start: int = 0, shard: Shard = Shard(), chooser: MixtureChooser | None = None) -> Iterator[tuple[int, int, int, Record]]:
        """(position, component, level, record) of the shard's kept positions >= start, ascending,
        forever. Without a chooser, each component follows its own curriculum by position."""
        if start < 0:
            raise ValueError(f"a stream position must be non-negative, got {start}")
        choose = chooser if chooser is not None else self.chooser()
        single = [stream.single for stream in self.streams]
        skipped = [0] * len(self.streams)  # excluded positions in a row, per component
        for index in shard.blocks(start // self.block_size):
            components = self.components(index).tolist()
            base = index * self.block_size
            for offset in range(max(start - base, 0), self.block_size):
                k = components[offset]
                level = single[k] if single[k] is not None else choose(k, base + offset)
                block = self.streams[k].block(level, index)
                if block.keep[offset]:
                    skipped[k] = 0
                    yield base + offset, k, level, self.mark(block.records[offset])
                else:
                    skipped[k] += 1
                    if skipped[k] == self.block_size:
                        raise ValueError(self.streams[k]._all_excluded(skipped[k]))

    def records(self, start: int = 0, shard: Shard = Shard(), chooser: MixtureChooser | None = None) -> Iterator[Record]:
        """The records of :meth:`iterate` alone."""
        return (record for _, _, _, record in self.iterate(start, shard, chooser))


# -- mixture files ---------------------------------------------------------------------------


def is_mixture_file(name: str) -> bool:
    """True when a ``--stream`` value names a mixture file (task names have no suffix)."""
    return name.lower().endswith(MIXTURE_SUFFIXES)


def load_mixture(path: str | Path) -> TaskMixture:
    """The mixture of a YAML (``.yaml``, ``.yml``) or JSON (``.json``) file; MixtureError otherwise."""
    try:
        text = read_text(path, "mixture file", MAX_YAML_BYTES)
    except ReadError as err:
        raise MixtureError(str(err)) from None
    return parse_mixture(text, str(path), json=str(path).lower().endswith(".json"))


def parse_mixture(text: str, label: str = "<mixture>", json: bool = False) -> TaskMixture:
    """A mixture from file text: a mapping ``components:`` listing mappings with ``task`` and
    optionally ``weight`` (default 1), ``params`` (a mapping of scalars), ``level``,
    ``curriculum`` (a spec string) and ``sizes`` (a list of [lo, hi] pairs)."""
    try:
        data = json_value(text, label) if json else yaml_document(text, label)[0]
    except ReadError as err:
        raise MixtureError(str(err)) from None
    if not isinstance(data, dict) or "components" not in data or not set(data) <= set(MIXTURE_KEYS):
        raise MixtureError(f"{label}: a mixture file is a mapping with the key components (a list of tasks with weights) "
                           "and optionally task_marker (true or false)")
    entries = data["components"]
    if not isinstance(entries, list) or not entries:
        raise MixtureError(f"{label}: components must be a non-empty list")
    components = [_component(entry, f"{label}: components[{i}]") for i, entry in enumerate(entries)]
    try:
        return TaskMixture(tuple(components), data.get("task_marker", False))
    except MixtureError as err:
        raise MixtureError(f"{label}: {err}") from None


def _component(entry: Any, where: str) -> Component:
    if not isinstance(entry, dict) or not isinstance(entry.get("task"), str):
        raise MixtureError(f"{where}: a component is a mapping with a task name (task: NAME)")
    unknown = sorted(str(key) for key in entry if key not in COMPONENT_KEYS)
    if unknown:
        raise MixtureError(f"{where}: unknown key(s) {', '.join(unknown)}; a component has {', '.join(COMPONENT_KEYS)}")
    params = entry.get("params") or {}
    if not isinstance(params, dict) or any(not isinstance(v, (str, int, float, bool)) for v in params.values()):
        raise MixtureError(f"{where}: params must be a mapping of parameter names to single values")
    level, curriculum, sizes = entry.get("level"), entry.get("curriculum"), entry.get("sizes") or []
    if level is not None and (isinstance(level, bool) or not isinstance(level, int)):
        raise MixtureError(f"{where}: level must be an integer, got {level!r}")
    if curriculum is not None and not isinstance(curriculum, str):
        raise MixtureError(f"{where}: curriculum must be a spec string (e.g. step:start=1,end=4,every=500)")
    if not isinstance(sizes, list) or any(not _size_range(pair) for pair in sizes):
        raise MixtureError(f"{where}: sizes must be a list of [lo, hi] integer pairs with lo <= hi")
    try:
        return Component.from_settings(
            entry["task"], entry.get("weight", 1.0), params=tuple((str(k), _text(v)) for k, v in params.items()),
            level=level, curriculum=curriculum, sizes=tuple((lo, hi) for lo, hi in sizes),
        )
    except (UnknownTaskError, ParamError, CurriculumError, MixtureError) as err:
        raise MixtureError(f"{where}: {err}") from None


def _size_range(pair: Any) -> bool:
    return (isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in pair)
            and pair[0] <= pair[1])


def _text(value: str | int | float | bool) -> str:
    """A parameter value as the command-line text Params.parse_value reads."""
    return str(value).lower() if isinstance(value, bool) else str(value)
