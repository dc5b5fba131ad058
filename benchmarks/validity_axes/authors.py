"""Tools for benchmark authors (issue 40): does a fresh test part (``gengap fresh``: the config's
own test rule, a new seed, no input of the release) measure what the cited part measures, and
does it expose a model that saw the cited test part in training? Are test records that hold a
local structure unseen in train (Bogin et al. 2022) solved less often, and does a structurally
diverse train set do at least as well as a random one of the same size?

Set-up (fixed before any run): one release built from SUITE below (seed 20261206): bucket_sort
and parity_check, sampled length splits, train lengths 1..20 and test 21..40 (5,000 / 500 /
500). Each claim trains two arms that differ only in the test part they are scored on: the
cited part, or a fresh part of 500 records (draw 1); the same train and validation parts,
settings and seeds, so the two arms of a seed are the same model. A tiny transformer (2 x 64,
RoPE, autoregressive), seeds 0 and 1, trained until learned (ID >= 0.95 at two evaluations,
then 25 % more steps; cap 8,000 steps).

- fresh:same, on bucket_sort (a learned model scores ~0.4 beyond its train lengths: a figure
  with room to differ): the fresh part's OOD exact match is within 0.062 of the cited part's,
  the half-width of a 95 % interval of the difference of two independent 500-record parts at
  the largest binomial variance (1.96 x sqrt(2 x 0.25 / 500)).
- fresh:memorized (the GPU protocol since the seventh edition, below), on parity_check, with the
  cited test part added to train (contamination;
  memorizing the parity of 500 long inputs teaches nothing about other long inputs, which a
  tiny transformer does not learn from lengths 1..20): the cited part's OOD exact match exceeds
  the fresh part's by at least 0.2.

Sixth edition (fixed before its runs): fresh:memorized adds the cited part to train 4 times (was
once) and states its premise: the contaminated model fit the cited part it trained on (exact
match >= 0.95 on it, mean of learned seeds), else the claim is not learned. In the fifth edition
the model saw each cited record once per epoch and scored 0.718 on them, 0.702 on the fresh
part: it had not memorized what it saw, so "does not hold" tested nothing. Rule unchanged.

Seventh edition (fixed before its runs): fresh:memorized moves to the GPU protocol
(``memorized_claims``; ``python benchmarks/gpu_protocol.py --protocol memorized``): preset small,
every step of 20,000 trained (no early stop: the premise is memorization, which the ID rule's
early stop cut short), learned when the final ID is >= 0.95, seeds 0, 1 and 2; rule and premise
unchanged. On the CPU the tiny transformer did not fit the cited part in the sixth edition
(0.618, 4 copies), and a pilot of the cited arm alone (seed 9, not a protocol seed; the fresh arm
was not run) showed why: with 16 copies and every step of 8,000 trained it reached 0.79 on the
cited part by step 7,000 while its ID stayed at chance (0.50), and with 64 copies neither moved
from chance in 6,000 steps: the long contaminating strings crowd out the parity it must learn.

Set-up of the structure claims (fixed before any run of theirs): SCAN, all 20,910 commands; a
tiny transformer (2 x 64, RoPE, autoregressive), trained until learned (ID >= 0.95 at two
evaluations, then 25 % more steps; cap 6,000 steps). First specified on cfq_like (commit
c245fe5); moved to SCAN before any of their runs, when the cfq axis's first runs showed the tiny
model at ID 0.49-0.67 (per length) after 6,000 steps on cfq_like, so that the claims would test
the tools rather than the model's budget. Their rules are those of c245fe5.

- local:unseen, on an MCD split whose compounds are local structures of 2-3 nodes (``compounds:
  local``) at a compound divergence target of 0.08 (8,365 / 1,045): 713 test records hold no
  local structure unseen in train and 332 hold at least one (the split's figures, known before
  any run). Seeds 0 and 1. Rule: exact match of the records with none minus that of the records
  with at least one ≥ 0.1, both groups of at least 30 records per seed, learned seeds pooled.
- diverse:template, on a holdout of the commands holding both ``around`` and ``right`` (SCAN's
  around-right template, widened to co-occurrence: 7,485 test commands) with train sets of 2,000
  commands from the train side (validation carved first), random or structurally diverse
  (``train_sampler: diverse``, greedy coverage of compounds: 2,714 distinct compounds against
  2,282 for the random set). Seeds 0, 1 and 2. Rule: the diverse model's OOD exact match is at
  least the random model's (means of learned seeds) and at least 0.05 (a comparison of two
  models that solve nothing tests nothing).

Tenth edition (fixed before its runs; every earlier run is retrained): every arm seeds 0, 1 and 2,
every run all its steps (bucket_sort 2,500: the ninth edition's seeds learned at 1,250; SCAN
6,000) with the checkpoint validation selected scored (learned: ID >= 0.95); rules read 95 %
intervals over seeds: fresh:same the per-seed difference (the same model scored on both parts)
within ±0.062, local:unseen the per-seed difference at least 0.1, diverse:template the
difference at least 0 and the diverse model's OOD at least 0.05. local:unseen's premise (at least
30 test records in both groups) is checked on the split before training. New: the negative
control ``local:arbitrary``: the same models' test records grouped by the parity of their
position in the test part (a grouping that means nothing) differ by no more than ±0.062.
"""

