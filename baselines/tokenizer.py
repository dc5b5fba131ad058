"""Whitespace tokenizer over a split's vocabulary, with padding, separator and end tokens.

Ids 0, 1, 2 are ``<pad>``, ``<sep>`` and ``<end>``; the data tokens follow in sorted order,
so the same records always give the same ids. ``<blank>`` (the computation steps and the
empty output tape of gengap.baselines.layout) follows them only when a run's layout needs it
(``build(..., blank=True)``), so a run without blanks keeps the ids it always had. Data that
uses any of the four special tokens is refused. ``example`` and ``prompt`` give the
autoregressive layout without computation steps, ``input <sep> target <end>`` (every layout:
gengap.baselines.layout). Saved with a run as JSON (``tokenizer.json``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Sequence

from gengap.baselines.errors import BaselineError
from gengap.generators.safe_files import atomic_write_text
from gengap.generators.reading import ReadError, read_json

PAD, SEP, END = "<pad>", "<sep>", "<end>"
SPECIALS = (PAD, SEP, END)
BLANK = "<blank>"
RESERVED = (*SPECIALS, BLANK)  # tokens the data may not use


class Tokenizer:
    """Maps whitespace-separated tokens to ids and back."""

    pad_id = 0
    sep_id = 1
    end_id = 2

    def __init__(self, tokens: Sequence[str]) -> None:
        if tuple(tokens[:3]) != SPECIALS:
            raise BaselineError(f"a tokenizer's first tokens must be {', '.join(SPECIALS)}")
        if len(set(tokens)) != len(tokens):
            raise BaselineError("a tokenizer's tokens must be distinct")
        self.tokens = list(tokens)
        self.ids = {token: i for i, token in enumerate(self.tokens)}

    @classmethod
    def build(cls, texts: Iterable[str], blank: bool = False) -> "Tokenizer":
        """The tokenizer of every whitespace token in texts (inputs and targets of all parts),
        with ``<blank>`` last when ``blank``."""
        vocabulary: set[str] = set()
        for text in texts:
            vocabulary.update(text.split())
        clash = vocabulary.intersection(RESERVED)
        if clash:
            raise BaselineError(f"the data uses the reserved token(s) {', '.join(sorted(clash))}")
        return cls([*SPECIALS, *sorted(vocabulary), *([BLANK] if blank else [])])

    @property
    def blank_id(self) -> int:
        """The id of ``<blank>`` (BaselineError when this vocabulary has none)."""
        if BLANK not in self.ids:
            raise BaselineError(f"this vocabulary has no {BLANK} token (a tokenizer built without blank=True)")
        return self.ids[BLANK]

    def __len__(self) -> int:
        return len(self.tokens)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tokenizer) and self.tokens == other.tokens

    def encode(self, text: str) -> list[int]:
        try:
            return [self.ids[token] for token in text.split()]
        except KeyError as err:
            raise BaselineError(f"token {err.args[0]!r} is not in the vocabulary") from None

    def decode(self, ids: Iterable[int]) -> str:
        """Tokens of ids joined by spaces (special tokens included as text)."""
        return " ".join(self.tokens[i] for i in ids)

    def example(self, input_text: str, target_text: str) -> tuple[list[int], int]:
        """Ids of ``input <sep> target <end>`` and the index of the first target token."""
        prompt = self.encode(input_text) + [self.sep_id]
        return prompt + self.encode(target_text) + [self.end_id], len(prompt)

    def prompt(self, input_text: str) -> list[int]:
        return self.encode(input_text) + [self.sep_id]

    def to_json(self) -> dict:
        blank = {"blank": BLANK} if BLANK in self.ids else {}
        return {
            "type": "whitespace",
            "specials": {"pad": PAD, "sep": SEP, "end": END, **blank},
            "tokens": self.tokens,
        }

    def save(self, path: str | Path) -> None:
        atomic_write_text(path, json.dumps(self.to_json(), indent=1) + "\n")

    @classmethod
    def from_json(cls, data: dict) -> "Tokenizer":
        if not isinstance(data, dict) or data.get("type") != "whitespace" or not isinstance(data.get("tokens"), list):
            raise BaselineError("not a gengap whitespace tokenizer")
        return cls(data["tokens"])

    @classmethod
    def load(cls, path: str | Path) -> "Tokenizer":
        try:
            return cls.from_json(read_json(path))
        except ReadError as err:
            raise BaselineError(f"cannot read tokenizer {err}") from None
