"""letter_analogy: hand-worked transformations, checker, uniqueness by search, splits on transformations and alphabets."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gengap.generators import BlockPlan, ParamError, batch_to_jsonl, get_task
from gengap.generators.tasks.analogy import (
    LETTERS,
    TRANSFORMATIONS,
    LetterAnalogyParams,
    apply_composition,
    parse_puzzle,
    permuted_alphabet,
    read_composition,
    search_answers,
    transform,
)
from gengap.splits import generate_records, split

TASK = get_task("letter_analogy")

ON_ABC = {
    "successor": "b c d",
    "predecessor": "z a b",
    "successor_last": "a b d",
    "predecessor_first": "z b c",
    "reverse": "c b a",
    "repeat_last": "a b c c",
    "extend": "a b c d",
    "drop_first": "b c",
    "swap_ends": "c b a",
    "replace_last": "a b a",
}


def mutations(target: str) -> list[str]:
    """Wrong answers: one letter changed, a letter dropped, a letter appended, reversed (when that differs)."""
    tokens = target.split()
    changed = [LETTERS[(LETTERS.index(tokens[0]) + 1) % 26], *tokens[1:]]
    wrong = [" ".join(changed), " ".join(tokens + [tokens[-1]])]
    if len(tokens) > 1:
        wrong.append(" ".join(tokens[:-1]))
    if tokens[::-1] != tokens:
        wrong.append(" ".join(tokens[::-1]))
    return wrong


@pytest.mark.parametrize("name,output", sorted(ON_ABC.items()))
def test_each_transformation_on_abc(name: str, output: str) -> None:
    assert " ".join(transform(name, ["a", "b", "c"], LETTERS)) == output
    assert set(ON_ABC) == set(TRANSFORMATIONS)


def test_the_copycat_example_and_its_checker() -> None:
    record = {"input": "a b c -> a b d ; i j k -> ?", "meta": {"max_depth": 2}}
    assert TASK.solve(record) == "i j l"
    assert TASK.check(record, "i j l")
    for wrong in ("i j k", "i j d", "i j l l", "l j i"):
        assert not TASK.check(record, wrong)
    misleading = {**record, "structure": ["T -> extend T", "standard"]}  # the checker never reads structure
    assert TASK.check(misleading, "i j l")


def test_an_ambiguous_puzzle_has_no_answer() -> None:
    record = {"input": "a -> b ; c d -> ?", "meta": {"max_depth": 1}}  # successor: d e; successor_last: c e
    assert search_answers(record["input"], 1) == {"d e", "c e"}
    with pytest.raises(ValueError, match="2 answers"):
        TASK.solve(record)
    assert not TASK.check(record, "d e") and not TASK.check(record, "c e")
    assert search_answers("a b -> z z ; c d -> ?", 1) == set()  # no single transformation fits


def test_successor_wraps_and_follows_a_permuted_alphabet() -> None:
    assert transform("successor_last", ["x", "y", "z"], LETTERS) == ["x", "y", "a"]
    order = [LETTERS[i] for i in permuted_alphabet(0)]
    assert sorted(order) == list(LETTERS) and order != list(LETTERS)
    assert transform("successor", [order[25]], order) == [order[0]]
    run = order[3:6]
    text = f"alphabet {' '.join(order)} ; {' '.join(run)} -> {' '.join(run[:2] + [order[6]])} ; {' '.join(order[10:12])} -> ?"
    record = {"input": text, "meta": {"max_depth": 1}}
    assert TASK.solve(record) == f"{order[10]} {order[12]}"
    assert parse_puzzle(text).alphabet == tuple(order)


def test_composition_order_is_inner_first() -> None:
    steps, leaf = read_composition(["T -> reverse T", ["T -> successor_last T", "standard"]])
    assert steps == ["successor_last", "reverse"] and leaf == "standard"
    assert apply_composition(steps, ["a", "b", "c"], LETTERS) == ["d", "b", "a"]


@pytest.mark.parametrize(
    "text",
    ["", "a b c -> a b d", "a b c -> a b d ; i j k -> l", "-> ?", "a b c -> a b d ; i j K -> ?", "alphabet a b ; a -> b ; a -> ?",
     "a b -> c -> d ; a -> ?"],
)  # fmt: skip
def test_malformed_inputs_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_puzzle(text)
    assert not TASK.check({"input": text, "meta": {"max_depth": 1}}, "a")


def test_a_record_without_meta_cannot_be_checked() -> None:
    assert TASK.check({"input": "a b c -> c b a ; i j k -> ?", "meta": {"max_depth": 1}}, "k j i")
    assert not TASK.check({"input": "a b c -> c b a ; i j k -> ?"}, "k j i")


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    depth=st.integers(1, 3),
    lengths=st.tuples(st.integers(1, 7), st.integers(1, 7)),
    demos=st.integers(1, 3),
    alphabet=st.sampled_from(["standard", "permuted", "mixed"]),
)
def test_every_record_passes_and_mutations_fail(seed: int, depth: int, lengths: tuple[int, int], demos: int, alphabet: str) -> None:
    params = LetterAnalogyParams(
        min_depth=1, max_depth=depth, min_length=min(lengths), max_length=max(lengths), demos=demos, alphabet=alphabet, alphabets=3
    )
    batch = TASK.generate(np.random.default_rng(seed), 30, params)
    for record in batch.records("letter_analogy"):
        assert TASK.check(record, record["target"]), record
        assert TASK.measure(record) == {k: v for k, v in record["difficulty"].items() if k not in ("input_length", "output_length")}
        for wrong in mutations(record["target"]):
            assert not TASK.check(record, wrong), (record, wrong)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), depth=st.integers(1, 2), lo=st.integers(1, 4), demos=st.integers(1, 2))
def test_answers_are_unique_under_the_transformation_set(seed: int, depth: int, lo: int, demos: int) -> None:
    """A brute-force search of every composition of 1..max_depth finds exactly the target."""
    params = LetterAnalogyParams(max_depth=depth, min_length=lo, max_length=lo + 3, demos=demos, alphabet="mixed")
    for record in TASK.generate(np.random.default_rng(seed), 12, params).records("letter_analogy"):
        assert search_answers(record["input"], depth) == {record["target"]}, record


def test_uniqueness_at_depth_three() -> None:
    params = TASK.level(7)
    for record in TASK.generate(np.random.default_rng(3), 6, params).records("letter_analogy"):
        assert search_answers(record["input"], params.max_depth) == {record["target"]}


def test_same_seed_same_bytes() -> None:
    params = TASK.level(6).replace(alphabet="mixed", alphabets=4)

    def render(seed: int) -> bytes:
        return b"".join(batch_to_jsonl(b, "letter_analogy") for b in BlockPlan("letter_analogy", params, 500, seed).batches())

    assert render(4) == render(4)
    assert render(4) != render(5)


def test_levels_raise_depth_and_length() -> None:
    levels = [TASK.level(k) for k in range(1, 11)]
    assert [p.max_depth for p in levels] == sorted(p.max_depth for p in levels)
    assert [p.max_length for p in levels] == sorted(p.max_length for p in levels)
    assert levels[0].max_depth == 1 and levels[-1].min_depth == 4
    batch = TASK.generate(np.random.default_rng(0), 200, levels[-1])
    assert (batch.features["depth"] == 4).all()


def test_params_are_validated() -> None:
    with pytest.raises(ParamError, match="min_depth"):
        LetterAnalogyParams(min_depth=3, max_depth=2)
    with pytest.raises(ParamError, match="alphabet"):
        LetterAnalogyParams(alphabet="greek")
    with pytest.raises(ParamError):
        LetterAnalogyParams(max_depth=5)


def test_holdout_of_a_transformation_keeps_it_out_of_train() -> None:
    records = generate_records("letter_analogy", TASK.default_params(), 600, 11)
    result = split(records, "holdout", {"atom": "T -> reverse T"})
    assert result.test and all(TASK.atoms(r)["T -> reverse T"] for r in result.test)
    for record in result.train + result.validation:
        assert "T -> reverse T" not in TASK.atoms(record)


def test_holdout_of_an_alphabet_keeps_it_out_of_train() -> None:
    params = TASK.default_params().replace(alphabet="mixed", alphabets=3)
    records = generate_records("letter_analogy", params, 600, 12)
    result = split(records, "holdout", {"atom": "standard"})
    assert result.test and all(not r["input"].startswith("alphabet") for r in result.test)
    assert all(r["input"].startswith("alphabet") for r in result.train + result.validation)
