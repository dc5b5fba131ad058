"""grid_program: hand-worked primitives, the independent interpreter vs the numpy generator, splits on primitives."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gengap.generators import BlockPlan, ParamError, batch_to_jsonl, get_task
from gengap.generators.tasks.grid import (
    MAX_SIDE,
    PRIMITIVES,
    grid_answers,
    GridProgramParams,
    parse_grid,
    parse_grids,
    primitive,
    read_program,
    render,
)
from gengap.splits import generate_records, split

TASK = get_task("grid_program")
G = [[1, 0, 0], [0, 2, 3]]  # 2 x 3

ON_G = {
    "rotate": [[0, 1], [2, 0], [3, 0]],
    "flip_horizontal": [[0, 0, 1], [3, 2, 0]],
    "flip_vertical": [[0, 2, 3], [1, 0, 0]],
    "transpose": [[1, 0], [0, 2], [0, 3]],
    "shift_right": [[0, 1, 0], [3, 0, 2]],
    "shift_down": [[0, 2, 3], [1, 0, 0]],
    "gravity": [[0, 0, 0], [1, 2, 3]],
    "crop": [[1, 0, 0], [0, 2, 3]],
    "scale": [[1, 1, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0], [0, 0, 2, 2, 3, 3], [0, 0, 2, 2, 3, 3]],
    "tile": [[1, 0, 0, 1, 0, 0], [0, 2, 3, 0, 2, 3]],
}


def mutations(target: str) -> list[str]:
    """Wrong answers: one cell's colour changed, the last token dropped, a row dropped."""
    tokens = target.split()
    first = next(i for i, t in enumerate(tokens) if t != "|")
    changed = list(tokens)
    changed[first] = str((int(tokens[first]) + 1) % 10)
    wrong = [" ".join(changed), " ".join(tokens[:-1] or ["0", "0"])]
    if "|" in tokens:
        wrong.append(" ".join(tokens[: tokens.index("|")]))
    return wrong


@pytest.mark.parametrize("name", sorted(ON_G))
def test_each_primitive_on_a_small_grid(name: str) -> None:
    assert primitive(name, G) == ON_G[name]


def test_recolour_crop_and_gravity_cases() -> None:
    assert primitive("recolour", G, (2, 7)) == [[1, 0, 0], [0, 7, 3]]
    assert primitive("crop", [[0, 0, 0], [0, 4, 0], [0, 0, 5]]) == [[4, 0], [0, 5]]
    assert primitive("gravity", [[5, 0], [0, 0], [6, 0]]) == [[0, 0], [5, 0], [6, 0]]
    assert set(ON_G) | {"recolour"} == set(PRIMITIVES)


def test_the_docstring_example_and_its_ambiguity() -> None:
    record = {"input": "1 0 | 0 2 > 0 1 | 2 0 ; 2 2 | 0 1 > ?", "meta": {"max_depth": 1}}
    # rotate fits the demonstration, and so do flip_horizontal and shift_right: either answer is right
    assert grid_answers(record["input"], 1) == {"0 2 | 1 2", "2 2 | 1 0"}
    assert TASK.check(record, "0 2 | 1 2") and TASK.check(record, "2 2 | 1 0")
    assert not TASK.check(record, "2 2 | 0 1") and not TASK.check(record, "0 1 | 2 2")
    record = {"input": "1 0 | 0 2 > 0 1 | 2 0 ; 1 1 | 0 2 > 0 1 | 2 1 ; 2 0 | 1 1 > ?", "meta": {"max_depth": 1}}
    assert grid_answers(record["input"], 1) == {"1 2 | 1 0"}  # a second demonstration settles it


def test_recolours_are_read_off_the_demonstrations() -> None:
    text = "1 0 | 0 2 > 5 0 | 0 2 ; 2 2 | 1 0 > ?"
    assert grid_answers(text, 1) == {"2 2 | 5 0"}
    assert grid_answers(text, 2) >= {"2 2 | 5 0"}
    assert grid_answers("1 0 | 0 2 > 5 0 | 0 6 ; 2 1 | 1 0 > ?", 1) == set()  # two recolours needed
    assert grid_answers("1 0 | 0 2 > 5 0 | 0 6 ; 2 1 | 1 0 > ?", 2) == {"6 5 | 5 0"}
    record = {"input": "1 0 | 0 2 > 0 1 | 2 0 ; 2 2 | 0 1 > ?"}
    assert not TASK.check(record, "0 2 | 1 2")  # no meta.max_depth: not checkable
    with pytest.raises(ValueError, match="colour"):
        grid_answers("1 0 | 0 2 > 0 1 | 2 0 ; 7 0 | 0 1 > ?", 1)  # colour 7 never demonstrated


