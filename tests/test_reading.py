"""gengap.generators.reading: the one bounded JSON/JSONL/YAML reader, piece by piece (the CLI cases
are in test_hostile_input.py)."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import numpy as np
import pytest

from gengap.generators import batch_to_jsonl, get_task
from gengap.generators.reading import (
    MAX_JSON_DEPTH,
    ReadError,
    iter_jsonl,
    json_value,
    jsonl_lines,
    read_json,
    release_configs,
    release_part,
    yaml_document,
)
from gengap.errors import one_line


@pytest.mark.parametrize(
    "text, reason",
    [
        ("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1), "nested deeper than 300 levels"),
        ('{"a": ' + "[" * 100_000, "nested deeper than 300 levels"),
        ("[" + "1" * 101 + "]", "an integer has 101 digits"),
        ("[-" + "1" * 5000 + "]", "an integer has 5,000 digits"),
        ('["\\ud800"]', "lone UTF-16 surrogate"),
        ('{"\\udfff": 1}', "lone UTF-16 surrogate"),
        ("[NaN]", "NaN is not a number JSON allows"),
        ("[-Infinity]", "-Infinity is not a number JSON allows"),
        ("[1e999]", "the number 1e999 is too large for a float"),
        ("[1,", "not valid JSON"),
        (b"\xff[]", "not UTF-8 text (byte 0)"),
    ],
)
def test_json_value_refuses_in_one_error(text: str | bytes, reason: str) -> None:
    with pytest.raises(ReadError, match=reason.replace("(", r"\(").replace(")", r"\)")) as caught:
        json_value(text, "f.json")
    assert str(caught.value).startswith("f.json: ") and "\n" not in str(caught.value)


def test_json_value_accepts_what_is_within_the_bounds() -> None:
    deepest = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert json_value(deepest) == json.loads(deepest)
    assert json_value('["[[[[" , "\\"]]]]"]') == ["[[[[", '"]]]]']  # brackets in strings do not nest
    assert json_value("[" + "9" * 100 + ", 1.5, -0.0]") == [int("9" * 100), 1.5, -0.0]
    assert json_value('{"s": "\\ud83d\\ude00", "k": "a1" }') == {"s": "\U0001f600", "k": "a1"}  # a pair is one character
    assert json_value('"' + "1" * 200 + '"') == "1" * 200  # long digit runs in strings are no numbers


def test_json_documents_name_the_line() -> None:
    text = '{\n "a": 1,\n "b": [' + "[" * 400 + "\n}"
    with pytest.raises(ReadError, match=r"^m\.json line 3: nested deeper"):
        json_value(text, "m.json")
    with pytest.raises(ReadError, match=r"^m\.json line 2: an integer"):
        json_value('{"a": 1,\n "b": ' + "7" * 200 + "}", "m.json")
    with pytest.raises(ReadError, match=r"^m\.json line 3: not valid JSON \(Expecting"):
        json_value('{"a": 1,\n "b": 2,\n }', "m.json")


def test_read_json_bounds_the_file(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text("[" + " " * 2000 + "]")
    assert read_json(path) == []
    with pytest.raises(ReadError, match="larger than 1,000 bytes"):
        read_json(path, max_bytes=1000)
    with pytest.raises(ReadError, match=r"nowhere\.json: cannot read it: No such file"):
        read_json(tmp_path / "nowhere.json")


def test_jsonl_lines_skip_a_line_too_long_without_holding_it() -> None:
    stream = io.BytesIO(b'{"a": 1}\n' + b"x" * 5000 + b"\n\n" + b'{"b": 2}')
    lines = list(jsonl_lines(stream, max_bytes=100))
    assert lines == [(1, b'{"a": 1}\n'), (2, None), (3, b"\n"), (4, b'{"b": 2}')]


def test_iter_jsonl_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"a": 1}\n\n[NaN]\n')
    found = iter_jsonl(path)
    assert next(found) == (1, {"a": 1})
    with pytest.raises(ReadError, match=r"r\.jsonl: line 3: NaN is not a number JSON allows"):
        next(found)


def test_the_deepest_records_tasks_write_read_back() -> None:
    """MAX_JSON_DEPTH leaves room for every derivation a task's parameters allow."""
    for name, params in (("scan", {"min_conjuncts": 250, "max_conjuncts": 250}), ("cogs_like", {"min_pp_depth": 100, "max_pp_depth": 100})):
        task = get_task(name)
        data = batch_to_jsonl(task.generate(np.random.default_rng(0), 3, task.make_params(params)), name)
        for line in data.splitlines():
            assert json_value(line) == json.loads(line)


