"""Derivation trees of compositional examples, and their atoms and compounds.

A derivation is stored in a record's ``structure`` as nested lists: an internal node is
``[rule, child, child, ...]`` where ``rule`` names the grammar rule applied (e.g.
``"V -> D twice"``), and a leaf is a plain string: a lexical item (e.g. ``"jump"``).

- atoms: the multiset of rules and lexical items used.
- compounds: the multiset of connected sub-derivations of 2 to 5 rule nodes (a node
  and some of its descendants, each included node's parent included). A compound is
  written as nested ``rule(child,...)`` text: an included rule child is expanded the
  same way, an excluded one is the slot ``_``, and lexical leaves are always written, so
  ``S -> V twice(V -> U(_),twice)`` is a parent-child pair and
  ``C -> S and S(S -> V(_),and,S -> V(_))`` a parent with all its children. With
  ``abstract_lexical`` every lexical item is written ``*``, so compounds describe
  structure only.

Why up to 5 nodes: compound divergence with exponent 0.1 is close to the share of test
compound mass never seen in train. Two-node compounds (parent-child) occur in nearly every
example, so with them alone no split of SCAN gets far (~0.1 here); larger sub-derivations
are specific enough that a split can keep them out of train, as in Keysers et al. (rule
subgraphs of up to 5 nodes). The MCD split of SCAN reaches D_C ~0.73 with this definition.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterator

Tree = Any  # list [rule, *children] or a str leaf
COMPOUND_MAX_NODES = 5


def is_tree(value: Any) -> bool:
    """Whether value is a derivation: a non-empty str leaf, or a list ``[rule, child, ...]``
    with a non-empty str rule and trees as children (checked without recursion). A list met
    twice (a cycle, or a node shared by two parents: what the Python API can build, never
    JSON) makes it no tree, so the check ends on any value."""
    stack = [value]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if not node:
                return False
            continue
        if not isinstance(node, list) or not node or not isinstance(node[0], str) or not node[0] or id(node) in seen:
            return False
        seen.add(id(node))
        stack.extend(node[1:])
    return True


def internal_nodes(tree: Tree) -> Iterator[list[Any]]:
    """Internal nodes in pre-order (a node shared by two parents once per parent); ValueError
    for a structure that contains itself (a cycle: what the Python API can build, never JSON)."""
    yield from _nodes(tree, leaves=False, preorder=True)


def tree_atoms(tree: Tree) -> Counter[str]:
    """Rules and lexical items of a derivation, with multiplicity; ValueError for a structure
    that contains itself (see internal_nodes)."""
    found: Counter[str] = Counter()
    for node in _nodes(tree, leaves=True, preorder=False):
        found[node if isinstance(node, str) else str(node[0])] += 1
    return found


def _nodes(tree: Tree, leaves: bool, preorder: bool) -> list[Any]:
    """Every internal node (and, with leaves, every str leaf): in pre-order, or else children
    last to first (the order tree_atoms has always counted in). A list met twice sends the
    walk to _shared_nodes, which tells sharing (fine) from a cycle (ValueError)."""
    found: list[Any] = []
    seen: set[int] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if leaves:
                found.append(node)
            continue
        if id(node) in seen:
            return _shared_nodes(tree, leaves, preorder)
        seen.add(id(node))
        found.append(node)
        stack.extend(reversed(node[1:]) if preorder else node[1:])
    return found


def _shared_nodes(tree: Tree, leaves: bool, preorder: bool) -> list[Any]:
    """_nodes of a structure that shares a node, tracking the path from the root so that a
    node among its own ancestors (a cycle) is a ValueError instead of an endless walk."""
    found: list[Any] = []
    path: set[int] = set()
    stack: list[tuple[Any, bool]] = [(tree, False)]
    while stack:
        node, leaving = stack.pop()
        if leaving:
            path.discard(id(node))
            continue
        if isinstance(node, str):
            if leaves:
                found.append(node)
            continue
        if id(node) in path:
            raise ValueError("the structure contains itself (a cycle): it is no derivation tree")
        path.add(id(node))
        found.append(node)
        stack.append((node, True))
        stack.extend((child, False) for child in (reversed(node[1:]) if preorder else node[1:]))
    return found


def tree_compounds(tree: Tree, abstract_lexical: bool = False, max_nodes: int = COMPOUND_MAX_NODES) -> Counter[str]:
    """Compounds: connected sub-derivations of 2..max_nodes rule nodes (see module doc)."""
    return tree_subgraphs(tree, max_nodes, 2, abstract_lexical)


def structure_atoms(example: Any) -> Counter[str] | None:
    """Atoms of a record's own ``structure``; None when it has none (for tasks whose input does
    not determine the derivation: splits then read the input's tokens)."""
    tree = example.get("structure")
    return None if tree is None else tree_atoms(tree)


def structure_compounds(example: Any, abstract_lexical: bool = False) -> Counter[str] | None:
    """Compounds of a record's own ``structure``; None when it has none (see structure_atoms)."""
    tree = example.get("structure")
    return None if tree is None else tree_compounds(tree, abstract_lexical)


def tree_depth(tree: Tree) -> int:
    """Number of internal nodes on the longest root-to-leaf path."""
    if isinstance(tree, str):
        return 0
    return 1 + max((tree_depth(child) for child in tree[1:]), default=0)


def rule_count(tree: Tree) -> int:
    """Number of internal nodes (rule applications)."""
    return sum(1 for _ in internal_nodes(tree))


def _rooted_subgraphs(
    node: list[Any], budget: int, abstract_lexical: bool, memo: dict[tuple[int, int], list[tuple[str, int]]]
) -> list[tuple[str, int]]:
    """Connected subgraphs rooted at node with at most budget rule nodes: (text, size).

    A child rule node is either expanded (recursively) or written as the slot ``_``;
    lexical leaves are always written (``*`` when abstract_lexical). ``memo`` holds the
    answers for (id(node), budget) of one tree, so each is built once.
    """
    key = (id(node), budget)
    found = memo.get(key)
    if found is not None:
        return found
    partial: list[tuple[tuple[str, ...], int]] = [((), 1)]
    for child in node[1:]:
        if isinstance(child, str):
            text = "*" if abstract_lexical else child
            partial = [(parts + (text,), size) for parts, size in partial]
            continue
        grown: list[tuple[tuple[str, ...], int]] = []
        for parts, size in partial:
            grown.append((parts + ("_",), size))
            if size < budget:
                for text, extra in _rooted_subgraphs(child, budget - size, abstract_lexical, memo):
                    grown.append((parts + (text,), size + extra))
        partial = grown
    rule = str(node[0])
    found = [(f"{rule}({','.join(parts)})" if parts else rule, size) for parts, size in partial]
    memo[key] = found
    return found


def tree_subgraphs(tree: Tree, max_nodes: int = 3, min_nodes: int = 2, abstract_lexical: bool = False) -> Counter[str]:
    """Connected rule subgraphs of min_nodes..max_nodes rule nodes, with multiplicity.

    Each subgraph is written as nested ``rule(child,...)`` text: expanded children are
    written the same way, unexpanded rule children as ``_``, lexical leaves as themselves.
    """
    found: Counter[str] = Counter()
    memo: dict[tuple[int, int], list[tuple[str, int]]] = {}
    for node in internal_nodes(tree):
        for text, size in _rooted_subgraphs(node, max_nodes, abstract_lexical, memo):
            if size >= min_nodes:
                found[text] += 1
    return found
