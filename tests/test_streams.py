"""Record streams: release-identical records, determinism, O(1) resume, disjoint shards, exclusion without leaks."""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gengap.generators import BLOCK_SIZE, BlockPlan, batch_to_jsonl, dumps_record, get_task
from gengap.generators.curriculum import CurriculumError, parse_curriculum
from gengap.generators.exclusion import Exclusion, input_hashes
from gengap.generators.seeding import curriculum_rng
from gengap.generators.streams import RecordStream, Shard, Uniforms, size_levels

PARITY = get_task("parity_check")


def take(iterator, n):
    return list(itertools.islice(iterator, n))


def test_a_one_level_stream_is_what_generate_writes() -> None:
    params = PARITY.level(4)
    n = 2 * BLOCK_SIZE  # whole blocks (a run's shorter last block is drawn at its own length)
    plan = BlockPlan("parity_check", params, n, seed=5)
    expected = b"".join(batch_to_jsonl(b, "parity_check") for b in plan.batches())
    stream = RecordStream.fixed("parity_check", params, 5)
    assert "".join(dumps_record(r) + "\n" for r in take(stream.records(), n)).encode() == expected
    # the slow path (iterate) yields the same records with their positions
    triples = take(stream.iterate(start=BLOCK_SIZE - 3), 6)
    assert [p for p, _, _ in triples] == list(range(BLOCK_SIZE - 3, BLOCK_SIZE + 3))
    lines = expected.decode().splitlines()
    assert [dumps_record(r) for _, _, r in triples] == lines[BLOCK_SIZE - 3 : BLOCK_SIZE + 3]


def test_same_seed_same_records_other_seed_other_records() -> None:
    params = get_task("addition").level(3)
    a = take(RecordStream.fixed("addition", params, 11, block_size=97).records(), 300)
    b = take(RecordStream.fixed("addition", params, 11, block_size=97).records(), 300)
    c = take(RecordStream.fixed("addition", params, 12, block_size=97).records(), 300)
    assert a == b
    assert sum(x["input"] == y["input"] for x, y in zip(a, c)) < 30


def test_resume_far_away_costs_one_block(monkeypatch: pytest.MonkeyPatch) -> None:
    params = PARITY.level(5)
    far = 10**15 + 123_457
    calls: list[int] = []
    original = type(PARITY).generate

    def counting(self, rng, n, p):
        calls.append(n)
        return original(self, rng, n, p)

    monkeypatch.setattr(type(PARITY), "generate", counting)
    stream = RecordStream.fixed("parity_check", params, 3)
    got = take(stream.records(start=far), 5)
    assert calls == [BLOCK_SIZE]  # one block, however far
    # independent computation: block far // BLOCK_SIZE of the release plan, from its own rng
    from gengap.generators.seeding import block_rng

    block, offset = divmod(far, BLOCK_SIZE)
    batch = original(PARITY, block_rng(3, "parity_check", params, block), BLOCK_SIZE, params)
    assert got == list(batch.records("parity_check"))[offset : offset + 5]
    assert stream.record(far + 2) == got[2]
    assert [p for p, _, _ in take(stream.iterate(start=far), 3)] == [far, far + 1, far + 2]


def _curriculum_chooser(stream: RecordStream):
    curriculum = parse_curriculum("mixture:1=0.3,2=0.3,4=0.4", levels=list(stream.levels))
    return stream.chooser(curriculum.choose, records_per_step=3)


