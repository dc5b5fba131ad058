"""Training data from a record stream (``gengap train --stream TASK`` or ``--stream MIXTURE.yaml``).

:class:`StreamPlan` turns the stream settings of a run (task, ``--param`` overrides, a
``--level``, ``--sizes`` bands or a ``--curriculum`` spec; or a mixture file,
gengap.generators.mixtures) into a task mixture: one component for a task, one per task of a
mixture file, each with its level table and curriculum. :class:`StreamSource` serves one
seed's batches: step s (1-based) takes the next ``batch_size`` kept records of the mixture
stream (seed: the run's data seed) from its cursor, each from the component drawn at its
position, at the level that component's curriculum chooses at step index s - 1 for the
position (gengap.generators.streams, gengap.generators.mixtures), never an input of the evaluated
config's validation or test side. With an adaptive curriculum, after each step the
teacher-forced exact match (every labelled position predicted: the target and end tokens, or the
output tape's in empty-tape mode) of the batch's
records of that component at its current level is observed as of step s (a promotion
recorded at step s applies from step s + 1 on). The cursor, the curricula's states and the
level traces are the source's state; they go into the checkpoint, so a resumed run
continues exactly (and refuses a mixture file that changed meanwhile).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import torch

from gengap.baselines.distinct_inputs import DistinctInputs
from gengap.baselines.errors import BaselineError
from gengap.baselines.layout import IGNORE
from gengap.baselines.stream_mixture import stream_mixture
from gengap.generators.batch import Record
from gengap.generators.curriculum import Curriculum
from gengap.generators.exclusion import Exclusion
from gengap.generators.mixtures import Component, MixtureStream, TaskMixture
from gengap.generators.params import Params
from gengap.generators.streams import Uniforms



@dataclass(frozen=True, eq=False)
class StreamPlan:
    """A stream run's task mixture: one component for ``--stream TASK`` (``source`` None), or
    a mixture file's components (``source``: the file)."""

    mixture: TaskMixture
    source: str | None = None

    @classmethod
    def from_settings(
        cls,
        task: str,
        params: Sequence[tuple[str, str]] = (),
        level: int | None = None,
        curriculum: str | None = None,
        sizes: Sequence[tuple[int, int]] = (),
    ) -> "StreamPlan":
        """Resolve the settings (``task`` may name a mixture file); BaselineError naming the problem
        (gengap.baselines.stream_mixture, which the command line calls before torch is imported)."""
        return cls(*stream_mixture(task, params, level, curriculum, sizes))

    @property
    def single(self) -> Component | None:
        """The component of a one-task run (``--stream TASK``), else None."""
        return self.mixture.components[0] if self.source is None else None

    @property
    def task(self) -> str:
        return self.mixture.components[0].task

    @property
    def levels(self) -> Mapping[int, Params]:
        return self.mixture.components[0].levels

    @property
    def curriculum(self) -> str:
        return self.mixture.components[0].curriculum

    def new_curricula(self) -> list[Curriculum]:
        return self.mixture.new_curricula()

    def stream(self, seed: int, exclusion: Exclusion | None = None) -> MixtureStream:
        return self.mixture.stream(seed, exclusion)

    def probe(self, seed: int) -> list[Record]:
        """Block 0 of every level of every component at seed (what the run reads first): sizes the vocabulary and the model."""
        stream = self.stream(seed)
        return [stream.mark(r) for part in stream.streams for level in part.levels for r in part.block(level, 0).records]

    def describe(self) -> dict[str, Any]:
        if self.single is not None:
            single = self.single.describe()
            return {"task": single["task"], "curriculum": single["curriculum"], "levels": single["levels"]}
        return {"mixture": self.source, "components": self.mixture.describe()}


def reach_warnings(probe: Sequence[Record], test: Sequence[Record]) -> list[str]:
    """A warning when a stream's levels (``probe``: block 0 of each) reach input lengths of the
    config's test part: those test records are then in distribution for the run, not OOD."""
    if not probe or not test:
        return []
    longest = max(_input_length(r) for r in probe)
    lengths = sorted(_input_length(r) for r in test)
    inside = sum(1 for n in lengths if n <= longest)
    if not inside:
        return []
    return [f"the stream's levels reach input length {longest}, inside the test part's lengths {lengths[0]}..{lengths[-1]}: "
            f"{inside} of its {len(lengths)} records are in distribution for this run, not OOD (give a curriculum or sizes "
            "that stay below the test lengths)"]


def _input_length(record: Record) -> int:
    value = record.get("difficulty", {}).get("input_length")
    return int(value) if isinstance(value, int) else len(record["input"].split())


