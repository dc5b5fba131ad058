"""Silent shortfalls made loud: split-report warnings in the release output, the card and
`gengap split`'s output; delivered sizes smaller than asked; the MCD example of docs/splits.md."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gengap.shortfalls import EMPTY_VALIDATION, shortfall_warnings

SUITE = """\
name: short
version: 0.0.1
seed: 2
license: mit
created: "2026-01-01"
entries:
  - {task: parity_check, split: tiny, strategy: length, train_range: [1, 3], test_range: [4, 5], sizes: {train: 40, validation: 5, test: 60}}
  - {task: addition, split: capped, strategy: iid, pool: {n: 50}, options: {test_fraction: 0.2}, sizes: {test: 1000}}
  - {task: even_pairs, split: noval, strategy: iid, pool: {n: 80}, options: {validation_fraction: 0}}
"""
SPLITS_PAGE = Path(__file__).resolve().parent.parent / "docs" / "splits.md"


def gengap(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gengap.cli", *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    root = tmp_path_factory.mktemp("short")
    (root / "short.yaml").write_text(SUITE)
    result = gengap("release", str(root / "short.yaml"), "--out", str(root / "release"), "--workers", "1")
    assert result.returncode == 0, result.stderr
    return root / "release", result


def test_shortfall_warnings() -> None:
    report = {"sizes": {"train": 10, "validation": 0, "test": 3}}
    assert shortfall_warnings(report, {"train": 10, "test": 5}) == [
        "test: 3 records, fewer than the 5 asked for",
        EMPTY_VALIDATION,
    ]
    assert shortfall_warnings({"sizes": {"train": 1, "validation": 1, "test": 1}}) == []


def test_release_prints_every_warning(built: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    release, result = built
    manifest = json.loads((release / "manifest.json").read_text())
    expected = [f"gengap: warning: {c['name']}: {w}" for c in manifest["configs"] for w in c["report"]["warnings"]]
    assert [line for line in result.stderr.splitlines() if line.startswith("gengap: warning:")] == expected
    assert f"{len(expected)} warnings" in result.stdout
    warnings = {c["name"]: c["report"]["warnings"] for c in manifest["configs"]}
    assert any("duplicates are certain" in w for w in warnings["parity_check-tiny"])
    assert "test: 10 records, fewer than the 1,000 asked for" in warnings["addition-capped"]
    assert EMPTY_VALIDATION in warnings["even_pairs-noval"]
    tiny = manifest["configs"][0]["report"]["sizes"]
    if tiny["test"] < 60:  # overlap removal: said, not silent
        assert f"test: {tiny['test']} records, fewer than the 60 asked for" in warnings["parity_check-tiny"]


def test_card_lists_the_warnings(built: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    release, _ = built
    card = (release / "README.md").read_text()
    manifest = json.loads((release / "manifest.json").read_text())
    composition = card[card.index("## Composition") : card.index("## Collection process")]
    reports = card[card.index("## Split reports") : card.index("## Examples")]
    for config in manifest["configs"]:
        section = reports[reports.index(f"### {config['name']}") :]
        for warning in config["report"]["warnings"]:
            assert f"- `{config['name']}`: {warning}" in composition
            assert f"- **warning:** {warning}" in section


def test_split_prints_its_warnings(tmp_path: Path) -> None:
    pool = tmp_path / "pool.jsonl"
    assert gengap("generate", "parity_check", "--n", "200", "--param", "max_length=4", "--out", str(pool)).returncode == 0
    result = gengap("split", str(pool), "--strategy", "iid", "--option", "validation_fraction=0", "--out", str(tmp_path / "s"))
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "s" / "report.json").read_text())
    assert EMPTY_VALIDATION in report["warnings"]
    inputs = [json.loads(line)["input"] for line in pool.read_text().splitlines()]  # at most 30 distinct
    repeats = f"{len(inputs) - len(set(inputs))} of 200 records repeat an input already drawn"
    assert result.stderr.splitlines() == [f"gengap: warning: {w}" for w in [*report["warnings"], repeats]]


def test_the_docs_mcd_example_gives_a_split_gengap_train_accepts(tmp_path: Path) -> None:
    from gengap.baselines.data import load_directory

    line = next(l for l in SPLITS_PAGE.read_text().splitlines() if l.startswith("gengap split scan.jsonl --strategy mcd"))
    options = re.findall(r"--option (\S+)", line)
    assert not any(o.startswith("validation_fraction=0") for o in options)
    scan = tmp_path / "scan.jsonl"
    assert gengap("generate", "scan", "--all", "--out", str(scan)).returncode == 0
    args = [a for o in options + ["steps=2000"] for a in ("--option", o)]
    result = gengap("split", str(scan), "--strategy", "mcd", *args, "--out", str(tmp_path / "scan-mcd"))
    assert result.returncode == 0 and "warning" not in result.stderr, result.stderr
    split = load_directory(tmp_path / "scan-mcd", None)
    assert len(split.train) + len(split.validation) == 8365 and len(split.test) == 1045 and split.validation


def test_long_steps_print_progress_lines_when_stderr_is_a_pipe(tmp_path: Path) -> None:
    """No terminal, no bar: a line every GENGAP_PROGRESS_SECONDS (30 by default) while a config is
    built, an MCD search runs or a release is verified; the outputs are those of a run without them."""
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: p\nversion: 0.0.1\nseed: 3\nlicense: cc-by-4.0\nentries:\n"
        "  - {task: parity_check, split: length, train_range: [1, 40], test_range: [41, 100], sizes: {train: 6000, validation: 600, test: 1200}}\n"
    )
    env = {**os.environ, "GENGAP_PROGRESS_SECONDS": "0.05"}
    command = [sys.executable, "-m", "gengap.cli"]
    built = subprocess.run([*command, "release", str(suite), "--out", str(tmp_path / "r"), "--workers", "1"],
                           capture_output=True, text=True, env=env, timeout=300)
    assert built.returncode == 0, built.stderr
    lines = built.stderr.splitlines()
    assert re.fullmatch(r"gengap: \[0/1\] still building parity_check-length \(\d+ s\)", lines[0]), lines
    assert "gengap: [1/1] parity_check-length (" in built.stderr
    quiet = subprocess.run([*command, "release", str(suite), "--out", str(tmp_path / "q"), "--workers", "1"], capture_output=True, text=True, timeout=300)
    assert "still building" not in quiet.stderr  # 30 s by default: none in a short build
    assert (tmp_path / "r" / "SHA256SUMS").read_bytes() == (tmp_path / "q" / "SHA256SUMS").read_bytes()
    checked = subprocess.run([*command, "verify", str(tmp_path / "r")], capture_output=True, text=True, env=env, timeout=300)
    assert checked.returncode == 0 and re.search(r"^gengap: verify: still checking \S+ \(\d+ s\)$", checked.stderr, re.M), checked.stderr
    pool = tmp_path / "scan.jsonl"
    assert subprocess.run([*command, "generate", "scan", "--all", "--out", str(pool)], timeout=300).returncode == 0
    options = [a for o in ("train_size=2000", "test_size=500", "steps=3000") for a in ("--option", o)]
    searched = subprocess.run([*command, "split", str(pool), "--strategy", "mcd", *options, "--out", str(tmp_path / "m")],
                              capture_output=True, text=True, env=env, timeout=300)
    assert searched.returncode == 0, searched.stderr
    assert re.search(r"^gengap: mcd search: [\d,]+ of 3,000 steps \(\d+ s\)$", searched.stderr, re.M), searched.stderr
