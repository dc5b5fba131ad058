"""Every command and Python snippet of README.md and the docs/ pages runs as written.

A page's fenced ``bash``, ``sh``, ``console`` and ``python`` blocks run in order in one working
directory, a temporary copy of the repository (so a block may read ``examples/`` or
``gengap/suites/`` and use what an earlier block of the same page wrote): shell blocks with
``bash -euo pipefail`` (an ``sh`` block with ``sh -eu``, as written for a POSIX shell; a
``console`` block: its ``$ `` lines), Python blocks in a fresh
interpreter, with ``gengap`` and ``python`` resolving to this test's environment. A comment
right before a fence marks a block that needs more than that:

    <!-- needs: slow -->    runs only in the slow tier (``python -m pytest -m slow``)
    <!-- needs: gpu -->     needs a GPU: never run here
    <!-- needs: model -->   needs a pretrained model's weights (nothing here downloads any): never run here
    <!-- needs: install --> installs packages or runs the tests themselves (what .ci/run does in fresh
                            environments, and the README's times were measured by hand): never run here
    <!-- needs: long -->    runs longer than the slow tier allows (benchmarks, protocols, minutes to hours
                            each on a CPU): never run here

The default tier runs the unmarked blocks of every page, so no unmarked block may depend on
a marked one; the slow tier runs each page that has slow blocks again, unmarked and slow
blocks in order. Not pages: docs/tasks.md (generated, tests/test_gallery.py), the committed
reports (validity, grokking, mutation testing) and docs/incoming/ (sections not yet placed).

Also here: every relative link of those pages (and of the reports) leads to a file that
exists, and a link to a heading (``page.md#anchor``) to a heading that exists.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REPORTS = {"tasks.md", "validity.md", "validity-quick.md", "validity-runs.md", "mutation-testing.md"}
RUN = {"bash", "sh", "console", "python"}
MARKS = {"slow", "gpu", "model", "install", "long"}
FENCE = re.compile(r"^( *)```(\S*)[^\n]*$")
MARK = re.compile(r"^\s*<!-- needs: ([a-z]+) -->\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced block of a page: its language, code (indentation removed), first line and marker."""

    lang: str
    code: str
    line: int
    needs: str | None


def pages() -> list[Path]:
    """README.md and the docs/ pages whose snippets run (not the generated gallery, the reports or docs/incoming/)."""
    docs = sorted(p for p in (ROOT / "docs").glob("*.md") if p.name not in REPORTS)
    return [ROOT / "README.md", *docs]


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a page, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, lang = len(match.group(1)), match.group(2)
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
        code = "\n".join(line[indent:] for line in lines[i + 1: end]) + "\n"
        before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        mark = MARK.match(before)
        found.append(Block(lang, code, i + 1, mark.group(1) if mark else None))
        i = end + 1
    return found


def runnable(path: Path) -> list[Block]:
    return [b for b in blocks(path) if b.lang in RUN]


def console_commands(code: str) -> str:
    """The commands of a console block: its ``$ `` lines and their continuation lines."""
    commands, going_on = [], False
    for line in code.splitlines():
        if line.startswith("$ ") or going_on:
            commands.append(line[2:] if line.startswith("$ ") and not going_on else line)
            going_on = line.endswith("\\")
    return "\n".join(commands) + "\n"


def working_copy(destination: Path) -> Path:
    """A copy of the repository's files (those git tracks, or would), where a page's blocks run."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True)
    names = [n for n in listed.stdout.decode().split("\0") if n] if listed.returncode == 0 else []
    if not names:  # not a git checkout (an unpacked sdist): the packages and the folders the pages use
        names = [str(p.relative_to(ROOT)) for top in ("gengap", "examples", "benchmarks", "tests", "docs")
                 for p in (ROOT / top).rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    for name in names:
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, destination / name)
    return destination


def environment() -> dict[str, str]:
    """This process's environment with its interpreter's folder first on PATH (``python``, ``gengap``), offline."""
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}", "MPLBACKEND": "Agg",
            "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def run_page(path: Path, where: Path, tiers: set[str | None], timeout: int) -> int:
    """Run the page's blocks of the given tiers in order in a copy of the repository; how many ran."""
    workdir = working_copy(where)
    ran = 0
    for block in runnable(path):
        if block.needs not in tiers:
            continue
        if block.lang == "python":
            command = [sys.executable, "-c", block.code]
        elif block.lang == "sh":
            command = ["sh", "-eu", "-c", block.code]
        else:
            command = ["bash", "-euo", "pipefail", "-c", console_commands(block.code) if block.lang == "console" else block.code]
        done = subprocess.run(command, cwd=workdir, env=environment(), capture_output=True, text=True, timeout=timeout)
        name = f"{path.relative_to(ROOT)}:{block.line} ({block.lang})"
        assert done.returncode == 0, f"{name} exits {done.returncode}:\n{block.code}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
        ran += 1
    return ran


