"""The gengap command line: generate, check, list, and one-line errors with exit code 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gengap.generators import BLOCK_SIZE
from gengap.cli import main


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "gengap.cli", *args], input=stdin, capture_output=True, timeout=300
    )


@pytest.mark.smoke
def test_generate_to_stdout_and_check_from_stdin() -> None:
    generated = run("generate", "parity_check", "--n", "500", "--seed", "1")
    assert generated.returncode == 0
    lines = generated.stdout.decode().splitlines()
    assert len(lines) == 500
    checked = run("check", "-", stdin=generated.stdout)
    assert checked.returncode == 0, checked.stderr
    assert b"500 passed, 0 failed" in checked.stdout


def test_workers_do_not_change_the_bytes(tmp_path: Path) -> None:
    n = 2 * BLOCK_SIZE + 123  # three blocks
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    assert main(["generate", "reverse_string", "--n", str(n), "--seed", "5", "--workers", "1", "--out", str(one)]) == 0
    assert main(["generate", "reverse_string", "--n", str(n), "--seed", "5", "--workers", "2", "--out", str(two)]) == 0
    assert one.read_bytes() == two.read_bytes()
    assert len(one.read_bytes().splitlines()) == n


@pytest.mark.smoke
def test_same_seed_same_bytes_other_seed_disjoint(tmp_path: Path) -> None:
    paths = {}
    for name, seed in (("a", 1), ("b", 1), ("c", 2)):
        paths[name] = tmp_path / f"{name}.jsonl"
        args = ["--n", "3000", "--seed", str(seed), "--param", "min_length=20", "--out", str(paths[name])]
        assert main(["generate", "parity_check", *args]) == 0
    assert paths["a"].read_bytes() == paths["b"].read_bytes()
    ids_a = {json.loads(l)["id"] for l in paths["a"].read_text().splitlines()}
    ids_c = {json.loads(l)["id"] for l in paths["c"].read_text().splitlines()}
    assert len(ids_a) == 3000
    assert len(ids_a & ids_c) <= 1  # 2^20+ inputs: a shared example is a coincidence


def test_level_and_params(tmp_path: Path) -> None:
    out = tmp_path / "x.jsonl"
    assert main(["generate", "addition", "--n", "200", "--level", "3", "--param", "format=reversed", "--out", str(out)]) == 0
    for line in out.read_text().splitlines():
        record = json.loads(line)
        assert record["difficulty"]["digits_a"] == 3 and record["difficulty"]["digits_b"] == 3
        assert record["meta"] == {"format": "reversed"}


@pytest.mark.smoke
def test_check_rejects_a_corrupted_target(tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    assert main(["generate", "bucket_sort", "--n", "50", "--out", str(good)]) == 0
    records = [json.loads(l) for l in good.read_text().splitlines()]
    tokens = records[7]["target"].split()
    records[7]["target"] = " ".join(tokens[1:] + [tokens[0]]) if len(set(tokens)) > 1 else tokens[0] + " 9"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = run("check", str(bad))
    assert result.returncode == 1
    assert b"line 8" in result.stderr
    assert b"1 failed" in result.stdout


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda r: r.update(task="no_such_task"), b"unknown task"),
        (lambda r: r.pop("difficulty"), b"difficulty"),
        (lambda r: r.update(input="1  0"), b"input"),
        (lambda r: r.update(id=r["id"][:-1] + ("0" if r["id"][-1] != "0" else "1")), b"does not match"),
        (lambda r: r["difficulty"].update(input_length=999), b"input_length"),
    ],
)
def test_check_names_the_problem(tmp_path: Path, mutate, message: bytes) -> None:
    path = tmp_path / "p.jsonl"
    assert main(["generate", "parity_check", "--n", "5", "--out", str(path)]) == 0
    records = [json.loads(l) for l in path.read_text().splitlines()]
    mutate(records[2])
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = run("check", str(path))
    assert result.returncode == 1
    assert message in result.stderr


def test_check_rejects_malformed_json_and_empty_input(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text('{"id": \n')
    result = run("check", str(path))
    assert result.returncode == 1 and b"not valid JSON" in result.stderr
    assert run("check", "-", stdin=b"").returncode == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["generate", "no_such_task", "--n", "5"], "unknown task 'no_such_task'"),
        (["generate", "parity_check", "--n", "5", "--param", "bogus=1"], "unknown parameter 'bogus'"),
        (["generate", "parity_check", "--n", "5", "--param", "max_length=abc"], "not a valid int"),
        (["generate", "parity_check", "--n", "5", "--param", "max_length"], "key=value"),
        (["generate", "parity_check", "--n", "0"], "--n must be at least 1"),
        (["generate", "parity_check", "--n", "-3"], "--n must be at least 1"),
        (["generate", "parity_check", "--n", "5", "--param", "max_length=0"], "out of range"),
        (["generate", "parity_check", "--n", "5", "--param", "min_length=50"], "exceeds max_length"),
        (["generate", "parity_check", "--n", "5", "--level", "11"], "level 11"),
        (["generate", "addition", "--n", "5", "--param", "format=octal"], "not one of"),
        (["generate", "parity_check", "--n", "5", "--workers", "0"], "--workers"),
        (["generate", "parity_check"], "--n N and --all"),
        (["generate", "parity_check", "--all"], "not a finite task"),
        (["generate", "parity_check", "--n", "5", "--out", "/no/such/dir/x.jsonl"], "does not exist"),
        (["check", "/no/such/file.jsonl"], "cannot read"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_input_is_one_line_exit_2(args: list[str], message: str) -> None:
    result = run(*args)
    assert result.returncode == 2, result.stderr
    err = result.stderr.decode().strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("gengap: error:") and message in err
    assert result.stdout == b""


def test_unwritable_directory_leaves_no_file(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):  # running as root: permissions are not enforced
            target = tmp_path / "a_directory"
            target.mkdir()
            result = run("generate", "parity_check", "--n", "5", "--out", str(target))
            assert result.returncode == 2 and b"is a directory" in result.stderr
        else:
            result = run("generate", "parity_check", "--n", "5", "--out", str(locked / "x.jsonl"))
            assert result.returncode == 2 and b"not writable" in result.stderr
            assert list(locked.iterdir()) == []
    finally:
        locked.chmod(0o700)


def test_failed_generation_leaves_no_partial_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gengap.parallel as parallel

    def explode(plan, workers, handle):
        handle.write(b'{"partial": true}\n')
        yield 0, np.zeros(1, dtype=np.uint64)
        raise RuntimeError("boom")

    monkeypatch.setattr(parallel, "write_blocks", explode)
    out = tmp_path / "x.jsonl"
    with pytest.raises(RuntimeError):
        main(["generate", "parity_check", "--n", "5", "--out", str(out)])
    assert list(tmp_path.iterdir()) == []


def test_list_json_describes_every_task() -> None:
    result = run("list", "--json")
    assert result.returncode == 0
    tasks = json.loads(result.stdout)
    names = {t["name"] for t in tasks}
    assert {"parity_check", "addition"} <= names
    parity = next(t for t in tasks if t["name"] == "parity_check")
    assert parity["family"] == "regular"
    assert {p["name"] for p in parity["parameters"]} == {"min_length", "max_length", "trace"}
    assert set(parity["traces"]) == {"coarse", "fine", "inductive"}
    assert sorted(parity["levels"], key=int) == [str(k) for k in range(1, 11)]
    text = run("list")
    assert text.returncode == 0 and b"parity_check" in text.stdout and b"levels:" in text.stdout


def test_scan_all_enumerates_every_command_once_and_checks() -> None:
    generated = run("generate", "scan", "--all")
    assert generated.returncode == 0, generated.stderr
    records = [json.loads(line) for line in generated.stdout.splitlines()]
    assert len(records) == 20910
    assert len({r["input"] for r in records}) == 20910
    assert max(len(r["input"].split()) for r in records) == 9
    assert max(len(r["target"].split()) for r in records) == 48
    checked = run("check", "-", stdin=generated.stdout)
    assert checked.returncode == 0 and b"20910 passed, 0 failed" in checked.stdout
    too_big = run("generate", "scan", "--all", "--param", "max_conjuncts=3")
    assert too_big.returncode == 2 and b"too many to enumerate" in too_big.stderr


def test_generate_and_split_warn_of_repeated_inputs_with_the_count(tmp_path: Path) -> None:
    """The GOTU example of docs/splits.md draws 20,000 records from 4,096 possible inputs: one warning line
    with the count, on stderr only; the output and the exit status are what they were."""
    argv = ["generate", "boolean_function", "--n", "20000", "--param", "n=12", "--param", "function=majority", "--param", "k=5"]
    result = run(*argv)
    assert result.returncode == 0
    inputs = [json.loads(line)["input"] for line in result.stdout.decode().splitlines()]
    repeats = len(inputs) - len(set(inputs))
    assert 15_000 < repeats < 16_100  # at least 20,000 - 4,096
    assert result.stderr.decode() == f"gengap: warning: {repeats:,} of 20,000 records repeat an input already drawn\n"
    assert run(*argv, "--workers", "2").stdout == result.stdout
    (tmp_path / "cube.jsonl").write_bytes(result.stdout)
    split = run("split", str(tmp_path / "cube.jsonl"), "--strategy", "gotu", "--option", "frozen=0,1", "--option", "value=1", "--out", str(tmp_path / "gotu"))
    assert split.returncode == 0
    assert f"gengap: warning: {repeats:,} of 20,000 records repeat an input already drawn" in split.stderr.decode().splitlines()
    assert "repeat" not in (tmp_path / "gotu" / "report.json").read_text()
    distinct = run("generate", "reverse_string", "--n", "50", "--param", "min_length=30", "--param", "max_length=40")
    assert distinct.returncode == 0 and distinct.stderr == b""


def test_gengap_alone_prints_the_usage_and_the_commands() -> None:
    result = run()
    assert result.returncode == 2 and result.stdout == b""
    err = result.stderr.decode()
    assert err.startswith("usage: gengap") and all(command in err for command in ("release", "verify", "train", "export"))


def test_a_misspelt_task_name_gets_the_closest_names() -> None:
    result = run("generate", "parity_chek", "--n", "5")
    assert result.returncode == 2
    assert result.stderr.decode() == "gengap: error: unknown task 'parity_chek' (did you mean parity_check? `gengap list` shows every task)\n"
    far = run("generate", "zzzz", "--n", "5")
    assert far.stderr.decode() == "gengap: error: unknown task 'zzzz' (`gengap list` shows every task)\n"


def test_the_steps_help_states_the_presets_numbers() -> None:
    from gengap.baselines.training import LOOPED_PRESETS, PRESETS, RECURRENT_PRESETS

    text = " ".join(run("train", "--help").stdout.decode().split())
    helped = text.split("--steps STEPS training steps", 1)[1].split("--until-id EM", 1)[0]
    for name, preset in PRESETS.items():
        assert f"{name} {preset.steps:,}" in helped and LOOPED_PRESETS[name].steps == preset.steps  # the looped model's are the transformer's
    assert all(RECURRENT_PRESETS[name].steps == PRESETS[name].steps for name in ("tiny", "small"))
    assert f"base {RECURRENT_PRESETS['base'].steps:,} for rnn, lstm, stack_rnn and tape_rnn" in helped
