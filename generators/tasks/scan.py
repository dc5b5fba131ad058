"""SCAN (Lake & Baroni 2018): commands to action sequences, generated from the grammar.

Grammar of the original task (every command is generated from it, never read from a file)::

    C -> S and S | S after S | S
    S -> V twice | V thrice | V
    V -> D[1] opposite D[2] | D[1] around D[2] | D | U
    D -> U left | U right | turn left | turn right
    U -> walk | look | run | jump

``D[1]`` is the first word of a D (a U or ``turn``), ``D[2]`` its direction. Meaning:
``walk`` -> I_WALK (likewise look, run, jump); ``turn`` does nothing on its own;
``x left`` -> I_TURN_LEFT x; ``x opposite left`` -> I_TURN_LEFT I_TURN_LEFT x;
``x around left`` -> (I_TURN_LEFT x) four times (``turn ...`` omits the x);
``s twice``/``s thrice`` repeat s; ``c1 and c2`` -> c1 c2; ``c1 after c2`` -> c2 c1.
It has 20,910 distinct commands (at most 9 words, at most 48 actions).

Extension (all knobs at their defaults give the original grammar exactly):

- ``max_conjuncts`` > 2 adds ``C -> C and S | C after S`` (the inner C is itself a
  conjunction, never a bare S, so every command has one derivation): conjunctions
  associate to the left, ``a and b after c`` = ``(a and b) after c`` -> c a b.
- ``max_repeats`` > 1 adds ``S -> S twice | S thrice`` (the inner S is itself repeated):
  ``walk twice thrice`` = ``(walk twice) thrice`` -> I_WALK x 6. ``max_repeats`` = 0
  removes twice/thrice. No new words are introduced.
- ``min_actions``/``max_actions`` keep only commands whose output has that many actions
  (the SCAN length split is 1..22 vs 24..48); ``min_conjuncts``/``max_conjuncts`` bound
  the number of S joined by and/after.

Distribution: ``generate`` draws uniformly from the set of commands the parameters allow
(the set ``enumerate`` lists), exactly, without rejection: the number of conjuncts and the
action count are drawn from their exact joint counts, then each S given the actions still
to place (counts by dynamic programming, cached per parameters).

Derivations (``structure``): ``[rule, children...]`` with every command word a leaf, so
the leaves read left to right are the command. Rules: ``C -> S``, ``C -> S and S``,
``C -> S after S``, ``C -> C and S``, ``C -> C after S``, ``S -> V``, ``S -> V twice``,
``S -> V thrice``, ``S -> S twice``, ``S -> S thrice``, ``V -> D[1] opposite D[2]``,
``V -> D[1] around D[2]``, ``V -> D``, ``V -> U``, ``D -> U left``, ``D -> U right``,
``D -> turn left``, ``D -> turn right``, ``U -> walk`` ... ``U -> jump``. In
``V -> D[1] opposite D[2]`` the children are the U subtree (or the leaf ``turn``), the
leaf ``opposite`` and the direction leaf, so the rule ``D -> turn left`` occurs exactly in
the commands containing the words "turn left" (the SCAN addprim_turn_left test set), the
leaf ``jump`` exactly in those containing "jump", and "around right" is a compound of the
atoms ``around`` and ``right`` (the template split).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from collections import Counter
from functools import lru_cache
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from gengap.generators.batch import Batch
from gengap.generators.derivation import Tree, tree_atoms, tree_compounds
from gengap.generators.gc_pause import paused_gc
from gengap.generators.lexicons import LexiconSpec, WordClass, lexical, lexicon_knob
from gengap.generators.params import ParamError, Params, knob
from gengap.generators.registry import register
from gengap.generators.task import Task
from gengap.generators.traces import least_to_most, trace_knob, with_traces

PRIMITIVES = ("walk", "look", "run", "jump")
DIRECTIONS = ("left", "right")
MODIFIERS = ("opposite", "around")
REPEATS = ("twice", "thrice")
CONNECTIVES = ("and", "after")
TURN = "turn"

# made-up words a lexicon k > 0 may write each class of command words with, besides the class's own
UNFAMILIAR = {
    "primitive": ("dax", "wif", "lug", "zup", "fep", "kiki", "blick", "tufa"),
    "direction": ("lorp", "trel"),
    "modifier": ("gorm", "besk"),
    "repeat": ("zib", "nolt"),
    "connective": ("vop", "jeb"),
    "turn": ("skeb",),
}


def _word_classes() -> tuple[WordClass, ...]:
    """SCAN's command words by role class; the actions stay those of the roles."""
    own = {"primitive": PRIMITIVES, "direction": DIRECTIONS, "modifier": MODIFIERS, "repeat": REPEATS,
           "connective": CONNECTIVES, "turn": (TURN,)}  # fmt: skip
    return tuple(WordClass.permuted(name, words, UNFAMILIAR[name]) for name, words in own.items())


