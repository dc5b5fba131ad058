"""The validity protocol's engine (edition 10) and its claim specs: intervals over seeds, leave-one-seed-out
stability, premises, equal budgets, the selected checkpoint, controls and tiers, each axis's rule on
constructed figures (one input where it holds, one where it fails), merging, rendering, shipped
evidence and --recompute on a tiny edition."""

from __future__ import annotations

import gzip
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import validity_engine as engine  # noqa: E402
import validity_stats as stats  # noqa: E402
from validity_axes import AXES, authors, cfq, chomsky, compositional, facts, generalize, gpu, grokking, interpolation, lengths, looped, rules, shortcuts  # noqa: E402
from validity_axes.common import PREVIOUS, SELECTED  # noqa: E402
from validity_engine import ArmResult, Claim, Decision, Learned, Premise  # noqa: E402
from validity_report import counts_line, render  # noqa: E402

CPU_CLAIMS = [c for axis in AXES for c in __import__(f"validity_axes.{axis}", fromlist=["claims"]).claims(False)]


def seed(number: int = 0, learned: bool = True, **figures: Any) -> dict[str, Any]:
    base = {"seed": number, "converged": learned, "selected_id": 1.0 if learned else 0.5, "id_exact_match": 1.0,
            "id_length_mean_exact_match": 1.0, "ood_exact_match": 0.0, "ood_length_score": 0.5, "stopped_at": 100, "steps": 100,
            "selected_step": 80}
    return {**base, **figures}


def result_of(label: str, seeds: list[dict[str, Any]], rule: Learned = SELECTED, **results: Any) -> ArmResult:
    arm = engine.Arm(label, f"config-{label}", engine.Build.of("x:y"), (("steps", 100),), tuple(s["seed"] for s in seeds))
    return ArmResult(arm, seeds, [{"per_seed": [s], "run": f"{label}/{s['seed']}", **results} for s in seeds], rule)


def three(label: str, key: str, values: list[float], **extra: Any) -> ArmResult:
    return result_of(label, [seed(i, **{key: v}, **extra) for i, v in enumerate(values)])


def claim_of(decide: Any, labels: tuple[str, ...], losing: tuple[str, ...] = (), optional: tuple[str, ...] = (), **fields: Any) -> Claim:
    arms = tuple(engine.Arm(label, f"config-{label}", engine.Build.of("x:y"), (("steps", 100),), (0, 1, 2)) for label in labels)
    return Claim("t", "k", "title", arms, "rule", "published", decide, learned=SELECTED, losing=losing, optional=optional, **fields)


# -- intervals over seeds --------------------------------------------------------------------


def test_a_margin_of_0_0004_over_a_spread_of_0_13_is_not_a_holds() -> None:
    """The ninth edition's randomized claim: best-of-2 cleared its margin by 0.0004; the interval of the mean does not."""
    groups = {"randomized": [0.7244, 0.696], "rope": [0.674, 0.544, 0.679]}
    interval = stats.bootstrap(groups, stats.difference("randomized", "rope"), 0.95)
    assert max(groups["randomized"]) - max(groups["rope"][:2]) >= 0.05  # what best-of read
    assert interval.low < 0.05 < interval.high and not stats.at_least(interval, 0.05)
    clear = stats.bootstrap({"a": [0.9, 0.91, 0.92], "b": [0.5, 0.52, 0.51]}, stats.difference("a", "b"), 0.95)
    assert stats.at_least(clear, 0.3) and clear.low <= clear.value <= clear.high


def test_bootstrap_is_deterministic_and_its_bounds_lie_between_the_extreme_seeds() -> None:
    groups = {"a": [0.1, 0.5, 0.9]}
    one, two = stats.bootstrap(groups, stats.mean_of("a")), stats.bootstrap(groups, stats.mean_of("a"))
    assert one == two
    assert 0.1 <= one.low <= one.value <= one.high <= 0.9
    assert stats.bootstrap({"a": []}, stats.mean_of("a")).low is None
    assert stats.within(stats.Interval(0.0, -0.04, 0.03, 0.95), 0.05) and not stats.within(stats.Interval(0.0, -0.06, 0.03, 0.95), 0.05)
    assert stats.at_most(stats.Interval(0.0, -1.0, 0.2, 0.95), 0.2) and not stats.at_most(stats.Interval(0.0, -1.0, 0.21, 0.95), 0.2)
    with pytest.raises(ValueError, match="level"):
        stats.bootstrap(groups, stats.mean_of("a"), level=1.0)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=2, max_size=6))
def test_the_interval_of_a_mean_never_leaves_the_seeds_range(values: list[float]) -> None:
    interval = stats.bootstrap({"a": values}, stats.mean_of("a"), 0.95, draws=300)
    assert min(values) - 1e-9 <= interval.low <= interval.high <= max(values) + 1e-9


def test_resolution_says_when_the_bounds_are_the_extreme_seeds() -> None:
    assert "no interval" in stats.resolution([1, 3], 0.95)
    assert "extreme seeds" in stats.resolution([3, 3], 0.95)  # 3^-3 = 0.037 > 0.025
    assert stats.resolution([5, 5], 0.95) is None and stats.resolution([3], 0.9) is None


# -- verdicts, stability, premises -----------------------------------------------------------


def test_frozen_specs_round_trip() -> None:
    value = {"b": [1, 2], "a": {"c": (3, 4), "d": "x"}}
    assert engine.thawed(engine.frozen(value)) == {"a": {"c": [3, 4], "d": "x"}, "b": [1, 2]}
    assert hash(engine.frozen(value)) == hash(engine.frozen({"a": {"d": "x", "c": [3, 4]}, "b": (1, 2)}))


