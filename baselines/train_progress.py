"""What a training run says while it runs: the tqdm bar's postfix on a terminal, and the
heartbeat line elsewhere (a log file, Slurm, CI, a pipe), which the gengap CLI prints through
gengap.progress.Ticker every GENGAP_PROGRESS_SECONDS (default 30).

:class:`SeedStatus` is updated by the training loop (plain numbers, so that the heartbeat's
thread only reads) and says, in one line::

    train rev rope seed 0: step 1,200/10,000, loss 0.2143, ID 0.950, OOD 0.010 (step 1,000), ETA 12 min

Losses have 4 significant digits; the ETA is the time to the step the run will stop at (its
cap, or the learned rule's stop step once that is known) at the pace of the steps trained so
far in this process. :func:`bookended` makes a heartbeat print that line also as each seed
starts and as it ends, where the heartbeat prints lines, so that a run shorter than the
heartbeat's interval says what it trained. This module imports neither torch nor gengap.
"""

from __future__ import annotations

import math
import sys
import time
from contextlib import contextmanager
from typing import Any, Callable, ContextManager, Iterator, Mapping, TextIO


def loss_text(value: float | None) -> str:
    """A loss in 4 significant digits (``nan`` for a loss that was not a finite number)."""
    return "nan" if value is None or not math.isfinite(value) else f"{value:.4g}"


def duration_text(seconds: float) -> str:
    """``35 s``, ``12 min``, ``3.5 h``."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def postfix(row: Mapping[str, Any]) -> dict[str, str]:
    """The tqdm bar's postfix after a periodic row: loss, ID and OOD exact match, short."""
    return {"loss": loss_text(row["loss"]), "id": f"{row['id_exact_match']:.3f}", "ood": f"{row['ood_exact_match']:.3f}"}


class SeedStatus:
    """Where the training of one seed is, for the heartbeat line (:meth:`describe`)."""

    def __init__(self, what: str, first_step: int, stop: int) -> None:
        self.what = what  # "train <config> <model> seed <s>"
        self.first_step = first_step  # the step this process started from (0, or the checkpoint's)
        self.step = first_step
        self.stop = stop
        self.started = time.perf_counter()
        self.row: Mapping[str, Any] | None = None  # the last periodic row

    def describe(self) -> str:
        text = f"{self.what}: step {self.step:,}/{self.stop:,}"
        row = self.row
        if row is not None:
            text += (f", loss {loss_text(row['loss'])}, ID {row['id_exact_match']:.3f}, OOD {row['ood_exact_match']:.3f}"
                     f" (step {row['step']:,})")
        done = self.step - self.first_step
        if done > 0 and self.stop > self.step:
            text += f", ETA {duration_text((time.perf_counter() - self.started) / done * (self.stop - self.step))}"
        return text


def _lines_wanted(stream: TextIO) -> bool:
    """Whether a stream gets lines rather than a bar: it is not a terminal."""
    isatty = getattr(stream, "isatty", None)
    return not (isatty is not None and isatty())


def _say(stream: TextIO, line: str) -> None:
    try:
        stream.write(line + "\n")
        stream.flush()
    except (OSError, ValueError):  # stderr closed or gone: stay silent
        pass


def bookended(heartbeat: Callable[[Callable[[], str]], ContextManager[Any]], stream: TextIO | None = None) -> Callable[[Callable[[], str]], ContextManager[Any]]:
    """heartbeat(describe), plus, when stream (default: stderr at the time) is not a terminal, the
    line ``gengap: <describe()> (<elapsed> s)`` as the seed starts and again as it ends (not
    after an error), in the heartbeat's format::

        gengap: train rev rope seed 0: step 0/40 (0 s)
        gengap: train rev rope seed 0: step 40/40, loss 0.1235, ID 0.950, OOD 0.010 (step 40) (3 s)
    """

    @contextmanager
    def beat(describe: Callable[[], str]) -> Iterator[None]:
        out = stream if stream is not None else sys.stderr
        lines = _lines_wanted(out)
        started = time.perf_counter()
        if lines:
            _say(out, f"gengap: {describe()} (0 s)")
        with heartbeat(describe):
            yield
        if lines:
            _say(out, f"gengap: {describe()} ({time.perf_counter() - started:.0f} s)")

    return beat