LEXICON = LexiconSpec("scan", _word_classes)
MAX_ACTIONS = 5000
MAX_CONJUNCTS = 250
MAX_REPEATS = 4
ENUMERATE_LIMIT = 2_000_000  # enumerate refuses larger sets (they would not fit in memory)
ORIGINAL_MAX_S_ACTIONS = 24  # "U around left thrice"
LEVEL_BANDS = (  # action-count bands of levels 1..10
    (1, 2), (3, 6), (7, 12), (13, 22), (24, 48), (49, 96), (97, 144), (145, 240), (241, 360), (361, 500),
)


@dataclasses.dataclass(frozen=True)
class ScanParams(Params):
    """Grammar extension knobs and the band of commands kept (defaults: original SCAN)."""

    min_conjuncts: int = knob(1, lo=1, hi=MAX_CONJUNCTS, doc="fewest S joined by and/after")
    max_conjuncts: int = knob(
        2,
        lo=1,
        hi=MAX_CONJUNCTS,
        doc="most S joined by and/after (2 = original; more adds C -> C and/after S, left-associative)",
    )
    max_repeats: int = knob(
        1,
        lo=0,
        hi=MAX_REPEATS,
        doc="most twice/thrice words after a V (1 = original; 2 allows 'walk twice thrice' = walk x6; 0 none)",
    )
    min_actions: int = knob(1, lo=1, hi=MAX_ACTIONS, doc="fewest output actions of a command")
    max_actions: int = knob(
        MAX_ACTIONS, lo=1, hi=MAX_ACTIONS, doc="most output actions of a command (the default keeps every command)"
    )
    trace: str = trace_knob("least_to_most")
    lexicon: int = lexicon_knob()

    def check_consistency(self) -> None:
        self.require(
            self.min_conjuncts <= self.max_conjuncts,
            f"parameter min_conjuncts={self.min_conjuncts} exceeds max_conjuncts={self.max_conjuncts}",
        )
        self.require(
            self.min_actions <= self.max_actions,
            f"parameter min_actions={self.min_actions} exceeds max_actions={self.max_actions}",
        )
        reachable = _band_reachable(
            self.max_repeats, self.min_conjuncts, self.max_conjuncts, self.min_actions, self.max_actions
        )
        self.require(
            reachable,
            f"no command with {self.min_conjuncts}..{self.max_conjuncts} conjuncts and "
            f"max_repeats={self.max_repeats} has {self.min_actions}..{self.max_actions} actions",
        )


# -- phrases: the V and S of the grammar, precomputed -----------------------------------------


@dataclasses.dataclass(frozen=True)
class Phrase:
    """A V or S phrase: its words, its actions, its derivation (JSON), depth and rule count."""

    words: str
    actions: tuple[str, ...]
    tree: str
    depth: int
    rules: int


def _node(rule: str, *children: str) -> str:
    """JSON text of an internal node; children are JSON texts."""
    return "[" + ",".join([json.dumps(rule), *children]) + "]"


def _leaf(word: str) -> str:
    return json.dumps(word)


def _turn(direction: str) -> str:
    return f"I_TURN_{direction.upper()}"


def _first_word(first: str) -> tuple[str, tuple[str, ...], int, int]:
    """D[1] of a phrase: (tree JSON, actions, depth, rules) of a U, or of the bare word turn."""
    if first == TURN:
        return _leaf(TURN), (), 0, 0
    return _node(f"U -> {first}", _leaf(first)), (f"I_{first.upper()}",), 1, 1


