"""Bounded resources: YAML aliases, nesting and size, and record counts are refused up front."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from gengap import limits
from gengap.limits import DEFAULT_MAX_RECORDS, RecordLimit
from gengap.suite import SuiteError, load_suite, parse_suite, resolve_suite

HEAD = """\
name: limits
version: 1.0.0
seed: 1
license: mit
"""
ENTRY = "  - {task: parity_check, split: length, train_range: [1, 8], test_range: [9, 12], sizes: {train: 20, test: 10}}\n"

BOMB = HEAD + "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9) if prev else ', '.join(['lol'] * 9)}]\n"
    for prev, name in zip([""] + list("abcdefgh"), "abcdefghi")
) + "entries:\n" + ENTRY


def gengap(*args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "gengap.cli", *args], capture_output=True, text=True, timeout=60)
    return result, time.monotonic() - start


def one_line_error(result: subprocess.CompletedProcess[str], message: str) -> None:
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("gengap: error:") and result.stderr.count("\n") == 1, result.stderr
    assert message in result.stderr
    assert result.stdout == ""


def test_alias_bomb_is_refused_in_under_a_second(tmp_path: Path) -> None:
    assert BOMB.count("*") == 72  # 9^9 "lol"s if expanded
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB)
    start = time.monotonic()
    with pytest.raises(SuiteError, match=r"bomb\.yaml line \d+: the document expands to more than 100,000 values"):
        load_suite(path)
    assert time.monotonic() - start < 1.0
    result, elapsed = gengap("release", str(path), "--out", str(tmp_path / "out"))
    one_line_error(result, "expands to more than 100,000 values")
    assert elapsed < 10  # the whole process, interpreter start included
    assert not (tmp_path / "out").exists()


def test_self_referencing_alias_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "self.yaml"
    path.write_text(HEAD + "description: &d [*d]\nentries:\n" + ENTRY)
    result, _ = gengap("release", str(path), "--out", str(tmp_path / "out"))
    one_line_error(result, "line 5: the alias *d refers to a value that contains it")


def test_benign_aliases_are_accepted() -> None:
    text = HEAD + "entries:\n  - &e {task: parity_check, split: a, strategy: length, train_range: &r [1, 8], test_range: [9, 12], sizes: &s {train: 20, test: 10}}\n"
    text += "  - {task: even_pairs, split: b, strategy: length, train_range: *r, test_range: [9, 12], sizes: *s}\n"
    suite = parse_suite(text)
    assert [e["train_range"] for e in suite["entries"]] == [[1, 8], [1, 8]]


def test_deep_nesting_and_huge_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match="nesting deeper than 32"):
        parse_suite(HEAD + "description: " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(SuiteError, match="at most 1,048,576 bytes"):
        load_suite("/dev/zero")
    big = tmp_path / "big.yaml"
    big.write_text(HEAD + "description: " + "x" * (2 << 20) + "\n")
    with pytest.raises(SuiteError, match="at most"):
        load_suite(big)


def test_a_trillion_records_are_refused_in_under_a_second_with_an_estimate(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    path.write_text(HEAD + "entries:\n" + ENTRY.replace("train: 20", "train: 1000000000000"))
    start = time.monotonic()
    with pytest.raises(SuiteError, match=r"entries\[0\]\.sizes: 1,100,000,000,010 records would need about [0-9.,]+ [TP]B of memory"):
        load_suite(path)
    assert time.monotonic() - start < 1.0
    result, elapsed = gengap("release", str(path), "--out", str(tmp_path / "out"))
    one_line_error(result, f"the limit is {DEFAULT_MAX_RECORDS:,} records per config")
    assert "--max-records" in result.stderr


def test_pool_size_is_limited_and_the_limit_can_be_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = HEAD + "entries:\n  - {task: addition, split: iid, pool: {n: 5000}}\n"
    with pytest.raises(SuiteError, match=r"entries\[0\]\.pool\.n: 5,000 records .* the limit is 1,000 records"):
        parse_suite(text, limit=RecordLimit(1000, explicit=True))
    assert parse_suite(text, limit=RecordLimit(5000, explicit=True))["entries"][0]["pool"] == {"n": 5000}
    monkeypatch.setenv("GENGAP_MAX_RECORDS", "1000")
    with pytest.raises(SuiteError, match="the limit is 1,000 records"):
        parse_suite(text)
    path = tmp_path / "pool.yaml"
    path.write_text(text)
    result, _ = gengap("release", str(path), "--out", str(tmp_path / "out"), "--max-records", "10")
    one_line_error(result, "the limit is 10 records per config")


def test_the_default_limit_also_respects_the_machines_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "physical_memory", lambda: 10_000_000)  # a 10 MB machine
    text = HEAD + "entries:\n  - {task: addition, split: iid, pool: {n: 100000}}\n"
    with pytest.raises(SuiteError, match=r"100,000 records would need about .* this machine has 10\.0 MB"):
        parse_suite(text)
    assert parse_suite(text, limit=RecordLimit(100_000, explicit=True))  # an explicit limit is the user's call


def test_default_suite_is_within_the_limits() -> None:
    assert len(load_suite()["entries"]) == 22


def test_manifest_suites_with_shared_values_still_resolve() -> None:
    """Rebuilding from a manifest dumps the config to YAML: shared objects must not become aliases."""
    params = {"max_digits_a": 3, "max_digits_b": 3}
    data = parse_suite(HEAD + "entries:\n" + ENTRY)["config"]
    data["entries"] = [
        {"task": "addition", "split": "a", "strategy": "iid", "pool": {"n": 50}, "params": params},
        {"task": "addition", "split": "b", "strategy": "iid", "pool": {"n": 50}, "params": params},
    ]
    assert [e["name"] for e in resolve_suite(data)["entries"]] == ["addition-a", "addition-b"]
