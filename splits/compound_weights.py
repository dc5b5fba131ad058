"""CFQ's weighted compounds (Keysers et al. 2020, appendix on compound weighting).

Contract. Compounds are the connected sub-derivations of 2 to COMPOUND_MAX_NODES rule nodes
of an example's derivation (gengap.generators.derivation), each *occurrence* being one set of
rule nodes of one example. Over a dataset D (the records a split divides):

- N(G): the occurrences of compound G in D;
- n(G, G'): the occurrences g of G for which the same example holds an occurrence g' of a
  compound G' whose node set strictly contains g's;
- p(G' | G) = n(G, G') / N(G): the empirical probability that an occurrence of G is part of
  one of G';
- the weight of an occurrence g of G = 1 - max p(G' | G) over the G' of occurrences containing
  g in its example (1 when none does), so a compound that occurs only inside a larger one
  weighs 0 and does not count twice;
- an example's weight for G = the largest weight of its occurrences of G (0: left out).

A set's compound distribution is the sum of its examples' weights, normalized (the Chernoff
coefficient of gengap.splits.divergence normalizes). The MCD search counts in integers, so
:func:`quantized` scales the weights by SCALE and rounds them (the divergences are invariant
under the scale; the rounding moves a weight by at most 0.5 / SCALE).

Compounds read with ``abstract_lexical`` are weighted the same way over their abstract texts.
Records without a derivation tree (a task without compounds, records with meta.compounds) have
no occurrences to weigh: :func:`cfq_weights` gives them their unweighted compounds.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Iterable, Mapping, Sequence

from gengap.generators.derivation import COMPOUND_MAX_NODES, Tree, internal_nodes
from gengap.splits.atoms import record_compounds, record_tree
from gengap.splits.divergence import compound_divergence

UNWEIGHTED, CFQ = "unweighted", "cfq"
WEIGHTINGS = (UNWEIGHTED, CFQ)
TASK_DEFAULT = "task"  # the option value that picks the task's own default (TASK_WEIGHTING)
TASK_WEIGHTING = {"cfq_like": CFQ}  # tasks whose MCD splits weight compounds by default
SCALE = 100  # quantized weights: integer hundredths

Occurrence = tuple[str, int]  # (compound text, bit mask of its rule nodes in pre-order)


def resolve(option: str, tasks: Iterable[str]) -> str:
    """The weighting an option value names: ``task`` -> CFQ when every task of the records is
    one whose default it is (TASK_WEIGHTING), else UNWEIGHTED; ValueError for an unknown value."""
    if option == TASK_DEFAULT:
        found = {TASK_WEIGHTING.get(task, UNWEIGHTED) for task in tasks}
        return found.pop() if len(found) == 1 else UNWEIGHTED
    if option not in WEIGHTINGS:
        raise ValueError(f"unknown compound_weighting {option!r}; known: {TASK_DEFAULT}, {', '.join(WEIGHTINGS)}")
    return option


def tree_occurrences(tree: Tree, abstract_lexical: bool = False, max_nodes: int = COMPOUND_MAX_NODES) -> list[Occurrence]:
    """Every compound occurrence of a derivation: (text, node mask), the texts those of
    gengap.generators.derivation.tree_compounds (the same multiset)."""
    nodes = list(internal_nodes(tree))
    index = {id(node): i for i, node in enumerate(nodes)}
    if len(index) != len(nodes):  # a node shared by two parents (SCAN's trees): weigh the tree it stands for
        tree = json.loads(json.dumps(tree))
        nodes = list(internal_nodes(tree))
        index = {id(node): i for i, node in enumerate(nodes)}
    memo: dict[tuple[int, int], list[tuple[str, int, int]]] = {}

    def rooted(node: list[Any], budget: int) -> list[tuple[str, int, int]]:
        key = (id(node), budget)
        if key in memo:
            return memo[key]
        partial: list[tuple[tuple[str, ...], int, int]] = [((), 1, 1 << index[id(node)])]
        for child in node[1:]:
            if isinstance(child, str):
                text = "*" if abstract_lexical else child
                partial = [(parts + (text,), size, mask) for parts, size, mask in partial]
                continue
            grown = []
            for parts, size, mask in partial:
                grown.append((parts + ("_",), size, mask))
                if size < budget:
                    for text, extra, sub in rooted(child, budget - size):
                        grown.append((parts + (text,), size + extra, mask | sub))
            partial = grown
        rule = str(node[0])
        found = [(f"{rule}({','.join(parts)})" if parts else rule, size, mask) for parts, size, mask in partial]
        memo[key] = found
        return found

    return [(text, mask) for node in nodes for text, size, mask in rooted(node, max_nodes) if size >= 2]


def _containers(occurrences: Sequence[Occurrence]) -> dict[int, set[str]]:
    """For each node mask of an example, the compounds of the occurrences strictly containing it."""
    text_of = {mask: text for text, mask in occurrences}
    found: dict[int, set[str]] = {mask: set() for mask in text_of}
    for mask, text in text_of.items():
        sub = (mask - 1) & mask
        while sub:
            if sub in found:
                found[sub].add(text)
            sub = (sub - 1) & mask
    return found


def occurrence_counts(examples: Iterable[Sequence[Occurrence]]) -> tuple[Counter[str], Counter[tuple[str, str]]]:
    """(N, n) of the module doc over the examples' occurrences."""
    totals: Counter[str] = Counter()
    within: Counter[tuple[str, str]] = Counter()
    for occurrences in examples:
        containers = _containers(occurrences)
        for text, mask in occurrences:
            totals[text] += 1
            for outer in containers[mask]:
                within[(text, outer)] += 1
    return totals, within


