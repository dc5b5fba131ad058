"""Bounds and hangs (issue 55): metadata the checker reads is bounded and difficulty features
are the task's own (case 7); tree_atoms ends on a cyclic structure (case 16); a progress
ticker that cannot start its thread (a tight ulimit -v: "can't start new thread") lets the
work go on instead of a traceback (case 17)."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

from gengap.checking import known_features, record_problem
from gengap.generators import get_task, task_names
from gengap.generators.derivation import internal_nodes, rule_count, tree_atoms, tree_compounds
from gengap.progress import Ticker


def record(task: str) -> dict[str, Any]:
    spec = get_task(task)
    return next(iter(spec.generate(np.random.default_rng(0), 1, spec.default_params()).records(task)))


@pytest.mark.parametrize("knob, value, message", [
    ("n_people", 10**9, "meta.n_people=1000000000 is out of range"),
    ("n_films", "x", "meta.n_films must be an integer"),
    ("world_seed", None, "meta.world_seed is missing"),
])
def test_cfq_like_knowledge_base_knobs_are_bounded(knob: str, value: Any, message: str) -> None:
    cfq = record("cfq_like")
    assert record_problem(cfq) is None
    meta = {**cfq["meta"], knob: value}
    if value is None:
        del meta[knob]
    assert message in (record_problem({**cfq, "meta": meta}) or "")


@pytest.mark.parametrize("task", ["cfq_like", "parity_check", "scan", "addition"])
def test_an_unknown_difficulty_feature_is_refused(task: str) -> None:
    plain = record(task)
    forged = {**plain, "difficulty": {**plain["difficulty"], "bogus": 3}}
    assert record_problem(forged) == f"difficulty.bogus is not a difficulty feature of {task}"


def test_every_tasks_generated_features_are_known() -> None:
    for name in task_names():
        spec = get_task(name)
        for level in (1, 10):
            for item in spec.generate(np.random.default_rng(1), 3, spec.level(level)).records(name):
                assert set(item["difficulty"]) <= known_features(spec), name


def test_tree_functions_end_on_a_cyclic_structure() -> None:
    cyclic: list[Any] = ["S -> V", "jump"]
    cyclic.append(["V -> D", cyclic])
    for walk in (tree_atoms, lambda t: list(internal_nodes(t)), rule_count, tree_compounds):
        with pytest.raises(ValueError, match="contains itself"):
            walk(cyclic)


def test_a_shared_node_is_counted_once_per_parent() -> None:
    shared = ["S -> V", "jump"]
    tree = ["C -> S and S", shared, "and", shared]
    assert tree_atoms(tree) == {"C -> S and S": 1, "S -> V": 2, "jump": 2, "and": 1}
    assert rule_count(tree) == 3


def test_a_ticker_without_a_thread_lets_the_work_go_on(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refuse)
    import io

    stream = io.StringIO()
    with Ticker(lambda: "working", stream=stream, interval=0.01):
        done = sum(range(1000))
    assert done == 499500 and stream.getvalue() == ""


# -- case 14: the work of scoring one completion is bounded -----------------------------------------


def test_a_long_symmetric_cfq_prediction_is_scored_at_once() -> None:
    """99 disjoint spouse pairs (a 5 KB completion) took ~20 s in the naming search of its normal form."""
    import re
    import time

    from gengap.harnesses.rewards import compute_score

    task = get_task("cfq_like")
    target = next(r for r in task.generate(np.random.default_rng(0), 200, task.default_params()).records("cfq_like") if "spouse" in r["target"])
    relation = re.search(r"ns:\S*spouse\S*", target["target"]).group(0)
    completion = "SELECT count(*) WHERE { " + " . ".join(f"?x{2 * i + 1} {relation} ?x{2 * i + 2}" for i in range(99)) + " }"
    info = {"task": "cfq_like", "input": target["input"], "meta": target["meta"]}
    started = time.perf_counter()
    assert task.check(target, completion) is False
    assert compute_score("gengap/cfq_like", "Answer: " + completion, target["target"], info) == 0.0
    assert time.perf_counter() - started < 2.0
    assert task.check(target, target["target"]) and compute_score("gengap/cfq_like", "Answer: " + target["target"], target["target"], info) == 1.0


# -- case 15: an unreachable cluster is one line, at once ---------------------------------------------


def test_an_unreachable_ray_address_is_one_line_within_seconds() -> None:
    import socket
    import time

    from gengap.baselines.errors import BaselineError
    from gengap.baselines.sweep_ray import check_reachable

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.perf_counter()
    for address in (f"127.0.0.1:{port}", f"ray://127.0.0.1:{port}"):
        with pytest.raises(BaselineError, match=f"cannot reach the Ray cluster at {address}: "):
            check_reachable(address, timeout=5)
    assert time.perf_counter() - started < 10
    check_reachable("auto")  # no host and port: left to Ray
