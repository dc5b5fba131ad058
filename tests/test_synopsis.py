"""The command-line synopsis of docs/README.md (the docs index) agrees with the parser: every option it shows exists, a
value it spells out (``--preset small|tiny|base``) is the option's whole set of choices, and
the option's default, when it is one of them, comes first; a number it writes out is the
default."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from gengap.cli import build_parser

INDEX = Path(__file__).resolve().parent.parent / "docs" / "README.md"
OPTION = re.compile(r"(--[a-z][a-z-]*)(?: ([a-z][a-z0-9_-]*(?:\|[a-z][a-z0-9_-]*)*|[0-9][0-9.,]*)(?=[\s\]\)]|$))?")


def synopsis() -> dict[str, str]:
    """Per command, its synopsis text (continuation lines joined), from the index's Command line block."""
    section = INDEX.read_text(encoding="utf-8").split("\n## Command line\n", 1)[1]
    block = section.split("```\n", 2)[1]
    commands: dict[str, str] = {}
    last = ""
    for line in block.splitlines():
        text = line.split("   #", 1)[0]
        if text.startswith("gengap "):
            last = text.split()[1]
            commands[last] = text
        elif text.strip():
            commands[last] += " " + text.strip()
    return commands


def subparsers() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_the_synopsis_covers_every_command() -> None:
    assert set(synopsis()) == set(subparsers())


@pytest.mark.parametrize("command", sorted(synopsis()))
def test_the_synopsis_matches_the_parser(command: str) -> None:
    options = {flag: action for action in subparsers()[command]._actions for flag in action.option_strings}
    for flag, shown in OPTION.findall(synopsis()[command]):
        assert flag in options, f"{command}: the synopsis shows {flag}, which the parser does not have"
        action = options[flag]
        if not shown:
            continue
        if shown[0].isdigit():  # a number written out reads as the default
            default = ",".join(str(v) for v in action.default) if isinstance(action.default, (tuple, list)) else str(action.default)
            assert shown == default, f"{command} {flag}: the synopsis shows {shown}, the default is {default}; write a metavar"
            continue
        values = shown.split("|")
        choices = [str(c) for c in action.choices or ()]
        assert choices, f"{command} {flag}: the synopsis spells out {shown!r}, but the option takes any {action.metavar or action.dest}"
        assert set(values) == set(choices), f"{command} {flag}: the synopsis shows {shown}, the parser takes {'|'.join(choices)}"
        if action.default in choices:
            assert values[0] == action.default, f"{command} {flag}: the default {action.default} should come first, not {values[0]}"
