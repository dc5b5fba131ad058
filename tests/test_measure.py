"""Difficulty features recomputed by tasks (Task.measure) and checked by `gengap check`."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gengap.generators import get_task, task_names
from gengap.checking import record_problem
from tests.conftest import random_params



def _measurable(name: str) -> bool:
    task = get_task(name)
    record = next(task.generate(np.random.default_rng(0), 1, task.default_params()).records(name))
    return task.measure(record) is not None


MEASURING = [name for name in task_names() if _measurable(name)]


def test_the_simple_tasks_measure_their_features() -> None:
    assert {
        "parity_check", "even_pairs", "modular_arithmetic", "cycle_navigation", "stack_manipulation",
        "reverse_string", "modular_arithmetic_brackets", "solve_equation", "duplicate_string", "missing_duplicate_string",
        "odds_first", "binary_addition", "binary_multiplication", "compute_sqrt", "bucket_sort", "prefix_sums",
    } <= set(MEASURING)  # fmt: skip


@pytest.mark.parametrize("name", MEASURING)
def test_measure_agrees_with_generation(name: str) -> None:
    task = get_task(name)
    rng = random.Random(name)
    for trial in range(8):
        params = random_params(task, rng)
        for record in task.generate(np.random.default_rng(trial), 40, params).records(name):
            stated = {k: v for k, v in record["difficulty"].items() if k not in ("input_length", "output_length")}
            assert task.measure(record) == stated, record
            assert record_problem(record) is None


def test_check_catches_a_forged_feature(tmp_path: Path) -> None:
    """A difficulty split relies on the features: a record claiming the wrong one fails `gengap check`."""
    good = subprocess.run(
        [sys.executable, "-m", "gengap.cli", "generate", "parity_check", "--n", "20"], capture_output=True, check=True
    ).stdout
    records = [json.loads(line) for line in good.splitlines()]
    records[3]["difficulty"]["ones"] += 1
    path = tmp_path / "forged.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = subprocess.run([sys.executable, "-m", "gengap.cli", "check", str(path)], capture_output=True, text=True)
    assert result.returncode == 1
    assert f"line 4: difficulty.ones={records[3]['difficulty']['ones']} but the record measures" in result.stderr
