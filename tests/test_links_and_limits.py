"""Issue 30: links planted where gengap creates files beside a destination (locks, staging,
trash, temporary files) are never followed, for every writing command; stale-staging cleanup
spares a live writer whatever its pid looks like; generate, the MCD search and report are
bounded and disciplined like every other writer.

Every case runs gengap in a subprocess and checks the exit code, the one-line error and that
nothing else on disk changed (the victims of the planted links above all).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gengap.generators.safe_files import atomic_file
from gengap.cli import main
from gengap.locking import lock_name
from tests.output_helpers import RUNNER, gengap, gengap_with, one_line_error, start_gengap_with, tree
from tests.test_output_discipline import TINY, staging_names, wait_for


@pytest.fixture()
def victims(tmp_path: Path) -> Path:
    """A directory of a user's files that planted links point at (and the dangling link's target)."""
    folder = tmp_path / "victims"
    folder.mkdir()
    (folder / "thesis.tex").write_text("years of work\n")
    (folder / "notes.md").write_text("more work\n")
    return folder


def fake_run(folder: Path, config: str, pos: str, divergence: float) -> None:
    """A run directory whose results.json has divergence and novelty, so a report makes all three plots."""
    buckets = {b: {"n": 10, "exact_match": 0.5, "token_accuracy": 0.5} for b in ("0", "1", "2", "3+")}
    per_seed = [{
        "seed": seed, "id_exact_match": 1.0, "ood_exact_match": 0.5, "gap": 0.5, "id_token_accuracy": 1.0, "ood_token_accuracy": 0.5,
        "by_length": {"id": {"2": 1.0}, "ood": {"5": 0.5}}, "by_novelty": {"id": {}, "ood": buckets},
    } for seed in (0, 1)]
    results = {"config": config, "pos": pos, "preset": "tiny", "steps": 10, "per_seed": per_seed, "data": {"input_length": {"train": [1, 2]}},
               "divergence": {"atom_divergence": 0.01, "compound_divergence": divergence, "compounds": "lexical"}}
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps(results))


@pytest.fixture()
def runs(tmp_path: Path) -> Path:
    for name, config in enumerate(("rev", "par", "cnt", "dup")):  # enough configs for the divergence section
        fake_run(tmp_path / "runs" / str(name), config, "rope", 0.2 * name)
    return tmp_path / "runs"


REPORT_FILES = ["report.md", "report.json", "report.png", "report-divergence.png", "report-novelty.png"]


def prepare(kind: str, built: Path, runs: Path, home: Path) -> tuple[list[str], str]:
    """(gengap arguments, destination name in home) of a --force run of kind over an earlier
    output of it in home."""
    if kind == "generate":
        (home / "out.jsonl").write_text("old\n")
        return ["generate", "parity_check", "--n", "5", "--out", str(home / "out.jsonl"), "--force"], "out.jsonl"
    if kind == "report":
        assert gengap("report", str(runs), "--out", str(home / "report.md")).returncode == 0
        assert sorted(os.listdir(home)) == sorted(REPORT_FILES)
        return ["report", str(runs), "--out", str(home / "report.md"), "--force"], "report.md"
    made, args = {
        "release": ("release", ["release", str(built / "tiny.yaml"), "--workers", "1"]),
        "split": ("split", ["split", str(built / "pool.jsonl"), "--strategy", "iid"]),
        "export": ("export-chat", ["export", str(built / "harness" / "release"), "--to", "chat"]),
    }[kind]
    shutil.copytree(built / made, home / kind)
    return [*args, "--out", str(home / kind), "--force"], kind


WRITERS = ["generate", "release", "split", "export", "report"]


@pytest.mark.parametrize(("kind", "link"), [(kind, ("to a file", "dangling")[i % 2]) for i, kind in enumerate(WRITERS)] + [("report", "dangling")])
def test_a_link_at_the_lock_is_never_followed(built_outputs: Path, runs: Path, victims: Path, tmp_path: Path, kind: str, link: str) -> None:
    """Issue 30: gengap opened `.<name>.gengap-lock` through a link and truncated its target
    (thesis.tex then held gengap's pid); a dangling link made it create the link's target."""
    home = tmp_path / "home"
    home.mkdir()
    args, name = prepare(kind, built_outputs, runs, home)
    locked = "report-novelty.png" if kind == "report" and link == "dangling" else name  # a later lock of report's files
    target = victims / ("thesis.tex" if link == "to a file" else "created.txt")
    (home / lock_name(locked)).symlink_to(target)
    before = tree(tmp_path)
    result = gengap(*args)
    one_line_error(result, f"refusing to use the lock file {lock_name(locked)!r}: it is a symbolic link")
    assert tree(tmp_path) == before
    assert not (victims / "created.txt").exists()


def test_a_hard_link_or_a_foreign_file_at_the_lock_is_refused(victims: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    os.link(victims / "thesis.tex", tmp_path / lock_name("out.jsonl"))
    before = tree(tmp_path)
    one_line_error(gengap("generate", "parity_check", "--n", "5", "--out", str(out)), "it is a hard link to another file")
    assert tree(tmp_path) == before
    os.unlink(tmp_path / lock_name("out.jsonl"))
    (tmp_path / lock_name("out.jsonl")).write_text("my own notes, named oddly\n")
    before = tree(tmp_path)
    one_line_error(gengap("generate", "parity_check", "--n", "5", "--out", str(out)), "it is a file gengap did not make")
    assert tree(tmp_path) == before


@pytest.mark.parametrize("kind", WRITERS)
def test_links_at_staging_and_trash_names_are_never_followed(built_outputs: Path, runs: Path, victims: Path, tmp_path: Path, kind: str) -> None:
    """A link appearing at the staging or trash name gengap has just drawn (as if planted by
    someone who guessed it) is neither written through nor renamed onto: gengap draws another."""
    home = tmp_path / "home"
    home.mkdir()
    args, name = prepare(kind, built_outputs, runs, home)
    before = tree(victims)
    plant = {"staging": str(victims / "thesis.tex"), "trash": str(victims / "created")}
    result = gengap_with({"plant": plant, "dir": str(home)}, *args)
    assert result.returncode == 0, result.stderr
    assert tree(victims) == before
    links = [n for n in os.listdir(home) if os.path.islink(home / n)]
    assert links and all(os.readlink(home / n) in plant.values() for n in links)
    outputs = sorted(set(os.listdir(home)) - set(links))
    assert outputs == (sorted(REPORT_FILES) if kind == "report" else [name])


@pytest.mark.slow  # two tiny trainings: about 25 s on 2 shared cores (test_atomic_file_unlinks_a_link_at_its_temporary_name runs by default)
def test_train_never_writes_through_links_at_its_temporary_files(built_outputs: Path, victims: Path, tmp_path: Path) -> None:
    """Issue 30: a link at RUN/results.json.tmp had its target overwritten by `train --resume`.
    Every file of a run directory is written through NAME.tmp, created exclusively after
    whatever is at that name is unlinked (never followed)."""
    pytest.importorskip("torch")
    run = tmp_path / "run"
    args = ["train", str(built_outputs / "release"), "--config", "parity_check-length", "--preset", "tiny", "--steps", "2",
            "--eval-every", "2", "--eval-examples", "2", "--layers", "1", "--d-model", "16", "--heads", "2", "--out", str(run)]
    assert gengap(*args, "--seeds", "0").returncode == 0
    (run / "seed-1").mkdir()
    temporary = ["run.json", "tokenizer.json", "metrics.jsonl", "results.json", "seed-1/result.json", "seed-1/checkpoint.pt",
                 "plots/accuracy_by_length.png"]
    for i, name in enumerate(temporary):
        (run / f"{name}.tmp").symlink_to(victims / ("thesis.tex" if i % 2 else f"created-{i}"))
    before = tree(victims)
    result = gengap(*args, "--seeds", "0,1", "--resume")
    assert result.returncode == 0, result.stderr
    assert tree(victims) == before
    assert not list(run.rglob("*.tmp"))
    assert json.loads((run / "results.json").read_text())["seeds"] == [0, 1]
    assert (run / "seed-1" / "checkpoint.pt").stat().st_size > 1000


def test_atomic_file_unlinks_a_link_at_its_temporary_name(victims: Path, tmp_path: Path) -> None:
    """What every run file, checkpoint, tokenizer, plot, report and sweep state is written with."""
    pytest.importorskip("torch")
    from gengap.baselines.checkpoints import save_checkpoint
    from gengap.baselines.training import atomic_write

    before = tree(victims)
    (tmp_path / "results.json.tmp").symlink_to(victims / "thesis.tex")
    (tmp_path / "checkpoint.pt.tmp").symlink_to(victims / "created")
    atomic_write(tmp_path / "results.json", "{}\n")
    save_checkpoint(tmp_path / "checkpoint.pt", {"step": 1})
    assert tree(victims) == before
    assert sorted(os.listdir(tmp_path)) == ["checkpoint.pt", "results.json", "victims"]
    assert (tmp_path / "results.json").read_text() == "{}\n"


def test_a_failed_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    """A full disk (or any error) while a run file or checkpoint is written leaves the old file
    and no NAME.tmp (issue 23: checkpoint.pt.tmp was left behind)."""
    path = tmp_path / "checkpoint.pt"
    path.write_bytes(b"old")
    with pytest.raises(OSError, match="No space"):
        with atomic_file(path) as handle:
            handle.write(b"partial")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert os.listdir(tmp_path) == ["checkpoint.pt"] and path.read_bytes() == b"old"
    (tmp_path / "checkpoint.pt.tmp").mkdir()  # a directory in the way is an error, not removed
    with pytest.raises(IsADirectoryError):
        with atomic_file(path) as handle:
            handle.write(b"new")
    assert path.read_bytes() == b"old"


# -- stale-staging cleanup: the lock is the truth --------------------------------------------------


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def check_cleanup_spares(release: subprocess.Popen[str], out: Path) -> None:
    """While release writes out, an unrelated gengap writing beside it must leave its staging."""
    try:
        assert wait_for(lambda: len(staging_names(out.parent)) >= 2, timeout=60), "the release never started"
        other = gengap("generate", "parity_check", "--n", "5", "--out", str(out.parent / "x.jsonl"))
        assert other.returncode == 0, other.stderr
        _, err = release.communicate(timeout=120)
    finally:
        release.kill()
        release.wait()
    assert release.returncode == 0, err
    assert main(["verify", str(out)]) == 0
    assert sorted(os.listdir(out.parent)) == ["release", "tiny.yaml", "x.jsonl"]


def test_cleanup_spares_a_live_writer_whose_pid_looks_dead(tmp_path: Path) -> None:
    """Issue 30: a release whose staging name carries a pid that does not exist here (as under
    `unshare --pid`) had its live staging deleted by an unrelated `gengap generate`."""
    (tmp_path / "tiny.yaml").write_text(TINY)
    args = ["release", str(tmp_path / "tiny.yaml"), "--out", str(tmp_path / "release"), "--workers", "1"]
    check_cleanup_spares(start_gengap_with({"slow": 1.5, "dead_pid": dead_pid()}, *args), tmp_path / "release")


def _unshare() -> list[str] | None:
    for command in (["unshare", "--pid", "--fork"], ["unshare", "--user", "--map-root-user", "--pid", "--fork"]):
        try:
            if subprocess.run([*command, "true"], capture_output=True, timeout=30).returncode == 0:
                return command
        except (OSError, subprocess.TimeoutExpired):
            continue
    return None


def test_cleanup_spares_a_live_writer_in_another_pid_namespace(tmp_path: Path) -> None:
    """The case as reported: the release really runs under `unshare --pid --fork`."""
    unshare = _unshare()
    if unshare is None:
        pytest.skip("unshare --pid is not available here (test_cleanup_spares_a_live_writer_whose_pid_looks_dead covers it)")
    (tmp_path / "tiny.yaml").write_text(TINY)
    spec = {"slow": 1.5, "argv": ["release", str(tmp_path / "tiny.yaml"), "--out", str(tmp_path / "release"), "--workers", "1"]}
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    release = subprocess.Popen([*unshare, sys.executable, "-c", RUNNER, json.dumps(spec)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env)
    check_cleanup_spares(release, tmp_path / "release")


# -- bounded outputs ----------------------------------------------------------------------------


def test_generate_refuses_an_n_beyond_the_record_limit_up_front(tmp_path: Path) -> None:
    """Issue 30: `generate --n 10^29 --out FILE` wrote 9.5 GB before it was stopped."""
    out = tmp_path / "out.jsonl"
    huge = str(10**29)
    for extra in (["--out", str(out)], []):
        result = gengap("generate", "parity_check", "--n", huge, *extra)
        one_line_error(result, "is more than the limit of 10,000,000 records")
        assert result.stdout == ""
    one_line_error(gengap("generate", "parity_check", "--n", "6", "--out", str(out), env={"GENGAP_MAX_RECORDS": "5"}), "limit of 5 records")
    assert os.listdir(tmp_path) == []
    assert gengap("generate", "parity_check", "--n", "6", "--max-records", "6", "--out", str(out), env={"GENGAP_MAX_RECORDS": "5"}).returncode == 0
    assert len(out.read_text().splitlines()) == 6


def test_generate_all_is_held_to_the_record_limit_before_enumerating(tmp_path: Path) -> None:
    """`generate --all` of a huge enumerable table (p=4001: 16,008,001 records) is refused up
    front by its counted size, as `pool: all` is; a small table still enumerates."""
    out = tmp_path / "out.jsonl"
    for extra in (["--out", str(out)], []):
        result = gengap("generate", "modular_operation", "--all", "--param", "p=4001", *extra)
        one_line_error(result, "--all (16,008,001 records) is more than the limit of 10,000,000 records")
        assert result.stdout == ""
    assert os.listdir(tmp_path) == []
    small = gengap("generate", "modular_operation", "--all", "--param", "p=7", "--max-records", "49", "--out", str(out))
    assert small.returncode == 0
    assert len(out.read_text().splitlines()) == 49
    out.unlink()
    one_line_error(gengap("generate", "modular_operation", "--all", "--param", "p=7", "--max-records", "48"), "--all (49 records)")


def test_generate_refuses_an_output_its_disk_cannot_hold(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    result = gengap_with({"free_bytes": 100_000}, "generate", "parity_check", "--n", "20000", "--out", str(out))
    one_line_error(result, "would take about")
    assert "its file system has 100.0 KB free" in result.stderr
    assert os.listdir(tmp_path) == []


def test_mcd_steps_are_bounded(built_outputs: Path, tmp_path: Path) -> None:
    """Issue 30: the MCD search's steps had no bound."""
    out = tmp_path / "split"
    result = gengap("split", str(built_outputs / "pool.jsonl"), "--strategy", "mcd", "--option", f"steps={10**29}", "--out", str(out))
    one_line_error(result, "mcd: option steps=")
    assert "out of range [1, 1000000000]" in result.stderr
    suite = tmp_path / "suite.yaml"
    suite.write_text(TINY.replace("entries:\n", "entries:\n  - {task: scan, split: mcd, pool: all, options: {steps: 1000000000000}}\n"))
    one_line_error(gengap("release", str(suite), "--out", str(tmp_path / "release")), "out of range [1, 1000000000]")
    assert sorted(os.listdir(tmp_path)) == ["suite.yaml"]


@pytest.mark.parametrize("existing", ["report.md", "report-novelty.png"])
def test_report_refuses_to_overwrite_any_of_its_files_without_force(runs: Path, tmp_path: Path, existing: str) -> None:
    """Issue 30: `gengap report --out FILE` overwrote an existing file; so did its plots."""
    home = tmp_path / "home"
    home.mkdir()
    (home / existing).write_text("mine")
    before = tree(tmp_path)
    one_line_error(gengap("report", str(runs), "--out", str(home / "report.md")), f"output file {str(home / existing)!r} exists (use --force")
    assert tree(tmp_path) == before
    assert gengap("report", str(runs), "--out", str(home / "report.md"), "--force").returncode == 0
    assert sorted(os.listdir(home)) == sorted(REPORT_FILES)
    assert (home / "report.md").read_text().startswith("# Baseline gap report")


def test_report_force_replaces_regular_files_only_and_a_failed_report_writes_nothing(runs: Path, victims: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "report.png").symlink_to(victims / "thesis.tex")
    before = tree(tmp_path)
    one_line_error(gengap("report", str(runs), "--out", str(home / "report.md"), "--force"), "is a symbolic link: gengap only writes regular files")
    assert tree(tmp_path) == before
    (home / "report.png").unlink()
    (tmp_path / "empty").mkdir()
    one_line_error(gengap("report", str(tmp_path / "empty"), "--out", str(home / "report.md")), "no results.json")
    assert os.listdir(home) == []
