"""Answer extraction: the answer span of free-form model output, and its tokens.

:func:`extract_answer` finds the span (pure text, no task knowledge):

1. reasoning in ``<think> ... </think>`` is dropped (and everything before a lone ``</think>``);
2. the *last* answer marker wins, among: answer tags ``<answer> ... </answer>`` (any case; the
   content, over several lines if need be, up to the closing tag or, when there is none, to the
   end of the output: reasoning-gym's and most RL recipes' convention), a line label
   ``Answer:`` / ``Final answer:`` (any case, markdown such as ``**Answer:**`` allowed), the
   phrase ``the answer is ...``, and a LaTeX ``\\boxed{...}`` / ``\\fbox{...}`` (braces
   balanced, and no closing brace after the box that no brace before it opened: in
   ``\\boxed{x }}`` the box is not the answer, so a stray brace is never swallowed). A label
   or phrase takes the rest of its line, or the next non-empty line when the rest is empty, in
   both cases up to a closing ``</answer>``; so a marker inside the tags
   (``<answer>Answer: 1</answer>``, ``<answer>\\boxed{1}</answer>``) gives what it marks;
3. without a marker: the last non-empty line.

:func:`format_ok` tells whether an output follows one of the answer formats a prompt can ask
for (``ANSWER_FORMATS``: ``line``, ``tags``, ``think``, ``boxed``); see its doc for the exact rules.

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
- a trailing ``.`` ``!`` or ``。`` is dropped unless it can end an answer: unless it is one of
  the alphabet's *final* tokens (those its answers end with). A COGS logical form holds ``.``
  (``cat . agent ( x _ 1 , x _ 2 )``) but always ends with ``)``, so a sentence period after it,
  spaced or not (``... x _ 2 ) .`` / ``... x _ 2 ).``), is decoration;
- a bracketed list of the answer's tokens, ``[t1, t2, ...]`` (items separated by a comma and a
  space) or with each item quoted (``['t1', 't2']``, ``["t1", "t2"]``), reads as ``t1 t2 ...``
  when ``[`` and ``]`` are decoration and every item is one token of the alphabet (up to
  case), so tokens that are themselves marks can be listed: ``['*', 'cat', '(', 'x', '_', '1',
  ')']`` or ``[x, _, 1, ,, Emma]`` (a ``,`` token as an item). Any other bracketed text is
  read by the rules above (its brackets are decoration: ``[I_JUMP I_WALK]``);
- a token outside the alphabet that equals exactly one of its tokens up to case takes that
  token's case (``YES`` -> ``yes``, ``i_jump`` -> ``I_JUMP``);
- when every token of the alphabet is a single character, runs written without spaces are
  split (``101`` -> ``1 0 1``, ``1,234`` -> ``1 2 3 4``).

Each rule is undone only where it is unambiguous, so a wrong answer over the alphabet,
written with any of these decorations, still reads as that wrong answer: no decoration turns
a wrong answer into a right one.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Iterable

MARKS = ("->", "=>", "→", "⟶", "**", ",", ";", "|", "`", '"', "'", "“", "”", "‘", "’", "*", "_", "#", "[", "]", "(", ")", "{", "}", "<", ">", "$")
TRAILING = (".", "!", "。")
LATEX_WRAPPERS = ("text", "textbf", "mathrm", "mathbf", "texttt", "mathtt", "operatorname")
LATEX_SPACES = ("\\,", "\\;", "\\:", "\\!", "\\ ", "~", "\\quad", "\\qquad")

_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_THINK_END = re.compile(r"</think>", re.I)
_LABEL = r"(?<![A-Za-z])(?:final[^\S\n]+)?answer[^\S\n]*[*_`]*[^\S\n]*[:：](?:\*\*|__)?"
_PHRASE = r"(?<![A-Za-z])answer(?:\*\*|__)?[^\S\n]+is[^\S\n]*[:：]?(?:\*\*|__)?"
_BOXED = re.compile(r"\\(?:boxed|fbox)[^\S\n]*\{")
_TAG_OPEN = re.compile(r"<answer>", re.I)
# Every answer marker in one scan, named by kind. No two kinds can match at one position or
# inside another's match, so this finds exactly the matches of the four patterns one by one.
# The lookahead names every first character a marker can have (re.I adds no other to a and f)
# and lets the scan skip other positions quickly.
_MARKER = re.compile(f"(?=[<\\\\aAfF])(?:(?i:(?P<tag>{_TAG_OPEN.pattern})|(?P<label>{_LABEL})|(?P<phrase>{_PHRASE}))|(?P<boxed>{_BOXED.pattern}))")
_TAG_CLOSE = re.compile(r"</answer>", re.I)
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


def _boxed_group(text: str, marker: re.Match[str]) -> str | None:
    """The content of the box a ``\\boxed{`` / ``\\fbox{`` marker opens, when its braces balance and no
    closing brace after it is left unmatched by the braces open before the marker (``\\text{\\boxed{1}}``
    is a box; ``\\boxed{1 }}`` is not: which ``}`` closes it is ambiguous); None otherwise."""
    group = _braced(text, marker.end())
    if group is None:
        return None
    depth = 0  # the braces open before the marker: closing braces after the box may close them
    for char in text[: marker.start()]:
        if char == "{":
            depth += 1
        elif char == "}" and depth:
            depth -= 1
    for char in text[group[1] :]:
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth < 0:
                return None
    return group[0]


def _until_close(text: str) -> str:
    """text up to a closing ``</answer>`` (all of it when there is none)."""
    close = _TAG_CLOSE.search(text)
    return text[: close.start()] if close else text


def _rest_of_line(text: str, start: int) -> str:
    """The rest of the line from start, or the next non-empty line when that is blank (up to a ``</answer>``)."""
    end = text.find("\n", start)
    rest = _until_close(text[start:] if end < 0 else text[start:end])
    if not _BLANK.fullmatch(rest) or end < 0 or _TAG_CLOSE.search(text[start:end]):
        return rest
    for line in text[end + 1 :].split("\n"):
        if line.strip():
            return _until_close(line)
    return ""


def drop_reasoning(output: str) -> str:
    """The output without ``<think> ... </think>`` blocks and without anything before a lone ``</think>``."""
    if "</t" not in output and "</T" not in output:
        return output  # no closing </think> (any case): nothing to drop
    text = _THINK.sub("\n", output)
    ends = list(_THINK_END.finditer(text))
    return text[ends[-1].end() :] if ends else text


def _closing_tags(text: str) -> str | None:
    """The content of ``<answer>...</answer>`` ending text (but for whitespace) when nothing in
    it is a marker or a closing tag, so that this tag is the last marker and its content what
    it marks; None otherwise (then the full scan decides). The common case, without a scan of
    the whole text."""
    text = text.rstrip()
    if not text.endswith("</answer>"):
        return None
    start = text.rfind("<answer>")  # never inside the closing tag
    if start < 0:
        return None
    content = text[start + len("<answer>") : -len("</answer>")]
    if "\\" not in content and "w" not in content and "W" not in content:
        return content  # every marker and closing tag holds a backslash or "answer" (any case: a w or W)
    if _MARKER.search(content) or _TAG_CLOSE.search(content):
        return None
    return content


def _scanned(text: str) -> str | None:
    """What the last answer marker of text marks (a boxed group only when its braces balance),
    by a scan of all of text; None without one."""
    for match in reversed(list(_MARKER.finditer(text))):
        kind = match.lastgroup
        if kind == "tag":
            return _until_close(text[match.end() :])
        if kind == "boxed":
            group = _boxed_group(text, match)
            if group is not None:
                return group
        else:
            return _rest_of_line(text, match.end())
    return None


def single_spaced(span: str) -> bool:
    """Whether span is its words joined by single spaces (cheap checks; False when unsure)."""
    return span.isascii() and span.isprintable() and "  " not in span and span[:1] != " " and span[-1:] != " "


def extract_answer(output: str | None) -> str | None:
    """The answer span of a model's output (see the module doc); None when the output is empty."""
    if not isinstance(output, str):
        return None
    # drop_reasoning's own first test, here too: most outputs have no </think> and skip the call
    text = output if "</t" not in output and "</T" not in output else drop_reasoning(output)
    span = _closing_tags(text)  # the common case of the scan, without it
    if span is None:
        span = _scanned(text)
    if span is None:
        lines = [line for line in text.split("\n") if line.strip()]
        if not lines:
            return None
        span = lines[-1]
    if not single_spaced(span):
        span = " ".join(span.split())
    return span or None


