"""The rules of cfq_like's question grammar: the labels of derivation nodes.

A derivation (a record's ``structure``) is ``[rule, child, ...]`` with lexical items as string
leaves: placeholders (``M0``), verb lemmas (``direct``), role nouns (``director``), type nouns
(``film director``) and adjectives (``male``, ``French``). Fixed words (Did, Was, Who, What,
Which, did, was, that, by, 's, a/an, and, the commas, ?) are part of the rules, not leaves.

Questions::

    Q -> Did NP VP ?         Q -> Was NP NP ?          Q -> Was NP P ?
    Q -> Who VP ?            Q -> Who was P ?          Q -> Who was NP ?
    Q -> What did NP V ?     Q -> Which N VP ?         Q -> Which N was P ?
    Q -> Which N did NP V ?

and with ``constructions=cfq`` (CFQ's forms, issue 54) ``Q -> Which N was NP ?``.

Phrases::

    VP -> V NP               P -> V by NP              (a verb, or a list of verbs, and an NP or a list)
    NP -> M                  NP -> a N                 NP -> NP 's R
    N -> Adj N               N -> N that VP            N -> N that NP V          N -> N that was P
    R -> Adj R

and with ``constructions=cfq`` ``NP -> a R of NP`` (``a director of M1``: the meaning of
``M1 's director``, a rule of its own; one role, the NP one deeper and never a list), and lists of 2..5 items of VP, P, V, NP and R: ``X -> X and X``, ``X -> X , X , and X``,
``X -> X , X , X , and X``, ... Leaves: an NP's ``M`` is a placeholder, an N's a type noun, an R's a
role noun, a V's a verb lemma.
"""

from __future__ import annotations

from typing import Any

Q_DID = "Q -> Did NP VP ?"
Q_WAS_NP = "Q -> Was NP NP ?"
Q_WAS_P = "Q -> Was NP P ?"
Q_WHO = "Q -> Who VP ?"
Q_WHO_P = "Q -> Who was P ?"
Q_WHO_NP = "Q -> Who was NP ?"
Q_WHAT = "Q -> What did NP V ?"
Q_WHICH = "Q -> Which N VP ?"
Q_WHICH_P = "Q -> Which N was P ?"
Q_WHICH_DID = "Q -> Which N did NP V ?"
QUESTIONS = (Q_DID, Q_WAS_NP, Q_WAS_P, Q_WHO, Q_WHO_P, Q_WHO_NP, Q_WHAT, Q_WHICH, Q_WHICH_P, Q_WHICH_DID)
Q_WHICH_NP = "Q -> Which N was NP ?"  # constructions=cfq only
YES_NO = frozenset({Q_DID, Q_WAS_NP, Q_WAS_P})

VP_RULE = "VP -> V NP"
P_RULE = "P -> V by NP"
NP_ENTITY = "NP -> M"
NP_INDEFINITE = "NP -> a N"
NP_POSSESSIVE = "NP -> NP 's R"
NP_OF = "NP -> a R of NP"  # constructions=cfq only: [NP_OF, role, NP]
CONSTRUCTIONS = ("base", "cfq")  # the constructions parameter: base, or base and CFQ's forms (Q_WHICH_NP, NP_OF)
N_ADJ = "N -> Adj N"
N_THAT_VP = "N -> N that VP"
N_THAT_NP_V = "N -> N that NP V"
N_THAT_P = "N -> N that was P"
R_ADJ = "R -> Adj R"
RELATIVE = frozenset({N_THAT_VP, N_THAT_NP_V, N_THAT_P})
MAX_LIST = 5


def list_rule(symbol: str, size: int) -> str:
    """``X -> X and X`` for two items, ``X -> X , X , and X`` for three, and so on."""
    if size == 2:
        return f"{symbol} -> {symbol} and {symbol}"
    return f"{symbol} -> " + " , ".join([symbol] * (size - 1)) + f" , and {symbol}"


LIST_RULES = {list_rule(symbol, size): size for symbol in ("VP", "P", "V", "NP", "R") for size in range(2, MAX_LIST + 1)}


def list_items(node: Any) -> list[Any]:
    """The items of a list node, or [node] for anything else."""
    return list(node[1:]) if isinstance(node, list) and node[0] in LIST_RULES else [node]
