"""The wheel as users install it: built, checked, installed alone into a fresh environment, run.

``python -m tests.wheel_smoke WORK`` (by hand; tests/test_wheel.py, a slow test that .ci/run runs, in a temporary
directory) does, in the directory WORK (created; left for inspection):

1. ``python -m build`` of the checkout: the sdist, and the wheel built from that sdist;
   ``twine check`` of both;
2. the wheel's files are exactly the files of the packages pyproject lists, as git tracks them
   or would (``.py`` files and the data the code reads at run time: schemas, suites, sweeps):
   nothing missing, nothing else;
3. a fresh virtual environment gets the wheel with its ``release`` extra alone, and none of
   torch, transformers, Ray, lm-eval, pyarrow or reasoning-gym comes with it;
4. from a directory outside the checkout, that environment prints ``gengap --version`` (the
   checkout's ``gengap.__version__``, the wheel's version), reads every shipped suite, sweep and
   schema through importlib.resources, builds a small release (tests/harness_fixture.py's
   suite; its manifest must record that version as ``gengap_version``), verifies it plainly
   and with ``--regenerate``, exports it as chat data and scores reasoning-gym-compatible
   datasets (``gengap.rg``) of a task and of the release.

Each problem is one line; the exit code is 1 when there is any.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

from gengap import __version__
from tests.problems import report

ROOT = Path(__file__).resolve().parents[1]
NOT_INSTALLED = ("torch", "transformers", "ray", "lm_eval", "pyarrow", "reasoning_gym")
RESOURCES = """\
from importlib import resources
from gengap.schema import load_schema
from gengap.suite import load_suite
from gengap.sweep_config import find_sweep, load_sweep, shipped_sweeps
for name in ("example", "suite", "sweep"):
    load_schema(name)
load_suite(None)
suites = sorted(p.name for p in resources.files("gengap").joinpath("suites").iterdir() if p.name.endswith(".yaml"))
for name in suites:
    load_suite(str(resources.files("gengap").joinpath(f"suites/{name}")))
for name in shipped_sweeps():
    load_suite(load_sweep(find_sweep(name)).suite)
print(len(suites), "suites", len(shipped_sweeps()), "sweeps")
"""
DATASET = """\
from gengap.rg import create_dataset, from_release
for dataset in (create_dataset("parity_check", size=5, seed=0), from_release("release", "parity_check-length")):
    assert all(dataset.score_answer(e["answer"], e) == 1.0 for e in dataset), dataset.name
print("datasets scored")
"""


def setuptools_table() -> dict:
    """pyproject.toml's [tool.setuptools]."""
    import tomllib  # Python 3.11+

    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def package_folders() -> dict[str, str]:
    """Folder in the checkout of each top package of the wheel (pyproject's packages mapped
    through its package-dir: gengap.generators is the folder generators/)."""
    table = setuptools_table()
    mapped = table.get("package-dir", {})
    tops = [name for name in table["packages"] if not any(name.startswith(other + ".") for other in mapped if other != name)]
    return {name: mapped.get(name, name.replace(".", "/")) for name in tops if name == "gengap" or name in mapped}


def package_sources() -> dict[str, str]:
    """Wheel path -> checkout path of the files in the packages' folders that git tracks or
    would (not ignored ones); outside a git checkout (an unpacked sdist), every file there but
    Python's caches."""
    found: dict[str, str] = {}
    for package, folder in package_folders().items():
        command = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", folder]
        listed = subprocess.run(command, cwd=ROOT, capture_output=True)
        if listed.returncode == 0 and (ROOT / ".git").exists():
            names = listed.stdout.decode().split("\0")
        else:
            names = [str(path.relative_to(ROOT)) for path in (ROOT / folder).rglob("*") if "__pycache__" not in path.parts]
        for name in names:
            if name and (ROOT / name).is_file():
                found[package.replace(".", "/") + "/" + name[len(folder) + 1 :]] = name
    return found


def package_files() -> set[str]:
    """The wheel paths of the packages' files (package_sources)."""
    return set(package_sources())


def top_level_names(wheel: Path) -> set[str]:
    """The names a wheel installs at the top of site-packages (dist-info aside)."""
    with zipfile.ZipFile(wheel) as archive:
        return {name.split("/")[0] for name in archive.namelist() if ".dist-info/" not in name}


def wheel_files(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return {name for name in archive.namelist() if ".dist-info/" not in name}


def run(command: list[str], cwd: Path, problems: list[str], what: str) -> str:
    """The command's stdout; a problem line (with the end of its stderr) when it fails."""
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or [""])[-1]
        problems.append(f"{what}: exit {done.returncode}: {tail}")
    return done.stdout


