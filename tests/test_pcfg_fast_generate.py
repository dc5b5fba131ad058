"""pcfg_set's generator agrees with a plain top-down sampler.

The plain sampler below reads ``uniform_stream`` one value at a time and builds each value
and derivation with fresh lists; the generator reads the same stream from pre-drawn chunks
(an argument's symbols as one slice), updates values in place and pauses the collector.
They must give the same programs, targets, derivations and features, and leave the random
generator in the same state.
"""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings, strategies as st

from gengap.generators import get_task
from gengap.generators.sequences import uniform_stream
from gengap.generators.tasks.pcfg_set import FUNCTIONS, LEAF_RULE, RULES, SYMBOLS, CHUNK, PcfgSetParams, capacity
from tests.conftest import random_params

PCFG = get_task("pcfg_set")

_UNARY_SEMANTICS = (
    lambda x: x,
    lambda x: x[::-1],
    lambda x: x[1:] + x[:1],
    lambda x: x + x[-1:],
    lambda x: x[-1:] + x[1:-1] + x[:1] if len(x) > 1 else x,
    lambda x: x + x,
)
_BINARY_SEMANTICS = (lambda x, y: x + y, lambda x, y: y + x, lambda x, y: y, lambda x, y: x)


def plain_programs(rng: np.random.Generator, n: int, params: PcfgSetParams) -> list[tuple]:
    """(input, target, derivation, depth, functions, argument lengths) per program."""
    nxt = uniform_stream(rng).__next__

    def build(k: int, d: int, toks: list[str], lengths: list[int]) -> tuple[list[str], list, int]:
        if k == 0:
            length = params.min_arg_length + int(nxt() * (params.max_arg_length - params.min_arg_length + 1))
            syms = [SYMBOLS[int(nxt() * params.alphabet_size)] for _ in range(length)]
            toks += syms
            lengths.append(length)
            return syms, [LEAF_RULE, *syms], 0
        rest, cap = k - 1, capacity(d - 1)
        f = int(nxt() * 10) if rest <= cap else 6 + int(nxt() * 4)
        toks.append(FUNCTIONS[f])
        if f < 6:
            x, sub, depth = build(rest, d - 1, toks, lengths)
            return _UNARY_SEMANTICS[f](x), [RULES[f], sub], depth + 1
        first, last = max(0, rest - cap), min(rest, cap)
        left = first + int(nxt() * (last - first + 1))
        x, sub_x, depth_x = build(left, d - 1, toks, lengths)
        toks.append(",")
        y, sub_y, depth_y = build(rest - left, d - 1, toks, lengths)
        return _BINARY_SEMANTICS[f - 6](x, y), [RULES[f], sub_x, sub_y], max(depth_x, depth_y) + 1

    programs = []
    for _ in range(n):
        k = params.min_functions + int(nxt() * (params.max_functions - params.min_functions + 1))
        toks: list[str] = []
        lengths: list[int] = []
        value, tree, depth = build(k, params.max_depth, toks, lengths)
        programs.append((" ".join(toks), " ".join(value), tree, depth, k, lengths))
    return programs


def assert_same_as_plain(params: PcfgSetParams, seed: int, n: int) -> None:
    plain_rng, fast_rng = np.random.default_rng(seed), np.random.default_rng(seed)
    expected = plain_programs(plain_rng, n, params)
    batch = PCFG.generate(fast_rng, n, params)
    features = {name: column.tolist() for name, column in batch.features.items()}
    for i, (program, target, tree, depth, k, lengths) in enumerate(expected):
        assert batch.inputs[i].decode() == program
        assert batch.targets[i].decode() == target
        assert batch.structure[i] == tree
        assert features["depth"][i] == depth and features["derivation_depth"][i] == depth + 1
        assert features["functions"][i] == k and features["rules"][i] == k + len(lengths)
        assert features["arguments"][i] == len(lengths)
        assert features["argument_symbols"][i] == sum(lengths)
        assert features["max_argument_length"][i] == max(lengths)
    assert fast_rng.random() == plain_rng.random()  # the same chunks drawn, no more


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 40))
def test_generate_matches_the_plain_sampler(seed: int, n: int) -> None:
    params = random_params(PCFG, random.Random(seed)).replace(lexicon=0)  # the sampler's draws (lexicons: tests/test_lexicons.py)
    assert_same_as_plain(params, seed, n)


def test_generate_matches_the_plain_sampler_across_chunks_and_levels() -> None:
    # programs that straddle many CHUNK boundaries, the deepest level, forced binary nodes
    long_arguments = PcfgSetParams(min_functions=30, max_functions=40, max_depth=6, min_arg_length=50, max_arg_length=100)
    batch = PCFG.generate(np.random.default_rng(3), 12, long_arguments)
    assert batch.features["argument_symbols"].sum() > 3 * CHUNK
    assert_same_as_plain(long_arguments, 3, 12)
    assert_same_as_plain(PCFG.level(10), 4, 40)
    assert_same_as_plain(PcfgSetParams(min_functions=15, max_functions=15, max_depth=4, alphabet_size=2), 5, 30)
    assert_same_as_plain(PcfgSetParams(min_functions=1, max_functions=1, max_depth=1, min_arg_length=1, max_arg_length=1), 6, 50)
    # one program far shorter than the most a program may draw: chunks drawn ahead are given back
    assert_same_as_plain(PcfgSetParams(min_functions=1, max_functions=1000, max_depth=10, max_arg_length=100), 7, 1)
