"""One notion of "what gengap wrote" for every --force; --out . decided up front; an output's
directory removed or renamed mid-run (issue 23, data loss).

Every case runs gengap in a subprocess and checks the exit code, the one-line error and that
nothing else on disk changed.
"""

from __future__ import annotations

import hashlib
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
from gengap.ownership import EXPORT, SPLIT
from gengap.release import RELEASE, fingerprint, release_files
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
    file and folder in it is one its marker accounts for, with the bytes its marker lists."""
    product = {"split": SPLIT, "release": RELEASE}[kind]
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / kind
        shutil.copytree(built_outputs / MADE[kind], out)
        accounted = {p.relative_to(out).as_posix() for p in out.rglob("*")}
        overwritten = False
        for parts in added:
            path = out.joinpath(*parts)
            assume(not any(parent.is_file() for parent in path.parents) and not path.is_dir())
            path.parent.mkdir(parents=True, exist_ok=True)
            overwritten |= path.is_file()  # over a file gengap wrote: its bytes are no longer the listed ones
            path.write_text("x")
        present = {p.relative_to(out).as_posix() for p in out.rglob("*")}
        if present <= accounted and not overwritten:
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


# -- ownership proven by the bytes on disk (issue 38, item 2) ---------------------------------------


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _home_with_thesis(tmp_path: Path) -> Path:
    home = tmp_path / "victim"
    home.mkdir()
    (home / "thesis.tex").write_text("years of work")
    return home


def _one_line_manifest(listed: dict[str, bytes], configs: list[dict] | None = None) -> str:
    """A hand-written release manifest whose fingerprint matches the hashes it lists."""
    data_files = {path: {"sha256": _sha(data), "bytes": len(data), "rows": 1} for path, data in listed.items()}
    return json.dumps({"gengap_version": "0.1.0", "data_files": data_files, "configs": configs or [], "fingerprint": fingerprint(data_files)})


@pytest.mark.parametrize("listed", ["thesis.tex with its own hash", "thesis.tex with another hash", "nothing"])
def test_a_hand_written_release_manifest_cannot_make_force_delete_a_users_file(built: Path, tmp_path: Path, listed: str) -> None:
    """The issue's case: a one-line manifest.json whose fingerprint matches the hashes it lists,
    beside victim/thesis.tex: `release --out victim --force` deleted thesis.tex."""
    home = _home_with_thesis(tmp_path)
    thesis = (home / "thesis.tex").read_bytes()
    files = {"thesis.tex": thesis if "own" in listed else b"other"} if listed != "nothing" else {}
    (home / "manifest.json").write_text(_one_line_manifest(files))
    before = tree(tmp_path)
    result = gengap(*command("release", built, home))
    one_line_error(result, f"refusing to replace {str(home)!r}")
    assert tree(tmp_path) == before


def test_a_copied_real_manifest_beside_a_users_file_at_a_listed_path_is_not_gengaps(built: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    listed = sorted(json.loads((built / "release" / "manifest.json").read_text())["data_files"])[0]
    (home / listed).parent.mkdir(parents=True)
    shutil.copy(built / "release" / "manifest.json", home / "manifest.json")
    (home / listed).write_text("my own records\n")
    before = tree(tmp_path)
    result = gengap(*command("release", built, home))
    one_line_error(result, f"the file {listed!r} in it is not the one its manifest.json lists (its bytes differ)")
    assert tree(tmp_path) == before


@pytest.mark.parametrize("kind", sorted(COMMANDS))
def test_gengaps_output_with_one_file_changed_is_not_gengaps(built: Path, tmp_path: Path, kind: str) -> None:
    out = copy_of(built, MADE[kind], tmp_path)
    victim = sorted(p for p in out.rglob("*") if p.is_file() and p.name not in (MARKERS[kind], "SHA256SUMS"))[-1]
    victim.write_bytes(victim.read_bytes() + b"\n")
    before = tree(tmp_path)
    result = gengap(*command(kind, built, out))
    one_line_error(result, f"{victim.relative_to(out).as_posix()!r} in it is not the one its {MARKERS[kind]} lists (its bytes differ)")
    assert tree(tmp_path) == before


def test_a_release_whose_checksums_are_not_gengaps_vouches_for_no_card_file(built: Path, tmp_path: Path) -> None:
    out = copy_of(built, "release", tmp_path)
    sums = (out / "SHA256SUMS").read_text().splitlines(keepends=True)
    (out / "SHA256SUMS").write_text("".join(sums[1:]))  # a line dropped: no longer what gengap writes there
    with pytest.raises(UsageError, match="'README.md' in it is not one its manifest.json accounts for|'CITATION.cff' in it is not one"):
        check_output_directory(out, force=True, product=RELEASE)
    (out / "SHA256SUMS").unlink()  # without checksums only the data files are vouched for
    with pytest.raises(UsageError, match="is not one its manifest.json accounts for"):
        check_output_directory(out, force=True, product=RELEASE)
    for name in ("README.md", "CITATION.cff", "croissant.json"):
        (out / name).unlink()
    for plot in (out / "plots").iterdir():
        plot.unlink()
    (out / "plots").rmdir()
    with pytest.raises(UsageError, match="its manifest.json is vouched for by no hash"):  # nor the manifest itself
        check_output_directory(out, force=True, product=RELEASE)
    shutil.copy(built / "release" / "SHA256SUMS", out / "SHA256SUMS")
    assert check_output_directory(out, force=True, product=RELEASE) == out  # the checksums back: every file left is vouched for


@pytest.mark.parametrize("kind", ["split", "export"])
def test_forged_split_and_export_markers_prove_nothing(built: Path, tmp_path: Path, kind: str) -> None:
    """A report.json or gengap-export.json in gengap's format that lists the user's files, or
    lists no hashes (an older gengap's), does not make the directory gengap's."""
    home = _home_with_thesis(tmp_path)
    marker = json.loads((built / MADE[kind] / MARKERS[kind]).read_text())
    if kind == "split":
        (home / "train.jsonl").write_text("mine\n")
        old = {k: v for k, v in marker.items() if k != "files"}
        forged = {**marker, "files": {**marker["files"], "train.jsonl": {"sha256": _sha(b"mine\n"), "bytes": 5, "rows": 1}}}
        product = SPLIT
    else:
        config = marker["configs"][0]["name"]
        (home / config).mkdir()
        (home / config / "thesis.tex").write_text("years of work")
        old = {k: v for k, v in marker.items() if k != "sha256"}
        forged = {**marker, "sha256": {f"{config}/thesis.tex": _sha(b"years of work")},
                  "configs": [{**marker["configs"][0], "files": {f"{config}/thesis.tex": 1}}]}
        product = EXPORT
    for document, reason in ((old, "lists no hashes"), (forged, "")):
        (home / MARKERS[kind]).write_text(json.dumps(document))
        with pytest.raises(UsageError, match=reason or "gengap did not write it|is not one its"):
            check_output_directory(home, force=True, product=product)
    assert (home / "thesis.tex").read_text() == "years of work"


@given(data=st.data())
def test_any_changed_byte_of_gengaps_output_makes_it_not_gengaps(built_outputs: Path, data: st.DataObject) -> None:
    kind = data.draw(st.sampled_from(["release", "split", "export"]))
    product = {"release": RELEASE, "split": SPLIT, "export": EXPORT}[kind]
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / kind
        shutil.copytree(built_outputs / MADE[kind], out)
        assert check_output_directory(out, force=True, product=product) == out
        files = sorted(p for p in out.rglob("*") if p.is_file())
        victim = data.draw(st.sampled_from(files))
        content = bytearray(victim.read_bytes())
        at = data.draw(st.integers(0, max(len(content) - 1, 0)))
        if content:
            content[at] ^= 1 << data.draw(st.integers(0, 7))
        else:
            content = bytearray(b"x")
        victim.write_bytes(bytes(content))
        with pytest.raises(UsageError, match="refusing to replace"):
            check_output_directory(out, force=True, product=product)


# -- one rule for where output may go: never inside an input, never inside a release (item 14) ------


@pytest.mark.parametrize(
    "argv,inside",
    [
        (["export", "{built}/harness/release", "--to", "chat", "--out", "{built}/harness/release/inside"], "input"),
        (["export", "{built}/harness/release", "--to", "chat", "--out", "{built}/release/inside"], "release"),
        (["split", "{built}/pool.jsonl", "--strategy", "iid", "--out", "{built}/release/data/mine"], "release"),
        (["generate", "parity_check", "--n", "5", "--out", "{built}/release/plots/extra.jsonl"], "release"),
        (["release", "{built}/tiny.yaml", "--out", "{built}/release/nested", "--workers", "1"], "release"),
    ],
    ids=["export inside its input", "export inside a release", "split inside a release", "generate inside a release", "release inside a release"],
)
def test_no_output_goes_inside_an_input_or_a_release(built: Path, argv: list[str], inside: str) -> None:
    """The issue's case: `export REL --to chat --out REL/inside` was accepted, and REL then failed verify."""
    argv = [arg.format(built=built) for arg in argv]
    before = tree(built)
    result = gengap(*argv)
    one_line_error(result, f"lies inside the {inside}")
    assert tree(built) == before
    assert gengap("verify", str(built / "release")).returncode == 0


def test_report_out_inside_a_run_it_reads_is_refused(tmp_path: Path) -> None:
    from gengap.files import atomic_outputs

    run = tmp_path / "run"
    run.mkdir()
    with pytest.raises(UsageError, match="lies inside the input"):
        with atomic_outputs([run / "report.md"], inputs=[run]):
            pass


# -- an --out that names no file (items 18, 19) ------------------------------------------------------


@pytest.mark.parametrize("out", [".", "/", "", "..", "somewhere/"])
def test_report_out_naming_a_directory_or_nothing_is_one_line(built: Path, tmp_path: Path, out: str) -> None:
    before = tree(tmp_path)
    result = gengap("report", str(built), "--out", out, cwd=tmp_path)
    one_line_error(result, "--out")
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert tree(tmp_path) == before


def test_generate_out_empty_is_refused_not_standard_output(tmp_path: Path) -> None:
    result = gengap("generate", "parity_check", "--n", "3", "--out", "", cwd=tmp_path)
    one_line_error(result, "output path '' is empty")
    assert result.stdout == "" and not any(tmp_path.iterdir())
