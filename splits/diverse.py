"""Structurally diverse training sets: train records chosen under a budget to cover as many
distinct compounds as possible (Oren et al. 2021; Gupta et al. 2022; Bogin et al. 2022).

Given candidate records and a budget k, the ``diverse`` sampler is the greedy algorithm of
maximum coverage: it takes, k times, the candidate that adds the most compounds (distinct
items of its compounds: gengap.splits.atoms under the split's definition, so local structures
with ``compounds=local``) that no record taken before holds; ties go to the candidate earlier
in one seeded permutation of the candidates (stream ``train_sample``,
gengap.generators.seeding), and once every compound the candidates hold is covered the rest of
the budget is filled in that permuted order. The greedy choice covers at least 1 - 1/e of the
most any k candidates can cover (Nemhauser et al. 1978), hence at least that share of what a
random draw of k covers; on generated pools it covers more than random draws do (tests). The
``random`` sampler takes the first k candidates of the same permutation (a uniform draw).
Either way the chosen records keep their order among the candidates.

Splits take it as the options ``train_sampler`` (random, default; diverse) and
``train_budget`` (k; 0 = keep every train-side record, the default, which leaves every
split as it was). A pool split chooses the train part from its train side after validation
is carved (gengap.splits.base.finish), so validation stays the train side's distribution (the
records the sampler chose from) rather than the diverse selection's; a sampled split
(gengap.splits.api.sample_split) draws ``sampler_candidates`` x its train size candidates
from each train setting and chooses each setting's share among its own, and validation is
drawn from the same settings, stratified by the candidates' input lengths and holding none of
their inputs. The report's ``train_sample`` states the sampler, the budget, the candidates
and how many distinct compounds the candidates and the chosen records hold.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any, Collection, Sequence

import numpy as np

from gengap.generators.batch import Record
from gengap.splits.atoms import DERIVATION_COMPOUNDS, CompoundDefinition, record_compounds

RANDOM, DIVERSE = "random", "diverse"
SAMPLERS = (RANDOM, DIVERSE)
DIVERSE_CANDIDATES = 4  # candidates a sampled split draws per train record it keeps (diverse sampler)


def greedy_cover(items: Sequence[Collection[str]], k: int, rng: np.random.Generator) -> list[int]:
    """Indices of min(k, len(items)) of items in the order the diverse sampler takes them (module
    doc): each adds the most items not yet covered, ties to the earlier in rng's permutation."""
    rank = rng.permutation(len(items)).tolist()
    covered: set[str] = set()
    heap = [(-len(set(found)), rank[index], index) for index, found in enumerate(items)]
    heapq.heapify(heap)
    chosen: list[int] = []
    while heap and len(chosen) < k:
        stale, order, index = heapq.heappop(heap)
        gain = len(set(items[index]) - covered)
        if -stale != gain:  # gains only fall as coverage grows: re-file it under what it adds now
            heapq.heappush(heap, (-gain, order, index))
            continue
        chosen.append(index)
        covered.update(items[index])
    return chosen


def random_choice(count: int, k: int, rng: np.random.Generator) -> list[int]:
    """Indices of min(k, count) of count candidates: the first of rng's permutation (the random sampler)."""
    return rng.permutation(count)[:k].tolist()


def covered_count(items: Sequence[Collection[str]], chosen: Sequence[int]) -> int:
    """Distinct items the chosen entries hold together."""
    return len(set().union(*(items[i] for i in chosen))) if chosen else 0


@dataclass(frozen=True)
class TrainSelection:
    """A split's train sampler: ``sampler`` (random or diverse), ``budget`` records to keep, and the
    compounds the diverse sampler covers (and the report counts)."""

    sampler: str
    budget: int
    abstract_lexical: bool = False
    definition: CompoundDefinition = DERIVATION_COMPOUNDS

    def choose(self, records: Sequence[Record], rng: np.random.Generator) -> tuple[list[Record], dict[str, Any]]:
        """(min(budget, len(records)) of records in their order, the report's ``train_sample``)."""
        groups, info = self.choose_groups([records], [self.budget], rng)
        return groups[0], info

    def choose_groups(self, groups: Sequence[Sequence[Record]], budgets: Sequence[int],
                      rng: np.random.Generator) -> tuple[list[list[Record]], dict[str, Any]]:
        """budgets[i] records of each group chosen among its own (a sampled split's settings, in
        order, one generator), and the ``train_sample`` of them all (``budget``: the sum)."""
        items = [[set(record_compounds(r, self.abstract_lexical, self.definition)) for r in group] for group in groups]
        out, every, kept_items = [], [], []
        for group, found, budget in zip(groups, items, budgets):
            chosen = greedy_cover(found, budget, rng) if self.sampler == DIVERSE else random_choice(len(group), budget, rng)
            kept = sorted(chosen)
            out.append([group[i] for i in kept])
            every += found
            kept_items += [found[i] for i in kept]
        info = {
            "sampler": self.sampler,
            "budget": sum(budgets),
            "candidates": len(every),
            "chosen": len(kept_items),
            "compounds_available": covered_count(every, range(len(every))),
            "compounds_covered": covered_count(kept_items, range(len(kept_items))),
        }
        return out, info
