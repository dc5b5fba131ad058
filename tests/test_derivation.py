"""is_tree (generators/derivation.py) decides every value the Python API can build, cyclic and
shared ones included (issue 38, item 9), and accepts exactly the trees."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from hypothesis import given
from hypothesis import strategies as st

from gengap.generators.derivation import is_tree

TREES = st.recursive(
    st.text(min_size=1, max_size=5),
    lambda children: st.builds(lambda rule, kids: [rule, *kids], st.text(min_size=1, max_size=5), st.lists(children, max_size=3)),
    max_leaves=20,
)


@given(TREES)
def test_every_tree_is_a_tree(tree: object) -> None:
    assert is_tree(tree)


@given(TREES)
def test_a_tree_with_an_empty_rule_or_leaf_somewhere_is_not(tree: object) -> None:
    assert not is_tree(["R", tree, ""])
    assert not is_tree(["", tree])
    assert not is_tree(["R", tree, []])


def test_cyclic_and_shared_structures_end_as_no_tree() -> None:
    """Run in a subprocess with a timeout: before the fix the check never ended on a cycle (and a
    chain of shared nodes took 2**depth steps)."""
    code = textwrap.dedent(
        """
        from gengap.generators.derivation import is_tree
        loop = ["S -> x"]
        loop.append(loop)
        deep = ["A", loop]
        pair = ["B"]
        pair.append(["C", pair])
        shared = "leaf"
        for _ in range(200):
            shared = ["D", shared, shared]
        print(is_tree(loop), is_tree(deep), is_tree(pair), is_tree(shared))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False", "False", "False"]
