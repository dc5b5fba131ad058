"""Issue 56 ("The second week"), records and answers: a multi-task config read by
`datasets.load_dataset` and written back passes `gengap check` (item 13: the table's nulls read
as absent, a null a record's own task gives elsewhere is refused in one line), and a boxed
answer with a stray closing brace is no box (item 14), as a labelled one keeps its brace."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gengap.checking import check_lines
from gengap.cli import main
from gengap.generators import get_task
from gengap.harnesses.extraction import extract_answer, format_ok
from gengap.harnesses.scoring import score_output

MULTI = """\
name: mt
version: 1.0.0
seed: 3
license: cc-by-4.0
entries:
  - split: unseen_tasks
    tasks:
      - {task: parity_check, params: {max_length: 12}}
      - {task: even_pairs, level: 2}
      - {task: addition, level: 1}
    pool: {n: 40}
    strategy: task_holdout
    options: {test_tasks: [addition]}
"""


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mt")
    (root / "mt.yaml").write_text(MULTI)
    assert main(["release", str(root / "mt.yaml"), "--out", str(root / "release")]) == 0
    return root / "release"


def round_trip(release: Path, part: str, out: Path) -> list[dict]:
    """The part loaded as a reader would (datasets, with the card's features) and written back row by row."""
    datasets = pytest.importorskip("datasets")
    rows = list(datasets.load_dataset(str(release), "multi-unseen_tasks", split=part, cache_dir=str(out.parent / "hf-cache")))
    out.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return rows


@pytest.mark.parametrize("part", ["train", "validation", "test"])
def test_a_multi_task_config_read_by_datasets_and_written_back_passes_check(release: Path, tmp_path: Path, part: str,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    rows = round_trip(release, part, tmp_path / f"{part}.jsonl")
    assert any(value is None for row in rows for value in row["difficulty"].values())  # what a table makes of several tasks
    capsys.readouterr()
    assert main(["check", str(tmp_path / f"{part}.jsonl")]) == 0, capsys.readouterr().err
    assert f"checked {len(rows)} records: {len(rows)} passed, 0 failed" in capsys.readouterr().out


def test_a_null_its_own_task_gives_elsewhere_is_refused_in_one_line(release: Path, tmp_path: Path) -> None:
    lines = (release / "data" / "multi-unseen_tasks" / "test.jsonl").read_text().splitlines()  # addition: digits_a, digits_b, carries
    records = [json.loads(line) for line in lines[:3]]
    assert {r["task"] for r in records} == {"addition"}
    records[1]["difficulty"]["digits_a"] = None
    records[1]["difficulty"]["ones"] = None  # another task's feature: fine
    report = check_lines(json.dumps(r) for r in records)
    assert (report.total, report.failed) == (3, 1)
    assert report.failures[0].startswith("line 2: difficulty")
    assert "digits_a" in report.failures[0] and "\n" not in report.failures[0]
    records[1]["difficulty"]["digits_a"] = json.loads(lines[1])["difficulty"]["digits_a"]  # back: only the foreign null is left
    assert check_lines(json.dumps(r) for r in records).ok


def test_a_required_length_stays_required() -> None:
    task = get_task("parity_check")
    (record,) = list(task.generate(np.random.default_rng(0), 1, task.default_params()).records("parity_check"))
    record["difficulty"]["input_length"] = None
    report = check_lines([json.dumps(record)])
    assert report.failed == 1 and "input_length" in report.failures[0]


# -- item 14 ------------------------------------------------------------------------------------


def cfq_record() -> dict:
    task = get_task("cfq_like")
    (record,) = list(task.generate(np.random.default_rng(0), 1, task.default_params()).records("cfq_like"))
    assert "}" in record["target"]
    return record


def test_a_stray_brace_after_a_box_is_not_swallowed() -> None:
    record = cfq_record()
    target = record["target"]
    assert score_output(record, "\\boxed{" + target + "}").correct
    assert score_output(record, "The query is \\boxed{" + target + "}.").correct
    assert not score_output(record, "Answer: " + target + " }").correct
    assert not score_output(record, "\\boxed{" + target + " }}").correct  # as the Answer: line: one brace too many
    assert not score_output(record, "\\boxed{" + target + "}}").correct
    assert score_output(record, "\\text{so \\boxed{" + target + "}}").correct  # a brace that closes what was open before the box
    assert extract_answer("\\fbox{\\boxed{1 0}}") == "1 0"
    assert extract_answer("\\boxed{1 0}}") == "\\boxed{1 0}}"  # no box: the last line
    assert format_ok("so \\boxed{1 0}", "boxed") and not format_ok("so \\boxed{1 0}}", "boxed")
