"""The architectures a baseline can train, chosen with one setting (``arch``), one file each:

| ``arch``      | file                  | model                                                         |
|---------------|-----------------------|---------------------------------------------------------------|
| transformer   | baselines/models.py   | decoder-only transformer, eight positional encodings (``pos``) |
| rnn           | baselines/recurrent.py| Elman RNN (tanh), ``layers`` deep                             |
| lstm          | baselines/recurrent.py| LSTM, ``layers`` deep                                         |
| stack_rnn     | baselines/stack_rnn.py| Elman controller + differentiable stack (push / pop / no-op)  |
| tape_rnn      | baselines/tape_rnn.py | Elman controller + memory tape (stay, left, right, jumps)     |
| looped        | baselines/looped.py   | one weight-tied block iterated in depth with input recall     |
| encoder       | baselines/encoder.py  | non-causal transformer encoder over input + empty output tape |

All implement :class:`gengap.baselines.sequence_model.SequenceModel`. ``d_model`` is the hidden size
of every architecture; ``heads`` applies to the transformer and the looped block,
``memory_cell`` to the stack and the tape, ``stack_size`` to the stack (0: unbounded), ``iterations`` and ``window`` to the looped model, ``pos`` to the
transformer (rope, nope, learned, sinusoidal, alibi, randomized, fire, abacus), the looped block
(rope, nope, randomized, fire, abacus; the last three: gengap.baselines.positions) and the encoder
(sinusoidal, nope; it takes the empty-tape layout only).
"""

from __future__ import annotations

from typing import Sequence

from gengap.baselines.encoder import Encoder
from gengap.baselines.looped import LoopedTransformer
from gengap.baselines.models import build_model as build_transformer
from gengap.baselines.recurrent import RECURRENT, RecurrentLM
from gengap.baselines.sequence_model import SequenceModel
from gengap.baselines.spec import ARCHITECTURES, NO_POSITIONS, ModelShape, ModelSpec, positions_of  # noqa: F401  (their home was here)
from gengap.baselines.stack_rnn import StackRNN
from gengap.baselines.tape_rnn import TapeRNN


def build(
    spec: ModelSpec, vocab_size: int, max_len: int, pad_id: int = 0, sep_id: int = 1, tokens: Sequence[str] | None = None
) -> SequenceModel:
    """A freshly initialised model of spec (initialise under torch.manual_seed for reproducibility;
    tokens: the vocabulary, which abacus positions need)."""
    spec.check()
    if spec.arch == "transformer":
        return build_transformer(spec.pos, ModelShape(spec.layers, spec.d_model, spec.heads), vocab_size, max_len, pad_id, tokens)
    if spec.arch in RECURRENT:
        return RecurrentLM(spec.arch, spec.layers, spec.d_model, vocab_size, pad_id, sep_id)
    if spec.arch == "stack_rnn":
        return StackRNN(spec.d_model, spec.memory_cell, vocab_size, pad_id, sep_id, spec.stack_size)
    if spec.arch == "encoder":
        return Encoder(spec.pos, spec.layers, spec.d_model, spec.heads, vocab_size, pad_id)
    if spec.arch == "tape_rnn":
        return TapeRNN(spec.d_model, spec.memory_cell, vocab_size, pad_id, sep_id)
    return LoopedTransformer(spec.pos, spec.layers, spec.d_model, spec.heads, spec.iterations, vocab_size, pad_id, sep_id, spec.window,
                             max_len, tokens)
