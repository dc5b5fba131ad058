"""Strategy.test_rule: the test side as a rule on one record agrees with the strategy's partition."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gengap.generators import get_task
from gengap.generators.seeding import split_rng
from gengap.splits import STRATEGIES, generate_records, make_options
from gengap.splits.base import SplitError

PARITY = generate_records("parity_check", get_task("parity_check").with_size(1, 14), 300, 5)

# strategy, options, pool: every strategy with a per-record rule, on a pool it splits
CASES = [
    ("length", {"train_max": 6}, "parity"),
    ("length", {"train_ranges": "1..3,9..10", "test_ranges": "4..8,12..14"}, "parity"),
    ("difficulty", {"feature": "input_length", "train_max": 5, "test_min": 8, "test_max": 12}, "parity"),
    ("gotu", {"frozen": "0=1"}, "parity"),
    ("holdout", {"atom": "jump"}, "scan"),
    ("holdout", {"atom": "jump|D -> turn left"}, "scan"),
    ("holdout", {"template": "S -> V thrice(V -> U(_),thrice)"}, "scan"),
    ("category", {"category": "all"}, "cogs"),
    ("category", {"category": "unacc_to_transitive"}, "cogs"),
]


def _pool(name: str) -> list[dict]:
    if name == "parity":
        return PARITY
    if name == "scan":
        scan = get_task("scan")
        return list(scan.enumerate(scan.default_params()).records("scan"))[::7]
    return generate_records("cogs", get_task("cogs").make_params({"gen_share": 0.5}), 400, 0)


@pytest.mark.parametrize(("strategy", "options", "pool"), CASES)
def test_rule_accepts_exactly_the_partitions_test_side(strategy: str, options: dict, pool: str) -> None:
    chosen = STRATEGIES[strategy]
    typed = make_options(chosen, options)
    records = _pool(pool)
    rule = chosen.test_rule(typed)
    partition = chosen.partition(records, typed, split_rng(0, strategy))
    accepted = [r for r in records if rule(r)]
    assert accepted and [r["id"] for r in accepted] == [r["id"] for r in partition.test]
    assert len(accepted) < len(records)  # the rule refuses the train side


@settings(max_examples=20, deadline=None)
@given(train_max=st.integers(1, 12), gap=st.integers(1, 3))
def test_length_rule_is_the_test_range(train_max: int, gap: int) -> None:
    typed = make_options(STRATEGIES["length"], {"train_max": train_max, "test_min": train_max + gap})
    rule = STRATEGIES["length"].test_rule(typed)
    for record in PARITY:
        assert rule(record) == (record["difficulty"]["input_length"] >= train_max + gap)


def test_iid_rule_accepts_every_record() -> None:
    rule = STRATEGIES["iid"].test_rule(make_options(STRATEGIES["iid"], {}))
    assert all(rule(r) for r in PARITY)


@pytest.mark.parametrize("strategy", ["mcd", "facts", "rule_holdout", "task_holdout"])
def test_pool_dependent_strategies_have_no_rule(strategy: str) -> None:
    chosen = STRATEGIES[strategy]
    assert chosen.test_rule(make_options(chosen, {})) is None


def test_a_capped_category_has_no_rule() -> None:
    chosen = STRATEGIES["category"]
    assert chosen.test_rule(make_options(chosen, {"category": "all", "per_category": 5})) is None


def test_rules_raise_the_partitions_errors() -> None:
    with pytest.raises(SplitError, match="train_max"):
        STRATEGIES["length"].test_rule(make_options(STRATEGIES["length"], {}))
    with pytest.raises(SplitError, match="exactly one"):
        STRATEGIES["holdout"].test_rule(make_options(STRATEGIES["holdout"], {}))
    rule = STRATEGIES["difficulty"].test_rule(make_options(STRATEGIES["difficulty"], {"feature": "carries", "train_max": 1}))
    with pytest.raises(SplitError, match="no difficulty feature 'carries'"):
        rule(PARITY[0])
