"""The generators' fast paths for string_rewrite and regex_match agree with plain definitions.

Markov runs (str.replace and Brent's early exit for loops) against a step-by-step run; the
position automaton's reach (leaves grouped by follow set, periodic tail), lazy rows and
accepts_all against brute force over every word; skipping the non-member tries of a length
where every word is a member draws exactly the uniforms the tries would draw.
"""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings, strategies as st

from gengap.generators import get_task
from gengap.generators.sequences import uniform_stream
from gengap.generators.tasks import _regex, rules


def _plain_markov(system: list[tuple[str, str]], word: str, cap: int) -> tuple[str, list[int]] | None:
    applied: list[int] = []
    while True:
        for index, (lhs, rhs) in enumerate(system):
            at = word.find(lhs)
            if at >= 0:
                word = word[:at] + rhs + word[at + len(lhs) :]
                applied.append(index)
                break
        else:
            return word, applied
        if len(applied) > cap:
            return None


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), cap=st.integers(1, 60))
def test_run_markov_matches_the_plain_run(seed: int, cap: int) -> None:
    params = get_task("string_rewrite").level(1 + seed % 10)
    nxt = uniform_stream(np.random.default_rng(seed)).__next__
    for _ in range(20):
        system, word = rules._draw_system(nxt, params), rules._draw_word(nxt, params)
        assert rules.run_markov(system, word, cap) == _plain_markov(system, word, cap)


def test_run_markov_stops_a_loop_before_the_cap() -> None:
    assert rules.run_markov([("a", "b"), ("b", "a")], "a", 10**9) is None  # returns at once, not after 1e9 steps
    assert rules.run_markov([("a", "aa")], "a", 30) is None
    assert rules.run_markov([("ab", "b")], "aab", 5) == ("b", [0, 0])


def _words(symbols: int, length: int) -> list[list[int]]:
    return [list(w) for w in itertools.product(range(symbols), repeat=length)]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), level=st.integers(1, 6), alphabet=st.integers(2, 3))
def test_automaton_reach_rows_and_accepts_all_match_brute_force(seed: int, level: int, alphabet: int) -> None:
    params = get_task("regex_match").level(level).replace(alphabet_size=alphabet, max_length=7)
    nxt = uniform_stream(np.random.default_rng(seed)).__next__
    tree = rules._draw_regex(nxt, params)
    nfa = _regex.Nfa(tree, rules.SYMBOLS[:alphabet])
    reach = nfa.reach(params.max_length)
    for length in range(params.max_length + 1):
        accepted = [w for w in _words(alphabet, length) if _regex.matches(tree, [rules.SYMBOLS[c] for c in w])]
        assert [nfa.accepts(w) for w in _words(alphabet, length)] == [w in accepted for w in _words(alphabet, length)]
        assert bool(nfa.start & reach[length]) == bool(accepted)
        if nfa.accepts_all(length):  # may say False when undecided, never True wrongly
            assert len(accepted) == alphabet**length
        elif _regex.SUBSET_LIMIT >= alphabet**length:  # few enough sets: decided
            assert len(accepted) < alphabet**length
    # reach by its definition: leaf i is in reach[k + 1] when its follow set meets reach[k]
    for k in range(params.max_length):
        assert reach[k + 1] == sum(1 << i for i, after in enumerate(nfa.follow) if after & reach[k])


def test_skipped_non_member_tries_draw_what_the_tries_would() -> None:
    params = get_task("regex_match").level(2)
    tree = ("star", ("alt", (("sym", "a"), ("sym", "b"))))  # every word is a member
    for seed in range(20):
        nfa = _regex.Nfa(tree, "ab")
        reach = nfa.reach(params.max_length)
        fast = uniform_stream(np.random.default_rng(seed)).__next__
        assert rules._sample_word(fast, nfa, reach, 5, False, 2) is None
        slow = uniform_stream(np.random.default_rng(seed)).__next__
        nfa._accepts_all = {5: False}  # the undecided answer: every try is built and tested
        assert rules._sample_word(slow, nfa, reach, 5, False, 2) is None
        assert fast() == slow()


def test_generating_leaves_no_cyclic_garbage_for_the_paused_collector() -> None:
    """generate runs with the collector paused, so it must not leave reference cycles behind
    (the regex drawer's recursive closure is released explicitly)."""
    import gc

    for name in ("string_rewrite", "regex_match"):
        task = get_task(name)
        gc.collect()
        enabled = gc.isenabled()
        gc.disable()
        try:
            task.generate(np.random.default_rng(4), 200, task.level(6))
            assert gc.collect() == 0, name
        finally:
            if enabled:
                gc.enable()
