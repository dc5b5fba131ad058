"""SCAN: the enumerated grammar matches the published counts, hand-worked commands, extensions."""

from __future__ import annotations

import time
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, strategies as st

from gengap.generators import ParamError, get_task
from gengap.generators.derivation import rule_count, tree_depth
from gengap.generators.tasks.scan import ScanParams, derivation, interpret

TASK = get_task("scan")
BRIEF = "jump opposite left after walk around left"
BRIEF_OUT = (
    "I_TURN_LEFT I_WALK I_TURN_LEFT I_WALK I_TURN_LEFT I_WALK I_TURN_LEFT I_WALK "
    "I_TURN_LEFT I_TURN_LEFT I_JUMP"
)


@pytest.fixture(scope="module")
def full() -> list[dict]:
    return list(TASK.enumerate(TASK.default_params()).records("scan"))


def leaves(tree) -> list[str]:
    if isinstance(tree, str):
        return [tree]
    return [w for child in tree[1:] for w in leaves(child)]


def solve(command: str) -> str:
    return TASK.solve({"input": command})


# -- the original grammar, enumerated ---------------------------------------------------------


def test_enumeration_has_the_published_size(full: list[dict]) -> None:
    inputs = [r["input"] for r in full]
    assert len(inputs) == 20_910 == len(set(inputs))
    assert max(len(c.split()) for c in inputs) == 9
    assert max(r["difficulty"]["output_length"] for r in full) == 48
    assert TASK.input_space_size(TASK.default_params()) == 20_910


def test_enumeration_is_fast_and_deterministic(full: list[dict]) -> None:
    start = time.process_time()
    again = TASK.enumerate(TASK.default_params())
    assert time.process_time() - start < 2.0
    assert [r["input"] for r in full] == [s.decode() for s in again.inputs]
    assert full[0]["input"] == "walk opposite left"  # conjuncts 1 first, V in grammar order
    assert full[-1]["input"] == "jump thrice after jump thrice"


def test_length_split_counts(full: list[dict]) -> None:
    actions = Counter(r["difficulty"]["output_length"] for r in full)
    assert sum(v for k, v in actions.items() if k <= 22) == 16_990
    assert sum(v for k, v in actions.items() if k >= 24) == 3_920
    assert actions[23] == 0


def test_addprim_counts_by_words_and_by_atoms(full: list[dict]) -> None:
    jump_words = [r for r in full if "jump" in r["input"].split()]
    jump_atoms = [r for r in full if TASK.atoms(r)["jump"]]
    assert len(jump_words) - 1 == 7_706 == len(jump_atoms) - 1
    assert len(full) - len(jump_words) == 13_203  # + "jump" itself = 13,204 distinct train commands
    turn_words = [r for r in full if "turn left" in r["input"]]
    turn_atoms = [r for r in full if TASK.atoms(r)["D -> turn left"]]
    assert len(turn_words) - 1 == 1_208 == len(turn_atoms) - 1
    assert {r["input"] for r in turn_words} == {r["input"] for r in turn_atoms}
    assert 20_910 - 1_208 + 2_188 == 21_890  # train: the rest plus "turn left" repeated


def test_every_enumerated_target_is_the_interpreters(full: list[dict]) -> None:
    for record in full:
        assert TASK.check(record, record["target"])


def test_structure_reads_back_the_command_and_matches_features(full: list[dict]) -> None:
    for record in full[::7]:
        tree = record["structure"]
        assert leaves(tree) == record["input"].split()
        assert record["difficulty"]["depth"] == tree_depth(tree)
        assert record["difficulty"]["rules"] == rule_count(tree)
        words = record["input"].split()
        assert record["difficulty"]["conjuncts"] == words.count("and") + words.count("after") + 1
        assert derivation(record["input"]) == tree


