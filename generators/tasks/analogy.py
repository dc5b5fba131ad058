"""Letter-string analogies (Hofstadter and Mitchell's Copycat), over a standard or a permuted alphabet.

An input shows demonstration pairs ``source -> target`` and a query ``source -> ?``; the
target is the query transformed as the demonstrations are::

    a b c -> a b d ; i j k -> ?                                   target: i j l

Every string is a run of consecutive letters of the record's alphabet (``a b c``, ``i j k``,
``x y z a``: the order is cyclic, z is followed by a). With ``alphabet=permuted`` the letters
follow a permutation of a..z that the input states first (the counterfactual-alphabet
variant: "alphabet" and the 26 letters in their order, then ``;``); ``successor`` means the
next letter of that order. Permuted alphabet ``permuted_i`` is fixed by i (seeded by the
labels ("letter_analogy", "alphabet", i)), so a split can hold one out; ``mixed`` draws the
standard alphabet or one of the permuted ones uniformly per record.

Transformations (examples on ``a b c``):

=====================  ===========================================  ===========
name                   meaning                                      a b c ->
=====================  ===========================================  ===========
``successor``          every letter -> its successor                b c d
``predecessor``        every letter -> its predecessor              z a b
``successor_last``     last letter -> its successor                 a b d
``predecessor_first``  first letter -> its predecessor              z b c
``reverse``            the string reversed                          c b a
``repeat_last``        last letter written twice                    a b c c
``extend``             the successor of the last letter appended    a b c d
``drop_first``         first letter removed (kept if it is alone)   b c
``swap_ends``          first and last letters swapped               c b a
``replace_last``       last letter replaced by the first            a b a
=====================  ===========================================  ===========

A record's transformation is a composition of ``depth`` of them (uniform in
[min_depth, max_depth], each step uniform), applied left to right.

Uniqueness (the ambiguity rule). The transformation set of a record is every composition of
1..max_depth transformations. The generator emits a puzzle only if every composition in that
set that maps each demonstration source to its target gives the same answer on the query, so
the target is the one answer the set allows. Checking this is cheap because every
transformation commutes with rotating the alphabet (run(s, L) = letters s, s+1, .., s+L-1
maps to its image of run(0, L) rotated by s): whether two compositions agree on a run depends
on its length only, so the generator compares compositions through a table of their outputs
on run(0, L) per length L. A puzzle whose query is as long as one of its demonstrations is
always unambiguous; a drawn puzzle that is not is redrawn (after 64 rounds its query length is
set to its first demonstration's).

Derivation (``structure``): the composition as nested unary rules, the last transformation at
the root and the alphabet (``standard``, ``permuted_3``) as the lexical leaf, e.g.
``["T -> reverse T", ["T -> successor_last T", "standard"]]`` for successor_last then
reverse; holdout, MCD and novelty splits read transformations and alphabets from it.

Checker: ``solve`` reads the input and ``meta.max_depth`` only (never ``structure`` or the
target) and searches the transformation set itself, in plain Python on letters (separate
from the generator's tables): the answer is the one that every composition mapping all
demonstrations gives (:func:`search_answers`; a record with several or none fails its check).
Compositions that reach the same strings are merged, so the search stays small (level 10:
compositions of up to 4 of the 10 transformations).
Features: ``depth`` (``measure`` reads it from ``structure``), ``demos``, ``query_length``,
``longest_demo``.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections import Counter
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from gengap.generators.batch import Batch
from gengap.generators.derivation import Tree, structure_atoms, structure_compounds
from gengap.generators.lexicons import LexiconSpec, WordClass, lexical, lexicon_knob
from gengap.generators.params import Params, knob
from gengap.generators.registry import register
from gengap.generators.seeding import alphabet_rng
from gengap.generators.task import Task
from gengap.generators.tasks._demonstrations import split_demonstrations
from gengap.generators.text import join_tokens

LETTERS = tuple("abcdefghijklmnopqrstuvwxyz")
SIZE = len(LETTERS)
ARROW, SEP, ASK, ALPHABET = "->", ";", "?", "alphabet"
VOCAB = (*LETTERS, ARROW, SEP, ASK, ALPHABET)
TRANSFORMATIONS = (
    "successor", "predecessor", "successor_last", "predecessor_first", "reverse",
    "repeat_last", "extend", "drop_first", "swap_ends", "replace_last",
)  # fmt: skip
RULES = tuple(f"T -> {name} T" for name in TRANSFORMATIONS)
STANDARD = "standard"
MAX_DEPTH, MAX_LENGTH, MAX_DEMOS = 4, 40, 5
_ROUNDS = 64  # redraw rounds for ambiguous puzzles before the query length is forced
# (min_depth, max_depth, min_length, max_length, demos) of levels 1..10
LEVELS = (
    (1, 1, 3, 3, 1), (1, 1, 3, 4, 2), (1, 2, 3, 5, 2), (2, 2, 4, 6, 2), (2, 3, 4, 7, 2),
    (2, 3, 5, 8, 3), (3, 3, 5, 9, 3), (3, 4, 6, 10, 3), (3, 4, 7, 11, 3), (4, 4, 8, 12, 3),
)  # fmt: skip


# lexicon k > 0 writes the letters with a permutation of them: the standard alphabet's order becomes
# that permutation's, unstated (the letters are the task's one lexical class)
LEXICON = LexiconSpec("letter_analogy", lambda: (WordClass.permuted("letter", LETTERS),))


def alphabet_name(index: int) -> str:
    """The leaf naming alphabet index (0 = standard, i >= 1 = permuted_{i-1})."""
    return STANDARD if index == 0 else f"permuted_{index - 1}"


def alphabet_leaf(letters: Sequence[str]) -> str | None:
    """The structure leaf of an alphabet given by its letters in order (``standard``,
    ``permuted_i`` for i < the ``alphabets`` knob's largest value); None for another order."""
    if tuple(letters) == LETTERS:
        return STANDARD
    order = tuple(LETTERS.index(letter) for letter in letters)
    return _permuted_names().get(order)


@functools.lru_cache(maxsize=1)
def _permuted_names() -> dict[tuple[int, ...], str]:
    """Letter order -> leaf of every permuted alphabet a record can use."""
    most = next(f for f in dataclasses.fields(LetterAnalogyParams) if f.name == "alphabets").metadata["hi"]
    return {permuted_alphabet(i): alphabet_name(i + 1) for i in range(most)}


@functools.lru_cache(maxsize=1024)
def permuted_alphabet(i: int) -> tuple[int, ...]:
    """Letter indices of permuted alphabet i, in its order (fixed by i)."""
    rng = alphabet_rng("letter_analogy", i)
    return tuple(int(x) for x in rng.permutation(SIZE))


@dataclasses.dataclass(frozen=True)
class LetterAnalogyParams(Params):
    """Composition depth, string lengths, demonstrations and alphabet of the puzzles."""

    min_depth: int = knob(1, lo=1, hi=MAX_DEPTH, doc="fewest transformations composed")
    max_depth: int = knob(2, lo=1, hi=MAX_DEPTH, doc="most transformations composed (also the search depth of the uniqueness rule)")
    min_length: int = knob(3, lo=1, hi=MAX_LENGTH, doc="shortest source string, in letters")
    max_length: int = knob(5, lo=1, hi=MAX_LENGTH, doc="longest source string, in letters")
    demos: int = knob(2, lo=1, hi=MAX_DEMOS, doc="demonstration pairs before the query")
    alphabet: str = knob(
        STANDARD, choices=(STANDARD, "permuted", "mixed"),
        doc="standard a..z; permuted: one of `alphabets` fixed permutations, stated in the input; mixed: either",
    )  # fmt: skip
    alphabets: int = knob(1, lo=1, hi=1000, doc="number of distinct permuted alphabets (permuted_0 ..)")
    lexicon: int = lexicon_knob()

    def check_consistency(self) -> None:
        self.require(self.min_depth <= self.max_depth, f"parameter min_depth={self.min_depth} exceeds max_depth={self.max_depth}")
        self.require(
            self.min_length <= self.max_length,
            f"parameter min_length={self.min_length} exceeds max_length={self.max_length}",
        )


# -- the generator's tables: outputs of every composition on run(0, L) ----------------------


def _succ(x: int) -> int:
    return (x + 1) % SIZE


def _pred(x: int) -> int:
    return (x - 1) % SIZE


_OFFSET_OPS: tuple[Callable[[tuple[int, ...]], tuple[int, ...]], ...] = (
    lambda s: tuple(_succ(x) for x in s),
    lambda s: tuple(_pred(x) for x in s),
    lambda s: s[:-1] + (_succ(s[-1]),),
    lambda s: (_pred(s[0]),) + s[1:],
    lambda s: s[::-1],
    lambda s: s + s[-1:],
    lambda s: s + (_succ(s[-1]),),
    lambda s: s[1:] if len(s) > 1 else s,
    lambda s: (s[-1],) + s[1:-1] + (s[0],) if len(s) > 1 else s,
    lambda s: s[:-1] + (s[0],),
)


@dataclasses.dataclass(frozen=True)
class _Table:
    """Every composition of 1..max_depth transformations, by program id (depth-d programs are
    ids base[d] .. base[d] + T^d - 1, first step the most significant base-T digit)."""

    base: np.ndarray  # (max_depth + 2,) first program id of each depth
    programs: list[tuple[int, ...]]
    out: np.ndarray  # (programs, lengths, widest) offsets of the output on run(0, L)
    out_len: np.ndarray  # (programs, lengths)
    classes: np.ndarray  # (programs,) behaviour class: programs with equal outputs at every length
    signature: np.ndarray  # (classes, lengths) output id per length
    unique: dict[tuple[int, int, int], bool]  # memo: (class, demo-length mask, query length index)


@functools.lru_cache(maxsize=8)
def _table(max_depth: int, min_length: int, max_length: int) -> _Table:
    lengths = range(min_length, max_length + 1)
    programs: list[tuple[int, ...]] = []
    outputs: list[list[tuple[int, ...]]] = []
    base = [0, 0]
    previous: list[list[tuple[int, ...]]] = [[tuple(range(n)) for n in lengths]]
    previous_programs: list[tuple[int, ...]] = [()]
    for _ in range(max_depth):
        level, level_programs = [], []
        for prefix, outs in zip(previous_programs, previous):
            for t, op in enumerate(_OFFSET_OPS):
                level_programs.append(prefix + (t,))
                level.append([op(s) for s in outs])
        programs += level_programs
        outputs += level
        base.append(len(programs))
        previous, previous_programs = level, level_programs
    widest = max_length + max_depth
    out = np.zeros((len(programs), len(lengths), widest), dtype=np.int64)
    out_len = np.zeros((len(programs), len(lengths)), dtype=np.int64)
    ids = np.zeros((len(programs), len(lengths)), dtype=np.int64)
    interned: list[dict[tuple[int, ...], int]] = [{} for _ in lengths]
    for p, outs in enumerate(outputs):
        for li, s in enumerate(outs):
            out[p, li, : len(s)] = s
            out_len[p, li] = len(s)
            ids[p, li] = interned[li].setdefault(s, len(interned[li]))
    signature, classes = np.unique(ids, axis=0, return_inverse=True)
    return _Table(np.asarray(base), programs, out, out_len, classes.reshape(-1), signature, {})


def _is_unique(table: _Table, cls: int, mask: int, query: int) -> bool:
    """Whether every class agreeing with class cls at the demo lengths (mask bits) agrees at the query length."""
    key = (cls, mask, query)
    found = table.unique.get(key)
    if found is None:
        demo = [li for li in range(table.signature.shape[1]) if mask >> li & 1]
        sig = table.signature
        agree = np.all(sig[:, demo] == sig[cls, demo], axis=1)
        found = bool(np.all(sig[agree, query] == sig[cls, query]))
        table.unique[key] = found
    return found


def _place(out: np.ndarray, at: np.ndarray, piece: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Write piece[i, :lengths[i]] into out[i] from column at[i]; returns at + lengths."""
    if piece.ndim == 1:
        piece = np.broadcast_to(piece[:, None], (piece.size, 1))
    cols = np.arange(piece.shape[1])
    mask = cols[None, :] < lengths[:, None]
    rows = np.broadcast_to(np.arange(out.shape[0])[:, None], mask.shape)
    out[rows[mask], (at[:, None] + cols[None, :])[mask]] = piece[mask]
    return at + lengths


@register
@lexical(LEXICON)
class LetterAnalogy(Task[LetterAnalogyParams]):
    """Copycat letter-string analogy: demonstrations ``src -> tgt ;`` and a query ``src -> ?``."""

    name = "letter_analogy"
    family = "compositional"
    description = "letter-string analogy (a b c -> a b d ; i j k -> ?) over a standard or permuted alphabet -> the query's answer"
    params_type = LetterAnalogyParams
    size_knob = "letters per source string (min_length..max_length)"
    meta_keys = ("max_depth",)
    test_caps = {"max_length": 8, "min_length": 8, "max_depth": 3, "alphabets": 5}

    def levels(self) -> dict[int, LetterAnalogyParams]:
        """Levels 1..10 raise composition depth (1 -> 4), string length (3 -> 8..12) and demonstrations (1 -> 3)."""
        return {
            k: LetterAnalogyParams(min_depth=a, max_depth=b, min_length=c, max_length=d, demos=e)
            for k, (a, b, c, d, e) in enumerate(LEVELS, start=1)
        }

    def generate(self, rng: np.random.Generator, n: int, params: LetterAnalogyParams) -> Batch:
        table = _table(params.max_depth, params.min_length, params.max_length)
        k, lo = params.demos, params.min_length
        pid = np.zeros(n, dtype=np.int64)
        lens = np.zeros((n, k + 1), dtype=np.int64)
        pending = np.arange(n)
        for round_ in range(_ROUNDS + 1):
            m = pending.size
            depth = rng.integers(params.min_depth, params.max_depth + 1, size=m)
            drawn = table.base[depth] + rng.integers(0, len(TRANSFORMATIONS) ** depth)
            drawn_lens = rng.integers(lo, params.max_length + 1, size=(m, k + 1))
            if round_ == _ROUNDS:
                drawn_lens[:, k] = drawn_lens[:, 0]
            masks = np.bitwise_or.reduce(1 << (drawn_lens[:, :k] - lo), axis=1)
            cls = table.classes[drawn]
            ok = np.fromiter(
                (_is_unique(table, c, mk, q) for c, mk, q in zip(cls.tolist(), masks.tolist(), (drawn_lens[:, k] - lo).tolist())),
                dtype=bool, count=m,
            )  # fmt: skip
            pid[pending[ok]] = drawn[ok]
            lens[pending[ok]] = drawn_lens[ok]
            pending = pending[~ok]
            if not pending.size:
                break
        starts = rng.integers(0, SIZE, size=(n, k + 1))
        if params.alphabet == STANDARD:
            alpha = np.zeros(n, dtype=np.int64)
        elif params.alphabet == "permuted":
            alpha = rng.integers(1, params.alphabets + 1, size=n)
        else:
            alpha = rng.integers(0, params.alphabets + 1, size=n)
        letters = np.asarray([tuple(range(SIZE))] + [permuted_alphabet(i) for i in range(params.alphabets)])
        return self._render(table, pid, lens, starts, alpha, letters, params)

    def _render(
        self, table: _Table, pid: np.ndarray, lens: np.ndarray, starts: np.ndarray, alpha: np.ndarray,
        letters: np.ndarray, params: LetterAnalogyParams,
    ) -> Batch:  # fmt: skip
        n, k = pid.size, params.demos
        li = lens - params.min_length
        out_len = table.out_len[pid[:, None], li]  # (n, k+1)
        prefix = np.where(alpha > 0, SIZE + 2, 0)
        width = int(prefix.max(initial=0) + (lens + out_len + 2).sum(axis=1).max())
        ids = np.zeros((n, width), dtype=np.int64)
        at = np.zeros(n, dtype=np.int64)
        mine = letters[alpha]  # (n, 26) letter index at each alphabet position
        rows = np.arange(n)[:, None]
        ones = np.ones(n, dtype=np.int64)
        ids[:, 0] = VOCAB.index(ALPHABET)
        at = _place(ids, at + (prefix > 0), mine, np.where(prefix > 0, SIZE, 0))
        at = _place(ids, at, np.full(n, VOCAB.index(SEP)), (prefix > 0).astype(np.int64))
        span = np.arange(params.max_length)[None, :]
        for j in range(k + 1):
            source = mine[rows, (starts[:, j : j + 1] + span) % SIZE]
            at = _place(ids, at, source, lens[:, j])
            at = _place(ids, at, np.full(n, VOCAB.index(ARROW)), ones)
            if j == k:
                break
            image = mine[rows, (starts[:, j : j + 1] + table.out[pid, li[:, j]]) % SIZE]
            at = _place(ids, at, image, out_len[:, j])
            at = _place(ids, at, np.full(n, VOCAB.index(SEP)), ones)
        at = _place(ids, at, np.full(n, VOCAB.index(ASK)), ones)
        answer = mine[rows, (starts[:, k : k + 1] + table.out[pid, li[:, k]]) % SIZE]
        programs = table.programs
        leaves = [alphabet_name(a) for a in alpha.tolist()]
        structure = [_tree(programs[p], leaf) for p, leaf in zip(pid.tolist(), leaves)]
        depth = np.fromiter((len(programs[p]) for p in pid.tolist()), dtype=np.int64, count=n)
        features = {
            "depth": depth,
            "demos": np.full(n, k, dtype=np.int64),
            "query_length": lens[:, k].copy(),
            "longest_demo": lens[:, :k].max(axis=1),
        }
        inputs, targets = join_tokens(ids, at, VOCAB), join_tokens(answer, out_len[:, k], VOCAB)
        return Batch(inputs, targets, features, structure, {"max_depth": params.max_depth})

    def solve(self, example: Mapping[str, Any]) -> str:
        """The query's answer, found by searching every composition of 1..max_depth
        transformations (meta.max_depth) that maps all demonstrations; ValueError when none
        does or when they disagree on the query (an ambiguous puzzle)."""
        answers = search_answers(example["input"], self.meta(example, "max_depth"))
        if len(answers) != 1:
            raise ValueError(f"the demonstrations allow {len(answers)} answers")
        return next(iter(answers))

    def structure_problem(self, example: Mapping[str, Any]) -> str | None:
        """Why the record's structure is not a composition that made it: 1..meta.max_depth
        transformations over the alphabet the input states (``standard`` without a statement,
        ``permuted_i`` with that alphabet's letters) mapping every demonstration and turning the
        query into the target."""
        try:
            steps, leaf = read_composition(example["structure"])
            depth = self.meta(example, "max_depth")
            puzzle = parse_puzzle(example["input"])
        except (ValueError, KeyError, TypeError) as err:
            return f"structure is not a composition of the record: {err}"
        if len(steps) > depth:
            return f"structure composes {len(steps)} transformations; the record allows at most {depth} (meta.max_depth)"
        if leaf != alphabet_leaf(puzzle.alphabet):
            return f"structure names the alphabet {leaf!r}, but the input's is {alphabet_leaf(puzzle.alphabet)!r}"
        target = example["target"].split()
        for number, (source, image) in enumerate([*puzzle.demos, (puzzle.query, target)], start=1):
            if apply_composition(steps, source, puzzle.alphabet) != image:
                what = f"demonstration {number}" if number <= len(puzzle.demos) else "the query's target"
                return f"structure is a composition that does not give {what}"
        return None

    def atoms(self, example: Mapping[str, Any]) -> Counter[str] | None:
        return structure_atoms(example)  # the input does not determine the structure

    def compounds(self, example: Mapping[str, Any], abstract_lexical: bool = False) -> Counter[str] | None:
        return structure_compounds(example, abstract_lexical)

    def measure(self, example: Mapping[str, Any]) -> dict[str, int]:
        """Features read from the input (``depth`` from ``structure``, when present)."""
        puzzle = parse_puzzle(example["input"])
        found = {
            "demos": len(puzzle.demos),
            "query_length": len(puzzle.query),
            "longest_demo": max(len(source) for source, _ in puzzle.demos),
        }
        if example.get("structure") is not None:
            found["depth"] = len(read_composition(example["structure"])[0])
        return found


def _tree(program: tuple[int, ...], leaf: str) -> Tree:
    tree: Tree = leaf
    for t in program:
        tree = [RULES[t], tree]
    return tree


# -- the reference reader and interpreter (independent of generate) -------------------------


@dataclasses.dataclass(frozen=True)
class Puzzle:
    """A parsed input: the alphabet's letters in order, demonstration pairs, the query source."""

    alphabet: tuple[str, ...]
    demos: list[tuple[list[str], list[str]]]
    query: list[str]


def parse_puzzle(text: str) -> Puzzle:
    """Read an analogy input; ValueError unless it is well formed (an optional alphabet
    statement of 26 distinct letters, then 1..MAX_DEMOS ``src -> tgt ;`` pairs and ``src -> ?``,
    sources of at most MAX_LENGTH letters: the checker's search grows with them)."""
    tokens = text.split()
    alphabet = LETTERS
    if tokens[:1] == [ALPHABET]:
        stated = tuple(tokens[1 : SIZE + 1])
        if sorted(stated) != list(LETTERS) or tokens[SIZE + 1 : SIZE + 2] != [SEP]:
            raise ValueError("an alphabet statement is 'alphabet' and the 26 letters in order, then ';'")
        alphabet, tokens = stated, tokens[SIZE + 2 :]
    demos, query = split_demonstrations(tokens, SEP, ARROW, ASK, MAX_DEMOS)
    for source, target in demos + [(query, query)]:
        if not source or not target or any(t not in LETTERS for t in source + target):
            raise ValueError("strings are non-empty runs of letters a..z")
        if len(source) > MAX_LENGTH or len(target) > MAX_LENGTH + MAX_DEPTH:
            raise ValueError(f"a source has at most {MAX_LENGTH} letters and its image at most {MAX_LENGTH + MAX_DEPTH}")
    return Puzzle(alphabet, demos, query)


def read_composition(structure: Any) -> tuple[list[str], str]:
    """(transformation names in the order applied, alphabet leaf) of a record's structure."""
    steps: list[str] = []
    node = structure
    while isinstance(node, list):
        if len(node) != 2 or not isinstance(node[0], str):
            raise ValueError("a composition is nested [rule, child] pairs")
        name = node[0].removeprefix("T -> ").removesuffix(" T")
        if name not in TRANSFORMATIONS or node[0] != f"T -> {name} T":
            raise ValueError(f"unknown transformation rule {node[0]!r}")
        steps.append(name)
        node = node[1]
    if not isinstance(node, str) or not steps:
        raise ValueError("the record has no composition in structure")
    return steps[::-1], node


def transform(name: str, s: Sequence[str], alphabet: Sequence[str]) -> list[str]:
    """One transformation of a letter string, successors taken in alphabet's (cyclic) order."""
    where = {letter: i for i, letter in enumerate(alphabet)}

    def step(letter: str, by: int) -> str:
        return alphabet[(where[letter] + by) % len(alphabet)]

    first, last = s[0], s[-1]
    if name == "successor":
        return [step(c, 1) for c in s]
    if name == "predecessor":
        return [step(c, -1) for c in s]
    if name == "successor_last":
        return [*s[:-1], step(last, 1)]
    if name == "predecessor_first":
        return [step(first, -1), *s[1:]]
    if name == "reverse":
        return list(reversed(s))
    if name == "repeat_last":
        return [*s, last]
    if name == "extend":
        return [*s, step(last, 1)]
    if name == "drop_first":
        return list(s[1:]) if len(s) >= 2 else list(s)
    if name == "swap_ends":
        return [last, *s[1:-1], first] if len(s) >= 2 else list(s)
    if name == "replace_last":
        return [*s[:-1], first]
    raise ValueError(f"unknown transformation {name!r}")


def apply_composition(steps: Sequence[str], s: Sequence[str], alphabet: Sequence[str]) -> list[str]:
    out = list(s)
    for name in steps:
        out = transform(name, out, alphabet)
    return out


def search_answers(text: str, max_depth: int) -> set[str]:
    """Every answer to the query that some composition of 1..max_depth transformations mapping
    all demonstrations allows (a sound puzzle has one). Breadth-first over the strings the
    compositions reach (compositions reaching the same strings are merged; a branch whose
    strings can no longer reach their targets' lengths in the steps left is dropped)."""
    return set(_search(text, max_depth))


@functools.lru_cache(maxsize=64)
def _search(text: str, max_depth: int) -> frozenset[str]:
    puzzle = parse_puzzle(text)
    sources = tuple(tuple(source) for source, _ in puzzle.demos) + (tuple(puzzle.query),)
    goals = tuple(tuple(target) for _, target in puzzle.demos)
    answers = set()
    seen: set[tuple[tuple[str, ...], ...]] = set()  # the start itself is not seen: depth >= 1
    frontier = [sources]
    for depth in range(1, max_depth + 1):
        left = max_depth - depth
        reached = []
        for state in frontier:
            for name in TRANSFORMATIONS:
                nxt = tuple(tuple(transform(name, s, puzzle.alphabet)) for s in state)
                if nxt in seen or any(abs(len(s) - len(g)) > left for s, g in zip(nxt, goals)):
                    continue
                seen.add(nxt)
                reached.append(nxt)
                if nxt[:-1] == goals:
                    answers.add(" ".join(nxt[-1]))
        frontier = reached
    return frozenset(answers)
