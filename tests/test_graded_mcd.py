"""Graded MCD: a target compound divergence is met within tolerance; suites sweep targets."""

from __future__ import annotations

from collections import Counter

import pytest

from gengap.generators import get_task
from gengap.suite import SuiteError, parse_suite
from gengap.splits import SplitError, generate_records, split
from gengap.splits.atoms import record_atoms, record_compounds
from gengap.splits.mcd import TARGET_TOLERANCE


def chernoff_divergence(train: Counter, test: Counter, alpha: float) -> float:
    """1 - sum_k p_k^alpha q_k^(1-alpha), written out independently of gengap.splits.divergence."""
    p_total, q_total = sum(train.values()), sum(test.values())
    shared = set(train) & set(test)
    return 1.0 - sum((train[k] / p_total) ** alpha * (test[k] / q_total) ** (1 - alpha) for k in shared)


def measured(train: list[dict], test: list[dict], abstract: bool = False) -> tuple[float, float, int]:
    """(D_A, D_C, test atoms unseen in train) recomputed from the parts."""
    a_train, a_test, c_train, c_test = Counter(), Counter(), Counter(), Counter()
    for r in train:
        a_train.update(record_atoms(r))
        c_train.update(record_compounds(r, abstract))
    for r in test:
        a_test.update(record_atoms(r))
        c_test.update(record_compounds(r, abstract))
    return chernoff_divergence(a_train, a_test, 0.5), chernoff_divergence(c_train, c_test, 0.1), len(set(a_test) - set(a_train))


@pytest.fixture(scope="module")
def scan_pool() -> list[dict]:
    task = get_task("scan")
    return list(task.enumerate(task.default_params()).records("scan"))


@pytest.mark.parametrize("target", [0.3, 0.6])
def test_scan_targets_are_met_within_tolerance(scan_pool: list[dict], target: float) -> None:
    options = {"train_size": 8365, "test_size": 1045, "validation_fraction": 0, "compound_divergence": target}
    result = split(scan_pool, "mcd", options, seed=4)
    da, dc, unseen = measured(result.train, result.test)
    assert abs(dc - target) <= TARGET_TOLERANCE
    assert da <= 0.02 and unseen == 0
    assert result.report["compound_divergence"] == round(dc, 6)  # reports round to 6 places
    assert (len(result.train), len(result.test)) == (8365, 1045)


def test_pcfg_set_targets_with_structural_compounds() -> None:
    pool = generate_records("pcfg_set", get_task("pcfg_set").default_params(), 3000, 5)
    reached = []
    for target in (0.6, 0.7):
        options = {"train_size": 1200, "test_size": 150, "validation_fraction": 0, "abstract_lexical": True, "compound_divergence": target}
        result = split(pool, "mcd", options, seed=1)
        da, dc, unseen = measured(result.train, result.test, abstract=True)
        assert abs(dc - target) <= TARGET_TOLERANCE and da <= 0.02 and unseen == 0
        reached.append(dc)
    assert reached[0] < reached[1]


def test_unreachable_target_is_an_error(scan_pool: list[dict]) -> None:
    options = {"train_size": 8365, "test_size": 1045, "compound_divergence": 0.95, "steps": 2000}
    with pytest.raises(SplitError, match="target 0.95 not reached"):
        split(scan_pool, "mcd", options, seed=0)


SWEEP = """
name: sweep
version: 0.1.0
seed: 1
license: cc-by-4.0
entries:
  - {task: scan, split: mcd, pool: all, options: {train_size: 100, test_size: 20, compound_divergence: [0.7, 0.05, 0.3]}}
"""


def test_suite_sweeps_targets_into_sorted_configs() -> None:
    suite = parse_suite(SWEEP)
    names = [e["name"] for e in suite["entries"]]
    assert names == ["scan-mcd_dc0700", "scan-mcd_dc0050", "scan-mcd_dc0300"]
    assert sorted(names) == ["scan-mcd_dc0050", "scan-mcd_dc0300", "scan-mcd_dc0700"]
    assert [e["options"]["compound_divergence"] for e in suite["entries"]] == [0.7, 0.05, 0.3]
    assert {e["strategy"] for e in suite["entries"]} == {"mcd"}


@pytest.mark.parametrize("targets, message", [("[]", "non-empty list"), ("[0.3, 1.5]", "non-empty list"), ("[0.3, 0.3001]", "differ")])
def test_bad_target_sweeps_name_the_line(targets: str, message: str) -> None:
    text = SWEEP.replace("[0.7, 0.05, 0.3]", targets)
    with pytest.raises(SuiteError, match=f"line 7: .*compound_divergence: .*{message}"):
        parse_suite(text)
