"""Portable reproducibility: one setting is one seed however it is written."""

from __future__ import annotations

import json
from pathlib import Path

from generators import dumps_record, get_task
from generators.seeding import stream_key
from gengap.cli import main
from gengap.suite import parse_suite
from splits import generate_records


def test_float_params_given_as_integers_are_one_setting() -> None:
    task = get_task("shortest_path")
    as_int, as_float = task.make_params({"edges_per_node": 2}), task.make_params({"edges_per_node": 2.0})
    assert type(as_int.edges_per_node) is float and as_int == as_float
    assert as_int.canonical() == as_float.canonical() and '"edges_per_node":2.0' in as_int.canonical()
    assert stream_key("shortest_path", as_int) == stream_key("shortest_path", as_float)
    assert type(task.make_params({"edges_per_node": 2}).replace(min_edges=3).edges_per_node) is float


def test_the_cli_and_a_suite_generate_the_same_records(tmp_path: Path) -> None:
    """`--param edges_per_node=2` (parsed to 2.0) and YAML `edges_per_node: 2` (an int)."""
    out = tmp_path / "cli.jsonl"
    assert main(["generate", "shortest_path", "--n", "40", "--seed", "5", "--param", "edges_per_node=2", "--out", str(out)]) == 0
    suite = parse_suite(
        "name: s\nversion: 1.0.0\nseed: 1\nlicense: mit\nentries:\n"
        "  - {task: shortest_path, split: iid, params: {edges_per_node: 2}, pool: {n: 40}}\n"
    )
    params = get_task("shortest_path").make_params(suite["entries"][0]["params"])
    assert suite["entries"][0]["params"]["edges_per_node"] == 2.0
    records = generate_records("shortest_path", params, 40, 5)
    assert out.read_text() == "".join(dumps_record(r) + "\n" for r in records)
    assert json.loads(out.read_text().splitlines()[0])["task"] == "shortest_path"