# -- hand-worked commands -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "command, actions",
    [
        ("walk", "I_WALK"),
        ("turn left", "I_TURN_LEFT"),
        ("jump right", "I_TURN_RIGHT I_JUMP"),
        ("look opposite right", "I_TURN_RIGHT I_TURN_RIGHT I_LOOK"),
        ("turn opposite left", "I_TURN_LEFT I_TURN_LEFT"),
        ("turn around right", "I_TURN_RIGHT I_TURN_RIGHT I_TURN_RIGHT I_TURN_RIGHT"),
        ("run around left", "I_TURN_LEFT I_RUN I_TURN_LEFT I_RUN I_TURN_LEFT I_RUN I_TURN_LEFT I_RUN"),
        ("walk twice", "I_WALK I_WALK"),
        ("turn left thrice", "I_TURN_LEFT I_TURN_LEFT I_TURN_LEFT"),
        ("walk and jump left", "I_WALK I_TURN_LEFT I_JUMP"),
        ("walk after jump left", "I_TURN_LEFT I_JUMP I_WALK"),
        (BRIEF, BRIEF_OUT),
        # extensions: left-associative conjunctions, stacked repetitions
        ("walk and run after jump", "I_JUMP I_WALK I_RUN"),
        ("walk after run and jump", "I_RUN I_WALK I_JUMP"),
        ("walk after run after jump", "I_JUMP I_RUN I_WALK"),
        ("walk twice thrice", " ".join(["I_WALK"] * 6)),
        ("turn right thrice twice", " ".join(["I_TURN_RIGHT"] * 6)),
    ],
)
def test_hand_worked_commands(command: str, actions: str) -> None:
    assert solve(command) == actions
    assert TASK.check({"input": command}, actions)
    assert not TASK.check({"input": command}, actions + " I_WALK")


def test_brief_example_is_enumerated(full: list[dict]) -> None:
    record = next(r for r in full if r["input"] == BRIEF)
    assert record["target"] == BRIEF_OUT
    assert record["structure"] == [
        "C -> S after S",
        ["S -> V", ["V -> D[1] opposite D[2]", ["U -> jump", "jump"], "opposite", "left"]],
        "after",
        ["S -> V", ["V -> D[1] around D[2]", ["U -> walk", "walk"], "around", "left"]],
    ]
    assert record["difficulty"] == {"input_length": 7, "output_length": 11, "depth": 4, "rules": 7, "conjuncts": 2}


def test_hand_worked_trees() -> None:
    assert derivation("walk") == ["C -> S", ["S -> V", ["V -> U", ["U -> walk", "walk"]]]]
    assert derivation("turn left twice") == [
        "C -> S",
        ["S -> V twice", ["V -> D", ["D -> turn left", "turn", "left"]], "twice"],
    ]
    assert derivation("look right thrice twice") == [
        "C -> S",
        [
            "S -> S twice",
            ["S -> V thrice", ["V -> D", ["D -> U right", ["U -> look", "look"], "right"]], "thrice"],
            "twice",
        ],
    ]
    walk, run, jump = (["S -> V", ["V -> U", [f"U -> {w}", w]]] for w in ("walk", "run", "jump"))
    assert derivation("walk and run after jump") == [
        "C -> C after S", ["C -> S and S", walk, "and", run], "after", jump
    ]


def test_atoms_and_compounds_of_the_brief_example(full: list[dict]) -> None:
    record = next(r for r in full if r["input"] == BRIEF)
    assert TASK.atoms(record) == Counter(
        {
            "C -> S after S": 1, "S -> V": 2, "V -> D[1] opposite D[2]": 1, "V -> D[1] around D[2]": 1,
            "U -> jump": 1, "U -> walk": 1, "jump": 1, "walk": 1,
            "opposite": 1, "around": 1, "left": 2, "after": 1,
        }
    )
    compounds = TASK.compounds(record)
    assert compounds["S -> V(V -> D[1] around D[2](_,around,left))"] == 1
    assert compounds["V -> D[1] opposite D[2](U -> jump(jump),opposite,left)"] == 1
    assert compounds["C -> S after S(S -> V(_),after,S -> V(_))"] == 1
    assert max(text.count(" -> ") for text in compounds) == 5  # sub-derivations of up to 5 rules
    abstract = TASK.compounds(record, abstract_lexical=True)
    assert abstract["V -> D[1] opposite D[2](U -> jump(*),*,*)"] == 1
    assert not any("jump" in c and "U -> jump" not in c for c in abstract)
    # without structure the derivation is read from the words: same atoms and compounds
    bare = {"input": record["input"]}
    assert TASK.atoms(bare) == TASK.atoms(record) and TASK.compounds(bare) == compounds


