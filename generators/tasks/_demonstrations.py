"""Reading inputs made of demonstration pairs and a query (``a -> b ; c -> d ; e -> ?``),
shared by the induction tasks (letter_analogy, grid_program)."""

from __future__ import annotations

from typing import Sequence

Tokens = list[str]


def split_demonstrations(
    tokens: Sequence[str], sep: str, arrow: str, ask: str, most: int
) -> tuple[list[tuple[Tokens, Tokens]], Tokens]:
    """(demonstration pairs (source, target), query source) of ``src arrow tgt sep ... src arrow ask``;
    ValueError unless every part has one arrow, the last ends in ``ask`` alone and 1..most
    demonstrations come first (the task's largest ``demos``: a checker's work grows with them)."""
    parts: list[Tokens] = [[]]
    for token in tokens:
        if token == sep:
            parts.append([])
        else:
            parts[-1].append(token)
    pairs = []
    for part in parts:
        if part.count(arrow) != 1:
            raise ValueError(f"every pair is 'source {arrow} target'")
        cut = part.index(arrow)
        pairs.append((part[:cut], part[cut + 1 :]))
    *demos, (query, answer) = pairs
    if answer != [ask] or not demos:
        raise ValueError(f"the input ends with 'source {arrow} {ask}' after at least one demonstration")
    if len(demos) > most:
        raise ValueError(f"the input has {len(demos)} demonstrations; a record has at most {most}")
    return demos, query