@settings(max_examples=25, deadline=None)
@given(workers=st.integers(1, 3), ranks=st.integers(1, 3), start=st.integers(0, 90), mixed=st.booleans(), seed=st.integers(0, 2**32))
def test_shards_are_disjoint_and_their_union_is_the_stream(workers: int, ranks: int, start: int, mixed: bool, seed: int) -> None:
    size, horizon = 7, 120
    stream = RecordStream.of_task("parity_check", seed, block_size=size)
    excluded = Exclusion.from_inputs([r["input"] for r in take(RecordStream.fixed("parity_check", PARITY.level(1), seed).records(), 15)])
    stream = RecordStream(stream.task, stream.levels, seed, excluded if mixed else None, block_size=size)
    chooser = _curriculum_chooser(stream) if mixed else None
    if not mixed:
        stream = RecordStream.fixed("parity_check", PARITY.level(2), seed, block_size=size)
    whole = {p: (level, r) for p, level, r in itertools.takewhile(lambda t: t[0] < horizon, stream.iterate(start, chooser=chooser))}
    seen: dict[int, tuple] = {}
    for rank in range(ranks):
        for worker in range(workers):
            shard = Shard.of(rank * workers + worker, ranks * workers)
            fresh = RecordStream(stream.task, stream.levels, seed, stream.exclusion, block_size=size)  # its own cache, as in a worker
            mine = _curriculum_chooser(fresh) if mixed else None
            part = list(itertools.takewhile(lambda t: t[0] < horizon, fresh.iterate(start, shard, mine)))
            positions = [p for p, _, _ in part]
            assert positions == sorted(positions)
            assert all(shard.owns(p // size) for p in positions)
            assert not set(positions) & set(seen)  # disjoint
            seen.update({p: (level, r) for p, level, r in part})
    assert seen == whole  # the union is the stream, position for position
    if not mixed:
        assert sorted(whole) == list(range(start, horizon))


def test_the_torch_and_hf_style_multi_index_shard_is_the_union_of_its_parts() -> None:
    stream = RecordStream.fixed("parity_check", PARITY.level(3), 1, block_size=5)
    both = take(stream.iterate(shard=Shard(4, (1, 3))), 20)
    one = take(stream.iterate(shard=Shard.of(1, 4)), 10)
    three = take(stream.iterate(shard=Shard.of(3, 4)), 10)
    assert sorted(both) == sorted(one + three)
    with pytest.raises(ValueError, match="indices"):
        Shard(2, (2,))


# -- exclusion -------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32), picks=st.sets(st.integers(0, 29), max_size=25), level=st.integers(1, 2))
def test_exclusion_never_leaks_and_drops_nothing_else(seed: int, picks: set[int], level: int) -> None:
    """Parity inputs of lengths 1..4 (30 strings) or 1..10: the excluded ones never come out,
    every other position does (checked against the unfiltered stream by string comparison)."""
    space = [" ".join(bits) for n in range(1, 5) for bits in itertools.product("01", repeat=n)]
    banned = {space[i] for i in picks}
    exclusion = Exclusion.from_records([{"input": x} for x in banned])
    params = PARITY.level(level).replace(max_length=4) if level == 1 else PARITY.level(level)
    plain = RecordStream.fixed("parity_check", params, seed, block_size=50)
    filtered = RecordStream.fixed("parity_check", params, seed, exclusion)
    filtered = RecordStream(filtered.task, filtered.levels, seed, exclusion, block_size=50)
    # a run of block_size (50) excluded positions stops the stream with an error by contract
    banned_flags = [r["input"] in banned for _, _, r in itertools.takewhile(lambda t: t[0] < 450, plain.iterate())]
    longest = max((len(list(run)) for flag, run in itertools.groupby(banned_flags) if flag), default=0)
    if longest >= 50:
        with pytest.raises(ValueError, match="positions in a row are excluded"):
            list(itertools.takewhile(lambda t: t[0] < 400, filtered.iterate()))
        return
    kept = list(itertools.takewhile(lambda t: t[0] < 400, filtered.iterate()))
    assert not any(r["input"] in banned for _, _, r in kept)
    expected = [(p, r) for p, _, r in itertools.takewhile(lambda t: t[0] < 400, plain.iterate()) if r["input"] not in banned]
    assert [(p, r) for p, _, r in kept] == expected
    assert take(filtered.records(), len(kept)) == [r for _, _, r in kept]  # the block-wise fast path agrees
    assert len(exclusion) == len(banned) and exclusion.nbytes == 8 * len(banned)
    # resuming inside the filtered stream gives its tail
    if len(kept) > 10:
        assert take(filtered.iterate(start=kept[10][0]), 3) == kept[10:13]


def test_input_hashes_are_sha256_prefixes() -> None:
    text = "1 0 1"
    expected = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    assert int(input_hashes([text])[0]) == expected == int(input_hashes([text.encode()])[0])
    exclusion = Exclusion.from_inputs(["1 0 1", "0"])
    assert exclusion.excludes("1 0 1") and exclusion.excludes(b"0") and not exclusion.excludes("1")
    assert Exclusion.from_inputs([]).keep(["1"]).tolist() == [True]


def test_exclusion_from_a_release_and_a_split(tmp_path: Path) -> None:
    folder = tmp_path / "rel" / "data" / "cfg"
    folder.mkdir(parents=True)
    parts = {"train": ["1 1"], "validation": ["0 1", "1 0"], "test": ["1 1 1"]}
    for part, inputs in parts.items():
        (folder / f"{part}.jsonl").write_text("".join(json.dumps({"input": x, "target": "0"}) + "\n" for x in inputs))
    exclusion = Exclusion.from_release(tmp_path / "rel", "cfg")
    assert [exclusion.excludes(x) for x in ("0 1", "1 0", "1 1 1", "1 1")] == [True, True, True, False]
    split = {part: [{"input": x} for x in inputs] for part, inputs in parts.items()}
    assert np.array_equal(Exclusion.from_split(split).hashes, exclusion.hashes)
    (folder / "test.jsonl").write_text("not json\n")
    with pytest.raises(ValueError, match="line 1: not valid JSON"):
        Exclusion.from_release(tmp_path / "rel", "cfg")
    with pytest.raises(ValueError, match="cannot read"):
        Exclusion.from_release(tmp_path / "rel", "other")


# -- levels and seeding -------------------------------------------------------------------


def test_each_position_has_the_record_of_its_level() -> None:
    stream = RecordStream.of_task("parity_check", 9, block_size=40)
    chooser = _curriculum_chooser(stream)
    for p, level, record in take(stream.iterate(start=35, chooser=chooser), 30):
        alone = RecordStream.fixed("parity_check", PARITY.level(level), 9, block_size=40)
        assert alone.record(p) == record
        lo, hi = PARITY.level(level).min_length, PARITY.level(level).max_length
        assert lo <= record["difficulty"]["input_length"] <= hi


def test_curriculum_uniforms_come_from_the_named_stream() -> None:
    digest = hashlib.sha256(b"curriculum").digest()
    key = tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(7, spawn_key=(*key, 3))))
    assert curriculum_rng(7, 3).bit_generator.random_raw(2).tolist() == rng.bit_generator.random_raw(2).tolist()
    uniforms = Uniforms(7, block_size=10)
    assert uniforms(34) == float(curriculum_rng(7, 3).random(10)[4])


