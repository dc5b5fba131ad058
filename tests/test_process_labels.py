"""Process labels: a chosen share of a trace's steps corrupted from their own stream, every
label the checker's verdict, and the prm export in TRL's stepwise-supervision columns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gengap.cli import main
from gengap.generators import get_task
from gengap.generators.process_labels import Corruption, ProcessLabelError, label_steps
from gengap.generators.traces import SEPARATOR, split_target
from tests.test_traces import PAIRS, traced_records

SUITE = """\
name: traced-suite
version: 0.0.1
seed: 5
license: mit
created: "2026-01-01"
entries:
  - {task: parity_check, split: length, train_range: [1, 6], test_range: [8, 10], params: {trace: inductive}, sizes: {train: 30, validation: 6, test: 8}}
  - {task: scan, split: iid, params: {trace: least_to_most, max_actions: 12}, pool: {n: 60}, options: {test_fraction: 0.25}}
  - {task: even_pairs, split: length, train_range: [1, 6], test_range: [8, 10], sizes: {train: 20, validation: 5, test: 5}}
"""


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("traced")
    (root / "suite.yaml").write_text(SUITE)
    assert main(["release", str(root / "suite.yaml"), "--out", str(root / "release"), "--workers", "1"]) == 0
    return root / "release"


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(PAIRS), st.floats(0, 1), st.integers(0, 2**31), st.integers(0, 2**32 - 1))
def test_labels_are_the_checkers_step_verdicts_and_the_share_is_kept(pair, share: float, seed: int, draw: int) -> None:
    name, fmt = pair
    task = get_task(name)
    for record in traced_records(name, fmt, 3, 5, draw, n=4):
        labelled = label_steps(record, Corruption(share, seed))
        trace, answer = split_target(record["target"])
        flat = [t for step in labelled.steps for t in step]
        assert task.trace_steps(flat, fmt, record) == labelled.steps  # corruption keeps the steps' bounds
        assert labelled.labels == task.step_verdicts(record, flat, fmt)
        assert [i for i, ok in enumerate(labelled.labels) if not ok] == list(labelled.corrupted)
        assert task.check_trace(record, flat, fmt) == (not labelled.corrupted)  # the independent checker agrees
        assert labelled.answer == answer and labelled.answer_label  # the answer is never corrupted
        steps = len(labelled.steps)
        wanted = max(int(share * steps + 0.5), 1 if share > 0 else 0)
        assert len(labelled.corrupted) <= min(wanted, steps)
        if share == 0:
            assert flat == trace and labelled.labels == [True] * steps
        assert label_steps(record, Corruption(share, seed)) == labelled  # same record, share and seed: same trace


def test_corruption_takes_the_share_of_every_corruptible_trace_and_depends_on_the_seed() -> None:
    records = traced_records("addition", "fine", 4, 4, 7, n=20)
    for share in (0.25, 0.5, 1.0):
        for record in records:
            labelled = label_steps(record, Corruption(share, 3))
            assert len(labelled.corrupted) == max(1, int(share * len(labelled.steps) + 0.5))
    first = [label_steps(r, Corruption(0.5, 1)).corrupted for r in records]
    second = [label_steps(r, Corruption(0.5, 2)).corrupted for r in records]
    assert first != second


def test_bad_settings_and_answer_only_records_are_one_line_errors() -> None:
    with pytest.raises(ProcessLabelError, match=r"must be in \[0, 1\], got 1.5"):
        Corruption(1.5)
    with pytest.raises(ProcessLabelError, match="non-negative integer"):
        Corruption(0.5, -1)
    plain = {"id": "x", "task": "parity_check", "input": "1 0", "target": "1"}
    with pytest.raises(ProcessLabelError, match="has no trace"):
        label_steps(plain, Corruption(0.5))
    forged = {"id": "y", "task": "parity_check", "input": "1 0", "target": "1 0 => 1", "meta": {"trace": "fine"}}
    with pytest.raises(ProcessLabelError, match="not the computation of its input"):
        label_steps(forged, Corruption(0.5))


def test_the_prm_export_has_trls_stepwise_columns_and_the_checkers_labels(release: Path, tmp_path: Path) -> None:
    out = tmp_path / "prm"
    args = ["export", str(release), "--to", "prm", "--out", str(out), "--corrupt-share", "0.4", "--corrupt-seed", "2"]
    assert main([*args, "--config", "parity_check-length", "--config", "scan-iid"]) == 0
    manifest = json.loads((out / "gengap-export.json").read_text())
    assert manifest["settings"]["corruption"] == {"share": 0.4, "seed": 2}
    for config in ("parity_check-length", "scan-iid"):
        rows = [json.loads(line) for line in (out / config / "train.jsonl").read_text().splitlines()]
        released = [json.loads(line) for line in (release / "data" / config / "train.jsonl").read_text().splitlines()]
        assert [r["id"] for r in rows] == [r["id"] for r in released]
        task = get_task(config.split("-")[0])
        for row, record in zip(rows, released):
            assert isinstance(row["prompt"], str) and row["prompt"].endswith(f"Input: {record['input']}\nAnswer:")
            assert len(row["completions"]) == len(row["labels"]) and all(isinstance(x, bool) for x in row["labels"])
            assert row["completions"][-1] == " ".join([SEPARATOR, *split_target(record["target"])[1]]) and row["labels"][-1]
            steps = " ".join(row["completions"][:-1]).split()
            fmt = record["meta"]["trace"]
            assert row["labels"][:-1] == task.step_verdicts(record, steps, fmt)
            assert [i for i, ok in enumerate(row["labels"][:-1]) if not ok] == row["corrupted"]
    import datasets  # TRL 1.16 has no PRM trainer: its documented columns, as `datasets` reads them

    loaded = datasets.load_dataset("json", data_files=str(out / "scan-iid" / "train.jsonl"), split="train")
    assert {"prompt", "completions", "labels"} <= set(loaded.column_names)
    assert str(loaded.features["completions"].feature.dtype) == "string" and str(loaded.features["labels"].feature.dtype) == "bool"
    from trl.data_utils import is_conversational

    assert not is_conversational(loaded[0])  # TRL's standard (not conversational) form: prompt is text


def test_prm_refuses_answer_only_configs_and_other_exports_refuse_corruption(release: Path, tmp_path: Path, capsys) -> None:
    assert main(["export", str(release), "--to", "prm", "--out", str(tmp_path / "a")]) == 2
    assert "even_pairs-length: record" in capsys.readouterr().err and not (tmp_path / "a").exists()
    assert main(["export", str(release), "--to", "chat", "--out", str(tmp_path / "b"), "--corrupt-share", "0.2"]) == 2
    assert "--corrupt-share and --corrupt-seed are for --to prm" in capsys.readouterr().err