def conditional_maxima(totals: Mapping[str, int], within: Mapping[tuple[str, str], int]) -> dict[tuple[str, str], float]:
    """p(G' | G) for every pair that occurs."""
    return {(g, outer): count / totals[g] for (g, outer), count in within.items()}


def example_weights(occurrences: Sequence[Occurrence], p: Mapping[tuple[str, str], float]) -> dict[str, float]:
    """An example's weight for each of its compounds (module doc); compounds of weight 0 left out."""
    containers = _containers(occurrences)
    weights: dict[str, float] = {}
    for text, mask in occurrences:
        weight = 1.0 - max((p[(text, outer)] for outer in containers[mask]), default=0.0)
        if weight > weights.get(text, 0.0):
            weights[text] = weight
    return weights


def cfq_weights(records: Sequence[Mapping[str, Any]], abstract_lexical: bool = False) -> list[dict[str, float]]:
    """Each record's weighted compounds, weights taken over ``records`` (the dataset D)."""
    trees = [record_tree(r) for r in records]
    occurrences = [tree_occurrences(t, abstract_lexical) if t is not None else None for t in trees]
    totals, within = occurrence_counts(o for o in occurrences if o is not None)
    p = conditional_maxima(totals, within)
    return [
        example_weights(o, p) if o is not None else dict(record_compounds(r, abstract_lexical))
        for r, o in zip(records, occurrences)
    ]


def quantized(weights: Mapping[str, float], scale: int = SCALE) -> Counter[str]:
    """Weights as integer counts: round(weight * scale), zeros left out."""
    found: Counter[str] = Counter()
    for text, weight in weights.items():
        count = int(round(weight * scale))
        if count > 0:
            found[text] = count
    return found


def describe(weighting: str) -> str:
    """What a report says of the compound measure."""
    if weighting == CFQ:
        return "cfq weighted (Keysers et al. 2020: an occurrence weighs 1 - max p(G'|G) over its super-compounds, weights over the split's pool)"
    return "unweighted (occurrence counts)"


def weighted_compound_divergence(
    pool: Sequence[Mapping[str, Any]], train: Sequence[Mapping[str, Any]], test: Sequence[Mapping[str, Any]],
    abstract_lexical: bool = False,
) -> float:
    """D_C(train || test) on the cfq measure, the weights taken over ``pool``'s distinct inputs
    (the dataset a split of it divides; train and test records are found in it by input)."""
    first: dict[str, Mapping[str, Any]] = {}
    for record in pool:
        first.setdefault(record["input"], record)
    weights = dict(zip(first, cfq_weights(list(first.values()), abstract_lexical)))
    sides = []
    for part in (train, test):
        total: Counter[str] = Counter()
        for record in part:
            total.update(weights[record["input"]])
        sides.append(total)
    return compound_divergence(sides[0], sides[1])
