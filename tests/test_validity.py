"""The validity protocol's engine and its claim specs: the three verdicts, the learned rule, each
axis's rule on constructed figures (one input where it holds, one where it fails), the plan,
merging one axis into the document, and reduced runs of the pipeline."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import validity_engine as engine  # noqa: E402
from validity_axes import AXES, authors, cfq, chomsky, compositional, facts, generalize, gpu, grokking, interpolation, lengths, looped, rules, shortcuts  # noqa: E402
from validity_axes.common import PREVIOUS  # noqa: E402
from validity_engine import ArmResult, Claim, Decision, Learned  # noqa: E402
from validity_report import render  # noqa: E402


def seed(number: int = 0, learned: bool = True, **figures: Any) -> dict[str, Any]:
    base = {"seed": number, "converged": learned, "id_exact_match": 1.0, "id_length_mean_exact_match": 1.0, "ood_exact_match": 0.0,
            "ood_length_score": 0.5, "stopped_at": 100, "learned_at": 80 if learned else None}
    return {**base, **figures}


def result_of(label: str, seeds: list[dict[str, Any]], rule: Learned = Learned(), **results: Any) -> ArmResult:
    arm = engine.Arm(label, f"config-{label}", engine.Build.of("x:y"), ())
    return ArmResult(arm, seeds, [{"per_seed": [s], **results} for s in seeds], rule)


def claim_of(decide: Any, labels: tuple[str, ...], losing: tuple[str, ...] = (), optional: tuple[str, ...] = ()) -> Claim:
    arms = tuple(engine.Arm(label, f"config-{label}", engine.Build.of("x:y"), ()) for label in labels)
    return Claim("t", "k", "title", arms, "rule", "published", decide, losing=losing, optional=optional)


# -- the engine -------------------------------------------------------------------------------


def test_frozen_specs_round_trip() -> None:
    value = {"b": [1, 2], "a": {"c": (3, 4), "d": "x"}}
    assert engine.thawed(engine.frozen(value)) == {"a": {"c": [3, 4], "d": "x"}, "b": [1, 2]}
    assert hash(engine.frozen(value)) == hash(engine.frozen({"a": {"d": "x", "c": [3, 4]}, "b": (1, 2)}))


def test_an_arm_learns_when_half_its_seeds_met_the_rule() -> None:
    assert result_of("a", [seed(0, True), seed(1, False)]).learned
    assert not result_of("a", [seed(0, False), seed(1, False)]).learned
    assert not result_of("a", [seed(0, True), seed(1, False), seed(2, False)]).learned
    mixed = result_of("a", [seed(0, True, ood_exact_match=0.2), seed(1, False, ood_exact_match=0.9)])
    assert mixed.ood == pytest.approx(0.2)  # figures of the learned seeds only
    assert mixed.mean("ood_exact_match", learned_only=False) == pytest.approx(0.55)
    fixed = Learned(threshold=0.95, stop=False)
    assert result_of("a", [seed(0, False, id_length_mean_exact_match=0.96)], fixed).learned  # the final ID decides
    assert not result_of("a", [seed(0, True, id_length_mean_exact_match=0.9)], fixed).learned
    memorized = Learned(threshold=0.99, stop=False, metric="train")
    assert result_of("a", [seed(0, False, train_exact_match=1.0, id_length_mean_exact_match=0.1)], memorized).learned


def test_three_verdicts_and_the_vacuous_mark() -> None:
    holds = lambda figures: Decision(True, "m")  # noqa: E731
    fails = lambda figures: Decision(False, "m")  # noqa: E731
    learned, unlearned = [seed(0, True)], [seed(0, False)]
    figures = {"win": result_of("win", learned), "lose": result_of("lose", learned)}
    assert engine.judge(claim_of(holds, ("win", "lose"), losing=("lose",)), figures)["verdict"] == "holds"
    assert engine.judge(claim_of(fails, ("win", "lose"), losing=("lose",)), figures)["verdict"] == "does not hold"
    judged = engine.judge(claim_of(holds, ("win", "lose")), {"win": result_of("win", unlearned), "lose": result_of("lose", learned)})
    assert (judged["verdict"], judged["not_learned"]) == ("not learned", ["win"])
    vacuous = engine.judge(claim_of(holds, ("win", "lose"), losing=("lose",)), {"win": result_of("win", learned), "lose": result_of("lose", unlearned)})
    assert (vacuous["verdict"], vacuous["vacuous"]) == ("holds", ["lose"])
    optional = engine.judge(claim_of(fails, ("win", "extra"), optional=("extra",)), {"win": result_of("win", learned), "extra": result_of("extra", unlearned)})
    assert (optional["verdict"], optional["vacuous"]) == ("does not hold", [])
    premise = lambda figures: Decision(True, "m", unmet=("win (premise)",))  # noqa: E731  a premise the rule states, not met
    unmet = engine.judge(claim_of(premise, ("win", "lose")), figures)
    assert (unmet["verdict"], unmet["not_learned"], unmet["rule_outcome"]) == ("not learned", ["win (premise)"], True)


def test_the_plan_trains_an_arm_two_claims_share_once() -> None:
    claims = lengths.claims(False)
    runs = engine.plan(claims)
    assert runs[("gap:reverse_string", "transformer", 0)] is runs[("positions", "rope", 0)]
    assert runs[("gap:parity_check", "transformer", 1)] is runs[("traces", "answer only", 1)]
    assert runs[("positions", "nope", 0)] is not runs[("positions", "rope", 0)]
    settings = engine.thawed(runs[("gap:addition", "transformer", 0)].settings)
    assert (settings["until_id"], settings["until_extra"]) == (0.95, 0.25)
    names = [run.name for run in set(runs.values())]
    assert len(names) == len(set(names))


def test_every_axis_states_its_rules_and_published_figures() -> None:
    for axis in AXES:
        module = __import__(f"validity_axes.{axis}", fromlist=["claims"])
        for smoke in (True, False):
            claims = module.claims(smoke)
            assert claims and all(c.axis == axis and c.rule and c.published and c.arms for c in claims)
            for claim in claims:
                labels = [a.label for a in claim.arms]
                assert len(labels) == len(set(labels))
                assert set(claim.losing) | set(claim.optional) <= set(labels)
                assert claim.needed(), claim.key  # some arm must learn, or the claim could never be "not learned"


def test_merging_one_axis_keeps_the_others_and_the_page_renders_them() -> None:
    def doc(axis: str, verdict: str) -> dict[str, Any]:
        claim = {"axis": axis, "key": f"{axis}-claim", "title": f"{axis} title", "setup": "", "rule": "r", "learned_rule": "l",
                 "published": "p", "previous": "", "verdict": verdict, "rule_outcome": verdict == "holds", "not_learned": [],
                 "vacuous": ["loser"] if verdict == "holds" else [], "measured": "m", "details": {"rows": [{"a": 1.0, "b": None}]},
                 "arms": [{"label": "win", "config": "c", "settings": {}, "seeds": [0], "learned_seeds": [0], "learned": True,
                           "stopped_at": [10], "learned_at": [8], "id": [1.0], "ood": [0.0], "score": [0.5], "cpu_seconds": 6.0}],
                 "cpu_minutes": 0.1}
        ctx = {"command": "c", "machine": "m", "commit": "abc", "date": "d", "wall_minutes": 1.0, "runs": 1, "reused": 0,
               "axes": [axis], "cpu_minutes": {axis: 0.1}}
        return {"edition": engine.EDITION, "claims": [claim], "context": {axis: ctx}}

    first = engine.merge(None, doc("lengths", "holds"), AXES)
    both = engine.merge(first, doc("compositional", "not learned"), AXES)
    assert [c["axis"] for c in both["claims"]] == ["compositional", "lengths"]
    again = engine.merge(both, doc("lengths", "does not hold"), AXES)
    assert [c["verdict"] for c in again["claims"]] == ["not learned", "does not hold"]
    page = render(both, {"lengths": "Lengths"}, [{"what": "w", "why": "y", "command": "cmd"}], None)
    assert "**holds**; vacuous for loser (not learned)" in page and "**not learned**" in page
    assert "## Lengths" in page and "`cmd`" in page and "| a | b |" in page
    assert "2 claims: 1 hold, 0 do not hold, 1 not learned." in page
    noted = render(both, {}, [], None, ["caps raised"])
    assert f"**What changed from edition {engine.EDITION - 1}**" in noted and "- caps raised" in noted and "What changed" not in page


def test_the_arm_table_shows_id_per_length_and_over_records() -> None:
    """A long-tailed length distribution separates the two ID figures: the page shows both."""
    from validity_report import arm_table

    arm = result_of("a", [seed(0, False, id_exact_match=0.85, id_length_mean_exact_match=0.4857, ood_exact_match=0.8)])
    summary = arm.summary()
    assert (summary["id"], summary["id_records"]) == ([0.4857], [0.85])
    header, _, row = arm_table({"arms": [summary]})
    assert header == "| arm | config | seeds learned | stopped at (learned at) | ID per length | ID exact match | OOD exact match | length score |"
    assert row == "| a | config-a | 0/1 | 100 | 0.486 | 0.850 | 0.800 | 0.500 |"
    older = {k: v for k, v in summary.items() if k != "id_records"}  # a document written before the column: rendered as it was
    assert "ID exact match" not in arm_table({"arms": [older]})[0] and arm_table({"arms": [older]})[2].count("|") == 8


# -- each axis's rule on constructed figures ---------------------------------------------------


def test_divergence_needs_a_significant_falling_series() -> None:
    def figures(ems: list[float]) -> dict[str, ArmResult]:
        dcs = [0.0, 0.15, 0.3, 0.45, 0.6, 0.75]
        return {f"c{i}": result_of(f"c{i}", [seed(0, ood_exact_match=em), seed(1, ood_exact_match=em - 0.01)],
                                   divergence={"compound_divergence": dc}) for i, (dc, em) in enumerate(zip(dcs, ems))}

    assert compositional.divergence(figures([0.97, 0.9, 0.7, 0.5, 0.3, 0.1])).holds
    assert not compositional.divergence(figures([0.97, 0.1, 0.9, 0.3, 0.7, 0.5])).holds  # no trend
    assert not compositional.divergence(figures([0.1, 0.3, 0.5, 0.7, 0.9, 0.97])).holds  # rising


def test_novelty_is_judged_within_each_split() -> None:
    def split(zero: float, some: float, n0: int = 100, n1: int = 100) -> ArmResult:
        cells = {"ood": {"0": {"n": n0, "exact_match": zero}, "1": {"n": n1 // 2, "exact_match": some}, "3+": {"n": n1 - n1 // 2, "exact_match": some}}}
        return result_of("s", [seed(0, by_novelty=cells)])

    good = {f"s{i}": split(0.9, 0.5) for i in range(3)}
    assert compositional.novelty(good).holds
    mixed = {"a": split(0.9, 0.5), "b": split(0.9, 0.5), "c": split(0.5, 0.6)}  # one split the other way round
    assert not compositional.novelty(mixed).holds
    thin = {"a": split(0.9, 0.5), "b": split(0.9, 0.5), "c": split(0.9, 0.5, n0=5)}  # only two splits with enough records
    assert not compositional.novelty(thin).holds


def test_length_rules() -> None:
    assert lengths.gap({"m": result_of("m", [seed(ood_exact_match=0.2, id_length_mean_exact_match=0.97)])}).holds
    assert not lengths.gap({"m": result_of("m", [seed(ood_exact_match=0.85, id_length_mean_exact_match=0.97)])}).holds
    learned_low = {"rope": result_of("rope", [seed(ood_exact_match=0.02)]), "nope": result_of("nope", [seed(learned=False, ood_exact_match=0.9)])}
    assert lengths.positions(learned_low).holds  # an encoding that did not learn is not counted (vacuous)
    assert not lengths.positions({**learned_low, "alibi": result_of("alibi", [seed(ood_exact_match=0.6)])}).holds
    plain = result_of("answer only", [seed(ood_exact_match=0.5)])
    assert lengths.traces({"answer only": plain, "fine trace": result_of("fine trace", [seed(ood_answer_exact_match=0.7)])}).holds
    assert not lengths.traces({"answer only": plain, "fine trace": result_of("fine trace", [seed(ood_answer_exact_match=0.55)])}).holds


def test_generalize_rules() -> None:
    plain, fine = result_of("answer only", [seed(ood_exact_match=0.55)]), result_of("fine trace", [seed(ood_answer_exact_match=0.5)])
    def inductive(value: float) -> dict[str, ArmResult]:
        return {"answer only": plain, "fine trace": fine, "inductive trace": result_of("inductive trace", [seed(ood_answer_exact_match=value)])}
    assert generalize.inductive_wins(inductive(0.66)).holds  # 0.11 above the better of 0.55 and 0.5
    assert not generalize.inductive_wins(inductive(0.6)).holds
    louder = {**inductive(0.66), "fine trace": result_of("fine trace", [seed(ood_answer_exact_match=0.6)])}
    assert not generalize.inductive_wins(louder).holds  # beating the answer-only model alone is not enough

    def positions(randomized: dict[str, float], rope: float = 0.6, nope: float = 0.55) -> dict[str, ArmResult]:
        out = {}
        for task in generalize.POSITION_TASKS:
            for pos, value in (("randomized", randomized[task]), ("rope", rope), ("nope", nope)):
                out[f"{task} {pos}"] = result_of(f"{task} {pos}", [seed(ood_length_score=value)])
        return out
    assert generalize.randomized_wins(positions({"reverse_string": 0.7, "parity_check": 0.66})).holds
    assert not generalize.randomized_wins(positions({"reverse_string": 0.7, "parity_check": 0.62})).holds  # one task short
    assert not generalize.randomized_wins(positions({"reverse_string": 0.7, "parity_check": 0.7}, nope=0.68)).holds  # NoPE as good
    best = positions({"reverse_string": 0.7, "parity_check": 0.7})
    best["parity_check randomized"] = result_of("p", [seed(0, ood_length_score=0.5), seed(1, ood_length_score=0.7)])
    assert generalize.randomized_wins(best).holds  # the best learned seed counts

    rope = result_of("rope", [seed(ood_exact_match=0.0), seed(1, ood_exact_match=0.02)])
    assert generalize.abacus_wins({"rope": rope, "abacus": result_of("abacus", [seed(ood_exact_match=0.3)])}).holds
    assert not generalize.abacus_wins({"rope": rope, "abacus": result_of("abacus", [seed(ood_exact_match=0.15)])}).holds


def test_generalize_reuses_the_lengths_runs() -> None:
    ours, theirs = engine.plan(generalize.claims(False)), engine.plan(lengths.claims(False))
    assert ours[("inductive", "answer only", 1)].name == theirs[("traces", "answer only", 1)].name
    assert ours[("inductive", "fine trace", 0)].name == theirs[("traces", "fine trace", 0)].name
    assert ours[("randomized", "reverse_string rope", 1)].name == theirs[("positions", "rope", 1)].name
    assert ours[("randomized", "reverse_string nope", 0)].name != theirs[("positions", "nope", 0)].name  # sixth edition: cap 16,000
    assert ours[("randomized", "parity_check rope", 0)].name == theirs[("gap:parity_check", "transformer", 0)].name
    assert ours[("abacus", "rope", 1)].name != theirs[("gap:addition", "transformer", 1)].name  # little-endian operands: a split of its own
    new = {run.name for run in ours.values()} - {run.name for run in theirs.values()}
    assert len(new) == 14  # 2 seeds each: inductive, randomized on both tasks, NoPE parity and reverse_string (16,000 steps), abacus, RoPE on little-endian addition


def test_chomsky_rules() -> None:
    winner = result_of("lstm", [seed(ood_length_score=0.99)])
    assert chomsky.winner_and_losers({"lstm": winner, "transformer": result_of("t", [seed(ood_length_score=0.5)])}).holds
    assert not chomsky.winner_and_losers({"lstm": winner, "transformer": result_of("t", [seed(ood_length_score=0.93)])}).holds
    assert not chomsky.winner_and_losers({"lstm": result_of("l", [seed(ood_length_score=0.8)]), "transformer": result_of("t", [seed()])}).holds
    best = result_of("lstm", [seed(0, ood_length_score=0.6), seed(1, ood_length_score=0.95)])  # the best learned seed counts
    assert chomsky.winner_only({"lstm": best, "transformer": result_of("t", [seed(ood_length_score=0.97)])}).holds
    even = next(c for c in chomsky.claims(False) if c.key == "regular:even_pairs")
    assert even.losing == () and even.optional == ("transformer",)


def test_the_fifth_edition_moves_gpu_scale_claims_and_adds_seeds() -> None:
    """duplicate_string (tape RNN) and the looped claims left the CPU protocol for the GPU protocol
    (the same specs with larger caps and three seeds); sub-minute winners got a third seed; every
    claim shows the previous (fifth) edition's figure."""
    cpu = [c for axis in AXES for c in __import__(f"validity_axes.{axis}", fromlist=["claims"]).claims(False)]
    keys = {c.key for c in cpu}
    assert "context_sensitive:duplicate_string" not in keys and not any(k.startswith("looped:") for k in keys)
    moved = {c.key: c for name in ("looped", "duplicate-string") for c in gpu.GPU_PROTOCOLS[name](False)}
    assert set(moved) == {"looped:prefix_sums", "looped:parity_check", "context_sensitive:duplicate_string"}
    import gpu_protocol

    assert gpu_protocol.ENGINE_PROTOCOLS == tuple(gpu.GPU_PROTOCOLS)  # every GPU protocol has its command
    assert {"python benchmarks/gpu_protocol.py --protocol looped --out runs/looped",
            "python benchmarks/gpu_protocol.py --protocol duplicate-string --out runs/duplicate-string"} <= {d["command"] for d in gpu_protocol.DEFERRED}
    deferred = {d["command"] for d in gpu_protocol.DEFERRED}
    assert all(f"python benchmarks/gpu_protocol.py --protocol {name} --out runs/{name}" in deferred
               for name in gpu_protocol.ENGINE_PROTOCOLS)  # listed on the page
    assert all(c.axis == "gpu" for c in moved.values())
    assert engine.thawed(moved["looped:prefix_sums"].arms[0].train)["steps"] == 20000 and moved["looped:prefix_sums"].arms[0].seeds == (0, 1, 2)
    tape = moved["context_sensitive:duplicate_string"].arms[0]
    assert tape.label == "tape_rnn" and tape.seeds == (0, 1, 2) and engine.thawed(tape.train)["steps"] == 40000
    winners = {c.key: c.arms[0].seeds for c in chomsky.claims(False)}
    assert winners["regular:parity_check"] == (0, 1, 2) and winners["regular:cycle_navigation"] == (0, 1)
    assert all(len(arm.seeds) == 3 for c in shortcuts.claims(False) for arm in c.arms)
    for claim in cpu:
        assert claim.previous == PREVIOUS[claim.key], claim.key  # every CPU claim of this edition was judged in the previous one


