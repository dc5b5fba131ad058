"""Ranking stability in gengap report: Kendall's tau-b, rank orders with ties, the report section."""

from __future__ import annotations

import json
import math
import warnings
from collections import Counter
from pathlib import Path
from typing import Callable, Sequence

import pytest
from hypothesis import given, settings, strategies as st

from gengap.baselines.ranking import kendall_tau_b, lexicon_base, order_text, rank_order, ranking
from gengap.baselines.report import group_runs, make_report
from gengap.cli import main
from tests.test_baselines import fake_results


def direct_tau_b(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """tau-b by the sign-product sum over all pairs, ties counted from the tied groups: t(t-1)/2 each."""
    n = len(xs)
    sign = lambda v: (v > 0) - (v < 0)  # noqa: E731
    s = sum(sign(xs[i] - xs[j]) * sign(ys[i] - ys[j]) for i in range(n) for j in range(i + 1, n))
    pairs = n * (n - 1) / 2
    tied = lambda values: sum(t * (t - 1) / 2 for t in Counter(values).values())  # noqa: E731
    denominator = math.sqrt((pairs - tied(xs)) * (pairs - tied(ys)))
    return None if denominator == 0 else s / denominator


def _references() -> list[Callable[[Sequence[float], Sequence[float]], float | None]]:
    """The direct count, and scipy's tau-b where scipy is installed (it is no dependency of gengap)."""
    references: list[Callable[[Sequence[float], Sequence[float]], float | None]] = [direct_tau_b]
    try:
        from scipy.stats import kendalltau
    except ImportError:
        return references

    def scipy_tau_b(xs: Sequence[float], ys: Sequence[float]) -> float | None:
        with warnings.catch_warnings():  # fewer than two pairs or a constant side: NaN, with a warning
            warnings.simplefilter("ignore")
            value = kendalltau(xs, ys, variant="b").statistic
        return None if math.isnan(value) else float(value)

    return references + [scipy_tau_b]


pairs_of_scores = st.integers(0, 12).flatmap(
    lambda n: st.tuples(st.lists(st.integers(0, 4).map(lambda v: v / 4), min_size=n, max_size=n),
                        st.lists(st.integers(0, 4).map(lambda v: v / 4), min_size=n, max_size=n)))


@pytest.mark.parametrize("reference", _references(), ids=lambda f: f.__name__)
@settings(max_examples=150, deadline=None)
@given(pairs_of_scores)
def test_kendall_tau_b_matches_its_references(reference: Callable, scores: tuple[list[float], list[float]]) -> None:
    xs, ys = scores
    expected, found = reference(xs, ys), kendall_tau_b(xs, ys)
    assert (found is None) == (expected is None)
    if found is not None:
        assert found == pytest.approx(expected, abs=1e-12)


def test_kendall_tau_b_by_hand() -> None:
    assert kendall_tau_b([1, 2, 3], [1, 2, 3]) == 1.0
    assert kendall_tau_b([1, 2, 3], [3, 2, 1]) == -1.0
    # one tie on x: pairs (1,2) tied, (1,3) and (2,3) concordant: 2 / sqrt(2 * 3)
    assert kendall_tau_b([1, 1, 2], [1, 2, 3]) == pytest.approx(2 / math.sqrt(6))
    assert kendall_tau_b([1, 1], [1, 2]) is None and kendall_tau_b([1], [2]) is None
    with pytest.raises(ValueError):
        kendall_tau_b([1, 2], [1])


def test_rank_orders_and_lexicon_variants() -> None:
    order = rank_order({"rope": 0.5, "nope": 0.7, "alibi": 0.5, "lstm": 0.1 + 0.2, "rnn": 0.3})
    assert order == [["nope"], ["rope", "alibi"], ["lstm", "rnn"]]  # 0.1 + 0.2 and 0.3 are one score
    assert order_text(order) == "nope > rope = alibi > lstm = rnn"
    assert lexicon_base("scan-iid-lex3") == "scan-iid" and lexicon_base("scan-iid") == "scan-iid" and lexicon_base("lex-3") == "lex-3"


def _rows(runs: dict[str, dict]) -> list[dict]:
    return group_runs(list(runs.values()))


def test_ranking_figures_per_config_pair_and_seed() -> None:
    rows = _rows({
        "a": fake_results("scan-iid", "rope", {0: (1.0, 0.9), 1: (1.0, 0.7)}),
        "b": fake_results("scan-iid", "nope", {0: (1.0, 0.5), 1: (1.0, 0.8)}),
        "c": fake_results("scan-iid", "alibi", {0: (1.0, 0.1), 1: (1.0, 0.1)}),
        "d": fake_results("scan-iid-lex1", "rope", {0: (1.0, 0.2)}),
        "e": fake_results("scan-iid-lex1", "nope", {0: (1.0, 0.6)}),
        "f": fake_results("scan-iid-lex1", "alibi", {0: (1.0, 0.4)}),
        "g": fake_results("scan-mcd", "rope", {0: (1.0, 0.3)}),
        "h": fake_results("scan-mcd", "nope", {0: (1.0, 0.3)}),
    })
    figures = ranking(rows)
    assert figures["shown"] is True
    assert figures["configs"]["scan-iid"]["order"] == [["rope"], ["nope"], ["alibi"]]  # 0.8 > 0.65 > 0.1
    assert figures["configs"]["scan-mcd"]["order"] == [["rope", "nope"]]
    pairs = {(p["a"], p["b"]): p for p in figures["pairs"]}
    lex = pairs[("scan-iid", "scan-iid-lex1")]
    assert lex["relation"] == "lexicon variants of scan-iid" and lex["models"] == 3
    assert lex["tau_b"] == pytest.approx(direct_tau_b([0.8, 0.65, 0.1], [0.2, 0.6, 0.4]))  # = -1/3
    assert pairs[("scan-iid", "scan-mcd")] == {"a": "scan-iid", "b": "scan-mcd", "models": 2, "tau_b": None, "relation": "configs"}
    seeds = {entry["config"]: entry for entry in figures["seeds"]}
    assert list(seeds) == ["scan-iid"]  # the other configs have one seed
    assert seeds["scan-iid"]["orders"] == {"0": [["rope"], ["nope"], ["alibi"]], "1": [["nope"], ["rope"], ["alibi"]]}
    assert seeds["scan-iid"]["mean_tau_b"] == seeds["scan-iid"]["least_tau_b"] == pytest.approx(1 / 3)


@pytest.mark.parametrize("runs, reason", [
    ({"a": fake_results("x", "rope", {0: (1, 0.5)}), "b": fake_results("y", "rope", {0: (1, 0.4)})},
     "the runs compare 1 model (a ranking needs at least 2)"),
    ({"a": fake_results("x", "rope", {0: (1, 0.5)}), "b": fake_results("x", "nope", {0: (1, 0.4)})},
     "the runs cover 1 config (stability needs at least 2)"),
    ({"a": fake_results("x", "rope", {0: (1, 0.5)}), "b": fake_results("x", "nope", {0: (1, 0.4)}),
      "c": fake_results("y", "rope", {0: (1, 0.5)}), "d": fake_results("y", "alibi", {0: (1, 0.4)})},
     "no two configs score two models in common"),
])
def test_ranking_says_why_it_is_absent(runs: dict[str, dict], reason: str) -> None:
    assert ranking(_rows(runs)) == {"shown": False, "reason": reason}


def test_gengap_report_writes_the_ranking_section_and_figures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = {
        "a": fake_results("rev", "rope", {0: (1.0, 0.9)}), "b": fake_results("rev", "nope", {0: (1.0, 0.4)}),
        "c": fake_results("rev-lex1", "rope", {0: (1.0, 0.3)}), "d": fake_results("rev-lex1", "nope", {0: (1.0, 0.6)}),
    }
    for name, results in runs.items():
        (tmp_path / "runs" / name).mkdir(parents=True)
        (tmp_path / "runs" / name / "results.json").write_text(json.dumps(results))
    out = tmp_path / "report.md"
    assert main(["report", str(tmp_path / "runs"), "--out", str(out)]) == 0
    text = out.read_text()
    section = text[text.index("## Ranking stability"):]
    assert "| rev | rope (0.900) > nope (0.400) |" in section and "| rev-lex1 | nope (0.600) > rope (0.300) |" in section
    assert "| rev | rev-lex1 | lexicon variants of rev | 2 | -1.000 |" in section
    written = json.loads(out.with_suffix(".json").read_text())
    assert written["ranking"]["pairs"] == [{"a": "rev", "b": "rev-lex1", "models": 2, "tau_b": -1.0, "relation": "lexicon variants of rev"}]
    assert [row["ood_exact_match_by_seed"] for row in written["rows"]] == [{"0": 0.9}, {"0": 0.4}, {"0": 0.3}, {"0": 0.6}]
    alone = make_report([tmp_path / "runs" / "a"])
    assert "## Ranking stability\n\nNot shown: the runs compare 1 model (a ranking needs at least 2)." in alone["text"]
    capsys.readouterr()


def test_presets_join_the_model_names_when_the_runs_have_several() -> None:
    small = {**fake_results("x", "rope", {0: (1, 0.5)}), "preset": "small"}
    rows = _rows({"a": fake_results("x", "rope", {0: (1, 0.4)}), "b": small, "c": fake_results("y", "rope", {0: (1, 0.1)}),
                  "d": {**fake_results("y", "rope", {0: (1, 0.2)}), "preset": "small"}})
    figures = ranking(rows)
    assert figures["configs"]["x"]["order"] == [["rope [small]"], ["rope [tiny]"]]
    assert figures["pairs"][0]["tau_b"] == 1.0
