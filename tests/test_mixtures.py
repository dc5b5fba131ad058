"""Multi-task mixtures: one-task equivalence, determinism, shards, resume, proportions, per-task curricula, no leaks, files."""

from __future__ import annotations

import itertools
import json
import math
import pickle
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gengap.generators import dumps_record, get_task
from gengap.generators.curriculum import parse_curriculum
from gengap.generators.exclusion import Exclusion
from gengap.generators.mixtures import Component, MixtureError, MixtureStream, TaskMixture, is_mixture_file, load_mixture, parse_mixture
from gengap.generators.seeding import mixture_rng
from gengap.generators.streams import RecordStream, Shard, Uniforms

PARITY = get_task("parity_check")
THREE = """
components:
  - task: parity_check
    weight: 2
    curriculum: step:start=1,end=3,every=5
  - task: addition
    weight: 1
    level: 2
    params: {format: reversed}
  - task: reverse_string
    weight: 1.5
    sizes: [[1, 3], [4, 6]]
    curriculum: linear:start=1,end=2,steps=8
"""


def take(iterator, n):
    return list(itertools.islice(iterator, n))


def three(block_size: int = 25, seed: int = 0, exclusion=None) -> MixtureStream:
    return parse_mixture(THREE).stream(seed, exclusion, block_size)


def test_a_one_component_mixture_is_the_one_task_stream() -> None:
    spec = "step:start=1,end=4,every=3"
    mixture = TaskMixture((Component.from_settings("parity_check", weight=0.3, curriculum=spec),))
    ours = take(mixture.stream(7, block_size=40).iterate(start=15, chooser=mixture.stream(7, block_size=40).chooser(records_per_step=4)), 200)
    alone = RecordStream("parity_check", mixture.components[0].levels, 7, block_size=40)
    theirs = take(alone.iterate(start=15, chooser=alone.chooser(parse_curriculum(spec).choose, 4)), 200)
    assert [(p, level, r) for p, _, level, r in ours] == theirs and {k for _, k, _, _ in ours} == {0}


def test_the_same_seed_gives_the_same_bytes_and_another_seed_other_records() -> None:
    def text(seed: int) -> str:
        return "".join(dumps_record(r) + "\n" for r in take(three(seed=seed).records(), 300))

    assert text(3) == text(3)
    other = [json.loads(line)["input"] for line in text(4).splitlines()]
    assert sum(a == b for a, b in zip((json.loads(line)["input"] for line in text(3).splitlines()), other)) < 60


def test_component_choice_is_the_mixture_seeding_stream() -> None:
    stream = three(block_size=10, seed=5)
    cumulative = [2 / 4.5, 3 / 4.5, 1.0]
    values = mixture_rng(5, 2).random(10)
    expected = [next(k for k, c in enumerate(cumulative) if v < c) for v in values]
    assert stream.components(2).tolist() == expected
    assert [stream.component(20 + i) for i in range(10)] == expected
    assert Uniforms(5, 10, mixture_rng)(23) == float(values[3])
    import hashlib

    import numpy as np

    digest = hashlib.sha256(b"mixture").digest()
    key = tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))
    by_hand = np.random.Generator(np.random.PCG64(np.random.SeedSequence(5, spawn_key=(*key, 2))))
    assert by_hand.random(10).tolist() == values.tolist()


@settings(max_examples=20, deadline=None)
@given(workers=st.integers(1, 3), ranks=st.integers(1, 3), start=st.integers(0, 80), seed=st.integers(0, 2**32), excluded=st.booleans())
def test_shards_are_disjoint_and_their_union_is_the_stream_in_order(workers: int, ranks: int, start: int, seed: int, excluded: bool) -> None:
    size, horizon = 9, 130
    held = Exclusion.from_inputs([r["input"] for r in take(RecordStream.fixed("parity_check", PARITY.level(1), seed).records(), 20)])
    exclusion = held if excluded else None
    whole = list(itertools.takewhile(lambda t: t[0] < horizon, three(size, seed, exclusion).iterate(start)))
    parts = []
    for rank in range(ranks):
        for worker in range(workers):
            shard = Shard.of(rank * workers + worker, ranks * workers)
            part = list(itertools.takewhile(lambda t: t[0] < horizon, three(size, seed, exclusion).iterate(start, shard)))
            assert all(shard.owns(p // size) for p, _, _, _ in part)
            parts.append(part)
    merged = sorted((item for part in parts for item in part), key=lambda t: t[0])
    assert len(merged) == sum(map(len, parts)) and [p for p, _, _, _ in merged] == sorted({p for p, _, _, _ in merged})  # disjoint
    assert merged == whole  # the union is the stream, position for position, in order
    if not excluded:
        assert [p for p, _, _, _ in whole] == list(range(start, horizon))


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32), start=st.integers(0, 300))
def test_resuming_at_a_position_yields_the_suffix(seed: int, start: int) -> None:
    whole = take(three(seed=seed).iterate(), 360)
    assert take(three(seed=seed).iterate(start), 360 - start) == whole[start:]