class StreamSource:
    """One seed's training batches from a stream (see the module doc)."""

    needs_logits: bool

    def __init__(self, plan: StreamPlan, seed: int, exclusion: Exclusion, encode: Any, batch_size: int) -> None:
        self.plan = plan
        self.stream = plan.stream(seed, exclusion)
        self.curricula = plan.new_curricula()
        self.uniforms = Uniforms(seed)
        self.encode = encode  # records -> (ids, labels, tokens)
        self.batch_size = batch_size
        self.needs_logits = any(c.adaptive for c in self.curricula)
        self.position = 0  # the next position to read
        self.t = 0  # 0-based index of the step being served
        self.traces: list[list[list[int]]] = [[] for _ in self.curricula]  # per component: [step, headline level] at every change
        self.window: list[list[int]] = []  # [component, level] of the records trained since the last metrics row
        self.components = np.zeros(0, dtype=np.int64)
        self.levels = np.zeros(0, dtype=np.int64)
        self._records: Any = None
        self.distinct = DistinctInputs()  # the inputs trained on so far
        self.read = 0  # records trained on so far
        self.counted_from = 1  # the first step whose inputs the count holds (later than 1 after resuming a checkpoint without one)

    def _choose(self, component: int, position: int) -> int:
        return self.curricula[component].choose(self.t, self.uniforms(position))

    def batch(self, step: int) -> tuple[torch.Tensor, torch.Tensor, int]:
        self.t = step - 1
        for curriculum, trace in zip(self.curricula, self.traces):
            headline = curriculum.level(self.t)
            if not trace or trace[-1][1] != headline:
                trace.append([step, headline])
        if self._records is None:
            self._records = self.stream.iterate(self.position, chooser=self._choose)
        records, chosen = [], []
        try:
            for _ in range(self.batch_size):
                position, component, level, record = next(self._records)
                records.append(record)
                chosen.append([component, level])
                self.position = position + 1
        except ValueError as err:
            raise BaselineError(str(err)) from None
        self.components = np.asarray([c for c, _ in chosen], dtype=np.int64)
        self.levels = np.asarray([level for _, level in chosen], dtype=np.int64)
        self.window.extend(chosen)
        self.distinct.add(r["input"] for r in records)
        self.read += len(records)
        return self.encode(records)

    def observe(self, step: int, logits: torch.Tensor | None, labels: torch.Tensor) -> None:
        """After the step: feed each adaptive curriculum the exact match of its component's records at its current level.

        The rows each curriculum observes are known on the host (the batch's components and
        levels), so the device is read once per step, for the batch's per-record exact match
        (none when no adaptive curriculum has a record in the batch); each exact match is the
        float32 fraction of its rows that are right."""
        if logits is None or not self.needs_logits:
            return
        observed = [(curriculum, rows) for k, curriculum in enumerate(self.curricula) if curriculum.adaptive
                    for rows in [(self.components == k) & (self.levels == curriculum.current)] if rows.any()]
        if not observed:
            return
        correct = ((logits.argmax(-1) == labels) | (labels == IGNORE)).all(dim=1).cpu().numpy()  # the step's one read-back
        for curriculum, rows in observed:
            curriculum.observe(step, float(np.float32(correct[rows].sum()) / np.float32(rows.sum())))

    def metrics(self) -> dict[str, Any]:
        """For the metrics row: the headline level now and the mean level trained since the last row
        (per component, with each component's share of the records, for a mixture)."""
        window, self.window = self.window, []
        means: list[float | None] = []
        counts: list[int] = []
        for k in range(len(self.curricula)):
            levels = [level for component, level in window if component == k]
            counts.append(len(levels))
            means.append(sum(levels) / len(levels) if levels else None)
        if self.plan.single is not None:
            return {"level": self.curricula[0].level(self.t), "mean_level": means[0]}
        total = max(sum(counts), 1)
        return {"levels": [c.level(self.t) for c in self.curricula], "mean_levels": means, "shares": [n / total for n in counts]}

    def state(self) -> dict[str, Any]:
        return {"position": self.position, "t": self.t, "curricula": [c.state_dict() for c in self.curricula],
                "traces": [[list(x) for x in trace] for trace in self.traces], "window": [list(x) for x in self.window],
                "components": self.plan.mixture.describe(), "distinct_inputs": self.distinct.state(), "read": self.read,
                "counted_from": self.counted_from}

    def load_state(self, state: Mapping[str, Any]) -> None:
        if not state:
            return
        if "curriculum" in state:  # a one-task checkpoint written before mixtures
            state = {**state, "curricula": [state["curriculum"]], "traces": [state["trace"]],
                     "window": [[0, level] for level in state["window_levels"]], "components": self.plan.mixture.describe()}
        if state["components"] != self.plan.mixture.describe():
            raise BaselineError(f"the stream's components changed since the checkpoint ({self.plan.source or self.plan.task}); cannot resume")
        self.position = int(state["position"])
        self.t = int(state["t"])
        for curriculum, saved in zip(self.curricula, state["curricula"]):
            curriculum.load_state_dict(saved)
        self.traces = [[[int(a), int(b)] for a, b in trace] for trace in state["traces"]]
        self.window = [[int(a), int(b)] for a, b in state["window"]]
        self.distinct.load_state(state.get("distinct_inputs"))  # a checkpoint from before the count: counted from the resume on
        self.read = int(state.get("read", 0))
        self.counted_from = int(state.get("counted_from", 1 if "distinct_inputs" in state else self.t + 2))
        self._records = None

    def training_data(self, steps: int) -> dict[str, Any]:
        """What results.json records per seed of the data trained on: a fresh stream, the records and distinct inputs trained on."""
        counted = {} if self.counted_from == 1 else {"counted_from_step": self.counted_from}  # resumed from a checkpoint that kept no count
        return {"kind": "stream", "records_trained": self.read, "distinct_inputs": self.distinct.count, **counted}

    def summary(self) -> dict[str, Any]:
        """What results.json keeps per seed."""
        parts = [{"task": component.task, "spec": curriculum.spec, "final_level": curriculum.level(self.t), "trace": trace,
                  "promotions": curriculum.promotions}
                 for component, curriculum, trace in zip(self.plan.mixture.components, self.curricula, self.traces)]
        if self.plan.single is not None:
            return {**{k: v for k, v in parts[0].items() if k != "task"}, "records_read_to": self.position}
        return {"components": parts, "records_read_to": self.position}
