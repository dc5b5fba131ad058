"""benchmarks/gpu_check.py end to end at CPU sizes (the code a GPU runs, on the CPU), and the
per-step arithmetic of benchmarks/gpu_estimate.py."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from gpu_estimate import Costs, StepLoad, step_seconds, training_seconds  # noqa: E402


def test_gpu_check_runs_end_to_end_on_the_cpu_in_under_a_minute_of_cpu_time(tmp_path: Path) -> None:
    """Every section runs and is ok at CPU sizes, the report is written, and the whole check (its
    pytest and worker processes included) takes under a minute of CPU time. CPU time, not wall
    time: on a machine shared by several jobs the wall clock measures the others."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu_check.py"), "--device", "cpu", "--out", str(tmp_path), "--budget", "1200"],
                          capture_output=True, text=True, timeout=1500, cwd=ROOT)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_seconds = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert done.returncode == 0, done.stderr[-2000:]
    document = json.loads((tmp_path / "gpu-check.json").read_text())
    sections = document["sections"]
    assert document["device_type"] == "cpu" and list(sections) == ["tests", "architectures", "concurrency", "determinism", "protocol"]
    assert {name: section.get("ok") for name, section in sections.items()} == dict.fromkeys(sections, True), sections
    assert sections["tests"]["passed"] == 2 and sections["tests"]["failed"] == 0
    rows = {row["arch"]: row for row in sections["architectures"]["rows"]}
    assert set(rows) == {"transformer", "rnn", "lstm", "stack_rnn", "tape_rnn", "looped"}
    for arch in ("rnn", "lstm", "stack_rnn", "tape_rnn"):
        assert rows[arch]["activation_dtypes"] == ["float32"] and rows[arch]["gradient_dtypes"] == ["float32"] and rows[arch]["meta_step"] == "ok"
    assert "bfloat16" in rows["transformer"]["activation_dtypes"] and rows["transformer"]["meta_step"] != "ok"  # Llama reads a flag
    assert all(row["seconds_per_step"] > 0 and row["operations_per_step"] > 100 for row in rows.values())
    assert rows["tape_rnn"]["operations_per_step"] > rows["lstm"]["operations_per_step"]  # a Python loop per token vs one fused module
    together = sections["concurrency"]["rows"][0]
    assert together["workers"] == 2 and len(together["together"]) == 2 and together["speedup"] > 0
    assert all(row["deterministic"]["bitwise_equal"] for row in sections["determinism"]["rows"])
    assert [(s["protocol"], s["arch"]) for s in sections["protocol"]["slices"]] == [("gaps", "transformer"), ("deletang", "stack_rnn"), ("deletang", "tape_rnn")]
    assert all(s["runs_total_minutes"] > 0 for s in sections["protocol"]["slices"])
    report = (tmp_path / "gpu-check.md").read_text()
    assert "**Not a GPU**" in report and "## 5. Protocol slices, extrapolated" in report
    assert cpu_seconds < 60, f"{cpu_seconds:.0f} s of CPU"


def test_the_arithmetic_is_bound_by_the_host_or_by_the_gpu() -> None:
    costs = Costs(host=10e-6, kernel=2e-6, flops=1e14)
    load = StepLoad("x", operations=1000, flops=1e11, steps=100)
    assert step_seconds(load, costs) == pytest.approx((10e-3, 3e-3))  # host: 1,000 x 10 us; GPU: 1,000 x 2 us + 1 ms of matmuls
    assert training_seconds([load], 1, costs) == pytest.approx(1.0)  # one process: 100 steps x 10 ms
    assert training_seconds([load], 2, costs) == pytest.approx(0.5)  # two share the host side
    assert training_seconds([load], 8, costs) == pytest.approx(0.3)  # eight: the GPU's 100 x 3 ms is the bound
    heavy = StepLoad("y", operations=10, flops=1e13, steps=10)
    assert training_seconds([load, heavy], 8, costs) == pytest.approx(0.3 + 10 * (20e-6 + 0.1))


def test_the_protocol_estimate_prints_its_arithmetic(capsys: pytest.CaptureFixture) -> None:
    import gpu_protocol

    assert gpu_protocol.main(["--estimate", "--steps", "100", "--only", "parity_check"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("gaps: 3 runs x 100 steps per model")  # one experiment x 3 seeds, per encoding
    rows = {line.split(" | ")[0].strip("| "): line for line in lines if line.startswith("| transformer")}
    operations = {name: int(row.split(" | ")[1].replace(",", "")) for name, row in rows.items()}
    assert set(operations) == {"transformer rope", "transformer nope"} and operations["transformer rope"] > operations["transformer nope"] > 100
    low, high = lines[-1].split(": ")[1].split(" min")[0].split("-")
    assert lines[-1].startswith("training, 8 workers on one GPU") and 0 <= float(low) <= float(high)