ANSWER_FORMATS = ("line", "tags", "think", "boxed")
_ANSWER_LINE = re.compile(r"(?i)[^\S\n]*(?:\*\*|__)?(?:final[^\S\n]+)?answer[^\S\n]*(?:\*\*|__)?[^\S\n]*:(?:\*\*|__)?[^\S\n]*\S")
_THINK_OPEN = re.compile(r"<think>", re.I)


def _tags_ok(text: str) -> bool:
    """One ``<answer>`` with a non-empty content, then ``</answer>`` and only whitespace, or the end."""
    opens = list(_TAG_OPEN.finditer(text))
    closes = list(_TAG_CLOSE.finditer(text))
    if len(opens) != 1 or len(closes) > 1:
        return False
    start = opens[0].end()
    if not closes:
        return bool(text[start:].strip())
    close = closes[0]
    return close.start() > start and bool(text[start : close.start()].strip()) and not text[close.end() :].strip()


def format_ok(output: str | None, answer_format: str) -> bool:
    """Whether an output follows the answer format a prompt asked for (pure text, no task knowledge).

    - ``line``: after dropping reasoning (as :func:`extract_answer` does), the last non-empty
      line is an answer line, ``Answer:`` or ``Final answer:`` (any case, ``**Answer:**``
      allowed) followed by a non-empty answer;
    - ``tags``: after dropping reasoning, exactly one ``<answer>``, a non-empty content, then
      ``</answer>`` followed by nothing but whitespace, or no closing tag and the end of the
      output (generation stopped at a ``</answer>`` stop string);
    - ``think``: the output holds exactly one ``</think>`` and at most one ``<think>``, which
      comes first (a template may open the block in the prompt); after ``</think>`` only
      whitespace, then the ``tags`` rule holds for the rest;
    - ``boxed``: after dropping reasoning, exactly one ``\\boxed{...}`` / ``\\fbox{...}``, braces
      balanced (no stray closing brace after it either) and content non-empty.
    """
    if answer_format not in ANSWER_FORMATS:
        raise ValueError(f"unknown answer format {answer_format!r}; choose one of {', '.join(ANSWER_FORMATS)}")
    if not isinstance(output, str):
        return False
    if answer_format == "think":
        ends = list(_THINK_END.finditer(output))
        opens = list(_THINK_OPEN.finditer(output))
        if len(ends) != 1 or len(opens) > 1 or (opens and opens[0].start() > ends[0].start()):
            return False
        if opens and output[: opens[0].start()].strip():
            return False
        rest = output[ends[0].end() :]
        return rest.lstrip()[: len("<answer>")].lower() == "<answer>" and _tags_ok(rest)
    text = drop_reasoning(output)
    if answer_format == "tags":
        return _tags_ok(text)
    if answer_format == "boxed":
        groups = [_boxed_group(text, match) for match in _BOXED.finditer(text)]
        return len(groups) == 1 and groups[0] is not None and bool(groups[0].strip())
    lines = [line for line in text.split("\n") if line.strip()]
    return bool(lines) and _ANSWER_LINE.match(lines[-1]) is not None


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
    """A task's answer alphabet: the tokens its answers are made of, whether all are single
    characters, and the final tokens (those an answer can end with; all of them unless told)."""

    tokens: frozenset[str]
    single_characters: bool
    finals: frozenset[str] = frozenset()

    @classmethod
    def of(cls, tokens: Iterable[str], finals: Iterable[str] | None = None) -> "Alphabet":
        known = frozenset(tokens)
        last = known if finals is None else frozenset(finals) & known
        return cls(known, bool(known) and all(len(t) == 1 for t in known), last)

    def __or__(self, other: "Alphabet") -> "Alphabet":
        return Alphabet.of(self.tokens | other.tokens, self.finals | other.finals)

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
        return dict(self._folded)

    @cached_property
    def _folded(self) -> dict[str, str | None]:
        table: dict[str, str | None] = {}
        for token in self.tokens:
            key = token.casefold()
            table[key] = None if key in table and table[key] != token else token
        return table

    @cached_property
    def removable_marks(self) -> tuple[str, ...]:
        """The LaTeX spaces and marks that are decoration here (:meth:`removable`), in the order
        :func:`answer_tokens` replaces them."""
        return tuple(mark for mark in LATEX_SPACES + MARKS if self.removable(mark))

    @cached_property
    def mark_starts(self) -> frozenset[str]:
        """The first characters of the removable marks (no mark occurs in a text without one)."""
        return frozenset(mark[0] for mark in self.removable_marks)

    @cached_property
    def removable_trailing(self) -> frozenset[str]:
        """The trailing marks that are decoration here: those that are no token, and those that
        are tokens no answer ends with (not final)."""
        return frozenset(mark for mark in TRAILING if self.removable(mark) or (mark in self.tokens and mark not in self.finals))

    def token_of(self, item: str) -> str | None:
        """The alphabet's token that item is, exactly or up to case (None: none, or several)."""
        return item if item in self.tokens else self._folded.get(item.casefold())


