"""Pausing Python's cyclic garbage collector while a batch builds many containers.

A task that returns derivation trees creates hundreds of lists per example; while they are
built, every few thousand allocations the collector walks all live containers again, which
costs more than building them. The trees are acyclic (reference counting frees them), so
the collector has nothing to find there: generators that build them run under
:func:`paused_gc`. When the pause ends, what was built is handed to the oldest generation
untraced; otherwise the first young collection afterwards traces all of it in one pass
(pcfg_set at ~500 input tokens, blocks of 10,000: about as long again as generating them),
and the next ones trace it again on its way to the oldest generation.
"""

from __future__ import annotations

import contextlib
import gc
from typing import Iterator


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic collector for the block; restore its previous state after (also on
    an exception; a collector disabled by the caller stays disabled).

    On re-enabling it, every tracked object is moved to the oldest generation without being
    traced (``gc.freeze()`` then ``gc.unfreeze()``), unless some caller holds frozen objects
    (their freeze is left alone). Such objects, other young objects of the process among
    them, are traced at the next full collection like any long-lived object: a reference
    cycle among them is freed then rather than at the next young collection.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
