"""Hostile input, limits and forged releases (issue 23), each through a real ``gengap`` process:
the exit code, the one line it prints, and that nothing else on disk changed.

- JSON and JSONL that nest 100,000 levels, hold a 5,000-digit integer, a lone surrogate, NaN
  or an overflowing float: one line from every reader (check, split, divergence, verify,
  export), never a traceback.
- Suite YAML with an impossible unquoted date, ``.nan``/``.inf`` or a 5,000-digit integer.
- Ctrl-C while gengap is still importing.
- ``pool: all`` of a huge table, 3,000 configs of 2,000,000 records, more data than the disk
  holds, and ``verify --regenerate`` of a manifest that asks for any of these: refused before
  anything is built.
- Forged releases: a config dropped from the manifest with its files kept, a part dropped
  from a config, a symlinked data directory, the card files deleted with their checksums,
  empty directories, dangling symlinks and FIFOs; the fingerprint a citation gives.
- ``gengap export`` of a record without ``task``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from gengap.baselines.data import load_split
from gengap.baselines.errors import BaselineError
from gengap.generators import batch_to_jsonl, get_task, record_id, task_names
from gengap.cli import main
from gengap.release import fingerprint, write_checksums
from tests.output_helpers import _default_sigint
from tests.test_output_discipline import TINY

# -- running gengap and looking at the disk --------------------------------------------------------


def gengap(cwd: Path, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`python -m gengap ARGS` in cwd, with the system temp directory inside cwd (so that what
    --regenerate builds there is seen by the disk snapshot); output decoded leniently."""
    (cwd / "tmp").mkdir(exist_ok=True)
    environment = {**os.environ, "TMPDIR": str(cwd / "tmp"), **(env or {})}
    result = subprocess.run([sys.executable, "-m", "gengap", *args], cwd=cwd, input=stdin, capture_output=True, env=environment, timeout=timeout)
    return subprocess.CompletedProcess(list(args), result.returncode, result.stdout.decode("utf-8", "replace"), result.stderr.decode("utf-8", "replace"))


def snapshot(root: Path) -> dict[str, tuple]:
    """Every path under root (symlinks not followed) with its kind and content (root/tmp, the
    temp directory gengap() gives the command, made first)."""
    (root / "tmp").mkdir(exist_ok=True)
    found: dict[str, tuple] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            mode = path.lstat().st_mode
            key = path.relative_to(root).as_posix()
            if stat.S_ISREG(mode):
                found[key] = ("file", hashlib.sha256(path.read_bytes()).hexdigest())
            elif stat.S_ISLNK(mode):
                found[key] = ("link", os.readlink(path))
            else:
                found[key] = (stat.S_IFMT(mode),)
    return found


