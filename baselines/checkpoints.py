"""Checkpoints of a training run: save and restore everything a run needs to continue exactly.

A checkpoint holds the model, optimizer and scheduler states, every RNG state (torch, CUDA,
numpy, Python) and the run's :class:`Progress` (step, metric history, time and tokens
trained, the loss accumulated since the last evaluation, and the training source's state:
a stream's cursor and curriculum). It is written atomically (a
temporary file renamed into place) and loaded with ``weights_only=True``, so it holds only
tensors and plain types. ``restore`` puts every state back, so that a resumed run on the CPU
ends with exactly the numbers of an uninterrupted one.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np
import torch

from gengap.baselines.errors import BaselineError, RunFileError
from gengap.baselines.run_identity import KEY
from gengap.generators.safe_files import atomic_file

RUN_FORMAT = "gengap-baseline-run/1"  # of run.json and checkpoints


@dataclass
class Progress:
    """Where one seed's training stands (all of it goes into the checkpoint)."""

    loss_sum: torch.Tensor  # summed on the device since the last evaluation, never synchronised per step
    step: int = 0
    history: list[dict[str, Any]] = field(default_factory=list)
    train_seconds: float = 0.0
    tokens: int = 0
    loss_count: int = 0
    data_state: dict[str, Any] = field(default_factory=dict)  # the training source's (a stream's cursor and curriculum)
    selected: dict[str, Any] | None = None  # select best: {"step", "model": state dict} of the checkpoint the history selects

    def advance(self, step: int, loss: torch.Tensor, tokens: int) -> None:
        """Account for training step `step`: its loss (not synchronised) and its tokens."""
        self.step = step
        self.loss_sum += loss
        self.loss_count += 1
        self.tokens += tokens


def rng_states() -> dict[str, Any]:
    """Every RNG state as tensors and plain types (loadable with weights_only=True)."""
    name, keys, pos, has_gauss, cached = np.random.get_state()
    version, state, gauss = random.getstate()
    return {
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
        "numpy": {"name": name, "keys": torch.from_numpy(keys.astype(np.int64)), "pos": int(pos), "has_gauss": int(has_gauss), "cached": float(cached)},
        "python": {"version": version, "state": torch.tensor(state, dtype=torch.int64), "gauss": gauss},
    }


def set_rng_states(states: Mapping[str, Any]) -> None:
    """Put back the RNG states of rng_states() (CUDA's only on the same number of devices)."""
    torch.set_rng_state(states["torch"])
    if states["cuda"] and torch.cuda.is_available() and len(states["cuda"]) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(states["cuda"])
    n = states["numpy"]
    np.random.set_state((n["name"], n["keys"].numpy().astype(np.uint32), n["pos"], n["has_gauss"], n["cached"]))
    p = states["python"]
    random.setstate((p["version"], tuple(int(v) for v in p["state"].tolist()), p["gauss"]))


def save_checkpoint(path: Path, state: dict[str, Any]) -> None:
    """torch.save state to path atomically, through path.tmp (created exclusively, never
    through a link, removed when the write fails, e.g. on a full disk); BaselineError when
    torch's writer fails (on a full disk it reports ``unexpected pos``, a RuntimeError),
    OSError naming the file when the file system refuses the write."""
    try:
        with atomic_file(path) as handle:
            torch.save(state, handle)
    except RuntimeError as err:
        raise BaselineError(f"cannot write the checkpoint {path}: {_first_line(err)} (is the disk full?); the previous checkpoint, if any, is kept") from None


def load_checkpoint(path: Path) -> dict[str, Any]:
    """A checkpoint's state (weights_only); RunFileError for a truncated or foreign file."""
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # a truncated or foreign file
        raise RunFileError(f"cannot load checkpoint {path}: {_first_line(err)}") from None


def _first_line(err: BaseException) -> str:
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    return lines[0] if lines else type(err).__name__


REQUIRED = ("model", "optimizer", "scheduler", "rng", "step", "history", "train_seconds", "tokens", "loss_sum", "loss_count")


def read_checkpoint(path: Path) -> dict[str, Any]:
    """A training checkpoint's state; RunFileError for a file that is not one (another torch file)."""
    state = load_checkpoint(path)
    if not isinstance(state, dict) or state.get("format") != RUN_FORMAT or any(key not in state for key in REQUIRED):
        raise RunFileError(f"{path} is not a gengap training checkpoint")
    return state


def save(path: Path, seed: int, model: torch.nn.Module, optimizer: Any, scheduler: Any, progress: Progress,
         identity: Mapping[str, Any] | None = None) -> None:
    """Checkpoint a run after progress.step steps (identity: the run's, see gengap.baselines.run_identity)."""
    save_checkpoint(path, {
        "format": RUN_FORMAT, "seed": seed, "step": progress.step, **({KEY: dict(identity)} if identity is not None else {}),
        "model": model.state_dict(), "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(), "rng": rng_states(),
        "history": progress.history, "train_seconds": progress.train_seconds, "tokens": progress.tokens,
        "loss_sum": progress.loss_sum.detach().cpu(), "loss_count": progress.loss_count,
        "data_state": progress.data_state,
        **({"selected": progress.selected} if progress.selected is not None else {}),
    })  # fmt: skip


def restore(path: Path, model: torch.nn.Module, optimizer: Any, scheduler: Any, device: torch.device,
            check_run: Callable[[Any], None] | None = None) -> Progress:
    """Load a checkpoint into model, optimizer, scheduler and the RNGs; return its progress.

    check_run(identity recorded, or None) runs before anything is loaded and raises to refuse
    the checkpoint; a checkpoint whose states do not fit (another run's model) is a RunFileError.
    """
    state = read_checkpoint(path)
    if check_run is not None:
        check_run(state.get(KEY))
    try:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        set_rng_states(state["rng"])
        return Progress(
            loss_sum=state["loss_sum"].to(device),
            step=int(state["step"]),
            history=list(state["history"]),
            train_seconds=float(state["train_seconds"]),
            tokens=int(state["tokens"]),
            loss_count=int(state["loss_count"]),
            data_state=dict(state.get("data_state") or {}),
            selected=dict(state["selected"]) if state.get("selected") is not None else None,
        )
    except (RuntimeError, ValueError, KeyError, TypeError, IndexError, AttributeError) as err:
        raise RunFileError(f"{path} does not fit this run's model and optimizer: {_first_line(err)}") from None
