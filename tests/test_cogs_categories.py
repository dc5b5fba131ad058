"""COGS's 21 generalization categories as splits (strategy category), and the cogs suite."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from gengap.generators import get_task
from gengap.generators.tasks import _cogs_grammar as grammar
from gengap.release import build_entry
from gengap.suite import load_suite
from gengap.splits import SplitError, split
from gengap.splits.atoms import record_atoms

COGS = get_task("cogs")
SUITE = Path(__file__).resolve().parents[1] / "gengap" / "suites" / "cogs.yaml"


@pytest.fixture(scope="module")
def pool() -> list[dict]:
    params = COGS.make_params({"gen_share": 0.6, "primitive_share": 0.02})
    return list(COGS.generate(np.random.default_rng(2020), 1200, params).records("cogs"))


@pytest.mark.parametrize("category", grammar.CATEGORIES)
def test_category_split_holds_only_its_construction_out(pool: list[dict], category: str) -> None:
    result = split(pool, "category", {"category": category, "exposure_repeats": 2}, seed=1)
    exposure = set(COGS.exposure(category))
    assert result.test and {COGS.category(r) for r in result.test} == {category}
    assert len(result.test) == sum(1 for r in pool if COGS.category(r) == category)
    for record in result.train + result.validation:
        assert COGS.category(record) == "" or record["input"] in exposure
    assert Counter(r["input"] for r in result.train if r["input"] in exposure) == {text: 2 for text in exposure}
    assert not any(r["input"] in exposure for r in result.validation)
    if category in grammar.LEXICAL:
        word = grammar.LEXICAL[category][0]
        assert [r["input"] for r in result.train if record_atoms(r)[word]] == [r["input"] for r in result.train if r["input"] in exposure]
    else:
        assert not exposure
        assert max(r["difficulty"]["cp_depth"] for r in result.train) <= 2
        assert max(r["difficulty"]["pp_depth"] for r in result.train) <= 2
        assert not any(grammar.shape(r["structure"])["subject_pp"] for r in result.train)
    assert result.report["test_categories"] == {category: len(result.test)}
    assert result.report["overlap"] == 0


def test_exposure_examples_are_cogs_own_and_checked() -> None:
    assert COGS.exposure("subj_to_obj_common") == ["A hedgehog ate the cake on the bed ."]
    assert COGS.exposure("prim_to_inf_arg") == ["crawl"]
    assert COGS.exposure("pp_recursion") == []
    assert len({text for name in grammar.CATEGORIES for text in COGS.exposure(name)}) == 15  # 12 sentences + 3 primitives


def test_all_categories_with_a_cap_per_category(pool: list[dict]) -> None:
    result = split(pool, "category", {"category": "all", "per_category": 5, "validation_fraction": 0.2}, seed=3)
    counts = Counter(COGS.category(r) for r in result.test)
    assert counts == {name: 5 for name in grammar.CATEGORIES}
    assert result.report["test_categories"] == {name: 5 for name in grammar.CATEGORIES}
    assert len(result.report["exposure"]) == 15
    assert {COGS.category(r) for r in result.validation} == {""}


def test_category_errors(pool: list[dict]) -> None:
    with pytest.raises(SplitError, match="^unknown category 'nope' of task cogs; known: all, obj_pp_to_subj_pp, "):
        split(pool, "category", {"category": "nope"})
    scan = list(get_task("scan").enumerate(get_task("scan").make_params({"max_actions": 2})).records("scan"))
    with pytest.raises(SplitError, match=r"^category splits need a pool of one task that defines categories \(cogs\), got scan$"):
        split(scan, "category", {"category": "all"})
    few = [r for r in pool if COGS.category(r) in ("", "cp_recursion")]
    result = split(few, "category", {"category": "all", "validation_fraction": 0})
    assert "category pp_recursion: 0 test records in the pool" in result.report["warnings"]


def test_shipped_cogs_suite_resolves_and_a_small_build_shows_every_category() -> None:
    suite = load_suite(SUITE)
    names = [entry["name"] for entry in suite["entries"]]
    assert names == ["cogs-iid", "cogs-gen"]
    gen = suite["entries"][1]
    assert gen["options"]["per_category"] == 1000 and gen["options"]["category"] == "all"
    small = {**gen, "pool": {"n": 2500}, "options": {**gen["options"], "per_category": 10}}
    result = build_entry(small, suite["seed"])
    assert result.report["test_categories"] == {name: 10 for name in grammar.CATEGORIES}
    assert len(result.test) == 210


def test_card_lists_the_categories_and_exposure_examples() -> None:
    from gengap.data_cards.card import _category_lines

    lines = _category_lines({"test_categories": {"cp_recursion": 1000, "subj_to_obj_common": 1000}, "exposure": ["shark"]})
    assert lines == [
        "- test records per generalization category: `cp_recursion` 1,000, `subj_to_obj_common` 1,000",
        "- exposure examples in train: `shark`",
    ]
    assert _category_lines({"sizes": {}}) == []


def test_tasks_without_categories_define_none() -> None:
    scan = get_task("scan")
    assert scan.categories() == () and scan.exposure("x") == []
    assert scan.category({"task": "scan", "input": "jump", "target": "I_JUMP"}) is None