def test_the_sixth_edition_changes_only_claims_that_tested_nothing() -> None:
    """The sixth edition's spec changes, fixed before its runs: the caps and data of the claims the
    fifth edition judged not learned, four copies of the contaminating part, every rule unchanged."""
    interp = {c.key: c for c in interpolation.claims(False)}
    caps = {key: engine.thawed(c.arms[0].train)["steps"] for key, c in interp.items()}
    assert caps == {"interpolation:reverse_string": 8000, "interpolation:parity_check": 16000}  # the ninth edition doubled parity's
    randomized = next(c for c in generalize.claims(False) if c.key == "randomized")
    steps = {a.label: engine.thawed(a.train)["steps"] for a in randomized.arms}
    assert steps == {"reverse_string randomized": 16000, "reverse_string nope": 16000, "reverse_string rope": 8000,
                     "parity_check randomized": 8000, "parity_check rope": 8000, "parity_check nope": 8000}
    (diversity,) = rules.claims(False)
    options = dict(engine.thawed(diversity.arms[0].build.args))["options"]
    assert options["train_records"] == 32000 and engine.thawed(diversity.arms[0].train)["steps"] == 10000
    (on_gpu,) = gpu.GPU_PROTOCOLS["rules"](False)  # the claim still not learned on the CPU, at GPU scale
    assert (on_gpu.key, on_gpu.arms[0].preset, on_gpu.arms[0].seeds) == ("diversity", "small", (0, 1, 2))
    assert all(engine.thawed(a.train)["steps"] == 40000 for a in on_gpu.arms)  # the GPU cap beats the CPU's longer caps
    assert on_gpu.arms[0].build == diversity.arms[0].build  # the same split
    (memorized,) = gpu.GPU_PROTOCOLS["memorized"](False)
    assert all(dict(engine.thawed(a.build.args))["contaminate"] == authors.CONTAMINATION_COPIES == 4 for a in memorized.arms)


