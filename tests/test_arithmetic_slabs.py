"""big_endian and place (gengap.generators.tasks.arithmetic) equal their per-row definitions, entries
past each row's end included (they copy one slab per distinct digit count)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gengap.generators.tasks.arithmetic import big_endian, place, random_operands


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 30), lo=st.integers(1, 9), spread=st.integers(0, 9))
def test_slab_copies_equal_the_per_row_definition(seed: int, n: int, lo: int, spread: int) -> None:
    rng = np.random.default_rng(seed)
    count_a, a = random_operands(rng, n, lo, lo + spread)
    count_b, b = random_operands(rng, n, 1, 1 + spread)
    big = big_endian(a, count_a)
    placed = place(a, count_a, 10, b, count_b)
    for i, (ca, cb) in enumerate(zip(count_a.tolist(), count_b.tolist())):
        assert big[i].tolist() == a[i, ca - 1 :: -1].tolist() + [a[i, 0]] * (a.shape[1] - ca)
        tail = placed.shape[1] - ca - 1 - b.shape[1]
        assert placed[i].tolist() == a[i, :ca].tolist() + [10] + b[i].tolist() + [b[i, -1]] * tail