from __future__ import annotations

from typing import Any

from validity_axes.common import LEVEL, PREVIOUS, SELECTED, SMOKE_SEEDS, SEEDS, arm, build, f3, paired
from validity_engine import Claim, Decision, Figures, Learned, Premise
from validity_stats import at_least, bootstrap, difference, mean, within

SUITE = """\
name: validity-authors
version: 1.0.0
seed: 20261206
license: cc-by-4.0
created: "2026-12-06"
entries:
  - {task: bucket_sort, split: length, train_range: [1, 20], test_range: [21, 40], sizes: {train: 5000, validation: 500, test: 500}}
  - {task: parity_check, split: length, train_range: [1, 20], test_range: [21, 40], sizes: {train: 5000, validation: 500, test: 500}}
"""
SMOKE_SUITE = SUITE.replace("[1, 20], test_range: [21, 40], sizes: {train: 5000, validation: 500, test: 500}",
                            "[1, 8], test_range: [9, 12], sizes: {train: 200, validation: 40, test: 40}")
SAME_MAX = 0.062  # |fresh - cited| OOD exact match: 1.96 x sqrt(2 x 0.25 / 500)
DROP_MIN = 0.2  # contaminated model: cited - fresh OOD exact match
CONTAMINATION_COPIES = 4  # fresh:memorized: times the cited part is added to train
MEMORIZED_LEARNED = Learned(threshold=0.95, stop=False)  # fresh:memorized: final ID, every step trained
FIT_MIN = 0.95  # fresh:memorized's premise: the contaminated model's exact match on the cited part it trained on
UNSEEN_MARGIN = 0.1  # local:unseen: EM(no unseen local structure) - EM(at least one)
MIN_RECORDS = 30  # local:unseen: records in each group, per seed
DIVERSE_FLOOR = 0.05  # diverse:template: the diverse model must solve at least this share


SMOKE_TRAIN = {"steps": 10, "eval_every": 5, "eval_examples": 16}


def _part(smoke: bool, config: str, test: str, contaminate: int | bool = False) -> Any:
    """A config of the release of SUITE with its cited or a fresh test part (builders.released)."""
    return build("released", suite=SUITE if not smoke else SMOKE_SUITE, config=config, test=test, contaminate=contaminate,
                 fresh_n=500 if not smoke else 40, fresh_seed=1)


def _local_facts(splits: Any) -> dict[str, Any]:
    from validity_axes.compositional import novelty_facts

    return novelty_facts(splits)


def _local_unmet(facts: Any) -> tuple[str, ...]:
    short = [f"{label}: {c}" for label, c in facts.items() if min(c.values()) < MIN_RECORDS]
    return (f"fewer than {MIN_RECORDS} test records in a group ({'; '.join(short)})",) if short else ()


