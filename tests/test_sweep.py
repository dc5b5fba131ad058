"""gengap sweep: sweep files (validation with line numbers), and sweeps on a local Ray runtime
with a worker killed mid-run, retries, resume, failures and the final report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gengap.baselines.sweep import plan_runs
from gengap.cli import main
from gengap.sweep_config import SweepError, find_sweep, load_sweep, parse_sweep

SUITE = """\
name: t
version: 0.0.1
seed: 1
license: mit
entries:
  - {task: reverse_string, split: length, train_range: [1, 5], test_range: [6, 7], sizes: {train: 200, validation: 16, test: 16}}
  - {task: parity_check, split: length, train_range: [1, 5], test_range: [6, 7], sizes: {train: 200, validation: 16, test: 16}}
"""
TRAIN = {"eval_every": 4, "eval_examples": 8, "layers": 1, "d_model": 32, "heads": 2, "batch_size": 16, "device": "cpu"}
KILLED = "reverse_string-length-nope-tiny-seed0"
TIMING = ("tokens_per_s", "train_seconds")  # the only fields that differ between two runs of the same settings


def sweep_text(source: str, **extra: object) -> str:
    data = {"configs": "*-length", "encodings": ["rope", "nope"], "presets": ["tiny"], "seeds": [0], "steps": 8, "train": TRAIN,
            "resources": {"cpus": 1}, **extra}
    return source + "\n" + "".join(f"{key}: {json.dumps(value)}\n" for key, value in data.items())


def without_timing(value: object) -> object:
    if isinstance(value, dict):
        return {k: without_timing(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    (tmp_path / "suite.yaml").write_text(SUITE)
    return tmp_path


# -- sweep files -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, message",
    [
        ("suite: suite.yaml\nconfigs: [a]\nencodings: [rope]\npresets: [huge]\n", "sweep.yaml line 4: presets[0]: 'huge' is not one of"),
        ("suite: suite.yaml\nconfigs: [a]\nresources:\n  gpus: 0.5\n  tpus: 1\n", "line 5: resources.tpus: unknown key 'tpus'"),
        ("suite: suite.yaml\nconfigs: [a]\ntrain: {lr: 0}\n", "line 3: train.lr: 0 is less than or equal to the minimum"),
        ("suite: suite.yaml\nrelease: .\nconfigs: [a]\n", "give exactly one of release"),
        ("suite: nowhere.yaml\nconfigs: [a]\n", "line 1: suite: "),
        ("release: .\nconfigs: [a]\n", "is not a release (no data/ directory)"),
        ("configs: [a\n", "malformed YAML"),
        ("suite: suite.yaml\n", "'configs' is a required property"),
    ],
)
def test_bad_sweep_files_name_the_line_and_key(folder: Path, text: str, message: str) -> None:
    (folder / "sweep.yaml").write_text(text)
    with pytest.raises(SweepError) as caught:
        load_sweep(folder / "sweep.yaml")
    assert message in str(caught.value) and str(caught.value).startswith(str(folder / "sweep.yaml"))


def test_sweep_file_defaults_and_config_globs(folder: Path) -> None:
    sweep = parse_sweep("suite: suite.yaml\nconfigs:\n  - scan-*\n  - parity_check-length\n  - nothing-*\n", "s.yaml", folder)
    assert (sweep.encodings, sweep.presets, sweep.seeds, sweep.retries, sweep.gpus, sweep.cpus) == (("rope",), ("small",), (0,), 2, 0.0, 1.0)
    assert sweep.suite == folder / "suite.yaml"
    with pytest.raises(SweepError, match=r"s.yaml line 5: configs\[2\]: 'nothing-\*' matches no config"):
        sweep.select_configs(["scan-length", "scan-simple", "parity_check-length"])
    sweep = parse_sweep("suite: suite.yaml\nconfigs:\n  - scan-*\n  - scan-length\n", "s.yaml", folder)
    assert sweep.select_configs(["scan-simple", "parity_check-length", "scan-length"]) == ["scan-length", "scan-simple"]


@settings(max_examples=50, deadline=None)
@given(
    configs=st.lists(st.sampled_from(["scan-length", "scan-mcd", "parity_check-length", "a-b-c"]), min_size=1, max_size=4, unique=True),
    encodings=st.lists(st.sampled_from(["rope", "nope", "alibi"]), min_size=1, max_size=3, unique=True),
    presets=st.lists(st.sampled_from(["tiny", "small"]), min_size=1, max_size=2, unique=True),
    seeds=st.lists(st.integers(0, 99), min_size=1, max_size=3, unique=True),
)
def test_the_run_matrix_is_the_full_product_with_distinct_directories(configs, encodings, presets, seeds) -> None:
    runs = plan_runs("/rel", configs, encodings, presets, seeds, {"steps": 5, "lr": 0.01}, "/out")
    assert len(runs) == len(configs) * len(encodings) * len(presets) * len(seeds)
    assert len({r.out for r in runs}) == len(runs) and all(r.out == f"/out/runs/{r.name}" for r in runs)
    assert {(r.config, r.settings["pos"], r.settings["preset"], r.settings["seeds"][0]) for r in runs} == {
        (c, e, p, s) for c in configs for e in encodings for p in presets for s in seeds
    }
    assert all(r.settings["steps"] == 5 and r.settings["lr"] == 0.01 and len(r.settings["seeds"]) == 1 for r in runs)


def test_architectures_multiply_the_matrix_with_the_encodings_each_takes() -> None:
    runs = plan_runs("/rel", ["c"], ["rope", "alibi"], ["tiny"], [0], {"steps": 5}, "/out",
                     ["transformer", "lstm", "stack_rnn", "looped"])
    assert [(r.name, r.settings["arch"], r.settings["pos"]) for r in runs] == [
        ("c-rope-tiny-seed0", "transformer", "rope"), ("c-alibi-tiny-seed0", "transformer", "alibi"),  # names as before architectures
        ("c-lstm-tiny-seed0", "lstm", "none"), ("c-stack_rnn-tiny-seed0", "stack_rnn", "none"),  # no encoding: one run each
        ("c-looped-rope-tiny-seed0", "looped", "rope"),  # alibi is not a looped encoding
    ]
    nope = plan_runs("/rel", ["c"], ["alibi"], ["tiny"], [0], {}, "/out", ["looped"])
    assert [r.settings["pos"] for r in nope] == ["rope"]  # none of the sweep's encodings applies: rope


def test_the_shipped_deletang_sweep_plans_fifteen_tasks_by_six_architectures_by_three_seeds() -> None:
    from gengap.suite import load_suite

    sweep = load_sweep(find_sweep("deletang"))
    names = [entry["name"] for entry in load_suite(sweep.suite)["entries"]]
    runs = plan_runs("/rel", sweep.select_configs(names), sweep.encodings, sweep.presets, sweep.seeds, sweep.overrides, "/out", sweep.architectures)
    assert len(runs) == 15 * 6 * 3 and len({r.name for r in runs}) == len(runs)
    assert {r.settings["arch"] for r in runs} == {"transformer", "rnn", "lstm", "stack_rnn", "tape_rnn", "looped"}
    assert all(r.settings["until_id"] == 0.99 and r.settings["steps"] == 10000 for r in runs)


def test_cli_refuses_bad_sweeps_with_exit_2_and_writes_nothing(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (folder / "bad.yaml").write_text(sweep_text("suite: suite.yaml", fail_once={"run": "no-such-run", "step": 2}))
    assert main(["sweep", str(folder / "bad.yaml"), "--out", str(folder / "out")]) == 2
    assert "fail_once.run: no run is named 'no-such-run'" in capsys.readouterr().err
    (folder / "odd.yaml").write_text(sweep_text("suite: suite.yaml", train={**TRAIN, "d_model": 31}))
    assert main(["sweep", str(folder / "odd.yaml"), "--out", str(folder / "out2")]) == 2
    assert "odd.yaml: train: d_model (31) must be divisible by heads (2)" in capsys.readouterr().err
    # every encoding x preset is checked, not only the first runs' (tiny's heads of 64 / 64 = 1 dimension)
    (folder / "late.yaml").write_text(sweep_text("suite: suite.yaml", presets=["small", "tiny"], seeds=[0, 1], train={"heads": 64}))
    assert main(["sweep", str(folder / "late.yaml"), "--out", str(folder / "out2")]) == 2
    assert "late.yaml: train: the head size d_model/heads = 1 must be even" in capsys.readouterr().err
    (folder / "full").mkdir()
    (folder / "full" / "mine.txt").write_text("keep")
    assert main(["sweep", str(folder / "bad.yaml"), "--out", str(folder / "full")]) == 2
    assert "not a sweep directory" in capsys.readouterr().err
    assert sorted(p.name for p in (folder / "full").iterdir()) == ["mine.txt"]
    assert main(["sweep", "no-such-sweep", "--out", str(folder / "out3")]) == 2
    assert not any((folder / name).exists() for name in ("out", "out2", "out3"))


def test_the_gpu_protocol_is_a_shipped_sweep() -> None:
    sweep = load_sweep(find_sweep("gpu-protocol"))
    assert sweep.suite is not None and sweep.suite.name == "gpu-protocol-suite.yaml"
    assert 0 < sweep.gpus < 1 and sweep.overrides["steps"] >= 1000
    from gengap.suite import load_suite

    names = [e["name"] for e in load_suite(sweep.suite)["entries"]]
    configs = sweep.select_configs(names)
    assert len(configs) == 12 and "scan-mcd_dc0300" in configs and "parity_check-length" in configs
    assert len(configs) * len(sweep.encodings) * len(sweep.presets) * len(sweep.seeds) == 72


# -- sweeps on Ray -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray runtime with 2 CPUs, started by the test (gengap sweep uses a runtime
    that is already up and leaves it up; its worker processes are reused)."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_sweep_on_ray_survives_a_killed_worker_and_resumes(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """4 tiny runs, 2 at a time; the worker of one is killed at step 6 (checkpoint at 4) on its
    first attempt; Ray retries it and it resumes. Its run directory equals `gengap train`'s."""
    (folder / "sweep.yaml").write_text(sweep_text("suite: suite.yaml", retries=2, fail_once={"run": KILLED, "step": 6}))
    out = folder / "out"
    assert main(["sweep", str(folder / "sweep.yaml"), "--out", str(out), "--num-cpus", "2"]) == 0
    captured = capsys.readouterr()
    assert "4 runs: 4 trained, 0 already finished, 0 failed" in captured.out
    assert (out / ".sweep" / f"fail_once-{KILLED}").exists()  # the worker did end itself
    state = json.loads((out / "sweep.json").read_text())
    assert [r["status"] for r in state["runs"]] == ["done"] * 4
    report = (out / "report.md").read_text()
    for config in ("reverse_string-length", "parity_check-length"):
        for pos in ("rope", "nope"):
            assert f"| {config} | {pos} | tiny | 8 | 1 |" in report
    assert (out / "report.png").exists()

    killed = out / "runs" / KILLED
    solo = folder / "solo"
    args = ["train", str(out / "release"), "--config", "reverse_string-length", "--pos", "nope", "--preset", "tiny", "--steps", "8",
            "--seeds", "0", "--eval-every", "4", "--eval-examples", "8", "--layers", "1", "--d-model", "32", "--heads", "2",
            "--batch-size", "16", "--device", "cpu", "--out", str(solo)]
    assert main(args) == 0
    files = lambda root: sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())  # noqa: E731
    assert files(killed) == files(solo)
    for name in ("run.json", "tokenizer.json"):
        assert (killed / name).read_bytes() == (solo / name).read_bytes()
    assert without_timing(json.loads((killed / "results.json").read_text())) == without_timing(json.loads((solo / "results.json").read_text()))
    assert without_timing(read_lines(killed / "metrics.jsonl")) == without_timing(read_lines(solo / "metrics.jsonl"))
    assert [row["step"] for row in read_lines(killed / "metrics.jsonl")] == [4, 8]

    before = {p: p.stat().st_mtime_ns for p in (out / "runs").rglob("*") if p.is_file()}
    assert main(["sweep", str(folder / "sweep.yaml"), "--out", str(out), "--num-cpus", "2"]) == 0
    assert "4 runs: 0 trained, 4 already finished, 0 failed" in capsys.readouterr().out
    assert {p: p.stat().st_mtime_ns for p in (out / "runs").rglob("*") if p.is_file()} == before  # no training, nothing rewritten