@pytest.mark.parametrize(
    "text, reason",
    [
        ("a: .nan", "line 1: .nan is not a finite number"),
        ('a: 1\nb: "x\\ud800y"', "line 2: a string holds a lone UTF-16 surrogate"),
        ('"\\udfff": 1', "line 1: a string holds a lone UTF-16 surrogate"),
        ("a: [1, -.INF]", "line 1: -.INF is not a finite number"),
        ("a: 1.0e+999", "line 1: 1.0e+999 is not a finite number"),
        ("a: 1\nb: " + "1" * 101, "line 2: an integer has 101 digits"),
        ("a: 0x" + "f" * 200, "line 1: an integer has 200 digits"),
        ("a: [1, 2", "line 1: malformed YAML"),
        ("a: !!python/object:os.system x", "malformed YAML: could not determine a constructor"),
        ("a: " + "[" * 40 + "]" * 40, "line 1: nesting deeper than 32 levels"),
        ("a: &x [*x]", "line 1: the alias *x refers to a value that contains it"),
    ],
)
def test_yaml_document_refuses_in_one_error(text: str, reason: str) -> None:
    with pytest.raises(ReadError) as caught:
        yaml_document(text, "s.yaml")
    assert str(caught.value).startswith("s.yaml") and reason in str(caught.value) and "\n" not in str(caught.value)


def test_yaml_timestamps_are_the_strings_written() -> None:
    value, node = yaml_document("a: 2026-11-30\nb: 2026-13-45\nc: 2026-02-30 10:00:00\nd: !!timestamp 2026-01-01\ne: 1.5\nf: 12")
    assert value == {"a": "2026-11-30", "b": "2026-13-45", "c": "2026-02-30 10:00:00", "d": "2026-01-01", "e": 1.5, "f": 12}
    assert node is not None and node.start_mark.line == 0


def test_release_configs_lists_what_the_manifest_lists_and_refuses_symlinks(tmp_path: Path) -> None:
    for name in ("a-x", "b-x"):
        (tmp_path / "data" / name).mkdir(parents=True)
        (tmp_path / "data" / name / "train.jsonl").write_text("")
    (tmp_path / "data" / ".hidden").mkdir()
    assert release_configs(tmp_path) == ["a-x", "b-x"]
    assert release_configs(tmp_path, {"configs": [{"name": "b-x"}, {"name": "../../etc"}, 5]}) == ["b-x"]
    with pytest.raises(ReadError, match="config c-x of manifest.json has no data/c-x/train.jsonl"):  # listed, gone: never silently left out
        release_configs(tmp_path, {"configs": [{"name": "b-x"}, {"name": "c-x"}]})
    with pytest.raises(ReadError, match="has no list of configs"):
        release_configs(tmp_path, {"configs": {"b-x": {}}})
    assert release_part(tmp_path, "a-x", "test") is None and release_part(tmp_path, "a-x", "train") == tmp_path / "data/a-x/train.jsonl"
    os.symlink(tmp_path / "data" / "a-x" / "train.jsonl", tmp_path / "data" / "b-x" / "test.jsonl")
    with pytest.raises(ReadError, match="test.jsonl: is a symlink or not a regular file"):
        release_part(tmp_path, "b-x", "test")
    os.symlink(tmp_path / "data" / "a-x", tmp_path / "data" / "c-x")
    with pytest.raises(ReadError, match="c-x: is a symlink or not a directory"):
        release_configs(tmp_path)
    assert release_configs(tmp_path, {"configs": [{"name": "a-x"}]}) == ["a-x"]  # not listed: not looked at


def test_one_line_escapes_what_would_break_a_line() -> None:
    assert one_line("plain text, é and 😀") == "plain text, é and 😀"
    assert one_line("a\nb\r\x00\u2028\ud800\u200b") == "a\\nb\\r\\x00\\u2028\\ud800\\u200b"


def test_the_docs_state_the_bounds_the_reader_has() -> None:
    from gengap.generators import reading

    page = (Path(__file__).resolve().parents[1] / "docs" / "reproducibility.md").read_text()
    section = page.split("## Reading input", 1)[1].split("\n## ", 1)[0]
    for stated in (
        f"nesting deeper than {reading.MAX_JSON_DEPTH} levels in JSON",
        f"or {reading.MAX_YAML_DEPTH} in YAML",
        f"numbers with more than {reading.MAX_NUMBER_DIGITS} digits",
        f"JSONL lines longer than {reading.MAX_LINE_BYTES >> 20} MiB",
        f"JSON files larger than {reading.MAX_JSON_BYTES >> 20} MiB",
        f"YAML files larger than\n  {reading.MAX_YAML_BYTES >> 20} MiB",
        f"more than {reading.MAX_YAML_VALUES:,} values",
    ):
        assert stated in section, stated