@pytest.mark.parametrize(
    "command",
    ["", "turn", "walk walk", "and walk", "walk and", "walk and and run", "twice", "walk opposite",
     "jump around up", "jump left left", "walk thrice left", "turn around left right", "WALK"],
)
def test_malformed_commands_are_rejected(command: str) -> None:
    with pytest.raises(ValueError):
        solve(command)
    assert not TASK.check({"input": command}, "I_WALK")
    if command:
        with pytest.raises(ValueError):
            derivation(command)


# -- sampling ------------------------------------------------------------------------------


def test_default_sampling_is_uniform_over_the_enumeration(full: list[dict]) -> None:
    batch = TASK.generate(np.random.default_rng(5), 30_000, TASK.default_params())
    known = {r["input"] for r in full}
    drawn = Counter(s.decode() for s in batch.inputs)
    assert set(drawn) <= known
    single = batch.features["conjuncts"] == 1
    assert abs(single.sum() - 30_000 * 102 / 20_910) < 5 * (30_000 * 102 / 20_910) ** 0.5
    after = sum(" after " in s.decode() for s in batch.inputs)
    assert abs(after - 15_000 * (1 - 102 / 20_910)) < 5 * 87


def test_band_sampling_is_uniform_and_covers_the_band() -> None:
    params = TASK.with_size(24, 48)  # SCAN length-split test set
    assert params.max_conjuncts == 2 and TASK.input_space_size(params) == 3_920
    listed = [s.decode() for s in TASK.enumerate(params).inputs]
    batch = TASK.generate(np.random.default_rng(11), 40_000, params)
    drawn = Counter(s.decode() for s in batch.inputs)
    assert set(drawn) == set(listed)
    expected = 40_000 / 3_920
    chi2 = sum((drawn[c] - expected) ** 2 / expected for c in listed)
    assert chi2 < 3_919 + 6 * (2 * 3_919) ** 0.5


def test_extended_sampling_is_uniform_over_its_enumeration() -> None:
    params = ScanParams(min_conjuncts=3, max_conjuncts=3, min_actions=68)
    listed = [s.decode() for s in TASK.enumerate(params).inputs]
    assert len(listed) == TASK.input_space_size(params) == len(set(listed)) > 50
    batch = TASK.generate(np.random.default_rng(3), 20 * len(listed), params)
    drawn = Counter(s.decode() for s in batch.inputs)
    assert set(drawn) == set(listed)
    chi2 = sum((drawn[c] - 20) ** 2 / 20 for c in listed)
    dof = len(listed) - 1
    assert chi2 < dof + 6 * (2 * dof) ** 0.5