def page_id(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", pages(), ids=page_id)
def test_the_page_blocks_run_as_written(path: Path, tmp_path: Path) -> None:
    run_page(path, tmp_path, {None}, timeout=300)


SLOW_PAGES = [p for p in pages() if any(b.needs == "slow" for b in runnable(p))]


@pytest.mark.slow
@pytest.mark.parametrize("path", SLOW_PAGES, ids=page_id)
def test_the_page_blocks_run_as_written_with_the_slow_ones(path: Path, tmp_path: Path) -> None:
    assert run_page(path, tmp_path, {None, "slow"}, timeout=900) > 0


def test_the_pages_are_the_manual() -> None:
    """README.md and the pages docs/README.md indexes, each with blocks, every marker known and placed."""
    names = {p.name for p in pages()}
    assert {"README.md", "generating.md", "splits.md", "releases.md", "baselines.md", "harnesses.md", "streams.md",
            "reproducibility.md"} <= names
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    for path in pages()[1:]:
        if path.name != "README.md":
            assert f"]({path.name})" in index, f"docs/README.md does not list {path.name}"
        assert runnable(path) or path.name == "README.md", f"{path.name} shows no command"
    for path in pages():
        text = path.read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip().startswith("<!-- needs:"):
                mark = MARK.match(line)
                assert mark and mark.group(1) in MARKS, f"{path.name}:{number}: unknown marker {line.strip()!r} (known: {sorted(MARKS)})"
        marked = {b.line for b in blocks(path) if b.needs}
        markers = sum(line.strip().startswith("<!-- needs:") for line in text.splitlines())
        assert len(marked) == markers, f"{path.name}: a marker that is not right before a fence"
        assert all(b.lang in RUN for b in blocks(path) if b.needs), f"{path.name}: a marker on a block that never runs"


def test_the_blocks_write_inside_their_working_copy() -> None:
    """A block that names /tmp writes outside the copy it runs in: a later run meets an older gengap's files."""
    for path in pages():
        for block in runnable(path):
            assert "/tmp/" not in block.code, f"{path.relative_to(ROOT)}:{block.line} names /tmp: use a relative path"


def test_the_readme_test_command_is_the_one_ci_runs() -> None:
    command = "pip install torch==2.13.0 && pip install -e '.[dev,train,release]' && python -m pytest"
    ci = (ROOT / ".ci" / "run").read_text().replace("pip install -q ", "pip install ")  # CI installs quietly
    assert command in ci and command in (ROOT / "README.md").read_text(encoding="utf-8")
    assert "python -m pytest -m slow" in (ROOT / ".ci" / "run").read_text()


def test_the_readme_is_a_tour() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 320, f"README.md has {len(lines)} lines: the manual belongs in docs/"


# -- links ------------------------------------------------------------------------------------------

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def anchors(path: Path) -> set[str]:
    """GitHub's anchors of a page's headings (lower case, punctuation dropped, spaces as dashes)."""
    found: set[str] = set()
    inside = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            inside = not inside
        if not inside and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


@pytest.mark.parametrize("path", pages() + [ROOT / "docs" / n for n in sorted(REPORTS) if (ROOT / "docs" / n).exists()], ids=page_id)
def test_relative_links_resolve(path: Path) -> None:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    for match in LINK.finditer(text):
        target = match.group(1) or match.group(2)
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        destination = (path.parent / file).resolve() if file else path
        assert destination.exists(), f"{page_id(path)}: link to {target}: no such file"
        if anchor and destination.suffix == ".md":
            assert anchor in anchors(destination), f"{page_id(path)}: link to {target}: no such heading"


# -- the pretrained-model block, with a stand-in (was tests/test_readme_api.py) --------------------

MODEL = "SmolLM2-135M"


@pytest.mark.slow
def test_the_pretrained_model_block_runs_with_a_stand_in_model(tmp_path: Path) -> None:
    """The model-marked Python block of docs/harnesses.md runs as written once a Hugging Face
    causal LM is saved as ``SmolLM2-135M`` (a tiny random one here, as a reader would download
    one), after the page's unmarked blocks built its release."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.harness_models import tiny_model

    page = ROOT / "docs" / "harnesses.md"
    (model_block,) = [b for b in runnable(page) if b.needs == "model" and b.lang == "python"]
    assert MODEL in model_block.code
    workdir = tmp_path / "page"
    workdir.mkdir()
    assert run_page(page, workdir, {None}, timeout=300) > 0
    tiny_model(workdir / MODEL, ["parity_check Input: Answer: 0 1 the number of ones is odd even"])
    done = subprocess.run([sys.executable, "-c", model_block.code], cwd=workdir, env=environment(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (workdir / "runs" / "smol-parity" / "results.json").is_file()


def test_every_shell_language_of_the_pages_runs() -> None:
    """A fenced block in a shell language is run (sh too): none is silently left out."""
    shells = {b.lang for path in pages() for b in blocks(path)} & {"sh", "bash", "shell", "zsh", "console", "shell-session"}
    assert shells <= RUN, shells - RUN
    assert sum(b.lang == "sh" for path in pages() for b in blocks(path)) >= 10  # the sh blocks of generating.md and splits.md


def readme_section(title: str) -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8").split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_the_readme_install_is_one_sequence_in_a_virtual_environment() -> None:
    """Install: first a virtual environment, then gengap into it, then a check; one block, numbered steps, no alternatives."""
    install = [b for b in blocks(ROOT / "README.md") if b.lang == "bash" and "gengap --version" in b.code]
    assert len(install) == 1
    steps = [line for line in install[0].code.splitlines() if line.strip()]
    assert steps[0].startswith("python3 -m venv .venv && . .venv/bin/activate") and "pip install -e" in steps[1]
    assert [re.search(r"# (\d)\. ", line).group(1) for line in steps] == [str(i) for i in range(1, len(steps) + 1)]
    assert " or " not in install[0].code and "virtual environment" in readme_section("Install")


def test_the_readme_names_the_default_releases_fingerprint_in_one_place() -> None:
    """The reference fingerprint of `gengap release` (the default suite) is written once, in full."""
    text = readme_section("Two commands: the main job and the tests")
    found = re.findall(r"fingerprint at this version is\s+`sha256:([0-9a-f]{64})`", text)
    assert len(found) == 1
    assert (ROOT / "README.md").read_text(encoding="utf-8").count(found[0]) == 1
