"""One notion of "what gengap wrote" for every --force; --out . decided up front; an output's
directory removed or renamed mid-run (issue 23, data loss).

Every case runs gengap in a subprocess and checks the exit code, the one-line error and that
nothing else on disk changed.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from gengap.errors import UsageError
from gengap.files import check_output_directory
from gengap.ownership import SPLIT
from gengap.release import RELEASE, release_files
from gengap.harnesses.export import export_files, export_release
from tests.output_helpers import gengap, one_line_error, start_gengap_with, tree
from tests.test_output_discipline import TINY, staging_names, wait_for


@pytest.fixture()
def built(built_outputs: Path) -> Path:
    return built_outputs


def copy_of(built: Path, name: str, tmp_path: Path) -> Path:
    shutil.copytree(built / name, tmp_path / name, symlinks=True)
    return tmp_path / name


# what gengap is asked to rebuild over each kind of directory; {out} is the directory
COMMANDS = {
    "release": ["release", "{built}/tiny.yaml", "--out", "{out}", "--workers", "1", "--force"],
    "split": ["split", "{built}/pool.jsonl", "--strategy", "iid", "--out", "{out}", "--force"],
    "export": ["export", "{built}/harness/release", "--to", "chat", "--out", "{out}", "--force"],
}
MARKERS = {"release": "manifest.json", "split": "report.json", "export": "gengap-export.json"}
MADE = {"release": "release", "split": "split", "export": "export-chat"}


def command(kind: str, built: Path, out: Path | str) -> list[str]:
    return [arg.format(built=built, out=out) for arg in COMMANDS[kind]]


# -- a user's directory holding a file named like gengap's marker --------------------------------


@pytest.mark.parametrize(("kind", "marker"), [*((kind, "user's own") for kind in sorted(COMMANDS)), ("release", "gengap's, copied")])
def test_force_refuses_a_users_directory_holding_a_marker_file(built: Path, tmp_path: Path, kind: str, marker: str) -> None:
    """Issue 23: `release --force` deleted thesis.tex beside any manifest.json; `split --force`
    deleted paper.md beside any report.json. Neither a marker of another format nor a genuine
    gengap marker copied beside a user's files makes the directory gengap's."""
    home = tmp_path / "home"
    home.mkdir()
    name = MARKERS[kind]
    if marker == "user's own":
        (home / name).write_text(json.dumps({"manifest_version": 3}))
    else:
        shutil.copy(built / MADE[kind] / name, home / name)
    (home / "thesis.tex").write_text("years of work")
    (home / "paper.md").write_text("draft")
    before = tree(tmp_path)
    result = gengap(*command(kind, built, home))
    one_line_error(result, f"refusing to replace {str(home)!r}")
    assert "gengap did not write it" in result.stderr
    assert tree(tmp_path) == before


@pytest.mark.parametrize(("kind", "extra"), [("release", "thesis.tex"), ("export", "nested"), ("split", "empty folder")])
def test_force_refuses_gengaps_output_holding_a_users_file(built: Path, tmp_path: Path, kind: str, extra: str) -> None:
    """A directory gengap wrote, with something of the user's added: its marker does not
    account for it, so it is no longer gengap's to replace (every kind, and many more additions:
    test_force_replaces_exactly_the_directories_their_marker_accounts_for)."""
    out = copy_of(built, MADE[kind], tmp_path)
    if extra == "thesis.tex":
        (out / "thesis.tex").write_text("years of work")
        shown = "'thesis.tex'"
    elif extra == "nested":
        folder = next(p for p in sorted(out.rglob("*")) if p.is_dir()) if kind != "split" else out
        (folder / "notes.txt").write_text("mine")
        shown = repr((folder / "notes.txt").relative_to(out).as_posix())
    else:
        (out / "drafts").mkdir()
        shown = "'drafts'"
    before = tree(tmp_path)
    result = gengap(*command(kind, built, out))
    one_line_error(result, f"{shown} in it is not one its {MARKERS[kind]} accounts for")
    assert tree(tmp_path) == before


@pytest.mark.parametrize("kind", sorted(COMMANDS))
def test_force_replaces_what_gengap_wrote_even_partly_deleted(built: Path, tmp_path: Path, kind: str) -> None:
    out = copy_of(built, MADE[kind], tmp_path)
    fresh = tree(out)
    victim = sorted(p for p in out.rglob("*") if p.is_file() and p.name != MARKERS[kind])[0]
    victim.unlink()
    result = gengap(*command(kind, built, out))
    assert result.returncode == 0, result.stderr
    assert tree(out) == fresh
    assert sorted(os.listdir(tmp_path)) == [out.name]  # no lock, staging or trash left beside it


NAMES = st.lists(st.lists(st.sampled_from(["train.jsonl", "report.json", "manifest.json", "data", "notes", ".x", "a.md"]), min_size=1, max_size=2), max_size=3)


@given(kind=st.sampled_from(["split", "release"]), added=NAMES)
def test_force_replaces_exactly_the_directories_their_marker_accounts_for(built_outputs: Path, kind: str, added: list[list[str]]) -> None:
    """Whatever is added to a directory gengap wrote, --force still replaces it only when every
    file and folder in it is one its marker accounts for."""
    product = {"split": SPLIT, "release": RELEASE}[kind]
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / kind
        shutil.copytree(built_outputs / MADE[kind], out)
        accounted = {p.relative_to(out).as_posix() for p in out.rglob("*")}
        for parts in added:
            path = out.joinpath(*parts)
            assume(not any(parent.is_file() for parent in path.parents) and not path.is_dir())
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x")  # over a file gengap wrote, this only changes its content
        present = {p.relative_to(out).as_posix() for p in out.rglob("*")}
        if present <= accounted and [MARKERS[kind]] not in added:  # its marker overwritten: not gengap's either
            assert check_output_directory(out, force=True, product=product) == out
        else:
            with pytest.raises(UsageError, match="so gengap did not write it"):
                check_output_directory(out, force=True, product=product)


def test_release_files_list_exactly_what_a_release_holds(built: Path) -> None:
    release = built / "release"
    manifest = json.loads((release / "manifest.json").read_text())
    present = {p.relative_to(release).as_posix() for p in release.rglob("*") if p.is_file()}
    assert set(release_files(manifest)) == present
    assert release_files({"manifest_version": 3}) is None
    assert release_files({**manifest, "fingerprint": "0" * 64}) is None  # a manifest whose fingerprint is not its data's


@pytest.mark.parametrize("to", ["chat", "lm-eval", "verl"])
def test_export_files_list_exactly_what_an_export_holds(built: Path, tmp_path: Path, to: str) -> None:
    if to == "verl":
        pytest.importorskip("pyarrow")
    out = tmp_path / "export"
    manifest = export_release(built / "harness" / "release", out, to)
    present = {p.relative_to(out).as_posix() for p in out.rglob("*")}  # files and config folders
    assert set(export_files(manifest)) == present
    assert export_files({**manifest, "format": "something-else/1"}) is None


# -- --out . and other destinations that are, or hold, the current directory ----------------------


CURRENT = [(kind, state, ".") for kind in sorted(COMMANDS) for state in ("empty", "holds gengap's output")]


@pytest.mark.parametrize(("kind", "state", "out"), CURRENT + [("split", "holds gengap's output", ".."), ("release", "empty", "sub/..")])
def test_out_naming_the_current_directory_is_refused_up_front(built: Path, tmp_path: Path, kind: str, state: str, out: str) -> None:
    """Issue 23: `--out .` with --force built the whole default suite (8 minutes) before it
    refused; in an empty directory it was refused as "not empty" because of its own lock. Now
    it is refused before any work, and gengap's lock and staging never count as content."""
    here = copy_of(built, MADE[kind], tmp_path) if state != "empty" else tmp_path / "here"
    here.mkdir(exist_ok=True)
    if out == "..":
        (here / "sub").mkdir()
    args = command(kind, built, out)
    if kind == "release":
        args = [a for a in args if a != f"{built}/tiny.yaml"]  # the default suite: minutes to build, refused in a second
    before = tree(tmp_path)
    started = time.monotonic()
    result = gengap(*args, cwd=here / "sub" if out == ".." else here)
    one_line_error(result, "is the current directory or contains it")
    assert time.monotonic() - started < 60
    assert tree(tmp_path) == before


