"""The error type of the harnesses package (free of any gengap or baselines import, see DESIGN.md)."""


class HarnessError(ValueError):
    """Bad input to a harness: a missing or malformed release, an unknown config or option.

    The gengap CLI reports it as one line with exit code 2, like its own usage errors.
    """
