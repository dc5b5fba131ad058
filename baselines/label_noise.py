"""Label noise: a seeded fraction of a run's training targets replaced by wrong answers.

Applied in the training loop only, never written to data: the release stays correct and
verifiable. With fraction xi of n training records, exactly ``round(xi * n)`` records are
corrupted, chosen from the ``noise`` stream of gengap.generators.seeding (its seed is the run's
``noise_seed``, the same for every seed of a run, so seeds vary only initialization and
order); each gets a target drawn uniformly from the distinct targets of the training part
other than its own (for x op y mod p: another residue). Which records were corrupted, with
their true and trained targets, goes into results.json.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from gengap.baselines.errors import BaselineError
from gengap.generators.seeding import noise_rng

Record = dict[str, Any]


@dataclass(frozen=True)
class Corruption:
    """The training records as trained on, and which of them carry a wrong target."""

    records: list[Record]
    corrupted: tuple[int, ...]  # indices into records, ascending

    def describe(self, fraction: float, seed: int) -> dict[str, Any]:
        """The results.json entry: the fraction, the seed and every corrupted record."""
        return {
            "fraction": fraction,
            "noise_seed": seed,
            "corrupted": len(self.corrupted),
            "records": [{"id": self.records[i].get("id"), "target": self.records[i]["true_target"],
                         "trained_on": self.records[i]["target"]} for i in self.corrupted],
        }


def corrupt(records: Sequence[Mapping[str, Any]], fraction: float, seed: int) -> Corruption:
    """records with round(fraction * n) targets replaced by other targets of the set (see the module doc).

    A corrupted record keeps its true answer as ``true_target``; BaselineError when the set
    has fewer than two distinct targets (no wrong answer to draw).
    """
    if not 0 <= fraction < 1:
        raise BaselineError(f"label_noise must be in [0, 1), got {fraction}")
    out = [dict(r) for r in records]
    count = int(round(fraction * len(out)))
    if count == 0:
        return Corruption(out, ())
    answers = sorted({r["target"] for r in out})
    if len(answers) < 2:
        raise BaselineError("label noise needs at least two distinct targets in the train part")
    rng = noise_rng(seed)
    chosen = sorted(int(i) for i in rng.choice(len(out), size=count, replace=False))
    for index in chosen:
        true = out[index]["target"]
        others = [a for a in answers if a != true]
        out[index]["true_target"] = true
        out[index]["target"] = others[int(rng.integers(len(others)))]
    return Corruption(out, tuple(chosen))