def test_the_seventh_edition_moves_memorization_to_a_gpu_and_lengthens_only_the_unlearned_rules_arm(monkeypatch: pytest.MonkeyPatch) -> None:
    """fresh:memorized left the CPU protocol (rule and premise unchanged; preset small, every step
    trained, learned on the final ID); the rules arm not learned at 10,000 steps gets 24,000, the
    others keep their sixth-edition runs (the same run names)."""
    assert "fresh:memorized" not in {c.key for c in authors.claims(False)}
    (memorized,) = gpu.GPU_PROTOCOLS["memorized"](False)
    assert (memorized.key, memorized.axis, memorized.learned) == ("fresh:memorized", "gpu", Learned(threshold=0.95, stop=False))
    assert [a.label for a in memorized.arms] == ["contaminated, cited", "contaminated, fresh"]
    assert all((a.preset, a.seeds, engine.thawed(a.train)["steps"]) == ("small", (0, 1, 2), 20000) for a in memorized.arms)
    assert memorized.decide is authors.memorized_drop and memorized.previous == PREVIOUS["fresh:memorized"]
    (diversity,) = rules.claims(False)
    caps = {a.label: engine.thawed(a.train)["steps"] for a in diversity.arms}
    assert caps == {"N=4": 10000, "N=12": 10000, "N=36": 10000, "N=78": 24000}
    assert diversity.learned == rules.RULES_LEARNED == Learned(threshold=0.9, extra=0.25)
    seventh = {key: run.name for key, run in engine.plan([diversity]).items()}
    monkeypatch.setattr(rules, "LONG_CAPS", {})
    sixth = {key: run.name for key, run in engine.plan(rules.claims(False)).items()}
    assert {k for k in sixth if sixth[k] != seventh[k]} == {("diversity", "N=78", 0), ("diversity", "N=78", 1)}