def verb_phrases() -> list[Phrase]:
    """The 34 V phrases in grammar order: opposite, around, D, U (D in its own rule order)."""
    firsts_by_d = [(u, d) for d in DIRECTIONS for u in PRIMITIVES] + [(TURN, d) for d in DIRECTIONS]
    out: list[Phrase] = []
    for modifier in MODIFIERS:
        for first, direction in firsts_by_d:
            tree, acts, depth, rules = _first_word(first)
            turn = _turn(direction)
            actions = (turn, turn, *acts) if modifier == "opposite" else (turn, *acts) * 4
            rule = f"V -> D[1] {modifier} D[2]"
            out.append(
                Phrase(
                    f"{first} {modifier} {direction}",
                    actions,
                    _node(rule, tree, _leaf(modifier), _leaf(direction)),
                    depth + 1,
                    rules + 1,
                )
            )
    for first, direction in firsts_by_d:
        tree, acts, depth, rules = _first_word(first)
        d_rule = f"D -> {'U' if first != TURN else TURN} {direction}"
        d_tree = _node(d_rule, tree, _leaf(direction))
        actions = (_turn(direction), *acts)
        out.append(Phrase(f"{first} {direction}", actions, _node("V -> D", d_tree), depth + 2, rules + 2))
    for first in PRIMITIVES:
        tree, acts, depth, rules = _first_word(first)
        out.append(Phrase(first, acts, _node("V -> U", tree), depth + 1, rules + 1))
    return out


def _repeat_sequences(max_repeats: int) -> list[tuple[str, ...]]:
    """Sequences of twice/thrice words after a V: none first, then by length, lexicographic."""
    return [seq for length in range(max_repeats + 1) for seq in itertools.product(REPEATS, repeat=length)]


def sentence(verb: Phrase, repeats: Sequence[str]) -> Phrase:
    """The S phrase ``verb repeats...`` (its derivation stacks S -> S twice/thrice)."""
    if not repeats:
        return Phrase(verb.words, verb.actions, _node("S -> V", verb.tree), verb.depth + 1, verb.rules + 1)
    tree, actions, words = verb.tree, verb.actions, verb.words
    for i, word in enumerate(repeats):
        tree = _node(f"S -> {'V' if i == 0 else 'S'} {word}", tree, _leaf(word))
        actions = actions * (2 if word == "twice" else 3)
        words = f"{words} {word}"
    return Phrase(words, actions, tree, verb.depth + len(repeats), verb.rules + len(repeats))


@dataclasses.dataclass(frozen=True)
class Sentences:
    """All S phrases of a grammar (repetition sequences outer, V inner) as parallel columns."""

    words: list[str]
    actions: list[str]  # space-joined action tokens
    trees: list[str]
    depth: list[int]
    rules: list[int]
    num_actions: np.ndarray  # (numS,) int64
    values: np.ndarray  # distinct action counts, ascending
    counts: np.ndarray  # how many S have each of those counts
    starts: np.ndarray  # where each count's S begin in `by_actions`
    by_actions: np.ndarray  # S indices sorted (stably) by action count


@lru_cache(maxsize=None)
def sentences(max_repeats: int) -> Sentences:
    phrases = [sentence(v, seq) for seq in _repeat_sequences(max_repeats) for v in verb_phrases()]
    num_actions = np.array([len(p.actions) for p in phrases], dtype=np.int64)
    values, counts = np.unique(num_actions, return_counts=True)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    return Sentences(
        [p.words for p in phrases],
        [" ".join(p.actions) for p in phrases],
        [p.tree for p in phrases],
        [p.depth for p in phrases],
        [p.rules for p in phrases],
        num_actions,
        values.astype(np.int64),
        counts.astype(np.int64),
        starts,
        np.argsort(num_actions, kind="stable").astype(np.int64),
    )


# -- counting: how many k-tuples of S have t actions ------------------------------------------


def _cap(max_repeats: int, max_conjuncts: int, max_actions: int) -> int:
    return min(max_actions, max_conjuncts * int(sentences(max_repeats).values[-1]))


