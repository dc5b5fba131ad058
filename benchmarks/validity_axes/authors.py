"""Tools for benchmark authors (issue 40): does a fresh test part (``gengap fresh``: the config's
own test rule, a new seed, no input of the release) measure what the cited part measures, and
does it expose a model that saw the cited test part in training?

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
- fresh:memorized, on parity_check, with the cited test part added to train (contamination;
  memorizing the parity of 500 long inputs teaches nothing about other long inputs, which a
  tiny transformer does not learn from lengths 1..20): the cited part's OOD exact match exceeds
  the fresh part's by at least 0.2.
"""

from __future__ import annotations

from typing import Any

from validity_axes.common import LEARNED, arm, build, f3
from validity_engine import Claim, Decision, Figures

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


def claims(smoke: bool) -> list[Claim]:
    suite = SUITE if not smoke else SMOKE_SUITE
    train = {"steps": 8000, "eval_every": 250, "eval_examples": 256} if not smoke else {"steps": 10, "eval_every": 5, "eval_examples": 16}
    seeds = (0, 1) if not smoke else (0,)
    fresh_n = 500 if not smoke else 40

    def part(config: str, test: str, contaminate: bool = False) -> Any:
        return build("released", suite=suite, config=config, test=test, contaminate=contaminate, fresh_n=fresh_n, fresh_seed=1)

    same = tuple(arm(test, f"bucket_sort-length-{test}", part("bucket_sort-length", test), seeds, cost=4, **train) for test in ("cited", "fresh"))
    memorized = tuple(arm(f"contaminated, {test}", f"parity_check-length-contaminated-{test}", part("parity_check-length", test, True), seeds,
                          cost=4, **train) for test in ("cited", "fresh"))
    return [
        Claim("authors", "fresh:same", "A fresh test part scores like the cited one", same,
              f"|OOD exact match on the fresh part - on the cited part| ≤ {SAME_MAX} (means of learned seeds)",
              "Dynamic evaluation (new items drawn from the generator) answers contamination of static test sets",
              same_score, learned=LEARNED,
              setup="bucket_sort, train 1..20, test 21..40 of a release; the fresh part: 500 records of `gengap fresh` (draw 1), "
                    "none of whose inputs is in the release; the same model scored on each part."),
        Claim("authors", "fresh:memorized", "A model that saw the cited test part in training drops on a fresh one", memorized,
              f"OOD exact match on the cited part - on the fresh part ≥ {DROP_MIN} (means of learned seeds)",
              "Contaminated static test sets measure memory, not generalization",
              memorized_drop, learned=LEARNED,
              setup="parity_check, train 1..20 plus the 500 cited test records (21..40), test: the cited part or 500 fresh records "
                    "(`gengap fresh`, draw 1); the same model scored on each part."),
    ]


def _ids(figures: Figures) -> str:
    return "; ".join(f"{label}: {', '.join(f3(v) for v in f.values('id_length_mean_exact_match', False))}" for label, f in figures.items())


def same_score(figures: Figures) -> Decision:
    cited, fresh = figures["cited"].ood, figures["fresh"].ood
    difference = None if cited is None or fresh is None else fresh - cited
    return Decision(difference is not None and abs(difference) <= SAME_MAX,
                    f"OOD exact match: cited {f3(cited)}, fresh {f3(fresh)}, difference {f3(difference)}",
                    {"ID per length, per seed (the same model in both arms)": _ids(figures)})


def memorized_drop(figures: Figures) -> Decision:
    cited, fresh = figures["contaminated, cited"].ood, figures["contaminated, fresh"].ood
    drop = None if cited is None or fresh is None else cited - fresh
    return Decision(drop is not None and drop >= DROP_MIN,
                    f"OOD exact match: cited (seen in training) {f3(cited)}, fresh {f3(fresh)}, drop {f3(drop)}",
                    {"ID per length, per seed (the same model in both arms)": _ids(figures)})
