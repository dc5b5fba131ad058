"""The card: no sentinel options, a readable collection table, the works reproduced, no URL
the suite did not set; release progress lines when stderr is not a terminal."""

from __future__ import annotations

import copy
import re
import subprocess
import sys
from pathlib import Path

import yaml

from gengap.data_cards import render_card, render_citation, render_croissant
from gengap.data_cards.common import shown_options
from gengap.data_cards.references import BIBTEX, config_references
from gengap.suite import load_suite
from tests.data_cards_fixture import build_release
from tests.test_output_discipline import TINY


def _release(tmp_path: Path, homepage: str = "https://github.com/gengap/gengap"):
    manifest, release_dir = build_release(tmp_path, homepage=homepage)
    return copy.deepcopy(manifest), release_dir


def test_unset_options_are_not_printed(tmp_path: Path) -> None:
    manifest, release_dir = _release(tmp_path)
    config = manifest["configs"][0]
    config["split"]["options"] = {
        "validation_fraction": 0.1, "train_max": 8, "test_max": 10**9, "train_min": -(10**9),
        "level_max": 0, "primitive": "", "abstract_lexical": False,
    }  # fmt: skip
    assert shown_options(config, manifest) == {"train_max": 8, "validation_fraction": 0.1}
    card = render_card(manifest, release_dir)
    assert "options: train_max=8, validation_fraction=0.1" in card
    assert "1000000000" not in card and "level_max" not in card and "primitive" not in card


def test_options_the_suite_sets_are_printed_even_at_zero(tmp_path: Path) -> None:
    manifest, _ = _release(tmp_path)
    config = manifest["configs"][0]
    config["split"]["options"] = {"train_min": 0, "train_max": 8}
    manifest["suite"] = {
        "config": {"entries": [{"options": {"train_min": 0, "train_max": 8}}]},
        "entries": [{"name": config["name"]}],
    }
    assert shown_options(config, manifest) == {"train_max": 8, "train_min": 0}


def test_collection_process_is_a_table(tmp_path: Path) -> None:
    manifest, release_dir = _release(tmp_path)
    card = render_card(manifest, release_dir)
    section = card[card.index("## Collection process") : card.index("## Preprocessing")]
    assert "```" not in section and '"params"' not in section
    assert "| config | derived seed | records drawn from | task parameters | sizes |" in section
    assert "| `parity_check-length` | 1234567 | pool: 66 generated examples | min_length=1, max_length=16 |" in section


def test_works_reproduced_are_cited(tmp_path: Path) -> None:
    assert config_references({"task": "scan", "split": {"strategy": "mcd"}}) == ["lake2018generalization", "keysers2020measuring"]
    assert config_references({"task": "cogs_like", "split": {"strategy": "difficulty"}}) == ["kim2020cogs"]
    assert config_references({"task": "bucket_sort", "split": {"strategy": "length"}}) == ["deletang2023neural"]
    assert config_references({"task": "shortest_path", "split": {"strategy": "iid"}}) == []
    manifest, release_dir = _release(tmp_path)  # parity_check (Deletang et al.) and toy_scan with an MCD split
    citation = render_card(manifest, release_dir).split("## Citation", 1)[1]
    assert "- `deletang2023neural`: `parity_check-length`" in citation
    assert "- `keysers2020measuring`: `toy_scan-mcd`" in citation
    for key in ("deletang2023neural", "keysers2020measuring"):
        assert BIBTEX[key] in citation
    assert "lake2018generalization" not in citation  # toy_scan is not SCAN
    for entry in BIBTEX.values():  # balanced braces, no URL
        assert entry.count("{") == entry.count("}") and "http" not in entry and "url" not in entry.lower()


def test_no_url_unless_the_suite_sets_one(tmp_path: Path) -> None:
    manifest, release_dir = _release(tmp_path, homepage="")
    assert "http" not in render_card(manifest, release_dir)
    assert "http" not in render_citation(manifest)
    assert "url" not in render_croissant(manifest, release_dir)
    assert load_suite()["homepage"] == ""  # the default suite claims no homepage


def test_release_prints_a_progress_line_per_config_when_not_a_terminal(tmp_path: Path) -> None:
    suite = tmp_path / "tiny.yaml"
    suite.write_text(TINY)
    names = [f"{e['task']}-{e['split']}" for e in yaml.safe_load(TINY)["entries"]]
    result = subprocess.run(
        [sys.executable, "-m", "gengap.cli", "release", str(suite), "--out", str(tmp_path / "out"), "--workers", "1"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    progress = [line for line in result.stderr.splitlines() if line.startswith("gengap: [")]
    assert len(progress) == len(names)
    for k, (line, name) in enumerate(zip(progress, names), start=1):
        assert re.fullmatch(rf"gengap: \[{k}/{len(names)}\] {name} \(\d+\.\d s\)", line), line