@lru_cache(maxsize=64)
def _reach(max_repeats: int, max_conjuncts: int, cap: int) -> np.ndarray:
    """reach[m, t]: whether some m-tuple of S has exactly t actions (t <= cap)."""
    values = sentences(max_repeats).values
    reach = np.zeros((max_conjuncts + 1, cap + 1), dtype=bool)
    reach[0, 0] = True
    for m in range(1, max_conjuncts + 1):
        for a in values[values <= cap]:
            reach[m, a:] |= reach[m - 1, : cap + 1 - a]
    return reach


@lru_cache(maxsize=256)
def _band_reachable(max_repeats: int, lo_c: int, hi_c: int, lo_a: int, hi_a: int) -> bool:
    cap = _cap(max_repeats, hi_c, hi_a)
    if lo_a > cap:
        return False
    return bool(_reach(max_repeats, hi_c, cap)[lo_c : hi_c + 1, lo_a : cap + 1].any())


@lru_cache(maxsize=64)
def _log_ways(max_repeats: int, max_conjuncts: int, cap: int) -> np.ndarray:
    """log of the number of ordered m-tuples of S with exactly t actions, shape (m+1, cap+1)."""
    table = sentences(max_repeats)
    keep = table.values <= cap
    values, log_counts = table.values[keep], np.log(table.counts[keep].astype(np.float64))
    out = np.full((max_conjuncts + 1, cap + 1), -np.inf)
    out[0, 0] = 0.0
    shifted = np.full((len(values), cap + 1), -np.inf)
    for m in range(1, max_conjuncts + 1):
        shifted.fill(-np.inf)
        for i, a in enumerate(values):
            shifted[i, a:] = out[m - 1, : cap + 1 - a] + log_counts[i]
        out[m] = np.logaddexp.reduce(shifted, axis=0)
    return out


@lru_cache(maxsize=256)
def count_commands(params: ScanParams) -> int:
    """Exact number of commands params allow (Python integers)."""
    table = sentences(params.max_repeats)
    cap = _cap(params.max_repeats, params.max_conjuncts, params.max_actions)
    keep = table.values <= cap
    ways = np.zeros(cap + 1, dtype=object)
    ways[0] = 1
    total = 0
    for m in range(1, params.max_conjuncts + 1):
        nxt = np.zeros(cap + 1, dtype=object)
        for a, c in zip(table.values[keep].tolist(), table.counts[keep].tolist()):
            nxt[a:] += ways[: cap + 1 - a] * c
        ways = nxt
        if m >= params.min_conjuncts:
            total += 2 ** (m - 1) * int(sum(ways[params.min_actions : cap + 1].tolist()))
    return total


# -- rendering commands from S indices and connectives ---------------------------------------


def _constructor(tree: Tree) -> Callable[[], Tree]:
    """A function returning a fresh copy of a derivation made of lists and strings.

    The copy is built by a compiled list display (the repr of the tree, which holds only
    our own rule names and words), several times faster than json.loads or deepcopy.
    """
    return eval("lambda: " + repr(tree))  # noqa: S307 - input is our own literal


@lru_cache(maxsize=None)
def _sentence_columns(max_repeats: int) -> tuple[list[bytes], list[bytes], list[Callable[[], Tree]]]:
    table = sentences(max_repeats)
    return (
        [w.encode() for w in table.words],
        [a.encode() for a in table.actions],
        [_constructor(json.loads(t)) for t in table.trees],
    )


_FIRST_RULE = tuple(f"C -> S {c} S" for c in CONNECTIVES)
_LATER_RULE = tuple(f"C -> C {c} S" for c in CONNECTIVES)
_CONNECTIVE_BYTES = tuple(c.encode() for c in CONNECTIVES)


def _render(rows: Sequence[tuple[Sequence[int], Sequence[int]]], max_repeats: int) -> Batch:
    """Batch of commands, each given as (S indices, connective indices 0=and 1=after)."""
    with paused_gc():  # the derivations hold no cycles (see gengap.generators.gc_pause)
        return _render_rows(rows, max_repeats)


