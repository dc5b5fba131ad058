"""gengap.splits.near_duplicates: the indexed search gives exactly what comparing every pair gives."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gengap.splits import near_duplicates
from gengap.splits.near_duplicates import edit_neighbors, encode, grams, jaccard_neighbors


def levenshtein(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    """Token edit distance by the full dynamic programme."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        current = [i]
        for j, y in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def brute_edit(train, test, k):
    out = []
    for s in test:
        found = [(levenshtein(r, s), i) for i, r in enumerate(train)]
        distance, index = min(found) if found else (k + 1, -1)
        out.append((distance, index) if distance <= k else (k + 1, -1))
    return out


def brute_jaccard(train, test, n, t):
    out = []
    for s in test:
        a = set(grams(s, n))
        best, index = 0.0, -1
        for i, r in enumerate(train):
            b = set(grams(r, n))
            value = len(a & b) / len(a | b)
            if value >= t and value > best:
                best, index = value, i
        out.append((best, index))
    return out


sequences = st.lists(st.lists(st.integers(0, 3), min_size=1, max_size=9).map(tuple), min_size=0, max_size=25)


@settings(max_examples=40, deadline=None)
@given(train=sequences, test=sequences, k=st.integers(0, 3))
def test_edit_neighbors_match_every_pair(train, test, k) -> None:
    distance, index = edit_neighbors(train, test, k)
    assert list(zip(distance.tolist(), index.tolist())) == brute_edit(train, test, k)


@settings(max_examples=40, deadline=None)
@given(train=sequences, test=sequences, n=st.integers(1, 4), t=st.sampled_from([0.2, 0.5, 2 / 3, 0.75, 0.8, 1.0]),
       method=st.sampled_from(["auto", "prefix", "matrix"]))
def test_jaccard_neighbors_match_every_pair(train, test, n, t, method) -> None:
    similarity, index = jaccard_neighbors(train, test, n, t, method)
    assert list(zip(similarity.tolist(), index.tolist())) == brute_jaccard(train, test, n, t)


@settings(max_examples=20, deadline=None)
@given(train=sequences, test=sequences, k=st.integers(1, 3), spread=st.integers(70, 1000))
def test_a_large_vocabulary_skips_the_count_filter_and_agrees(train, test, k, spread) -> None:
    """Token ids up to 3 * spread (> 64 distinct values): the candidates go to the programme unfiltered."""
    wide = lambda side: [tuple(token * spread for token in s) + (3 * spread,) for s in side]  # noqa: E731
    distance, index = edit_neighbors(wide(train), wide(test), k)
    assert list(zip(distance.tolist(), index.tolist())) == brute_edit(wide(train), wide(test), k)


def test_long_sequences_and_a_larger_vocabulary() -> None:
    rng = np.random.default_rng(0)
    base = [tuple(rng.integers(0, 12, size=rng.integers(20, 40)).tolist()) for _ in range(60)]
    test = []
    for s in base[:30]:  # near copies of train sequences: a few edits each
        s = list(s)
        for _ in range(int(rng.integers(0, 4))):
            where = int(rng.integers(0, len(s)))
            [s.__setitem__, s.insert, lambda w, v: s.pop(w)][int(rng.integers(0, 3))](where, int(rng.integers(0, 12)))
        test.append(tuple(s))
    test += [tuple(rng.integers(0, 12, size=30).tolist()) for _ in range(10)]
    full = [[levenshtein(r, s) for r in base] for s in test]  # every pair once, then each k from it
    for k in (0, 1, 3, 5):
        expected = [(min(row), row.index(min(row))) if min(row) <= k else (k + 1, -1) for row in full]
        distance, index = edit_neighbors(base, test, k)
        assert list(zip(distance.tolist(), index.tolist())) == expected
    for method in ("prefix", "matrix"):
        similarity, index = jaccard_neighbors(base, test, 3, 0.5, method)
        assert list(zip(similarity.tolist(), index.tolist())) == brute_jaccard(base, test, 3, 0.5)
    assert (distance <= 5).sum() >= 25


@pytest.mark.parametrize("bit_words", [0, 1 << 24])
def test_the_prefix_path_agrees_with_and_without_bit_sets(monkeypatch, bit_words) -> None:
    """BIT_WORDS 0: the candidates' intersections as Python sets; else as bit sets (over 64 ranks: several words)."""
    monkeypatch.setattr(near_duplicates, "BIT_WORDS", bit_words)
    rng = np.random.default_rng(1)
    for vocabulary in (3, 40, 400):
        train = [tuple(rng.integers(0, vocabulary, size=rng.integers(1, 12)).tolist()) for _ in range(80)]
        test = [tuple(rng.integers(0, vocabulary, size=rng.integers(1, 12)).tolist()) for _ in range(40)] + train[:10]
        for n, t in ((1, 0.5), (2, 0.3), (3, 0.8)):
            similarity, index = jaccard_neighbors(train, test, n, t, "prefix")
            assert list(zip(similarity.tolist(), index.tolist())) == brute_jaccard(train, test, n, t)


def test_by_hand() -> None:
    vocabulary: dict[str, int] = {}
    train = encode(["jump twice", "walk left twice", "look"], vocabulary)
    test = encode(["jump thrice", "walk left thrice", "run around right", "look"], vocabulary)
    distance, index = edit_neighbors(train, test, 1)
    assert distance.tolist() == [1, 1, 2, 0] and index.tolist() == [0, 1, -1, 2]
    similarity, index = jaccard_neighbors(train, test, 2, 0.3)
    # {walk left, left thrice} vs {walk left, left twice}: 1/3; "look" is one gram, equal to train's
    assert similarity.tolist() == pytest.approx([0.0, 1 / 3, 0.0, 1.0]) and index.tolist() == [-1, 1, -1, 2]
