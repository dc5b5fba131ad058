"""Fresh test parts (gengap.fresh, gengap.fresh_verify, `gengap fresh`): never an input of the
release, a report that matches its records, the same bytes for the same seed, the config's own
test rule, a plain one-line refusal where a config cannot draw more."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gengap.cli import main
from gengap.fresh import FRESH, FreshError, TrainItems, config_rule, draw_fresh, part_figures, write_fresh
from gengap.fresh_verify import verify_fresh
from gengap.generators.jsonl import SEAL, sealed_json_text
from gengap.generators.markers import bare_input
from gengap.generators.seeding import fresh_seed
from gengap.release import write_release
from gengap.release_view import ReleaseReadError, read_release
from gengap.splits.atoms import record_compounds
from gengap.splits.base import divergence_report
from gengap.splits.novelty import annotate, novelty_summary
from gengap.suite import parse_suite
from tests.output_helpers import gengap
from tests.test_graded_mcd import measured

SUITE = """\
name: fresh-tests
version: 0.1.0
seed: 3
license: mit
created: "2026-12-01"
entries:
  - {task: parity_check, split: length, train_range: [1, 6], test_range: [7, 12], sizes: {train: 150, validation: 20, test: 40}}
  - {task: multiplication, split: easy_to_hard, strategy: difficulty, level_max: 2, test_levels: [3, 4], sizes: {train: 100, test: 30}}
  - {task: reverse_string, split: pool_length, strategy: length, params: {max_length: 12}, pool: {n: 400}, options: {train_max: 6}}
  - {task: modular_operation, split: holdout, params: {p: 23}, pool: all, options: {atom: "5"}, sizes: {test: 20}}
  - {task: scan, split: mcd, pool: {n: 800}, options: {train_size: 400, test_size: 80, steps: 3000}}
  - {task: parity_check, split: iid_cue, strategy: iid, pool: {n: 100}, cue: {train: 0.9, test: 0.5}}