def _render_rows(rows: Sequence[tuple[Sequence[int], Sequence[int]]], max_repeats: int) -> Batch:
    """The records of one batch share the derivation of each S phrase they use (one fresh
    copy per batch, never the cached template): millions fewer lists for the collector to
    trace. Derivations are read-only."""
    table = sentences(max_repeats)
    words, actions, fresh = _sentence_columns(max_repeats)
    shared: list[Tree] = [None] * len(fresh)

    def make(index: int) -> Tree:
        tree = shared[index]
        if tree is None:
            tree = shared[index] = fresh[index]()
        return tree

    s_depth, s_rules = table.depth, table.rules
    n = len(rows)
    inputs: list[bytes] = [b""] * n
    targets: list[bytes] = [b""] * n
    structure: list[Tree] = [None] * n
    depth: list[int] = [0] * n
    rules: list[int] = [0] * n
    conjuncts: list[int] = [0] * n
    for r, (s, conns) in enumerate(rows):
        k = len(s)
        conjuncts[r] = k
        first = s[0]
        if k == 1:
            inputs[r] = words[first]
            targets[r] = actions[first]
            structure[r] = ["C -> S", make(first)]
            depth[r] = 1 + s_depth[first]
            rules[r] = 1 + s_rules[first]
            continue
        parts = [words[first]] * (2 * k - 1)
        parts[0::2] = [words[i] for i in s]
        parts[1::2] = [_CONNECTIVE_BYTES[c] for c in conns]
        inputs[r] = b" ".join(parts)
        # c1 and c2 -> c1 c2; c1 after c2 -> c2 c1 (left-associative): every S after an
        # "after" goes in front, in reverse order; every S after an "and" at the back
        later = [actions[i] for i in s[1:]]
        front = [a for a, c in zip(later, conns) if c]
        front.reverse()
        front.append(actions[first])
        front += [a for a, c in zip(later, conns) if not c]
        targets[r] = b" ".join(front)
        subtrees = [shared[i] or make(i) for i in s]  # a derivation is a non-empty list
        c = conns[0]
        tree = [_FIRST_RULE[c], subtrees[0], CONNECTIVES[c], subtrees[1]]
        for c, subtree in zip(conns[1:], subtrees[2:]):
            tree = [_LATER_RULE[c], tree, CONNECTIVES[c], subtree]
        structure[r] = tree
        # the S at position j >= 1 sits under k - j C nodes, the first S under k - 1
        below = [s_depth[i] - j for j, i in enumerate(s)]
        below[0] -= 1
        depth[r] = k + max(below)
        rules[r] = k - 1 + sum([s_rules[i] for i in s])
    features = {
        "depth": np.array(depth, dtype=np.int64),
        "rules": np.array(rules, dtype=np.int64),
        "conjuncts": np.array(conjuncts, dtype=np.int64),
    }
    return Batch(np.array(inputs, dtype=bytes), np.array(targets, dtype=bytes), features, structure)


# -- sampling ------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Sampler:
    """Tables for exact uniform sampling of the commands one ScanParams allows."""

    table: Sentences
    log_ways: np.ndarray  # (max_conjuncts + 1, cap + 1)
    pairs: np.ndarray  # (P, 2): (conjuncts, actions) with a positive count
    cdf: np.ndarray  # (P,) cumulative probability of those pairs
    values: np.ndarray  # S action counts usable (<= cap)
    log_counts: np.ndarray
    log_size: float  # natural log of the number of commands allowed


@lru_cache(maxsize=64)
def _sampler(params: ScanParams) -> _Sampler:
    table = sentences(params.max_repeats)
    cap = _cap(params.max_repeats, params.max_conjuncts, params.max_actions)
    log_ways = _log_ways(params.max_repeats, params.max_conjuncts, cap)
    ks = np.arange(params.min_conjuncts, params.max_conjuncts + 1)
    ts = np.arange(params.min_actions, cap + 1)
    weight = log_ways[ks][:, ts] + (ks[:, None] - 1) * math.log(2.0)
    kk, tt = np.meshgrid(ks, ts, indexing="ij")
    live = np.isfinite(weight)
    pairs = np.stack([kk[live], tt[live]], axis=1).astype(np.int64)
    top = weight[live].max()
    cdf = np.cumsum(np.exp(weight[live] - top))
    keep = table.values <= cap
    log_counts = np.log(table.counts[keep].astype(np.float64))
    log_size = float(top + math.log(cdf[-1]))
    return _Sampler(table, log_ways, pairs, cdf / cdf[-1], table.values[keep], log_counts, log_size)


