"""Answer extraction: the answer span of free-form model output, and its tokens.

:func:`extract_answer` finds the span (pure text, no task knowledge):

1. reasoning in ``<think> ... </think>`` is dropped (and everything before a lone ``</think>``);
2. the *last* answer marker wins, among: a line label ``Answer:`` / ``Final answer:`` (any case,
   markdown such as ``**Answer:**`` allowed), the phrase ``the answer is ...``, and a LaTeX
   ``\\boxed{...}`` / ``\\fbox{...}`` (braces balanced). A label or phrase takes the rest of its
   line, or the next non-empty line when the rest is empty;
3. without a marker: the last non-empty line.

:func:`answer_tokens` turns the span into tokens, given the task's answer alphabet (the
tokens its targets are made of, see :class:`Alphabet`); it only undoes decorations that
cannot be part of an answer:

- LaTeX ``\\text{..}`` / ``\\mathrm{..}`` / ``\\texttt{..}`` (and the like) are unwrapped and
  ``\\,`` ``\\;`` ``\\ `` ``~`` read as spaces;
- each separator or wrapper mark (``->`` ``=>`` ``→`` ``,`` ``;`` ``|`` backquote, quotes,
  ``**`` ``*`` ``_`` ``#`` ``[ ] ( ) { } < >`` ``$``) is read as a space, unless it occurs inside
  a token of the alphabet (so ``( x _ 1 )`` of a logical form keeps its brackets and ``I_JUMP``
  its underscores) or, for an alphabet of single characters, could be a run of its tokens
  written without spaces;
- a trailing ``.`` ``!`` or ``。`` is dropped unless the alphabet holds it;
- a token outside the alphabet that equals exactly one of its tokens up to case takes that
  token's case (``YES`` -> ``yes``, ``i_jump`` -> ``I_JUMP``);
- when every token of the alphabet is a single character, runs written without spaces are
  split (``101`` -> ``1 0 1``, ``1,234`` -> ``1 2 3 4``).

Each rule is undone only where it is unambiguous, so a wrong answer over the alphabet,
written with any of these decorations, still reads as that wrong answer: no decoration turns
a wrong answer into a right one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

MARKS = ("->", "=>", "→", "⟶", "**", ",", ";", "|", "`", '"', "'", "“", "”", "‘", "’", "*", "_", "#", "[", "]", "(", ")", "{", "}", "<", ">", "$")
TRAILING = (".", "!", "。")
LATEX_WRAPPERS = ("text", "textbf", "mathrm", "mathbf", "texttt", "mathtt", "operatorname")
LATEX_SPACES = ("\\,", "\\;", "\\:", "\\!", "\\ ", "~", "\\quad", "\\qquad")

_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_THINK_END = re.compile(r"</think>", re.I)
_LABEL = re.compile(r"(?i)(?<![A-Za-z])(?:final[^\S\n]+)?answer[^\S\n]*[*_`]*[^\S\n]*[:：](?:\*\*|__)?")
_PHRASE = re.compile(r"(?i)(?<![A-Za-z])answer(?:\*\*|__)?[^\S\n]+is[^\S\n]*[:：]?(?:\*\*|__)?")
_BOXED = re.compile(r"\\(?:boxed|fbox)[^\S\n]*\{")
_BLANK = re.compile(r"[\s*_`#>]*")


def _braced(text: str, start: int) -> tuple[str, int] | None:
    """The content of the brace group opening just before start, and the index after it; None if unbalanced."""
    depth = 1
    for index in range(start, len(text)):
        char = text[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[start:index], index + 1
    return None


def _rest_of_line(text: str, start: int) -> str:
    """The rest of the line from start, or the next non-empty line when that is blank."""
    end = text.find("\n", start)
    rest = text[start:] if end < 0 else text[start:end]
    if not _BLANK.fullmatch(rest) or end < 0:
        return rest
    for line in text[end + 1 :].split("\n"):
        if line.strip():
            return line
    return ""


def extract_answer(output: str | None) -> str | None:
    """The answer span of a model's output (see the module doc); None when the output is empty."""
    if not isinstance(output, str):
        return None
    text = _THINK.sub("\n", output)
    ends = list(_THINK_END.finditer(text))
    if ends:
        text = text[ends[-1].end() :]
    candidates: list[tuple[int, str]] = []
    for pattern in (_LABEL, _PHRASE):
        for match in pattern.finditer(text):
            candidates.append((match.start(), _rest_of_line(text, match.end())))
    for match in _BOXED.finditer(text):
        group = _braced(text, match.end())
        if group is not None:
            candidates.append((match.start(), group[0]))
    if candidates:
        span = max(candidates, key=lambda c: c[0])[1]
    else:
        lines = [line for line in text.split("\n") if line.strip()]
        if not lines:
            return None
        span = lines[-1]
    span = " ".join(span.split())
    return span or None


def unwrap_latex(text: str) -> str:
    """``\\text{a}`` -> ``a`` (and the other wrappers of ``LATEX_WRAPPERS``)."""
    for name in LATEX_WRAPPERS:
        opener = "\\" + name + "{"
        while opener in text:
            start = text.index(opener)
            group = _braced(text, start + len(opener))
            if group is None:
                break
            text = text[:start] + group[0] + text[group[1] :]
    return text


@dataclass(frozen=True)
class Alphabet:
    """A task's answer alphabet: the tokens its answers are made of, and whether all are single characters."""

    tokens: frozenset[str]
    single_characters: bool

    @classmethod
    def of(cls, tokens: Iterable[str]) -> "Alphabet":
        known = frozenset(tokens)
        return cls(known, bool(known) and all(len(t) == 1 for t in known))

    def __or__(self, other: "Alphabet") -> "Alphabet":
        return Alphabet.of(self.tokens | other.tokens)

    def keeps(self, mark: str) -> bool:
        """Whether mark occurs inside a token of the alphabet."""
        return any(mark in token for token in self.tokens)

    def removable(self, mark: str) -> bool:
        """Whether mark can only be decoration: it is inside no token, and (for an alphabet of single
        characters, whose runs are split) it is not a run of tokens written without spaces."""
        if self.keeps(mark):
            return False
        return not (self.single_characters and all(char in self.tokens for char in mark))

    def casefolded(self) -> dict[str, str | None]:
        """casefold -> the one known token with it (None when several tokens share it)."""
        table: dict[str, str | None] = {}
        for token in self.tokens:
            key = token.casefold()
            table[key] = None if key in table and table[key] != token else token
        return table


def answer_tokens(span: str | None, alphabet: Alphabet) -> list[str]:
    """The tokens of an answer span, undoing the decorations the alphabet allows (see the module doc)."""
    if not span:
        return []
    text = unwrap_latex(span)
    for mark in LATEX_SPACES + MARKS:
        if mark in text and alphabet.removable(mark):
            text = text.replace(mark, " ")
    text = text.strip()
    while text and text[-1] in TRAILING and alphabet.removable(text[-1]):
        text = text[:-1].rstrip()
    tokens = text.split()
    if alphabet.single_characters:
        tokens = [char for token in tokens for char in token]
    folded = alphabet.casefolded()
    return [token if token in alphabet.tokens else (folded.get(token.casefold()) or token) for token in tokens]
