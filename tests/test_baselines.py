"""Baselines without torch: metrics on hand-made predictions, tokenizer, data loading, report, CLI parser."""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from gengap.baselines.cli import add_commands, parse_seeds
from gengap.baselines.data import divergence_of, load_split
from gengap.baselines.errors import BaselineError
from gengap.baselines.metrics import (
    aggregate, aggregate_novelty, bucket_label, compare, gap, make_buckets, novelty_bucket, score, seed_summary, summarize,
)
from gengap.baselines.report import (
    build_report, divergence_correlations, divergence_points, divergence_section, group_runs, make_report, markdown,
    novelty_points, novelty_table, ranks, spearman,
)
from gengap.baselines.tokenizer import Tokenizer


def rec(text: str, target: str, **difficulty: int) -> dict:
    return {
        "id": f"t-{text}",
        "task": "t",
        "input": text,
        "target": target,
        "difficulty": {"input_length": len(text.split()), "output_length": len(target.split()), **difficulty},
    }


# -- metrics ---------------------------------------------------------------------------


def test_compare_exact_and_token_accuracy() -> None:
    assert compare("1 0 1", "1 0 1") == (True, 1.0)
    assert compare("1 0 1", "1 1 1") == (False, pytest.approx(2 / 3))
    assert compare("1 0 1", "1 0") == (False, pytest.approx(2 / 3))  # a missing position is wrong
    assert compare("1 0 1", "1 0 1 1") == (False, 1.0)  # extra tokens: not exact, positions all right
    assert compare("1 0 1", "") == (False, 0.0)
    assert compare("a b", "b a") == (False, 0.0)
    assert compare("I_JUMP I_WALK", "I_JUMP  I_WALK") == (True, 1.0)  # whitespace tokens


def test_score_by_length_and_difficulty_hand_worked() -> None:
    records = [
        rec("0 1", "1 0", depth=1),
        rec("1 1", "1 1", depth=1),
        rec("0 0 1", "1 0 0", depth=2),
        rec("1 0 1 1 0", "0 1 1 0 1", depth=2),
    ]
    predictions = ["1 0", "1 0", "1 0 0", "0 1 1 1 1"]
    s = score(records, predictions, mistakes=1)
    assert s["n"] == 4
    assert s["exact_match"] == 0.5
    # per example: 1, 1/2, 1, 4/5 (only position 4 of the last one is wrong)
    assert s["token_accuracy"] == pytest.approx((1 + 0.5 + 1 + 0.8) / 4)
    assert s["by_length"] == {
        "2": {"n": 2, "exact_match": 0.5, "token_accuracy": pytest.approx(0.75)},
        "3": {"n": 1, "exact_match": 1.0, "token_accuracy": 1.0},
        "5": {"n": 1, "exact_match": 0.0, "token_accuracy": pytest.approx(0.8)},
    }
    assert s["by_difficulty"]["depth"] == {
        "1": {"n": 2, "exact_match": 0.5, "token_accuracy": pytest.approx(0.75)},
        "2": {"n": 2, "exact_match": 0.5, "token_accuracy": pytest.approx(0.9)},
    }
    assert s["by_difficulty"]["output_length"]["5"]["exact_match"] == 0.0
    assert s["mistakes"] == [{"id": "t-1 1", "input": "1 1", "target": "1 1", "prediction": "1 0"}]
    with pytest.raises(ValueError):
        score(records, predictions[:3])


def test_buckets_bin_many_values() -> None:
    records = [rec(" ".join("1" * k), "1", carries=k) for k in range(1, 41)]
    buckets = make_buckets([records])
    assert buckets["carries"] == [1, 6, 11, 16, 21, 26, 31, 36]  # 40 values -> 8 bins of width 5
    assert bucket_label(1, buckets["carries"]) == "1-5"
    assert bucket_label(7, buckets["carries"]) == "6-10"
    assert bucket_label(40, buckets["carries"]) == "36-40"
    assert bucket_label(3, None) == "3"
    s = score(records, ["1"] * 20 + ["0"] * 20, buckets)
    assert s["by_difficulty"]["carries"]["1-5"]["exact_match"] == 1.0
    assert s["by_difficulty"]["carries"]["16-20"]["exact_match"] == 1.0
    assert s["by_difficulty"]["carries"]["21-25"]["exact_match"] == 0.0
    assert list(s["by_difficulty"]["carries"]) == ["1-5", "6-10", "11-15", "16-20", "21-25", "26-30", "31-35", "36-40"]