def refused(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    """Exit 2 with exactly one line `gengap: error: ...` holding every fragment, nothing on stdout."""
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("gengap: error: ") and result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    for fragment in fragments:
        assert fragment in result.stderr, (fragment, result.stderr)


def failed(result: subprocess.CompletedProcess[str], *lines: str) -> list[str]:
    """Exit 1 (a check that found problems) with every fragment on some line of stderr, no
    traceback, no error line; the stderr lines."""
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr and "gengap: error:" not in result.stderr
    err = result.stderr.splitlines()
    for line in lines:
        assert any(line in e for e in err), (line, result.stderr)
    return err


# -- hostile JSON ---------------------------------------------------------------------------------


def valid_lines(task: str = "parity_check", n: int = 4) -> list[str]:
    t = get_task(task)
    return batch_to_jsonl(t.generate(np.random.default_rng(0), n, t.default_params()), task).decode().splitlines()


def with_input(text_escaped: str) -> str:
    """A parity_check record whose input is the JSON string body text_escaped (e.g. \\ud800)."""
    record = json.loads(valid_lines(n=1)[0])
    line = json.dumps(record)
    return line.replace(json.dumps(record["input"]), f'"{text_escaped}"', 1)


PAYLOADS = {
    "deep": ("[" * 100_000 + "]" * 100_000, "nested deeper than 300 levels"),
    "digits": ('{"task": "parity_check", "input": 1' + "0" * 5000 + "}", "an integer has 5,001 digits"),
    "surrogate": (with_input("\\ud800"), "a string holds a lone UTF-16 surrogate"),
    "nan": (valid_lines(n=1)[0].replace('"input_length":', '"input_length":NaN,"x":', 1), "NaN is not a number JSON allows"),
    "overflow": (valid_lines(n=1)[0].replace('"input_length":', '"input_length":1e999,"x":', 1), "the number 1e999 is too large for a float"),
}


def pool_file(folder: Path, payload: str) -> Path:
    """pool.jsonl: a valid record on line 1, the payload on line 2, valid records after."""
    lines = valid_lines()
    path = folder / "pool.jsonl"
    path.write_text("\n".join([lines[0], payload, *lines[1:]]) + "\n")
    return path


@pytest.mark.parametrize("kind", sorted(PAYLOADS))
@pytest.mark.parametrize("command", ["split", "divergence"])
def test_split_and_divergence_refuse_an_unreadable_line_in_one_line(tmp_path: Path, kind: str, command: str) -> None:
    payload, reason = PAYLOADS[kind]
    pool_file(tmp_path, payload)
    args = ["split", "pool.jsonl", "--strategy", "iid", "--out", "out"] if command == "split" else ["divergence", "pool.jsonl", "pool.jsonl"]
    before = snapshot(tmp_path)
    refused(gengap(tmp_path, *args), f"pool.jsonl: line 2: {reason}")
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("kind", sorted(PAYLOADS))
def test_check_reports_an_unreadable_line_as_a_failed_record(tmp_path: Path, kind: str) -> None:
    payload, reason = PAYLOADS[kind]
    pool_file(tmp_path, payload)
    before = snapshot(tmp_path)
    result = gengap(tmp_path, "check", "pool.jsonl")
    assert failed(result, f"line 2: {reason}") == [f"line 2: {reason}" + result.stderr.split(reason, 1)[1].splitlines()[0]]
    assert result.stdout == "checked 5 records: 4 passed, 1 failed (parity_check 4)\n"
    stdin = gengap(tmp_path, "check", "-", stdin=(tmp_path / "pool.jsonl").read_bytes())
    assert (stdin.returncode, stdin.stderr, stdin.stdout) == (1, result.stderr, result.stdout)
    assert snapshot(tmp_path) == before


def test_check_bounds_the_length_of_a_line(tmp_path: Path) -> None:
    path = tmp_path / "pool.jsonl"
    path.write_bytes(valid_lines()[0].encode() + b"\n" + b" " * (17 << 20) + b"x\n" + valid_lines()[1].encode() + b"\n")
    result = gengap(tmp_path, "check", "pool.jsonl")
    failed(result, "line 2: longer than 16,777,216 bytes")
    assert "3 records: 2 passed, 1 failed" in result.stdout


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    (root / "tiny.yaml").write_text(TINY)
    assert main(["release", str(root / "tiny.yaml"), "--out", str(root / "release"), "--workers", "1"]) == 0
    return root / "release"


def copy_of(release: Path, tmp_path: Path, name: str = "release") -> Path:
    target = tmp_path / name
    shutil.copytree(release, target, symlinks=True)
    return target


def rewrite_manifest(root: Path, change) -> dict:
    """Apply change(manifest) and recompute SHA256SUMS (a forger who keeps the checksums consistent)."""
    manifest = json.loads((root / "manifest.json").read_text())
    change(manifest)
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    write_checksums(root)
    return manifest


TRAIN = "data/parity_check-length/train.jsonl"


@pytest.mark.parametrize("kind", sorted(PAYLOADS))
def test_verify_reports_an_unreadable_data_line(release: Path, tmp_path: Path, kind: str) -> None:
    payload, reason = PAYLOADS[kind]
    root = copy_of(release, tmp_path)
    lines = (root / TRAIN).read_text().splitlines()
    (root / TRAIN).write_text("\n".join([lines[0], payload, *lines[2:]]) + "\n")
    before = snapshot(tmp_path)
    failed(gengap(tmp_path, "verify", "release"), f"changed: {TRAIN}", f"record: {TRAIN} line 2: {reason}")
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("kind", ["deep", "digits", "surrogate", "nan"])
def test_verify_reports_a_manifest_that_cannot_be_read(release: Path, tmp_path: Path, kind: str) -> None:
    payload, reason = PAYLOADS[kind]
    root = copy_of(release, tmp_path)
    (root / "manifest.json").write_text(payload + "\n")
    write_checksums(root)
    before = snapshot(tmp_path)
    failed(gengap(tmp_path, "verify", "release"), f"manifest.json: {reason}")
    assert snapshot(tmp_path) == before
    failed(gengap(tmp_path, "verify", "release", "--regenerate"), f"manifest.json: {reason}")
    assert snapshot(tmp_path) == before


def relist(root: Path) -> None:
    """The manifest's data_files, config files and fingerprint made those of the data files as
    they are now (what a forger recomputes; the cards are left as they were)."""
    manifest = json.loads((root / "manifest.json").read_text())
    for path in manifest["data_files"]:
        data = (root / path).read_bytes()
        manifest["data_files"][path] = info = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data), "rows": data.count(b"\n")}
        for config in manifest["configs"]:
            for part in config["files"].values():
                if part["path"] == path:
                    part.update(info)
    manifest["fingerprint"] = fingerprint(manifest["data_files"])
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


