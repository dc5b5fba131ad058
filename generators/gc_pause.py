"""Pausing Python's cyclic garbage collector while a batch builds many containers.

A task that returns derivation trees creates hundreds of lists per example; while they are
built, every few thousand allocations the collector walks all live containers again, which
costs more than building them. The trees are acyclic (reference counting frees them), so
the collector has nothing to find there: generators that build them run under
:func:`paused_gc`.
"""

from __future__ import annotations

import contextlib
import gc
from typing import Iterator


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic collector for the block; restore its previous state after (also on
    an exception; a collector disabled by the caller stays disabled)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