def test_gap_and_seed_summary() -> None:
    id_records = [rec("0 1", "1 0"), rec("1 1", "1 1"), rec("0 0", "0 0"), rec("1 0", "0 1")]
    ood_records = [rec("0 1 1", "1 1 0"), rec("1 1 0", "0 1 1")]
    ids = score(id_records, ["1 0", "1 1", "0 0", "1 1"])
    ood = score(ood_records, ["1 1 0", "1 1 1"])
    assert gap(ids, ood) == pytest.approx(0.75 - 0.5)
    summary = seed_summary(ids, ood)
    assert summary["id_exact_match"] == 0.75 and summary["ood_exact_match"] == 0.5
    assert summary["gap"] == pytest.approx(0.25)
    assert summary["id_token_accuracy"] == pytest.approx((1 + 1 + 1 + 0.5) / 4)
    assert summary["ood_token_accuracy"] == pytest.approx((1 + 2 / 3) / 2)
    assert summary["by_length"] == {"id": {"2": 0.75}, "ood": {"3": 0.5}}


def test_summaries_over_seeds() -> None:
    assert summarize([1.0, 2.0, 3.0]) == {"mean": 2.0, "std": 1.0, "min": 1.0, "max": 3.0, "n": 3}
    assert summarize([0.5]) == {"mean": 0.5, "std": 0.0, "min": 0.5, "max": 0.5, "n": 1}
    seeds = [
        {"id_exact_match": 1.0, "ood_exact_match": 0.96, "gap": 0.04, "id_token_accuracy": 1.0, "ood_token_accuracy": 0.99,
         "by_length": {"id": {"2": 1.0}, "ood": {"3": 0.96}}},
        {"id_exact_match": 1.0, "ood_exact_match": 0.5, "gap": 0.5, "id_token_accuracy": 1.0, "ood_token_accuracy": 0.8,
         "by_length": {"id": {"2": 1.0}, "ood": {"3": 0.5, "4": 0.0}}},
    ]
    a = aggregate(seeds)
    assert a["ood_solved_fraction"] == 0.5
    assert a["ood_exact_match"]["mean"] == pytest.approx(0.73)
    assert a["ood_exact_match"]["min"] == 0.5 and a["ood_exact_match"]["max"] == 0.96
    assert a["gap"]["std"] == pytest.approx(((0.04 - 0.27) ** 2 * 2) ** 0.5)
    assert a["by_length"]["ood"]["3"]["mean"] == pytest.approx(0.73)
    assert a["by_length"]["ood"]["4"] == {"mean": 0.0, "std": 0.0, "min": 0.0, "max": 0.0, "n": 1}


def novel(text: str, target: str, unseen_compounds: int | None) -> dict:
    record = rec(text, target)
    if unseen_compounds is not None:
        record["novelty"] = {"unseen_compounds": unseen_compounds, "unseen_atoms": 0}
    return record


def test_novelty_buckets() -> None:
    assert [novelty_bucket(novel("a", "b", k)) for k in (0, 1, 2, 3, 5, 40)] == ["0", "1", "2", "3+", "3+", "3+"]
    assert novelty_bucket(rec("a", "b")) is None  # records of older releases
    assert novelty_bucket({**rec("a", "b"), "novelty": None}) is None
    assert novelty_bucket({**rec("a", "b"), "novelty": {"unseen_atoms": 2}}) is None
    assert novelty_bucket({**rec("a", "b"), "novelty": {"unseen_compounds": True}}) is None
    assert novelty_bucket({**rec("a", "b"), "novelty": {"unseen_compounds": -1}}) is None


def test_score_takes_a_checkers_verdicts_for_exact_match() -> None:
    """gengap eval passes the task checker's verdicts: another correct answer counts, token accuracy still compares with the target."""
    records = [rec("0 1", "1 0", depth=1), rec("1 1", "1 1", depth=2)]
    s = score(records, ["0 1", "1 0"], mistakes=5, correct=[True, False])
    assert s["exact_match"] == 0.5 and s["token_accuracy"] == pytest.approx(0.25)
    assert s["by_difficulty"]["depth"]["1"]["exact_match"] == 1.0 and s["by_length"]["2"]["exact_match"] == 0.5
    assert [m["input"] for m in s["mistakes"]] == ["1 1"]
    with pytest.raises(ValueError):
        score(records, ["0 1", "1 0"], correct=[True])


