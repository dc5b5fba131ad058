"""Releases: build, verify, tamper detection, regenerate, worker independence, bad configs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from gengap.cli import main

SUITE = """\
name: tiny-suite
version: 0.0.1
seed: 3
license: mit
created: "2026-01-01"
description: a tiny suite for tests
entries:
  - {task: parity_check, split: length, train_range: [1, 8], test_range: [9, 12], sizes: {train: 60, validation: 10, test: 20}}
  - {task: scan, split: length, params: {max_actions: 8}, pool: all, options: {by: output_length, train_max: 4, test_min: 6}, sizes: {train: 80, validation: 10, test: 30}}
  - {task: addition, split: iid, pool: {n: 120}, options: {test_fraction: 0.3}}
  - {task: pcfg_set, split: holdout, pool: {n: 300}, options: {template: "X -> reverse X(X -> reverse X(_))", validation_fraction: 0.2}}
  - {task: multiplication, split: easy_to_hard, strategy: difficulty, level_max: 2, test_levels: [3], sizes: {train: 40, validation: 5, test: 15}}
  - {task: scan, split: mcd, params: {max_actions: 8}, pool: all, options: {train_size: 120, test_size: 40, steps: 3000}}
"""


@pytest.fixture(scope="module")
def suite_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("suite") / "tiny.yaml"
    path.write_text(SUITE)
    return path


@pytest.fixture(scope="module")
def release(suite_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("rel") / "release"
    assert main(["release", str(suite_file), "--out", str(out), "--workers", "1"]) == 0
    return out


@pytest.mark.smoke
def test_layout_and_manifest(release: Path) -> None:
    for name in ("README.md", "croissant.json", "CITATION.cff", "manifest.json", "SHA256SUMS"):
        assert (release / name).is_file(), name
    manifest = json.loads((release / "manifest.json").read_text())
    names = [c["name"] for c in manifest["configs"]]
    assert names == [
        "parity_check-length", "scan-length", "addition-iid", "pcfg_set-holdout", "multiplication-easy_to_hard", "scan-mcd",
    ]  # fmt: skip
    for config in manifest["configs"]:
        for part in ("train", "validation", "test"):
            info = config["files"][part]
            data = (release / info["path"]).read_bytes()
            assert info["rows"] == len(data.splitlines()) == config["report"]["sizes"][part]
            assert info["bytes"] == len(data)
        assert config["report"]["overlap"] == 0
    parity = manifest["configs"][0]
    assert parity["report"]["sizes"] == {"train": 60, "validation": 10, "test": 20}
    assert list((release / "plots").glob("*.png"))
    assert manifest["suite"]["name"] == "tiny-suite" and manifest["created"] == "2026-01-01"


@pytest.mark.smoke
def test_verify_accepts_an_intact_release(release: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(release)]) == 0
    assert "verified" in capsys.readouterr().out


def _copy(release: Path, tmp_path: Path) -> Path:
    import shutil

    target = tmp_path / "copy"
    shutil.copytree(release, target)
    return target


@pytest.mark.smoke
@pytest.mark.parametrize("victim", ["data/addition-iid/test.jsonl", "manifest.json", "README.md", "croissant.json"])
def test_verify_rejects_a_single_byte_change(release: Path, tmp_path: Path, victim: str, capsys: pytest.CaptureFixture[str]) -> None:
    copy = _copy(release, tmp_path)
    path = copy / victim
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    assert main(["verify", str(copy)]) == 1
    assert f"changed: {victim}" in capsys.readouterr().err


def test_verify_rejects_deleted_and_added_files(release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = _copy(release, tmp_path)
    (copy / "data/parity_check-length/validation.jsonl").unlink()
    (copy / "data/extra.jsonl").write_text("{}\n")
    assert main(["verify", str(copy)]) == 1
    err = capsys.readouterr().err
    assert "missing: data/parity_check-length/validation.jsonl" in err
    assert "extra: data/extra.jsonl" in err


def test_verify_rejects_a_consistent_forgery(release: Path, tmp_path: Path) -> None:
    """Rewriting a data file and SHA256SUMS together still breaks the manifest fingerprint."""
    from gengap.release import write_checksums

    copy = _copy(release, tmp_path)
    path = copy / "data/addition-iid/train.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[1:]))
    write_checksums(copy)
    assert main(["verify", str(copy)]) == 1


def test_regenerate_matches(release: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(release), "--regenerate"]) == 0
    assert "matches a rebuild" in capsys.readouterr().out


def test_regenerate_detects_a_changed_seed(release: Path, tmp_path: Path) -> None:
    from gengap.release import write_checksums

    copy = _copy(release, tmp_path)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["suite"]["seed"] = 4
    (copy / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    write_checksums(copy)
    assert main(["verify", str(copy)]) == 0  # checksums alone cannot tell
    assert main(["verify", str(copy), "--regenerate"]) == 1


def _as_built_elsewhere(release: Path, tmp_path: Path, **fields: str) -> Path:
    """A copy of the release as another machine would have written it: manifest fields
    changed, cards rendered from that manifest, checksums recomputed."""
    from gengap.data_cards import write_cards
    from gengap.release import manifest_text, write_checksums

    copy = _copy(release, tmp_path)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest.update(fields)
    (copy / "manifest.json").write_text(manifest_text(manifest))
    write_cards(manifest, copy)
    write_checksums(copy)
    return copy


def test_regenerate_sets_the_environment_aside(release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Other gengap, numpy and Python versions: notes, not problems, when every data file matches."""
    copy = _as_built_elsewhere(release, tmp_path, python_version="3.11.99", numpy_version="1.26.4", gengap_version="0.0.9")
    assert main(["verify", str(copy)]) == 0
    capsys.readouterr()
    assert main(["verify", str(copy), "--regenerate"]) == 0
    captured = capsys.readouterr()
    assert "matches a rebuild" in captured.out
    for field, value in (("gengap_version", "0.0.9"), ("numpy_version", "1.26.4"), ("python_version", "3.11.99")):
        assert f"note: environment set aside: {field} is {value} in the release, " in captured.err
    assert "differs" not in captured.err