def test_resuming_far_away_generates_one_block_per_component_level(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    for task in ("parity_check", "addition", "reverse_string"):
        cls = type(get_task(task))
        original = cls.generate
        monkeypatch.setattr(cls, "generate", lambda self, rng, n, p, _o=original: calls.append(self.name) or _o(self, rng, n, p))
    far = 10**14 + 17
    got = take(three(block_size=50).iterate(far), 20)
    assert [p for p, _, _, _ in got] == list(range(far, far + 20)) and len(calls) <= 5  # at most the 5 levels drawn


def test_task_proportions_are_the_weights_within_five_sigma() -> None:
    """Bound fixed before looking: |n_k - N p_k| <= 5 sqrt(N p_k (1 - p_k)), over 1,000,000 positions
    (component choice alone) and over 20,000 records through iterate."""
    stream = three(block_size=10_000, seed=11)
    probabilities = stream.mixture.probabilities
    for n, counts in (
        (1_000_000, Counter(k for b in range(100) for k in stream.components(b).tolist())),
        (20_000, Counter(k for _, k, _, _ in take(three(block_size=1000, seed=12).iterate(), 20_000))),
    ):
        for k, p in enumerate(probabilities):
            assert abs(counts[k] - n * p) <= 5 * math.sqrt(n * p * (1 - p)), (k, counts[k], n * p)
    zero = parse_mixture("components: [{task: parity_check, weight: 0}, {task: addition, weight: 1}]").stream(0, block_size=100)
    assert {k for _, k, _, _ in take(zero.iterate(), 500)} == {1}


def test_each_component_follows_its_own_curriculum_on_the_global_step() -> None:
    stream = three(block_size=30, seed=2)
    per_step = 4
    rows = take(stream.iterate(chooser=stream.chooser(records_per_step=per_step)), 400)
    uniforms = Uniforms(2, 30)
    linear = parse_curriculum("linear:start=1,end=2,steps=8")
    for p, k, level, record in rows:
        t = p // per_step
        assert record["task"] == stream.mixture.components[k].task
        if k == 0:
            assert level == min(3, 1 + t // 5)  # step:start=1,end=3,every=5
        elif k == 1:
            assert level == 2 and record["meta"]["format"] == "reversed"
        else:
            assert level == linear.choose(t, uniforms(p))
        lo_hi = {(2, 1): (1, 3), (2, 2): (4, 6)}.get((k, level))
        if lo_hi:
            assert lo_hi[0] <= record["difficulty"]["input_length"] <= lo_hi[1]
        alone = RecordStream.fixed(record["task"], stream.mixture.components[k].levels[level], 2, block_size=30)
        assert alone.record(p) == record  # the component's own stream at p
    levels = {k: [level for p, c, level, _ in rows if c == k] for k in range(3)}
    assert levels[0][0] == 1 and levels[0][-1] == 3 and set(levels[2]) == {1, 2}


def test_every_record_passes_its_tasks_checker() -> None:
    rows = take(three(block_size=200, seed=9).iterate(), 600)
    assert {record["task"] for _, _, _, record in rows} == {"parity_check", "addition", "reverse_string"}
    assert all(get_task(r["task"]).check(r, r["target"]) for _, _, _, r in rows)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32), picks=st.sets(st.integers(0, 29), min_size=1, max_size=20))
def test_no_held_out_input_leaks_and_nothing_else_is_dropped(seed: int, picks: set[int]) -> None:
    space = [" ".join(bits) for n in range(1, 5) for bits in itertools.product("01", repeat=n)]
    held = Exclusion.from_inputs([space[i] for i in picks])
    text = "components: [{task: parity_check, weight: 3, level: 1, params: {max_length: 4}}, {task: reverse_string, weight: 1, sizes: [[1, 4]]}]"
    plain = take(parse_mixture(text).stream(seed, block_size=60).iterate(), 400)
    try:
        kept = list(itertools.takewhile(lambda t: t[0] < 400, parse_mixture(text).stream(seed, held, block_size=60).iterate()))
    except ValueError as err:  # 60 excluded positions of parity in a row: the contract's stop
        assert "parity_check" in str(err) and "in a row" in str(err)
        return
    banned = {space[i] for i in picks}
    assert not any(r["input"] in banned for _, _, _, r in kept)
    assert kept == [row for row in plain if row[3]["input"] not in banned]


def test_exclusion_per_component_and_a_fully_excluded_component_stops_naming_its_task() -> None:
    space = [" ".join(bits) for n in range(1, 3) for bits in itertools.product("01", repeat=n)]
    text = "components: [{task: parity_check, weight: 1, level: 1, params: {max_length: 2}}, {task: addition, weight: 9}]"
    stream = parse_mixture(text).stream(0, Exclusion.from_inputs(space, "cfg"), block_size=20)
    with pytest.raises(ValueError, match="parity_check: 20 positions in a row are excluded .by cfg"):
        take(stream.iterate(), 2000)
    only_addition = parse_mixture(text).stream(0, [None, Exclusion.from_inputs(space)], block_size=20)
    assert any(r["task"] == "parity_check" for r in take(only_addition.records(), 100))  # parity is not excluded there
    with pytest.raises(MixtureError, match="1 exclusions for 2 components"):
        parse_mixture(text).stream(0, [None])