def test_out_ending_in_dot_dot_names_the_directory_and_keeps_the_lock_outside(built: Path, tmp_path: Path) -> None:
    """`--out x/gone/..` is x: its lock and staging go beside x, never inside it or in x/gone."""
    (tmp_path / "x").mkdir()
    result = gengap("split", str(built / "pool.jsonl"), "--strategy", "iid", "--out", f"{tmp_path}/x/gone/..")
    assert result.returncode == 0, result.stderr
    assert sorted(os.listdir(tmp_path / "x")) == ["report.json", "test.jsonl", "train.jsonl", "validation.jsonl"]
    assert os.listdir(tmp_path) == ["x"]


# -- the output's directory removed or renamed while gengap writes -------------------------------

SLOW = {
    "release": (1.5, ["release", "{suite}", "--out", "{out}", "--workers", "1"]),
    "generate": (0.6, ["generate", "parity_check", "--n", "30000", "--out", "{out}"]),
}


def start_slow(kind: str, tmp_path: Path, out: Path):
    (tmp_path / "tiny.yaml").write_text(TINY)
    seconds, args = SLOW[kind]
    process = start_gengap_with({"slow": seconds}, *[a.format(suite=tmp_path / "tiny.yaml", out=out) for a in args])
    try:
        assert wait_for(lambda: bool(staging_names(out.parent)) and len(staging_names(out.parent)) >= 2, timeout=60)
    except BaseException:
        process.kill()
        process.wait()
        raise
    return process


@pytest.mark.parametrize("kind", sorted(SLOW))
def test_a_removed_output_directory_is_not_recreated(tmp_path: Path, kind: str) -> None:
    """Issue 23: gengap said "nothing was left behind" but re-created the deleted parent."""
    parent = tmp_path / "parent"
    parent.mkdir()
    process = start_slow(kind, tmp_path, parent / "out")
    try:
        shutil.rmtree(parent)
        _, err = process.communicate(timeout=120)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 2 and err.count("gengap: error: ") == 1 and "Traceback" not in err, err
    assert f"the directory {str(parent)!r} was removed while gengap was writing" in err and "not re-created" in err
    assert not parent.exists()
    assert sorted(os.listdir(tmp_path)) == ["tiny.yaml"]


@pytest.mark.parametrize("kind", sorted(SLOW))
def test_a_renamed_output_directory_keeps_nothing_of_gengaps(tmp_path: Path, kind: str) -> None:
    """Issue 23: the whole staging directory and the lock were left inside the renamed parent."""
    parent = tmp_path / "parent"
    parent.mkdir()
    (parent / "keep.txt").write_text("mine")
    process = start_slow(kind, tmp_path, parent / "out")
    try:
        parent.rename(tmp_path / "moved")
        _, err = process.communicate(timeout=120)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 2 and err.count("gengap: error: ") == 1 and "Traceback" not in err, err
    assert f"the directory {str(parent)!r} was renamed or replaced while gengap was writing" in err
    assert tree(tmp_path / "moved") == {"keep.txt": ("file", b"mine")}
    assert not parent.exists()
