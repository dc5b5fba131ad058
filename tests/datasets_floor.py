"""The oldest Hugging Face ``datasets`` the project allows must load a release: every config, every split.

A release's card declares ``meta`` and ``structure`` with the ``json`` dtype (gengap.data_cards.card),
which ``datasets`` reads from 4.7 on; with 4.6.1 and 3.6.0 every config fails to load. The
lower bound lives in one place, the ``datasets`` requirement of pyproject.toml's dev extra.

- ``python -m tests.datasets_floor --floor`` prints that lower bound (a version);
- ``python -m tests.datasets_floor --build DIR`` builds a tiny release into DIR/release (needs
  gengap; configs with difficulty, novelty, ``meta``, ``structure`` and an empty validation part);
- ``python -m tests.datasets_floor --check DIR/release`` loads every config of the card with
  the ``datasets`` installed and checks each split's size against the card; exit 1 on failure.
  It imports only the standard library, ``datasets`` and ``yaml`` (a dependency of
  ``datasets``), so .ci/run runs it in a small environment holding ``datasets==<floor>``.

tests/test_datasets_floor.py runs the build and the check with the installed ``datasets``.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

from tests.problems import report

ROOT = Path(__file__).resolve().parent.parent

SUITE = """\
name: floor
version: 0.0.1
seed: 5
license: mit
created: "2026-01-01"
entries:
  - {task: parity_check, split: length, train_range: [1, 6], test_range: [7, 9], sizes: {train: 30, validation: 5, test: 10}}
  - {task: addition, split: length, params: {format: reversed}, train_range: [1, 2], test_range: [3, 3], sizes: {train: 30, test: 10}}
  - {task: cogs_like, split: pp_depth, strategy: difficulty, params: {max_pp_depth: 2}, pool: {n: 80}, options: {feature: pp_depth, train_max: 1, test_min: 2}, sizes: {train: 30, validation: 5, test: 10}}
"""


def floor() -> str:
    """The lower bound of ``datasets`` in pyproject.toml's dev extra (e.g. ``4.7``)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    found = re.findall(r'"datasets>=([0-9][0-9.]*)"', text)
    if len(set(found)) != 1:
        raise SystemExit(f"pyproject.toml: expected one lower bound for datasets, found {sorted(set(found))}")
    return found[0]


def build(root: Path) -> Path:
    from gengap.cli import main

    root.mkdir(parents=True, exist_ok=True)
    suite = root / "suite.yaml"
    suite.write_text(SUITE, encoding="utf-8")
    out = root / "release"
    if main(["release", str(suite), "--out", str(out), "--workers", "1"]) != 0:
        raise SystemExit("gengap release failed")
    return out


def card_configs(release: Path) -> dict[str, dict[str, int]]:
    """config -> split -> num_examples, from the card's front matter."""
    import yaml

    text = (release / "README.md").read_text(encoding="utf-8")
    front = yaml.safe_load(text.split("---\n", 2)[1])
    return {info["config_name"]: {s["name"]: int(s["num_examples"]) for s in info["splits"]} for info in front["dataset_info"]}


def check(release: Path) -> list[str]:
    """Problems loading the release with the installed datasets ([] when every config loads with the card's sizes)."""
    import datasets

    problems = []
    with tempfile.TemporaryDirectory() as cache:
        for name, sizes in card_configs(release).items():
            try:
                loaded = datasets.load_dataset(str(release), name, cache_dir=cache)
            except Exception as err:  # noqa: BLE001  (any failure to load is the finding)
                problems.append(f"{name}: {type(err).__name__}: {str(err)[:300]}")
                continue
            got = {split: len(part) for split, part in loaded.items()}
            if got != sizes:
                problems.append(f"{name}: split sizes {got}, the card says {sizes}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--floor", action="store_true", help="print the lower bound of datasets in pyproject.toml")
    group.add_argument("--build", metavar="DIR", help="build the tiny release into DIR/release")
    group.add_argument("--check", metavar="RELEASE", help="load every config of RELEASE with the installed datasets")
    args = parser.parse_args(argv)
    if args.floor:
        print(floor())
        return 0
    if args.build:
        print(build(Path(args.build)))
        return 0
    import datasets

    return report(check(Path(args.check)), f"datasets {datasets.__version__}", f"datasets {datasets.__version__} loads every config of {args.check}")


if __name__ == "__main__":
    sys.exit(main())
