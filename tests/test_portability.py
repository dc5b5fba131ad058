"""Portable reproducibility: one setting is one seed however it is written."""

from __future__ import annotations

import json
from pathlib import Path

from gengap.generators import dumps_record, get_task
from gengap.generators.seeding import stream_key
from gengap.cli import main
from gengap.suite import parse_suite
from gengap.splits import generate_records


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


# -- floats in reports and manifests ------------------------------------------------------


def _floats(value: object) -> list[float]:
    if isinstance(value, float):
        return [value]
    if isinstance(value, dict):
        return [x for item in value.values() for x in _floats(item)]
    if isinstance(value, list):
        return [x for item in value for x in _floats(item)]
    return []


def test_rounded_by_hand() -> None:
    from gengap.splits.precision import FLOAT_DECIMALS, rounded

    assert FLOAT_DECIMALS == 6
    assert rounded(0.38018936998557706) == 0.380189
    assert rounded(9.319566459664586e-07) == 1e-06
    assert rounded(2.5e-7) == 0.0 and rounded(7.5e-7) == 1e-06  # half to even on the binary value
    negative_zero = rounded(-1e-9)
    assert negative_zero == 0.0 and str(negative_zero) == "0.0"
    nested = {"a": [0.1234567, {"b": 1.0000004}], "c": 3, "d": True, "e": None, "f": "0.1234567", "g": (0.5, 2)}
    assert rounded(nested) == {"a": [0.123457, {"b": 1.0}], "c": 3, "d": True, "e": None, "f": "0.1234567", "g": [0.5, 2]}
    assert nested["a"][0] == 0.1234567  # the input is not modified


def test_split_reports_round_every_float() -> None:
    from gengap.splits import split
    from gengap.splits.divergence import compound_divergence
    from gengap.splits.atoms import record_compounds, sum_counters

    pool = generate_records("pcfg_set", get_task("pcfg_set").default_params(), 300, 2)
    result = split(pool, "iid", {"test_fraction": 0.3}, seed=1)
    floats = _floats(result.report)
    assert floats and all(round(x, 6) == x for x in floats)
    exact = compound_divergence(
        sum_counters([record_compounds(r) for r in result.train]), sum_counters([record_compounds(r) for r in result.test])
    )
    assert round(exact, 6) != exact  # a real divergence has more digits than the report keeps
    assert result.report["compound_divergence"] == round(exact, 6)


def test_manifests_round_computed_floats_and_keep_the_suite_as_written(tmp_path: Path) -> None:
    from gengap.release import write_release

    suite = parse_suite(
        "name: s\nversion: 1.0.0\nseed: 1\nlicense: mit\ncreated: '2026-01-01'\nentries:\n"
        "  - {task: addition, split: iid, pool: {n: 200}, options: {test_fraction: 0.3, validation_fraction: 0.1234567}}\n"
        "  - {task: parity_check, split: length, train_range: [1, 8], test_range: [9, 12], sizes: {train: 50, validation: 7, test: 20}}\n"
    )
    manifest = write_release(suite, tmp_path / "rel", cards=False)
    on_disk = json.loads((tmp_path / "rel" / "manifest.json").read_text())
    assert on_disk == manifest
    assert on_disk["suite"]["config"]["entries"][0]["options"]["validation_fraction"] == 0.1234567
    outside = {k: v for k, v in on_disk.items() if k != "suite"}
    floats = _floats(outside)
    assert floats and all(round(x, 6) == x for x in floats)
    assert on_disk["configs"][0]["report"]["options"]["validation_fraction"] == 0.123457
    assert on_disk["configs"][1]["report"]["options"]["validation_fraction"] == 0.122807  # 7 / 57