"""
DRAWABLE = ["parity_check-length", "multiplication-easy_to_hard", "reverse_string-pool_length", "modular_operation-holdout", "scan-mcd"]


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fresh") / "release"
    write_release(parse_suite(SUITE), root, cards=False)
    return root


@pytest.fixture(scope="module")
def view(release: Path):
    return read_release(release, keep=tuple(DRAWABLE))


def release_inputs(root: Path) -> set[str]:
    """Every input of every data file, read with json (not gengap's reader), cue and marker removed."""
    return {bare_input(json.loads(line)["input"]) for path in (root / "data").rglob("*.jsonl") for line in path.read_text().splitlines()}


def novelty_share(train: list[dict], test: list[dict]) -> float:
    """Share of test records with a compound no train record has, computed from the atom functions alone."""
    seen = set().union(*(record_compounds(r) for r in train))
    return sum(1 for r in test if set(record_compounds(r)) - seen) / len(test)


@settings(max_examples=6, deadline=None)
@given(config=st.sampled_from(DRAWABLE[:4]), seed=st.integers(0, 10**6))
def test_a_fresh_part_never_holds_an_input_of_the_release(release: Path, view, config: str, seed: int) -> None:
    part = draw_fresh(view, config, 15, seed)
    inputs = [r["input"] for r in part.records]
    assert len(inputs) == 15 == len(set(inputs))
    assert not set(inputs) & release_inputs(release)


def test_the_report_matches_its_records(release: Path, view) -> None:
    inputs = release_inputs(release)
    for config in DRAWABLE:
        part = draw_fresh(view, config, 25, 1)
        report, records = part.report, part.records
        assert not {r["input"] for r in records} & inputs
        train, cited = view.part(config, "train"), view.part(config, "test")
        assert report["file"]["rows"] == len(records) == report["fresh"]["size"] == 25
        assert report["cited"]["size"] == len(cited)
        for name, rows in (("fresh", records), ("cited", cited)):
            da, dc, unseen = measured(train, rows)
            assert report[name]["atom_divergence"] == pytest.approx(da, abs=1e-6)
            assert report[name]["compound_divergence"] == pytest.approx(dc, abs=1e-6)
            assert report[name]["unseen_atom_count"] == unseen
            assert report[name]["novelty"]["with_unseen_compound"] == pytest.approx(novelty_share(train, rows), abs=1e-6)
            for feature, histogram in report[name]["difficulty"].items():
                assert histogram == {str(v): c for v, c in sorted(Counter(r["difficulty"][feature] for r in rows).items())}
        seen = set().union(*(record_compounds(r) for r in train))
        assert [r["novelty"]["unseen_compounds"] for r in records] == [len(set(record_compounds(r)) - seen) for r in records]
        assert report["release"]["fingerprint"] == f"sha256:{view.fingerprint}"


@pytest.mark.parametrize("sides", [(1, 1), (0, 1), (1, 0), (0, 0)])
def test_part_figures_are_those_of_a_split_report_even_with_an_empty_side(view, sides) -> None:
    """TrainItems counted once give what divergence_report and annotate give (None and 0 for an empty side)."""
    train, test = view.part("scan-mcd", "train")[:60 * sides[0]], view.part("scan-mcd", "test")[:30 * sides[1]]
    figures, novelty = part_figures(TrainItems.of(train, False), test)
    expected = divergence_report(train, test)
    for key in ("atom_divergence", "compound_divergence", "unseen_atom_count"):
        assert figures[key] == pytest.approx(expected[key], abs=1e-6) if expected[key] is not None else figures[key] is None
    annotated = annotate({"train": train, "test": test})["test"]
    assert novelty == [r["novelty"] for r in annotated]
    assert figures["novelty"] == novelty_summary(annotated)


def test_the_same_seed_gives_the_same_bytes_and_another_seed_other_records(release: Path, view, tmp_path: Path) -> None:
    first, again = draw_fresh(view, "scan-mcd", 20, 7), draw_fresh(release, "scan-mcd", 20, 7)
    assert first.data() == again.data() and first.report_text() == again.report_text()
    first, other = draw_fresh(view, "reverse_string-pool_length", 20, 7), draw_fresh(view, "reverse_string-pool_length", 20, 8)
    assert {r["input"] for r in other.records} != {r["input"] for r in first.records}
    assert other.report["derived_seed"] != first.report["derived_seed"]
    here = draw_fresh(release, "parity_check-length", 30, 5)
    result = gengap("fresh", str(release), "--config", "parity_check-length", "--n", "30", "--seed", "5", "--out", str(tmp_path / "cli"),
                    env={"PYTHONHASHSEED": "7"})  # through the command, in a process with another hash seed
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "cli" / "test.jsonl").read_bytes() == here.data()
    assert (tmp_path / "cli" / "fresh.json").read_text() == here.report_text()


def test_fresh_records_follow_the_configs_test_rule(view) -> None:
    lengths = {r["difficulty"]["input_length"] for r in draw_fresh(view, "parity_check-length", 60, 2).records}
    assert lengths <= set(range(7, 13)) and len(lengths) > 3
    pool = draw_fresh(view, "reverse_string-pool_length", 40, 2).records
    assert all(7 <= r["difficulty"]["input_length"] <= 12 for r in pool)
    held = draw_fresh(view, "modular_operation-holdout", 10, 2).records
    assert all("5" in r["input"].split() for r in held)
    digits = Counter((r["difficulty"]["digits_a"], r["difficulty"]["digits_b"]) for r in draw_fresh(view, "multiplication-easy_to_hard", 30, 2).records)
    assert digits == {(3, 3): 15, (4, 4): 15}  # levels 3 and 4 of multiplication, evenly


def test_a_fresh_mcd_part_is_chosen_against_the_fixed_train_part(view) -> None:
    part = draw_fresh(view, "scan-mcd", 40, 0)
    report = part.report
    assert len(part.records) == 40 and report["fresh"]["unseen_atom_count"] == 0
    unique = view.config("scan-mcd")["report"]["search"]["pool_unique_inputs"]  # the cited search left unique - 400 unused for 80 test records
    assert report["search"]["candidates_per_test_record"] == pytest.approx((unique - 400) / 80)
    assert report["search"]["candidates"] == int(40 * (unique - 400) / 80 + 0.999999)
    far = report["fresh"]["compound_divergence"] >= report["cited"]["compound_divergence"] - 0.01
    assert far or any("did not reach" in w for w in report["warnings"])


