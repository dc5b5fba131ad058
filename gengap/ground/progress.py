"""Progress for long steps when stderr is not a terminal (a log file, Slurm, CI, a pipe).

On a terminal the commands draw tqdm bars; elsewhere a bar is disabled, and a step such as
the MCD search of a release's SCAN config would be silent for minutes. :class:`Ticker`
prints a line ``gengap: <what is being done> (<elapsed> s)`` every ``interval`` seconds
(``GENGAP_PROGRESS_SECONDS``, default 30) from a daemon thread while its ``with`` block runs,
and nothing on a terminal or when the block ends sooner. Given ``redraw``, on a terminal it
calls that instead, every ``min(interval, REDRAW_SECONDS)`` seconds: a bar that moves only when
a step finishes (a release's configs) is redrawn meanwhile, so its elapsed time, its ETA and
the name of the step waited for stay current. Lines go to stderr only and change no output;
where no thread can be started (a tight ``ulimit -v``) there are none and the work goes on.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from types import TracebackType
from typing import Callable, TextIO

INTERVAL_VARIABLE = "GENGAP_PROGRESS_SECONDS"
DEFAULT_INTERVAL = 30.0
REDRAW_SECONDS = 1.0  # how often a terminal's bar is redrawn between the steps it counts


def interval_from_environment() -> float:
    """GENGAP_PROGRESS_SECONDS as a positive float, else DEFAULT_INTERVAL (a malformed value is ignored)."""
    try:
        value = float(os.environ.get(INTERVAL_VARIABLE, ""))
    except ValueError:
        return DEFAULT_INTERVAL
    return value if 0 < value < float("inf") else DEFAULT_INTERVAL


class Ticker:
    """Within ``with``, a line ``gengap: {describe()} ({elapsed} s)`` every interval seconds on a
    stream that is not a terminal, or, on a terminal, ``redraw()`` every min(interval,
    REDRAW_SECONDS) seconds when one is given. describe and redraw are called from the ticker's
    thread: describe should only read (counters, the name of the step waited for); redraw may
    redraw a tqdm bar (tqdm locks its own drawing)."""

    def __init__(
        self, describe: Callable[[], str], stream: TextIO | None = None, interval: float | None = None, redraw: Callable[[], None] | None = None
    ) -> None:
        self.describe = describe
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval if interval is not None else interval_from_environment()
        self.redraw = redraw
        self.started = time.perf_counter()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def active(self) -> bool:
        """Whether lines are printed (the stream is not a terminal)."""
        isatty = getattr(self.stream, "isatty", None)
        return not (isatty is not None and isatty())

    def __enter__(self) -> "Ticker":
        self.started = time.perf_counter()
        if self.active or self.redraw is not None:
            target = self._run if self.active else self._redraw
            thread = threading.Thread(target=target, name="gengap-progress", daemon=True)
            try:
                thread.start()
            except RuntimeError:  # "can't start new thread" (a tight ulimit -v): the block runs without progress lines
                return self
            self._thread = thread
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            line = f"gengap: {self.describe()} ({time.perf_counter() - self.started:.0f} s)\n"
            try:
                self.stream.write(line)  # one write: the line never interleaves with the main thread's
                self.stream.flush()
            except (OSError, ValueError):  # stderr closed or gone: stay silent
                return

    def _redraw(self) -> None:
        assert self.redraw is not None
        while not self._stop.wait(min(self.interval, REDRAW_SECONDS)):
            try:
                self.redraw()
            except (OSError, ValueError):  # the terminal is gone: stop redrawing
                return