def test_the_eighth_edition_adds_seeds_where_a_claim_rested_on_one_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Grokking seeds 0-2, interpolation seeds 0-2, every generalize arm seeds 0 and 1; the runs of the seeds
    that ran before keep their names (the engine reuses them), and nothing else changes."""
    monkeypatch.setattr(interpolation, "CAPS", {**interpolation.CAPS, "parity_check": 8000})  # the eighth edition's caps
    seeds = {(c.key, a.label): a.seeds for axis in (grokking, interpolation, generalize) for c in axis.claims(False) for a in c.arms}
    assert all(s == (0, 1, 2) for (key, _), s in seeds.items() if key in ("delay", "fraction") or key.startswith("interpolation:"))
    assert all(s == (0, 1) for (key, _), s in seeds.items() if key in ("inductive", "randomized", "abacus"))
    eighth = {run.name for axis in (grokking, interpolation, generalize) for run in engine.plan(axis.claims(False)).values()}
    seventh_seeds = {grokking: (0,), interpolation: (0, 1)}
    seventh = set()
    for axis, old in seventh_seeds.items():
        claims = [replace(c, arms=tuple(replace(a, seeds=old) for a in c.arms)) for c in axis.claims(False)]
        seventh |= {run.name for run in engine.plan(claims).values()}
    assert seventh <= eighth  # the runs already made are reused
    assert len({n for n in eighth if "grok_f" in n} - seventh) == 6 and len({n for n in eighth if "interpolation" in n} - seventh) == 2


def test_the_ninth_edition_doubles_the_caps_of_exactly_the_unlearned_arms_still_learning_at_their_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """Interpolation's parity_check arm (16,000 steps, every seed runs again) and the chomsky transformer on
    stack_manipulation (8,000) are the only arms whose runs change; every other CPU run keeps its eighth-edition name."""
    axes = (interpolation, chomsky)
    ninth = {key: run.name for axis in axes for key, run in engine.plan(axis.claims(False)).items()}
    caps = {(c.key, a.label): engine.thawed(a.train)["steps"] for axis in axes for c in axis.claims(False) for a in c.arms}
    monkeypatch.setattr(interpolation, "CAPS", {**interpolation.CAPS, "parity_check": 8000})
    monkeypatch.setattr(chomsky, "LONG_CAPS", {})
    eighth = {key: run.name for axis in axes for key, run in engine.plan(axis.claims(False)).items()}
    assert ninth.keys() == eighth.keys()
    changed = {key for key in ninth if ninth[key] != eighth[key]}
    assert changed == {("interpolation:parity_check", "transformer", s) for s in (0, 1, 2)} | {("context_free:stack_manipulation", "transformer", 0)}
    assert caps[("interpolation:parity_check", "transformer")] == 16000 and caps[("interpolation:reverse_string", "transformer")] == 8000
    assert caps[("context_free:stack_manipulation", "transformer")] == 8000 and caps[("context_free:stack_manipulation", "lstm")] == 4000
    # the GPU protocol's larger caps still win
    assert {engine.thawed(a.train)["steps"] for c in chomsky.claims_of(("context_free",), False, steps=40000) for a in c.arms} == {40000}


def test_authors_rules() -> None:
    def pair(labels: tuple[str, str], cited: float, fresh: float) -> dict[str, ArmResult]:
        return {labels[0]: result_of(labels[0], [seed(ood_exact_match=cited)]), labels[1]: result_of(labels[1], [seed(ood_exact_match=fresh)])}

    same = ("cited", "fresh")
    assert authors.same_score(pair(same, 0.40, 0.45)).holds
    assert authors.same_score(pair(same, 0.45, 0.40)).holds
    assert not authors.same_score(pair(same, 0.40, 0.47)).holds  # 0.07 apart: beyond the 0.062 of sampling noise
    seen = ("contaminated, cited", "contaminated, fresh")
    assert authors.memorized_drop(pair(seen, 0.95, 0.55)).holds and not authors.memorized_drop(pair(seen, 0.95, 0.55)).unmet
    assert not authors.memorized_drop(pair(seen, 0.7, 0.55)).holds
    assert not authors.memorized_drop(pair(seen, 0.5, 0.95)).holds
    assert authors.memorized_drop(pair(seen, 0.94, 0.2)).unmet  # the model never fit the cited part it trained on: nothing tested
    assert authors.memorized_drop(pair(seen, 0.97, 0.96)).unmet == ()  # fit, and no drop: does not hold


def test_local_structure_and_diverse_rules() -> None:
    def local(zero: tuple[float, int], some: tuple[float, int]) -> dict[str, ArmResult]:
        cells = {"ood": {"0": {"n": zero[1], "exact_match": zero[0]}, "1": {"n": some[1], "exact_match": some[0]}}}
        return {"random train set": result_of("r", [seed(0, by_novelty=cells), seed(1, by_novelty=cells)])}

    assert authors.unseen_local(local((0.9, 900), (0.7, 90))).holds
    assert not authors.unseen_local(local((0.9, 900), (0.85, 90))).holds  # 0.05 apart
    assert not authors.unseen_local(local((0.9, 900), (0.1, 20))).holds  # 20 records per seed: too few to judge
    def pair(random: float, diverse: float) -> dict[str, ArmResult]:
        return {"random train set": result_of("r", [seed(ood_exact_match=random)]), "diverse train set": result_of("d", [seed(ood_exact_match=diverse)])}

    assert authors.diverse_at_least(pair(0.3, 0.3)).holds and authors.diverse_at_least(pair(0.3, 0.4)).holds
    assert not authors.diverse_at_least(pair(0.3, 0.29)).holds
    assert not authors.diverse_at_least(pair(0.0, 0.01)).holds  # neither solves anything: nothing compared


def test_authors_splits_score_the_same_model_on_the_cited_and_a_fresh_part() -> None:
    """The builder reads a release: the fresh part holds no input of the release and keeps the test
    lengths; the contaminated train part is train plus the cited test part; train and validation
    are the same for every arm of a config (so an arm pair of a seed is one model)."""
    from validity_axes import builders

    cited = builders.released(authors.SMOKE_SUITE, "parity_check-length", "cited")
    fresh = builders.released(authors.SMOKE_SUITE, "parity_check-length", "fresh", fresh_n=40)
    dirty = builders.released(authors.SMOKE_SUITE, "parity_check-length", "cited", contaminate=True)
    four = builders.released(authors.SMOKE_SUITE, "parity_check-length", "cited", contaminate=4)
    inputs = {r["input"] for part in (cited.train, cited.validation, cited.test) for r in part}
    assert len(fresh.test) == 40 and not {r["input"] for r in fresh.test} & inputs
    assert {len(r["input"].split()) for r in fresh.test} <= set(range(9, 13)) and len({r["input"] for r in fresh.test}) == 40
    assert fresh.train == cited.train and fresh.validation == cited.validation
    assert dirty.train == cited.train + cited.test and dirty.test == cited.test
    assert four.train == cited.train + cited.test * 4 and "4 times" in four.report["evaluation"]
    again = builders.released(authors.SMOKE_SUITE, "parity_check-length", "fresh", fresh_n=40)
    assert again.test == fresh.test  # the draw is reproducible


def test_cfq_rules_and_splits() -> None:
    def figures(ems: dict[str, tuple[float, float]]) -> dict[str, ArmResult]:
        return {label: result_of(label, [seed(ood_exact_match=em)], divergence={"compound_divergence": dc}) for label, (dc, em) in ems.items()}

    maximal = {"cfq-random": (0.29, 0.9), "cfq-mcd1": (0.96, 0.3), "cfq-mcd2": (0.95, 0.2), "cfq-mcd3": (0.97, 0.4)}
    assert cfq.mcd_drop(figures(maximal)).holds  # 0.9 - 0.3
    assert not cfq.mcd_drop(figures({**maximal, "cfq-mcd1": (0.96, 0.7), "cfq-mcd2": (0.95, 0.65), "cfq-mcd3": (0.97, 0.5)})).holds  # 0.9 - 0.617
    graded = {**maximal, "cfq-mcd_dc0450": (0.45, 0.8), "cfq-mcd_dc0600": (0.6, 0.7), "cfq-mcd_dc0750": (0.75, 0.5)}
    assert cfq.divergence(figures(graded)).holds
    assert not cfq.divergence(figures({**graded, "cfq-random": (0.29, 0.1), "cfq-mcd_dc0450": (0.45, 0.2)})).holds
    arms = {a.label: a for c in cfq.claims(False) for a in c.arms}
    assert set(arms) == {"cfq-random", "cfq-mcd_dc0450", "cfq-mcd_dc0600", "cfq-mcd_dc0750", "cfq-mcd1", "cfq-mcd2", "cfq-mcd3"}
    mcd = [engine.thawed(a.build.args) for label, a in arms.items() if label != "cfq-random"]
    assert {b["pool_label"] for b in mcd} == {"cfq-mcd"} and len({b["label"] for b in mcd}) == 6  # one pool, six split seeds


def test_looped_rule_needs_more_iterations_to_win() -> None:
    def looped_of(scores: dict[int, float]) -> ArmResult:
        return result_of("looped", [seed(by_iterations={str(k): {"ood_length_score": v} for k, v in scores.items()})])

    transformer = result_of("transformer", [seed(ood_length_score=0.5)])
    assert looped.more_iterations({"looped": looped_of({8: 0.6, 16: 0.95, 32: 0.97}), "transformer": transformer}).holds
    assert not looped.more_iterations({"looped": looped_of({8: 0.95, 16: 0.96, 32: 0.97}), "transformer": transformer}).holds
    assert not looped.more_iterations({"looped": looped_of({8: 0.6, 16: 0.7, 32: 0.8}), "transformer": transformer}).holds


def test_facts_rules_and_shortcut_effects_net_of_the_no_cue_run() -> None:
    assert facts.reversal({"m": result_of("m", [seed(ood_exact_match=0.02)])}, 0.1, 0.01).holds
    assert not facts.reversal({"m": result_of("m", [seed(ood_exact_match=0.3)])}, 0.1, 0.01).holds

    def cue_figures(drops: dict[str, float], baseline: float) -> dict[str, ArmResult]:
        out = {"no cue": result_of("no cue", [seed(s, id_exact_match=0.98, ood_exact_match=0.98 - baseline) for s in range(2)])}
        for label, drop in drops.items():
            out[label] = result_of(label, [seed(s, id_exact_match=0.99, ood_exact_match=0.99 - drop - 0.01 * s) for s in range(2)])
        return out

    growing = cue_figures({"rho=0.5": 0.05, "rho=0.8": 0.2, "rho=0.95": 0.35, "rho=1": 0.5}, baseline=0.05)
    assert shortcuts.monotone(growing).holds and shortcuts.size(growing).holds
    small = cue_figures({"rho=0.5": 0.3, "rho=0.8": 0.32, "rho=0.95": 0.34, "rho=1": 0.36}, baseline=0.3)
    assert shortcuts.monotone(small).holds and not shortcuts.size(small).holds  # 0.36 raw, 0.06 net of the baseline's 0.3
    flat = cue_figures({"rho=0.5": 0.3, "rho=0.8": 0.3, "rho=0.95": 0.3, "rho=1": 0.3}, baseline=0.0)
    assert not shortcuts.monotone(flat).holds


def test_rules_and_interpolation_rules() -> None:
    def diverse(values: list[float]) -> dict[str, ArmResult]:
        return {f"N={n}": result_of(f"N={n}", [seed(ood_exact_match=v)]) for n, v in zip((4, 12, 36, 78), values)}

    assert rules.diversity(diverse([0.1, 0.15, 0.3, 0.4])).holds
    assert not rules.diversity(diverse([0.1, 0.12, 0.13, 0.15])).holds  # rises, but by less than 0.1
    assert not rules.diversity(diverse([0.4, 0.3, 0.2, 0.1])).holds
    by_length = {"ood": {"10": {"n": 50, "exact_match": 0.8}, "12": {"n": 50, "exact_match": 0.6}, "30": {"n": 100, "exact_match": 0.1}}}
    model = {"m": result_of("m", [seed(by_length_detail=by_length)])}
    assert interpolation.regimes(model, ((9, 16), (25, 32))).holds  # 0.7 between vs 0.1 beyond
    close = {"ood": {"10": {"n": 50, "exact_match": 0.3}, "30": {"n": 100, "exact_match": 0.2}}}
    assert not interpolation.regimes({"m": result_of("m", [seed(by_length_detail=close)])}, ((9, 16), (25, 32))).holds


def test_grokking_rules_read_the_metric_history(tmp_path: Path) -> None:
    def run(name: str, memorized: int, generalized: int | None, steps: int = 1000) -> dict[str, Any]:
        folder = tmp_path / name
        folder.mkdir()
        rows = [{"seed": 0, "step": s, "train_exact_match": 1.0 if s >= memorized else 0.5,
                 "id_exact_match": 1.0 if generalized is not None and s >= generalized else 0.2,
                 "ood_exact_match": 1.0 if generalized is not None and s >= generalized else 0.2} for s in range(100, steps + 1, 100)]
        (folder / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        return {"run_dir": str(folder), "steps": steps, "data": {"sizes": {"train": 10, "validation": 5, "test": 95}}}

    def arm_of(label: str, memorized: int, generalized: int | None) -> ArmResult:
        results = run(label, memorized, generalized)
        return ArmResult(engine.Arm(label, "c", engine.Build.of("x:y"), ()), [seed(0, train_exact_match=1.0)], [{**results, "per_seed": []}])

    assert grokking.delay({"f=0.5": arm_of("a", 100, 600)}).holds
    assert not grokking.delay({"f=0.5": arm_of("b", 100, 400)}).holds
    assert not grokking.delay({"f=0.5": arm_of("c", 100, None)}).holds
    ordered = {"f=0.3": arm_of("d", 100, None), "f=0.5": arm_of("e", 100, 800), "f=0.7": arm_of("f", 100, 300)}
    assert grokking.fraction(ordered).holds
    reversed_ = {"f=0.3": arm_of("g", 100, 300), "f=0.5": arm_of("h", 100, 800), "f=0.7": arm_of("i", 100, 900)}
    assert not grokking.fraction(reversed_).holds


# -- reduced runs ------------------------------------------------------------------------------


def test_one_axis_runs_end_to_end_and_merges_into_the_document(tmp_path: Path) -> None:
    import validity

    validity.main(["--smoke", "--axis", "facts", "--out", str(tmp_path), "--workers", "1"])
    first = json.loads((tmp_path / "validity.json").read_text())
    assert [c["key"] for c in first["claims"]] == ["reversal"]
    assert first["claims"][0]["verdict"] in engine.VERDICTS
    validity.main(["--smoke", "--axis", "interpolation", "--out", str(tmp_path), "--workers", "1"])
    both = json.loads((tmp_path / "validity.json").read_text())
    assert [c["axis"] for c in both["claims"]] == ["facts", "interpolation", "interpolation"]
    assert both["claims"][0] == first["claims"][0]  # the facts axis untouched
    page = (tmp_path / "validity.md").read_text()
    assert "## Facts: the reversal curse" in page and "## Interpolation vs extrapolation" in page
    assert "## Deferred to a GPU" in page
    runs = list((tmp_path / "validity-runs").glob("*/*/results.json"))
    assert len(runs) == 3  # one facts run, two interpolation runs
    validity.main(["--smoke", "--axis", "facts", "--out", str(tmp_path), "--workers", "1"])  # reused, same figures
    again = json.loads((tmp_path / "validity.json").read_text())
    assert again["claims"][0]["arms"] == first["claims"][0]["arms"]
    assert again["context"]["facts"]["reused"] == 1
    made_at = engine.code_commit()
    assert again["context"]["facts"]["run_commits"] == {made_at: 1}  # the reused run keeps the commit it was trained at
    assert f"trained at {made_at} (1)" in (tmp_path / "validity.md").read_text()
    ctx = both["context"]["interpolation"]  # two claims of one axis share no run here; shortcuts' two claims share theirs
    assert ctx["cpu_minutes"]["interpolation"] == pytest.approx(ctx["cpu_minutes_all"]) and ctx["cpu_minutes_all"] > 0


def test_runs_are_counted_by_the_commit_they_were_trained_at() -> None:
    results = {"a": {"commit": "abc1234"}, "b": {"commit": "abc1234"}, "c": {}, "d": {"commit": "def5678+changes"}}
    assert engine.run_commits(results) == {"abc1234": 2, "def5678+changes": 1, "not recorded": 1}
    assert engine.code_commit() != "unknown"  # the tests run in a checkout


def test_an_axis_counts_the_cpu_of_a_shared_run_once() -> None:
    results = {"a": {"cpu_seconds": 60.0}, "b": {"cpu_seconds": 120.0}}
    assert engine.run_cpu_minutes(results, ["a", "a", "b"]) == pytest.approx(3.0)
    claims = shortcuts.claims(True)
    runs = engine.plan(claims)
    names = {run.name for run in runs.values()}
    assert len(claims) == 2 and len(names) < sum(len(arm.seeds) for c in claims for arm in c.arms)  # the claims share runs


def test_the_gpu_cfq_protocol_learns_over_records_and_the_cpu_runs_keep_their_names() -> None:
    """Fixed before any GPU run: the GPU cfq claims stop on exact match over validation records (CFQ's
    figure); the CPU cfq claims keep the per-length rule, so their runs are reused."""
    for claim in gpu.GPU_PROTOCOLS["cfq"](False):
        assert claim.learned == Learned(threshold=0.95, extra=0.25, over="records")
        assert "exact match over validation records" in claim.learned.describe()
        assert all(a.settings(claim.learned)["until_over"] == "records" for a in claim.arms)
    for claim in cfq.claims(False):
        assert claim.learned.over == "lengths" and all("until_over" not in a.settings(claim.learned) for a in claim.arms)
