"""Authors' tools, three defects of issue 54, each with a test that failed before its fix: the
near-duplicate audit compares records whatever their task labels, ranking reads a lexicon
sweep's own config names, and a fresh part whose input lengths drift from the cited part's warns."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gengap.baselines.ranking import lexicon_base, ranking
from gengap.cli import main
from gengap.fresh import draw_fresh, write_fresh
from gengap.fresh_shift import LENGTH_KS_BOUND, critical_value, ks_statistic, length_shift, shift_warning
from gengap.generators import get_task
from gengap.near_audit import audit_directory
from gengap.release import write_release
from gengap.splits.near_duplicates import NearOptions
from gengap.suite import lexicon_split_name, parse_suite
from tests.test_ranking import _rows, fake_results

# -- (a) the audit and task labels -----------------------------------------------------------------


def _split_dir(root: Path, train: list[dict], test: list[dict]) -> Path:
    root.mkdir()
    for name, rows in (("train", train), ("test", test)):
        (root / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def _cfq_records(n: int) -> list[dict]:
    task = get_task("cfq_like")
    return list(task.generate(np.random.default_rng(3), n, task.default_params()).records("cfq_like"))


def test_the_audit_finds_copies_in_test_records_without_a_task_label(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    train = _cfq_records(60)
    copies = [{"input": r["input"], "target": r["target"]} for r in train[:20]]  # plain records: no task field
    root = _split_dir(tmp_path / "split", train, copies)
    row = audit_directory(root, NearOptions())["configs"][0]
    assert row["exact"] == 20 and row["near"] == 20  # before the fix: 0 and 0, nothing compared
    relabeled = _split_dir(tmp_path / "relabeled", train, [{**c, "task": "my_cfq"} for c in copies])
    assert audit_directory(relabeled, NearOptions())["configs"][0]["exact"] == 20  # a label train lacks: compared with all of train
    assert main(["audit", str(root)]) == 0
    assert "20 of 20 test records near a train record" in capsys.readouterr().err


def test_the_audit_still_keeps_a_multitask_configs_tasks_apart(tmp_path: Path) -> None:
    train = [{"task": "a", "input": "x y z w"}, {"task": "b", "input": "p q r s"}]
    test = [{"task": "a", "input": "p q r s"}, {"task": "b", "input": "p q r s"}]  # a's input is b's train input
    row = audit_directory(_split_dir(tmp_path / "mt", train, test), NearOptions())["configs"][0]
    assert row["exact"] == 1  # only b's: a is compared with a's train records


# -- (b) ranking and a sweep's names -----------------------------------------------------------------


def test_ranking_reads_a_lexicon_sweeps_own_config_names() -> None:
    swept = f"scan-{lexicon_split_name('addprim_jump', 2)}"
    assert swept == "scan-addprim_jump_lex0002" and lexicon_base(swept) == "scan-addprim_jump"
    assert lexicon_base("scan-addprim_jump-lex2") == "scan-addprim_jump" and lexicon_base("scan-flex0002") == "scan-flex0002"
    rows = _rows({
        "a": fake_results("scan-iid_lex0000", "rope", {0: (1.0, 0.9)}), "b": fake_results("scan-iid_lex0000", "nope", {0: (1.0, 0.5)}),
        "c": fake_results("scan-iid_lex0002", "rope", {0: (1.0, 0.2)}), "d": fake_results("scan-iid_lex0002", "nope", {0: (1.0, 0.6)}),
    })
    pair = ranking(rows)["pairs"][0]
    assert pair["relation"] == "lexicon variants of scan-iid"  # before the fix: "configs"


# -- (c) a fresh part's length shift ------------------------------------------------------------------


def test_the_ks_statistic_and_its_bound() -> None:
    assert ks_statistic([1, 2, 3], [1, 2, 3]) == 0.0 and ks_statistic([1, 1], [5, 5]) == 1.0
    assert ks_statistic([1, 2, 3, 4], [3, 4, 5, 6]) == pytest.approx(0.5)
    assert critical_value(1000, 1000) < LENGTH_KS_BOUND < critical_value(50, 1000)
    short = [{"input": "a b", "difficulty": {"input_length": 2}}] * 50 + [{"input": "a b c d", "difficulty": {"input_length": 4}}] * 50
    long = [{"input": "a b c d", "difficulty": {"input_length": 4}}] * 100
    shift = length_shift(cited=short, fresh=long)
    assert shift["exceeds"] and shift["ks"] == 0.5
    line = shift_warning(shift)
    assert line is not None and "\n" not in line and "KS 0.500" in line and "cited: mean 3.00" in line and "fresh: mean 4.00" in line
    assert shift_warning(length_shift(short, short)) is None


SUITE = """\
name: fresh-shift
version: 0.1.0
seed: 5
license: mit
created: "2026-12-07"
entries:
  - {task: reverse_string, split: iid, strategy: iid, params: {max_length: 9}, pool: {n: 900}, options: {test_fraction: 0.3}}
"""


def test_a_fresh_part_longer_than_the_cited_one_warns_in_fresh_json_and_on_the_console(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    release = tmp_path / "release"
    write_release(parse_suite(SUITE), release, cards=False)
    part = draw_fresh(release, "reverse_string-iid", 200, 1)  # the release holds nearly every short input
    shift = part.report["length_shift"]
    assert shift["exceeds"] and shift["fresh"]["mean"] > shift["cited"]["mean"]
    assert any(w.startswith("input lengths differ from the cited part's: two-sample KS") for w in part.report["warnings"])
    write_fresh(part, tmp_path / "fresh")
    assert json.loads((tmp_path / "fresh" / "fresh.json").read_text())["length_shift"]["ks"] == shift["ks"]
    assert main(["fresh", str(release), "--config", "reverse_string-iid", "--n", "200", "--seed", "1", "--out", str(tmp_path / "again")]) == 0
    err = capsys.readouterr().err
    assert "gengap: warning: reverse_string-iid: input lengths differ from the cited part's: two-sample KS" in err
    assert main(["verify", str(tmp_path / "fresh"), "--release", str(release)]) == 0  # the report's figures, recomputed, agree