def test_a_mixture_stream_pickles_without_its_caches() -> None:
    stream = three(block_size=20, seed=1)
    first = take(stream.iterate(), 50)
    copy = pickle.loads(pickle.dumps(stream))
    assert take(copy.iterate(), 50) == first


# -- files ------------------------------------------------------------------------------------


def test_yaml_and_json_files_give_the_same_mixture(tmp_path: Path) -> None:
    yaml_path, json_path = tmp_path / "mix.yaml", tmp_path / "mix.json"
    yaml_path.write_text(THREE)
    data = {"components": [
        {"task": "parity_check", "weight": 2, "curriculum": "step:start=1,end=3,every=5"},
        {"task": "addition", "level": 2, "params": {"format": "reversed"}},
        {"task": "reverse_string", "weight": 1.5, "sizes": [[1, 3], [4, 6]], "curriculum": "linear:start=1,end=2,steps=8"},
    ]}  # fmt: skip
    json_path.write_text(json.dumps(data))
    a, b = load_mixture(yaml_path), load_mixture(json_path)
    assert a.describe() == b.describe() and a.probabilities == pytest.approx((2 / 4.5, 1 / 4.5, 1.5 / 4.5))
    assert [(v["min_length"], v["max_length"]) for v in a.describe()[2]["levels"].values()] == [(1, 3), (4, 6)]
    assert is_mixture_file("mix.YAML") and is_mixture_file("a/b.json") and not is_mixture_file("parity_check")
    one = Component.of_stream(RecordStream.fixed("parity_check", PARITY.level(3), 0), weight=2)
    assert one.curriculum == "fixed:0" and one.weight == 2


BAD = {
    "negative": ("components: [{task: parity_check, weight: -1}]", "weight must be a finite number >= 0"),
    "zero sum": ("components: [{task: parity_check, weight: 0}, {task: addition, weight: 0}]", "positive sum"),
    "nan": ("components: [{task: parity_check, weight: .nan}]", "not a finite number"),
    "string weight": ("components: [{task: parity_check, weight: heavy}]", "weight must be"),
    "unknown task": ("components: [{task: no_such_task}]", "components.0.: unknown task"),
    "empty": ("components: []", "non-empty list"),
    "no components": ("tasks: [parity_check]", "the key components"),
    "not a mapping": ("- parity_check", "the key components"),
    "unknown key": ("components: [{task: parity_check, wieght: 1}]", "unknown key.s. wieght"),
    "level and curriculum": ("components: [{task: parity_check, level: 2, curriculum: fixed:2}]", "not both"),
    "bad curriculum": ("components: [{task: parity_check, curriculum: zigzag}]", "unknown curriculum"),
    "outside levels": ("components: [{task: parity_check, curriculum: fixed:12}]", "uses level"),
    "bad param": ("components: [{task: parity_check, params: {max_length: many}}]", "not a valid int"),
    "nested param": ("components: [{task: parity_check, params: {max_length: [3]}}]", "params must be"),
    "bad sizes": ("components: [{task: reverse_string, sizes: [[5, 1]]}]", "sizes must be"),
    "malformed": ("components: [{task: parity_check", "malformed YAML"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_mixture_files_are_one_line_errors(name: str) -> None:
    text, message = BAD[name]
    with pytest.raises(MixtureError, match=message) as caught:
        parse_mixture(text, "mix.yaml")
    assert str(caught.value).startswith("mix.yaml") and "\n" not in str(caught.value)


def test_bad_json_and_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(MixtureError, match="NaN"):
        parse_mixture('{"components": [{"task": "parity_check", "weight": NaN}]}', "mix.json", json=True)
    with pytest.raises(MixtureError, match="cannot read mixture file"):
        load_mixture(tmp_path / "absent.yaml")
    with pytest.raises(MixtureError, match="a weight must be a finite number"):
        TaskMixture((Component("parity_check", {1: PARITY.level(1)}, "fixed:1", float("nan")),))
    with pytest.raises(MixtureError, match="at least one component"):
        TaskMixture(())


def test_a_mixture_is_the_same_in_another_process() -> None:
    """Same seed, same file: the same bytes in a fresh interpreter with another hash seed."""
    import os
    import subprocess
    import sys

    code = (
        "import hashlib, itertools, json\n"
        "from gengap.generators.mixtures import parse_mixture\n"
        f"s = parse_mixture({THREE!r}).stream(3, block_size=64)\n"
        "rows = itertools.islice(s.iterate(start=500, chooser=s.chooser(records_per_step=4)), 300)\n"
        "print(hashlib.sha256(json.dumps(list(rows)).encode()).hexdigest())\n"
    )
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONHASHSEED": "4242", "PYTHONPATH": str(root)}
    theirs = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.strip()
    stream = parse_mixture(THREE).stream(3, block_size=64)
    rows = take(stream.iterate(start=500, chooser=stream.chooser(records_per_step=4)), 300)
    import hashlib

    assert hashlib.sha256(json.dumps(rows).encode()).hexdigest() == theirs
