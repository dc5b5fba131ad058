"""Mutation scores of splits/, generators/seeding.py, gengap/releases/release.py and gengap/releases/verify.py
(docs/mutation-testing.md); needs mutmut 3.8 (`pip install mutmut`), not run in CI.

    python benchmarks/mutation.py splits                  # every mutant of splits/, today's tests
    python benchmarks/mutation.py core --sample 20 --per-file generators/seeding.py=40   # a sample
    python benchmarks/mutation.py splits --tests-from 904f8f6 --sample 30   # the tests of a commit

It works in a scratch copy (--workdir, default a fresh temporary directory): the committed
source of HEAD, tests/ of the working tree (or of --tests-from REF, keeping today's source so
the mutants are the same; --adapted names test files taken from the working tree even then),
and a [tool.mutmut] section for the group: the files to mutate and
the group's fixed test selection (test files missing from REF are left out). With --sample N
at most N mutants per file are run, drawn with random.Random(--seed) from the sorted mutant
names of that file, so two runs of the same source draw the same mutants. It prints, per file,
killed / survived / timeout / no tests / total and the score (killed + timeout) / total, and
writes the surviving mutants' names to survivors.txt in the scratch copy (`mutmut show NAME`
there shows the diff). --names FILE runs exactly the mutants listed in FILE instead.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from pathlib import Path
from arguments import non_negative_int, positive_int

ROOT = Path(__file__).resolve().parents[1]

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

# The splits group is pyproject's [tool.mutmut] section; core has its own files and selection.
MUTMUT = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]
SOURCE_PATHS = MUTMUT["source_paths"]
FILES = {
    "splits": [f"splits/{name}.py" for name in ("api", "atoms", "base", "divergence", "mcd", "novelty", "precision", "strategies")],
    "core": ["generators/seeding.py", "gengap/releases/release.py", "gengap/releases/verify.py"],
}
SELECTIONS = {
    "splits": MUTMUT["pytest_add_cli_args_test_selection"],
    "core": [
        "tests/test_seeding.py", "tests/test_release.py", "tests/test_checks_where_made.py", "tests/test_golden.py",
        "tests/test_portability.py", "tests/test_guarantees.py",
    ],
}  # fmt: skip
STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", None: "not checked",
          36: "timeout", -24: "timeout", 24: "timeout", 152: "timeout", 255: "timeout"}  # fmt: skip
COLUMNS = ("killed", "survived", "timeout", "no tests", "other")


def git_archive(ref: str, dest: Path, *paths: str) -> None:
    data = subprocess.run(["git", "-C", str(ROOT), "archive", ref, *paths], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(dest)


def prepare(work: Path, group: str, tests_from: str | None, adapted: list[str]) -> list[str]:
    """The scratch copy: HEAD's source, the tests, the [tool.mutmut] section; its test selection."""
    git_archive("HEAD", work)
    shutil.rmtree(work / "tests")
    if tests_from:
        git_archive(tests_from, work, "tests")
        for name in adapted:
            shutil.copy2(ROOT / name, work / name)
    else:
        shutil.copytree(ROOT / "tests", work / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    exists = lambda arg: (work / arg.removeprefix("--deselect=").split("::")[0]).exists()  # noqa: E731
    selection = [arg for arg in SELECTIONS[group] if exists(arg)]
    quoted = lambda items: "[" + ", ".join(json.dumps(i) for i in items) + "]"  # noqa: E731
    pyproject = (work / "pyproject.toml").read_text().partition("[tool.mutmut]")[0]
    pyproject += (
        f"[tool.mutmut]\nsource_paths = {quoted(SOURCE_PATHS)}\nonly_mutate = {quoted(FILES[group])}\n"
        f"pytest_add_cli_args_test_selection = {quoted(selection)}\n"
    )
    (work / "pyproject.toml").write_text(pyproject)
    return selection


def mutant_names(work: Path, group: str) -> dict[str, list[str]]:
    """Every mutant name of each file of the group, sorted (mutmut's generation step only)."""
    code = (
        "import os, mutmut.__main__ as m\n"
        "m.set_mutant_under_test('mutant_generation'); os.makedirs('mutants', exist_ok=True)\n"
        "m.copy_src_dir(); m.copy_also_copy_files(); m.setup_source_paths(); m.store_lines_covered_by_tests()\n"
        "m.create_mutants(2)\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=work, check=True, capture_output=True)
    names = {}
    for path in FILES[group]:
        module = path[:-3].replace("/", ".")
        text = (work / "mutants" / path).read_text()
        names[path] = sorted({f"{module}.{x}" for x in re.findall(r"^\s*def (x\S*?__mutmut_\d+)\(", text, re.M)})
    return names


def sample(names: dict[str, list[str]], n: int | None, per_file: dict[str, int], seed: int) -> dict[str, list[str]]:
    """At most n (or per_file[path]) mutants of each file, drawn with random.Random(seed)."""
    chosen = {}
    for path, all_ in names.items():
        k = per_file.get(path, n)
        chosen[path] = all_ if k is None else sorted(random.Random(seed).sample(all_, min(k, len(all_))))
    return chosen


def results(work: Path, chosen: dict[str, list[str]]) -> dict[str, dict[str, str]]:
    """Status of each chosen mutant, read from mutmut's .meta files."""
    out = {}
    for path, names in chosen.items():
        codes = json.loads((work / "mutants" / (path + ".meta")).read_text())["exit_code_by_key"]
        out[path] = {name: STATUS.get(codes.get(name), "other") for name in names}
    return out


def table(status: dict[str, dict[str, str]], totals: dict[str, int]) -> str:
    rows = ["| file | killed | survived | timeout | no tests | other | run / all mutants | score |", "|---|---|---|---|---|---|---|---|"]
    for path, by_name in status.items():
        if not by_name:
            continue  # none of this file's mutants was chosen
        counts = Counter(by_name.values())
        counts["other"] = sum(v for k, v in counts.items() if k not in COLUMNS[:-1])
        run = len(by_name)
        score = (counts["killed"] + counts["timeout"]) / run if run else 0.0
        cells = " | ".join(str(counts[c]) for c in COLUMNS)
        rows.append(f"| {path} | {cells} | {run} / {totals[path]} | {100 * score:.1f}% |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("group", choices=sorted(FILES))
    parser.add_argument("--tests-from", metavar="REF", help="git ref whose tests/ to use (default: the working tree's)")
    parser.add_argument("--adapted", nargs="*", default=[], metavar="FILE",
                        help="with --tests-from: test files taken from the working tree all the same (old tests "
                        "adapted to an intended change of behaviour, e.g. tests/test_splits.py)")
    parser.add_argument("--sample", type=positive_int, metavar="N", help="at most N mutants per file (default: all)")
    parser.add_argument("--per-file", nargs="*", default=[], metavar="FILE=N", help="another sample size for a file")
    parser.add_argument("--seed", type=non_negative_int, default=17, help="seed of the sample (default 17)")
    parser.add_argument("--names", type=Path, help="run exactly the mutants named in this file, one a line")
    parser.add_argument("--max-children", type=positive_int, default=2)
    parser.add_argument("--workdir", type=Path, help="scratch directory (created; default: a new temporary one)")
    args = parser.parse_args(argv)
    work = args.workdir or Path(tempfile.mkdtemp(prefix=f"gengap-mut-{args.group}-"))
    work.mkdir(parents=True, exist_ok=True)
    selection = prepare(work, args.group, args.tests_from, args.adapted)
    names = mutant_names(work, args.group)
    per_file = {item.partition("=")[0]: int(item.partition("=")[2]) for item in args.per_file}
    chosen = sample(names, args.sample, per_file, args.seed)
    if args.names:
        wanted = set(args.names.read_text().split())
        chosen = {path: [n for n in all_ if n in wanted] for path, all_ in names.items()}
    flat = [name for names_ in chosen.values() for name in names_]
    print(f"scratch copy {work}; mutmut selection: {' '.join(selection)}; {len(flat)} mutants", flush=True)
    env = {**os.environ, "PYTHONPATH": str(work / "mutants")}  # subprocesses of tests import the mutants
    start = time.monotonic()
    subprocess.run(["mutmut", "run", "--max-children", str(args.max_children), *flat], cwd=work, env=env, stdout=subprocess.DEVNULL)
    seconds = time.monotonic() - start
    status = results(work, chosen)
    print(table(status, {path: len(all_) for path, all_ in names.items()}))
    print(f"{len(flat)} mutants in {seconds:.0f} s wall")
    survivors = sorted(name for by_name in status.values() for name, s in by_name.items() if s != "killed" and s != "timeout")
    (work / "survivors.txt").write_text("".join(n + "\n" for n in survivors))
    print(f"{len(survivors)} not killed: {work / 'survivors.txt'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
