"""A test part of N sequences per input length, sampled from the task's generator (Deletang et al. 2023's evaluation).

Deletang et al. score a model at every test length (41..500 for the regular and context-free
tasks, Table 2), each length on freshly sampled sequences (google-deepmind/neural_networks_chomsky_hierarchy
samples 512 a length), and average the per-length per-token accuracy: gengap's length score
(gengap.baselines.metrics.length_score) over such a part is that score. With N sequences a length a
0/1 score's standard error is at most 0.5 / sqrt(N): N >= 100 keeps it <= 0.05 (:data:`MIN_PER_LENGTH`).

:class:`LengthTest` samples length L at the task's parameters with its size knob fixed to L
(``Task.with_size(L, L)``; every Chomsky task's size is its input length), then the given
parameter overrides (a task that cannot take length L exactly rounds it, as modular_arithmetic's
odd-length expressions do: L = 42 gives 43; each parameter set is sampled once, so every input
length that occurs has N sequences), from stream ``length_test`` (gengap.generators.seeding) of :data:`SEED`:
the same records for every run seed and every run, byte for byte. Sequences are drawn with
replacement, as the paper's are (a short length may repeat an input).
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Sequence

from gengap.baselines.errors import BaselineError

if TYPE_CHECKING:
    from gengap.baselines.data import SplitData
    from gengap.baselines.settings import TrainSettings

SEED = 0  # the length_test stream's seed: one test set per (task, parameters, length)
MIN_PER_LENGTH = 100  # 0.5 / sqrt(100) = 0.05: the largest standard error of a 0/1 score's mean over 100 sequences


def standard_error_bound(per_length: int) -> float:
    """The largest standard error of a per-length mean of 0/1 scores over ``per_length`` sequences."""
    return 0.5 / per_length ** 0.5


@dataclass(frozen=True)
class LengthTest:
    """``per_length`` sequences of ``task`` at each input length ``lengths[0]..lengths[1]``, with
    ``params`` (KEY, text) overrides applied at every length."""

    task: str
    lengths: tuple[int, int]
    per_length: int
    params: tuple[tuple[str, str], ...] = ()

    def check(self) -> None:
        lo, hi = self.lengths
        if not 1 <= lo <= hi:
            raise BaselineError(f"test lengths must be LO-HI with 1 <= LO <= HI, got {lo}-{hi}")
        if self.per_length < 1:
            raise BaselineError(f"test_per_length must be at least 1, got {self.per_length}")

    def records(self) -> list[dict[str, Any]]:
        """The records, length by length, in the generator's order (BaselineError for a task or parameter the generator refuses)."""
        from gengap.generators import get_task
        from gengap.generators.params import ParamError
        from gengap.generators.registry import UnknownTaskError
        from gengap.generators.seeding import length_test_rng

        self.check()
        try:
            spec = get_task(self.task)
            typed = {key: spec.params_type.parse_value(key, value) for key, value in self.params}
            out: list[dict[str, Any]] = []
            sampled: set[str] = set()
            for length in range(self.lengths[0], self.lengths[1] + 1):
                params = spec.with_size(length, length)
                params = params.replace(**typed) if typed else params
                if params.canonical() in sampled:  # a length the task rounds to one already sampled
                    continue
                sampled.add(params.canonical())
                batch = spec.generate(length_test_rng(SEED, self.task, params), self.per_length, params)
                out.extend(batch.records(self.task))
        except (UnknownTaskError, ParamError, ValueError) as err:
            raise BaselineError(f"--test-per-length on {self.task}: {err}") from None
        return out

    def describe(self) -> dict[str, Any]:
        """What results.json records of the test part."""
        return {"task": self.task, "lengths": list(self.lengths), "per_length": self.per_length, "params": [list(p) for p in self.params],
                "seed": SEED, "standard_error_at_most": round(standard_error_bound(self.per_length), 4)}


def task_of(records: Sequence[dict[str, Any]]) -> str:
    """The one task of a test part's records (BaselineError when they come from several or none)."""
    tasks = sorted({str(r.get("task")) for r in records})
    if len(tasks) != 1:
        raise BaselineError(f"--test-per-length samples one task's generator; the test part has records of {', '.join(tasks) or 'no task'}")
    return tasks[0]


def length_range(records: Sequence[dict[str, Any]]) -> tuple[int, int]:
    """The input lengths (difficulty.input_length, else tokens) of records, as (shortest, longest)."""
    from gengap.baselines.metrics import input_length

    lengths = [input_length(r) for r in records]
    if not lengths:
        raise BaselineError("--test-per-length without --test-lengths needs a test part to read the lengths from")
    return min(lengths), max(lengths)


def with_length_test(data: "SplitData", settings: "TrainSettings") -> tuple["SplitData", LengthTest | None]:
    """data with its test part replaced by the settings' per-length sample (``test_per_length`` > 0;
    lengths: ``test_lengths``, else the test part's range; parameters: the stream's ``--param``
    overrides when the stream is the test's task), and the LengthTest; data unchanged and None otherwise."""
    if not settings.test_per_length:
        return data, None
    task = task_of(data.test)
    lengths = tuple(settings.test_lengths) if settings.test_lengths else length_range(data.test)
    params = tuple(settings.stream_params) if settings.stream == task else ()
    sampled = LengthTest(task, (int(lengths[0]), int(lengths[1])), int(settings.test_per_length), params)
    return replace(data, test=sampled.records()), sampled
