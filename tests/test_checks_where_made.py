"""Checks where data is made: meta the checkers read, derivations of compositional records,
and a release that runs every checker over every record before writing anything."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from gengap.generators import dumps_record, get_task, task_names
from gengap.checking import record_problem
from gengap.cli import main
from gengap.splits import generate_records

META_TASKS = {
    "addition": ("format",),
    "multiplication": ("format",),
    "modular_operation": ("p",),
    "variable_binding": ("values",),
    "modular_arithmetic": ("modulus",),
    "modular_arithmetic_brackets": ("modulus",),
    "solve_equation": ("modulus",),
    "cycle_navigation": ("cycle_length",),
    "boolean_function": ("function", "support"),
    **{name: ("n_entities", "n_relations", "n_attributes", "n_values", "world_seed")
       for name in ("fact_lookup", "fact_reverse", "fact_two_hop", "fact_compare")},
    "letter_analogy": ("max_depth",),
    "grid_program": ("max_depth",),
}
COMPOSITIONAL = ("scan", "pcfg_set", "cogs_like", "cogs", "cfq_like", "fact_lookup", "fact_reverse", "fact_two_hop", "fact_compare",
                 "string_rewrite", "regex_match")


def one(task: str, seed: int = 3) -> dict:
    return generate_records(task, get_task(task).default_params(), 1, seed)[0]


def test_meta_keys_are_declared_exactly_where_checkers_read_meta() -> None:
    declared = {name: get_task(name).meta_keys for name in task_names() if get_task(name).meta_keys}
    assert declared == META_TASKS
    for name in task_names():  # every generated record carries what its checker reads
        record = one(name)
        assert set(get_task(name).meta_keys) <= set(record.get("meta") or {}), name


@pytest.mark.parametrize("name", sorted(META_TASKS))
def test_a_record_without_meta_is_refused_not_read_with_defaults(name: str) -> None:
    task = get_task(name)
    record = one(name)
    assert record_problem(record) is None
    bare = {k: v for k, v in record.items() if k != "meta"}
    assert not task.check(bare, record["target"])  # no silent default
    assert record_problem(bare) == f"meta.{META_TASKS[name][0]} is missing ({name}'s checker reads it)"


def test_gengap_check_names_missing_meta(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # modulus 7, so the old default (5) would not even give the right answer for most inputs
    params = get_task("modular_arithmetic").make_params({"modulus": 7})
    records = generate_records("modular_arithmetic", params, 20, 1)
    path = tmp_path / "m.jsonl"
    path.write_text("".join(dumps_record(r) + "\n" for r in records))
    assert main(["check", str(path)]) == 0
    lines = path.read_text().splitlines()
    bare = json.loads(lines[4])
    del bare["meta"]
    lines[4] = json.dumps(bare, separators=(",", ":"))
    path.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main(["check", str(path)]) == 1
    captured = capsys.readouterr()
    assert "line 5: meta.modulus is missing (modular_arithmetic's checker reads it)" in captured.err
    assert "checked 20 records: 19 passed, 1 failed" in captured.out


# -- derivations ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", COMPOSITIONAL)
def test_structure_must_be_the_derivation_of_the_input(name: str) -> None:
    task = get_task(name)
    records = generate_records(name, task.default_params(), 50, 4)
    for record in records:
        assert task.derive(record) == record["structure"]
        assert record_problem(record) is None
    record = records[0]
    # a structure with one rule relabelled: still valid JSON and schema, not the input's derivation
    tree = json.loads(json.dumps(record["structure"]))
    tree[0] = tree[0] + " "
    assert record_problem({**record, "structure": tree}) == "structure is not the derivation of its input"
    assert record_problem({**record, "structure": records[1]["structure"]}) == "structure is not the derivation of its input"
    # no structure: the derivation is read from the input, for the checker and for splits alike
    bare = {k: v for k, v in record.items() if k != "structure"}
    assert record_problem(bare) is None
    assert task.atoms(bare) == task.atoms(record) and task.compounds(bare) == task.compounds(record)


def test_gengap_check_catches_a_swapped_structure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = generate_records("scan", get_task("scan").default_params(), 30, 2)
    records[7] = {**records[7], "structure": records[8]["structure"]}
    path = tmp_path / "s.jsonl"
    path.write_text("".join(dumps_record(r) + "\n" for r in records))
    assert main(["check", str(path)]) == 1
    assert "line 8: structure is not the derivation of its input" in capsys.readouterr().err


def test_tasks_without_derivations_derive_nothing() -> None:
    for name in sorted(set(task_names()) - set(COMPOSITIONAL)):
        assert get_task(name).derive(one(name)) is None, name


# -- the release runs every checker --------------------------------------------------------

SUITE = """\
name: checked
version: 0.0.1
seed: 3
license: mit
created: "2026-01-01"
entries:
  - {task: parity_check, split: length, train_range: [1, 8], test_range: [61, 70], sizes: {train: 40, validation: 5, test: 20}}
"""


def test_release_fails_on_a_record_its_checker_rejects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A generator that flips parity targets of inputs longer than 60 tokens (the mutation of
    issue 17): the release refuses to write anything."""
    parity = type(get_task("parity_check"))
    generate = parity.generate

    def flipped(self, rng: np.random.Generator, n: int, params):
        batch = generate(self, rng, n, params)
        lengths = np.array([len(t.split()) for t in batch.inputs])
        targets = np.where(lengths > 60, np.where(batch.targets == b"0", b"1", b"0"), batch.targets).astype("S1")
        return dataclasses.replace(batch, targets=targets)

    suite = tmp_path / "s.yaml"
    suite.write_text(SUITE)
    assert main(["release", str(suite), "--out", str(tmp_path / "good"), "--workers", "1"]) == 0
    monkeypatch.setattr(parity, "generate", flipped)
    capsys.readouterr()
    out = tmp_path / "bad"
    assert main(["release", str(suite), "--out", str(out), "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gengap: error: parity_check-length: test.jsonl line 1: target ")
    assert "is wrong for input" in err and err.rstrip().endswith("(nothing was written)")
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()
