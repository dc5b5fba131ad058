"""How to install an optional extra of gengap, in one wording for every error message.

gengap is not published on PyPI yet: it installs from a checkout (``pip install -e '.[extra]'``
in the repository) or from a wheel built there (``python -m build``), so a message never tells
the user to install gengap from PyPI by name.
"""

from __future__ import annotations


def install_hint(*extras: str) -> str:
    """The command that installs gengap with the given extras, from a checkout of the repository."""
    names = ",".join(extras)
    return f"pip install -e '.[{names}]' in a gengap checkout"