def _sample(rng: np.random.Generator, n: int, params: ScanParams) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Uniform commands: conjunct counts (n,), S indices (n, K) (-1 past k), connectives (n, K-1)."""
    sampler = _sampler(params)
    table = sampler.table
    width = params.max_conjuncts
    chosen = np.minimum(np.searchsorted(sampler.cdf, rng.random(n), side="right"), len(sampler.cdf) - 1)
    k = sampler.pairs[chosen, 0]
    remaining = sampler.pairs[chosen, 1].copy()
    s_idx = np.full((n, width), -1, dtype=np.int64)
    for j in range(width):
        rows = np.flatnonzero(k > j)
        if len(rows) == 0:
            break
        rest = (k[rows] - j - 1)[:, None]  # conjuncts still to place after this one
        left = remaining[rows][:, None] - sampler.values[None, :]
        logw = np.where(left >= 0, sampler.log_ways[rest, np.maximum(left, 0)], -np.inf) + sampler.log_counts
        w = np.exp(logw - logw.max(axis=1, keepdims=True))
        cum = np.cumsum(w, axis=1)
        u = rng.random(len(rows))[:, None] * cum[:, -1:]
        pick = np.minimum((cum <= u).sum(axis=1), len(sampler.values) - 1)
        # map the picked action count back to its index in table.values
        value = sampler.values[pick]
        group = np.searchsorted(table.values, value)
        size = table.counts[group]
        offset = np.minimum((rng.random(len(rows)) * size).astype(np.int64), size - 1)
        s_idx[rows, j] = table.by_actions[table.starts[group] + offset]
        remaining[rows] -= value
    conns = rng.integers(0, 2, size=(n, max(width - 1, 0)), dtype=np.int64)
    return k, s_idx, conns


# -- enumeration ---------------------------------------------------------------------------


def _tuples(params: ScanParams) -> Iterator[tuple[list[int], tuple[int, ...]]]:
    """Every (S indices, connectives) params allow: by conjunct count, connectives, S indices."""
    table = sentences(params.max_repeats)
    cap = _cap(params.max_repeats, params.max_conjuncts, params.max_actions)
    acts = table.num_actions.tolist()
    num_s = len(acts)
    # finish[m][t]: m more S can bring a running total t into [min_actions, max_actions]
    finish = np.zeros((params.max_conjuncts + 1, cap + 1), dtype=bool)
    finish[0, params.min_actions : cap + 1] = True
    for m in range(1, params.max_conjuncts + 1):
        for a in sorted(set(acts)):
            if a <= cap:
                finish[m, : cap + 1 - a] |= finish[m - 1, a:]
    ok = finish.tolist()

    def extend(prefix: list[int], total: int, k: int) -> Iterator[list[int]]:
        m = k - len(prefix)
        if m == 0:
            yield list(prefix)
            return
        row = ok[m - 1]
        for i in range(num_s):
            t = total + acts[i]
            if t <= cap and row[t]:
                prefix.append(i)
                yield from extend(prefix, t, k)
                prefix.pop()

    for k in range(params.min_conjuncts, params.max_conjuncts + 1):
        if not finish[k, 0]:
            continue
        for conns in itertools.product(range(len(CONNECTIVES)), repeat=k - 1):
            for s in extend([], 0, k):
                yield s, conns


# -- derivation of a command read from its words (records without structure) ---------------


@lru_cache(maxsize=1)
def _verb_trees() -> dict[str, Phrase]:
    return {v.words: v for v in verb_phrases()}


def derivation(command: str) -> Tree:
    """The derivation tree of a command string (ValueError when it is not in the grammar)."""
    tokens = command.split()
    cuts = [i for i, w in enumerate(tokens) if w in CONNECTIVES]
    bounds = [-1, *cuts, len(tokens)]
    texts = []
    for a, b in zip(bounds, bounds[1:]):
        part = tokens[a + 1 : b]
        reps = 0
        while reps < len(part) and part[len(part) - 1 - reps] in REPEATS:
            reps += 1
        verb = _verb_trees().get(" ".join(part[: len(part) - reps]))
        if verb is None:
            raise ValueError(f"not a SCAN phrase: {' '.join(part)!r}")
        texts.append(sentence(verb, part[len(part) - reps :]).tree)
    if len(texts) == 1:
        return json.loads('["C -> S",' + texts[0] + "]")
    words = [tokens[c] for c in cuts]
    tree = f'["C -> S {words[0]} S",{texts[0]},"{words[0]}",{texts[1]}]'
    for word, text in zip(words[1:], texts[2:]):
        tree = f'["C -> C {word} S",{tree},"{word}",{text}]'
    return json.loads(tree)


# -- the independent interpreter used by solve ------------------------------------------------

_ACTION_OF = {"walk": "I_WALK", "look": "I_LOOK", "run": "I_RUN", "jump": "I_JUMP"}
_TIMES = {"twice": 2, "thrice": 3}


def interpret(words: list[str]) -> list[str]:
    """Actions of a command (list of words), by recursive descent; ValueError if malformed.

    C := C ("and" | "after") S | S   (left-associative);  S := S ("twice" | "thrice") | V.
    """
    for i in range(len(words) - 1, -1, -1):
        if words[i] in ("and", "after"):
            left, right = interpret(words[:i]), _interpret_s(words[i + 1 :])
            return left + right if words[i] == "and" else right + left
    return _interpret_s(words)


def _interpret_s(words: list[str]) -> list[str]:
    if words and words[-1] in _TIMES:
        return _interpret_s(words[:-1]) * _TIMES[words[-1]]
    return _interpret_v(words)


def _interpret_v(words: list[str]) -> list[str]:
    if not words or len(words) > 3:
        raise ValueError(f"malformed phrase {' '.join(words)!r}")
    head = words[0]
    if head != "turn" and head not in _ACTION_OF:
        raise ValueError(f"expected a verb, got {head!r}")
    act = [] if head == "turn" else [_ACTION_OF[head]]
    if len(words) == 1:
        if head == "turn":
            raise ValueError("'turn' needs a direction")
        return act
    direction = words[-1]
    if direction not in ("left", "right"):
        raise ValueError(f"expected left or right, got {direction!r}")
    turn = ["I_TURN_LEFT" if direction == "left" else "I_TURN_RIGHT"]
    if len(words) == 2:
        return turn + act
    if words[1] == "opposite":
        return turn + turn + act
    if words[1] == "around":
        return (turn + act) * 4
    raise ValueError(f"expected opposite or around, got {words[1]!r}")


# -- least-to-most decomposition (Zhou et al. 2022) -------------------------------------------

_DECOMPOSED = ("C ->", "S ->", "V ->")  # the nodes whose words are a sub-command


def subcommands(tree: Tree) -> list[tuple[int, int]]:
    """The word spans [start, end) of a derivation's sub-commands, least to most: every C, S and
    V node in post-order (children before their parent, left to right), a span listed once
    (the first time: a node with its child's words adds nothing), the whole command left out."""
    spans: list[tuple[int, int]] = []

    def walk(node: Tree, start: int) -> int:
        if isinstance(node, str):
            return start + 1
        end = start
        for child in node[1:]:
            end = walk(child, end)
        if str(node[0]).startswith(_DECOMPOSED) and (start, end) not in spans:
            spans.append((start, end))
        return end

    total = walk(tree, 0)
    return [span for span in spans if span != (0, total)]


# -- the task --------------------------------------------------------------------------------


@register
@lexical(LEXICON)
class Scan(Task[ScanParams]):
    """SCAN navigation commands -> action sequences (original grammar by default)."""

    name = "scan"
    family = "compositional"
    description = "SCAN command (Lake & Baroni 2018 grammar, optionally extended) -> action sequence"
    params_type = ScanParams
    size_knob = (
        "number of output actions (min_actions..max_actions); "
        "with_size raises max_conjuncts until the band is reachable"
    )
    level_feature = "output_length"
    test_caps = {"min_conjuncts": 3, "max_conjuncts": 6, "max_repeats": 2}
    trace_formats = {
        "least_to_most": "the sub-commands from the smallest up (every V, S and C phrase of the derivation, children "
        "before parents, left to right, each once, the whole command left out), each as '<words> = <its actions> |'",
    }

    def with_size(self, lo: int, hi: int) -> ScanParams:
        """Default grammar keeping commands of lo..hi actions, with just enough conjuncts.

        max_conjuncts becomes the smallest count >= 2 whose longest commands reach hi
        actions (24 per S), raised further if lo..hi is still unreachable (e.g. 23..23).
        So with_size(1, 22) and with_size(24, 48) are the two sides of the SCAN length split.
        """
        base = self.default_params()
        k = max(base.max_conjuncts, -(-hi // ORIGINAL_MAX_S_ACTIONS))
        while lo <= hi and k < MAX_CONJUNCTS and not _band_reachable(base.max_repeats, 1, k, lo, hi):
            k += 1
        return base.replace(min_actions=lo, max_actions=hi, max_conjuncts=min(k, MAX_CONJUNCTS))

    def levels(self) -> dict[int, ScanParams]:
        """Action-count bands: 1-5 cover the original grammar (1-4 the length-split train
        range <= 22, 5 its test range 24..48); 6-10 reach 500 actions with more conjuncts."""
        return {k: self.with_size(lo, hi) for k, (lo, hi) in enumerate(LEVEL_BANDS, start=1)}

    def generate(self, rng: np.random.Generator, n: int, params: ScanParams) -> Batch:
        """n commands drawn uniformly (exactly) from those params allow, with their actions."""
        k, s_idx, conns = _sample(rng, n, params)
        rows = [(s[:kk], c[: kk - 1]) for kk, s, c in zip(k.tolist(), s_idx.tolist(), conns.tolist())]
        return with_traces(self, _render(rows, params.max_repeats), params.trace)

    def enumerate(self, params: ScanParams) -> Batch:
        """Every command params allow, once each, ordered by conjunct count, then connectives
        (and before after, left to right), then S indices (repetitions outer, V in grammar
        order inner). ParamError when more than ENUMERATE_LIMIT commands."""
        self.enumeration_size(params)
        return with_traces(self, _render(list(_tuples(params)), params.max_repeats), params.trace)

    def enumeration_size(self, params: ScanParams) -> int:
        """The number of commands params allow; ParamError when more than ENUMERATE_LIMIT."""
        if _sampler(params).log_size > math.log(ENUMERATE_LIMIT) + 1.0:
            digits = _sampler(params).log_size / math.log(10)
            raise ParamError(
                f"scan: about 10^{digits:.1f} commands, too many to enumerate (limit {ENUMERATE_LIMIT})"
            )
        size = count_commands(params)
        if size > ENUMERATE_LIMIT:
            raise ParamError(f"scan: {size} commands are too many to enumerate (limit {ENUMERATE_LIMIT})")
        return size

    def solve(self, example: Mapping[str, Any]) -> str:
        words = example["input"].split()
        if not words:
            raise ValueError("empty command")
        return " ".join(interpret(words))

    def trace_tokens(self, example: Mapping[str, Any], fmt: str) -> list[str]:
        """least_to_most: each sub-command (gengap.generators.tasks.scan.subcommands) and its actions."""
        words = example["input"].split()
        parts = [words[a:b] for a, b in subcommands(derivation(example["input"]))]
        return least_to_most((part, interpret(part)) for part in parts)

    def input_space_size(self, params: ScanParams) -> int | None:
        cap = _cap(params.max_repeats, params.max_conjuncts, params.max_actions)
        work = params.max_conjuncts * len(sentences(params.max_repeats).values) * (cap + 1)
        return count_commands(params) if work <= 5_000_000 else None

    def derive(self, example: Mapping[str, Any]) -> Tree:
        return derivation(example["input"])

    def atoms(self, example: Mapping[str, Any]) -> Counter[str]:
        """Rules and words of the derivation (read from the input when structure is absent)."""
        return tree_atoms(self.structure_of(example))

    def compounds(self, example: Mapping[str, Any], abstract_lexical: bool = False) -> Counter[str]:
        return tree_compounds(self.structure_of(example), abstract_lexical)