def test_an_enumeration_used_up_is_said_in_one_line(view) -> None:
    free = len({r["input"] for r in draw_fresh(view, "modular_operation-holdout", 1, 0).records})
    assert free == 1
    # 45 inputs of p = 23 use the token 5; the release holds 20 of them as test records and none elsewhere
    with pytest.raises(FreshError, match=r"only 25 of its 45 test-side inputs lie outside the release, fewer than the 26 asked for: the enumeration is used up"):
        draw_fresh(view, "modular_operation-holdout", 26, 0)
    assert len(draw_fresh(view, "modular_operation-holdout", 25, 0).records) == 25


def test_configs_without_a_fresh_part_are_refused_in_one_line(view) -> None:
    with pytest.raises(FreshError, match="shortcut cues"):
        config_rule(view.entry("parity_check-iid_cue"))
    entries = parse_suite("""\
name: refusals
version: 0.1.0
seed: 1
license: mit
entries:
  - {task: string_rewrite, split: rule_holdout, params: {systems: 8}, pool: {n: 50}}
  - {task: scan, split: capped, strategy: holdout, pool: all, options: {atom: jump}}
  - split: unseen
    tasks: [{task: parity_check}, {task: reverse_string}]
    pool: {n: 20}
    strategy: task_holdout
    options: {test_tasks: [reverse_string]}
""")["entries"]
    with pytest.raises(FreshError, match="rule_holdout sends a record to test by the whole pool"):
        config_rule(entries[0])
    assert config_rule(entries[1]).accept({"task": "scan", "input": "jump", "structure": ["U -> jump", "jump"], "difficulty": {}}) in (True, False)
    with pytest.raises(FreshError, match="multi-task config"):
        config_rule(entries[2])
    with pytest.raises(ReleaseReadError, match="has no config 'nope'"):
        view.entry("nope")


def test_a_damaged_release_is_refused(release: Path, tmp_path: Path) -> None:
    copy = tmp_path / "release"
    shutil.copytree(release, copy)
    path = copy / "data" / "parity_check-length" / "validation.jsonl"
    path.write_bytes(path.read_bytes().replace(b'"input":"', b'"input":"1 ', 1))
    with pytest.raises(ReleaseReadError, match="validation.jsonl is not the file manifest.json lists"):
        read_release(copy)


def test_verify_accepts_a_fresh_part_and_finds_what_was_changed(release: Path, tmp_path: Path) -> None:
    out = tmp_path / "fresh"
    write_fresh(draw_fresh(release, "reverse_string-pool_length", 30, 4), out)
    assert verify_fresh(out, release, regenerate=True).ok
    report = json.loads((out / "fresh.json").read_text())
    cited = (release / "data" / "reverse_string-pool_length" / "test.jsonl").read_text().splitlines()[0]
    lines = (out / "test.jsonl").read_text().splitlines()
    tampered = tmp_path / "tampered"
    shutil.copytree(out, tampered)
    (tampered / "test.jsonl").write_text("\n".join([cited, *lines[1:]]) + "\n")
    problems = verify_fresh(tampered, release).problems
    assert any("sha256" in p for p in problems) and any("1 inputs occur in the release" in p for p in problems)
    report["fresh"]["novelty"]["with_unseen_compound"] = 0.5
    (tampered / "test.jsonl").write_text("\n".join(lines) + "\n")
    (tampered / "fresh.json").write_text(json.dumps(report, indent=2) + "\n")  # not resealed (issue 55, case 5)
    problems = verify_fresh(tampered, release).problems
    assert problems == [f"{tampered}/fresh.json was edited since gengap wrote it (its seal is not the sha256 of its text)",
                        "fresh.json: its figures are not those of its records (first at fresh.novelty.with_unseen_compound)"]
    (tampered / "fresh.json").write_text(resealed(report))  # a forger who reseals: the figures still show
    assert verify_fresh(tampered, release).problems == ["fresh.json: its figures are not those of its records (first at fresh.novelty.with_unseen_compound)"]
    report = json.loads((out / "fresh.json").read_text())
    report["seed"] = 5  # a part that its seed does not give
    (tampered / "fresh.json").write_text(resealed(report))
    assert [p for p in verify_fresh(tampered, release).problems if "its derived seed" in p]
    report["derived_seed"] = fresh_seed(int(read_release(release).config("reverse_string-pool_length")["seed"]), 5)
    (tampered / "fresh.json").write_text(resealed(report))  # resealed, with the seed's derived seed: only a redraw shows
    assert verify_fresh(tampered, release).ok
    assert verify_fresh(tampered, release, regenerate=True).problems == ["regenerate: test.jsonl differs from a redraw", "regenerate: fresh.json differs from a redraw"]
    (tampered / "notes.txt").write_text("mine")
    assert verify_fresh(tampered, release).extra == ["notes.txt"]


