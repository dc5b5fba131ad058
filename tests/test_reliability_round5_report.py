"""gengap report on hostile run directories (issue 55): a results.json whose fields are not
what gengap writes is one line, not a traceback (case 17: ``"per_seed": "x"``), and a named
pipe at metrics.jsonl or results.json is never opened for reading, which would block forever
(case 13)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gengap.cli import main

torch = pytest.importorskip("torch")

TINY_RUN = ["--preset", "tiny", "--steps", "2", "--eval-every", "2", "--eval-examples", "2", "--layers", "1", "--d-model", "16", "--heads", "2"]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("round5-report")
    assert main(["generate", "parity_check", "--n", "60", "--seed", "1", "--out", str(root / "pool.jsonl")]) == 0
    assert main(["split", str(root / "pool.jsonl"), "--strategy", "iid", "--out", str(root / "s")]) == 0
    assert main(["train", str(root / "s"), *TINY_RUN, "--out", str(root / "run")]) == 0
    return root / "run"


def edited(run: Path, tmp_path: Path, change: str) -> Path:
    copy = Path(shutil.copytree(run, tmp_path / "run"))
    results = json.loads((copy / "results.json").read_text(encoding="utf-8"))
    exec(change, {"r": results})
    (copy / "results.json").write_text(json.dumps(results), encoding="utf-8")
    return copy


@pytest.mark.parametrize("change, fragment", [
    ("r['per_seed'] = 'x'", "per_seed must be a list of seeds"),
    ("r['per_seed'][0]['seed'] = 'a'", "per_seed[0] must be an object with an integer seed"),
    ("r['per_seed'][0]['ood_exact_match'] = 'a'", "per_seed[0].ood_exact_match must be a number"),
    ("r['per_seed'][0]['by_length'] = 'a'", "a field the report reads is missing or of another type"),
    ("r['data'] = {'input_length': 'x'}", "a field the report reads is missing or of another type"),
    ("r['steps'] = [1]", "a field the report reads is missing or of another type"),
])
def test_a_results_file_of_the_wrong_shape_is_one_line(run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], change: str, fragment: str) -> None:
    copy = edited(run, tmp_path, change)
    capsys.readouterr()
    assert main(["report", str(copy)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"gengap: error: {copy / 'results.json'} is not a baseline results file") and err.count("\n") == 1 and fragment in err, err


@pytest.mark.parametrize("name", ["metrics.jsonl", "results.json"])
def test_a_named_pipe_in_a_run_never_blocks_the_report(run: Path, tmp_path: Path, name: str) -> None:
    copy = Path(shutil.copytree(run, tmp_path / "run"))
    (copy / name).unlink()
    os.mkfifo(copy / name)
    result = subprocess.run([sys.executable, "-m", "gengap", "report", str(copy)], capture_output=True, text=True, timeout=120)
    if name == "results.json":
        assert result.returncode == 2 and result.stderr.count("\n") == 1 and "not a regular file" in result.stderr, result.stderr
    else:  # the history is left out, as for a missing file
        assert result.returncode == 0, result.stderr
