"""The architectures a baseline can train, chosen with one setting (``arch``), one file each:

| ``arch``      | file                  | model                                                         |
|---------------|-----------------------|---------------------------------------------------------------|
| transformer   | baselines/models.py   | decoder-only transformer, five positional encodings (``pos``) |
| rnn           | baselines/recurrent.py| Elman RNN (tanh), ``layers`` deep                             |
| lstm          | baselines/recurrent.py| LSTM, ``layers`` deep                                         |
| stack_rnn     | baselines/stack_rnn.py| Elman controller + differentiable stack (push / pop / no-op)  |
| tape_rnn      | baselines/tape_rnn.py | Elman controller + memory tape (stay, left, right, jumps)     |
| looped        | baselines/looped.py   | one weight-tied block iterated in depth with input recall     |

All implement :class:`gengap.baselines.sequence_model.SequenceModel`. ``d_model`` is the hidden size
of every architecture; ``heads`` applies to the transformer and the looped block,
``memory_cell`` to the stack and the tape, ``iterations`` and ``window`` to the looped model, ``pos`` to the
transformer (rope, nope, learned, sinusoidal, alibi) and the looped block (rope, nope).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from gengap.baselines.errors import BaselineError
from gengap.baselines.looped import LOOPED_POSITIONAL, LoopedTransformer
from gengap.baselines.models import POSITIONAL, ModelShape, build_model as build_transformer
from gengap.baselines.recurrent import RECURRENT, RecurrentLM
from gengap.baselines.sequence_model import SequenceModel
from gengap.baselines.stack_rnn import StackRNN
from gengap.baselines.tape_rnn import TapeRNN

ARCHITECTURES = ("transformer", "rnn", "lstm", "stack_rnn", "tape_rnn", "looped")
NO_POSITIONS = "none"


def positions_of(arch: str) -> tuple[str, ...]:
    """The positional encodings an architecture takes (``("none",)`` for the recurrent ones)."""
    if arch == "transformer":
        return POSITIONAL
    if arch == "looped":
        return LOOPED_POSITIONAL
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
        if self.arch in ("transformer", "looped"):
            ModelShape(self.layers, self.d_model, self.heads).check()
        if self.window < 0 or (self.window and self.arch != "looped"):
            raise BaselineError(f"window applies to the looped architecture only and is non-negative, got {self.window} for {self.arch}")
        if self.arch in ("stack_rnn", "tape_rnn") and self.layers != 1:
            raise BaselineError(f"{self.arch} has a one-layer controller (layers must be 1), got {self.layers}")


def build(spec: ModelSpec, vocab_size: int, max_len: int, pad_id: int = 0, sep_id: int = 1) -> SequenceModel:
    """A freshly initialised model of spec (initialise under torch.manual_seed for reproducibility)."""
    spec.check()
    if spec.arch == "transformer":
        return build_transformer(spec.pos, ModelShape(spec.layers, spec.d_model, spec.heads), vocab_size, max_len, pad_id)
    if spec.arch in RECURRENT:
        return RecurrentLM(spec.arch, spec.layers, spec.d_model, vocab_size, pad_id, sep_id)
    if spec.arch == "stack_rnn":
        return StackRNN(spec.d_model, spec.memory_cell, vocab_size, pad_id, sep_id)
    if spec.arch == "tape_rnn":
        return TapeRNN(spec.d_model, spec.memory_cell, vocab_size, pad_id, sep_id)
    return LoopedTransformer(spec.pos, spec.layers, spec.d_model, spec.heads, spec.iterations, vocab_size, pad_id, sep_id, spec.window)
