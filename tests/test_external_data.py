"""Your own data: `gengap split` of plain JSONL records (input, target; optionally structure, atoms,
compounds, meta, difficulty), gengap.splits.external."""

from __future__ import annotations

import io
import itertools
import json
from pathlib import Path

import pytest

from gengap.cli import main
from gengap.schema import record_errors
from gengap.splits.atoms import atoms_source, record_atoms, record_compounds
from gengap.splits.external import ExternalDataError, ExternalFormat, make_format, ngrams, plain_records

VERBS = ("jump", "walk", "run", "look", "swim", "fly", "sit", "turn")
ADVERBS = ("twice", "thrice", "left", "right")


def _toy(kind: str) -> list[dict]:
    """A small compositional dataset, 8 x 4 x 8 commands `v1 adverb v2`: with its atoms and
    compounds listed (kind "declared"), as a tree ("tree") or plain ("plain")."""
    rows = []
    for v1, adverb, v2 in itertools.product(VERBS, ADVERBS, VERBS):
        row = {"input": f"{v1} {adverb} and {v2}", "target": f"{v1.upper()}_{adverb.upper()} {v2.upper()}"}
        if kind == "declared":
            row.update(atoms=[v1, adverb, v2], compounds=[f"{v1} {adverb}", f"{adverb} and {v2}"])
        elif kind == "tree":
            row["structure"] = ["S -> C and V", ["C -> V A", v1, adverb], v2]
        rows.append(row)
    return rows


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _split(tmp_path: Path, data: Path, out: str, *args: str) -> dict:
    assert main(["split", str(data), "--out", str(tmp_path / out), *args]) == 0
    return json.loads((tmp_path / out / "report.json").read_text())


def _parts(folder: Path) -> dict[str, list[dict]]:
    return {p: [json.loads(line) for line in (folder / f"{p}.jsonl").read_text().splitlines()] for p in ("train", "validation", "test")}


MCD = ("--strategy", "mcd", "--option", "train_size=150", "--option", "test_size=40", "--option", "steps=20000", "--seed", "1")


def test_an_mcd_split_of_records_that_list_their_atoms_and_compounds(tmp_path):
    data = _write(tmp_path / "own.jsonl", _toy("declared"))
    report = _split(tmp_path, data, "mcd", *MCD)
    iid = _split(tmp_path, data, "iid", "--strategy", "iid", "--option", "test_fraction=0.15")
    assert report["atoms_source"] == "derivation"
    assert report["compound_divergence"] > iid["compound_divergence"] + 0.2
    assert report["unseen_atom_count"] == 0
    parts = _parts(tmp_path / "mcd")
    record = parts["test"][0]
    assert record["task"] == "external" and record_errors(record) == []
    assert record["meta"]["atoms"] == record["input"].replace(" and", "").split()
    assert record_compounds(record) == {c: 1 for c in record["meta"]["compounds"]}


def test_an_mcd_split_of_records_with_a_structure_tree(tmp_path):
    data = _write(tmp_path / "tree.jsonl", _toy("tree"))
    report = _split(tmp_path, data, "mcd", *MCD, "--task-name", "my_commands")
    assert report["atoms_source"] == "derivation" and report["unseen_atom_count"] == 0
    record = _parts(tmp_path / "mcd")["train"][0]
    assert record["task"] == "my_commands" and record["id"].startswith("my_commands-")
    assert record_atoms(record)["S -> C and V"] == 1


def test_an_mcd_split_with_n_gram_compounds(tmp_path):
    data = _write(tmp_path / "plain.jsonl", _toy("plain"))
    report = _split(tmp_path, data, "mcd", *MCD, "--ngrams", "3")
    record = _parts(tmp_path / "mcd")["test"][0]
    tokens = record["input"].split()
    assert record["meta"]["compounds"] == ngrams(tokens, 3) == [*(" ".join(p) for p in zip(tokens, tokens[1:])), *(" ".join(t) for t in zip(tokens, tokens[1:], tokens[2:]))]
    assert report["compound_divergence"] > 0.3 and report["atoms_source"] == "tokens"


def test_a_length_split_of_plain_input_target_records(tmp_path):
    rows = [{"input": " ".join(["a"] * k + [str(i)]), "target": str(k)} for k in range(1, 13) for i in range(5)]
    rows[0]["input"] = "  a\t0 "  # whitespace is normalized to single spaces
    data = _write(tmp_path / "lengths.jsonl", rows)
    report = _split(tmp_path, data, "len", "--strategy", "length", "--option", "train_max=6", "--option", "test_min=9")
    parts = _parts(tmp_path / "len")
    assert report["sizes"] == {"train": 23, "validation": 2, "test": 25}  # lengths 2..6 vs 9..13, 5 records each
    assert max(r["difficulty"]["input_length"] for r in parts["train"] + parts["validation"]) <= 6
    assert min(r["difficulty"]["input_length"] for r in parts["test"]) >= 9
    assert "a 0" in {r["input"] for p in parts.values() for r in p}
    assert all(record_errors(r) == [] for p in parts.values() for r in p)


