"""boolean_function: targets recomputed independently, the support as part of the config, the checker."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

from gengap.generators import BlockPlan, ParamError, get_task
from gengap.checking import record_problem

TASK = get_task("boolean_function")


def expected(function: str, bits: str, support: list[int]) -> str:
    """The target written from the definitions, on the input text (not the task's code)."""
    chosen = [bits.split()[i] for i in support]
    if function == "parity":
        return "1" if chosen.count("1") % 2 else "0"
    if function == "majority":
        return "1" if chosen.count("1") > len(chosen) / 2 else "0"
    return "1" if "0" not in chosen else "0"


@given(
    n=st.integers(1, 40),
    function=st.sampled_from(["parity", "majority", "monomial"]),
    data=st.data(),
    seed=st.integers(0, 2**32 - 1),
)
def test_every_target_is_the_function_of_the_support_and_flips_are_rejected(n: int, function: str, data, seed: int) -> None:
    k = data.draw(st.integers(1, n))
    mode = data.draw(st.sampled_from(["first", "seeded"]))
    params = TASK.make_params({"n": n, "function": function, "k": k, "support": mode, "support_seed": seed % 1000})
    records = list(TASK.generate(np.random.default_rng(seed), 40, params).records(TASK.name))
    support = list(params.coordinates())
    assert len(set(support)) == k and all(0 <= i < n for i in support) and support == sorted(support)
    if mode == "first":
        assert support == list(range(k))
    for record in records:
        assert len(record["input"].split()) == n
        assert record["meta"] == {"function": function, "support": support}
        assert record["target"] == expected(function, record["input"], support)
        assert record_problem(record) is None
        assert not TASK.check(record, "1" if record["target"] == "0" else "0")


def test_functions_by_hand() -> None:
    def target(function: str, bits: str, support: list[int]) -> str:
        return TASK.solve({"input": bits, "meta": {"function": function, "support": support}})

    assert target("parity", "1 1 0 1", [0, 1, 3]) == "1" and target("parity", "1 1 0 1", [0, 1]) == "0"
    assert target("majority", "1 1 0 0", [0, 1, 2]) == "1" and target("majority", "1 0 0 1", [0, 1, 2]) == "0"
    assert target("majority", "1 0 1 1", [0, 1]) == "0"  # a tie is not a majority
    assert target("monomial", "1 1 0 1", [0, 1, 3]) == "1" and target("monomial", "1 1 0 1", [0, 2]) == "0"
    assert target("parity", "0 1 0 1", [3]) == "1"  # the support decides, not the position of the bits


def test_the_seeded_support_is_part_of_the_config() -> None:
    def support(seed: int) -> tuple[int, ...]:
        return TASK.make_params({"n": 30, "k": 4, "support": "seeded", "support_seed": seed}).coordinates()

    assert support(0) == support(0)
    assert len({support(seed) for seed in range(6)}) > 1
    assert support(0) == (2, 3, 12, 16)  # pinned: stream "support" of gengap.generators.seeding
    params = TASK.make_params({"n": 30, "k": 4, "support": "seeded", "support_seed": 3})
    blocks = list(BlockPlan(TASK.name, params, 25, 9, block_size=10).batches())
    assert len(blocks) == 3 and all(b.meta == {"function": "parity", "support": list(support(3))} for b in blocks)


def test_a_record_is_checked_against_its_own_support() -> None:
    record = next(TASK.generate(np.random.default_rng(0), 1, TASK.make_params({"n": 8, "k": 8})).records(TASK.name))
    assert TASK.check(record, record["target"])
    moved = {**record, "meta": {"function": "parity", "support": [0]}}
    assert TASK.check(moved, record["input"].split()[0]) and not TASK.check(moved, "1" if record["input"][0] == "0" else "0")
    for bad in ([], [8], [0, 0], ["0"], [True], "0"):
        assert not TASK.check({**record, "meta": {"function": "parity", "support": bad}}, record["target"]), bad
    assert not TASK.check({**record, "meta": {"function": "xor", "support": [0]}}, "0")
    garbled = {**record, "input": "2 " + record["input"][2:]}
    assert not TASK.check(garbled, "0") and not TASK.check(garbled, "1")


def test_parameters_levels_and_size() -> None:
    with pytest.raises(ParamError, match="k=5 exceeds the dimension n=4"):
        TASK.make_params({"n": 4, "k": 5})
    with pytest.raises(ParamError, match="function='xor' is not one of"):
        TASK.make_params({"function": "xor"})
    assert [p.n for _, p in sorted(TASK.levels().items())] == [4, 6, 8, 10, 12, 16, 20, 24, 32, 40]
    assert TASK.with_size(12, 12).n == 12
    with pytest.raises(ParamError, match="one value per setting"):
        TASK.with_size(8, 12)
    assert TASK.input_space_size(TASK.make_params({"n": 10})) == 1024
    batch = TASK.generate(np.random.default_rng(5), 2000, TASK.make_params({"n": 6, "k": 2, "function": "monomial"}))
    assert 0.2 < float(np.mean(batch.targets == b"1")) < 0.3  # AND of two fair bits: 1/4


def test_prompts_state_the_function_and_its_support() -> None:
    from gengap.harnesses.prompts import explanation

    record = {"task": TASK.name, "input": "0 1 1 0 1", "target": "1", "meta": {"function": "majority", "support": [1, 4]}}
    assert "positions 1 4 (counting from 0)" in explanation(TASK.name, {"n": 5}, record)
    assert "more than half" in explanation(TASK.name, {"n": 5}, record)
    seeded = {"n": 30, "k": 4, "support": "seeded", "support_seed": 0, "function": "monomial"}
    assert "every bit at positions 2 3 12 16" in explanation(TASK.name, seeded)
