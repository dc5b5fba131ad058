"""What a baseline model is, without torch: the architectures, their positional encodings and sizes.

:class:`ModelSpec` (architecture and sizes) and :class:`ModelShape` (a transformer's layers,
width and heads) check what an architecture can take, so that settings are validated before
torch is imported (``gengap train``'s usage errors, sweep files); gengap.baselines.architectures
builds the model of a spec. This module imports neither torch nor gengap.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from gengap.baselines.errors import BaselineError

POSITIONAL = ("rope", "nope", "learned", "sinusoidal", "alibi", "randomized", "fire", "abacus")  # the transformer's (gengap.baselines.models)
LOOPED_POSITIONAL = ("rope", "nope", "randomized", "fire", "abacus")  # the looped block's (gengap.baselines.looped)
LENGTH_POSITIONAL = ("randomized", "fire", "abacus")  # built for length generalization (gengap.baselines.positions)


@dataclass(frozen=True)
class ModelShape:
    layers: int
    d_model: int
    heads: int

    def check(self) -> None:
        if self.layers < 1 or self.d_model < 1 or self.heads < 1:
            raise BaselineError(f"layers, d_model and heads must be positive, got {asdict(self)}")
        if self.d_model % self.heads:
            raise BaselineError(f"d_model ({self.d_model}) must be divisible by heads ({self.heads})")
        if (self.d_model // self.heads) % 2:
            raise BaselineError(f"the head size d_model/heads = {self.d_model // self.heads} must be even")



ARCHITECTURES = ("transformer", "rnn", "lstm", "stack_rnn", "tape_rnn", "looped", "encoder")
ENCODER_POSITIONAL = ("sinusoidal", "nope")  # the non-causal encoder's (gengap.baselines.encoder)
NO_POSITIONS = "none"


def positions_of(arch: str) -> tuple[str, ...]:
    """The positional encodings an architecture takes (``("none",)`` for the recurrent ones)."""
    if arch == "transformer":
        return POSITIONAL
    if arch == "looped":
        return LOOPED_POSITIONAL
    if arch == "encoder":
        return ENCODER_POSITIONAL
    return (NO_POSITIONS,)


@dataclass(frozen=True)
class ModelSpec:
    """What builds a model besides the data: the architecture and its sizes."""

    arch: str
    pos: str
    layers: int
    d_model: int
    heads: int = 1
    memory_cell: int = 8
    iterations: int = 1
    window: int = 0  # looped: attention window (0: the whole causal prefix)
    stack_size: int = 0  # stack_rnn: cells of the stack (0: unbounded)

    def check(self) -> None:
        """BaselineError naming the first setting that the architecture cannot take."""
        if self.arch not in ARCHITECTURES:
            raise BaselineError(f"unknown architecture {self.arch!r}; choose one of {', '.join(ARCHITECTURES)}")
        allowed = positions_of(self.arch)
        if self.pos not in allowed:
            if allowed == (NO_POSITIONS,):
                raise BaselineError(f"{self.arch} has no positional encoding (pos must be {NO_POSITIONS!r}), got {self.pos!r}")
            raise BaselineError(f"unknown positional encoding {self.pos!r} for {self.arch}; choose one of {', '.join(allowed)}")
        if min(self.layers, self.d_model, self.heads, self.memory_cell, self.iterations) < 1:
            raise BaselineError(f"layers, d_model, heads, memory_cell and iterations must be positive, got {asdict(self)}")
        if self.arch in ("transformer", "looped", "encoder"):
            ModelShape(self.layers, self.d_model, self.heads).check()
        if self.window < 0 or (self.window and self.arch != "looped"):
            raise BaselineError(f"window applies to the looped architecture only and is non-negative, got {self.window} for {self.arch}")
        if self.stack_size < 0 or (self.stack_size and self.arch != "stack_rnn"):
            raise BaselineError(f"stack_size applies to stack_rnn only and is non-negative, got {self.stack_size} for {self.arch}")
        if self.arch in ("stack_rnn", "tape_rnn") and self.layers != 1:
            raise BaselineError(f"{self.arch} has a one-layer controller (layers must be 1), got {self.layers}")

