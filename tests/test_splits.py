"""Split strategies: reports agree with the written files; zero overlap; ranges hold."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from gengap.generators import get_task
from gengap.cli import main
from gengap.splits import SplitError, generate_records, sample_length_split, sample_level_split, split
from gengap.splits.atoms import record_atoms, record_compounds, sum_counters
from gengap.splits.divergence import atom_divergence, compound_divergence


@pytest.fixture(scope="module")
def pool() -> list[dict]:
    task = get_task("addition")
    return generate_records("addition", task.make_params({"max_digits_a": 6, "max_digits_b": 6}), 3000, 11)


def read(path: Path) -> list[dict]:
    return [json.loads(l) for l in path.read_text().splitlines()]


def assert_report_matches(report: dict, parts: dict[str, list[dict]]) -> None:
    assert report["sizes"] == {name: len(rows) for name, rows in parts.items()}
    train_inputs = {r["input"] for r in parts["train"] + parts["validation"]}
    assert report["overlap"] == 0
    assert not any(r["input"] in train_inputs for r in parts["test"])
    for name, rows in parts.items():
        summary = report["parts"][name]
        assert summary["size"] == len(rows)
        for feature, (lo, hi) in summary["ranges"].items():
            values = [r["difficulty"][feature] for r in rows]
            assert (min(values), max(values)) == (lo, hi)
        assert summary["duplicate_inputs"] == len(rows) - len({r["input"] for r in rows})
    if parts["train"] and parts["test"]:
        a_train = sum_counters([record_atoms(r) for r in parts["train"]])
        a_test = sum_counters([record_atoms(r) for r in parts["test"]])
        assert report["atom_divergence"] == pytest.approx(atom_divergence(a_train, a_test), abs=5e-7)  # reports round to 6 places
        c_train = sum_counters([record_compounds(r) for r in parts["train"]])
        c_test = sum_counters([record_compounds(r) for r in parts["test"]])
        assert report["compound_divergence"] == pytest.approx(compound_divergence(c_train, c_test), abs=5e-7)
        assert report["unseen_atom_count"] == len(set(a_test) - set(a_train))


@pytest.mark.parametrize(
    "strategy, options",
    [
        ("iid", {"test_fraction": 0.25}),
        ("length", {"by": "input_length", "train_max": 9}),
        ("length", {"by": "output_length", "train_max": 4, "test_min": 6}),
        ("difficulty", {"feature": "carries", "train_max": 1}),
        ("holdout", {"atom": "7+3"}),
    ],
)
@pytest.mark.smoke
def test_strategies_through_the_cli(pool: list[dict], tmp_path: Path, strategy: str, options: dict) -> None:
    source = tmp_path / "pool.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in pool))
    out = tmp_path / "out"
    args = ["split", str(source), "--strategy", strategy, "--seed", "4"]
    for key, value in options.items():
        args += ["--option", f"{key}={value}"]
    args += ["--out", str(out)]
    assert main(args) == 0
    parts = {name: read(out / f"{name}.jsonl") for name in ("train", "validation", "test")}
    report = json.loads((out / "report.json").read_text())
    assert report["strategy"] == strategy
    assert_report_matches(report, parts)
    assert parts["test"] and parts["train"] and parts["validation"]
    train_side = len(parts["train"]) + len(parts["validation"])
    assert abs(len(parts["validation"]) - 0.1 * train_side) <= max(3, 0.02 * train_side)
    if strategy == "length":
        feature = options["by"]
        assert max(r["difficulty"][feature] for r in parts["train"] + parts["validation"]) <= options["train_max"]
        assert min(r["difficulty"][feature] for r in parts["test"]) >= options.get("test_min", options["train_max"] + 1)
    if strategy == "difficulty":
        assert all(r["difficulty"]["carries"] <= 1 for r in parts["train"])
        assert all(r["difficulty"]["carries"] >= 2 for r in parts["test"])
    if strategy == "holdout":
        assert all({"7", "3"} <= set(r["input"].split()) for r in parts["test"])
        assert not any({"7", "3"} <= set(r["input"].split()) for r in parts["train"])
    # the same split again gives the same bytes
    again = tmp_path / "again"
    assert main(args[:-1] + [str(again)]) == 0
    for name in ("train.jsonl", "validation.jsonl", "test.jsonl", "report.json"):
        assert (out / name).read_bytes() == (again / name).read_bytes()
    # the divergence command recomputes the report's figures from the files
    assert main(["divergence", str(out / "train.jsonl"), str(out / "test.jsonl"), "--json"]) == 0


def test_overlapping_inputs_are_removed_from_test() -> None:
    task = get_task("parity_check")
    records = generate_records("parity_check", task.make_params({"max_length": 4}), 400, 2)
    result = split(records, "iid", {"test_fraction": 0.5}, seed=1)
    train_inputs = {r["input"] for r in result.train + result.validation}
    assert not any(r["input"] in train_inputs for r in result.test)
    assert result.report["overlap"] == 0
    assert result.report["parts"]["train"]["duplicate_inputs"] > 0  # reported, not removed


def test_holdout_keeps_the_bare_primitive_in_train_repeated() -> None:
    records = [
        {"id": f"x-{i}", "task": "unknown_task", "input": text, "target": "t", "difficulty": {"input_length": len(text.split()), "output_length": 1}}
        for i, text in enumerate(["jump", "jump twice", "walk", "walk twice", "jump and walk", "run"])
    ]
    result = split(records, "holdout", {"atom": "jump", "primitive_repeats": 5, "validation_fraction": 0.0})
    assert sorted(r["input"] for r in result.test) == ["jump and walk", "jump twice"]
    assert Counter(r["input"] for r in result.train)["jump"] == 5
    assert result.report["parts"]["train"]["duplicate_inputs"] == 4


@pytest.mark.smoke
def test_sampled_length_split_draws_each_side_from_its_range() -> None:
    result = sample_length_split("reverse_string", (1, 40), (41, 100), {"train": 300, "validation": 30, "test": 200}, seed=3)
    assert result.report["sizes"] == {"train": 300, "validation": 30, "test": 200}
    assert max(r["difficulty"]["input_length"] for r in result.train + result.validation) <= 40
    assert min(r["difficulty"]["input_length"] for r in result.test) >= 41
    again = sample_length_split("reverse_string", (1, 40), (41, 100), {"train": 300, "validation": 30, "test": 200}, seed=3)
    assert again.train == result.train and again.test == result.test


def test_sampled_level_split_is_easy_to_hard() -> None:
    result = sample_level_split("addition", 3, {"train": 300, "validation": 30, "test": 140}, seed=2)
    assert max(r["difficulty"]["digits_a"] for r in result.train) <= 3
    assert min(r["difficulty"]["digits_a"] for r in result.test) >= 4


@pytest.mark.parametrize(
    "strategy, options, message",
    [
        ("length", {}, "train_max"),
        ("length", {"train_max": 10, "test_min": 5}, "overlap"),
        ("holdout", {}, "exactly one"),
        ("holdout", {"atom": "zzz"}, "no example contains"),
        ("difficulty", {"feature": "nonexistent", "train_max": 1}, "no difficulty feature"),
        ("mcd", {"train_size": 10**6, "test_size": 10}, "exceeds the pool"),
        ("difficulty", {"level_max": 3}, "sample_level_split"),
    ],
)
def test_impossible_splits_are_errors(pool: list[dict], strategy: str, options: dict, message: str) -> None:
    with pytest.raises(SplitError, match=message):
        split(pool, strategy, options)


def test_split_cli_errors_leave_no_directory(pool: list[dict], tmp_path: Path) -> None:
    source = tmp_path / "pool.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in pool[:50]))
    out = tmp_path / "out"
    for args in (
        ["--strategy", "nope"],
        ["--strategy", "iid", "--option", "test_fraction=5"],
        ["--strategy", "iid", "--option", "bogus=1"],
        ["--strategy", "length"],
    ):
        assert main(["split", str(source), *args, "--out", str(out)]) == 2
        assert not out.exists()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1}\n')
    assert main(["split", str(bad), "--strategy", "iid", "--out", str(out)]) == 2
    assert not out.exists()


@pytest.fixture(scope="module")
def scan_pool() -> list[dict]:
    task = get_task("scan")
    return list(task.enumerate(task.default_params()).records("scan"))


def test_scan_length_split_reproduces_the_published_split(scan_pool: list[dict]) -> None:
    result = split(scan_pool, "length", {"by": "output_length", "train_max": 22, "test_min": 24}, seed=0)
    train_side = result.train + result.validation
    assert (len(train_side), len(result.test)) == (16990, 3920)
    assert {r["input"] for r in train_side} == {r["input"] for r in scan_pool if len(r["target"].split()) <= 22}
    assert {r["input"] for r in result.test} == {r["input"] for r in scan_pool if len(r["target"].split()) >= 24}
    assert result.report["unused"] == 0 and result.report["overlap"] == 0


def test_scan_addprim_jump_reproduces_the_published_split(scan_pool: list[dict]) -> None:
    result = split(scan_pool, "holdout", {"atom": "jump", "primitive_repeats": 1467}, seed=0)
    train_side = result.train + result.validation
    assert len(result.test) == 7706 and len(train_side) == 14670
    assert Counter(r["input"] for r in result.train)["jump"] == 1467
    assert not any("jump" in r["input"].split() for r in train_side if r["input"] != "jump")
    assert all("jump" in r["input"].split() for r in result.test)
    assert result.report["unseen_atom_count"] == 0  # "jump" itself is seen, alone


def test_scan_addprim_turn_left(scan_pool: list[dict]) -> None:
    result = split(scan_pool, "holdout", {"atom": "D -> turn left", "primitive": "turn left", "primitive_repeats": 1}, seed=0)
    assert len(result.test) == 1208
    assert all("turn left" in r["input"] for r in result.test)


@pytest.mark.slow  # the full 8,000,000-step search (about 45 s)
def test_scan_mcd_reaches_the_published_divergence_and_files_agree(scan_pool: list[dict], tmp_path: Path) -> None:
    source = tmp_path / "scan.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in scan_pool))
    out = tmp_path / "mcd"
    options = ["train_size=8365", "test_size=1045", "validation_fraction=0"]
    args = ["split", str(source), "--strategy", "mcd", "--seed", "0", "--out", str(out)]
    for option in options:
        args += ["--option", option]
    assert main(args) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["sizes"] == {"train": 8365, "validation": 0, "test": 1045}
    assert report["atom_divergence"] <= 0.02
    assert report["compound_divergence"] >= 0.75  # the issue-10 target (seed 0 reaches 0.7744)
    assert report["unseen_atom_count"] == 0 and report["overlap"] == 0
    from gengap.splits.base import divergence_report

    recomputed = divergence_report(read(out / "train.jsonl"), read(out / "test.jsonl"))
    assert recomputed["atom_divergence"] == pytest.approx(report["atom_divergence"], abs=1e-12)
    assert recomputed["compound_divergence"] == pytest.approx(report["compound_divergence"], abs=1e-12)
    random = split(scan_pool[: 8365 + 1045], "iid", {"test_fraction": 1045 / 9410, "validation_fraction": 0}, seed=0)
    assert random.report["compound_divergence"] < 0.05


def test_structural_compounds_for_mcd(tmp_path: Path) -> None:
    """abstract_lexical: compounds without lexical items, in the search, the report and `divergence`."""
    task = get_task("pcfg_set")
    pool = generate_records("pcfg_set", task.default_params(), 2000, 5)
    options = {"train_size": 800, "test_size": 100, "steps": 20000, "abstract_lexical": True, "validation_fraction": 0}
    mcd = split(pool, "mcd", options, seed=1)
    random = split(pool[:900], "iid", {"test_fraction": 100 / 900, "validation_fraction": 0, "abstract_lexical": True}, seed=1)
    assert mcd.report["compounds"].startswith("structural")
    assert mcd.report["atom_divergence"] <= 0.02
    assert mcd.report["compound_divergence"] > random.report["compound_divergence"] + 0.1
    lexical = split(pool[:900], "iid", {"test_fraction": 100 / 900, "validation_fraction": 0}, seed=1)
    assert lexical.report["compound_divergence"] > random.report["compound_divergence"]  # symbols make compounds rare
    for name, rows in (("train", mcd.train), ("test", mcd.test)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    from gengap.splits.base import divergence_report

    again = divergence_report(mcd.train, mcd.test, abstract_lexical=True)
    assert again["compound_divergence"] == pytest.approx(mcd.report["compound_divergence"], abs=1e-12)
    assert main(["divergence", str(tmp_path / "train.jsonl"), str(tmp_path / "test.jsonl"), "--abstract-lexical"]) == 0


def test_reports_warn_when_train_and_test_must_overlap() -> None:
    result = sample_length_split("parity_check", (1, 3), (4, 5), {"train": 100, "validation": 0, "test": 100}, seed=1)
    warnings = " ".join(result.report["warnings"])
    assert "only 14 distinct inputs" in warnings  # 2 + 4 + 8 strings of length 1..3
    assert "only 48 distinct inputs" in warnings  # 16 + 32 strings of length 4..5
    # modular_operation's levels grow p, so small inputs such as "1 + 1" occur at every level
    overlapping = sample_level_split("modular_operation", 3, {"train": 300, "validation": 0, "test": 300}, seed=1)
    assert overlapping.report["removed_overlap"] > 0
    assert any("removed" in w for w in overlapping.report["warnings"])
    assert overlapping.report["overlap"] == 0
    roomy = sample_length_split("parity_check", (30, 40), (41, 50), {"train": 100, "validation": 0, "test": 100}, seed=1)
    assert roomy.report["warnings"] == []
