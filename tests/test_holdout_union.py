"""holdout with several atoms or templates held out together (alternatives joined by |)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from gengap.generators import get_task
from gengap.splits import SplitError, split
from gengap.splits.atoms import record_atoms

SCAN = get_task("scan")
COGS = get_task("cogs")


@pytest.fixture(scope="module")
def scan_pool() -> list[dict]:
    return list(SCAN.enumerate(SCAN.make_params({"max_actions": 4})).records("scan"))


def test_scan_jump_and_turn_left_held_out_together(scan_pool: list[dict]) -> None:
    union = split(
        scan_pool,
        "holdout",
        {"atom": "jump|D -> turn left", "primitive": "jump|turn left", "primitive_repeats": 3, "validation_fraction": 0},
    )
    jump = {r["input"] for r in scan_pool if record_atoms(r)["jump"]}
    turn_left = {r["input"] for r in scan_pool if record_atoms(r)["D -> turn left"]}
    assert jump and turn_left and jump - turn_left and turn_left - jump
    assert {r["input"] for r in union.test} == (jump | turn_left) - {"jump", "turn left"}
    counts = Counter(r["input"] for r in union.train)
    assert counts["jump"] == 3 and counts["turn left"] == 3
    held = jump | turn_left
    assert all(r["input"] not in held or r["input"] in ("jump", "turn left") for r in union.train)
    # a single alternative is the old behaviour
    single = split(scan_pool, "holdout", {"atom": "jump", "primitive_repeats": 3, "validation_fraction": 0})
    assert {r["input"] for r in single.test} == jump - {"jump"}


def test_union_of_co_occurring_groups_and_of_templates(scan_pool: list[dict]) -> None:
    both = split(scan_pool, "holdout", {"atom": "jump+twice|walk+thrice", "validation_fraction": 0})
    expected = {
        r["input"] for r in scan_pool
        if (record_atoms(r)["jump"] and record_atoms(r)["twice"]) or (record_atoms(r)["walk"] and record_atoms(r)["thrice"])
    }  # fmt: skip
    assert {r["input"] for r in both.test} == expected
    first, second = "S -> V twice(V -> U(_),twice)", "S -> V thrice(V -> U(_),thrice)"
    union = split(scan_pool, "holdout", {"template": f"{first}|{second}", "validation_fraction": 0})
    one = {r["input"] for r in split(scan_pool, "holdout", {"template": first, "validation_fraction": 0}).test}
    two = {r["input"] for r in split(scan_pool, "holdout", {"template": second, "validation_fraction": 0}).test}
    assert one and two and {r["input"] for r in union.test} == one | two


def test_missing_primitive_of_a_union_is_an_error(scan_pool: list[dict]) -> None:
    with pytest.raises(SplitError, match="^no held-out example has input 'turn right'$"):
        split(scan_pool, "holdout", {"atom": "jump|D -> turn left", "primitive": "jump|turn right", "primitive_repeats": 1})


def test_cogs_several_held_out_words_together() -> None:
    params = COGS.make_params({"gen_share": 1.0})
    pool = list(COGS.generate(np.random.default_rng(5), 600, params).records("cogs"))
    result = split(pool, "holdout", {"atom": "hedgehog|Lina|VP -> V_xcomp to V_inf", "validation_fraction": 0})
    for record in result.train:
        atoms = record_atoms(record)
        assert not (atoms["hedgehog"] or atoms["Lina"] or atoms["VP -> V_xcomp to V_inf"])
    found = Counter(COGS.category(r) for r in result.test)
    assert found["subj_to_obj_common"] and found["subj_to_obj_proper"] and found["prim_to_inf_arg"]
    assert len(result.test) == sum(
        1 for r in pool if {"hedgehog", "Lina", "VP -> V_xcomp to V_inf"} & set(record_atoms(r))
    )