def test_regenerate_compares_the_rest_of_the_manifest_and_the_cards(
    release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = _as_built_elsewhere(release, tmp_path, python_version="3.11.99", description="not what the suite says")
    assert main(["verify", str(copy)]) == 0
    capsys.readouterr()
    assert main(["verify", str(copy), "--regenerate"]) == 1
    err = capsys.readouterr().err
    assert "regenerate: manifest.json differs from the rebuild at description" in err
    assert "regenerate: README.md differs from the rebuild" in err
    assert "data/" not in err  # the data files match


def test_regenerate_compares_cards_byte_for_byte(release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from gengap.release import write_checksums

    copy = _copy(release, tmp_path)
    card = copy / "CITATION.cff"
    card.write_text(card.read_text() + "# an added line\n")
    write_checksums(copy)
    assert main(["verify", str(copy)]) == 0
    capsys.readouterr()
    assert main(["verify", str(copy), "--regenerate"]) == 1
    assert "regenerate: CITATION.cff differs from the rebuild" in capsys.readouterr().err


def test_workers_give_identical_releases(suite_file: Path, release: Path, tmp_path: Path) -> None:
    out = tmp_path / "two"
    assert main(["release", str(suite_file), "--out", str(out), "--workers", "2"]) == 0
    one = json.loads((release / "manifest.json").read_text())
    two = json.loads((out / "manifest.json").read_text())
    assert one["fingerprint"] == two["fingerprint"]
    assert (release / "SHA256SUMS").read_text() == (out / "SHA256SUMS").read_text()


def test_existing_output_is_refused_unless_forced(suite_file: Path, release: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["release", str(suite_file), "--out", str(release)]) == 2
    assert "not empty" in capsys.readouterr().err


def _bad(tmp_path: Path, mutate) -> tuple[int, str]:
    data = yaml.safe_load(SUITE)
    mutate(data)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    out = tmp_path / "out"
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "gengap.cli", "release", str(path), "--out", str(out)], capture_output=True, text=True
    )
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bad.yaml"]  # no staging directory left
    lines = result.stderr.strip().splitlines()
    progress = [line for line in lines if re.fullmatch(r"gengap: \[\d+/\d+\] \S+ \(\d+\.\d s\)", line)]
    assert lines[: len(progress)] == progress  # configs built before the error (stderr is not a terminal)
    return result.returncode, "\n".join(lines[len(progress) :])


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d["entries"][0].update(task="no_such_task"), "unknown task 'no_such_task'"),
        (lambda d: d["entries"][0].update(colour="blue"), "unknown key 'colour'"),
        (lambda d: d.update(colour="blue"), "unknown key 'colour'"),
        (lambda d: d["entries"][0].update(split="../../etc"), "not a safe name"),
        (lambda d: d["entries"][0]["sizes"].update(train=-5), "sizes.train"),
        (lambda d: d["entries"][2].update(params={"max_digits_a": 0}), "out of range"),
        (lambda d: d["entries"][2].update(options={"test_fraction": 3}), "out of range"),
        (lambda d: d["entries"][0].update(test_range=[5, 20]), "overlaps"),
        (lambda d: d["entries"][1].update(split="length", task="scan", pool={"n": 10}, options={}), "train_max"),
        (lambda d: d.pop("seed"), "'seed' is a required property"),
        (lambda d: d["entries"].append(dict(d["entries"][0])), "appears twice"),
    ],
)
def test_malformed_configs_exit_2_and_leave_nothing(tmp_path: Path, mutate, message: str) -> None:
    code, err = _bad(tmp_path, mutate)
    assert code == 2, err
    assert len(err.splitlines()) == 1 and err.startswith("gengap: error:"), err
    assert message in err