@pytest.mark.parametrize("kind", ["deep", "surrogate"])
def test_export_refuses_an_unreadable_line(release: Path, tmp_path: Path, kind: str) -> None:
    payload, reason = PAYLOADS[kind]
    root = copy_of(release, tmp_path)
    lines = (root / TRAIN).read_text().splitlines()
    (root / TRAIN).write_text("\n".join([lines[0], payload]) + "\n")
    relist(root)  # with the manifest's hashes as they were, export refuses the file before reading it (issue 55, case 18)
    before = snapshot(tmp_path)
    refused(gengap(tmp_path, "export", "release", "--to", "chat", "--out", "out"), f"{TRAIN}: line 2: {reason}")
    assert snapshot(tmp_path) == before


# -- hostile YAML ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "old, new, message",
    [
        ('created: "2026-01-01"', "created: 2026-13-45", "tiny.yaml line 5: created: '2026-13-45' is not a date (YYYY-MM-DD)"),
        ('created: "2026-01-01"', "created: 2026-02-30", "tiny.yaml line 5: created: '2026-02-30' is not a date (YYYY-MM-DD)"),
        ("sizes: {train: 30, validation: 5, test: 10}}\n  - {task: even_pairs", "sizes: {train: 30, validation: 5, test: 10}}\n  - {task: even_pairs, strategy: iid, pool: {n: 50}, options: {test_fraction: .nan}}\n  - {task: even_pairs", "tiny.yaml line 8: .nan is not a finite number"),
        ("seed: 1", "seed: -.inf", "tiny.yaml line 3: -.inf is not a finite number"),
        ("seed: 1", "seed: 1.0e+400", "tiny.yaml line 3: 1.0e+400 is not a finite number"),
        ("seed: 1", "seed: 1" + "0" * 5000, "tiny.yaml line 3: an integer has 5,001 digits"),
    ],
)
def test_release_refuses_suite_values_that_cannot_be_read(tmp_path: Path, old: str, new: str, message: str) -> None:
    assert old in TINY
    (tmp_path / "tiny.yaml").write_text(TINY.replace(old, new, 1))
    before = snapshot(tmp_path)
    refused(gengap(tmp_path, "release", "tiny.yaml", "--out", "out"), message)
    assert snapshot(tmp_path) == before


def test_unquoted_dates_are_read_as_the_strings_written() -> None:
    from gengap.suite import parse_suite

    quoted = parse_suite(TINY)
    unquoted = parse_suite(TINY.replace('created: "2026-01-01"', "created: 2026-01-01"))
    assert unquoted["created"] == quoted["created"] == "2026-01-01" and unquoted["config"] == quoted["config"]


