"""Structured tasks: listops, prefix_sums, shortest_path, graph_connectivity."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest
from hypothesis import given, strategies as st

from gengap.generators import ParamError, get_task
from gengap.generators import structured
from gengap.generators.tasks.structured import (
    ConnectivityParams,
    GraphParams,
    ListOpsParams,
    apply_listops,
    edges_for_tokens,
    expression_sizes,
    fewest_nodes,
    parse_graph_query,
)
from gengap.generators.text import join_tokens

LISTOPS = get_task("listops")
PREFIX = get_task("prefix_sums")
PATH = get_task("shortest_path")
CONNECTED = get_task("graph_connectivity")


def rec(text: str) -> dict:
    return {"input": text}


def records(task, params, n: int = 200, seed: int = 0) -> list[dict]:
    return list(task.generate(np.random.default_rng(seed), n, params).records(task.name))


# -- prefix_sums ------------------------------------------------------------------------


def test_prefix_sums_hand_examples() -> None:
    assert PREFIX.solve(rec("0 1 1 0 1")) == "0 1 0 0 1"
    assert PREFIX.solve(rec("1")) == "1"
    assert PREFIX.solve(rec("0 0 0")) == "0 0 0"
    assert PREFIX.solve(rec("1 1 1 1")) == "1 0 1 0"
    assert PREFIX.check(rec("0 1 1 0 1"), "0 1 0 0 1")
    assert not PREFIX.check(rec("0 1 1 0 1"), "0 1 0 1 1")
    assert not PREFIX.check(rec("0 1 1 0 1"), "0 1 0 0")


@pytest.mark.parametrize("text", ["", "0 2 1", "01 1", "a"])
def test_prefix_sums_rejects_malformed_input(text: str) -> None:
    with pytest.raises(ValueError):
        PREFIX.solve(rec(text))
    assert not PREFIX.check(rec(text), "0")


@pytest.mark.parametrize("lo, hi", [(1, 1), (1, 40), (300, 300), (255, 260)])
def test_prefix_sums_generated_examples(lo: int, hi: int) -> None:
    params = PREFIX.with_size(lo, hi)
    for record in records(PREFIX, params, 50):
        bits = [int(b) for b in record["input"].split()]
        assert lo <= len(bits) <= hi
        assert record["target"] == " ".join(str(sum(bits[: i + 1]) % 2) for i in range(len(bits)))
        assert record["difficulty"]["ones"] == sum(bits)
        assert record["difficulty"]["output_length"] == len(bits)


def test_prefix_sums_space_size() -> None:
    assert PREFIX.input_space_size(PREFIX.with_size(1, 3)) == 2 + 4 + 8


# -- listops ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, value",
    [
        ("[MAX 2 9 [MIN 4 7 ] 0 ]", "9"),
        ("[MIN 3 5 ]", "3"),
        ("[SM 9 8 7 ]", "4"),  # 24 mod 10
        ("[MED 3 1 2 ]", "2"),
        ("[MED 1 4 ]", "2"),  # even count: mean of the middle two, rounded down
        ("[MED 1 2 3 9 ]", "2"),  # (2 + 3) // 2
        ("[MED 9 8 ]", "8"),
        ("[MIN [MAX 1 2 ] [SM 5 5 ] ]", "0"),  # min(2, 0)
        ("[SM [MED 0 9 ] [MAX [MIN 7 8 ] 3 ] 1 ]", "2"),  # 4 + 7 + 1 = 12
        ("[MAX [MAX [MAX [MAX 1 2 ] 3 ] 4 ] 5 ]", "5"),
    ],
)
def test_listops_hand_examples(text: str, value: str) -> None:
    assert LISTOPS.solve(rec(text)) == value
    assert LISTOPS.check(rec(text), value)
    assert not LISTOPS.check(rec(text), str((int(value) + 1) % 10))


@pytest.mark.parametrize(
    "text",
    ["", "7", "[MAX ]", "[MAX 1 2", "[MAX 1 2 ] ]", "[MAX 1 2 ] 3", "1 [MAX 1 2 ]", "[FOO 1 2 ]", "[MAX 10 2 ]", "( 1 )"],
)
def test_listops_rejects_malformed_input(text: str) -> None:
    with pytest.raises(ValueError):
        LISTOPS.solve(rec(text))
    assert not LISTOPS.check(rec(text), "1")


@given(st.lists(st.integers(0, 9), min_size=1, max_size=10))
def test_listops_median_matches_lra(values: list[int]) -> None:
    assert apply_listops("[MED", values) == int(np.median(values))
    assert apply_listops("[SM", values) == sum(values) % 10


def test_listops_expression_sizes() -> None:
    assert expression_sizes(1, 5, 100) == ((4, 7, 1),)
    assert expression_sizes(2, 2, 100) == ((4, 10, 3),)  # 4, 7, 10: 3 * operators + 1
    assert expression_sizes(20, 2, 10_000) == ((4, 10_000, 3),)
    assert expression_sizes(3, 3, 100) == ((4, 5, 1), (7, 53, 1))  # 6 tokens is impossible
    assert expression_sizes(10, 5, 500) == ((4, 500, 1),)
    assert ListOpsParams(min_length=5, max_length=40, max_depth=3, max_args=2).lengths() == [(7, 22, 3)]


def _parse_listops(text: str) -> tuple[int, int, list[int]]:
    """Depth, operator count and argument counts of an expression."""
    stack: list[int] = []
    depth, operators, arities = 0, 0, []
    for token in text.split():
        if token.startswith("["):
            stack.append(0)
            operators += 1
            depth = max(depth, len(stack))
        elif token == "]":
            arities.append(stack.pop())
            if stack:
                stack[-1] += 1
        else:
            stack[-1] += 1
    return depth, operators, arities


@pytest.mark.parametrize(
    "params",
    [
        ListOpsParams(min_length=4, max_length=5, max_depth=1, max_args=3),
        ListOpsParams(min_length=4, max_length=40, max_depth=3, max_args=2),
        ListOpsParams(min_length=11, max_length=11, max_depth=2, max_args=3),
        ListOpsParams(min_length=60, max_length=80, max_depth=6, max_args=5),
        ListOpsParams(min_length=300, max_length=300, max_depth=10, max_args=10),
        ListOpsParams(min_length=100, max_length=120, max_depth=3, max_args=4),
        ListOpsParams(min_length=2000, max_length=2100, max_depth=20, max_args=2),
    ],
)
def test_listops_generated_examples_honour_the_parameters(params: ListOpsParams) -> None:
    allowed = {n for lo, hi, step in params.lengths() for n in range(lo, hi + 1, step)}
    for record in records(LISTOPS, params, 100):
        depth, operators, arities = _parse_listops(record["input"])
        assert record["difficulty"]["input_length"] in allowed
        assert depth <= params.max_depth and all(2 <= a <= params.max_args for a in arities)
        assert record["difficulty"]["depth"] == depth
        assert record["difficulty"]["operators"] == operators
        assert LISTOPS.solve(record) == record["target"]


def test_listops_exact_lengths_and_varied_answers() -> None:
    batch = records(LISTOPS, LISTOPS.with_size(500, 500), 300)
    assert {r["difficulty"]["input_length"] for r in batch} == {500}
    counts = np.bincount([int(r["target"]) for r in batch], minlength=10)
    assert (counts > 10).all(), counts


def test_listops_levels_deepen() -> None:
    depths = [LISTOPS.level(k).max_depth for k in range(1, 11)]
    assert depths == sorted(depths) and depths[0] == 1
    mean_depth = [np.mean([r["difficulty"]["depth"] for r in records(LISTOPS, LISTOPS.level(k), 100)]) for k in (1, 5, 10)]
    assert mean_depth[0] < mean_depth[1] < mean_depth[2]


def test_listops_params_validation() -> None:
    with pytest.raises(ParamError):
        ListOpsParams(min_length=3, max_length=10)
    with pytest.raises(ParamError):
        ListOpsParams(min_length=20, max_length=10)
    with pytest.raises(ParamError, match="no listops expression"):
        ListOpsParams(min_length=5, max_length=6, max_depth=1, max_args=2)
    with pytest.raises(ParamError, match="no listops expression"):
        ListOpsParams(min_length=6, max_length=6, max_depth=3, max_args=3)
    with pytest.raises(ParamError):
        ListOpsParams(max_args=1)
    assert LISTOPS.with_size(1, 2) == ListOpsParams(min_length=4, max_length=4)


@given(
    depth=st.integers(1, 6),
    args=st.integers(2, 6),
    lo=st.integers(4, 60),
    span=st.integers(0, 20),
    seed=st.integers(0, 2**32 - 1),
)
def test_listops_any_consistent_parameters_generate(depth: int, args: int, lo: int, span: int, seed: int) -> None:
    try:
        params = ListOpsParams(min_length=lo, max_length=lo + span, max_depth=depth, max_args=args)
    except ParamError:
        return
    batch = LISTOPS.generate(np.random.default_rng(seed), 20, params)
    for record in batch.records("listops"):
        assert lo <= record["difficulty"]["input_length"] <= lo + span
        assert LISTOPS.solve(record) == record["target"]


# -- graphs: parsing, sizes ---------------------------------------------------------------


def test_graph_query_parsing() -> None:
    adjacency, s, t = parse_graph_query("0 1 , 1 3 , 2 3 ? 0 3")
    assert adjacency == {0: {1}, 1: {0, 3}, 3: {1, 2}, 2: {3}}
    assert (s, t) == (0, 3)


@pytest.mark.parametrize(
    "text",
    [
        "0 1 , 1 2",  # no query
        "0 1 ? 0",  # one query node
        "0 1 ? 0 1 2",
        "0 1 2 ? 0 1",  # an edge of three nodes
        "0 1 , ? 0 1",  # trailing separator
        "0 1 1 2 ? 0 1",  # missing separator
        "0 01 ? 0 1",  # leading zero
        "0 -1 ? 0 1",
        "0 1 ? 0 1 ? 0 1",
        "? 0 1",  # no edges
    ],
)
def test_graph_tasks_reject_malformed_input(text: str) -> None:
    with pytest.raises(ValueError):
        parse_graph_query(text)
    for task in (PATH, CONNECTED):
        with pytest.raises(ValueError):
            task.solve(rec(text))
        assert not task.check(rec(text), "0 1")
        assert not task.check(rec(text), "yes")


def test_graph_sizes() -> None:
    assert [fewest_nodes(e) for e in (1, 2, 3, 4, 6, 7, 10, 11)] == [2, 3, 3, 4, 4, 5, 5, 6]
    assert edges_for_tokens(500, 500) == (166, 166)
    assert edges_for_tokens(1, 5) == (1, 1)
    assert edges_for_tokens(41, 60) == (13, 19)
    assert GraphParams(edges_per_node=1.0).node_count(166) == 166
    assert GraphParams(edges_per_node=8.0).node_count(10) == 5  # at least the fewest that hold 10
    assert GraphParams(edges_per_node=0.75).node_count(3) == 4
    assert PATH.with_size(500, 500) == GraphParams(min_edges=166, max_edges=166)
    assert CONNECTED.with_size(1, 3) == ConnectivityParams(min_edges=1, max_edges=1)


def test_graph_params_validation() -> None:
    with pytest.raises(ParamError):
        GraphParams(min_edges=5, max_edges=4)
    with pytest.raises(ParamError):
        GraphParams(min_edges=0)
    with pytest.raises(ParamError):
        GraphParams(edges_per_node=0.1)
    with pytest.raises(ParamError):
        ConnectivityParams(max_edges=10**6)


# -- shortest_path --------------------------------------------------------------------------


def test_shortest_path_hand_example() -> None:
    example = rec("0 1 , 1 3 , 2 3 ? 0 3")
    assert PATH.solve(example) == "0 1 3"
    assert PATH.check(example, "0 1 3")
    assert not PATH.check(example, "0 3")  # no edge 0-3
    assert not PATH.check(example, "0 1 3 2 3")
    assert not PATH.check(example, "3 1 0")
    assert PATH.solve(rec("5 7 ? 7 5")) == "7 5"


def test_shortest_path_accepts_every_shortest_path() -> None:
    # a square 0-1-3-2-0 plus a detour 0-4-5-3: two shortest paths from 0 to 3
    example = rec("2 3 , 0 4 , 1 3 , 4 5 , 0 2 , 5 3 , 1 0 ? 0 3")
    assert PATH.solve(example) == "0 1 3"  # the lexicographically smallest
    assert PATH.check(example, "0 1 3")
    assert PATH.check(example, "0 2 3")
    assert not PATH.check(example, "0 4 5 3")  # a path, but not a shortest one
    assert not PATH.check(example, "0 1 2 3")
    assert not PATH.check(example, "0 3")
    assert not PATH.check(example, "NONE")
    assert not PATH.check(example, "0 01 3")
    # several equal paths with a later branching: 0 -> {1, 2} -> {3, 4} -> 5
    example = rec("0 2 , 0 1 , 2 3 , 1 4 , 3 5 , 4 5 , 2 4 ? 0 5")
    assert PATH.solve(example) == "0 1 4 5"
    for path in ("0 1 4 5", "0 2 3 5", "0 2 4 5"):
        assert PATH.check(example, path)
    assert not PATH.check(example, "0 1 3 5")


def test_shortest_path_unreachable_is_none() -> None:
    example = rec("0 1 , 2 3 ? 0 3")
    assert PATH.solve(example) == "NONE"
    assert PATH.check(example, "NONE")
    assert not PATH.check(example, "0 3")
    assert PATH.solve(rec("0 1 ? 4 9")) == "NONE"


def _bfs(adjacency: dict[int, set[int]], source: int) -> dict[int, int]:
    dist = {source: 0}
    queue = deque([source])
    while queue:
        node = queue.popleft()
        for other in sorted(adjacency.get(node, ())):
            if other not in dist:
                dist[other] = dist[node] + 1
                queue.append(other)
    return dist


def _edges(text: str) -> list[tuple[int, int]]:
    body = text.split(" ? ")[0].split(" , ")
    return [tuple(int(x) for x in edge.split()) for edge in body]  # type: ignore[misc]


@pytest.mark.parametrize(
    "params",
    [
        GraphParams(min_edges=1, max_edges=1),
        GraphParams(min_edges=2, max_edges=12),
        GraphParams(min_edges=40, max_edges=60, edges_per_node=0.5),
        GraphParams(min_edges=150, max_edges=166),
        GraphParams(min_edges=30, max_edges=30, edges_per_node=8.0),  # dense
    ],
)
def test_shortest_path_generated_examples(params: GraphParams) -> None:
    orientations = set()
    for record in records(PATH, params, 100):
        edges = _edges(record["input"])
        adjacency, s, t = parse_graph_query(record["input"])
        pairs = {frozenset(e) for e in edges}
        assert params.min_edges <= len(edges) <= params.max_edges
        assert len(pairs) == len(edges) and all(a != b for a, b in edges)  # a simple graph
        assert all(max(e) < params.node_count(len(edges)) for e in edges)
        assert record["difficulty"]["input_length"] == 3 * len(edges) + 2
        assert record["difficulty"]["edges"] == len(edges)
        assert record["difficulty"]["nodes"] == len(adjacency)
        assert s != t and s in adjacency and t in adjacency
        path = [int(x) for x in record["target"].split()]
        assert record["difficulty"]["hops"] == len(path) - 1 == _bfs(adjacency, s)[t]
        assert record["target"] == PATH.solve(record)
        orientations.update(a < b for a, b in edges)
    assert orientations == {True, False}


def test_shortest_path_targets_are_lexicographically_smallest() -> None:
    """Enumerate all shortest paths on small dense graphs and compare."""
    for record in records(PATH, GraphParams(min_edges=8, max_edges=14, edges_per_node=2.0), 100, seed=5):
        adjacency, s, t = parse_graph_query(record["input"])
        dist = _bfs(adjacency, s)
        paths = [[s]]
        for _ in range(dist[t]):
            paths = [p + [w] for p in paths for w in adjacency[p[-1]] if dist.get(w) == len(p)]
        best = min(p for p in paths if p[-1] == t)
        assert record["target"] == " ".join(map(str, best))


def test_graph_generation_in_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(structured, "_CELLS", 40)  # a few examples per chunk
    params = GraphParams(min_edges=5, max_edges=9)
    batch = PATH.generate(np.random.default_rng(3), 25, params)
    assert len(batch) == 25
    for record in batch.records("shortest_path"):
        assert PATH.check(record, record["target"])
    batch = CONNECTED.generate(np.random.default_rng(3), 25, ConnectivityParams(min_edges=5, max_edges=9))
    assert all(CONNECTED.check(r, r["target"]) for r in batch.records("graph_connectivity"))


def test_graph_tasks_accept_empty_batches() -> None:
    for task in (PATH, CONNECTED, LISTOPS):
        assert len(task.generate(np.random.default_rng(0), 0, task.default_params())) == 0


# -- graph_connectivity -----------------------------------------------------------------------


def test_connectivity_hand_examples() -> None:
    assert CONNECTED.solve(rec("0 1 , 2 3 ? 0 3")) == "no"
    assert CONNECTED.solve(rec("0 1 , 1 2 ? 2 0")) == "yes"
    assert CONNECTED.solve(rec("0 1 , 2 3 , 3 1 ? 0 2")) == "yes"
    assert CONNECTED.solve(rec("0 1 ? 5 5")) == "yes"
    assert CONNECTED.check(rec("0 1 , 2 3 ? 0 3"), "no")
    assert not CONNECTED.check(rec("0 1 , 2 3 ? 0 3"), "yes")
    assert not CONNECTED.check(rec("0 1 , 2 3 ? 0 3"), "no no")


def test_connectivity_generated_examples_are_balanced() -> None:
    params = ConnectivityParams(min_edges=60, max_edges=120)
    batch = records(CONNECTED, params, 400)
    answers = [r["target"] for r in batch]
    assert 0.4 < answers.count("yes") / len(answers) < 0.6
    for record in batch:
        adjacency, s, t = parse_graph_query(record["input"])
        dist = _bfs(adjacency, s)
        assert s != t and s in adjacency and t in adjacency
        assert record["target"] == ("yes" if t in dist else "no")
        assert record["difficulty"]["distance"] == dist.get(t, 0)
        assert record["difficulty"]["edges"] == len(_edges(record["input"]))


# -- token joining ----------------------------------------------------------------------------


@given(
    vocab=st.lists(st.text("abc[]0123456789", min_size=1, max_size=12), min_size=1, max_size=12),
    rows=st.integers(1, 6),
    width=st.integers(1, 9),
    seed=st.integers(0, 2**32 - 1),
)
def test_join_tokens_matches_python_join(vocab: list[str], rows: int, width: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, len(vocab), size=(rows, width))
    lengths = rng.integers(1, width + 1, size=rows)
    expected = [" ".join(vocab[k] for k in ids[i, : lengths[i]]).encode() for i in range(rows)]
    assert join_tokens(ids, lengths, vocab).tolist() == expected
