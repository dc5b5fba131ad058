"""Errors the CLI reports as one line with exit code 2."""


class UsageError(Exception):
    """Bad input from the user: a malformed option, an unknown task, an unwritable path."""
