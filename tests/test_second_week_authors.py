"""Issue 56 ("The second week"): the tools for benchmark authors say what their figures mean
(item 10: near records that are near by necessity, short inputs over few tokens; a used-up
enumeration says what to do instead), the report states its dynamics threshold (item 4), and
the README's tour writes under one ignored folder (item 1)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from gengap.cli import main
from gengap.fresh import FreshError, draw_fresh
from gengap.near_audit import audit_config, audit_directory, complete_lengths, table
from gengap.splits.near_duplicates import NearOptions

ROOT = Path(__file__).resolve().parent.parent

SUITE = """\
name: authors
version: 1.0.0
seed: 7
license: cc-by-4.0
entries:
  - {task: parity_check, split: length, train_range: [1, 20], test_range: [21, 60], sizes: {train: 2000, validation: 200, test: 300}}
  - {task: reverse_string, split: length, train_range: [1, 6], test_range: [7, 9], sizes: {train: 2000, validation: 20, test: 100}}
  - {task: modular_operation, split: holdout, params: {p: 7}, pool: all, options: {atom: "5"}}
  - {task: modular_operation, split: iid, params: {p: 7}, pool: all}
  - {task: scan, split: simple, strategy: iid, pool: {n: 600}}
"""


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("authors")
    (root / "s.yaml").write_text(SUITE)
    assert main(["release", str(root / "s.yaml"), "--out", str(root / "release")]) == 0
    return root / "release"


def test_complete_train_lengths_are_those_train_holds_in_full() -> None:
    every = [tuple(int(c) for c in f"{i:0{n}b}") for n in (1, 2, 3) for i in range(2 ** n)]
    assert complete_lengths(every, 2) == [1, 2, 3]
    assert complete_lengths(every[:-1], 2) == [1, 2]  # one string of length 3 missing
    assert complete_lengths(every, 3) == []  # over three tokens, none is complete


def test_the_audit_says_which_near_records_are_near_by_necessity(release: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = audit_directory(release, NearOptions(edit_distance=1, examples=0))
    rows = {row["config"]: row for row in report["configs"]}
    parity = rows["parity_check-length"]["necessarily_near"]
    assert parity["jaccard"] > 0.5 * rows["parity_check-length"]["test"] and parity["edit_distance"] == 0  # long binary strings: every 3-gram
    reverse = rows["reverse_string-length"]["necessarily_near"]
    assert reverse["complete_train_lengths"]["reverse_string"]["tokens"] == 2
    assert 6 in reverse["complete_train_lengths"]["reverse_string"]["lengths"]  # all 64 strings of length 6 are in 2,000 records
    seven = sum(1 for line in (release / "data" / "reverse_string-length" / "test.jsonl").read_text().splitlines()
                if len(json.loads(line)["input"].split()) == 7)
    assert reverse["edit_distance"] == seven > 0  # every test input of length 7 is one deletion from a train input
    assert rows["scan-simple"]["necessarily_near"]["near"] == 0  # words: nothing is near by necessity
    lines = table(report)
    assert any(line.startswith("  parity_check-length: ") and "near by necessity, not by copying" in line for line in lines)
    assert any(f"{seven:,} within edit distance 1: train holds reverse_string: every input of 2 tokens at length 1..6" in line and
               "short inputs over few tokens are necessarily near" in line for line in lines)
    assert any("at Jaccard >= 0.8" in line and "use a larger --ngram" in line for line in lines)
    assert not any(line.startswith("  scan-simple: ") for line in lines)
    assert main(["audit", str(release), "--edit-distance", "1", "--examples", "0"]) == 0
    assert "near by necessity, not by copying" in capsys.readouterr().out


def test_the_necessity_is_a_lower_bound_of_what_the_audit_finds() -> None:
    train = [{"input": " ".join(f"{i:04b}"), "task": "t"} for i in range(16)] + [{"input": "0 1 1 0 1 0 0 1 1 1", "task": "t"}]
    test = [{"input": "1 0 1 1 0", "task": "t"}, {"input": "1 1 0 1 0 0 0 1 1 1 0", "task": "t"}, {"input": "1 1 1 1 1 1 1", "task": "t"}]
    row = audit_config("c", train, test, NearOptions(edit_distance=1, jaccard=0.8, examples=0))
    assert row["necessarily_near"]["edit_distance"] == 1 and row["within_edit_distance"] >= 1  # length 5 is within 1 of the complete 4
    assert row["necessarily_near"]["near"] <= row["near"]


def test_a_used_up_enumeration_says_what_to_do_instead(release: Path) -> None:
    with pytest.raises(FreshError) as caught:  # the iid config holds every input of p = 7
        draw_fresh(release, "modular_operation-holdout", 5, 0)
    message = str(caught.value)
    assert "the enumeration is used up; instead, release this config in a suite of its own (here modular_operation-iid hold" in message
    assert "ask for --n" not in message and "\n" not in message


def test_a_partly_used_enumeration_says_how_many_can_be_drawn(tmp_path: Path) -> None:
    suite = tmp_path / "s.yaml"
    suite.write_text(SUITE.split("  - {task: parity_check")[0]
                     + '  - {task: modular_operation, split: holdout, params: {p: 23}, pool: all, options: {atom: "5"}, sizes: {test: 20}}\n')
    assert main(["release", str(suite), "--out", str(tmp_path / "r")]) == 0
    with pytest.raises(FreshError, match=r"fewer than the 26 asked for: the enumeration is used up; instead, ask for --n 25 or fewer, or "
                                         r"release it with fewer records"):
        draw_fresh(tmp_path / "r", "modular_operation-holdout", 26, 0)


# -- item 4 -------------------------------------------------------------------------------------


def fake_run(config: str, first: tuple[int | None, int | None], threshold: float = 0.99) -> dict:
    seed = {"seed": 0, "first_step": {"threshold": threshold, "train": first[0], "id": first[1]}, "grokking_delay": None,
            "id_exact_match": 0.97, "ood_exact_match": 0.1, "gap": 0.87, "id_length_mean_exact_match": 0.97, "converged": True,
            "learned_at": 200, "stopped_at": 200}
    return {"config": config, "pos": "rope", "arch": "transformer", "preset": "tiny", "steps": 1000, "until_id": 0.95, "per_seed": [seed],
            "settings": {"lr": 1e-3, "weight_decay": 0.1, "label_noise": 0.0, "reach": threshold},
            "data": {"sizes": {"train": 50, "validation": 10, "test": 40}}}


def test_the_dynamics_table_states_its_threshold_apart_from_the_learned_rule() -> None:
    from gengap.baselines.dynamics import dynamics_rows, dynamics_section

    history = [{"seed": 0, "step": s, "train_exact_match": 1.0, "id_exact_match": 0.97} for s in (100, 200)]
    rows = dynamics_rows([(fake_run("a", (100, None)), history)])
    section = dynamics_section(rows, 0.95)
    assert "| train ≥ 0.99 at | validation ≥ 0.99 at | delay | outcome |" in section
    assert "reach exact match ≥ 0.99 (`gengap train --reach EM`, default 0.99)" in section
    assert "not the gap table's \"learned\" (met --until-id, or without it ID exact match averaged over input lengths ≥ 0.95 at the end)" in section
    assert "a seed learned there can read memorized here when its validation stayed below 0.99" in section
    assert "| a | rope | tiny | 0 | 0.001 | 0.1 | 0 | 0.500 | 100 | never | n/a | memorized |" in section
    mixed = dynamics_rows([(fake_run("a", (100, None)), history), (fake_run("b", (100, 200), 0.9), history)])
    section = dynamics_section(mixed, 0.95)
    assert "| train reaches at | validation reaches at |" in section and "(0.9, 0.99; beside each step)" in section
    assert "| 100 (≥ 0.9) | 200 (≥ 0.9) |" in section and "| 100 (≥ 0.99) | never (≥ 0.99) |" in section


# -- item 1 -------------------------------------------------------------------------------------


def readme_blocks() -> list[str]:
    from tests.test_doc_snippets import runnable

    section = (ROOT / "README.md")
    return [b.code for b in runnable(section)]


def test_the_readme_tour_writes_under_one_ignored_folder() -> None:
    from tests.test_doc_snippets import readme_section

    recipes = readme_section("Recipes")
    assert "All write under\n`tour/`, which git ignores" in recipes
    assert "/tour/" in (ROOT / ".gitignore").read_text().splitlines()
    written = re.compile(r"(?:--out |cat > |open\(\"|os\.makedirs\(\")(\S+?)[\"\s,)]")
    blocks = [code for code in readme_blocks() if "tour" in code]
    assert len(blocks) >= 5  # (a) to (d)
    paths = [path for code in blocks for path in written.findall(code)]
    assert len(paths) >= 6 and all(path.startswith("tour") for path in paths), paths
    ignored = subprocess.run(["git", "check-ignore", "-q", "tour/bench/manifest.json"], cwd=ROOT)
    assert ignored.returncode in (0, 128)  # 128: not a git checkout (an sdist)