def test_a_seed_learned_when_its_scored_checkpoint_reached_the_threshold() -> None:
    assert SELECTED.met({"selected_id": 0.95}) and not SELECTED.met({"selected_id": 0.949, "converged": True})
    assert not SELECTED.met({"id_length_mean_exact_match": 1.0})  # no selected checkpoint: not learned
    assert SELECTED.settings() == {"select": "best", "until_over": "train_lengths"}
    assert result_of("a", [seed(0), seed(1, False)]).learned and not result_of("a", [seed(0), seed(1, False), seed(2, False)]).learned
    mixed = result_of("a", [seed(0, ood_exact_match=0.2), seed(1, False, ood_exact_match=0.9)])
    assert mixed.ood == pytest.approx(0.2)  # figures of the learned seeds only
    memorized = Learned(threshold=0.99, stop=False, metric="train")
    assert result_of("a", [seed(0, False, train_exact_match=1.0)], memorized).learned


def test_verdicts_vacuous_and_premises_of_the_rule() -> None:
    holds = lambda figures: Decision(True, "m")  # noqa: E731
    fails = lambda figures: Decision(False, "m")  # noqa: E731
    learned = [seed(i) for i in range(3)]
    unlearned = [seed(i, False) for i in range(3)]
    figures = {"win": result_of("win", learned), "lose": result_of("lose", learned)}
    judged = engine.judge(claim_of(holds, ("win", "lose"), losing=("lose",)), figures)
    assert (judged["verdict"], judged["stability"], judged["left_out"]) == ("holds", "stable", {"0": "holds", "1": "holds", "2": "holds"})
    assert engine.judge(claim_of(fails, ("win", "lose")), figures)["verdict"] == "does not hold"
    not_learned = engine.judge(claim_of(holds, ("win", "lose")), {"win": result_of("win", unlearned), "lose": result_of("lose", learned)})
    assert (not_learned["verdict"], not_learned["not_learned"]) == ("not learned", ["win"])
    vacuous = engine.judge(claim_of(holds, ("win", "lose"), losing=("lose",)), {"win": result_of("win", learned), "lose": result_of("lose", unlearned)})
    assert (vacuous["verdict"], vacuous["vacuous"]) == ("holds", ["lose"])
    unmet = engine.judge(claim_of(lambda f: Decision(True, "m", unmet=("p",)), ("win",)), {"win": result_of("win", learned)})
    assert unmet["verdict"] == "not learned" and unmet["not_learned"] == ["p"]


def test_a_holds_that_one_seed_decides_is_unstable_not_a_holds() -> None:
    def decide(figures: Any) -> Decision:
        interval = stats.bootstrap({"a": figures["a"].values("ood_exact_match")}, stats.mean_of("a"))
        return Decision(stats.at_least(interval, 0.6), interval.text())

    steady = {"a": three("a", "ood_exact_match", [0.8, 0.82, 0.84])}
    assert engine.judge(claim_of(decide, ("a",)), steady)["verdict"] == "holds"
    # two of four seeds learned (an arm learns with half its seeds); without either learned seed, one of three is not enough
    flips = {"a": result_of("a", [seed(0, ood_exact_match=0.9), seed(1, ood_exact_match=0.9), seed(2, False), seed(3, False)])}
    judged = engine.judge(claim_of(decide, ("a",)), flips)
    assert judged["rule_verdict"] == "holds"
    assert judged["left_out"] == {"0": "not learned", "1": "not learned", "2": "holds", "3": "holds"}
    assert (judged["verdict"], judged["stability"]) == ("unstable", "unstable")
    assert "without seed 0: not learned" in __import__("validity_report").verdict_cell(judged)
    # with 3 seeds the 95 % bound of a mean is the extreme seed, so leaving one out cannot loosen it
    assert stats.bootstrap({"a": [0.9, 0.52, 0.9]}, stats.mean_of("a")).low == 0.52
    assert "1 unstable" in counts_line([judged])
    one = engine.judge(claim_of(decide, ("a",)), {"a": three("a", "ood_exact_match", [0.9])})
    assert one["stability"] == "n/a" and one["left_out"] == {}


def test_a_claim_whose_premise_the_splits_do_not_meet_is_not_testable_and_trains_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    premise = Premise("two", lambda splits: {"n": len(splits)}, lambda facts: () if facts["n"] >= 2 else ("one split",))
    claim = claim_of(lambda f: Decision(True, "m"), ("a",), premise=premise)
    monkeypatch.setattr(engine, "build_split", lambda build: object())
    facts_ = engine.premise_facts([claim])
    assert facts_ == {"k": {"n": 1}}
    (judged,) = engine.judge_all([claim], facts_, {})  # no evidence needed: nothing trained
    assert (judged["verdict"], judged["measured"], judged["premise"]) == ("not testable", "premise not met: one split", {"n": 1})


def test_novelty_and_local_premises_read_the_splits_records() -> None:
    class Split:
        def __init__(self, zero: int, some: int) -> None:
            self.test = [{"novelty": {"unseen_compounds": 0}}] * zero + [{"novelty": {"unseen_compounds": 2}}] * some

    facts_ = compositional.novelty_facts({"a": Split(40, 50), "b": Split(31, 9), "c": Split(0, 90)})
    assert facts_ == {"a": {"0 unseen": 40, "≥ 1 unseen": 50}, "b": {"0 unseen": 31, "≥ 1 unseen": 9}, "c": {"0 unseen": 0, "≥ 1 unseen": 90}}
    assert "1 of 3 MCD splits" in compositional.novelty_unmet(facts_)[0]
    assert compositional.novelty_unmet({k: {"0 unseen": 30, "≥ 1 unseen": 30} for k in "abc"}) == ()
    assert authors._local_unmet({"x": {"0 unseen": 713, "≥ 1 unseen": 332}}) == ()
    assert authors._local_unmet({"x": {"0 unseen": 713, "≥ 1 unseen": 12}})


