"""Ordered parallel map over worker processes that never outlive their parent.

``ordered_map(func, items, workers)`` yields ``func(item)`` for every item, in order,
computed in ``workers`` processes with at most ``window`` items in flight (bounded memory).
The workers

- end when the map ends, fails or is interrupted (the pool is terminated: SIGTERM);
- ignore SIGINT (a terminal's Ctrl-C reaches the whole process group; the parent ends them)
  and take SIGTERM's default action (die at once, without a traceback); they are forked
  with both signals blocked and unblock them only once these dispositions are set, so a
  worker terminated while it starts never runs the parent's handlers (a traceback);
- end by themselves within ``WATCH_INTERVAL`` seconds when the parent dies without ending
  them (SIGKILL), instead of blocking forever on their task pipe.
"""

from __future__ import annotations

import collections
import multiprocessing
import os
import signal
import threading
import time
from multiprocessing.pool import AsyncResult
from typing import Callable, Iterable, Iterator, TypeVar

from gengap.ground.signals import signals_deferred

T = TypeVar("T")
R = TypeVar("R")

WATCH_INTERVAL = 0.2  # seconds between a worker's checks that its parent is alive


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(WATCH_INTERVAL)
        if os.getppid() != parent:
            os._exit(1)


def _start_worker(parent: int | None) -> None:
    """Pool initializer: signal dispositions and the parent watchdog (see the module doc).

    parent is the pid of the process that forked this worker (None when workers are not
    forked by it, e.g. a forkserver: the watchdog then watches the parent found at start).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})  # blocked by ordered_map's fork
    if parent is None:
        parent = os.getppid()
    elif os.getppid() != parent:  # the parent died before this worker started
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), name="gengap-parent-watch", daemon=True).start()


def ordered_map(func: Callable[[T], R], items: Iterable[T], workers: int, window: int | None = None) -> Iterator[R]:
    """func(item) for every item, in order, computed by `workers` processes (1: in this one)."""
    if workers <= 1:
        for item in items:
            yield func(item)
        return
    window = window or 2 * workers
    forked = "fork" in multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if forked else None)
    pool = None
    finished = False
    try:
        with signals_deferred():  # the workers start with SIGINT and SIGTERM blocked (see _start_worker)
            pool = context.Pool(workers, initializer=_start_worker, initargs=(os.getpid() if forked else None,))
        pending: collections.deque[AsyncResult[R]] = collections.deque()
        iterator = iter(items)
        exhausted = False
        while True:
            while not exhausted and len(pending) < window:
                try:
                    item = next(iterator)
                except StopIteration:
                    exhausted = True
                    break
                pending.append(pool.apply_async(func, (item,)))
            if not pending:
                break
            yield pending.popleft().get()
        finished = True
    finally:
        if pool is not None:
            if finished:
                pool.close()
            else:
                pool.terminate()
            pool.join()