# -- Ctrl-C while importing -------------------------------------------------------------------------


def _interrupt_when_imported(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run `python -X importtime -m gengap ARGS` and send SIGINT as soon as `module` has been
    imported (importtime reports each module on stderr when its import ends)."""
    process = subprocess.Popen(
        [sys.executable, "-X", "importtime", "-m", "gengap", *args],
        stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, preexec_fn=_default_sigint,
    )
    assert process.stderr is not None
    lines = []
    for line in process.stderr:
        lines.append(line)
        if line.startswith("import time:") and line.split("|")[-1].strip() == module:
            process.send_signal(signal.SIGINT)
            break
    out, rest = process.communicate(timeout=60)
    return subprocess.CompletedProcess(list(args), process.returncode, out, "".join(lines) + rest)


@pytest.mark.parametrize("module", ["gengap.commands.entry", "numpy", "gengap.splits", "gengap.generators"])  # list imports no jsonschema (tests/test_startup.py)
def test_ctrl_c_while_importing_is_one_line_exit_130(module: str) -> None:
    result = _interrupt_when_imported(module, "list")
    own = [line for line in result.stderr.splitlines() if not line.startswith("import time:")]
    assert (result.returncode, own) == (130, ["gengap: interrupted"]), result.stderr[-3000:]
    assert result.stdout == ""  # interrupted before `list` printed anything


def test_ctrl_c_at_any_moment_of_the_console_script() -> None:
    """The installed `gengap` script: Ctrl-C 0 to 1 s after its entry point has been imported
    (PYTHONPROFILEIMPORTTIME reports it) is exit 130 and one line, or the command had
    finished (exit 0); never a traceback."""
    script = Path(sys.executable).with_name("gengap")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "gengap"]
    outcomes = []
    for delay in (0.0, 0.05, 0.2, 0.4, 0.7, 1.0):
        process = subprocess.Popen(
            [*command, "list"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            preexec_fn=_default_sigint, env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"},
        )
        assert process.stderr is not None
        for line in process.stderr:
            if line.startswith("import time:") and line.split("|")[-1].strip() in ("gengap.commands.entry", "gengap.entry"):  # an installed script of before the layout may name the old one
                break
        time.sleep(delay)
        process.send_signal(signal.SIGINT)
        rest = process.stderr.read()
        process.wait(timeout=60)
        own = [line for line in rest.splitlines() if not line.startswith("import time:")]
        assert (process.returncode, own) in ((130, ["gengap: interrupted"]), (0, [])), rest[-2000:]
        outcomes.append(process.returncode)
    assert 130 in outcomes


# -- limits on totals, before any work ----------------------------------------------------------------

HEAD = "name: limits\nversion: 1.0.0\nseed: 1\nlicense: mit\nentries:\n"


@pytest.mark.parametrize("p, records", [(4001, "16,008,001"), (99991, "9,998,200,081")])
def test_pool_all_of_a_huge_table_is_refused_before_building(tmp_path: Path, p: int, records: str) -> None:
    (tmp_path / "table.yaml").write_text(HEAD + f"  - {{task: modular_operation, split: all, strategy: iid, params: {{p: {p}}}, pool: all}}\n")
    before = snapshot(tmp_path)
    start = time.monotonic()
    result = gengap(tmp_path, "release", "table.yaml", "--out", "out")
    refused(result, "table.yaml line 6: entries[0].pool:", f"{records} records would need", "the limit is 10,000,000 records per config", "--max-records N")
    assert time.monotonic() - start < 20  # the interpreter's start included; building would take minutes
    assert snapshot(tmp_path) == before


def test_pool_all_beyond_what_the_task_enumerates_is_refused_up_front(tmp_path: Path) -> None:
    (tmp_path / "scan.yaml").write_text(HEAD + "  - {task: scan, split: all, strategy: iid, params: {max_actions: 200, max_conjuncts: 6}, pool: all}\n")
    before = snapshot(tmp_path)
    refused(gengap(tmp_path, "release", "scan.yaml", "--out", "out"), "scan.yaml line 6: entries[0].pool: scan: about 10^", "too many to enumerate")
    assert snapshot(tmp_path) == before


def test_a_suite_over_the_total_record_limit_is_refused(tmp_path: Path) -> None:
    """The issue's 221 KB suite: 3,000 configs of 2,000,000 records, each under the per-config limit."""
    entries = "".join(f"  - {{task: parity_check, split: s{i}, strategy: iid, pool: {{n: 2000000}}}}\n" for i in range(3000))
    (tmp_path / "many.yaml").write_text(HEAD + entries)
    assert 200_000 < (tmp_path / "many.yaml").stat().st_size < 250_000
    before = snapshot(tmp_path)
    result = gengap(tmp_path, "release", "many.yaml", "--out", "out")
    refused(result, "many.yaml line 6: entries: the suite holds 6,000,000,000 records in 3,000 configs", "the limit is 100,000,000 records in all", "--max-total-records N or GENGAP_MAX_TOTAL_RECORDS=N")
    assert snapshot(tmp_path) == before
    small = HEAD + "".join(f"  - {{task: parity_check, split: s{i}, strategy: iid, pool: {{n: 20}}}}\n" for i in range(3))
    (tmp_path / "small.yaml").write_text(small)
    refused(gengap(tmp_path, "release", "small.yaml", "--out", "out", "--max-total-records", "59"), "holds 60 records in 3 configs; the limit is 59")
    refused(gengap(tmp_path, "release", "small.yaml", "--out", "out", env={"GENGAP_MAX_TOTAL_RECORDS": "59"}), "the limit is 59 records in all")


def test_data_that_would_not_fit_on_the_disk_is_refused(tmp_path: Path) -> None:
    huge = 10**15
    (tmp_path / "huge.yaml").write_text(HEAD + f"  - {{task: reverse_string, split: iid, strategy: iid, pool: {{n: {huge}}}}}\n")
    before = snapshot(tmp_path)
    result = gengap(tmp_path, "release", "huge.yaml", "--out", "out", "--max-records", str(huge), "--max-total-records", str(huge))
    refused(result, "the release needs about", "PB on disk (estimated from a sample of each config's records)", "free")
    assert snapshot(tmp_path) == before


def test_regenerate_refuses_a_manifest_beyond_the_limits(release: Path, tmp_path: Path) -> None:
    root = copy_of(release, tmp_path)
    entry = {"task": "modular_operation", "split": "all", "strategy": "iid", "params": {"p": 4001}, "pool": "all"}
    rewrite_manifest(root, lambda m: m["suite"]["config"]["entries"].append(entry))
    before = snapshot(tmp_path)
    start = time.monotonic()
    refused(
        gengap(tmp_path, "verify", "release", "--regenerate"),
        "cannot rebuild release from its manifest: config modular_operation-all: 16,008,001 records", "--max-records N",
    )
    assert time.monotonic() - start < 20
    refused(gengap(tmp_path, "verify", "release", "--regenerate", "--max-records", "20000000", "--max-total-records", "1000"), "the limit is 1,000 records in all")
    assert snapshot(tmp_path) == before


def test_enumeration_size_is_what_enumerate_returns() -> None:
    for name in task_names():
        task = get_task(name)
        if type(task).enumerate is type(get_task("parity_check")).enumerate:
            assert task.enumeration_size(task.default_params()) is None
            continue
        for params in (task.default_params(), task.level(1), task.level(2)):
            assert task.enumeration_size(params) == len(task.enumerate(params))


# -- forged releases -------------------------------------------------------------------------------


def test_verify_reports_a_config_dropped_from_the_manifest_while_its_files_stay(release: Path, tmp_path: Path) -> None:
    """The forger drops the config and its data files from the manifest and recomputes the
    fingerprint and SHA256SUMS; export and train must not read the files either."""
    root = copy_of(release, tmp_path)

    def drop(manifest: dict) -> None:
        gone = manifest["configs"].pop(1)
        for part in gone["files"].values():
            del manifest["data_files"][part["path"]]
        manifest["fingerprint"] = fingerprint(manifest["data_files"])

    rewrite_manifest(root, drop)
    before = snapshot(tmp_path)
    failed(
        gengap(tmp_path, "verify", "release"),
        "unaccounted: data/even_pairs-length/train.jsonl is in SHA256SUMS, but manifest.json lists it neither",
        "manifest.json: card_files are not the card files and plots of its configs",
    )
    result = gengap(tmp_path, "export", "release", "--to", "chat", "--out", "out", "--config", "even_pairs-length")
    refused(result, "has no config 'even_pairs-length'; configs: parity_check-length")
    with pytest.raises(BaselineError, match="has no config 'even_pairs-length'"):
        load_split(root, "even_pairs-length")
    assert snapshot(tmp_path) == before
    # ... and with their lines taken out of SHA256SUMS too, the files are extra
    (root / "SHA256SUMS").write_text("".join(line + "\n" for line in (root / "SHA256SUMS").read_text().splitlines() if "even_pairs" not in line))
    failed(gengap(tmp_path, "verify", "release"), "extra: data/even_pairs-length/test.jsonl")


def test_verify_reports_a_config_dropped_from_configs_only(release: Path, tmp_path: Path) -> None:
    root = copy_of(release, tmp_path)
    rewrite_manifest(root, lambda m: m["configs"].pop(1))
    failed(gengap(tmp_path, "verify", "release"), "manifest.json: data file data/even_pairs-length/test.jsonl belongs to no config")


def test_verify_reports_a_part_dropped_from_a_config(release: Path, tmp_path: Path) -> None:
    root = copy_of(release, tmp_path)
    rewrite_manifest(root, lambda m: m["configs"][0]["files"].pop("test"))
    before = snapshot(tmp_path)
    failed(gengap(tmp_path, "verify", "release"), "manifest.json: config parity_check-length lacks files.test (data/parity_check-length/test.jsonl)")
    assert snapshot(tmp_path) == before


def test_a_symlinked_data_directory_fails_verify_regenerate_and_every_reader(release: Path, tmp_path: Path) -> None:
    root = copy_of(release, tmp_path)
    outside = tmp_path / "outside"
    shutil.move(str(root / "data/parity_check-length"), outside)
    (root / "data/parity_check-length").symlink_to(outside.resolve(), target_is_directory=True)
    before = snapshot(tmp_path)
    link = f"symlink: data/parity_check-length -> {outside.resolve()} (a release holds no symlinks; not followed)"
    failed(gengap(tmp_path, "verify", "release"), link, f"missing: {TRAIN}")
    failed(gengap(tmp_path, "verify", "release", "--regenerate"), link, f"regenerate: the rebuild produces {TRAIN}, which the release lacks")
    refused(gengap(tmp_path, "export", "release", "--to", "chat", "--out", "out"), "release/data/parity_check-length: is a symlink or not a directory")
    with pytest.raises(BaselineError, match="is a symlink or not a directory"):
        load_split(root, "parity_check-length")
    assert snapshot(tmp_path) == before


def test_verify_reports_card_files_deleted_with_their_checksums(release: Path, tmp_path: Path) -> None:
    root = copy_of(release, tmp_path)
    for name in ("README.md", "CITATION.cff", "croissant.json"):
        (root / name).unlink()
    write_checksums(root)
    before = snapshot(tmp_path)
    failed(
        gengap(tmp_path, "verify", "release"),
        *(f"card file {name} of the manifest is not in SHA256SUMS" for name in ("CITATION.cff", "README.md", "croissant.json")),
    )
    assert snapshot(tmp_path) == before


def test_verify_reports_empty_directories_symlinks_and_fifos_and_reads_none(release: Path, tmp_path: Path) -> None:
    root = copy_of(release, tmp_path)
    (root / "data/empty").mkdir()
    (root / "data/dangling").symlink_to("/nonexistent/gengap")
    os.mkfifo(root / "data/parity_check-length/pipe")
    (root / "plots/inner").symlink_to(root / "data", target_is_directory=True)
    before = snapshot(tmp_path)
    failed(
        gengap(tmp_path, "verify", "release", timeout=60),  # a FIFO that is read blocks forever
        "extra: data/empty/ (an empty directory)",
        "symlink: data/dangling -> /nonexistent/gengap",
        "special file: data/parity_check-length/pipe is a named pipe (FIFO)",
        "symlink: plots/inner ->",
    )
    assert snapshot(tmp_path) == before


def test_verify_checks_the_fingerprint_a_citation_gives(release: Path, tmp_path: Path) -> None:
    root = copy_of(release, tmp_path)
    cited = json.loads((root / "manifest.json").read_text())["fingerprint"]
    before = snapshot(tmp_path)
    for form in (f"sha256:{cited}", cited.upper()):
        result = gengap(tmp_path, "verify", "release", "--expect-fingerprint", form)
        assert result.returncode == 0 and f"fingerprint sha256:{cited} (the expected one)" in result.stdout
    other = "0" * 64
    failed(gengap(tmp_path, "verify", "release", "--expect-fingerprint", other), f"not the expected sha256:{other} (not the cited release)")
    refused(gengap(tmp_path, "verify", "release", "--expect-fingerprint", "sha256:abc"), "is not sha256:<64 hex digits>")
    assert snapshot(tmp_path) == before


def test_a_forger_who_recomputes_every_hash_passes_plain_verify_but_not_the_cited_fingerprint(release: Path, tmp_path: Path) -> None:
    """What docs/releases.md says plain verify cannot detect: a correct record dropped, every
    hash, the split report and the novelty of the records recomputed. The fingerprint changes,
    so the cited one catches it."""
    root = copy_of(release, tmp_path)
    cited = json.loads((root / "manifest.json").read_text())["fingerprint"]
    lines = (root / TRAIN).read_text().splitlines()[1:]
    data = "".join(line + "\n" for line in lines).encode()
    (root / TRAIN).write_bytes(data)

    def recompute(manifest: dict) -> None:
        info = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data), "rows": len(lines)}
        manifest["data_files"][TRAIN] = info
        manifest["configs"][0]["files"]["train"].update(info)
        manifest["fingerprint"] = fingerprint(manifest["data_files"])

    manifest = rewrite_manifest(root, recompute)
    from gengap.data_cards import write_cards

    write_cards(manifest, root)
    write_checksums(root)
    failed(gengap(tmp_path, "verify", "release"), "report gives sizes")  # what the manifest states is no longer the files'
    from tests.forgery import rehash, restate

    restate(root)  # the report and the records' novelty rewritten too
    rehash(root)
    failed(gengap(tmp_path, "verify", "release"), "generation.sizes asks for")  # the split's contract (issue 55, case 2)

    def fewer(manifest: dict) -> None:  # ... and the sizes the config's generation asks for
        manifest["configs"][0]["generation"]["sizes"]["train"] -= 1

    rehash(root, fewer)
    assert gengap(tmp_path, "verify", "release").returncode == 0
    failed(gengap(tmp_path, "verify", "release", "--expect-fingerprint", cited), f"not the expected sha256:{cited}")


