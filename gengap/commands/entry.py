"""The ``gengap`` console script (and ``python -m gengap``): the command line behind a guard
that is in place before anything heavy is imported.

Importing the command line (numpy, jsonschema, the task registry, ...) takes most of a
second. Ctrl-C during it, or while the parser is built, ends gengap like Ctrl-C at any
later moment: one line ``gengap: interrupted`` and exit code 130, no traceback. Importing
this module is starting the command line: it installs that guard for SIGINT at once (unless
SIGINT is ignored, as in a background job), and gengap.cli's own handling takes over when
the command runs. Once the command has returned, Ctrl-C is ignored while the interpreter
exits. (Only the interpreter's own start-up, before this module, is outside the guard.)
"""

from __future__ import annotations

import _signal  # the interpreter's own, loaded at start-up: the guard goes in before any other import
import os
import sys

INTERRUPT_EXIT_CODE = 128 + _signal.SIGINT  # as gengap.signals, which this module must not import yet


def _interrupted_while_starting(signum: int, frame: object) -> None:
    os.write(2, b"gengap: interrupted\n")
    os._exit(INTERRUPT_EXIT_CODE)  # nothing to clean up yet: only imports have run


if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
    _signal.signal(_signal.SIGINT, _interrupted_while_starting)


def run(argv: list[str] | None = None) -> int:
    """gengap.cli.main(argv), imported here; an interrupt before it runs is reported as one line."""
    try:
        from gengap.commands.cli import main as cli_main

        if _signal.getsignal(_signal.SIGINT) is _interrupted_while_starting:
            _signal.signal(_signal.SIGINT, _signal.default_int_handler)  # cli.main cleans up on KeyboardInterrupt
        return cli_main(argv)
    except KeyboardInterrupt:  # before cli.main's own handler took over
        print("gengap: interrupted", file=sys.stderr)
        return INTERRUPT_EXIT_CODE


def main() -> int:
    """The console script: run the command line, then ignore Ctrl-C while the interpreter exits."""
    code = run()
    _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
    return code
