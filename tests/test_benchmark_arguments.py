"""The benchmark scripts' counts and rates: a bad value is a one-line usage error (exit 2), never a traceback."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from arguments import non_negative_int, positive_float, positive_int, unit_fraction  # noqa: E402


@given(st.integers(min_value=-10**6, max_value=10**6))
def test_integer_types_accept_exactly_their_range(value: int) -> None:
    for kind, low in ((positive_int, 1), (non_negative_int, 0)):
        if value >= low:
            assert kind(str(value)) == value
        else:
            with pytest.raises(argparse.ArgumentTypeError, match=f"{value} is below {low}"):
                kind(str(value))


@pytest.mark.parametrize("text", ["x", "1.5", "", "1e3"])
def test_integer_types_refuse_what_is_not_an_integer(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="is not an integer"):
        positive_int(text)


def test_number_types() -> None:
    assert positive_float("0.25") == 0.25 and unit_fraction("1") == 1.0 and unit_fraction("0.8") == 0.8
    for bad in ("0", "-1", "inf", "nan", "x"):
        with pytest.raises(argparse.ArgumentTypeError):
            positive_float(bad)
    for bad in ("0", "1.5", "-0.2", "nan", "x"):
        with pytest.raises(argparse.ArgumentTypeError):
            unit_fraction(bad)


@pytest.mark.parametrize("argv, message", [
    (["cfq_mcd.py", "--jobs", "0"], "argument --jobs: 0 is below 1"),
    (["near_duplicates.py", "--jaccard", "1.5"], "argument --jaccard: 1.5 is not in (0, 1]"),
    (["streams.py", "--n", "0"], "argument --n: 0 is below 1"),
    (["splits.py", "scan", "--seed", "-1"], "argument --seed: -1 is below 0"),
    (["gpu_check.py", "--budget", "0"], "argument --budget: 0 is not a positive finite number"),
    (["validity.py", "--workers", "0"], "argument --workers: 0 is below 1"),
    (["gpu_protocol.py", "--estimate", "--seeds", "-1"], "argument --seeds: -1 is below 0"),
    (["gpu_protocol.py", "--estimate", "--encodings", "rope,bogus"], "argument --encodings: unknown 'bogus'; choose among rope, nope, "
                                                                    "learned, sinusoidal, alibi, randomized, fire, abacus"),
    (["gpu_protocol.py", "--estimate", "--preset", "huge"], "argument --preset: invalid choice: 'huge' (choose from 'tiny', 'small', 'base', 'deletang')"),
    (["gpu_protocol.py", "--estimate", "--tokens", "99999999999999"], "argument --tokens: 99999999999999 is above 4,096"),
])
def test_a_script_refuses_a_bad_count_in_one_line(argv: list[str], message: str) -> None:
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines()[-1] == f"{argv[0]}: error: {message}"


def test_gpu_protocol_refuses_device_cuda_without_cuda(tmp_path: Path) -> None:
    """Issue 55, case 18: --device cuda on a machine without CUDA is an error, not a run on the CPU."""
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    argv = [sys.executable, str(ROOT / "benchmarks" / "gpu_protocol.py"), "--smoke", "--device", "cuda", "--out", str(tmp_path / "out")]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and result.stdout == "" and not (tmp_path / "out").exists()
    assert result.stderr.splitlines()[-1] == "gpu_protocol.py: error: --device cuda: CUDA is not available (use --device auto or cpu to run on the CPU)"
