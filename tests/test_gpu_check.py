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
    alone = StepLoad("x", operations=1000, flops=1e11, steps=100, runs=1)  # one run: 8 workers cannot share its steps
    assert training_seconds([alone], 8, costs) == pytest.approx(1.0)
    assert training_seconds([StepLoad("x", operations=1000, flops=1e11, steps=100, runs=4)], 8, costs) == pytest.approx(0.3)  # 25 steps x 10 ms < 0.3


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


def test_every_deferred_claim_has_an_estimate_counting_each_shared_run_once(capsys: pytest.CaptureFixture) -> None:
    """--estimate for an engine protocol: each run at its cap once (cfq's random arm serves both claims),
    grouped by model, with the upper bound of its training minutes; it never needs --out."""
    import gpu_protocol

    assert gpu_protocol.main(["--estimate", "--protocol", "cfq", "--workers", "7"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"cfq: 7 runs at their step caps (until learned: fewer), {gpu_protocol.TOKENS['cfq']} tokens a row, 7 workers"
    (row,) = [line for line in lines if line.startswith("| transformer")]
    assert "small; batch 128; 7 runs, 140,000 steps" in row  # 7 runs x the 20,000-step cap of the GPU protocol
    low, high = lines[-1].split("at most ")[1].split(" min")[0].split("-")
    assert 0 < float(low) <= float(high)
    assert gpu_protocol.main(["--estimate", "--protocol", "grokking", "--tokens", "8"]) == 0
    grokking = capsys.readouterr().out.splitlines()
    assert grokking[0].startswith("grokking: 9 runs") and "8 tokens a row" in grokking[0]
    full = [line for line in grokking if "layers 2, d_model 128, heads 4; batch full (" in line]
    assert sorted(line.split("batch full (")[1].split(")")[0] for line in full) == ["2,822", "3,764", "4,704"]  # 97^2 x 0.3, 0.4, 0.5
    assert all(line.split("; ")[2].startswith("3 runs, 60,000 steps") for line in full)


def test_the_deferred_table_states_each_engine_protocols_estimate() -> None:
    """docs/validity.md's deferred table prints DEFERRED's estimates: each is what --estimate computes now."""
    import gpu_protocol

    stated = {d["command"].split("--protocol ")[1].split()[0]: d["estimate"] for d in gpu_protocol.DEFERRED}
    for protocol in gpu_protocol.ENGINE_PROTOCOLS:
        last = gpu_protocol.engine_estimate(protocol, None, 8)[-1]
        assert f"≤ {last.split('at most ')[1].split(' min')[0]} min" == stated[protocol], protocol


@pytest.mark.parametrize("argv, message", [
    (["--estimate", "--tokens", "-5"], "argument --tokens: -5 is below 1"),
    (["--estimate", "--workers", "0"], "argument --workers: 0 is below 1"),
    (["--estimate", "--steps", "x"], "argument --steps: 'x' is not an integer"),
    (["--estimate", "--protocol", "deletang", "--archs", "foo"], "unknown architecture(s) foo"),
    (["--estimate", "--seeds", "a,b"], "argument --seeds: 'a' is not an integer"),
    (["--estimate", "--only", "nope"], "unknown experiment(s) nope"),
    (["--protocol", "cfq"], "--out is required"),
])
def test_the_protocol_scripts_refuse_bad_input_in_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture) -> None:
    """A usage error, not a traceback: exit status 2 and one line naming the problem (before any model is built)."""
    import gpu_protocol

    with pytest.raises(SystemExit) as exited:
        gpu_protocol.main(argv)
    assert exited.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(f": error: {message}")  # prog: the script name, or pytest's


def test_the_validity_protocol_refuses_zero_workers(capsys: pytest.CaptureFixture) -> None:
    import validity

    with pytest.raises(SystemExit) as exited:
        validity.main(["--workers", "0", "--list"])
    assert exited.value.code == 2 and capsys.readouterr().err.splitlines()[-1].endswith("error: argument --workers: 0 is below 1")