def build(work: Path, problems: list[str]) -> Path | None:
    """sdist and wheel in WORK/dist, checked by twine; the wheel, or None."""
    dist = work / "dist"
    run([sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)], work, problems, "python -m build")
    wheels = sorted(dist.glob("gengap-*.whl"))
    sdists = sorted(dist.glob("gengap-*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        problems.append(f"build: expected one wheel and one sdist, found {[p.name for p in wheels + sdists]}")
        return None
    run([sys.executable, "-m", "twine", "check", "--strict", str(wheels[0]), str(sdists[0])], work, problems, "twine check")
    if not wheels[0].name.startswith(f"gengap-{__version__}-"):
        problems.append(f"{wheels[0].name}: not version {__version__} (gengap.__version__)")
    return wheels[0]


def check_files(wheel: Path, problems: list[str]) -> None:
    tops = top_level_names(wheel)
    if tops != {"gengap"}:
        problems.append(f"the wheel installs {sorted(tops - {'gengap'})} at the top level: only gengap belongs there")
    have, want = wheel_files(wheel), package_files()
    problems += [f"wheel lacks {name}" for name in sorted(want - have)]
    problems += [f"wheel holds {name}, which is no file of the packages" for name in sorted(have - want)]
    with zipfile.ZipFile(wheel) as archive:
        info = f"gengap-{__version__}.dist-info"
        names = set(archive.namelist())
        if f"{info}/licenses/LICENSE" not in names or archive.read(f"{info}/licenses/LICENSE") != (ROOT / "LICENSE").read_bytes():
            problems.append(f"wheel lacks {info}/licenses/LICENSE as the checkout's LICENSE")
        elif "License-Expression: Apache-2.0" not in archive.read(f"{info}/METADATA").decode("utf-8").splitlines():
            problems.append("the wheel's METADATA has no License-Expression: Apache-2.0")


def smoke(wheel: Path, work: Path, problems: list[str]) -> None:
    """The wheel alone in a fresh environment: versions, resources, release, verify, export, datasets."""
    env = work / "venv"
    run([sys.executable, "-m", "venv", str(env)], work, problems, "venv")
    python, gengap = str(env / "bin" / "python"), str(env / "bin" / "gengap")
    run([python, "-m", "pip", "install", "-q", f"{wheel}[release]"], work, problems, "pip install the wheel")
    if problems:
        return
    present = run([python, "-c", f"import importlib.util as u; print(*[m for m in {NOT_INSTALLED!r} if u.find_spec(m)])"], work, problems, "find_spec")
    if present.split():
        problems.append(f"the wheel brought {', '.join(present.split())}: generating and releasing must not need them")
    if run([python, "-c", "import gengap.schema as s; print(s.jsonschema_rs is not None)"], work, problems, "jsonschema_rs").strip() != "True":
        problems.append("the wheel did not bring jsonschema-rs, the fast schema validator (a base dependency)")
    printed = run([gengap, "--version"], work, problems, "gengap --version").strip()
    if printed != f"gengap {__version__}":
        problems.append(f"gengap --version printed {printed!r}, not 'gengap {__version__}'")
    run([python, "-c", RESOURCES], work, problems, "shipped suites, sweeps and schemas")
    from tests.harness_fixture import SUITE

    (work / "suite.yaml").write_text(SUITE, encoding="utf-8")
    for args in (
        ["release", "suite.yaml", "--out", "release", "--workers", "1"],
        ["verify", "release"],
        ["verify", "release", "--regenerate", "--workers", "1"],
        ["export", "release", "--to", "chat", "--out", "chat"],
    ):
        run([gengap, *args], work, problems, f"gengap {' '.join(args)}")
    manifest = work / "release" / "manifest.json"
    recorded = json.loads(manifest.read_text(encoding="utf-8")).get("gengap_version") if manifest.is_file() else None
    if recorded != __version__:
        problems.append(f"the release's manifest records gengap_version {recorded!r}, not {__version__!r}")
    run([python, "-c", DATASET], work, problems, "gengap.rg datasets")


def check(work: Path) -> list[str]:
    """Every step above in the directory work (created); the problems found."""
    work.mkdir(parents=True, exist_ok=False)
    problems: list[str] = []
    wheel = build(work, problems)
    if wheel is None:
        return problems
    check_files(wheel, problems)
    smoke(wheel, work, problems)
    return problems


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: python -m tests.wheel_smoke WORK_DIR", file=sys.stderr)
        return 2
    return report(check(Path(sys.argv[1]).resolve()), "wheel", f"wheel: gengap {__version__} builds, holds its packages' files, installs alone and releases")


if __name__ == "__main__":
    raise SystemExit(main())