def test_errors_name_the_line(tmp_path: Path) -> None:
    text = SUITE.replace("{task: addition, split: iid", "{task: addition, split: iid, bogus: 1")
    path = tmp_path / "s.yaml"
    path.write_text(text)
    from gengap.suite import SuiteError, load_suite

    with pytest.raises(SuiteError, match=r"s\.yaml line 10: entries\[2\]\.bogus: unknown key 'bogus'"):
        load_suite(path)
    path.write_text("name: [unclosed\n")
    with pytest.raises(SuiteError, match="malformed YAML"):
        load_suite(path)


def test_every_problem_of_a_suite_comes_in_one_run(tmp_path: Path) -> None:
    """A suite missing its version, seed and license, with a misspelt task, an entry without
    sizes and an unknown key: one error naming all six, in line order, each at its line."""
    from gengap.suite import SuiteError, load_suite

    path = tmp_path / "s.yaml"
    broken = (
        "name: mine\n"
        "entries:\n"
        "  - {task: parity_chek, split: length, train_range: [1, 8], test_range: [9, 12], sizes: {train: 60, test: 20}}\n"
        "  - {task: even_pairs, split: length, train_range: [1, 8], test_range: [9, 12]}\n"
        "  - {task: reverse_string, split: length, train_range: [1, 8], test_range: [9, 12], sizes: {train: 60, test: 20}, colour: blue}\n"
    )
    path.write_text(broken)
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    assert str(caught.value) == (
        f"{path}: 6 problems: line 1: suite: 'version' is a required property; line 1: suite: 'seed' is a required property; "
        "line 1: suite: 'license' is a required property; "
        "line 3: entries[0].task: unknown task 'parity_chek' (did you mean parity_check? `gengap list` shows every task); "
        "line 4: entries[1].sizes: a sampled split needs sizes.train >= 1; line 5: entries[2].colour: unknown key 'colour'"
    )
    fixed = (broken.replace("name: mine\n", "name: mine\nversion: 1.0.0\nseed: 1\nlicense: mit\n").replace("parity_chek", "parity_check")
             .replace("[9, 12]}\n", "[9, 12], sizes: {train: 60, test: 20}}\n").replace(", colour: blue", ""))
    path.write_text(fixed)  # the six fixes, made at once, are all it needed
    assert [e["name"] for e in load_suite(path)["entries"]] == ["parity_check-length", "even_pairs-length", "reverse_string-length"]


