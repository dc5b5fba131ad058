"""The error type of the baselines package (kept free of any gengap import, see DESIGN.md)."""


class BaselineError(ValueError):
    """Bad input to a baseline run or report: a missing file, an unknown option, a mismatch on resume.

    The gengap CLI reports it as one line with exit code 2, like its own usage errors.
    """


class RunFileError(BaselineError):
    """A file of a run or model directory that cannot be used: unreadable, truncated, malformed,
    or not what its name says (a torch file that is no checkpoint, weights that do not fit).

    The gengap CLI reports it as one line with exit code 1 (a runtime error, not a usage error).
    """

    exit_code = 1
