"""Training data from a record stream (``gengap train --stream TASK``): levels, curriculum, exclusion, batches.

:class:`StreamPlan` turns the stream settings of a run (task, ``--param`` overrides, a
``--level``, ``--sizes`` bands or a ``--curriculum`` spec) into a level table and a
curriculum. :class:`StreamSource` serves one seed's batches: step s (1-based) takes the
next ``batch_size`` kept records of the stream (seed: the run's data seed) from its cursor,
each at the level the curriculum chooses at step index s - 1 for the record's position
(generators.streams), never an input of the evaluated config's validation or test side.
With an adaptive curriculum, after each step the teacher-forced exact match (every target
token and the end token predicted) of the batch's records at the current level is
observed as of step s (a promotion recorded at step s applies from step s + 1 on). The
cursor, the curriculum's state and the level trace are the source's
state; they go into the checkpoint, so a resumed run continues exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import torch

from baselines.errors import BaselineError
from generators.batch import Record
from generators.curriculum import Curriculum, CurriculumError, parse_curriculum
from generators.exclusion import Exclusion
from generators.params import ParamError, Params
from generators.registry import UnknownTaskError, get_task
from generators.streams import RecordStream, Uniforms, size_levels

IGNORE = -100  # same as baselines.training.IGNORE


@dataclass(frozen=True)
class StreamPlan:
    """A stream run's task, level table and curriculum spec (one-level streams get ``fixed:<level>``)."""

    task: str
    levels: Mapping[int, Params]
    curriculum: str

    @classmethod
    def from_settings(
        cls,
        task: str,
        params: Sequence[tuple[str, str]] = (),
        level: int | None = None,
        curriculum: str | None = None,
        sizes: Sequence[tuple[int, int]] = (),
    ) -> "StreamPlan":
        """Resolve the settings; BaselineError naming the problem."""
        try:
            spec = get_task(task)
        except UnknownTaskError as err:
            raise BaselineError(str(err)) from None
        if level is not None and curriculum is not None:
            raise BaselineError("give --level or --curriculum, not both")
        try:
            typed = {key: spec.params_type.parse_value(key, value) for key, value in params}
            if sizes:
                base = size_levels(task, sizes)
            elif level is None and curriculum is None:
                base = {0: spec.default_params()}
            else:
                base = spec.levels()
            chosen = parse_curriculum(curriculum or f"fixed:{level if level is not None else min(base)}", sorted(base))
            table = {k: base[k].replace(**typed) if typed else base[k] for k in chosen.levels()}
        except (ParamError, CurriculumError) as err:
            raise BaselineError(f"{task}: {err}") from None
        return cls(task, table, chosen.spec)

    def new_curriculum(self) -> Curriculum:
        return parse_curriculum(self.curriculum)

    def stream(self, seed: int, exclusion: Exclusion | None = None) -> RecordStream:
        return RecordStream(self.task, self.levels, seed, exclusion)

    def probe(self, seed: int) -> list[Record]:
        """Block 0 of every level at seed (what the run reads first): sizes the vocabulary and the model."""
        stream = self.stream(seed)
        return [r for level in self.levels for r in stream.block(level, 0).records]

    def describe(self) -> dict[str, Any]:
        return {"task": self.task, "curriculum": self.curriculum, "levels": {str(k): p.to_dict() for k, p in self.levels.items()}}


class StreamSource:
    """One seed's training batches from a stream (see the module doc)."""

    needs_logits: bool

    def __init__(self, plan: StreamPlan, seed: int, exclusion: Exclusion, encode: Any, batch_size: int) -> None:
        self.plan = plan
        self.stream = plan.stream(seed, exclusion)
        self.curriculum = plan.new_curriculum()
        self.uniforms = Uniforms(seed)
        self.encode = encode  # records -> (ids, labels, tokens)
        self.batch_size = batch_size
        self.needs_logits = self.curriculum.adaptive
        self.position = 0  # the next position to read
        self.t = 0  # 0-based index of the step being served
        self.trace: list[list[int]] = []  # [step, headline level] at every change
        self.window_levels: list[int] = []  # levels trained since the last metrics row
        self.levels = np.zeros(0, dtype=np.int64)
        self._records: Any = None

    def _choose(self, position: int) -> int:
        return self.curriculum.choose(self.t, self.uniforms(position))

    def batch(self, step: int) -> tuple[torch.Tensor, torch.Tensor, int]:
        self.t = step - 1
        headline = self.curriculum.level(self.t)
        if not self.trace or self.trace[-1][1] != headline:
            self.trace.append([step, headline])
        if self._records is None:
            self._records = self.stream.iterate(self.position, chooser=self._choose)
        records, levels = [], []
        try:
            for _ in range(self.batch_size):
                position, level, record = next(self._records)
                records.append(record)
                levels.append(level)
                self.position = position + 1
        except ValueError as err:
            raise BaselineError(str(err)) from None
        self.levels = np.asarray(levels, dtype=np.int64)
        self.window_levels.extend(levels)
        return self.encode(records)

    def observe(self, step: int, logits: torch.Tensor | None, labels: torch.Tensor) -> None:
        """After the step: feed the adaptive curriculum the exact match of the current level's records."""
        if logits is None or not self.curriculum.adaptive:
            return
        rows = torch.from_numpy(self.levels == self.curriculum.current).to(labels.device)
        if not bool(rows.any()):
            return
        correct = ((logits.argmax(-1) == labels) | (labels == IGNORE)).all(dim=1)
        self.curriculum.observe(step, float(correct[rows].float().mean()))

    def metrics(self) -> dict[str, Any]:
        """For the metrics row: the headline level now and the mean level trained since the last row."""
        mean = sum(self.window_levels) / len(self.window_levels) if self.window_levels else None
        self.window_levels = []
        return {"level": self.curriculum.level(self.t), "mean_level": mean}

    def state(self) -> dict[str, Any]:
        return {"position": self.position, "t": self.t, "curriculum": self.curriculum.state_dict(),
                "trace": [list(x) for x in self.trace], "window_levels": list(self.window_levels)}

    def load_state(self, state: Mapping[str, Any]) -> None:
        if not state:
            return
        self.position = int(state["position"])
        self.t = int(state["t"])
        self.curriculum.load_state_dict(state["curriculum"])
        self.trace = [[int(a), int(b)] for a, b in state["trace"]]
        self.window_levels = [int(x) for x in state["window_levels"]]
        self._records = None

    def summary(self) -> dict[str, Any]:
        """What results.json keeps per seed."""
        return {"spec": self.curriculum.spec, "final_level": self.curriculum.level(self.t), "trace": self.trace,
                "promotions": self.curriculum.promotions, "records_read_to": self.position}