def test_default_suite_resolves() -> None:
    from gengap.suite import load_suite

    suite = load_suite()
    names = [e["name"] for e in suite["entries"]]
    for task in (
        "even_pairs", "modular_arithmetic", "parity_check", "cycle_navigation", "stack_manipulation",
        "reverse_string", "modular_arithmetic_brackets", "solve_equation", "duplicate_string",
        "missing_duplicate_string", "odds_first", "binary_addition", "binary_multiplication",
        "compute_sqrt", "bucket_sort",
    ):  # fmt: skip
        assert f"{task}-length" in names
    assert {"addition-length", "scan-length", "scan-addprim_jump", "scan-mcd", "cogs_like-pp_depth"} <= set(names)
    assert any(e["kind"] == "sampled_level" for e in suite["entries"])


def test_real_release_passes_the_format_validators(
    release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """datasets loads every config with the declared counts; mlcroissant and cffconvert validate."""
    import subprocess

    from tests.test_data_cards import _cffconvert, _mlcroissant_validate, _offline_datasets

    manifest = json.loads((release / "manifest.json").read_text())
    datasets = _offline_datasets(monkeypatch)
    for config in manifest["configs"]:
        loaded = datasets.load_dataset(str(release), config["name"], cache_dir=str(tmp_path / "cache"))
        expected = {part: info["rows"] for part, info in config["files"].items() if info["rows"] > 0}
        assert {name: len(rows) for name, rows in loaded.items()} == expected
    result = _mlcroissant_validate(release / "croissant.json")
    assert result.returncode == 0, result.stdout + result.stderr
    cff = subprocess.run([str(_cffconvert()), "--validate", "-i", str(release / "CITATION.cff")], capture_output=True, text=True)
    assert cff.returncode == 0, cff.stdout + cff.stderr


# -- plain verify: the fingerprint, the card files, every record -------------------------------


def _forge(copy: Path, victim: str, change, cards: bool) -> dict:
    """Rewrite one data file with change(records) and recompute ids, manifest, fingerprint and
    SHA256SUMS consistently (and the card files too when cards is set): a careful forger."""
    from gengap.generators import dumps_record, record_id
    from gengap.release import fingerprint, sha256_bytes, write_checksums

    path = copy / victim
    records = [json.loads(line) for line in path.read_text().splitlines()]
    records = change(records)
    for record in records:
        record["id"] = record_id(record["task"], record["input"], record["target"])
    data = "".join(dumps_record(r) + "\n" for r in records).encode()
    path.write_bytes(data)
    manifest = json.loads((copy / "manifest.json").read_text())
    info = {"sha256": sha256_bytes(data), "bytes": len(data), "rows": len(records)}
    manifest["data_files"][victim] = info
    for config in manifest["configs"]:
        for part in config["files"].values():
            if part["path"] == victim:
                part.update(info)
    manifest["fingerprint"] = fingerprint(manifest["data_files"])
    (copy / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    if cards:
        from gengap.data_cards import write_cards

        write_cards(manifest, copy)
    write_checksums(copy)
    return manifest


def _flip_first_target(records: list[dict]) -> list[dict]:
    records[0]["target"] = "1" if records[0]["target"] == "0" else "0"
    return records


def test_verify_prints_the_fingerprint(release: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = json.loads((release / "manifest.json").read_text())
    assert main(["verify", str(release)]) == 0
    out = capsys.readouterr().out
    assert f"fingerprint sha256:{manifest['fingerprint']}\n" in out
    assert f"{sum(i['rows'] for i in manifest['data_files'].values()):,} records" in out


def test_plain_verify_rejects_a_forged_target(release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A changed target with ids, manifest, fingerprint, SHA256SUMS and cards all recomputed."""
    copy = _copy(release, tmp_path)
    _forge(copy, "data/parity_check-length/test.jsonl", _flip_first_target, cards=True)
    assert main(["verify", str(copy)]) == 1
    captured = capsys.readouterr()
    assert "record: data/parity_check-length/test.jsonl line 1: target" in captured.err
    assert "is wrong" in captured.err


def test_plain_verify_rejects_cards_with_another_fingerprint(
    release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = _copy(release, tmp_path)
    old = json.loads((release / "manifest.json").read_text())["fingerprint"]
    _forge(copy, "data/addition-iid/train.jsonl", lambda records: records[1:], cards=False)
    assert main(["verify", str(copy)]) == 1
    err = capsys.readouterr().err
    for name in ("README.md", "CITATION.cff", "croissant.json"):
        assert f"{name} states fingerprint sha256:{old}" in err


def test_regenerate_catches_what_plain_verify_cannot(release: Path, tmp_path: Path) -> None:
    """Dropping a correct record and recomputing everything consistently, the split report and
    the records' novelty included, passes the plain level (each record is still a correct
    example, the report that of the files); only the rebuild shows it. Without the report
    restated, plain verify sees the difference (tests/test_verify_cross_checks.py)."""
    from tests.forgery import rehash, restate

    copy = _copy(release, tmp_path)
    _forge(copy, "data/addition-iid/train.jsonl", lambda records: records[1:], cards=True)
    assert main(["verify", str(copy)]) == 1  # the report's sizes and part summary
    restate(copy)
    rehash(copy)
    assert main(["verify", str(copy)]) == 1  # a pool of 120 records that holds 119 (gengap.contracts; issue 55, case 2)

    def one_more_unused(manifest: dict) -> None:  # what the pool's accounting counts, restated too
        config = next(c for c in manifest["configs"] if c["name"] == "addition-iid")
        config["report"]["unused"] += 1

    rehash(copy, one_more_unused)
    assert main(["verify", str(copy)]) == 0
    assert main(["verify", str(copy), "--regenerate", "--workers", "1"]) == 1


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda rs: rs + [dict(rs[0], task="even_pairs")], "is not the config's task"),
        (lambda rs: [dict(r, difficulty=dict(r["difficulty"], input_length=99)) for r in rs[:1]] + rs[1:], "input_length=99"),
    ],
)
def test_plain_verify_checks_every_record(release: Path, tmp_path: Path, change, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    copy = _copy(release, tmp_path)
    _forge(copy, "data/parity_check-length/train.jsonl", change, cards=True)
    assert main(["verify", str(copy)]) == 1
    assert message in capsys.readouterr().err


def test_plain_verify_rejects_test_inputs_seen_in_train(release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = _copy(release, tmp_path)
    train = [json.loads(l) for l in (copy / "data/scan-length/train.jsonl").read_text().splitlines()]
    _forge(copy, "data/scan-length/test.jsonl", lambda rs: rs + train[:2], cards=True)
    assert main(["verify", str(copy)]) == 1
    assert "2 test inputs also occur in train or validation" in capsys.readouterr().err


# -- verify and check_rendered piece by piece (survivors of the issue 17 mutation run) ---------


def test_first_difference_names_the_path() -> None:
    from gengap.verify import first_difference

    assert first_difference({"a": {"b": [1, {"c": 2}]}}, {"a": {"b": [1, {"c": 3}]}}) == "a.b[1].c"
    assert first_difference({"a": [1, 2, 3]}, {"a": [1]}) == "a[1]"  # the shorter list ends there
    assert first_difference({"x": 1}, {"x": 1, "y": 2}) == "y" and first_difference({"x": 1}, {"y": 1}) == "x"
    assert first_difference([1], [1.0]) == "[0]" and first_difference(1, 2) == "(top)"
    assert first_difference({"a": {"x": 1}}, {"a": {}}) == "a.x"  # a key missing below the top
    assert first_difference({"a": {"x": 1}}, {"a": [1]}) == "a" and first_difference({"a": [1]}, {"a": 5}) == "a"
    assert first_difference({"a": [1, {"b": None}]}, {"a": [1, {"b": None}]}) is None


def test_verify_counts_files_and_reads_a_damaged_checksum_file(tmp_path: Path) -> None:
    import hashlib

    from gengap.verify import verify_release

    assert verify_release(tmp_path / "nowhere").problems == [f"{tmp_path / 'nowhere'} is not a directory"]
    for name, text in (("a.txt", "one"), ("b.txt", "two")):
        (tmp_path / name).write_text(text)
    lines = "".join(f"{hashlib.sha256(t.encode()).hexdigest()}  {n}\n" for n, t in (("a.txt", "one"), ("b.txt", "two")))
    (tmp_path / "SHA256SUMS").write_bytes(lines.encode() + b"\xff\xfe not utf-8\n")
    report = verify_release(tmp_path)
    assert (report.checked, report.changed, report.extra) == (2, [], [])
    assert report.missing == ["manifest.json"] and report.problems == ["SHA256SUMS line 3 is malformed"]
    with (tmp_path / "SHA256SUMS").open("ab") as sums:  # listed and missing: still named once
        sums.write(f"{'0' * 64}  manifest.json\n".encode())
    assert verify_release(tmp_path).missing == ["manifest.json"]


def test_check_rendered_refuses_a_record_of_another_task() -> None:
    from gengap.generators import BlockPlan, dumps_record, get_task
    from gengap.release import ReleaseError, check_rendered

    task = get_task("reverse_string")
    record = next(r for b in BlockPlan("reverse_string", task.level(1), 1, 0).batches() for r in b.records("reverse_string"))
    entry = {"name": "c", "task": "parity_check"}
    message = "c: train.jsonl line 1: task 'reverse_string' is not the config's task 'parity_check' (nothing was written)"
    with pytest.raises(ReleaseError, match=f"^{re.escape(message)}$"):
        check_rendered(entry, {"train": (dumps_record(record) + "\n").encode()})


def test_entries_keep_their_test_levels_and_caps_keep_the_pool_order() -> None:
    from gengap.release import build_entry, subsample
    from gengap.suite import parse_suite

    suite = parse_suite(SUITE, "<tiny>")
    entries = {e["task"]: e for e in suite["entries"]}
    level = build_entry(entries["multiplication"], suite["seed"])
    assert level.report["options"]["test_levels"] == [3]  # not the default 3..10
    whole = build_entry(entries["addition"], suite["seed"])
    capped = subsample(whole, {"train": 5}, 1)
    assert len(whole.train) > 5 and [r["input"] for r in capped.train] == sorted(
        (r["input"] for r in capped.train), key=[r["input"] for r in whole.train].index
    )
    assert [len(p) for p in (capped.train, capped.validation, capped.test)] == [5, len(whole.validation), len(whole.test)]
    assert capped.report["capped_to"] == {"train": 5} and capped.report["sizes"]["train"] == 5


def test_regenerate_reports_cards_it_cannot_render(release: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the cards cannot be rendered (no matplotlib), --regenerate reports it: the data
    are rebuilt without cards, the cards once, from the aligned manifest."""
    from gengap import release as release_module, verify
    from gengap.release import ReleaseError

    def fail(manifest: dict, directory: Path) -> list[str]:
        raise ReleaseError("matplotlib is not installed")

    monkeypatch.setattr(release_module, "write_cards", fail)
    monkeypatch.setattr(verify, "write_cards", fail)
    assert verify.regenerate_and_compare(release).problems == ["cannot rebuild the cards: matplotlib is not installed"]


def test_compare_files_names_what_only_one_side_has(tmp_path: Path) -> None:
    from gengap.verify import VerifyReport, _compare_files

    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for root, files in ((ours, {"a.txt": "same", "plots/p.png": "1", "only_ours.txt": "x", "SHA256SUMS": "1"}),
                        (theirs, {"a.txt": "same", "plots/p.png": "2", "only_theirs.txt": "y", "SHA256SUMS": "2"})):
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
    report = VerifyReport()
    _compare_files(ours, theirs, {}, {}, report)
    assert report.notes == ["plots/p.png differs from the rebuild (plots depend on the matplotlib version)"]
    assert report.problems == [
        "regenerate: only_ours.txt is not produced by the rebuild",
        "regenerate: the rebuild produces only_theirs.txt, which the release lacks",
    ]