# -- equal budgets, seeds, tiers and controls of the specs ----------------------------------


def test_check_specs_refuses_unequal_budgets_seeds_and_early_stops() -> None:
    def arm(label: str, steps: int = 100, seeds: tuple[int, ...] = (0, 1, 2)) -> engine.Arm:
        return engine.Arm(label, "c", engine.Build.of("x:y"), (("steps", steps),), seeds)

    ok = Claim("t", "k", "t", (arm("a"), arm("b")), "r", "p", lambda f: Decision(True, "m"), learned=SELECTED)
    engine.check_specs([ok])
    for bad, message in ((replace(ok, arms=(arm("a"), arm("b", steps=200))), "different step budgets"),
                         (replace(ok, arms=(arm("a"), arm("b", seeds=(0,)))), "different seeds"),
                         (replace(ok, arms=(arm("a", seeds=(0, 1)), arm("b", seeds=(0, 1)))), "fewer than 3"),
                         (replace(ok, learned=Learned()), "stops early"),
                         (replace(ok, tiers=("fast",)), "tiers")):
        with pytest.raises(engine.SpecError, match=message):
            engine.check_specs([bad])
    grouped = replace(ok, arms=(arm("a"), arm("b"), arm("c", 200), arm("d", 200)), compared=(("a", "b"), ("c", "d")))
    engine.check_specs([grouped])  # budgets equal within each compared group
    with pytest.raises(engine.SpecError, match="share this key"):
        engine.check_specs([ok, ok])


def test_every_cpu_claim_meets_the_tenth_editions_rules() -> None:
    engine.check_specs(CPU_CLAIMS)
    for claim in CPU_CLAIMS:
        labels = [a.label for a in claim.arms]
        assert claim.rule and claim.published and len(labels) == len(set(labels)), claim.key
        assert set(claim.losing) | set(claim.optional) <= set(labels)
        cheap = claim.axis in ("facts", "shortcuts")
        assert all(a.seeds == ((0, 1, 2, 3, 4) if cheap else (0, 1, 2)) for a in claim.arms), claim.key
        assert claim.learned.select or claim.axis == "grokking", claim.key  # grokking reads first-solved steps of the history
        assert claim.previous == PREVIOUS.get(claim.key, ""), claim.key  # the ninth edition's figure beside every claim it judged
    for axis in AXES:
        roles = {c.role for c in CPU_CLAIMS if c.axis == axis}
        assert "negative control" in roles or axis == "facts", axis
    assert {c.role for c in CPU_CLAIMS if c.axis == "facts"} == {"claim", "positive control", "negative control"}
    assert not {"diversity", "cfq:mcd", "cfq:divergence"} & {c.key for c in CPU_CLAIMS}  # a GPU decides them


def test_the_quick_tier_rechecks_one_claim_per_axis_within_its_budget() -> None:
    import validity

    quick = validity.claims_of(AXES, False, "quick")
    assert {c.axis for c in quick} == set(AXES) and all(c.role == "claim" for c in quick)
    full = {run.name for run in engine.plan(CPU_CLAIMS).values()}
    ours = {run.name for run in engine.plan(quick).values()}
    assert ours <= full  # the quick tier's runs are the full tier's: the re-check reuses them
    # cost by the ninth edition's measured CPU seconds per step of each config (a generous bound: 2.0 ms x tokens)
    assert len(ours) <= 45


def test_the_plan_shares_runs_between_claims_and_trains_every_arm_to_its_budget() -> None:
    runs = engine.plan(lengths.claims(False) + generalize.claims(False))
    assert runs[("gap:reverse_string", "transformer", 0)] is runs[("positions", "rope", 0)] is runs[("randomized", "reverse_string rope", 0)]
    assert runs[("gap:parity_check", "transformer", 1)] is runs[("traces", "answer only", 1)] is runs[("inductive", "answer only", 1)]
    settings_ = engine.thawed(runs[("positions", "nope", 2)].settings)
    assert settings_["steps"] == 16000 and settings_["select"] == "best" and "until_id" not in settings_
    names = [run.name for run in set(runs.values())]
    assert len(names) == len(set(names))


# -- each axis's rule on constructed figures ---------------------------------------------------


def test_divergence_needs_a_falling_series_whose_interval_stays_below_the_bound() -> None:
    def figures(ems: list[float], spread: float = 0.01) -> dict[str, ArmResult]:
        dcs = [0.0, 0.15, 0.3, 0.45, 0.6, 0.75]
        return {f"c{i}": result_of(f"c{i}", [seed(s, ood_exact_match=em - spread * s) for s in range(3)], divergence={"compound_divergence": dc})
                for i, (dc, em) in enumerate(zip(dcs, ems))}

    assert compositional.divergence(figures([0.97, 0.9, 0.7, 0.5, 0.3, 0.1])).holds
    assert not compositional.divergence(figures([0.97, 0.1, 0.9, 0.3, 0.7, 0.5])).holds  # no trend
    assert not compositional.divergence(figures([0.1, 0.3, 0.5, 0.7, 0.9, 0.97])).holds  # rising
    assert not compositional.divergence(figures([0.97, 0.9, 0.7, 0.5, 0.3, 0.1], spread=0.4)).holds  # seeds overlap across configs