# -- export ---------------------------------------------------------------------------------------


def test_export_of_a_record_without_task_is_one_line(release: Path, tmp_path: Path) -> None:
    root = copy_of(release, tmp_path)
    lines = (root / TRAIN).read_text().splitlines()
    record = json.loads(lines[2])
    del record["task"]
    lines[2] = json.dumps(record)
    (root / TRAIN).write_text("\n".join(lines) + "\n")
    relist(root)  # a forger's hashes: what export reads is the record itself (issue 55, case 18)
    before = snapshot(tmp_path)
    refused(gengap(tmp_path, "export", "release", "--to", "chat", "--out", "out"), f"{TRAIN}: line 3: a record needs its task (a string)")
    assert snapshot(tmp_path) == before
    record["task"] = "even_pairs"  # a task, but not the config's
    lines[2] = json.dumps(record)
    (root / TRAIN).write_text("\n".join(lines) + "\n")
    relist(root)
    before = snapshot(tmp_path)
    refused(gengap(tmp_path, "export", "release", "--to", "chat", "--out", "out"), "train.jsonl: record 3 is of task 'even_pairs', not the config's task 'parity_check'")
    assert snapshot(tmp_path) == before


# -- what fuzzing found besides ------------------------------------------------------------------


def test_split_refuses_a_structure_that_is_not_the_derivation_of_its_input(tmp_path: Path) -> None:
    lines = valid_lines("scan", 6)
    for structure, problem in ((5, "structure is not the derivation of its input"), ([], "structure is not the derivation"), (None, "structure is not the derivation")):
        record = json.loads(lines[0])
        record["structure"] = structure
        (tmp_path / "pool.jsonl").write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")
        before = snapshot(tmp_path)
        refused(gengap(tmp_path, "divergence", "pool.jsonl", "pool.jsonl"), f"pool.jsonl: line 1: {problem}")
        args = ["split", "pool.jsonl", "--strategy", "mcd", "--option", "train_size=3", "--option", "test_size=2", "--out", "out"]
        refused(gengap(tmp_path, *args), problem)
        assert snapshot(tmp_path) == before
    record = json.loads(lines[0])
    del record["structure"]
    record["input"] = "foo bar"
    record.update(id=record_id("scan", "foo bar", record["target"]))
    record["difficulty"]["input_length"] = 2
    (tmp_path / "pool.jsonl").write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")
    refused(gengap(tmp_path, "divergence", "pool.jsonl", "pool.jsonl"), "pool.jsonl: line 1: its input has no derivation")


