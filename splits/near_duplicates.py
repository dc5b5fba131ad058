"""Near duplicates of train records among test records: token edit distance and n-gram Jaccard.

For every test sequence (a record's input tokens), :func:`edit_neighbors` finds the smallest
Levenshtein distance over tokens (insertions, deletions, substitutions) to any train sequence
when it is at most k, and :func:`jaccard_neighbors` the largest Jaccard similarity
|A & B| / |A | B| of their sets of token n-grams (a sequence shorter than n is one gram) when
it is at least t; each with the first train sequence (in train order) that attains it. Both are
exact: the results are those of comparing every test sequence with every train sequence
(tests/test_near_duplicates.py checks them against that), found through an index instead:

- edit distance (the pigeonhole filter of PassJoin, Li et al. 2011): a train sequence of length
  L > k is cut into k + 1 segments; k edits leave one of them intact, shifted by at most k
  positions, so a test sequence within distance k holds one of its segments at such a shift.
  Only lengths within k of each other are compared (sequences of length <= k, which have empty
  segments, are compared with every test sequence of a length within k). The candidate pairs
  are then scored together by a banded dynamic programme in numpy (cells with |i - j| > k
  cannot end within k), pairs dropped once every cell of a row exceeds k;
- Jaccard (the prefix filter of AllPairs, Bayardo et al. 2007): n-grams are ordered by how
  many sequences hold them, rarest first; two sets with Jaccard >= t share a gram among the
  first |S| - ceil(t |S|) + 1 of each, and their sizes lie within a factor t of each other.
  Candidates from that index are scored by their exact intersections (of 64-bit bit sets where
  the train sets fit in BIT_WORDS words, else of Python sets).

Identical sequences (and, for Jaccard, identical gram sets) are compared once, so a test part
whose inputs repeat costs its distinct inputs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from gengap.generators.params import Params, knob

PAIR_BLOCK = 1 << 20  # candidate pairs scored at once
TEST_BLOCK = 1024  # distinct test sequences whose candidates are gathered at once
BAG_VOCABULARY = 64  # token counts filter the candidates of a vocabulary up to this size
BAG_BLOCK = 1 << 18  # candidate pairs whose counts are compared at once
HASH_BASE = np.uint64(1_000_003)
HASH_MIX = 0x9E3779B97F4A7C15  # spreads a (length, segment) tag over 64 bits
DEAD_CHECK = 4  # rows between drops of pairs that can no longer end within k
SLACK = 1e-9  # float slack of the Jaccard bounds (a longer prefix or a wider size window is always safe)
DENSE_GRAMS = 4096  # most distinct grams for the matrix product of Jaccard intersections
BIT_WORDS = 1 << 24  # most 64-bit words of train bit sets (128 MiB) for the prefix path's intersections (else Python sets)
BIT_BLOCK = 1 << 22  # words of candidate pairs' bit sets intersected at once (32 MiB a side)
DENSE_CELLS = 1 << 27  # most cells of the train incidence matrix (float32: 512 MiB)
DENSE_BLOCK = 1 << 22  # (test, train) similarities computed at once
DENSE_RATE = 2e9  # products per second of the matrix path, and candidates per second of the
PREFIX_RATE = 1e6  # prefix path: their estimated times choose between them (the results are the same)


@dataclass(frozen=True)
class NearOptions(Params):
    """What counts as a near duplicate."""

    edit_distance: int = knob(2, lo=0, hi=8, doc="a test input within this token edit distance of a train input is near")
    jaccard: float = knob(0.8, lo=0.01, hi=1.0, doc="a test input whose n-gram set has Jaccard similarity >= this with a train input's is near")
    ngram: int = knob(3, lo=1, hi=16, doc="tokens per n-gram of the Jaccard similarity")
    examples: int = knob(5, lo=0, hi=1000, doc="near duplicates listed per config (their test and train inputs)")


def encode(texts: Iterable[str], vocabulary: dict[str, int]) -> list[tuple[int, ...]]:
    """Token ids of whitespace-separated texts; new tokens are added to vocabulary."""
    out = []
    for text in texts:
        out.append(tuple(vocabulary.setdefault(token, len(vocabulary)) for token in text.split()))
    return out


def _distinct(sequences: Sequence[tuple[int, ...]]) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """(distinct sequences in first-seen order, the distinct index of each sequence)."""
    index: dict[tuple[int, ...], int] = {}
    of = np.fromiter((index.setdefault(s, len(index)) for s in sequences), dtype=np.int64, count=len(sequences))
    return list(index), of


def _first_of(of: np.ndarray, count: int) -> np.ndarray:
    """The first position holding each of count distinct values."""
    first = np.full(count, -1, dtype=np.int64)
    positions = np.arange(len(of), dtype=np.int64)
    first[of[::-1]] = positions[::-1]
    return first


# -- edit distance --------------------------------------------------------------------------


def edit_neighbors(train: Sequence[tuple[int, ...]], test: Sequence[tuple[int, ...]], k: int) -> tuple[np.ndarray, np.ndarray]:
    """(distance, train index) for each test sequence: the smallest token edit distance to a
    train sequence when it is <= k, else k + 1; and the first train sequence at that distance
    (-1 when none is within k).

    Distances are settled in rounds d = 0, 1, ..., k: exact copies first, then, for the test
    sequences still open, the candidates of the filter for d (longer segments than k's, so far
    fewer candidates), scored by the programme banded at d. A test sequence settled in round d
    has no train sequence nearer than d, so the train sequences within d are exactly those at d."""
    train_distinct, train_of = _distinct(train)
    test_distinct, test_of = _distinct(test)
    first_train = _first_of(train_of, len(train_distinct))
    best = np.full(len(test_distinct), k + 1, dtype=np.int64)
    who = np.full(len(test_distinct), -1, dtype=np.int64)
    copies = {sequence: int(first_train[i]) for i, sequence in enumerate(train_distinct)}
    for row, sequence in enumerate(test_distinct):
        if sequence in copies:
            best[row], who[row] = 0, copies[sequence]
    if k == 0 or not train_distinct or not test_distinct:
        return best[test_of], who[test_of]
    sides = _Sequences(train_distinct, k), _Sequences(test_distinct, k)
    bags = _Bags(sides[0], sides[1])
    for d in range(1, k + 1):
        open_rows = np.flatnonzero(best > d - 1)
        if not len(open_rows):
            break
        index = _SegmentIndex(sides[0], d)
        for first in range(0, len(open_rows), TEST_BLOCK):
            pairs_test, pairs_train = index.candidates(sides[1], open_rows[first:first + TEST_BLOCK])
            pairs_test, pairs_train = bags.filter(pairs_test, pairs_train, d)
            distances = _banded_distances(sides[0], sides[1], pairs_train, pairs_test, d)
            within = distances <= d
            _keep_best(best, who, pairs_test[within], distances[within], first_train[pairs_train[within]], smaller=True)
    return best[test_of], who[test_of]


class _Sequences:
    """Distinct sequences as a padded matrix (tokens + 1, 0 beyond the end, with k spare columns),
    their lengths and prefix hashes (uint64 polynomial hashes: a substring's hash in O(1))."""

    def __init__(self, sequences: list[tuple[int, ...]], k: int) -> None:
        self.lengths = np.fromiter((len(s) for s in sequences), dtype=np.int64, count=len(sequences))
        width = int(self.lengths.max()) if len(sequences) else 0
        self.matrix = np.zeros((len(sequences), width + k + 1), dtype=np.int32)
        for row, sequence in enumerate(sequences):
            self.matrix[row, : len(sequence)] = sequence
        self.matrix[:, :width] += np.arange(width)[None, :] < self.lengths[:, None]  # tokens + 1; padding stays 0
        self.vocabulary = int(self.matrix.max()) + 1 if self.matrix.size else 1
        with np.errstate(over="ignore"):
            self.prefix = np.zeros((len(sequences), width + 1), dtype=np.uint64)
            for column in range(width):
                self.prefix[:, column + 1] = self.prefix[:, column] * HASH_BASE + self.matrix[:, column].astype(np.uint64)
            self.powers = np.ones(width + 1, dtype=np.uint64)
            for size in range(1, width + 1):
                self.powers[size] = self.powers[size - 1] * HASH_BASE

    def hashes(self, rows: np.ndarray, start: int, size: int, tag: int) -> np.ndarray:
        """The hash of tokens [start, start + size) of each row, mixed with a tag (length, segment)."""
        with np.errstate(over="ignore"):
            inner = self.prefix[rows, start + size] - self.prefix[rows, start] * self.powers[size]
            return inner ^ np.uint64(tag * HASH_MIX % (1 << 64))


class _Bags:
    """Token counts of every sequence, for a small vocabulary: a substitution changes the counts
    by 2 in L1 and an insertion or deletion by 1, so a pair whose counts differ by more than 2d
    in L1 is more than d edits apart."""

    def __init__(self, train: _Sequences, test: _Sequences) -> None:
        size = max(train.vocabulary, test.vocabulary)
        self.counts = None
        if size <= BAG_VOCABULARY:
            self.counts = tuple(_counts(side.matrix, size) for side in (train, test))

    def filter(self, pairs_test: np.ndarray, pairs_train: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray]:
        if self.counts is None or not len(pairs_test):
            return pairs_test, pairs_train
        keep = np.empty(len(pairs_test), dtype=bool)
        for first in range(0, len(pairs_test), BAG_BLOCK):
            part = slice(first, first + BAG_BLOCK)
            gap = np.abs(self.counts[0][pairs_train[part]] - self.counts[1][pairs_test[part]]).sum(axis=1)
            keep[part] = gap <= 2 * d
        return pairs_test[keep], pairs_train[keep]


def _counts(matrix: np.ndarray, size: int) -> np.ndarray:
    """(rows, size) int16 token counts of a padded matrix, padding (token 0) left out."""
    out = np.zeros((len(matrix), size), dtype=np.int16)
    rows = np.repeat(np.arange(len(matrix)), matrix.shape[1])
    np.add.at(out, (rows, matrix.ravel()), 1)
    out[:, 0] = 0
    return out


def _segments(length: int, k: int) -> list[tuple[int, int]]:
    """(start, length) of the k + 1 segments a sequence of this length is cut into."""
    bounds = [i * length // (k + 1) for i in range(k + 2)]
    return [(bounds[i], bounds[i + 1] - bounds[i]) for i in range(k + 1)]


class _SegmentIndex:
    """The segments of every train sequence longer than k, hashed and sorted; the train sequences
    of each length <= k (compared with every test sequence of a length within k).

    A test sequence of length m within k edits of a train sequence of length L holds, for some
    segment i (0-based, start p), that segment at a start q with |q - p| <= i and
    |q - p - (m - L)| <= k - i (Pass-Join's multi-match-aware selection): the first segment
    whose edits so far leave it intact has at most i edits before it and k - i after."""

    def __init__(self, train: _Sequences, k: int) -> None:
        self.k = k
        self.train = train
        self.lengths = set(train.lengths.tolist())
        self.short = {length: np.flatnonzero(train.lengths == length) for length in self.lengths if length <= k}
        keys, owners = [], []
        for length in sorted(self.lengths - set(self.short)):
            rows = np.flatnonzero(train.lengths == length)
            for segment, (start, size) in enumerate(_segments(length, k)):
                keys.append(train.hashes(rows, start, size, _tag(length, segment, k)))
                owners.append(rows)
        keys_all = np.concatenate(keys) if keys else np.zeros(0, np.uint64)
        order = np.argsort(keys_all, kind="stable")
        self.keys = keys_all[order]
        self.owners = (np.concatenate(owners) if owners else np.zeros(0, np.int64))[order]

    def candidates(self, test: _Sequences, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(test, train) pairs of the test rows that the filter cannot rule out, each once, by test row."""
        k = self.k
        probes, probers, pairs = [], [], []
        lengths = test.lengths[rows]
        for m in sorted(set(lengths.tolist())):
            group = rows[lengths == m]
            for length in range(max(0, m - k), m + k + 1):
                if length not in self.lengths:
                    continue
                if length in self.short:
                    short = self.short[length]
                    pairs.append((np.repeat(group, len(short)), np.tile(short, len(group))))
                    continue
                shift = m - length
                for segment, (start, size) in enumerate(_segments(length, k)):
                    tag = _tag(length, segment, k)
                    low = max(0, start - segment, start + shift - (k - segment))
                    high = min(m - size, start + segment, start + shift + (k - segment))
                    for q in range(low, high + 1):
                        probes.append(test.hashes(group, q, size, tag))
                        probers.append(group)
        if probes:
            keys, who = np.concatenate(probes), np.concatenate(probers)
            low = np.searchsorted(self.keys, keys, "left")
            counts = np.searchsorted(self.keys, keys, "right") - low
            starts = np.repeat(low - np.cumsum(counts) + counts, counts)
            pairs.append((np.repeat(who, counts), self.owners[starts + np.arange(int(counts.sum()))]))
        if not pairs:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        width = len(self.train.lengths)
        found = np.concatenate([t for t, _ in pairs]) * width + np.concatenate([r for _, r in pairs])
        found.sort()
        found = found[np.concatenate(([True], found[1:] != found[:-1]))] if len(found) else found
        return found // width, found % width


def _tag(length: int, segment: int, k: int) -> int:
    return length * (k + 1) + segment + 1


def _banded_distances(train: _Sequences, test: _Sequences, pairs_train: np.ndarray, pairs_test: np.ndarray, k: int) -> np.ndarray:
    """The token edit distance of each (train, test) pair, capped at k + 1 (pairs grouped by train length)."""
    out = np.full(len(pairs_train), k + 1, dtype=np.int64)
    if not len(pairs_train):
        return out
    train_length = train.lengths[pairs_train]
    order = np.argsort(train_length, kind="stable")
    cuts = np.flatnonzero(np.diff(train_length[order])) + 1
    for group in np.split(order, cuts):
        length = int(train_length[group[0]])
        for first in range(0, len(group), PAIR_BLOCK):
            chosen = group[first:first + PAIR_BLOCK]
            a = np.ascontiguousarray(train.matrix[pairs_train[chosen], :length].T)
            b = test.matrix[pairs_test[chosen], : length + k]
            if b.shape[1] < length + k:  # a test sequence up to k shorter than this train length
                b = np.pad(b, ((0, 0), (0, length + k - b.shape[1])))
            out[chosen] = _band(a, np.ascontiguousarray(b.T), length, test.lengths[pairs_test[chosen]], k)
    return out


def _band(a: np.ndarray, b: np.ndarray, length: int, b_length: np.ndarray, k: int) -> np.ndarray:
    """Edit distances (capped at k + 1) of the columns of a (each a sequence of length `length`)
    and of b (column p holds b_length[p] tokens, |b_length - length| <= k), by rows i = 0..length
    of the programme over the band j = i + d, d in -k..k. Cells past the end of b are computed
    and never read: a cell depends only on cells of no larger j. Tokens are >= 1 and padding 0,
    so padding never matches a token."""
    far = k + 1
    pairs = a.shape[1]
    alive = np.arange(pairs)
    result = np.full(pairs, far, dtype=np.int64)
    row = [np.full(pairs, d if d >= 0 else far, dtype=np.int16) for d in range(-k, k + 1)]  # D[0][j] = j
    for i in range(1, length + 1):
        new = []
        token = a[i - 1]
        for slot in range(2 * k + 1):
            j = i + slot - k
            if j <= 0:
                new.append(np.full(len(token), min(i, far) if j == 0 else far, dtype=np.int16))  # D[i][0] = i
                continue
            value = row[slot] + (token != b[j - 1])  # D[i-1][j-1] + a substitution
            if slot < 2 * k:
                np.minimum(value, row[slot + 1] + 1, out=value)  # D[i-1][j] + a deletion
            if slot > 0:
                np.minimum(value, new[slot - 1] + 1, out=value)  # D[i][j-1] + an insertion
            new.append(np.minimum(value, far).astype(np.int16, copy=False))
        row = new
        if i % DEAD_CHECK == 0 and i < length:
            live = np.minimum.reduce(row) <= k  # every path to the end crosses this row
            if not live.all():
                alive, a, b, b_length = alive[live], a[:, live], b[:, live], b_length[live]
                row = [cells[live] for cells in row]
                if not len(alive):
                    return result
    band = np.stack(row)  # (2k + 1, pairs)
    result[alive] = band[b_length - length + k, np.arange(len(alive))]  # D[length][b_length]
    return result


def _keep_best(best: np.ndarray, who: np.ndarray, rows: np.ndarray, values: np.ndarray, train: np.ndarray, smaller: bool) -> None:
    """For each row, the best value (smallest or largest) and, among equals, the smallest train index."""
    if not len(rows):
        return
    key = values if smaller else -values
    order = np.lexsort((train, key, rows))  # by row, then best value, then train index
    rows, values, train = rows[order], values[order], train[order]
    first = np.concatenate(([True], rows[1:] != rows[:-1]))
    best[rows[first]] = values[first]
    who[rows[first]] = train[first]


# -- n-gram Jaccard ---------------------------------------------------------------------------


def grams(sequence: tuple[int, ...], n: int) -> frozenset[tuple[int, ...]]:
    """The set of n-grams of a sequence (the sequence itself when it is shorter than n)."""
    if len(sequence) < n:
        return frozenset([sequence])
    return frozenset(sequence[i:i + n] for i in range(len(sequence) - n + 1))


def jaccard(a: frozenset, b: frozenset) -> float:
    """|a & b| / |a | b|."""
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


def jaccard_neighbors(
    train: Sequence[tuple[int, ...]], test: Sequence[tuple[int, ...]], n: int, t: float, method: str = "auto"
) -> tuple[np.ndarray, np.ndarray]:
    """(similarity, train index) for each test sequence: the largest Jaccard similarity of n-gram
    sets with a train sequence when it is >= t, else 0.0; and the first train sequence with it
    (-1 when none reaches t).

    Two ways, with the same results, whichever is estimated faster: the prefix index (few
    candidates when grams are many and rare), or, for a small set of distinct grams (where every
    gram is common and the prefixes filter little), the intersections of every pair as a product
    of 0/1 matrices (exact integers in float32 up to 2**24). method: "auto", "prefix" or "matrix"
    (within the matrix path's size limits)."""
    train_sets, train_of = _distinct_sets([grams(s, n) for s in train])
    test_sets, test_of = _distinct_sets([grams(s, n) for s in test])
    first_train = _first_of(train_of, len(train_sets))
    ranked_train, ranked_test, size = _ranked(train_sets, test_sets)
    best = np.zeros(len(test_sets))
    who = np.full(len(test_sets), -1, dtype=np.int64)
    if train_sets and test_sets:
        postings = [_postings(ranked, t, size) for ranked in (ranked_train, ranked_test)]
        pairs = float(postings[0] @ postings[1])  # candidates of the prefix index, before duplicates are dropped
        dense = len(train_sets) * len(test_sets) * size / DENSE_RATE
        fits = size <= DENSE_GRAMS and len(train_sets) * size <= DENSE_CELLS
        if fits and (method == "matrix" or method == "auto" and dense < pairs / PREFIX_RATE):
            _dense_jaccard(ranked_train, ranked_test, size, t, best, who)
        else:
            _prefix_jaccard(ranked_train, ranked_test, t, best, who)
        who = np.where(who >= 0, first_train[np.maximum(who, 0)], -1)
    return best[test_of], who[test_of]


def _postings(ranked: list[list[int]], t: float, size: int) -> np.ndarray:
    """How many sets hold each gram rank in their prefix."""
    counts = np.zeros(size)
    for ranks in ranked:
        counts[ranks[:_prefix(len(ranks), t)]] += 1
    return counts


def _dense_jaccard(train: list[list[int]], test: list[list[int]], size: int, t: float, best: np.ndarray, who: np.ndarray) -> None:
    """Every pair's similarity from 0/1 incidence matrices; the best distinct train set per test set
    (the first among equals: sets are numbered in train order)."""
    incidence = _incidence(train, size)
    train_sizes = incidence.sum(axis=1, dtype=np.float64)
    block = max(1, DENSE_BLOCK // max(1, len(train)))
    for first in range(0, len(test), block):
        rows = _incidence(test[first:first + block], size)
        shared = (rows @ incidence.T).astype(np.float64)
        similarity = shared / (rows.sum(axis=1, dtype=np.float64)[:, None] + train_sizes[None, :] - shared)
        similarity[similarity < t] = 0.0
        top = np.argmax(similarity, axis=1)
        value = similarity[np.arange(len(top)), top]
        hit = value > 0
        at = np.arange(first, first + len(top))[hit]
        best[at], who[at] = value[hit], top[hit]


def _incidence(ranked: list[list[int]], size: int) -> np.ndarray:
    out = np.zeros((len(ranked), size), dtype=np.float32)
    for row, ranks in enumerate(ranked):
        out[row, ranks] = 1.0
    return out


def _prefix_jaccard(train: list[list[int]], test: list[list[int]], t: float, best: np.ndarray, who: np.ndarray) -> None:
    """The prefix index (module doc): candidates sharing a prefix gram, within the size bounds,
    scored exactly (bit sets when the grams are few, else set intersections); the best train set
    per test set, the first among equals."""
    postings = _prefix_postings(train, t)
    train_sizes = np.fromiter((len(r) for r in train), dtype=np.int64, count=len(train))
    size = 1 + max((r[-1] for r in (*train, *test) if r), default=0)
    train_bits = _bit_sets(train, size) if len(train) * _words(size) <= BIT_WORDS else None
    for first in range(0, len(test), TEST_BLOCK):
        block = test[first:first + TEST_BLOCK]
        rows, others = _prefix_candidates(block, postings, t)
        test_sizes = np.fromiter((len(r) for r in block), dtype=np.int64, count=len(block))[rows]
        fits = (train_sizes[others] >= t * test_sizes - SLACK) & (train_sizes[others] <= test_sizes / t + SLACK)
        rows, others, test_sizes = rows[fits], others[fits], test_sizes[fits]
        if train_bits is not None:
            shared = _shared_bits(train_bits, _bit_sets(block, size), others, rows)
        else:
            mine = [frozenset(r) for r in block]
            theirs = {int(o): frozenset(train[o]) for o in np.unique(others).tolist()}
            shared = np.fromiter((len(mine[r] & theirs[o]) for r, o in zip(rows.tolist(), others.tolist())), dtype=np.int64, count=len(rows))
        similarity = shared / (test_sizes + train_sizes[others] - shared)
        keep = similarity >= t
        _keep_best(best, who, rows[keep] + first, similarity[keep], others[keep], smaller=False)


def _prefix_postings(train: list[list[int]], t: float) -> tuple[np.ndarray, np.ndarray]:
    """(ranks, train sets) of every train prefix gram, sorted by rank."""
    ranks = [rank for r in train for rank in r[:_prefix(len(r), t)]]
    owners = [position for position, r in enumerate(train) for _ in range(_prefix(len(r), t))]
    ranks_array, owners_array = np.asarray(ranks, dtype=np.int64), np.asarray(owners, dtype=np.int64)
    order = np.argsort(ranks_array, kind="stable")
    return ranks_array[order], owners_array[order]


def _prefix_candidates(block: list[list[int]], postings: tuple[np.ndarray, np.ndarray], t: float) -> tuple[np.ndarray, np.ndarray]:
    """(test set in block, train set) pairs sharing a prefix gram, each once."""
    ranks = np.asarray([rank for r in block for rank in r[:_prefix(len(r), t)]], dtype=np.int64)
    probers = np.asarray([position for position, r in enumerate(block) for _ in range(_prefix(len(r), t))], dtype=np.int64)
    low = np.searchsorted(postings[0], ranks, "left")
    counts = np.searchsorted(postings[0], ranks, "right") - low
    starts = np.repeat(low - np.cumsum(counts) + counts, counts)
    others = postings[1][starts + np.arange(int(counts.sum()))]
    width = max(1, int(postings[1].max()) + 1) if len(postings[1]) else 1
    found = np.repeat(probers, counts) * width + others
    found.sort()
    found = found[np.concatenate(([True], found[1:] != found[:-1]))] if len(found) else found
    return found // width, found % width


def _words(size: int) -> int:
    """64-bit words of a bit set over this many gram ranks."""
    return max(1, (size + 63) // 64)


def _bit_sets(ranked: list[list[int]], size: int) -> np.ndarray:
    """Each set as a row of 64-bit words: bit r % 64 of word r // 64 set for each rank r."""
    words = _words(size)
    ranks = np.fromiter((rank for r in ranked for rank in r), dtype=np.int64)
    rows = np.repeat(np.arange(len(ranked), dtype=np.int64), [len(r) for r in ranked])
    out = np.zeros(len(ranked) * words, dtype=np.uint64)
    np.bitwise_or.at(out, rows * words + ranks // 64, np.left_shift(np.uint64(1), (ranks % 64).astype(np.uint64)))
    return out.reshape(len(ranked), words)


def _shared_bits(train: np.ndarray, test: np.ndarray, others: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """|A & B| of each (test row, train row) pair of bit sets, BIT_BLOCK words at a time."""
    out = np.empty(len(rows), dtype=np.int64)
    step = max(1, BIT_BLOCK // train.shape[1])
    for first in range(0, len(rows), step):
        part = slice(first, first + step)
        out[part] = _popcount(train[others[part]] & test[rows[part]]).sum(axis=1)
    return out


def _popcount(words: np.ndarray) -> np.ndarray:
    """Set bits of each 64-bit word (numpy's bitwise_count where it has one, else by bytes)."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(words).astype(np.int64)
    return BYTE_BITS[words.view(np.uint8)].reshape(*words.shape, 8).sum(axis=-1)


BYTE_BITS = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)


def _distinct_sets(sets: list[frozenset]) -> tuple[list[frozenset], np.ndarray]:
    index: dict[frozenset, int] = {}
    of = np.fromiter((index.setdefault(s, len(index)) for s in sets), dtype=np.int64, count=len(sets))
    return list(index), of


def _ranked(train: list[frozenset], test: list[frozenset]) -> tuple[list[list[int]], list[list[int]], int]:
    """Each set as its grams' ranks, ascending, and the number of grams: grams ordered by how
    many distinct sets hold them (rarest first), ties by first appearance."""
    counts: dict[tuple[int, ...], int] = {}
    for group in (train, test):
        for members in group:
            for gram in members:
                counts[gram] = counts.get(gram, 0) + 1
    keys, held = list(counts), list(counts.values())
    rank = {keys[i]: position for position, i in enumerate(sorted(range(len(keys)), key=held.__getitem__))}
    return [sorted(rank[g] for g in s) for s in train], [sorted(rank[g] for g in s) for s in test], len(keys)


def _prefix(size: int, t: float) -> int:
    """Grams of a set of this size that a set with Jaccard >= t must share one of (at least 1)."""
    return max(1, min(size, size - math.ceil(t * size - SLACK) + 1))
