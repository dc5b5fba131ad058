"""Derivation trees of compositional examples, and their atoms and compounds.

A derivation is stored in a record's ``structure`` as nested lists: an internal node is
``[rule, child, child, ...]`` where ``rule`` names the grammar rule applied (e.g.
``"V -> D twice"``), and a leaf is a plain string: a lexical item (e.g. ``"jump"``).

- atoms: the multiset of rules and lexical items used.
- compounds: the multiset of connected sub-derivations of two levels: every
  parent-child pair ``rule => i:child`` and every parent with all its children
  ``rule => (child, child)``, where a child is named by its rule or lexical item.
  With ``abstract_lexical`` every lexical item is written ``*``, so compounds describe
  structure only.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterator

Tree = Any  # list [rule, *children] or a str leaf


def _label(node: Tree, abstract_lexical: bool) -> str:
    if isinstance(node, str):
        return "*" if abstract_lexical else node
    return str(node[0])


def internal_nodes(tree: Tree) -> Iterator[list[Any]]:
    """Internal nodes in pre-order."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            continue
        yield node
        stack.extend(reversed(node[1:]))


def tree_atoms(tree: Tree) -> Counter[str]:
    """Rules and lexical items of a derivation, with multiplicity."""
    found: Counter[str] = Counter()
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            found[node] += 1
        else:
            found[str(node[0])] += 1
            stack.extend(node[1:])
    return found


def tree_compounds(tree: Tree, abstract_lexical: bool = False) -> Counter[str]:
    """Parent-child pairs and parent-with-all-children patterns, with multiplicity."""
    found: Counter[str] = Counter()
    for node in internal_nodes(tree):
        rule = str(node[0])
        children = [_label(child, abstract_lexical) for child in node[1:]]
        if not children:
            continue
        for i, child in enumerate(children):
            found[f"{rule} => {i}:{child}"] += 1
        if len(children) > 1:
            found[f"{rule} => ({', '.join(children)})"] += 1
    return found


def tree_depth(tree: Tree) -> int:
    """Number of internal nodes on the longest root-to-leaf path."""
    if isinstance(tree, str):
        return 0
    return 1 + max((tree_depth(child) for child in tree[1:]), default=0)


def rule_count(tree: Tree) -> int:
    """Number of internal nodes (rule applications)."""
    return sum(1 for _ in internal_nodes(tree))