def test_one_token_inputs_have_no_compound_divergence_instead_of_a_traceback(tmp_path: Path) -> None:
    assert main(["generate", "parity_check", "--n", "40", "--param", "max_length=1", "--out", str(tmp_path / "one.jsonl")]) == 0
    result = gengap(tmp_path, "divergence", "one.jsonl", "one.jsonl")
    assert result.returncode == 0 and "compound_divergence n/a" in result.stdout


def test_a_huge_modulus_in_a_record_is_checked_at_once(tmp_path: Path) -> None:
    record = json.loads(valid_lines("modular_operation", 1)[0])
    record["meta"]["p"] = 10**30 + 57  # trial division up to its square root would never end
    (tmp_path / "pool.jsonl").write_text(json.dumps(record) + "\n")
    result = gengap(tmp_path, "check", "pool.jsonl", timeout=30)
    failed(result, "line 1: meta.p=1000000000000000000000000000057 is out of range [2, 100000]")  # before any division


def test_error_lines_escape_line_breaks_from_the_input(tmp_path: Path) -> None:
    record = json.loads(valid_lines(n=1)[0])
    record["line\nbreak"] = 1
    (tmp_path / "pool.jsonl").write_text(json.dumps(record) + "\n")
    refused(gengap(tmp_path, "split", "pool.jsonl", "--strategy", "iid", "--out", "out"), "line\\nbreak")


RACE = """\
import time
import gengap.workers as workers
from gengap.signals import terminate_as_interrupt

start = workers._start_worker

def slow_start(parent):
    time.sleep(0.5)  # still starting when the pool is terminated
    start(parent)

def fail(item):
    raise ValueError("boom")

workers._start_worker = slow_start
with terminate_as_interrupt():
    try:
        list(workers.ordered_map(fail, range(8), 4))
    except ValueError:
        print("failed cleanly")
"""


def test_a_worker_terminated_while_it_starts_prints_no_traceback() -> None:
    """A config that fails at once (release: a suite error found at build time) terminates the
    pool while workers may still be starting; they used to run the parent's SIGTERM handler
    and print a `Terminated` traceback into the one-line error."""
    result = subprocess.run([sys.executable, "-c", RACE], capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stdout, result.stderr) == (0, "failed cleanly\n", "")
