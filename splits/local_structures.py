"""Local structures of a derivation (Bogin et al. 2022), a second definition of compounds.

Bogin, Gupta and Berant ("Unobserved local structures make compositional generalization hard",
EMNLP 2022) find that a test instance is hard when it holds a *local structure* no train
instance holds: a small connected piece of its program graph, whose nodes are the program's
symbols and whose edges join a parent to its child and a node to its adjacent sibling. This
module reads them from a gengap derivation (``[rule, child, ...]`` nested lists,
gengap.generators.derivation) the way Levy et al.'s released implementation of Bogin et al.'s
structures (Cover-LS, 2023) builds them from a program's tree:

- every node of the tree is a node of the graph: an internal node is labelled by its rule, a
  leaf by its lexical item (``*`` with ``abstract_lexical``, as for the derivation's compounds);
- a local structure is anchored at one node c and holds, besides c, its ``a`` nearest
  ancestors (parent, grandparent, ...) and its ``s`` nearest preceding siblings (the children
  of c's parent just before c), with ``a + s >= 1`` and ``1 + a + s <= size`` nodes; so with
  size 2 the structures are the parent-child pairs and the pairs of adjacent siblings, and
  size 3 adds grandparent-parent-child chains, a parent with two adjacent children and runs of
  three adjacent siblings;
- it is written as its parts joined by `` / ``, ancestors from the farthest down, then the
  siblings from the farthest on, then c, each tagged ``p:`` (ancestor), ``s:`` (sibling) or
  ``c:`` (the anchor): the parent-child pair of rule ``S -> V`` over ``V -> U`` is
  ``p:S -> V / c:V -> U``, and ``p:C -> S and S / s:S -> V / c:and`` is the connective
  ``and`` after its left conjunct, under their parent.

A node (one symbol) alone is an atom, not a local structure: structures have 2 to ``size``
nodes and are counted with multiplicity (a multiset, like compounds). The definition is
canonical: two trees give the same multiset exactly when they hold the same anchored
ancestor-and-sibling runs.

Why ``LOCAL_SIZE = 3`` by default: a held-out structure is useful when it is neither in nearly
every record (holding it out empties train) nor in a handful (a test part of a few records).
On 5,000 of SCAN's records (``python benchmarks/local_structures.py``), none of the 111
structures of 2 nodes lies in 0.5-5 % of the records, while 55 of the 339 structures of up to 3
nodes do (288 of 720 of up to 4); cogs_like and cfq_like have such structures at every size.
Size 3 is the smallest that can be held out on every derivation task gengap has, and the
records still share most of their structures with others (a record's structures occur in 19 %
of SCAN's records on average, against 15 % at size 4).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterator

LOCAL_SIZE = 3  # default largest number of nodes of a local structure
LOCAL_SIZE_MAX = 6  # the largest size a split accepts (a record's structures grow fast beyond)
ANCESTOR, SIBLING, ANCHOR = "p:", "s:", "c:"
JOIN = " / "

Tree = Any  # list [rule, *children] or a str leaf


def _label(node: Tree, abstract_lexical: bool) -> str:
    if isinstance(node, str):
        return "*" if abstract_lexical else node
    return str(node[0])


def _anchors(tree: Tree, abstract_lexical: bool) -> Iterator[tuple[list[str], list[str], str]]:
    """Every node as (labels of its ancestors, root first; labels of its preceding siblings,
    farthest first; its own label), in pre-order, without recursion."""
    stack: list[tuple[Tree, list[str], list[str]]] = [(tree, [], [])]
    while stack:
        node, ancestors, siblings = stack.pop()
        label = _label(node, abstract_lexical)
        yield ancestors, siblings, label
        if isinstance(node, str):
            continue
        below = [*ancestors, label]
        children = node[1:]
        labels = [_label(child, abstract_lexical) for child in children]
        for index in range(len(children) - 1, -1, -1):
            stack.append((children[index], below, labels[:index]))


def tree_local_structures(tree: Tree, size: int = LOCAL_SIZE, abstract_lexical: bool = False) -> Counter[str]:
    """The local structures of 2..size nodes of a derivation, with multiplicity (module doc)."""
    if size < 2:
        raise ValueError(f"a local structure has at least 2 nodes, got size {size}")
    found: Counter[str] = Counter()
    for ancestors, siblings, label in _anchors(tree, abstract_lexical):
        anchor = ANCHOR + label
        for up in range(min(size - 1, len(ancestors)) + 1):
            above = [ANCESTOR + a for a in ancestors[len(ancestors) - up:]]
            for left in range(min(size - 1 - up, len(siblings)) + 1):
                if up + left == 0:
                    continue
                beside = [SIBLING + s for s in siblings[len(siblings) - left:]]
                found[JOIN.join([*above, *beside, anchor])] += 1
    return found


def structure_size(text: str) -> int:
    """The number of nodes of a local structure written as this module writes them."""
    return text.count(JOIN) + 1
