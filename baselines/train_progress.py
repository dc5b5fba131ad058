"""What a training run says while it runs: the tqdm bar's postfix on a terminal, and the
heartbeat line elsewhere (a log file, Slurm, CI, a pipe), which the gengap CLI prints through
gengap.progress.Ticker every GENGAP_PROGRESS_SECONDS (default 30).

:class:`SeedStatus` is updated by the training loop (plain numbers, so that the heartbeat's
thread only reads) and says, in one line::

    train rev rope seed 0: step 1,200/10,000, loss 0.2143, ID 0.950, OOD 0.010 (step 1,000), ETA 12 min

Losses have 4 significant digits; the ETA is the time to the step the run will stop at (its
cap, or the learned rule's stop step once that is known) at the pace of the steps trained so
far in this process. This module imports neither torch nor gengap.
"""

from __future__ import annotations

import math
import time
from typing import Any, Mapping


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