def test_compositional_drop_gap_and_control() -> None:
    ood = lambda label, values: three(label, "ood_exact_match", values)  # noqa: E731
    assert compositional.drop({"scan-simple": ood("scan-simple", [0.95, 0.97, 0.96]), "scan-mcd_max": ood("scan-mcd_max", [0.04, 0.05, 0.03])}).holds
    assert not compositional.drop({"scan-simple": ood("scan-simple", [0.95, 0.3, 0.96]), "scan-mcd_max": ood("scan-mcd_max", [0.04, 0.5, 0.03])}).holds
    assert compositional.max_gap({"m": ood("m", [0.04, 0.05, 0.03])}).holds and not compositional.max_gap({"m": ood("m", [0.6, 0.05, 0.03])}).holds
    alike = {"s": result_of("s", [seed(i, id_exact_match=0.96, ood_exact_match=0.95 + 0.01 * i) for i in range(3)])}
    assert compositional.no_gap(alike).holds
    apart = {"s": result_of("s", [seed(i, id_exact_match=0.96, ood_exact_match=0.85) for i in range(3)])}
    assert not compositional.no_gap(apart).holds


def test_novelty_is_judged_within_each_split() -> None:
    def split(zero: float, some: float, n0: int = 100, n1: int = 100) -> ArmResult:
        cells = {"ood": {"0": {"n": n0, "exact_match": zero}, "1": {"n": n1 // 2, "exact_match": some}, "3+": {"n": n1 - n1 // 2, "exact_match": some}}}
        return result_of("s", [seed(0, by_novelty=cells)])

    assert compositional.novelty({f"s{i}": split(0.9, 0.5) for i in range(3)}).holds
    assert not compositional.novelty({"a": split(0.9, 0.5), "b": split(0.9, 0.5), "c": split(0.5, 0.6)}).holds
    assert not compositional.novelty({"a": split(0.9, 0.5), "b": split(0.9, 0.5), "c": split(0.9, 0.5, n0=5)}).holds


def test_length_rules_read_intervals() -> None:
    gap = lambda ids, oods: {"m": result_of("m", [seed(i, selected_id=a, ood_exact_match=b) for i, (a, b) in enumerate(zip(ids, oods))])}  # noqa: E731
    assert lengths.gap(gap([0.97, 0.98, 0.99], [0.2, 0.3, 0.25])).holds
    assert not lengths.gap(gap([0.97, 0.98, 0.99], [0.2, 0.9, 0.25])).holds  # one seed extrapolates
    assert lengths.iid_gap(gap([0.97, 0.98, 0.99], [0.95, 0.96, 0.97])).holds
    assert not lengths.iid_gap(gap([0.97, 0.98, 0.99], [0.7, 0.96, 0.97])).holds
    low = {"rope": three("rope", "ood_exact_match", [0.02, 0.03, 0.04]), "nope": result_of("nope", [seed(i, False, ood_exact_match=0.9) for i in range(3)])}
    assert lengths.positions(low).holds  # an encoding that did not learn is not counted (vacuous)
    assert not lengths.positions({**low, "alibi": three("alibi", "ood_exact_match", [0.2, 0.6, 0.3])}).holds
    plain = three("answer only", "ood_exact_match", [0.5, 0.52, 0.48])
    assert lengths.traces({"answer only": plain, "fine trace": three("fine trace", "ood_answer_exact_match", [0.7, 0.72, 0.68])}).holds
    assert not lengths.traces({"answer only": plain, "fine trace": three("fine trace", "ood_answer_exact_match", [0.55, 0.9, 0.6])}).holds


def test_generalize_rules_read_means_with_intervals_not_the_best_seed() -> None:
    plain, fine = three("answer only", "ood_exact_match", [0.55] * 3), three("fine trace", "ood_answer_exact_match", [0.5] * 3)
    inductive = lambda values: {"answer only": plain, "fine trace": fine, "inductive trace": three("i", "ood_answer_exact_match", values)}  # noqa: E731
    assert generalize.inductive_wins(inductive([0.7, 0.72, 0.71])).holds and not generalize.inductive_wins(inductive([0.6, 0.62, 0.61])).holds

    def positions(randomized: dict[str, list[float]], rope: list[float], nope: list[float]) -> dict[str, ArmResult]:
        return {f"{task} {pos}": three(f"{task} {pos}", "ood_length_score", values)
                for task in generalize.POSITION_TASKS for pos, values in (("randomized", randomized[task]), ("rope", rope), ("nope", nope))}

    rope, nope = [0.6, 0.61, 0.59], [0.55, 0.56, 0.54]
    assert generalize.randomized_wins(positions({"reverse_string": [0.7, 0.71, 0.72], "parity_check": [0.7, 0.69, 0.71]}, rope, nope)).holds
    best_of = positions({"reverse_string": [0.724, 0.696, 0.60], "parity_check": [0.7, 0.69, 0.71]}, [0.674, 0.544, 0.679], nope)
    assert not generalize.randomized_wins(best_of).holds  # the ninth edition's figures: best of seeds cleared it, the interval does not
    id_alike = {"parity_check randomized": three("r", "id_exact_match", [0.99, 0.98, 1.0]), "parity_check rope": three("p", "id_exact_match", [0.98, 0.99, 0.97])}
    assert generalize.randomized_id(id_alike).holds
    rope_add = three("rope", "ood_exact_match", [0.0, 0.02, 0.01])
    assert generalize.abacus_wins({"rope": rope_add, "abacus": three("abacus", "ood_exact_match", [0.3, 0.35, 0.4])}).holds
    assert not generalize.abacus_wins({"rope": rope_add, "abacus": three("abacus", "ood_exact_match", [0.3, 0.05, 0.4])}).holds


def test_chomsky_rules_read_the_mean_length_score_with_an_interval() -> None:
    winner = three("lstm", "ood_length_score", [0.99, 1.0, 0.98])
    assert chomsky.winner_and_losers({"lstm": winner, "transformer": three("t", "ood_length_score", [0.5, 0.52, 0.51])}).holds
    assert not chomsky.winner_and_losers({"lstm": winner, "transformer": three("t", "ood_length_score", [0.5, 0.93, 0.51])}).holds
    assert not chomsky.winner_only({"lstm": three("lstm", "ood_length_score", [0.6, 0.95, 0.99])}).holds  # the best seed no longer counts
    assert chomsky.at_chance({"transformer": three("t", "ood_length_score", [0.5, 0.51, 0.49])}).holds
    assert not chomsky.at_chance({"transformer": three("t", "ood_length_score", [0.5, 0.7, 0.49])}).holds
    keys = {c.key: c for c in chomsky.claims(False)}
    assert keys["regular:even_pairs"].winner_only and keys["regular:chance"].role == "negative control"
    assert {a.steps for a in keys["context_free:stack_manipulation"].arms} == {4000}


def test_facts_rules_and_controls(tmp_path: Path) -> None:
    assert facts.reversal({"m": three("m", "ood_exact_match", [0.01, 0.02, 0.0])}, 0.1, 0.01).holds
    assert not facts.reversal({"m": three("m", "ood_exact_match", [0.01, 0.3, 0.0])}, 0.1, 0.01).holds
    assert facts.answered({"m": three("m", "ood_exact_match", [1.0, 0.99, 1.0])}).holds
    same = {"held": three("held", "id_exact_match", [1.0, 1.0, 0.99]), "both": three("both", "ood_exact_match", [1.0, 0.99, 1.0])}
    assert facts.forward_alike(same).holds
    assert not facts.forward_alike({**same, "both": three("both", "ood_exact_match", [0.8, 0.85, 0.8])}).holds


def test_shortcut_effects_net_of_the_no_cue_run() -> None:
    def cue_figures(drops: dict[str, float], baseline: float) -> dict[str, ArmResult]:
        out = {"no cue": result_of("no cue", [seed(s, id_exact_match=0.98, ood_exact_match=0.98 - baseline) for s in range(3)])}
        for label, drop in drops.items():
            out[label] = result_of(label, [seed(s, id_exact_match=0.99, ood_exact_match=0.99 - drop - 0.01 * s) for s in range(3)])
        return out

    growing = cue_figures({"rho=0.5": 0.05, "rho=0.8": 0.2, "rho=0.95": 0.35, "rho=1": 0.5}, baseline=0.05)
    assert shortcuts.monotone(growing).holds and shortcuts.size(growing).holds and shortcuts.uninformative(growing).holds
    small = cue_figures({"rho=0.5": 0.3, "rho=0.8": 0.32, "rho=0.95": 0.34, "rho=1": 0.36}, baseline=0.3)
    assert not shortcuts.size(small).holds  # 0.36 raw, 0.06 net of the baseline's 0.3
    assert not shortcuts.uninformative(cue_figures({"rho=0.5": 0.3}, baseline=0.0)).holds
    assert not shortcuts.monotone(cue_figures({"rho=0.5": 0.3, "rho=0.8": 0.3, "rho=0.95": 0.3, "rho=1": 0.3}, baseline=0.0)).holds


def test_interpolation_rules_and_the_trained_regimes_control() -> None:
    def model(between: float, beyond: float, short: float = 1.0, long: float = 1.0) -> dict[str, ArmResult]:
        detail = {"ood": {"10": {"n": 50, "exact_match": between}, "30": {"n": 100, "exact_match": beyond}},
                  "id": {"3": {"n": 50, "exact_match": short}, "20": {"n": 50, "exact_match": long}}}
        return {"m": result_of("m", [seed(s, by_length_detail=detail) for s in range(3)])}

    assert interpolation.regimes(model(0.7, 0.1), ((9, 16), (25, 32))).holds
    assert not interpolation.regimes(model(0.3, 0.2), ((9, 16), (25, 32))).holds
    assert interpolation.trained_alike(model(0.7, 0.1, 1.0, 0.97), ((1, 8), (17, 24))).holds
    assert not interpolation.trained_alike(model(0.7, 0.1, 1.0, 0.8), ((1, 8), (17, 24))).holds


def test_grokking_rules_read_the_shipped_metric_history() -> None:
    def arm_of(label: str, memorized: int, generalized: int | None, peak: float = 1.0) -> ArmResult:
        rows = [{"seed": 0, "step": s, "train_exact_match": 1.0 if s >= memorized else 0.5,
                 "id_exact_match": peak if generalized is not None and s >= generalized else 0.1,
                 "ood_exact_match": peak if generalized is not None and s >= generalized else 0.1} for s in range(100, 1001, 100)]
        seeds = [seed(i, train_exact_match=1.0, history=rows) for i in range(3)]
        return ArmResult(engine.Arm(label, "c", engine.Build.of("x:y"), ()), seeds,
                         [{"steps": 1000, "data": {"sizes": {"train": 10, "validation": 5, "test": 95}}} for _ in seeds], grokking.MEMORIZE)

    assert grokking.delay({"f=0.5": arm_of("a", 100, 600)}).holds and not grokking.delay({"f=0.5": arm_of("b", 100, 400)}).holds
    assert not grokking.delay({"f=0.5": arm_of("c", 100, None)}).holds
    assert grokking.fraction({"f=0.3": arm_of("d", 100, None), "f=0.5": arm_of("e", 100, 800), "f=0.7": arm_of("f", 100, 300)}).holds
    assert not grokking.fraction({"f=0.3": arm_of("g", 100, 300), "f=0.5": arm_of("h", 100, 800), "f=0.7": arm_of("i", 100, 900)}).holds
    assert grokking.never({"f=0.3": arm_of("j", 100, None)}).holds and not grokking.never({"f=0.3": arm_of("k", 100, 500)}).holds
    assert grokking.no_signal({"n": arm_of("l", 100, 500, peak=0.1)}).holds and not grokking.no_signal({"n": arm_of("m", 100, 500)}).holds


def test_authors_rules_and_the_arbitrary_grouping_control() -> None:
    pair = lambda cited, fresh: {"cited": three("cited", "ood_exact_match", cited), "fresh": three("fresh", "ood_exact_match", fresh)}  # noqa: E731
    assert authors.same_score(pair([0.4, 0.42, 0.41], [0.43, 0.44, 0.42])).holds
    assert not authors.same_score(pair([0.4, 0.42, 0.41], [0.47, 0.5, 0.48])).holds
    cells = lambda zero, some: {"ood": {"0": {"n": 700, "exact_match": zero}, "1": {"n": 300, "exact_match": some}}}  # noqa: E731
    assert authors.unseen_local({"m": result_of("m", [seed(s, by_novelty=cells(0.9, 0.7)) for s in range(3)])}).holds
    assert not authors.unseen_local({"m": result_of("m", [seed(s, by_novelty=cells(0.9, 0.85)) for s in range(3)])}).holds
    even = {"m": result_of("m", [seed(s, outcomes={"ood": "10" * 200}) for s in range(3)])}
    assert not authors.arbitrary_groups(even).holds  # even positions all right, odd all wrong: the grouping predicts
    mixed = {"m": result_of("m", [seed(s, outcomes={"ood": "1100" * 100}) for s in range(3)])}
    assert authors.arbitrary_groups(mixed).holds
    diverse = lambda r, d: {"random train set": three("r", "ood_exact_match", r), "diverse train set": three("d", "ood_exact_match", d)}  # noqa: E731
    assert authors.diverse_at_least(diverse([0.14, 0.15, 0.13], [0.2, 0.21, 0.19])).holds
    assert not authors.diverse_at_least(diverse([0.14, 0.15, 0.13], [0.1, 0.3, 0.12])).holds
    assert not authors.diverse_at_least(diverse([0.0, 0.01, 0.0], [0.02, 0.03, 0.02])).holds  # neither solves anything


def test_the_reversal_builder_scores_one_model_on_three_parts() -> None:
    from validity_axes import builders
    from gengap.splits.facts import query_kind, reversed_fact

    world = {"n_entities": 12, "n_relations": 2}
    parts = {test: builders.reversal(world, 0.5, "fact_reverse-direction", test=test) for test in ("reversed", "both", "forward")}
    assert all(p.train == parts["reversed"].train and p.validation == parts["reversed"].validation for p in parts.values())
    train_ids = {r["id"] for r in parts["reversed"].train}
    assert not {r["id"] for r in parts["reversed"].test} & train_ids
    assert {r["id"] for r in parts["both"].test} <= train_ids and {query_kind(r) for r in parts["both"].test} == {"reverse"}
    held = {reversed_fact(r) for r in parts["reversed"].test}
    assert {query_kind(r) for r in parts["forward"].test} == {"lookup"} and not {reversed_fact(r) for r in parts["forward"].test} & held


# -- the GPU protocols keep their specs -----------------------------------------------------------


def test_gpu_protocols_hold_what_only_a_gpu_decides() -> None:
    import gpu_protocol

    assert gpu_protocol.ENGINE_PROTOCOLS == tuple(gpu.GPU_PROTOCOLS)
    deferred = {d["command"] for d in gpu_protocol.DEFERRED}
    assert all(f"python benchmarks/gpu_protocol.py --protocol {name} --out runs/{name}" in deferred for name in gpu_protocol.ENGINE_PROTOCOLS)
    (diversity,) = gpu.GPU_PROTOCOLS["rules"](False)
    assert (diversity.key, diversity.arms[0].preset) == ("diversity", "small")
    for claim in gpu.GPU_PROTOCOLS["cfq"](False):
        assert claim.learned == Learned(threshold=0.95, extra=0.25, over="records")
    tape = gpu.GPU_PROTOCOLS["duplicate-string"](False)[0]
    assert all(a.seeds == (0, 1, 2) and a.steps == 40000 for a in tape.arms)  # every arm the winner's seeds (edition 10)


def test_cfq_and_looped_rules() -> None:
    def figures(ems: dict[str, tuple[float, float]]) -> dict[str, ArmResult]:
        return {label: result_of(label, [seed(ood_exact_match=em)], divergence={"compound_divergence": dc}) for label, (dc, em) in ems.items()}

    maximal = {"cfq-random": (0.29, 0.9), "cfq-mcd1": (0.96, 0.3), "cfq-mcd2": (0.95, 0.2), "cfq-mcd3": (0.97, 0.4)}
    assert cfq.mcd_drop(figures(maximal)).holds
    graded = {**maximal, "cfq-mcd_dc0450": (0.45, 0.8), "cfq-mcd_dc0600": (0.6, 0.7), "cfq-mcd_dc0750": (0.75, 0.5)}
    assert cfq.divergence(figures(graded)).holds
    looped_of = lambda scores: result_of("looped", [seed(by_iterations={str(k): {"ood_length_score": v} for k, v in scores.items()})])  # noqa: E731
    transformer = result_of("transformer", [seed(ood_length_score=0.5)])
    assert looped.more_iterations({"looped": looped_of({8: 0.6, 16: 0.95, 32: 0.97}), "transformer": transformer}).holds
    assert not looped.more_iterations({"looped": looped_of({8: 0.95, 16: 0.96, 32: 0.97}), "transformer": transformer}).holds
    assert rules.diversity({f"N={n}": result_of(f"N={n}", [seed(ood_exact_match=v)]) for n, v in zip((4, 12, 36, 78), (0.1, 0.15, 0.3, 0.4))}).holds


# -- the document, the page, the evidence ------------------------------------------------------------


def _doc(axis: str, verdict: str, role: str = "claim", **extra: Any) -> dict[str, Any]:
    claim = {"axis": axis, "key": f"{axis}-claim", "title": f"{axis} title", "role": role, "tiers": ["full"], "setup": "", "rule": "r",
             "level": 0.95, "learned_rule": "l", "published": "p", "previous": "", "winner_only": False, "verdict": verdict,
             "rule_verdict": verdict, "stability": "stable", "left_out": {"0": verdict}, "resolution": None, "premise": {},
             "rule_outcome": verdict == "holds", "not_learned": [], "vacuous": [], "measured": "m", "details": {"rows": [{"a": 1.0, "b": None}]},
             "arms": [{"label": "win", "config": "c", "settings": {}, "runs": [f"{axis}/run"], "seeds": [0], "learned_seeds": [0], "learned": True,
                       "steps": [10], "stopped_at": [10], "learned_at": [None], "selected_at": [8], "id_selected": [1.0], "id": [1.0],
                       "id_records": [1.0], "ood": [0.0], "score": [0.5], "cpu_seconds": 6.0}],
             "cpu_minutes": 0.1, **extra}
    ctx = {"command": "c", "machine": "m", "commit": "abc", "date": "d", "wall_minutes": 1.0, "runs": 1, "reused": 0, "axes": [axis],
           "cpu_minutes": {axis: 0.1}}
    return {"edition": engine.EDITION, "tier": "full", "claims": [claim], "context": {axis: ctx}, "evidence": {f"{axis}/run": "0" * 64},
            "run_cpu_seconds": {f"{axis}/run": 6.0}}


def test_merging_one_axis_keeps_the_others_and_the_page_counts_them_apart() -> None:
    first = engine.merge(None, _doc("lengths", "holds", vacuous=["loser"]), AXES)
    both = engine.merge(first, _doc("compositional", "not testable"), AXES)
    assert [c["axis"] for c in both["claims"]] == ["compositional", "lengths"] and set(both["evidence"]) == {"lengths/run", "compositional/run"}
    again = engine.merge(both, _doc("lengths", "does not hold"), AXES)
    assert [c["verdict"] for c in again["claims"]] == ["not testable", "does not hold"]
    page = render(both, {"lengths": "Lengths"}, [{"what": "w", "why": "y", "command": "cmd"}], ["caps raised"], {"lengths-claim": [{"edition": 9, "verdict": "holds"}]})
    assert "**holds**; vacuous for loser (not learned)" in page and "**not testable**" in page and "`cmd`" in page
    assert "2 claims: 1 holds (winner only / vacuous), 1 not testable." in page
    assert f"**What changed from edition {engine.EDITION - 1}**" in page and "- caps raised" in page
    assert "| lengths-claim | 2 | 9:H 10:H | 0 |" in page  # the edition history
    controls = counts_line([_doc("a", "holds")["claims"][0], _doc("b", "does not hold", role="negative control")["claims"][0]])
    assert "1 controls: 0 behaved" in controls and "1 claims: 1 holds." in controls


def test_evidence_is_canonical_and_checked_against_its_sha256(tmp_path: Path) -> None:
    record = {"format": engine.EVIDENCE_FORMAT, "run": "c/x-seed0", "results": {}, "seed": {"seed": 0}, "history": [], "timing": {}}
    shipped = engine.write_evidence(tmp_path, {"c/x-seed0": record})
    path = tmp_path / engine.evidence_file("c/x-seed0")
    assert path.name == "c__x-seed0.json.gz" and engine.evidence_bytes(record) == path.read_bytes()  # the same record, the same bytes
    assert engine.read_evidence(tmp_path, "c/x-seed0", shipped["c/x-seed0"]) == record
    path.write_bytes(gzip.compress(json.dumps({**record, "seed": {"seed": 1}}).encode()))
    with pytest.raises(engine.SpecError, match="does not match the sha256"):
        engine.read_evidence(tmp_path, "c/x-seed0", shipped["c/x-seed0"])
    with pytest.raises(engine.SpecError, match="missing"):
        engine.read_evidence(tmp_path, "c/other", "0" * 64)


def test_a_tiny_edition_runs_ships_its_evidence_and_recomputes_byte_for_byte(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import validity

    validity.main(["--smoke", "--axis", "facts", "--out", str(tmp_path), "--workers", "1"])
    document = json.loads((tmp_path / "validity.json").read_text())
    assert [c["key"] for c in document["claims"]] == ["reversal", "reversal:both", "reversal:forward"]
    assert all(c["verdict"] in engine.VERDICTS and c["stability"] in ("stable", "unstable", "n/a") for c in document["claims"])
    assert len(document["evidence"]) == 3 * 3 and all(len(sha) == 64 for sha in document["evidence"].values())
    shipped = sorted(p.name for p in (tmp_path / engine.EVIDENCE).iterdir())
    assert shipped == sorted(engine.evidence_file(n) for n in document["evidence"])
    record = engine.read_evidence(tmp_path / engine.EVIDENCE, next(iter(document["evidence"])), next(iter(document["evidence"].values())))
    assert record["history"] and "outcomes" in record["seed"] and "mistakes" not in record["seed"]
    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        validity.main(["--smoke", "--out", str(tmp_path), "--recompute"])
    assert done.value.code == 0 and "validity.md: identical" in capsys.readouterr().out
    # the run directories are not needed: remove them and recompute again
    import shutil

    shutil.rmtree(tmp_path / "validity-runs")
    with pytest.raises(SystemExit) as done:
        validity.main(["--smoke", "--out", str(tmp_path), "--recompute"])
    assert done.value.code == 0
    # an altered page is found
    page = tmp_path / "validity.md"
    page.write_text(page.read_text().replace("**", "__", 1))
    with pytest.raises(SystemExit) as done:
        validity.main(["--smoke", "--out", str(tmp_path), "--recompute"])
    assert done.value.code == 1 and "DIFFERS" in capsys.readouterr().out


def test_an_interrupted_protocol_continues_from_committed_evidence_without_its_run_directories(tmp_path: Path) -> None:
    import shutil

    import validity

    first = tmp_path / "first"
    validity.main(["--smoke", "--axis", "facts", "--out", str(first), "--workers", "1"])
    document = json.loads((first / "validity.json").read_text())
    # a fresh clone: the committed page, JSON and evidence, no run directories; one run's evidence was never written
    clone = tmp_path / "clone"
    shutil.copytree(first, clone, ignore=shutil.ignore_patterns("validity-runs"))
    lost = sorted(document["evidence"])[0]
    (clone / engine.EVIDENCE / engine.evidence_file(lost)).unlink()
    kept = {n: (clone / engine.EVIDENCE / engine.evidence_file(n)).read_bytes() for n in document["evidence"] if n != lost}
    validity.main(["--smoke", "--axis", "facts", "--out", str(clone), "--workers", "1"])
    again = json.loads((clone / "validity.json").read_text())
    ctx = again["context"]["facts"]
    assert (ctx["runs"], ctx["reused"], ctx["reused_from_evidence"]) == (9, 8, 8)  # only the lost run trained again
    assert sorted((clone / "validity-runs").rglob("results.json")) == [clone / "validity-runs" / lost / "results.json"]
    assert all((clone / engine.EVIDENCE / engine.evidence_file(n)).read_bytes() == data for n, data in kept.items())
    assert {n: sha for n, sha in again["evidence"].items() if n != lost} == {n: sha for n, sha in document["evidence"].items() if n != lost}
    before = engine.read_evidence(first / engine.EVIDENCE, lost, document["evidence"][lost])
    after = engine.read_evidence(clone / engine.EVIDENCE, lost, again["evidence"][lost])
    clocks = ("train_seconds", "tokens_per_s")
    untimed = lambda r: {**r, "timing": None, "seed": {k: v for k, v in r["seed"].items() if k not in clocks},  # noqa: E731
                         "history": [{k: v for k, v in row.items() if k not in clocks} for row in r["history"]]}
    assert untimed(after) == untimed(before)  # retrained: the same figures and history, only the clocks differ
    assert [c["verdict"] for c in again["claims"]] == [c["verdict"] for c in document["claims"]]
    assert "8 of them from their committed evidence files" in (clone / "validity.md").read_text()
    assert sum(ctx["run_machines"].values()) == 9 and all(m != "not recorded" for m in ctx["run_machines"])  # each run names its CPU
    # a file that is not the run's evidence is refused in one line, nothing trained
    (clone / engine.EVIDENCE / engine.evidence_file(lost)).write_bytes(b"not gzip")
    shutil.rmtree(clone / "validity-runs")
    with pytest.raises(SystemExit, match="is not the evidence of run"):
        validity.main(["--smoke", "--axis", "facts", "--out", str(clone), "--workers", "1"])


def test_the_protocol_refuses_an_out_holding_a_page_it_did_not_write(tmp_path: Path) -> None:
    import validity

    (tmp_path / "validity.md").write_text("my notes\n")
    with pytest.raises(SystemExit, match="without validity.json"):
        validity.main(["--smoke", "--axis", "facts", "--out", str(tmp_path), "--workers", "1"])
    assert (tmp_path / "validity.md").read_text() == "my notes\n"
    with pytest.raises(SystemExit, match="not a folder"):
        validity.main(["--smoke", "--axis", "facts", "--out", "/dev/null"])


def test_runs_are_counted_by_the_commit_they_were_trained_at_and_once_per_axis() -> None:
    results = {"a": {"commit": "abc1234"}, "b": {"commit": "abc1234"}, "c": {}, "d": {"commit": "def5678+changes"}}
    assert engine.run_commits(results) == {"abc1234": 2, "def5678+changes": 1, "not recorded": 1}
    assert engine.run_cpu_minutes({"a": {"cpu_seconds": 60.0}, "b": {"cpu_seconds": 120.0}}, ["a", "a", "b"]) == pytest.approx(3.0)
    assert engine.code_commit() != "unknown"