_QUOTED_ITEM = re.compile(r"""\s*(?:'[^']*'|"[^"]*")\s*(?:,\s*(?:'[^']*'|"[^"]*")\s*)*""")


def listed_tokens(span: str, alphabet: Alphabet) -> list[str] | None:
    """The tokens of a span that is a bracketed list of the alphabet's tokens (see the module
    doc), or None when it is not one."""
    if len(span) < 3 or span[0] != "[" or span[-1] != "]" or not (alphabet.removable("[") and alphabet.removable("]")):
        return None
    inner = span[1:-1]
    items: list[str] | None = None
    if _QUOTED_ITEM.fullmatch(inner):  # a Python or JSON list of strings: the literal decides, quotes and all
        try:
            value = ast.literal_eval(span)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            value = None
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            items = [item.strip() for item in value]
    if items is None:
        items = [item.strip() for item in inner.split(", ")]
    tokens = [alphabet.token_of(item) for item in items]
    return tokens if tokens and all(tokens) else None  # type: ignore[return-value]


def answer_tokens(span: str | None, alphabet: Alphabet) -> list[str]:
    """The tokens of an answer span, undoing the decorations the alphabet allows (see the module doc)."""
    if not span:
        return []
    if span[0] == "[":
        listed = listed_tokens(span.rstrip("".join(alphabet.removable_trailing)).rstrip(), alphabet)
        if listed is not None:
            return listed
    text = unwrap_latex(span) if "\\" in span else span
    if not alphabet.mark_starts.isdisjoint(text):
        for mark in alphabet.removable_marks:
            if mark in text:
                text = text.replace(mark, " ")
    text = text.strip()
    while text and text[-1] in alphabet.removable_trailing:
        text = text[:-1].rstrip()
    tokens = list("".join(text.split())) if alphabet.single_characters else text.split()  # runs split into characters
    if alphabet.tokens.issuperset(tokens):
        return tokens
    folded = alphabet._folded
    return [token if token in alphabet.tokens else (folded.get(token.casefold()) or token) for token in tokens]
