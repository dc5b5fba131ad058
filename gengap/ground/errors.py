"""Errors the CLI reports as one line with exit code 2, and how any message is kept to one line."""

from __future__ import annotations


class UsageError(Exception):
    """Bad input from the user: a malformed option, an unknown task, an unwritable path."""


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``1 config``, ``2 configs``, ``1,234 records``: a count and its noun, singular for one."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def one_line(message: object) -> str:
    """str(message) as one printable line: line breaks, other control and format characters,
    and lone surrogates (which input files and paths carry into messages) written as escapes."""
    text = str(message)
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else char.encode("unicode_escape", "backslashreplace").decode("ascii") for char in text)
