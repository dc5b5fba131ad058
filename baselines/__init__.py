"""Transformer baselines trained from scratch: tokenizer, models, training, evaluation, gap reports.

Modules: ``data`` (records of a release, split directory or in-memory split), ``tokenizer``,
``metrics`` (exact match, token accuracy, buckets, gap, seed aggregates; pure Python),
``models`` (HF decoder-only models per positional encoding), ``decoding`` (batched greedy),
``training`` (``train_and_evaluate``), ``report`` and ``plots``, ``cli`` (``gengap train`` and
``gengap report``). Importing this package does not import torch; ``train_and_evaluate`` does,
on first use.
"""

from __future__ import annotations


from gengap.legacy_names import redirect as _redirect

_redirect(__name__)  # imported as the deprecated top-level name: that name becomes gengap.baselines

from typing import Any

from gengap.baselines.errors import BaselineError

__all__ = ["BaselineError", "train_and_evaluate"]


def train_and_evaluate(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """See :func:`gengap.baselines.training.train_and_evaluate` (imports torch on first call)."""
    from gengap.baselines.training import train_and_evaluate as run

    return run(*args, **kwargs)
