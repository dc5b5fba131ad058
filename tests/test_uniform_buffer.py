"""UniformBuffer gives uniform_stream's values, whatever the sizes taken, and draws the same
chunks from its rng; paused_gc restores the collector's state and promotes what was built."""

from __future__ import annotations

import gc
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gengap.generators.gc_pause import paused_gc
from gengap.generators.sequences import UniformBuffer, uniform_stream


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(0, 300), max_size=30), chunk=st.integers(1, 64), seed=st.integers(0, 2**32 - 1))
def test_takes_are_the_stream_in_order_and_leave_the_rng_where_the_stream_does(sizes: list[int], chunk: int, seed: int) -> None:
    buffer_rng, stream_rng = np.random.default_rng(seed), np.random.default_rng(seed)
    buffer = UniformBuffer(buffer_rng, chunk)
    taken = [value for size in sizes for value in buffer.take(size)]
    stream = uniform_stream(stream_rng, chunk)
    assert taken == list(itertools.islice(stream, len(taken)))
    if taken:  # the stream has drawn the chunks holding them, as the buffer has
        assert buffer_rng.random() == stream_rng.random()


def test_paused_gc_restores_the_collector() -> None:
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyError), paused_gc():
        raise KeyError("x")
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()  # disabled by the caller: stays so
    finally:
        gc.enable()


def test_paused_gc_promotes_what_was_built_untraced() -> None:
    with paused_gc():
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # only the outermost pause turns it back on
        built = [[i] for i in range(1000)]
    assert gc.isenabled()
    assert all(obj is not built for obj in gc.get_objects(generation=0))
    assert any(obj is built for obj in gc.get_objects(generation=2))
    assert gc.get_freeze_count() == 0


def test_paused_gc_leaves_frozen_objects_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    """A caller's freeze is left alone: paused_gc neither freezes nor unfreezes then (the frozen
    count itself may fall by a few when another thread frees frozen objects)."""
    import gengap.generators.gc_pause as gc_pause

    calls: list[str] = []

    class Recording:
        def __getattr__(self, name: str):
            return getattr(gc, name)

        def freeze(self) -> None:
            calls.append("freeze")
            gc.freeze()

        def unfreeze(self) -> None:
            calls.append("unfreeze")
            gc.unfreeze()

    monkeypatch.setattr(gc_pause, "gc", Recording())
    gc.freeze()
    try:
        with paused_gc():
            pass
        assert calls == [] and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    with paused_gc():  # with no freeze held, what was built goes to the oldest generation
        pass
    assert calls == ["freeze", "unfreeze"] and gc.get_freeze_count() == 0
