"""SIGTERM handled like SIGINT: an exception in the main thread, so cleanup runs.

``timeout``, Slurm, systemd and container runtimes stop a process with SIGTERM, whose
default action kills it on the spot (no staging removed, worker processes orphaned).
Inside ``terminate_as_interrupt()`` SIGTERM raises :class:`Terminated` (a
KeyboardInterrupt, so every cleanup path that handles Ctrl-C handles it too); further
SIGTERMs are ignored while that cleanup runs. ``signals_deferred()`` holds SIGINT and
SIGTERM back during short critical sections (renames that must happen together).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from types import FrameType
from typing import Iterator

TERMINATION_EXIT_CODE = 128 + signal.SIGTERM
INTERRUPT_EXIT_CODE = 128 + signal.SIGINT


class Terminated(KeyboardInterrupt):
    """The process received SIGTERM."""


_received = threading.Event()  # SIGTERM came: libraries that turn any exception of a signal handler
# into a KeyboardInterrupt of their own (Ray's ray.wait does) lose the Terminated, not this


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # one cleanup, not a cascade of them
    _received.set()
    raise Terminated()


def was_terminated(err: BaseException) -> bool:
    """True when err (a KeyboardInterrupt) stands for SIGTERM: a Terminated, or any interrupt
    raised after SIGTERM arrived within terminate_as_interrupt()."""
    return isinstance(err, Terminated) or _received.is_set()


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Within the block (main thread only), SIGTERM raises Terminated."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    _received.clear()
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """SIGINT and SIGTERM received within the block are delivered when it ends."""
    held = {signal.SIGINT, signal.SIGTERM}
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