def test_size_levels_follow_the_size_knob() -> None:
    levels = size_levels("reverse_string", [(1, 5), (6, 10)])
    stream = RecordStream("reverse_string", levels, 0, block_size=30)
    lengths = {level: {r["difficulty"]["input_length"] for r in take(RecordStream("reverse_string", {level: p}, 0).records(), 200)} for level, p in levels.items()}
    assert max(lengths[1]) <= 5 < 6 <= min(lengths[2])
    assert stream.single is None
    position, level, record = next(stream.iterate())  # no curriculum: a level drawn uniformly from the two
    assert position == 0 and level in (1, 2)
    assert levels[level].min_length <= record["difficulty"]["input_length"] <= levels[level].max_length


def test_a_stream_with_every_input_excluded_stops_with_an_error() -> None:
    space = [" ".join(bits) for n in range(1, 3) for bits in itertools.product("01", repeat=n)]
    params = PARITY.level(1).replace(max_length=2)
    stream = RecordStream.fixed("parity_check", params, 0, Exclusion.from_inputs(space, "cfg"), block_size=20)
    with pytest.raises(ValueError, match="20 positions in a row are excluded .by cfg"):
        next(stream.iterate())
    with pytest.raises(ValueError, match="20 positions in a row are excluded .by cfg"):
        next(stream.records(start=7))
    # with one input of six allowed, a run of 20 excluded positions comes (within or across
    # blocks); both paths yield the same records up to it and then stop with the error
    keep_one = Exclusion.from_inputs(space[1:])
    outcomes = []
    for path in ("iterate", "records"):
        one = RecordStream.fixed("parity_check", params, 0, keep_one, block_size=20)
        got = []
        with pytest.raises(ValueError, match="in a row"):
            for item in one.iterate() if path == "iterate" else one.records():
                got.append(item[2] if path == "iterate" else item)
        outcomes.append(got)
    assert outcomes[0] == outcomes[1] and all(r["input"] == space[0] for r in outcomes[0])