def test_a_run_that_keeps_failing_is_recorded_and_the_sweep_goes_on(local_ray, folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = sweep_text("suite: suite.yaml", retries=0, fail_once={"run": KILLED, "step": 6})
    (folder / "sweep.yaml").write_text(text.replace('"*-length"', '"reverse_string-length"'))
    out = folder / "out"
    assert main(["sweep", str(folder / "sweep.yaml"), "--out", str(out), "--num-cpus", "2"]) == 1
    captured = capsys.readouterr()
    assert f"gengap: error: run {KILLED} failed: " in captured.err
    assert "2 runs: 1 trained, 0 already finished, 1 failed" in captured.out
    runs = {r["name"]: r for r in json.loads((out / "sweep.json").read_text())["runs"]}
    assert runs[KILLED]["status"] == "failed" and runs[KILLED]["error"]
    assert runs["reverse_string-length-rope-tiny-seed0"]["status"] == "done"
    assert not (out / "runs" / KILLED / "results.json").exists()
    assert (out / "runs" / KILLED / "seed-0" / "checkpoint.pt").exists()  # step 4's
    assert "| reverse_string-length | rope |" in (out / "report.md").read_text()
    # the next invocation resumes the failed run from its checkpoint (the hook fired already),
    # from another process connected to the running runtime as to a cluster (--address)
    address = local_ray.get_runtime_context().gcs_address
    command = [sys.executable, "-m", "gengap.cli", "sweep", str(folder / "sweep.yaml"), "--out", str(out), "--address", address]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "2 runs: 1 trained, 1 already finished, 0 failed" in done.stdout
    assert [row["step"] for row in read_lines(out / "runs" / KILLED / "metrics.jsonl")] == [4, 8]
    assert "| reverse_string-length | nope |" in (out / "report.md").read_text()


# -- issue 23: resources that cannot be had, SIGTERM ---------------------------------------


def test_gpus_this_machine_lacks_fail_at_once_before_ray_starts(folder: Path) -> None:
    """`resources: {gpus: 1}` on a machine without a GPU waited forever for a node that has one."""
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    (folder / "sweep.yaml").write_text(sweep_text("suite: suite.yaml", resources={"gpus": 1}))
    before = sorted(p.name for p in folder.iterdir())
    command = [sys.executable, "-m", "gengap.cli", "sweep", str(folder / "sweep.yaml"), "--out", str(folder / "out")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("gengap: error: "), done.stderr
    assert "sweep.yaml: resources: a run reserves 1 GPUs, but this machine has 0" in done.stderr
    assert sorted(p.name for p in folder.iterdir()) == before


def test_resources_no_node_has_are_refused_on_a_cluster(local_ray) -> None:
    from gengap.baselines.errors import BaselineError
    from gengap.baselines.sweep_ray import Resources, check_resources

    with pytest.raises(BaselineError, match="a run reserves 3 CPUs, but no node of the Ray cluster has more than 2"):
        check_resources(local_ray, Resources(gpus=0, cpus=3))
    with pytest.raises(BaselineError, match="a run reserves 0.5 GPUs, but no node"):
        check_resources(local_ray, Resources(gpus=0.5, cpus=1))
    check_resources(local_ray, Resources(gpus=0, cpus=2))


@pytest.mark.slow  # a local Ray runtime and a run started: about 20 s
def test_sigterm_ends_a_sweep_like_ctrl_c(folder: Path) -> None:
    """SIGTERM to `gengap sweep` gave exit 134 and a Ray stack dump; now 143 and `gengap: terminated`, like SIGINT's 130."""
    import signal
    import time

    text = sweep_text("suite: suite.yaml", steps=100000).replace('"*-length"', '"parity_check-length"').replace('["rope", "nope"]', '["rope"]')
    (folder / "sweep.yaml").write_text(text)
    out = folder / "out"
    command = [sys.executable, "-m", "gengap.cli", "sweep", str(folder / "sweep.yaml"), "--out", str(out), "--num-cpus", "1"]
    sweep = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not list(out.glob("runs/*/metrics.jsonl")) and time.monotonic() < deadline and sweep.poll() is None:
            time.sleep(0.2)  # a run trained its first steps: Ray is up and working
        assert list(out.glob("runs/*/metrics.jsonl")), "the sweep never started training"
        sweep.send_signal(signal.SIGTERM)
        _, err = sweep.communicate(timeout=60)
    finally:
        sweep.kill()
        sweep.wait()
    assert sweep.returncode == 143, err[-3000:]
    assert err.splitlines()[-1] == "gengap: terminated" and "Traceback" not in err, err[-3000:]


def test_links_inside_a_sweep_directory_are_refused(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 30: a sweep directory whose runs/ (or a run) is a link to a folder outside would
    have every run written there; the sweep refuses it and touches nothing."""
    (folder / "sweep.yaml").write_text(sweep_text("suite: suite.yaml"))
    (folder / "victims").mkdir()
    (folder / "victims" / "thesis.tex").write_text("years of work\n")
    out = folder / "out"
    out.mkdir()
    (out / "sweep.json").write_text("{}")
    for link in ("runs", "release"):
        (out / link).symlink_to(folder / "victims")
        assert main(["sweep", str(folder / "sweep.yaml"), "--out", str(out)]) == 2
        assert f"{out / link} is a symbolic link" in capsys.readouterr().err
        (out / link).unlink()
    assert sorted(p.name for p in out.iterdir()) == ["sweep.json"]
    assert sorted(p.name for p in (folder / "victims").iterdir()) == ["thesis.tex"]
    # links among the parents of --out are resolved once: runs record the real path
    (folder / "alias").symlink_to(folder)
    from gengap.sweep_command import real_destination

    assert real_destination(str(folder / "alias" / "out")) == Path(os.path.realpath(folder)) / "out"


def _descendants(root: int) -> set[int]:
    parents = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                parents[int(name)] = int(Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier and pid not in found}
        found |= frontier
    return found


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _of_runtime(raylet: int) -> set[int]:
    """The raylet and every live process whose environment names it (its agents and workers)."""
    mark = b"RAY_RAYLET_PID=%d\0" % raylet
    found = set()
    for name in os.listdir("/proc"):
        try:
            if name.isdigit() and (int(name) == raylet or mark in Path(f"/proc/{name}/environ").read_bytes() + b"\0"):
                if Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                    found.add(int(name))
        except OSError:
            pass
    return found


@pytest.mark.slow  # a local Ray runtime and a run started: about 20 s
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_local_runtime_dies_with_a_killed_driver(folder: Path) -> None:
    """After kill -9 of a sweep driver, Ray's agents lingered ~61 s (a call to the dead GCS) and its
    worker ~2 s; gengap's watchdog ends them all within a second or so."""
    import signal
    import time

    text = sweep_text("suite: suite.yaml", steps=100000).replace('"*-length"', '"parity_check-length"').replace('["rope", "nope"]', '["rope"]')
    (folder / "sweep.yaml").write_text(text)
    out = folder / "out"
    command = [sys.executable, "-m", "gengap.cli", "sweep", str(folder / "sweep.yaml"), "--out", str(out), "--num-cpus", "1"]
    sweep = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    left: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        while not list(out.glob("runs/*/metrics.jsonl")) and time.monotonic() < deadline and sweep.poll() is None:
            time.sleep(0.2)
        raylets = [pid for pid in _descendants(sweep.pid) if b"raylet/raylet" in Path(f"/proc/{pid}/cmdline").read_bytes()]
        assert len(raylets) == 1, "no local runtime was started"
        agents = _descendants(raylets[0])  # whether or not their environment names the raylet (issue 38, item 12)
        assert len(_of_runtime(raylets[0]) | agents) >= 2  # the raylet and its agents
        sweep.kill()
        sweep.wait()
        killed = time.monotonic()
        living = lambda: _of_runtime(raylets[0]) | {pid for pid in agents if _running(pid)}  # noqa: E731
        while living() and time.monotonic() - killed < 10:
            time.sleep(0.2)
        left = living()
        print(f"the runtime's processes were gone {time.monotonic() - killed:.1f} s after the kill")
        assert not left, f"{len(left)} processes of the runtime outlived the driver by 10 s"
    finally:
        for pid in left | _descendants(sweep.pid):  # what this test started, if the watchdog failed
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if sweep.poll() is None:
            sweep.kill()
            sweep.wait()


# -- the sweep directory: the discipline of every output (issue 38, item 1) ---------------------------


def _snapshot(root: Path) -> dict[str, bytes | None]:
    return {p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))}


def test_a_sweep_takes_no_directory_for_a_file_named_sweep_json(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's case: another tool's sweep.json beside the user's report.md; the sweep ran and
    replaced both."""
    (folder / "sweep.yaml").write_text(sweep_text("suite: suite.yaml"))
    home = folder / "home"
    home.mkdir()
    (home / "sweep.json").write_text('{"method": "bayes"}\n')
    (home / "report.md").write_text("mine\n")
    before = _snapshot(folder)
    assert main(["sweep", str(folder / "sweep.yaml"), "--out", str(home)]) == 2
    err = capsys.readouterr().err
    assert "is not empty and not a sweep directory gengap wrote (its sweep.json is not a gengap sweep's)" in err and err.count("\n") == 1
    assert _snapshot(folder) == before


@pytest.mark.parametrize("contents", ["empty", "another tool's"])
def test_a_sweep_refuses_out_dot_like_every_output(folder: Path, contents: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    (folder / "sweep.yaml").write_text(sweep_text("suite: suite.yaml"))
    home = folder / "home"
    home.mkdir()
    if contents != "empty":
        (home / "sweep.json").write_text('{"method": "bayes"}\n')
    monkeypatch.chdir(home)
    before = _snapshot(folder)
    for out in (".", "..", str(folder)):
        assert main(["sweep", str(folder / "sweep.yaml"), "--out", out]) == 2
        assert "is the current directory or contains it" in capsys.readouterr().err
    assert _snapshot(folder) == before


def test_a_sweep_rewrites_only_report_files_whose_bytes_its_sweep_json_records(folder: Path) -> None:
    from gengap.errors import UsageError
    from gengap.sweep_command import check_sweep_directory

    out = folder / "out"
    (out / "runs" / "a-run").mkdir(parents=True)
    state = {"format": "gengap-sweep/1", "sweep": {}, "runs": [], "report": {}}
    (out / "sweep.json").write_text(json.dumps(state))
    check_sweep_directory(out)  # a sweep directory gengap wrote, no report yet
    (out / "report.md").write_text("mine\n")
    with pytest.raises(UsageError, match="report.md is not the one gengap wrote there"):
        check_sweep_directory(out)
    import hashlib

    state["report"] = {"report.md": hashlib.sha256(b"mine\n").hexdigest()}
    (out / "sweep.json").write_text(json.dumps(state))
    check_sweep_directory(out)  # the bytes sweep.json records: gengap's report
    for stray, message in (("notes.txt", "'notes.txt' is not one of a sweep's files"), ("runs/x.log", "runs/x.log is not a run folder")):
        (out / stray).write_text("mine")
        with pytest.raises(UsageError, match=message):
            check_sweep_directory(out)
        (out / stray).unlink()


def test_a_sweep_out_inside_its_release_is_refused(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    release = folder / "rel"
    (release / "data" / "x-y").mkdir(parents=True)
    (release / "manifest.json").write_text("{}")
    (release / "SHA256SUMS").write_text("")
    (folder / "sweep.yaml").write_text(sweep_text("release: rel"))
    assert main(["sweep", str(folder / "sweep.yaml"), "--out", str(release / "sweep")]) == 2
    assert "lies inside the input" in capsys.readouterr().err
    assert not (release / "sweep").exists()