@given(
    seed=st.integers(0, 2**32 - 1),
    lo_c=st.integers(1, 4),
    extra_c=st.integers(0, 3),
    repeats=st.integers(0, 3),
    lo_a=st.integers(1, 120),
    extra_a=st.integers(0, 200),
)
def test_extended_samples_respect_every_knob(
    seed: int, lo_c: int, extra_c: int, repeats: int, lo_a: int, extra_a: int
) -> None:
    try:
        params = ScanParams(
            min_conjuncts=lo_c,
            max_conjuncts=lo_c + extra_c,
            max_repeats=repeats,
            min_actions=lo_a,
            max_actions=lo_a + extra_a,
        )
    except ParamError:
        return
    batch = TASK.generate(np.random.default_rng(seed), 40, params)
    for record in batch.records("scan"):
        words = record["input"].split()
        assert lo_c <= record["difficulty"]["conjuncts"] <= lo_c + extra_c
        assert lo_a <= record["difficulty"]["output_length"] <= lo_a + extra_a
        assert record["target"] == TASK.solve(record)
        assert leaves(record["structure"]) == words
        assert record["structure"] == derivation(record["input"])
        assert record["difficulty"]["depth"] == tree_depth(record["structure"])
        assert record["difficulty"]["rules"] == rule_count(record["structure"])
        run = 0
        for w in words + ["and"]:
            run = run + 1 if w in ("twice", "thrice") else 0
            assert run <= repeats


def test_extended_enumeration_matches_counts() -> None:
    for params in (
        ScanParams(max_conjuncts=1, max_repeats=2),
        ScanParams(max_conjuncts=3, min_conjuncts=3, min_actions=60),
        ScanParams(max_repeats=0),
        ScanParams(min_actions=4, max_actions=4, min_conjuncts=3, max_conjuncts=3),
    ):
        batch = TASK.enumerate(params)
        inputs = [s.decode() for s in batch.inputs]
        assert len(inputs) == len(set(inputs)) == TASK.input_space_size(params)
        for record in batch.records("scan"):
            assert TASK.check(record, record["target"])
            assert params.min_actions <= record["difficulty"]["output_length"] <= params.max_actions
    assert TASK.input_space_size(ScanParams(max_conjuncts=1, max_repeats=2)) == 34 * 7
    assert TASK.input_space_size(ScanParams(max_repeats=0)) == 34 + 2 * 34 * 34
    assert TASK.input_space_size(ScanParams(max_conjuncts=3)) == 20_910 + 4 * 102**3


# -- parameters, sizes and levels ------------------------------------------------------------


@pytest.mark.parametrize(
    "values",
    [
        {"min_conjuncts": 3, "max_conjuncts": 2},
        {"min_actions": 30, "max_actions": 20},
        {"min_actions": 23, "max_actions": 23},  # no command of the original grammar has 23 actions
        {"min_actions": 49},  # beyond the original grammar
        {"max_repeats": 5},
        {"max_conjuncts": 0},
    ],
)
def test_invalid_parameters(values: dict) -> None:
    with pytest.raises(ParamError):
        TASK.make_params(values)


def test_enumeration_refuses_huge_sets() -> None:
    with pytest.raises(ParamError):
        TASK.enumerate(ScanParams(max_conjuncts=4))


def test_with_size_gives_the_length_split_and_grows_the_grammar() -> None:
    train, test = TASK.with_size(1, 22), TASK.with_size(24, 48)
    assert train == ScanParams(max_actions=22) and test == ScanParams(min_actions=24, max_actions=48)
    assert TASK.input_space_size(train) == 16_990 and TASK.input_space_size(test) == 3_920
    assert TASK.with_size(23, 23).max_conjuncts == 3
    assert TASK.with_size(500, 500).max_conjuncts == 22  # 21 S reach 504 actions but not 500 exactly
    batch = TASK.generate(np.random.default_rng(0), 20, TASK.with_size(500, 500))
    assert (batch.difficulty()["output_length"] == 500).all()
    with pytest.raises(ParamError):
        TASK.with_size(30, 20)


def test_levels_are_disjoint_growing_action_bands() -> None:
    levels = TASK.levels()
    assert levels[4] == ScanParams(min_actions=13, max_actions=22)
    assert levels[5] == ScanParams(min_actions=24, max_actions=48)
    assert all(levels[k].max_actions < levels[k + 1].min_actions for k in range(1, 10))
    assert levels[10].max_actions == 500
    assert sum(TASK.input_space_size(levels[k]) for k in range(1, 6)) == 20_910