def test_every_problem_is_reported_at_once(tmp_path, capsys):
    lines = [
        '{"input": "a b", "target": "c"}',
        '{"target": "c"}',
        '{"input": "a", "target": "b", "source": "web"}',
        "",
        '{"input": "a"}',
        "[1, 2]",
        '{"input": "a", "target": 3, "structure": ["S", 1]}',
        '{"input": "a b", "target": "c", "atoms": "a b", "difficulty": {"input_length": 3}}',
        "{not json",
    ]
    data = tmp_path / "bad.jsonl"
    data.write_text("\n".join(lines) + "\n")
    assert main(["split", str(data), "--strategy", "iid", "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (
        f"gengap: error: {data}: line 2 lacks input; line 3 has unknown key 'source'; line 5 lacks target; "
        "line 6 is not a JSON object; line 7 has a target that is not a string; "
        "line 7 has a structure that is not a tree ([label, child, ...] with string leaves); "
        "line 8 has atoms that are not a list of strings; "
        "line 8 has difficulty.input_length 3, but its input has 2 tokens; ... (9 problems) "
        "(a plain record has input, target and optionally structure, atoms, compounds, meta, difficulty; "
        'keep any other field in meta, an object carried with the record: "meta": {"source": ...})\n'
    )
    assert not (tmp_path / "out").exists()


def test_a_key_of_every_line_is_one_problem_with_a_hint_to_use_meta(tmp_path, capsys):
    data = tmp_path / "extra.jsonl"
    data.write_text("".join(json.dumps({"input": f"a {'b ' * i}c", "target": "d", "source": "web", "url": "x"}) + "\n" for i in range(30)))
    assert main(["split", str(data), "--strategy", "iid", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err == (f"gengap: error: {data}: line 1 has unknown keys 'source', 'url' (and 29 more lines) (30 problems) "
                   "(a plain record has input, target and optionally structure, atoms, compounds, meta, difficulty; "
                   'keep any other field in meta, an object carried with the record: "meta": {"source": ...})\n')
    moved = tmp_path / "moved.jsonl"
    moved.write_text("".join(json.dumps({"input": f"a {'b ' * i}c", "target": "d", "meta": {"source": "web"}}) + "\n" for i in range(30)))
    assert main(["split", str(moved), "--strategy", "iid", "--out", str(tmp_path / "out")]) == 0
    assert json.loads((tmp_path / "out" / "train.jsonl").read_text().splitlines()[0])["meta"] == {"source": "web"}


def test_an_id_key_that_made_plain_records_read_as_gengap_records_is_named(tmp_path, capsys):
    data = tmp_path / "ids.jsonl"
    data.write_text("".join(json.dumps({"id": f"r{i}", "input": f"a {'b ' * i}c", "target": "d"}) + "\n" for i in range(10)))
    assert main(["split", str(data), "--strategy", "iid", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"gengap: error: {data}: line 1: ") and len(err.splitlines()) == 1
    assert 'read as gengap records because its first record has an "id"' in err and '"meta": {"id": ...}' in err
    assert main(["generate", "parity_check", "--n", "5", "--out", str(tmp_path / "gengap.jsonl")]) == 0
    broken = tmp_path / "broken.jsonl"  # a real gengap record that fails: no hint about plain records
    record = json.loads((tmp_path / "gengap.jsonl").read_text().splitlines()[0])
    broken.write_text(json.dumps({**record, "difficulty": "hard"}) + "\n")
    assert main(["split", str(broken), "--strategy", "iid", "--out", str(tmp_path / "out")]) == 2
    assert "first record has an" not in capsys.readouterr().err


def test_the_same_file_and_seed_give_the_same_bytes(tmp_path):
    data = _write(tmp_path / "own.jsonl", _toy("declared"))
    _split(tmp_path, data, "a", *MCD)
    _split(tmp_path, data, "b", *MCD)
    for name in ("train.jsonl", "validation.jsonl", "test.jsonl", "report.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_options_for_plain_records(tmp_path, capsys):
    with pytest.raises(ExternalDataError, match="'scan' is a gengap task"):
        make_format("scan")
    with pytest.raises(ExternalDataError, match="not snake_case"):
        make_format("My-Data")
    with pytest.raises(ExternalDataError, match="2 to 8 tokens, got 1"):
        make_format(ngrams=1)
    with pytest.raises(ExternalDataError, match=r"^<x>: no records$"):
        plain_records(io.BytesIO(b"\n\n"), "<x>")
    with pytest.raises(ExternalDataError, match="line 1 has its own compounds or structure, but n-gram compounds"):
        plain_records(io.BytesIO(b'{"input": "a b", "target": "c", "compounds": ["a b"]}\n'), "<x>", ExternalFormat(ngrams=2))
    assert main(["generate", "scan", "--n", "20", "--out", str(tmp_path / "scan.jsonl")]) == 0
    assert main(["split", str(tmp_path / "scan.jsonl"), "--strategy", "iid", "--ngrams", "3", "--out", str(tmp_path / "o")]) == 2
    assert "are for plain records (input and target, no id)" in capsys.readouterr().err


def test_own_atoms_count_only_for_records_of_unknown_tasks():
    record = {"id": "x-0", "task": "external", "input": "a b c", "target": "d", "meta": {"atoms": ["a", "a"]}}
    assert record_atoms(record) == {"a": 2} and atoms_source([record]) == "derivation"
    assert record_compounds(record) == {"a b": 1, "b c": 1}  # no compounds given: adjacent pairs
    odd = {**record, "meta": {}, "structure": {"not": "a tree"}}
    assert record_atoms(odd) == {"a": 1, "b": 1, "c": 1} and atoms_source([odd]) == "tokens"