def claims(smoke: bool) -> list[Claim]:
    train = {"steps": 2500, "eval_every": 250, "eval_examples": 256} if not smoke else SMOKE_TRAIN
    seeds = SEEDS if not smoke else SMOKE_SEEDS
    same = tuple(arm(test, f"bucket_sort-length-{test}", _part(smoke, "bucket_sort-length", test), seeds, cost=4, **train)
                 for test in ("cited", "fresh"))
    structure_train = {"steps": 6000, "eval_every": 250, "eval_examples": 256} if not smoke else train
    mcd = {"train_size": 8365, "test_size": 1045} if not smoke else {"train_size": 600, "test_size": 150, "steps": 20000}
    local = build("scan", strategy="mcd", options={**mcd, "compound_divergence": 0.08, "compounds": "local"}, label="scan-local-mcd_dc0080")
    unseen = arm("transformer", "scan-local-mcd_dc0080", local, seeds, cost=3, **structure_train)
    budget = 2000 if not smoke else 200
    held = {sampler: arm(f"{sampler} train set", f"scan-around_right-{sampler}",
                         build("scan", strategy="holdout", label="scan-around_right",
                               options={"atom": "around+right", "train_budget": budget, "train_sampler": sampler}),
                         seeds, cost=3, **structure_train)
            for sampler in ("random", "diverse")}
    return [
        Claim("authors", "fresh:same", "A fresh test part scores like the cited one", same,
              f"OOD exact match on the fresh part minus on the cited part, per seed (the same model): its {LEVEL:.0%} interval within ±{SAME_MAX}",
              "Dynamic evaluation (new items drawn from the generator) answers contamination of static test sets",
              same_score, learned=SELECTED, previous=PREVIOUS["fresh:same"], level=LEVEL, tiers=("quick", "full"),
              setup="bucket_sort, train 1..20, test 21..40 of a release; the fresh part: 500 records of `gengap fresh` (draw 1), "
                    "none of whose inputs is in the release; the same model scored on each part; 2,500 steps."),
        Claim("authors", "local:unseen", "Test records holding a local structure unseen in train are solved less often", (unseen,),
              f"exact match of test records with no unseen local structure minus those with ≥ 1, per learned seed: its {LEVEL:.0%} "
              f"interval ≥ {UNSEEN_MARGIN}",
              "Bogin et al. 2022: a test instance is hard if it holds a local structure unobserved in training (5 semantic parsing datasets)",
              unseen_local, learned=SELECTED, previous=PREVIOUS["local:unseen"], level=LEVEL,
              premise=Premise(f"≥ {MIN_RECORDS} test records with no unseen local structure and with at least one", _local_facts, _local_unmet),
              setup="SCAN, MCD at 8,365 / 1,045 with local structures of 2-3 nodes as compounds (target 0.08): 713 test records with no "
                    "unseen local structure, 332 with at least one; 6,000 steps."),
        Claim("authors", "local:arbitrary", "Test records grouped by a meaningless rule are solved alike", (unseen,),
              f"exact match of the test records at even positions of the test part minus those at odd positions, per learned seed: its "
              f"{LEVEL:.0%} interval within ±{SAME_MAX}",
              "A grouping that holds no information about the records predicts nothing", arbitrary_groups, learned=SELECTED, level=LEVEL,
              role="negative control",
              setup="The model of the claim above (its runs), its per-record test results grouped by position parity."),
        Claim("authors", "diverse:template", "A structurally diverse train set generalizes at least as well as a random one of the same size",
              tuple(held.values()),
              f"OOD exact match of the diverse train set's model minus the random one's: its {LEVEL:.0%} interval ≥ 0, and the diverse "
              f"model's: its interval ≥ {DIVERSE_FLOOR}",
              "Oren et al. 2021, Levy et al. 2023: structurally diverse training sets give comparable or better compositional generalization "
              "(9 of 10 dataset-split pairs)",
              diverse_at_least, learned=SELECTED, previous=PREVIOUS["diverse:template"], level=LEVEL,
              setup="SCAN, test: the 7,485 commands holding around and right; train sets of 2,000 commands from the same train side, "
                    "random or diverse (greedy coverage of compounds); seeds 0, 1, 2; 6,000 steps."),
    ]


def memorized_claims(smoke: bool, preset: str = "small", steps: int = 20000, seeds: tuple[int, ...] = (0, 1, 2)) -> list[Claim]:
    """fresh:memorized (the GPU protocol since the seventh edition): the contaminated model trains every step, then is
    scored on the cited part it trained on and on a fresh part."""
    train = {"steps": steps, "eval_every": 500, "eval_examples": 256} if not smoke else SMOKE_TRAIN
    seeds = seeds if not smoke else (0,)
    memorized = tuple(arm(f"contaminated, {test}", f"parity_check-length-contaminated-{test}",
                          _part(smoke, "parity_check-length", test, CONTAMINATION_COPIES), seeds, cost=4, preset=preset, **train)
                      for test in ("cited", "fresh"))
    return [
        Claim("gpu", "fresh:memorized", "A model that saw the cited test part in training drops on a fresh one", memorized,
              f"OOD exact match on the cited part - on the fresh part ≥ {DROP_MIN} (means of learned seeds); premise: exact match on "
              f"the cited part, which the model trained on, ≥ {FIT_MIN} (else not learned)",
              "Contaminated static test sets measure memory, not generalization",
              memorized_drop, learned=MEMORIZED_LEARNED, previous=PREVIOUS["fresh:memorized"],
              setup=f"parity_check, train 1..20 plus the 500 cited test records (21..40) {CONTAMINATION_COPIES} times, test: the cited part or 500 fresh records "
                    "(`gengap fresh`, draw 1); the same model scored on each part."),
    ]


