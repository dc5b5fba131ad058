"""Curricula: schedules, inverse-CDF choices, adaptive promotion, reproducible and restorable decisions."""

from __future__ import annotations

import itertools
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gengap.generators.curriculum import Adaptive, Curriculum, CurriculumError, LinearRamp, Mixture, StepRamp, describe, parse_curriculum
from gengap.generators.streams import RecordStream

LEVELS = list(range(1, 11))


def test_specs_parse_to_schedules_and_back() -> None:
    cases = {
        "fixed:3": Mixture(((3, 1.0),)),
        "mixture:1=0.25,3=0.75": Mixture(((1, 0.25), (3, 0.75))),
        "step:start=2,end=5,every=10": StepRamp(2, 5, 10),
        "linear:start=1,end=4,steps=30": LinearRamp(1, 4, 30),
        "adaptive:start=1,end=3,threshold=0.8,window=4,replay=0.2": Adaptive(1, 3, 0.8, 4, 0.2),
        "adaptive:window=7": Adaptive(window=7),
    }
    for spec, schedule in cases.items():
        assert parse_curriculum(spec, LEVELS).schedule == schedule
        assert parse_curriculum(describe(schedule)).schedule == schedule


@pytest.mark.parametrize(
    "spec, message",
    [
        ("zigzag:1", "unknown curriculum 'zigzag'"),
        ("fixed:x", "malformed"),
        ("step:start=1,stop=3", "unknown step option 'stop'"),
        ("step:start=5,end=2", "start 5 is above end 2"),
        ("adaptive:threshold=1.5", "threshold must be in"),
        ("adaptive:replay=1", "replay must be in"),
        ("mixture:1=0,2=0", "positive sum"),
        ("fixed:11", "uses level.s. 11; levels are 1..10"),
    ],
)
def test_bad_specs_name_the_problem(spec: str, message: str) -> None:
    with pytest.raises(CurriculumError, match=message):
        parse_curriculum(spec, LEVELS)


def test_step_and_linear_ramps_follow_the_step_count() -> None:
    step = parse_curriculum("step:start=2,end=5,every=10")
    assert [step.level(t) for t in (0, 9, 10, 29, 30, 1000)] == [2, 2, 3, 4, 5, 5]
    linear = parse_curriculum("linear:start=1,end=4,steps=30")
    for t in range(0, 40):
        mixture = linear.mixture(t)
        assert math.isclose(sum(mixture.values()), 1.0)
        mean = sum(level * w for level, w in mixture.items())
        assert math.isclose(mean, 1 + 3 * min(t, 30) / 30)  # the mean level rises linearly
        assert max(mixture) - min(mixture) <= 1
    assert linear.mixture(30) == {4: 1.0}


@settings(max_examples=40, deadline=None)
@given(weights=st.lists(st.floats(0.05, 5), min_size=1, max_size=5), u=st.floats(0, 1, exclude_max=True))
def test_choose_is_the_inverse_cdf(weights: list[float], u: float) -> None:
    curriculum = Curriculum(Mixture(tuple(zip(range(1, len(weights) + 1), weights))))
    total = sum(weights)
    cumulative = list(itertools.accumulate(w / total for w in weights))
    expected = next((i + 1 for i, c in enumerate(cumulative) if u < c), len(weights))
    assert curriculum.choose(0, u) == expected


def test_adaptive_promotes_on_a_full_window_at_the_threshold() -> None:
    curriculum = parse_curriculum("adaptive:start=1,end=3,threshold=0.75,window=4,replay=0.5")
    assert curriculum.mixture(0) == {1: 1.0}
    promoted = [curriculum.observe(t, a) for t, a in enumerate([1.0, 1.0, 1.0, 0.0, 1.0, 1.0])]
    # windows: [1,1,1] not full; [1,1,1,0] mean 0.75 -> promote at t=3; then [1,1] not full
    assert promoted == [False, False, False, True, False, False]
    assert curriculum.current == 2 and curriculum.promotions == [[3, 2]]
    assert curriculum.mixture(4) == {1: 0.5, 2: 0.5}  # replay keeps earlier levels in the mix
    for t in range(6, 20):
        curriculum.observe(t, 1.0)
    assert curriculum.current == 3 and curriculum.mixture(20) == {1: 0.25, 2: 0.25, 3: 0.5}  # capped at end
    with pytest.raises(CurriculumError):
        curriculum.observe(21, 1.5)
    fixed = parse_curriculum("fixed:2")
    assert fixed.observe(0, 1.0) is False and fixed.state_dict()["promotions"] == []


def _drive(curriculum: Curriculum, accuracies: list[float], seed: int, start_step: int = 0, steps: int = 40, batch: int = 5):
    """Levels chosen for `steps` steps of `batch` records from a stream, observing accuracies."""
    stream = RecordStream.of_task("parity_check", seed, block_size=23)
    chooser = stream.chooser(curriculum.choose, records_per_step=batch)
    chosen = []
    for t in range(start_step, start_step + steps):
        chosen.append([chooser(p) for p in range(t * batch, (t + 1) * batch)])
        curriculum.observe(t, accuracies[t])
    return chosen


@settings(max_examples=15, deadline=None)
@given(accuracies=st.lists(st.sampled_from([0.0, 0.5, 0.9, 1.0]), min_size=40, max_size=40), seed=st.integers(0, 1000), cut=st.integers(1, 39))
def test_adaptive_choices_are_reproducible_and_restored_from_state(accuracies: list[float], seed: int, cut: int) -> None:
    spec = "adaptive:start=1,end=6,threshold=0.7,window=3,replay=0.3"
    whole = _drive(parse_curriculum(spec), accuracies, seed)
    assert _drive(parse_curriculum(spec), accuracies, seed) == whole
    first = parse_curriculum(spec)
    head = _drive(first, accuracies, seed, steps=cut)
    state = json.loads(json.dumps(first.state_dict()))  # through a checkpoint's JSON
    restored = parse_curriculum(spec)
    restored.load_state_dict(state)
    tail = _drive(restored, accuracies, seed, start_step=cut, steps=40 - cut)
    assert head + tail == whole
    assert restored.state_dict() == _final_state(spec, accuracies, seed)


def _final_state(spec: str, accuracies: list[float], seed: int) -> dict:
    curriculum = parse_curriculum(spec)
    _drive(curriculum, accuracies, seed)
    return curriculum.state_dict()


def test_state_of_another_curriculum_is_refused() -> None:
    with pytest.raises(CurriculumError, match="state is of"):
        parse_curriculum("fixed:2").load_state_dict(parse_curriculum("fixed:3").state_dict())


def test_mixture_choices_match_the_weights() -> None:
    stream = RecordStream.of_task("parity_check", 4, block_size=1000)
    curriculum = parse_curriculum("mixture:2=0.2,5=0.8")
    chooser = stream.chooser(curriculum.choose)
    levels = [chooser(p) for p in range(5000)]
    assert set(levels) == {2, 5}
    assert abs(levels.count(2) / 5000 - 0.2) < 0.03  # 5 sigma is ~0.028