def resealed(report: dict) -> str:
    """fresh.json's text for report, sealed as gengap seals it (what a forger can do: the seal is no secret)."""
    return sealed_json_text({key: value for key, value in report.items() if key != SEAL}, 2)


def refused(capsys: pytest.CaptureFixture[str], fragment: str, *argv: str) -> None:
    """`gengap ARGV` run in this process exits 2 with one line on stderr holding fragment."""
    capsys.readouterr()
    assert main(list(argv)) == 2
    err = capsys.readouterr().err
    assert err.startswith("gengap: error: ") and err.count("\n") == 1 and fragment in err, err


def test_the_command_line(release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, other = tmp_path / "fresh", tmp_path / "x"
    draw = ["fresh", str(release), "--seed", "1", "--out"]
    assert main([*draw, str(out), "--config", "modular_operation-holdout", "--n", "5"]) == 0
    assert "fresh modular_operation-holdout: 5 test records, none in the release sha256:" in capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir()) == ["fresh.json", "test.jsonl"]
    assert main(["verify", str(out), "--release", str(release), "--regenerate"]) == 0
    assert "its report matches its records; it matches a redraw from its seed" in capsys.readouterr().out
    refused(capsys, "is a fresh test part: give --release RELEASE", "verify", str(out))
    refused(capsys, "--release is for a fresh test part", "verify", str(release), "--release", str(release))
    refused(capsys, "the enumeration is used up", *draw, str(other), "--config", "modular_operation-holdout", "--n", "30")
    refused(capsys, "has no config 'nope'", *draw, str(other), "--config", "nope", "--n", "3")
    refused(capsys, "--n must be at least 1", *draw, str(other), "--config", "scan-mcd", "--n", "0")
    assert not other.exists()
    refused(capsys, "is not empty (use --force", *draw, str(out), "--config", "parity_check-length", "--n", "3")
    assert main([*draw, str(out), "--config", "parity_check-length", "--n", "3", "--force"]) == 0
    (out / "mine.txt").write_text("keep")
    refused(capsys, "'mine.txt' in it is not one its fresh.json accounts for", *draw, str(out), "--config", "parity_check-length", "--n", "3", "--force")
    (out / "mine.txt").unlink()
    (out / "test.jsonl").write_text((out / "test.jsonl").read_text() + "\n")  # the user's edit of gengap's file
    refused(capsys, "'test.jsonl' in it is not the one its fresh.json lists", *draw, str(out), "--config", "parity_check-length", "--n", "3", "--force")
    (out / "test.jsonl").unlink()
    edited = {**json.loads((out / "fresh.json").read_text()), "seed": 99}  # an edited marker (its old seal kept) is not gengap's
    (out / "fresh.json").write_text(json.dumps(edited, indent=2) + "\n")
    refused(capsys, "vouched for by no hash", *draw, str(out), "--config", "parity_check-length", "--n", "3", "--force")
    assert (out / "fresh.json").exists()
    other.mkdir()
    (other / "fresh.json").write_text(json.dumps({"format": "something else"}))
    refused(capsys, "is not the fresh.json of a gengap fresh test part", *draw, str(other), "--config", "parity_check-length", "--n", "3", "--force")
    assert FRESH.marker == "fresh.json" and (other / "fresh.json").exists()