def _ids(figures: Figures) -> str:
    return "; ".join(f"{label}: {', '.join(f3(v) for v in f.values('id_length_mean_exact_match', False))}" for label, f in figures.items())


def same_score(figures: Figures) -> Decision:
    differences = paired(figures, "fresh", "cited", "ood_exact_match")
    interval = bootstrap({"d": differences}, lambda g: mean(g["d"]), LEVEL)
    return Decision(within(interval, SAME_MAX),
                    f"OOD exact match: cited {f3(figures['cited'].ood)}, fresh {f3(figures['fresh'].ood)}, difference {interval.text()}",
                    {"ID per length, per seed (the same model in both arms)": _ids(figures)})


def memorized_drop(figures: Figures) -> Decision:
    cited, fresh = figures["contaminated, cited"].ood, figures["contaminated, fresh"].ood
    drop = None if cited is None or fresh is None else cited - fresh
    unmet = () if cited is not None and cited >= FIT_MIN else (f"the premise: the contaminated model fit the cited part it trained on ({f3(cited)} < {FIT_MIN})",)
    return Decision(drop is not None and drop >= DROP_MIN,
                    f"OOD exact match: cited (seen in training) {f3(cited)}, fresh {f3(fresh)}, drop {f3(drop)}",
                    {"ID per length, per seed (the same model in both arms)": _ids(figures)}, unmet)


def _bucket_rate(seed: Any, zero: bool) -> float | None:
    cells = [c for b, c in ((seed.get("by_novelty") or {}).get("ood") or {}).items() if (b == "0") == zero]
    n = sum(c["n"] for c in cells)
    return sum(c["exact_match"] * c["n"] for c in cells) / n if n else None


def unseen_local(figures: Figures) -> Decision:
    from validity_axes.compositional import _buckets

    (model,) = figures.values()
    hits, counts = _buckets(model)
    zero, some = (hits[0] / counts[0] if counts[0] else None), (hits[1] / counts[1] if counts[1] else None)
    per_seed = [(_bucket_rate(s, True), _bucket_rate(s, False)) for s in (model.learned_seeds or model.seeds)]
    interval = bootstrap({"d": [a - b for a, b in per_seed if a is not None and b is not None]}, lambda g: mean(g["d"]), LEVEL)
    return Decision(at_least(interval, UNSEEN_MARGIN),
                    f"exact match: no unseen local structure {f3(zero)} ({counts[0]} records), ≥ 1 {f3(some)} ({counts[1]}), "
                    f"difference {interval.text()}")


def arbitrary_groups(figures: Figures) -> Decision:
    (model,) = figures.values()
    differences = []
    for seed in model.learned_seeds or model.seeds:
        flags = (seed.get("outcomes") or {}).get("ood") or ""
        even, odd = flags[0::2], flags[1::2]
        if even and odd:
            differences.append(even.count("1") / len(even) - odd.count("1") / len(odd))
    interval = bootstrap({"d": differences}, lambda g: mean(g["d"]), LEVEL)
    return Decision(within(interval, SAME_MAX), f"exact match, even minus odd positions: {interval.text()}")


def diverse_at_least(figures: Figures) -> Decision:
    groups = {label: f.values("ood_exact_match") for label, f in figures.items()}
    gain = bootstrap(groups, difference("diverse train set", "random train set"), LEVEL)
    floor = bootstrap({"d": groups["diverse train set"]}, lambda g: mean(g["d"]), LEVEL)
    holds = at_least(gain, 0.0) and at_least(floor, DIVERSE_FLOOR)
    return Decision(holds, f"OOD exact match: random {f3(mean(groups['random train set']))}, diverse {floor.text()}, difference {gain.text()}")