def test_score_by_novelty_hand_worked() -> None:
    records = [
        novel("0 1", "1 0", 0),
        novel("1 1", "1 1", 1),
        novel("0 0 1", "1 0 0", 2),
        novel("1 0 1 1 0", "0 1 1 0 1", 5),
        novel("1 0", "0 1", 3),
        novel("0 1 1", "1 1 0", None),  # no novelty: not counted in any bucket
    ]
    predictions = ["1 0", "1 0", "1 0 0", "0 1 1 1 1", "0 1", "0 0 0"]
    s = score(records, predictions)
    assert s["n"] == 6 and s["exact_match"] == pytest.approx(3 / 6)
    assert list(s["by_novelty"]) == ["0", "1", "2", "3+"]
    assert s["by_novelty"] == {
        "0": {"n": 1, "exact_match": 1.0, "token_accuracy": 1.0},
        "1": {"n": 1, "exact_match": 0.0, "token_accuracy": 0.5},
        "2": {"n": 1, "exact_match": 1.0, "token_accuracy": 1.0},
        "3+": {"n": 2, "exact_match": 0.5, "token_accuracy": pytest.approx((0.8 + 1.0) / 2)},
    }
    only_some = score([novel("0 1", "1 0", 4), novel("1 1", "1 1", 4)], ["1 0", "0 0"])
    assert only_some["by_novelty"] == {"3+": {"n": 2, "exact_match": 0.5, "token_accuracy": 0.5}}  # empty buckets left out
    assert score([rec("0 1", "1 0")], ["1 0"])["by_novelty"] == {}  # no record carries novelty
    summary = seed_summary(s, only_some)
    assert summary["by_novelty"] == {"id": s["by_novelty"], "ood": only_some["by_novelty"]}


def test_novelty_aggregated_over_seeds() -> None:
    def seed(ood: dict[str, float]) -> dict:
        return {"id_exact_match": 1.0, "ood_exact_match": 0.5, "gap": 0.5, "id_token_accuracy": 1.0, "ood_token_accuracy": 0.5,
                "by_length": {"id": {}, "ood": {}},
                "by_novelty": {"id": {"0": {"n": 4, "exact_match": 1.0, "token_accuracy": 1.0}},
                               "ood": {k: {"n": 3, "exact_match": v, "token_accuracy": v} for k, v in ood.items()}}}

    old = {"id_exact_match": 1.0, "ood_exact_match": 0.5, "gap": 0.5, "id_token_accuracy": 1.0, "ood_token_accuracy": 0.5,
           "by_length": {"id": {}, "ood": {}}}  # a seed of a run made before novelty
    a = aggregate([seed({"0": 1.0, "3+": 0.2}), seed({"0": 0.8, "1": 0.5, "3+": 0.4}), old])
    assert list(a["by_novelty"]["ood"]) == ["0", "1", "3+"]
    assert a["by_novelty"]["ood"]["0"] == {"mean": pytest.approx(0.9), "std": pytest.approx(0.02 ** 0.5), "min": 0.8, "max": 1.0, "n": 2}
    assert a["by_novelty"]["ood"]["1"] == {"mean": 0.5, "std": 0.0, "min": 0.5, "max": 0.5, "n": 1}
    assert a["by_novelty"]["ood"]["3+"]["mean"] == pytest.approx(0.3)
    assert a["by_novelty"]["id"] == {"0": {"mean": 1.0, "std": 0.0, "min": 1.0, "max": 1.0, "n": 2}}
    assert aggregate([old])["by_novelty"] == {"id": {}, "ood": {}} == aggregate_novelty([])
    assert a["ood_exact_match"]["n"] == 3  # the existing figures are unchanged


# -- tokenizer -------------------------------------------------------------------------


def test_tokenizer_ids_round_trip(tmp_path: Path) -> None:
    tok = Tokenizer.build(["b a", "c", "a a"])
    assert tok.tokens == ["<pad>", "<sep>", "<end>", "a", "b", "c"]
    ids, start = tok.example("b a", "c")
    assert ids == [4, 3, 1, 5, 2] and start == 3
    assert tok.prompt("a") == [3, 1]
    assert tok.decode([5, 3]) == "c a"
    tok.save(tmp_path / "tokenizer.json")
    assert Tokenizer.load(tmp_path / "tokenizer.json") == tok
    assert json.loads((tmp_path / "tokenizer.json").read_text())["specials"] == {"pad": "<pad>", "sep": "<sep>", "end": "<end>"}
    with pytest.raises(BaselineError, match="not in the vocabulary"):
        tok.encode("a z")
    with pytest.raises(BaselineError, match="reserved"):
        Tokenizer.build(["a <sep>"])


