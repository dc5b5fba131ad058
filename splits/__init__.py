"""Split strategies (iid, length, difficulty, holdout, MCD) and divergence measures.

Splits know tasks only through records and the tasks' atoms/compounds functions.
"""

from gengap.legacy_names import redirect as _redirect

_redirect(__name__)  # imported as the deprecated top-level name: that name becomes gengap.splits


from gengap.splits.api import (
    STRATEGIES,
    generate_records,
    get_strategy,
    make_options,
    parse_options,
    sample_length_split,
    sample_level_split,
    split,
)
from gengap.splits.base import SplitError, SplitResult, build_report
from gengap.splits.divergence import atom_divergence, chernoff_coefficient, compound_divergence, divergence

__all__ = [
    "STRATEGIES",
    "SplitError",
    "SplitResult",
    "atom_divergence",
    "build_report",
    "chernoff_coefficient",
    "compound_divergence",
    "divergence",
    "generate_records",
    "get_strategy",
    "make_options",
    "parse_options",
    "sample_length_split",
    "sample_level_split",
    "split",
]