def test_a_stream_is_the_same_in_another_process() -> None:
    """Same seed, same settings: the same bytes in a fresh interpreter with another hash seed."""
    import os
    import subprocess
    import sys

    code = (
        "import hashlib, itertools, json\n"
        "from gengap.generators import RecordStream, Exclusion, parse_curriculum\n"
        "s = RecordStream.of_task('addition', 3, Exclusion.from_inputs(['1 + 2', '3 + 4']), block_size=64)\n"
        "c = parse_curriculum('linear:start=1,end=5,steps=40')\n"
        "rows = itertools.islice(s.iterate(start=1000, chooser=s.chooser(c.choose, 4)), 300)\n"
        "print(hashlib.sha256(json.dumps(list(rows)).encode()).hexdigest())\n"
    )
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(root)}
    theirs = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.strip()
    namespace: dict = {}
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        exec(code, namespace)
    assert buffer.getvalue().strip() == theirs


def test_a_stream_of_the_tasks_levels_yields_records_without_a_chooser() -> None:
    """RecordStream.of_task(...).records() (ten levels, no curriculum) draws each position's level
    uniformly from the levels: the same records as the uniform curriculum, every level in use."""
    stream = RecordStream.of_task("parity_check", seed=3)
    first = list(itertools.islice(stream.records(), 2000))
    again = list(itertools.islice(RecordStream.of_task("parity_check", seed=3).records(), 2000))
    assert first == again and len(first) == 2000
    by_curriculum = list(itertools.islice(stream.records(curriculum=stream.uniform_curriculum()), 2000))
    assert by_curriculum == first
    levels = [level for _, level, _ in itertools.islice(stream.iterate(), 2000)]
    counts = {level: levels.count(level) for level in range(1, 11)}
    assert all(120 < count < 280 for count in counts.values()), counts  # 200 expected each
    for (_, level, record) in itertools.islice(stream.iterate(), 50):
        params = stream.levels[level]
        assert params.min_length <= record["difficulty"]["input_length"] <= params.max_length


def test_a_curriculum_attaches_to_a_stream_as_a_spec_or_an_object() -> None:
    stream = RecordStream.of_task("parity_check", seed=0)
    curriculum = parse_curriculum("step:start=1,end=4,every=500")
    by_spec = list(itertools.islice(stream.iterate(curriculum="step:start=1,end=4,every=500", records_per_step=64), 0, 64 * 2000, 640))
    by_object = list(itertools.islice(stream.iterate(curriculum=curriculum, records_per_step=64), 0, 64 * 2000, 640))
    by_chooser = list(itertools.islice(stream.iterate(chooser=stream.chooser(curriculum.choose, records_per_step=64)), 0, 64 * 2000, 640))
    assert by_spec == by_object == by_chooser
    assert [level for _, level, _ in by_spec] == [min(1 + (p // 64) // 500, 4) for p, _, _ in by_spec]
    with pytest.raises(ValueError, match="not both"):
        stream.records(chooser=stream.chooser(curriculum.choose), curriculum=curriculum)
    with pytest.raises(CurriculumError, match="level"):
        RecordStream.fixed("parity_check", get_task("parity_check").level(2), 0).records(curriculum="step:start=1,end=4,every=5")
    one = RecordStream.fixed("parity_check", get_task("parity_check").level(2), 0)
    assert next(one.records()) == next(one.records(start=0))  # a one-level stream keeps its level, as before
