"""The facts world, its four tasks and the facts split (direction and bridge)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gengap.generators import BlockPlan, batch_to_jsonl, get_task
from gengap.generators.worlds import WorldParams, build_world, world_of
from gengap.cli import main, suite_split
from gengap.splits import SplitError, split
from gengap.splits.facts import entities_of, query_kind, reversed_fact

TASKS = ("fact_lookup", "fact_reverse", "fact_two_hop", "fact_compare")
KNOBS = {"n_entities": 12, "n_relations": 3, "n_attributes": 2, "n_values": 5, "world_seed": 4}


def pool(task: str, **values: object) -> list[dict]:
    spec = get_task(task)
    return list(spec.enumerate(spec.make_params(values)).records(task))


# -- the world ----------------------------------------------------------------------------


@given(n=st.integers(2, 60), relations=st.integers(1, 5), seed=st.integers(0, 2**31 - 1))
def test_world_relations_are_one_to_one_and_deterministic(n: int, relations: int, seed: int) -> None:
    world = build_world(n, relations, 2, 7, seed)
    again = build_world(n, relations, 2, 7, seed)
    assert np.array_equal(world.tails, again.tails) and np.array_equal(world.values, again.values)
    for r in range(relations):
        assert sorted(world.tails[r].tolist()) == list(range(n))
        assert all(world.head(world.tail(h, r), r) == h for h in range(n))
    assert world.values.min() >= 0 and world.values.max() < 7


def test_world_seed_and_sizes_change_the_world() -> None:
    base = build_world(50, 3, 2, 10, 0)
    assert not np.array_equal(base.tails, build_world(50, 3, 2, 10, 1).tails)
    assert not np.array_equal(base.values, build_world(50, 3, 2, 11, 0).values)


def test_world_of_meta_refuses_missing_or_bad_knobs() -> None:
    assert np.array_equal(world_of(KNOBS).tails, WorldParams(**KNOBS).world().tails)
    with pytest.raises(ValueError, match="meta.world_seed is missing"):
        world_of({k: v for k, v in KNOBS.items() if k != "world_seed"})
    with pytest.raises(ValueError, match="n_entities"):
        world_of({**KNOBS, "n_entities": 0})


# -- the tasks ----------------------------------------------------------------------------


@pytest.mark.parametrize("task", TASKS)
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40), size=st.integers(2, 30), share=st.floats(0, 1))
def test_every_record_checks_and_wrong_entities_fail(task: str, seed: int, n: int, size: int, share: float) -> None:
    spec = get_task(task)
    values = {"n_entities": size} if task == "fact_lookup" else {"n_entities": size, "atomic_share": share}
    params = spec.make_params(values)
    world = params.world()
    for record in spec.generate(np.random.default_rng(seed), n, params).records(task):
        assert spec.check(record, record["target"]), record
        assert spec.derive(record) == record["structure"]
        assert spec.measure(record) == {k: record["difficulty"][k] for k in ("hops", "entities", "atomic")}
        answer = record["target"]
        kind = answer[0]
        size_of = {"e": world.n_entities, "v": params.n_values}.get(kind)
        wrong = [f"{kind}{(int(answer[1:]) + 1) % size_of}"] if size_of else [c for c in "<=>" if c != answer]
        for bad in wrong + ["", f"{answer} {answer}"]:
            assert not spec.check(record, bad), (record, bad)


@pytest.mark.parametrize("task", TASKS)
def test_enumeration_is_complete_and_checked(task: str) -> None:
    spec = get_task(task)
    params = spec.make_params({"n_entities": 6, "n_relations": 2, "n_attributes": 2})
    records = pool(task, n_entities=6, n_relations=2, n_attributes=2)
    assert len(records) == spec.enumeration_size(params) == len({r["input"] for r in records})
    assert all(spec.check(r, r["target"]) for r in records)


def test_checker_rebuilds_the_world_from_meta() -> None:
    spec = get_task("fact_two_hop")
    records = pool("fact_two_hop", **KNOBS)
    moved = [{**r, "meta": {**r["meta"], "world_seed": 5}} for r in records]
    assert sum(spec.check(r, r["target"]) for r in moved) < len(records) // 2
    assert not spec.check({**records[0], "meta": {}}, records[0]["target"])
    assert not spec.check({**records[0], "input": "e99 r0"}, records[0]["target"])


def test_answers_follow_the_world() -> None:
    world = WorldParams(**KNOBS).world()
    reverse = get_task("fact_reverse")
    for record in pool("fact_reverse", **KNOBS):
        head, r, tail = (int(t[1:]) for t in reversed_fact(record).split())
        assert world.tail(head, r) == tail
        assert record["target"] == (f"e{head}" if query_kind(record) == "reverse" else f"e{tail}")
        assert reverse.solve(record) == record["target"]
    compare = get_task("fact_compare")
    for record in pool("fact_compare", **KNOBS):
        if query_kind(record) == "compare":
            a, b, k = (int(t[1:]) for t in record["input"].split())
            expected = "<" if world.value(a, k) < world.value(b, k) else ">" if world.value(a, k) > world.value(b, k) else "="
            assert record["target"] == expected == compare.solve(record)


@pytest.mark.parametrize("task", TASKS)
def test_same_seed_same_bytes(task: str) -> None:
    params = get_task(task).level(2)

    def render(seed: int) -> bytes:
        return b"".join(batch_to_jsonl(b, task) for b in BlockPlan(task, params, 200, seed).batches())

    assert render(3) == render(3) and render(3) != render(4)


def test_tasks_of_one_world_setting_share_facts() -> None:
    lookup = {r["input"]: r["target"] for r in pool("fact_lookup", **KNOBS)}
    for record in pool("fact_two_hop", **KNOBS):
        for child in record["structure"][1:] if query_kind(record) == "compose" else [record["structure"]]:
            head, relation, tail = child[1].split()
            assert lookup[f"{head} {relation}"] == tail


# -- the facts split ------------------------------------------------------------------------


def _train_inferences(result) -> list[dict]:
    return [r for r in result.train if query_kind(r) not in ("lookup", "attribute")]


@settings(max_examples=15, deadline=None)
@given(size=st.integers(4, 25), relations=st.integers(1, 3), fraction=st.floats(0.1, 0.6), seed=st.integers(0, 2**31))
def test_direction_split_holds_reversals_out(size: int, relations: int, fraction: float, seed: int) -> None:
    records = pool("fact_reverse", n_entities=size, n_relations=relations)
    result = split(records, "facts", {"by": "direction", "holdout_fraction": fraction}, seed=seed)
    atomic = [r for r in records if query_kind(r) == "lookup"]
    assert {r["id"] for r in atomic} <= {r["id"] for r in result.train}
    assert all(query_kind(r) == "reverse" for r in result.validation + result.test)
    trained_reversals = {reversed_fact(r) for r in _train_inferences(result)}
    forward = {reversed_fact(r) for r in result.train if query_kind(r) == "lookup"}
    for record in result.test:
        assert reversed_fact(record) not in trained_reversals
        assert reversed_fact(record) in forward
    assert {reversed_fact(r) for r in result.validation}.isdisjoint({reversed_fact(r) for r in result.test})
    report = result.report
    assert report["facts_split"] == "direction" and report["held_out_facts"] == len(result.test)
    assert report["facts_counts"]["atomic"] == {"train": len(atomic), "validation": 0, "test": 0}


@settings(max_examples=10, deadline=None)
@given(size=st.integers(6, 25), relations=st.integers(2, 3), hops=st.integers(2, 3), seed=st.integers(0, 2**31))
def test_bridge_split_keeps_held_out_bridges_out_of_training_inferences(size: int, relations: int, hops: int, seed: int) -> None:
    records = pool("fact_two_hop", n_entities=size, n_relations=relations, hops=hops)
    result = split(records, "facts", {"by": "bridge", "validation_fraction": 0.2}, seed=seed)
    atomic = [r for r in records if query_kind(r) == "lookup"]
    assert {r["id"] for r in atomic} <= {r["id"] for r in result.train}
    training = _train_inferences(result)
    mentioned = {e for r in training for head, middle, tail in [entities_of(r)] for e in (head, *middle, tail)}
    trained_bridges = {b for r in training for b in entities_of(r)[1]}
    held = set(result.report["held_out_listed"])
    for record in result.test:
        middle = set(entities_of(record)[1])
        assert middle & held and not middle & held & mentioned
    for record in result.validation:
        assert set(entities_of(record)[1]) <= trained_bridges  # ID: every bridge seen composed in train
        assert not set(entities_of(record)[1]) & held


def test_facts_split_is_deterministic_and_validates_its_pool() -> None:
    records = pool("fact_two_hop", **KNOBS)
    one = split(records, "facts", {"by": "bridge"}, seed=2)
    assert json.dumps(one.parts()) == json.dumps(split(records, "facts", {"by": "bridge"}, seed=2).parts())
    with pytest.raises(SplitError, match="option by is required"):
        split(records, "facts", {}, seed=0)
    with pytest.raises(SplitError, match="facts: option by='sideways' is not direction or bridge"):
        split(records, "facts", {"by": "sideways"}, seed=0)
    with pytest.raises(SplitError, match="needs reverse queries"):
        split(records, "facts", {"by": "direction"}, seed=0)
    other = pool("fact_lookup", **{**KNOBS, "world_seed": 9})
    with pytest.raises(SplitError, match="mixes 2 facts worlds"):
        split(records + other, "facts", {"by": "bridge"}, seed=0)
    parity = list(BlockPlan("parity_check", get_task("parity_check").default_params(), 20, 0).generate_block(0).records("parity_check"))
    with pytest.raises(SplitError, match="not a facts-world record"):
        split(parity, "facts", {"by": "bridge"}, seed=0)


def test_mixed_pool_sets_other_queries_aside() -> None:
    records = pool("fact_reverse", **KNOBS) + pool("fact_two_hop", **KNOBS)
    result = split(records, "facts", {"by": "direction"}, seed=1)
    assert result.report["facts_counts"]["inferred"]["unused"] == sum(query_kind(r) == "compose" for r in records)
    assert all(query_kind(r) == "reverse" for r in result.test)


SUITE = """\
name: facts
version: 0.0.1
seed: 5
license: mit
created: "2026-12-02"
entries:
  - {task: fact_two_hop, split: bridge, strategy: facts, params: {n_entities: 20, n_relations: 3}, pool: all, options: {by: bridge}}
  - {task: fact_reverse, split: reversal, strategy: facts, params: {n_entities: 20, n_relations: 2, atomic_share: 0.5}, pool: {n: 200}, options: {by: direction}}
"""


def test_suite_entries_and_the_split_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "facts.yaml"
    path.write_text(SUITE)
    bridge = suite_split(str(path), "fact_two_hop-bridge")
    assert bridge.report["facts_split"] == "bridge" and bridge.test
    reversal = suite_split(str(path), "fact_reverse-reversal")
    assert reversal.report["facts_split"] == "direction" and reversal.test
    pool_file = tmp_path / "pool.jsonl"
    assert main(["generate", "fact_reverse", "--all", "--param", "n_entities=15", "--out", str(pool_file)]) == 0
    assert main(["split", str(pool_file), "--strategy", "facts", "--option", "by=direction", "--out", str(tmp_path / "split")]) == 0
    report = json.loads((tmp_path / "split" / "report.json").read_text())
    assert report["facts_split"] == "direction" and report["overlap"] == 0
    capsys.readouterr()
    assert main(["split", str(pool_file), "--strategy", "facts", "--option", "by=bridge", "--out", str(tmp_path / "bad")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "compose queries" in err and not (tmp_path / "bad").exists()
