"""The error type of the baselines package (kept free of any gengap import, see DESIGN.md)."""


class BaselineError(ValueError):
    """Bad input to a baseline run or report: a missing file, an unknown option, a mismatch on resume.

    The gengap CLI reports it as one line with exit code 2, like its own usage errors.
    """
