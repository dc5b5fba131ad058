"""What a record may ask of a checker and what it may claim (issue 38, items 4, 5 and 8).

- A meta field that names a task parameter keeps to that parameter's range, in check, verify and
  every reward path: ``meta.max_depth=99`` on grid_program or letter_analogy is refused at once
  (it made the answer search run for CPU-minutes), and so are inputs beyond what the parameters
  allow (more demonstrations, larger grids, longer strings).
- A ``structure`` the input does not fix (grid_program's program, letter_analogy's composition),
  which holdout and MCD splits read, must be a program that made the record.
- A shortcut cue names an answer the task can have (``cue:banana`` on parity_check is refused).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gengap.checking import derivation_problem, record_problem
from gengap.cli import main
from gengap.generators import get_task, record_id, task_names
from gengap.generators.cues import with_cue
from gengap.generators.tasks.grid import MAX_DEMOS, MAX_SIDE, render


def records(task: str, n: int = 4, seed: int = 0, **params: Any) -> list[dict[str, Any]]:
    spec = get_task(task)
    return list(spec.generate(np.random.default_rng(seed), n, spec.make_params(params)).records(task))


def with_meta(record: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {**record, "meta": {**record["meta"], **meta}}


# -- item 8: a record never asks for more work than the parameters allow ----------------------------

BOUNDED = textwrap.dedent(
    """
    import json, sys, time
    from gengap.checking import record_problem
    from gengap.generators import get_task
    from gengap.harnesses.rewards import compute_score, gengap_reward, gengap_token_reward
    from gengap.harnesses.scoring import score_output
    record = json.loads(sys.argv[1])
    task = get_task(record["task"])
    started = time.perf_counter()
    wrong = "0 0 | 0 0" if record["task"] == "grid_program" else "a b"
    info = {"task": record["task"], "input": record["input"], "meta": record["meta"]}
    found = [
        record_problem(record),
        task.check(record, record["target"]),
        task.check(record, wrong),
        score_output(record, "Answer: " + wrong).correct,
        compute_score("gengap/x", "Answer: " + wrong, record["target"], info),
        compute_score("gengap/x", "Answer: " + wrong, record["target"], info, partial_credit=True)["acc"],
        gengap_reward(["Answer: " + wrong], task=[record["task"]], input=[record["input"]], target=[record["target"]], meta=[json.dumps(record["meta"])]),
        gengap_token_reward(["Answer: " + wrong], task=[record["task"]], input=[record["input"]], target=[record["target"]], meta=[json.dumps(record["meta"])]),
    ]
    print(json.dumps({"found": found, "seconds": time.perf_counter() - started}))
    """
)


@pytest.mark.parametrize("task", ["grid_program", "letter_analogy"])
@pytest.mark.parametrize("depth", [7, 99])
def test_a_deeper_meta_max_depth_is_refused_at_once_in_check_and_every_reward(task: str, depth: int) -> None:
    """In a subprocess with a timeout: before the fix depth 99 ran the search for CPU-minutes."""
    record = with_meta(records(task, 1, **({"min_side": 5, "max_side": 6} if task == "grid_program" else {}))[0], max_depth=depth)
    done = subprocess.run([sys.executable, "-c", BOUNDED, json.dumps(record)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    problem, *verdicts = result["found"]
    assert problem == f"meta.max_depth={depth} is out of range [1, 4]"
    assert verdicts[:5] == [False, False, False, 0.0, 0.0]
    assert verdicts[5:] == [[0.0], [0.0]] or verdicts[5] == [0.0]
    assert result["seconds"] < 5


@pytest.mark.parametrize(
    "task,meta,problem",
    [
        ("modular_arithmetic", {"modulus": 10**9}, "meta.modulus=1000000000 is out of range"),
        ("modular_arithmetic", {"modulus": 5.0}, "meta.modulus must be an integer, got 5.0"),
        ("fact_lookup", {"n_entities": 10**9}, "meta.n_entities=1000000000 is out of range"),
        ("modular_operation", {"p": 10**12}, "meta.p=1000000000000 is out of range"),
        ("addition", {"format": "roman"}, "meta.format='roman' is not one of"),
        ("letter_analogy", {"max_depth": True}, "meta.max_depth must be an integer, got True"),
    ],
)
def test_meta_fields_keep_to_their_parameters_rules(task: str, meta: dict[str, Any], problem: str) -> None:
    record = with_meta(records(task, 1)[0], **meta)
    assert problem in (record_problem(record) or "")
    assert not get_task(task).check(record, record["target"])


def test_every_generated_record_keeps_to_its_parameters_rules() -> None:
    for name in task_names():
        spec = get_task(name)
        for level in (1, 10):
            for record in spec.generate(np.random.default_rng(level), 3, spec.level(level)).records(name):
                assert spec.meta_problem(record) is None, (name, record.get("meta"))


def _grid_input(demos: int, side: int) -> str:
    grid = [[(r + c) % 3 + 1 for c in range(side)] for r in range(side)]
    pair = f"{render(grid)} > {render(grid)}"
    return " ; ".join([pair] * demos) + f" ; {render(grid)} > ?"


@pytest.mark.parametrize("demos,side", [(MAX_DEMOS + 1, 3), (2, MAX_SIDE + 1)])
def test_grid_inputs_beyond_the_parameters_are_no_record(demos: int, side: int) -> None:
    text = _grid_input(demos, side)
    grid = " | ".join(" ".join(str((r + c) % 3 + 1) for c in range(side)) for r in range(side))
    record = {"task": "grid_program", "input": text, "target": grid, "meta": {"max_depth": 2}}
    assert not get_task("grid_program").check(record, grid)
    assert get_task("grid_program").check({**record, "input": _grid_input(2, 3)}, " | ".join(" ".join(str((r + c) % 3 + 1) for c in range(3)) for r in range(3)))


def test_analogy_inputs_beyond_the_parameters_are_no_record() -> None:
    letters = "abcdefghijklmnopqrstuvwxyz"
    long = " ".join((letters * 2)[:41])
    record = {"task": "letter_analogy", "input": f"{long} -> {long} ; a b -> ?", "target": "a b", "meta": {"max_depth": 1}}
    assert not get_task("letter_analogy").check(record, "a b")
    six = " ; ".join(["a b -> b c"] * 6) + " ; c d -> ?"
    assert not get_task("letter_analogy").check({**record, "input": six}, "d e")
    five = " ; ".join(["a b -> b c"] * 5) + " ; c d -> ?"
    assert get_task("letter_analogy").check({**record, "input": five}, "d e")


def test_check_reports_a_deep_meta_in_one_line_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = records("grid_program", 2)
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [good[0], with_meta(good[1], max_depth=99)]))
    assert main(["check", str(path)]) == 1
    captured = capsys.readouterr()
    assert "line 2: meta.max_depth=99 is out of range [1, 4]" in captured.err
    assert "1 passed, 1 failed" in captured.out


# -- item 4: a structure the input does not fix is re-checked -----------------------------------------


def reverse_four_times(leaf: str = "standard") -> list[Any]:
    tree: Any = leaf
    for _ in range(4):
        tree = ["T -> reverse T", tree]
    return tree


def test_a_forged_analogy_structure_is_refused_in_check_and_at_a_split() -> None:
    record = next(r for r in records("letter_analogy", 20, max_depth=4, min_depth=2) if r["input"].split(" ; ")[0].split(" -> ")[0] != r["input"].split(" ; ")[0].split(" -> ")[1])
    forged = {**record, "structure": reverse_four_times()}
    assert record_problem(forged) == "structure is a composition that does not give demonstration 1"
    assert derivation_problem(get_task("letter_analogy"), forged) == "structure is a composition that does not give demonstration 1"
    shallow = with_meta(forged, max_depth=2)
    assert get_task("letter_analogy").structure_problem(shallow) == "structure composes 4 transformations; the record allows at most 2 (meta.max_depth)"
    wrong_alphabet = {**record, "structure": _with_leaf(record["structure"], "permuted_3")}
    assert "structure names the alphabet 'permuted_3', but the input's is 'standard'" == record_problem(wrong_alphabet)
    assert record_problem(record) is None


def _with_leaf(tree: Any, leaf: str) -> Any:
    return leaf if isinstance(tree, str) else [tree[0], _with_leaf(tree[1], leaf)]


def test_a_forged_grid_program_is_refused() -> None:
    record = records("grid_program", 1, min_depth=1, max_depth=2)[0]
    four = "input"
    for rule in ("G -> rotate G", "G -> tile G", "G -> flip_vertical G", "G -> gravity G"):
        four = [rule, four]
    assert "structure is a program of 4 primitives; the record allows at most 2" in (record_problem({**record, "structure": four}) or "")
    four_allowed = with_meta({**record, "structure": four}, max_depth=4)
    assert (record_problem(four_allowed) or "").startswith("structure is a program that does not give demonstration 1")
    same = ["G -> recolour C C G", "3", "3", "input"]
    assert record_problem({**record, "structure": same}) == "structure recolours a colour to itself (a recolour takes two different colours)"
    assert record_problem(record) is None


def test_a_forged_structure_cannot_grow_grids_without_bound() -> None:
    record = with_meta(records("grid_program", 1, min_side=8, max_side=8)[0], max_depth=4)
    scales = "input"
    for _ in range(4):
        scales = ["G -> scale G", scales]
    assert "grids grow past 30 x 30" in (record_problem({**record, "structure": scales}) or "")


# -- item 5: a cue names an answer the task can have ---------------------------------------------------


def cued(record: dict[str, Any], named: str) -> dict[str, Any]:
    out = with_cue(record, named)
    return {**out, "id": record_id(out["task"], out["input"], out["target"])}


def test_a_cue_naming_a_non_answer_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = records("parity_check", 1)[0]
    other = "1" if record["target"] == "0" else "0"
    assert record_problem(cued(record, other)) is None
    assert record_problem(cued(record, "banana")) == "its cue cue:banana names no answer of parity_check"
    path = tmp_path / "cued.jsonl"
    path.write_text(json.dumps(cued(record, "banana")) + "\n")
    assert main(["check", str(path)]) == 1
    assert "line 1: its cue cue:banana names no answer of parity_check" in capsys.readouterr().err


@pytest.mark.parametrize(
    "task,good,bad",
    [("modular_arithmetic", "4", "5"), ("cycle_navigation", "0", "07"), ("graph_connectivity", "no", "maybe"),
     ("fact_lookup", "e0", "e100"), ("fact_compare", "<", "v10"), ("variable_binding", "9", "10")],
)
def test_cue_answers_follow_the_tasks_answer_set(task: str, good: str, bad: str) -> None:
    record = next(r for r in records(task, 30) if r["target"] != good)
    assert record_problem(cued(record, good)) is None
    assert record_problem(cued(record, bad)) == f"its cue cue:{bad} names no answer of {task}"


def test_every_target_is_a_possible_answer_where_a_task_states_its_answers() -> None:
    """A task's answer set holds every answer its generator writes, at every level (so gengap's
    own cued records always pass)."""
    stated = 0
    for name in task_names():
        spec = get_task(name)
        for level, params in spec.levels().items():
            for record in spec.generate(np.random.default_rng(level), 20, params).records(name):
                if len(record["target"].split()) != 1:
                    break
                verdict = spec.possible_answer(record, record["target"])
                assert verdict in (True, None), (name, level, record["target"])
                stated += verdict is True
    assert stated > 0
