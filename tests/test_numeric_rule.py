"""The one numeric rule (issue 38, item 7): every number gengap reads is finite and in its range,
or one line: task parameters, split and cue options, suite fields, training settings, stream
block sizes; and no report or manifest is ever written with a NaN in it."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gengap.baselines.errors import BaselineError
from gengap.baselines.numbers import RANGES, check_numbers
from gengap.cli import main
from gengap.generators import ParamError, get_task, task_names
from gengap.generators.jsonl import NonFiniteError, json_text
from gengap.generators.numbers import Range
from gengap.generators.streams import RecordStream, Uniforms
from gengap.splits import STRATEGIES, SplitError, parse_options
from gengap.splits.cues import CueOption, parse_cue

NOT_FINITE = [math.nan, math.inf, -math.inf]
NOT_FINITE_TEXT = ["nan", "NaN", "inf", "-inf", "1e400"]


def numeric_fields(params_type: type) -> list[dataclasses.Field]:
    return [f for f in dataclasses.fields(params_type) if f.type in ("int", "float", int, float)]


def float_fields(params_type: type) -> list[dataclasses.Field]:
    return [f for f in dataclasses.fields(params_type) if f.type in ("float", float)]


def every_params_type() -> list[tuple[str, type]]:
    types = [(f"task {name}", get_task(name).params_type) for name in task_names()]
    types += [(f"strategy {name}", strategy.options_type) for name, strategy in sorted(STRATEGIES.items())]
    return types + [("cue", CueOption)]


@pytest.mark.parametrize("label,params_type", every_params_type(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_float_knob_refuses_nan_and_infinities(label: str, params_type: type) -> None:
    """NaN compares false with every bound, so a plain range test lets it through: the rule refuses it (and +-inf)."""
    for field in float_fields(params_type):
        for value in NOT_FINITE:
            with pytest.raises(ParamError, match=rf"^parameter {field.name}=-?(nan|inf) is not a finite number$"):
                params_type(**{field.name: value})
            assert params_type.value_problem(field.name, value) == f"parameter {field.name}={value} is not a finite number"


@pytest.mark.parametrize("label,params_type", every_params_type(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_numeric_knob_refuses_what_lies_outside_its_range(label: str, params_type: type) -> None:
    for field in numeric_fields(params_type):
        lo, hi = field.metadata.get("lo"), field.metadata.get("hi")
        for outside in ([lo - 1] if lo is not None else []) + ([hi + 1] if hi is not None else []) + [10**400]:
            if field.type in ("float", float) and outside == 10**400:
                match = "is not a finite number"
            elif lo is None and hi is None:
                continue
            else:
                match = "is out of range"
            if outside == 10**400 and field.type in ("int", int) and hi is None:
                continue  # an unbounded int knob takes any int
            with pytest.raises(ParamError, match=match):
                params_type(**{field.name: outside})


def test_a_huge_int_for_a_float_knob_is_one_line_not_an_overflow() -> None:
    with pytest.raises(ParamError, match="density=inf is not a finite number"):
        get_task("grid_program").make_params({"density": 10**400})


@given(st.floats(allow_nan=True, allow_infinity=True), st.floats(-10, 10), st.floats(-10, 10))
@settings(max_examples=200)
def test_range_holds_exactly_the_finite_numbers_between_its_bounds(value: float, a: float, b: float) -> None:
    low, high = min(a, b), max(a, b)
    assert Range(low, high).holds(value) == (math.isfinite(value) and low <= value <= high)
    assert not Range(low, high).holds(True)
    assert not Range(low, high, integer=True).holds(value)


@pytest.mark.parametrize("text", NOT_FINITE_TEXT)
@pytest.mark.parametrize(
    "argv",
    [
        ["generate", "graph_connectivity", "--n", "3", "--param", "edges_per_node={}"],
        ["generate", "maze", "--n", "3", "--param", "loops={}"],
        ["generate", "fact_two_hop", "--n", "3", "--param", "atomic_share={}"],
        ["generate", "grid_program", "--n", "3", "--param", "density={}"],
        ["generate", "cogs", "--n", "3", "--param", "gen_share={}"],
    ],
    ids=lambda a: a[1],
)
def test_generate_refuses_a_non_finite_parameter_in_one_line(argv: list[str], text: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [part.format(text) for part in argv]
    name = argv[-1].split("=")[0]
    task = get_task(argv[1])
    if name not in task.params_type.names():  # the test names a knob each task has
        pytest.fail(f"{argv[1]} has no parameter {name}")
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("gengap: error: ") and name in lines[0], lines


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pool") / "pool.jsonl"
    assert main(["generate", "scan", "--n", "60", "--out", str(path)]) == 0
    return path


@pytest.mark.parametrize(
    "strategy,option",
    [("iid", "test_fraction"), ("iid", "train_fraction"), ("iid", "validation_fraction"), ("length", "validation_fraction"),
     ("mcd", "compound_divergence"), ("mcd", "atom_divergence_max")],
)
@pytest.mark.parametrize("text", ["nan", "inf"])
def test_split_refuses_a_non_finite_option_and_writes_nothing(
    pool: Path, tmp_path: Path, strategy: str, option: str, text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "split"
    assert main(["split", str(pool), "--strategy", strategy, "--option", f"{option}={text}", "--out", str(out)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and f"{option}={text}" in lines[0] and "not a finite number" in lines[0], lines
    assert not out.exists()


def test_parse_options_and_cues_refuse_nan() -> None:
    with pytest.raises(SplitError, match="not a finite number"):
        parse_options(STRATEGIES["facts"], {"by": "direction", "holdout_fraction": "nan"})
    with pytest.raises(SplitError, match="not a finite number"):
        parse_cue("train=nan,test=0.5")


def test_training_settings_keep_to_the_same_rule() -> None:
    for name, accepted in RANGES.items():
        if accepted.integer:
            continue
        for value in NOT_FINITE:
            with pytest.raises(BaselineError, match=name):
                check_numbers({name: value})


@pytest.mark.parametrize("block_size", [0, -1, 1.5, True, 1 << 30])
def test_a_stream_block_size_outside_its_range_is_a_value_error(block_size: object) -> None:
    with pytest.raises(ValueError, match="block_size must be an integer from 1 to"):
        RecordStream.fixed("parity_check", get_task("parity_check").default_params(), 0, block_size=block_size)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="block_size"):
        Uniforms(0, block_size)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [{"x": math.nan}, [1.0, math.inf], {"a": {"b": -math.inf}}])
def test_json_text_never_writes_nan(value: object) -> None:
    with pytest.raises(NonFiniteError, match="NaN or infinite"):
        json_text(value)
    assert json.loads(json_text({"x": 1.5, "y": [1, None]})) == {"x": 1.5, "y": [1, None]}
