"""Inputs that must be refused rather than read one way silently (issue 55): duplicate keys in
a suite YAML (case 11)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gengap.cli import main
from gengap.generators.reading import ReadError, yaml_document

SUITE = """\
name: dup
version: 0.0.1
seed: 5
license: mit
created: "2026-01-01"
entries:
  - {task: parity_check, split: iid, pool: {n: 40}}
"""


@pytest.mark.parametrize("extra, key, line", [
    ("entries:\n  - {task: even_pairs, split: iid, pool: {n: 40}}\n", "entries", 8),
    ("seed: 6\n", "seed", 8),
])
def test_a_key_twice_in_a_suite_is_an_error_naming_key_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: str, key: str, line: int) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE + extra, encoding="utf-8")
    out = tmp_path / "out"
    assert main(["release", str(suite), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"suite.yaml line {line}: the key '{key}' appears twice in one mapping" in err and err.count("\n") == 1
    assert not out.exists()


def test_a_key_twice_in_a_flow_mapping_is_refused_and_a_merge_may_override() -> None:
    with pytest.raises(ReadError, match="line 2: the key 'sizes' appears twice"):
        yaml_document("entries:\n  - {task: x, sizes: {train: 1}, sizes: {train: 2}}\n", "s.yaml")
    value, _ = yaml_document("base: &b {x: 1, y: 2}\nc:\n  <<: *b\n  x: 3\n", "s.yaml")
    assert value["c"] == {"x": 3, "y": 2}