def test_program_order_and_recolour_leaves() -> None:
    tree = ["G -> rotate G", ["G -> recolour C C G", "3", "5", "input"]]
    assert read_program(tree) == [("recolour", (3, 5)), ("rotate", ())]
    assert TASK.atoms({"structure": tree}) == {"G -> rotate G": 1, "G -> recolour C C G": 1, "3": 1, "5": 1, "input": 1}
    for bad in (["G -> spin G", "input"], ["G -> rotate G", "grid"], "input", ["G -> recolour C C G", "0", "5", "input"]):
        with pytest.raises(ValueError):
            read_program(bad)


@pytest.mark.parametrize("text", ["", "1 0 > ?", "1 0 | 2 > 1 ; 1 > ?", "1 0 > 0 1 ; 1 x > ?", "1 > 1 ; 2 > 2", "1 > 1 > 1 ; 2 > ?"])
def test_malformed_inputs_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_grids(text)
    assert not TASK.check({"input": text, "meta": {"max_depth": 1}}, "1")


def test_render_and_parse_round_trip() -> None:
    assert render(G) == "1 0 0 | 0 2 3"
    assert parse_grid(render(G).split()) == G


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    depth=st.integers(1, 3),
    sides=st.tuples(st.integers(2, 7), st.integers(2, 7)),
    demos=st.integers(1, 3),
    colours=st.integers(1, 9),
    density=st.floats(0.0, 1.0),
)
def test_every_record_passes_and_mutations_fail(
    seed: int, depth: int, sides: tuple[int, int], demos: int, colours: int, density: float
) -> None:
    params = GridProgramParams(
        max_depth=depth, min_side=min(sides), max_side=max(sides), demos=demos, colours=colours, density=density
    )
    batch = TASK.generate(np.random.default_rng(seed), 15, params)
    for record in batch.records("grid_program"):
        assert TASK.check(record, record["target"]), record
        assert TASK.measure(record) == {k: v for k, v in record["difficulty"].items() if k not in ("input_length", "output_length")}
        answers = grid_answers(record["input"], depth)
        for wrong in mutations(record["target"]):  # accepted only where another program fits the demos
            assert TASK.check(record, wrong) == (wrong in answers), (record, wrong)
            assert len(answers) > 1 or not TASK.check(record, wrong)


def test_every_primitive_alone_matches_the_interpreter() -> None:
    """Depth-1 programs over many shapes: the numpy generator and the Python interpreter agree."""
    params = GridProgramParams(min_depth=1, max_depth=1, min_side=2, max_side=7, demos=1, colours=4)
    seen = set()
    for record in TASK.generate(np.random.default_rng(8), 800, params).records("grid_program"):
        assert TASK.check(record, record["target"]), record
        seen.add(read_program(record["structure"])[0][0])
    assert seen == set(PRIMITIVES)


def test_grids_never_outgrow_arc_size() -> None:
    params = GridProgramParams(min_depth=4, max_depth=4, min_side=20, max_side=30, demos=1)
    batch = TASK.generate(np.random.default_rng(2), 60, params)
    for index, record in enumerate(batch.records("grid_program")):
        demos, query = parse_grids(record["input"])
        for grid in [query, parse_grid(record["target"].split())] + [g for pair in demos for g in pair]:
            assert len(grid) <= MAX_SIDE and len(grid[0]) <= MAX_SIDE
        assert index >= 2 or TASK.check(record, record["target"])


def test_depth_four_records_pass() -> None:
    for record in TASK.generate(np.random.default_rng(6), 5, TASK.level(10)).records("grid_program"):
        assert TASK.check(record, record["target"]), record


def test_same_seed_same_bytes() -> None:
    params = TASK.level(5)

    def render_all(seed: int) -> bytes:
        return b"".join(batch_to_jsonl(b, "grid_program") for b in BlockPlan("grid_program", params, 400, seed).batches())

    assert render_all(4) == render_all(4)
    assert render_all(4) != render_all(5)


def test_levels_raise_depth_and_size() -> None:
    levels = [TASK.level(k) for k in range(1, 11)]
    assert [p.max_depth for p in levels] == sorted(p.max_depth for p in levels)
    assert [p.max_side for p in levels] == sorted(p.max_side for p in levels)
    assert TASK.with_size(6, 9).max_side == 9 and TASK.with_size(1, 4).min_side == 2


def test_params_are_validated() -> None:
    with pytest.raises(ParamError, match="min_side"):
        GridProgramParams(min_side=6, max_side=5)
    with pytest.raises(ParamError):
        GridProgramParams(max_side=31)
    with pytest.raises(ParamError):
        GridProgramParams(colours=10)


@pytest.mark.parametrize("rule", ["G -> gravity G", "G -> recolour C C G"])
def test_holdout_of_a_primitive_keeps_it_out_of_train(rule: str) -> None:
    records = generate_records("grid_program", TASK.default_params(), 500, 21)
    result = split(records, "holdout", {"atom": rule})
    assert result.test and all(TASK.atoms(r)[rule] for r in result.test)
    for record in result.train + result.validation:
        assert rule not in TASK.atoms(record)
