"""The sequence layout of a run: what a model reads, where its loss is and where its answer is read.

The layout is a run setting (``output_mode`` and ``computation_steps``, fields of
gengap.baselines.training.TrainSettings); the data never changes for it. For a record of n
input tokens and m target tokens, with c computation steps (Deletang et al. 2023's
``computation_steps_mult``: c x n empty tokens between the input and the output):

- ``autoregressive``: ``input <sep> <blank>*(c n) target <end>``; the logits at position t
  predict the token at t + 1 where that is a target token or the end token (the loss is
  there only); decoding is greedy from ``input <sep> <blank>*(c n)``. With c = 0 this is
  ``input <sep> target <end>``, the layout of runs made before output modes existed.
- ``empty-tape``: ``input <sep> <blank>*(c n) <blank>*m``: the input, the computation steps,
  then an empty output tape as long as the answer; the logits at the m tape positions
  predict the m target tokens (no shift, no end token; the loss is there only); decoding is
  one forward pass, the argmax at those m positions (the output length is given, as in the
  paper, whose default this is). Per-token accuracy is then Deletang et al.'s.

Labels are aligned with logits: ``labels[t]`` is what the logits at t predict, ``IGNORE``
where nothing is. ``<blank>`` (gengap.baselines.tokenizer.BLANK) is in the vocabulary only
when a layout needs it (:attr:`Layout.needs_blank`). This module imports neither torch nor numpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gengap.baselines.errors import BaselineError

if TYPE_CHECKING:
    from gengap.baselines.tokenizer import Tokenizer

OUTPUT_MODES = ("autoregressive", "empty-tape")
MAX_COMPUTATION_STEPS = 16  # c x n blanks per record: beyond this a run is a typo, not a protocol
IGNORE = -100  # the label of a position without loss (torch's cross-entropy ignore_index)


@dataclass(frozen=True)
class Layout:
    """An output mode with its computation steps (see the module doc)."""

    output_mode: str = "autoregressive"
    computation_steps: int = 0

    def check(self) -> None:
        """BaselineError naming the setting that is not a known mode or an integer 0..MAX_COMPUTATION_STEPS."""
        if self.output_mode not in OUTPUT_MODES:
            raise BaselineError(f"unknown output_mode {self.output_mode!r}; choose one of {', '.join(OUTPUT_MODES)}")
        steps = self.computation_steps
        if isinstance(steps, bool) or not isinstance(steps, int) or not 0 <= steps <= MAX_COMPUTATION_STEPS:
            raise BaselineError(f"computation_steps must be an integer from 0 to {MAX_COMPUTATION_STEPS}, got {steps!r}")

    @property
    def empty_tape(self) -> bool:
        return self.output_mode == "empty-tape"

    @property
    def needs_blank(self) -> bool:
        """Whether sequences of this layout hold ``<blank>`` tokens (every layout but autoregressive with c = 0)."""
        return self.empty_tape or self.computation_steps > 0

    def length(self, n: int, m: int) -> int:
        """Tokens of the sequence of a record with n input and m target tokens."""
        return n + 1 + self.computation_steps * n + m + (0 if self.empty_tape else 1)

    def prompt(self, tokenizer: "Tokenizer", input_text: str, target_length: int) -> list[int]:
        """What decoding reads: ``input <sep> <blank>*(c n)``, followed by the empty tape of
        ``target_length`` blanks in empty-tape mode."""
        ids = tokenizer.encode(input_text)
        blanks = self.computation_steps * len(ids) + (target_length if self.empty_tape else 0)
        return [*ids, tokenizer.sep_id, *([tokenizer.blank_id] * blanks if blanks else [])]

    def example(self, tokenizer: "Tokenizer", input_text: str, target_text: str) -> tuple[list[int], list[int]]:
        """Ids of a record's training sequence and its labels (``IGNORE`` where no logit is trained)."""
        target = tokenizer.encode(target_text)
        prompt = self.prompt(tokenizer, input_text, len(target))
        if self.empty_tape:
            return prompt, [IGNORE] * (len(prompt) - len(target)) + target
        answer = [*target, tokenizer.end_id]
        return prompt + answer, [IGNORE] * (len(prompt) - 1) + answer + [IGNORE]
