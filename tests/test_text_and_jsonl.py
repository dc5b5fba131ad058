"""Vectorized text joining, JSONL serialization and seeding."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given, strategies as st

from gengap.generators import Batch, BlockPlan, batch_to_jsonl, block_rng, dumps_record, get_task
from gengap.generators.text import join_chars, join_tokens, token_counts

tokens = st.lists(st.sampled_from(["a", "bb", "I_JUMP", "é", "x\"y", "back\\slash", "12"]), min_size=1, max_size=8)


@given(rows=st.lists(tokens, min_size=1, max_size=20))
def test_join_tokens_matches_python_join(rows: list[list[str]]) -> None:
    vocab = sorted({t for row in rows for t in row})
    width = max(len(r) for r in rows)
    ids = np.zeros((len(rows), width), dtype=np.int64)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = [vocab.index(t) for t in row]
    joined = join_tokens(ids, np.array([len(r) for r in rows]), vocab)
    assert [b.decode() for b in joined.tolist()] == [" ".join(r) for r in rows]
    assert token_counts(joined).tolist() == [len(r) for r in rows]


@given(rows=st.lists(st.lists(st.sampled_from("01+x"), min_size=1, max_size=9), min_size=1, max_size=20))
def test_join_chars_matches_python_join(rows: list[list[str]]) -> None:
    width = max(len(r) for r in rows)
    codes = np.zeros((len(rows), width), dtype=np.uint8)
    for i, row in enumerate(rows):
        codes[i, : len(row)] = [ord(c) for c in row]
    joined = join_chars(codes, np.array([len(r) for r in rows]))
    assert [b.decode() for b in joined.tolist()] == [" ".join(r) for r in rows]


@given(
    rows=st.lists(tokens, min_size=1, max_size=10),
    feature=st.lists(st.integers(-(10**12), 10**12), min_size=10, max_size=10),
    with_structure=st.booleans(),
)
def test_jsonl_equals_json_dumps_of_records(rows: list[list[str]], feature: list[int], with_structure: bool) -> None:
    """Both ways of writing (columns; records, for batches with derivations)."""
    n = len(rows)
    batch = Batch.from_lists(
        [" ".join(r) for r in rows],
        [" ".join(reversed(r)) for r in rows],
        {"weird": feature[:n]},
        structure=[["R -> x", r[0]] for r in rows] if with_structure else None,
        meta={"format": "plain"},
    )
    lines = batch_to_jsonl(batch, "some_task").decode().splitlines()
    records = list(batch.records("some_task"))
    assert lines == [dumps_record(r) for r in records]
    assert [json.loads(l) for l in lines] == records


def test_blocks_are_independent_of_how_they_are_run() -> None:
    task = get_task("parity_check")
    plan = BlockPlan("parity_check", task.default_params(), 25, 9, block_size=10)
    whole = [batch_to_jsonl(b, plan.task) for b in plan.batches()]
    assert [plan.block_length(b) for b in range(plan.num_blocks)] == [10, 10, 5]
    assert batch_to_jsonl(plan.generate_block(2), plan.task) == whole[2]
    assert batch_to_jsonl(plan.generate_block(0), plan.task) == whole[0]


def test_block_streams_depend_on_seed_task_params_and_block() -> None:
    params = get_task("parity_check").default_params()
    draw = lambda *a: block_rng(*a).integers(0, 2**63, 4).tolist()  # noqa: E731
    base = draw(1, "parity_check", params, 0)
    assert draw(1, "parity_check", params, 0) == base
    assert draw(2, "parity_check", params, 0) != base
    assert draw(1, "reverse_string", params, 0) != base
    assert draw(1, "parity_check", params.replace(max_length=41), 0) != base
    assert draw(1, "parity_check", params, 1) != base
    # seed s, block 1 is not seed s+1, block 0 (no seed + index shortcuts)
    assert draw(1, "parity_check", params, 1) != draw(2, "parity_check", params, 0)