# -- data ------------------------------------------------------------------------------


def write_parts(folder: Path, parts: dict[str, list[dict]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, rows in parts.items():
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


PARTS = {"train": [rec("0 1", "1 0")], "validation": [rec("1 1", "1 1")], "test": [rec("0 1 1", "1 1 0")]}


def test_load_release_split_dir_and_memory(tmp_path: Path) -> None:
    write_parts(tmp_path / "rel" / "data" / "rev", PARTS)
    data = load_split(tmp_path / "rel")
    assert data.name == "rev" and data.train == PARTS["train"] and data.test == PARTS["test"]
    write_parts(tmp_path / "rel" / "data" / "other", PARTS)
    with pytest.raises(BaselineError, match="choose one with --config: other, rev"):
        load_split(tmp_path / "rel")
    assert load_split(tmp_path / "rel", "other").name == "other"
    with pytest.raises(BaselineError, match="no config 'x'"):
        load_split(tmp_path / "rel", "x")
    write_parts(tmp_path / "split", PARTS)
    assert load_split(tmp_path / "split").name == "split"
    memory = load_split(PARTS)
    assert memory.name == "t" and memory.fingerprint() == data.fingerprint()
    with pytest.raises(BaselineError, match="validation part is empty"):
        load_split({**PARTS, "validation": []})
    with pytest.raises(BaselineError, match="neither a release"):
        load_split(tmp_path)
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "train.jsonl").write_text("{not json\n")
    with pytest.raises(BaselineError, match="line 1: not valid JSON"):
        load_split(tmp_path / "bad")


def test_in_memory_split_result() -> None:
    from gengap.splits import sample_length_split

    r = sample_length_split("reverse_string", (1, 4), (5, 6), {"train": 50, "validation": 10, "test": 10}, seed=0)
    data = load_split(r)
    assert data.name == "reverse_string" and len(data.test) == len(r.test)
    assert data.divergence == {
        "atom_divergence": r.report["atom_divergence"], "compound_divergence": r.report["compound_divergence"], "compounds": "lexical",
    }
    assert isinstance(data.divergence["compound_divergence"], float)


REPORT = {"atom_divergence": 0.02, "compound_divergence": 0.61, "compounds": "structural (lexical items abstracted)", "sizes": {}}
FIGURES = {"atom_divergence": 0.02, "compound_divergence": 0.61, "compounds": "structural (lexical items abstracted)"}
NONE = {"atom_divergence": None, "compound_divergence": None, "compounds": None}


def test_divergence_read_from_every_kind_of_report(tmp_path: Path) -> None:
    plain = load_split(PARTS)
    assert plain.divergence == NONE
    # a mapping with a report; the fingerprint covers the records only
    memory = load_split({**PARTS, "report": REPORT})
    assert memory.divergence == FIGURES and memory.fingerprint() == plain.fingerprint()
    # a SplitResult-like object
    class Result:
        train, validation, test = PARTS["train"], PARTS["validation"], PARTS["test"]
        report = REPORT

    assert load_split(Result()).divergence == FIGURES
    # a release: the manifest's config entry
    write_parts(tmp_path / "rel" / "data" / "rev", PARTS)
    write_parts(tmp_path / "rel" / "data" / "par", PARTS)
    assert load_split(tmp_path / "rel", "rev").divergence == NONE  # no manifest.json
    manifest = {"configs": [{"name": "par", "report": {"atom_divergence": 0.5, "compound_divergence": None, "compounds": "lexical"}},
                            {"name": "rev", "report": REPORT}]}
    (tmp_path / "rel" / "manifest.json").write_text(json.dumps(manifest))
    rev = load_split(tmp_path / "rel", "rev")
    assert rev.divergence == FIGURES and rev.fingerprint() == plain.fingerprint()
    assert load_split(tmp_path / "rel", "par").divergence == {"atom_divergence": 0.5, "compound_divergence": None, "compounds": "lexical"}
    # the manifest says which configs there are: one that cannot be read is an error
    (tmp_path / "rel" / "manifest.json").write_text("{broken")
    with pytest.raises(BaselineError, match="manifest.json: not valid JSON"):
        load_split(tmp_path / "rel", "rev")
    (tmp_path / "rel" / "manifest.json").write_text(json.dumps({"configs": {"rev": REPORT}}))
    with pytest.raises(BaselineError, match="manifest.json: has no list of configs"):
        load_split(tmp_path / "rel", "rev")
    (tmp_path / "rel" / "manifest.json").write_text(json.dumps({"configs": [{"name": "rev"}]}))
    assert load_split(tmp_path / "rel", "rev").divergence == NONE  # a report it lacks is never an error
    with pytest.raises(BaselineError, match="no config 'par'; configs: rev"):
        load_split(tmp_path / "rel", "par")  # on disk, but not a config of the manifest
    # a split directory: report.json
    write_parts(tmp_path / "split", PARTS)
    assert load_split(tmp_path / "split").divergence == NONE
    (tmp_path / "split" / "report.json").write_text(json.dumps(REPORT))
    assert load_split(tmp_path / "split").divergence == FIGURES


def test_divergence_of_tolerates_odd_reports() -> None:
    assert divergence_of(None) == NONE and divergence_of([1, 2]) == NONE
    assert divergence_of({"atom_divergence": 1, "compound_divergence": True, "compounds": 3}) == {
        "atom_divergence": 1.0, "compound_divergence": None, "compounds": None,
    }
    assert divergence_of({"atom_divergence": float("nan"), "compound_divergence": "0.3"}) == NONE


# -- report ----------------------------------------------------------------------------


def fake_results(config: str, pos: str, seeds: dict[int, tuple[float, float]], d_c: float | None = None,
                 novelty: dict[int, dict[str, float]] | None = None) -> dict:
    """results.json of a run; d_c: its divergence figures (absent when None, as in older runs);
    novelty: per seed, OOD exact match per novelty bucket (10 records in each)."""
    per_seed = []
    for seed, (id_em, ood_em) in seeds.items():
        per_seed.append({
            "seed": seed, "id_exact_match": id_em, "ood_exact_match": ood_em, "gap": id_em - ood_em,
            "id_token_accuracy": id_em, "ood_token_accuracy": ood_em,
            "by_length": {"id": {"2": id_em}, "ood": {"5": ood_em}},
        })
        if novelty is not None:
            per_seed[-1]["by_novelty"] = {"id": {}, "ood": {b: {"n": 10, "exact_match": v, "token_accuracy": v} for b, v in novelty[seed].items()}}
    results = {"config": config, "pos": pos, "preset": "tiny", "steps": 10, "per_seed": per_seed,
               "data": {"input_length": {"train": [1, 2]}}}
    if d_c is not None:
        results["divergence"] = {"atom_divergence": 0.01, "compound_divergence": d_c, "compounds": "lexical"}
    return results


def test_report_pools_seeds_across_runs(tmp_path: Path) -> None:
    runs = {
        "a": fake_results("rev", "rope", {0: (1.0, 0.5)}),
        "b": fake_results("rev", "rope", {1: (1.0, 0.3)}),
        "c": fake_results("rev", "nope", {0: (0.9, 0.96), 1: (0.9, 0.98)}),
        "d": fake_results("par", "rope", {0: (1.0, 1.0)}),
    }
    for name, results in runs.items():
        (tmp_path / "runs" / name).mkdir(parents=True)
        (tmp_path / "runs" / name / "results.json").write_text(json.dumps(results))
    rows = group_runs(list(runs.values()))
    assert [(r["config"], r["pos"], r["seeds"]) for r in rows] == [("rev", "rope", [0, 1]), ("rev", "nope", [0, 1]), ("par", "rope", [0])]
    table = markdown(rows)
    assert "| rev | rope | tiny | 10 | 2 | 1.000 ± 0.000 | 1.000 ± 0.000 | 0.400 ± 0.141 | 0.600 ± 0.141 | 0.400 ± 0.141 | n/a | 0/2 | – | n/a |" in table
    # ID exact match averaged over input lengths 0.9 < 0.95: not learned, marked beside the gap
    assert "| rev | nope | tiny | 10 | 2 | 0.900 ± 0.000 | 0.900 ± 0.000 | 0.970 ± 0.014 | -0.070 ± 0.014 † | 0.970 ± 0.014 | n/a | 2/2 | – | n/a |" in table
    text, _, plot = build_report([tmp_path / "runs"], tmp_path / "report.md")
    assert (tmp_path / "report.md").read_text() == text and "| par | rope |" in text
    assert plot == tmp_path / "report.png" and plot.stat().st_size > 1000
    # runs of older versions: no divergence, no novelty, so neither section nor its plot
    assert "compound divergence\n" not in text and "by novelty" not in text
    assert not (tmp_path / "report-divergence.png").exists() and not (tmp_path / "report-novelty.png").exists()
    with pytest.raises(BaselineError, match="not a run directory"):
        build_report([tmp_path / "report.png"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(BaselineError, match="no results.json"):
        build_report([tmp_path / "empty"])


def test_ranks_average_ties() -> None:
    assert ranks([10, 20, 20, 20, 5]) == [2.0, 4.0, 4.0, 4.0, 1.0]
    assert ranks([0.3, 0.1, 0.2]) == [3.0, 1.0, 2.0]
    assert ranks([]) == []


def test_spearman_hand_worked() -> None:
    assert spearman([1, 2, 3, 4], [10, 20, 25, 100]) == pytest.approx(1.0)  # monotone, not linear
    assert spearman([0.1, 0.5, 0.9], [0.9, 0.4, 0.0]) == pytest.approx(-1.0)
    # ties: x ranks 1, 2.5, 2.5, 4 and y ranks 1, 3, 2, 4 (means 2.5): sum dx*dy = 4.5,
    # sum dx^2 = 4.5, sum dy^2 = 5, so rho = 4.5 / sqrt(22.5) = sqrt(0.9)
    assert spearman([1, 2, 2, 3], [1, 3, 2, 4]) == pytest.approx(math.sqrt(0.9))
    # no ties, d = rank differences 0, 2, -1, -1: 1 - 6 * 6 / (4 * 15) = 0.4
    assert spearman([1, 2, 3, 4], [1, 4, 2, 3]) == pytest.approx(0.4)
    assert spearman([1, 2, 3], [5, 5, 5]) is None  # a constant side: undefined
    assert spearman([1], [2]) is None
    with pytest.raises(ValueError):
        spearman([1, 2], [1])


def report_rows() -> list[dict]:
    """Four configs x rope (D_C known for three, OOD falling with D_C), nope on two of them, novelty on one."""
    runs = [
        fake_results("low", "rope", {0: (1.0, 0.9), 1: (1.0, 0.7)}, d_c=0.1, novelty={0: {"0": 1.0, "1": 0.8}, 1: {"0": 0.9, "1": 0.5, "3+": 0.0}}),
        fake_results("mid", "rope", {0: (1.0, 0.5)}, d_c=0.4),
        fake_results("high", "rope", {0: (1.0, 0.1)}, d_c=0.7),
        fake_results("old", "rope", {0: (1.0, 0.6)}),  # a run without divergence
        fake_results("low", "nope", {0: (1.0, 0.2)}, d_c=0.1),
        fake_results("high", "nope", {0: (1.0, 0.3)}, d_c=0.7),
    ]
    return group_runs(runs)


def test_rows_divergence_points_and_correlations() -> None:
    rows = report_rows()
    low = rows[0]
    assert (low["config"], low["pos"]) == ("low", "rope")
    assert (low["compound_divergence"], low["atom_divergence"], low["compounds"]) == (0.1, 0.01, "lexical")
    old = next(r for r in rows if r["config"] == "old")
    assert (old["compound_divergence"], old["atom_divergence"], old["compounds"]) == (None, None, None)
    assert "| low | rope | tiny | 10 | 2 | 1.000 ± 0.000 | 1.000 ± 0.000 | 0.800 ± 0.141 | 0.200 ± 0.141 | 0.800 ± 0.141 | n/a | 0/2 | – | 0.100 |" in markdown(rows)
    assert markdown(rows).splitlines()[-1] == "| old | rope | tiny | 10 | 1 | 1.000 ± 0.000 | 1.000 ± 0.000 | 0.600 ± 0.000 | 0.400 ± 0.000 | 0.600 ± 0.000 | n/a | 0/1 | – | n/a |"
    points = divergence_points(rows)
    assert [(p["config"], p["model"], p["compound_divergence"]) for p in points] == [
        ("low", "rope", 0.1), ("low", "nope", 0.1), ("mid", "rope", 0.4), ("high", "rope", 0.7), ("high", "nope", 0.7),
    ]
    assert points[0]["ood_exact_match"] == pytest.approx(0.8) and points[0]["ood_std"] == pytest.approx(0.02 ** 0.5)
    correlations = divergence_correlations(points)
    assert correlations == [
        {"model": "rope", "preset": "tiny", "configs": ["low", "mid", "high"], "n": 3, "spearman": pytest.approx(-1.0)},
        {"model": "nope", "preset": "tiny", "configs": ["low", "high"], "n": 2, "spearman": None},  # under 3 configs
    ]
    section = divergence_section(rows)
    assert section.startswith("## OOD exact match vs compound divergence")
    assert "| rope | tiny | 3 | -1.000 |" in section and "| nope | tiny | 2 | n/a |" in section
    assert divergence_section([r for r in rows if r["config"] != "mid"]) is None  # only 2 configs with a known D_C


def test_rows_of_pooled_runs_keep_a_known_divergence() -> None:
    rows = group_runs([fake_results("a", "rope", {0: (1.0, 0.5)}, d_c=0.3), fake_results("a", "rope", {1: (1.0, 0.5)})])
    assert len(rows) == 1 and rows[0]["compound_divergence"] == 0.3 and rows[0]["seeds"] == [0, 1]


def test_novelty_table_and_points() -> None:
    rows = report_rows()
    points = novelty_points(rows)
    assert [(p["config"], p["model"]) for p in points] == [("low", "rope")]
    buckets = points[0]["buckets"]
    assert list(buckets) == ["0", "1", "3+"]
    assert buckets["0"] == {"mean": pytest.approx(0.95), "std": pytest.approx(0.005 ** 0.5), "seeds": 2, "records": 10}
    assert buckets["3+"] == {"mean": 0.0, "std": 0.0, "seeds": 1, "records": 10}
    table = novelty_table(rows)
    assert table.startswith("## OOD exact match by novelty")
    assert "| config | model | preset | 0 unseen | 1 unseen | 2 unseen | 3+ unseen |" in table
    assert "| low | rope | tiny | 0.950 ± 0.071 (10) | 0.650 ± 0.212 (10) | – | 0.000 ± 0.000 (10) |" in table
    assert novelty_table([r for r in rows if r["config"] != "low"]) is None


def test_report_with_divergence_and_novelty_sections(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = [
        fake_results("low", "rope", {0: (1.0, 0.9)}, d_c=0.1, novelty={0: {"0": 1.0, "2": 0.5}}),
        fake_results("mid", "rope", {0: (1.0, 0.6)}, d_c=0.4, novelty={0: {"0": 0.9, "1": 0.4}}),
        fake_results("high", "rope", {0: (1.0, 0.2)}, d_c=0.7),
    ]
    for index, results in enumerate(runs):
        (tmp_path / "runs" / str(index)).mkdir(parents=True)
        (tmp_path / "runs" / str(index) / "results.json").write_text(json.dumps(results))
    text, rows, plot = build_report([tmp_path / "runs"])
    assert plot is None and "## OOD exact match vs compound divergence" in text and "| rope | tiny | 3 | -1.000 |" in text
    assert "## OOD exact match by novelty" in text and "| mid | rope | tiny | 0.900 ± 0.000 (10) | 0.400 ± 0.000 (10) | – | – |" in text
    assert "![" not in text  # no plots without --out
    report = make_report([tmp_path / "runs"], tmp_path / "gap.md")
    assert set(report["plots"]) == {"length", "divergence", "novelty"}
    assert report["plots"]["divergence"] == tmp_path / "gap-divergence.png" and report["plots"]["novelty"] == tmp_path / "gap-novelty.png"
    for path in report["plots"].values():
        assert path.stat().st_size > 1000
    on_disk = (tmp_path / "gap.md").read_text()
    assert on_disk == report["text"]
    assert "![OOD exact match vs compound divergence](gap-divergence.png)" in on_disk and "![OOD exact match by novelty](gap-novelty.png)" in on_disk
    assert on_disk.index("## OOD exact match vs compound divergence") < on_disk.index("gap-divergence.png") < on_disk.index("## OOD exact match by novelty")
    args = make_parser().parse_args(["report", str(tmp_path / "runs"), "--out", str(tmp_path / "cli.md")])
    assert args.func(args) == 0
    assert capsys.readouterr().out.strip() == (f"wrote {tmp_path / 'cli.md'} and {tmp_path / 'cli.json'}, {tmp_path / 'cli.png'}, "
                                               f"{tmp_path / 'cli-divergence.png'}, {tmp_path / 'cli-novelty.png'}")


# -- CLI -------------------------------------------------------------------------------


def make_parser() -> argparse.ArgumentParser:
    class Strict(argparse.ArgumentParser):
        def error(self, message: str) -> None:  # type: ignore[override]
            raise BaselineError(message)

    parser = Strict(prog="gengap")
    add_commands(parser.add_subparsers(dest="command", required=True, parser_class=Strict))
    return parser


def test_cli_train_options() -> None:
    args = make_parser().parse_args([
        "train", "rel", "--config", "c", "--pos", "alibi", "--preset", "tiny", "--steps", "5", "--seeds", "0,1,2",
        "--batch-size", "8", "--lr", "0.01", "--eval-every", "2", "--out", "run", "--resume", "--d-model", "32", "--no-compile",
    ])
    assert (args.release, args.config, args.pos, args.preset, args.steps, args.seeds) == ("rel", "c", "alibi", "tiny", 5, (0, 1, 2))
    assert (args.batch_size, args.lr, args.eval_every, args.out, args.resume, args.d_model, args.compile) == (8, 0.01, 2, "run", True, 32, False)
    from gengap.baselines.cli import _settings

    assert _settings(args)["seeds"] == (0, 1, 2) and "layers" not in _settings(args)
    with pytest.raises(BaselineError):
        make_parser().parse_args(["train", "rel", "--out", "r", "--pos", "xpos"])
    with pytest.raises(BaselineError):
        make_parser().parse_args(["train", "rel", "--out", "r", "--seeds", "0,0"])
    with pytest.raises(BaselineError):
        make_parser().parse_args(["train", "rel"])  # --out is required
    assert parse_seeds("3, 1") == (3, 1)


def test_cli_report_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "results.json").write_text(json.dumps(fake_results("rev", "rope", {0: (1.0, 0.25)})))
    args = make_parser().parse_args(["report", str(tmp_path / "r")])
    assert args.func(args) == 0
    assert "| rev | rope | tiny | 10 | 1 | 1.000 ± 0.000 | 1.000 ± 0.000 | 0.250 ± 0.000 | 0.750 ± 0.000 |" in capsys.readouterr().out
    args = make_parser().parse_args(["report", str(tmp_path / "r"), "--out", str(tmp_path / "out.md")])
    assert args.func(args) == 0 and (tmp_path / "out.png").exists()
    args = make_parser().parse_args(["report", str(tmp_path / "missing")])
    with pytest.raises(BaselineError):
        args.func(args)


def test_light_modules_do_not_import_torch() -> None:
    code = (
        "import sys, gengap.baselines, gengap.baselines.cli, gengap.baselines.report, gengap.baselines.metrics, gengap.baselines.data, "
        "gengap.baselines.tokenizer, gengap.generators, gengap.splits; print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_report_pools_only_runs_of_one_setup_and_warns_on_a_seed_given_twice(tmp_path: Path) -> None:
    """A plain and a stream run of one config and seed, and runs of other step counts, are rows of their own;
    the same seed in two runs of one setup is named on stderr, one line each, with both run directories."""
    plain = fake_results("rev", "rope", {0: (1.0, 0.5)})
    stream = {**fake_results("rev", "rope", {0: (1.0, 0.1)}), "settings": {"stream": "reverse_string", "curriculum": "fixed:3"}}
    longer = {**fake_results("rev", "rope", {0: (1.0, 0.9)}), "steps": 20}
    again = fake_results("rev", "rope", {0: (1.0, 0.3), 1: (1.0, 0.7)})  # seed 0 again, with plain's setup
    for name, results in {"a-plain": plain, "b-stream": stream, "c-longer": longer, "d-again": again}.items():
        (tmp_path / "runs" / name).mkdir(parents=True)
        (tmp_path / "runs" / name / "results.json").write_text(json.dumps(results))
    report = make_report([tmp_path / "runs"])
    rows = report["rows"]
    assert [(r["model"], r["steps"], r["seeds"]) for r in rows] == [
        ("rope (steps=10, stream=none, curriculum=none)", [10], [0, 1]),
        ("rope (steps=10, stream=reverse_string, curriculum=fixed:3)", [10], [0]),
        ("rope (steps=20, stream=none, curriculum=none)", [20], [0]),
    ]
    assert rows[0]["aggregate"]["ood_exact_match"]["mean"] == pytest.approx(0.5)  # seed 0 of d-again (0.3) and seed 1 (0.7)
    assert rows[1]["aggregate"]["ood_exact_match"]["mean"] == pytest.approx(0.1)
    assert report["warnings"] == [
        f"rev rope (steps=10, stream=none, curriculum=none) tiny: seed 0 is in 2 runs of the same setup "
        f"({tmp_path / 'runs' / 'a-plain'}, {tmp_path / 'runs' / 'd-again'}); the report counts the last one"
    ]
    assert group_runs([plain, fake_results("rev", "rope", {1: (1.0, 0.3)})])[0]["model"] == "rope"  # one setup: no label
    proc = subprocess.run([sys.executable, "-m", "gengap", "report", str(tmp_path / "runs")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == ["gengap: warning: " + report["warnings"][0]]
    assert proc.stdout.count("| rev | rope (") == 3
