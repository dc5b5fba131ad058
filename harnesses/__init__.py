"""Harnesses: gengap releases where pretrained models are evaluated and trained (no torch).

- ``prompts``: a record as an English prompt, plain text or chat messages, with seeded k-shot
  examples from the train side (:class:`Prompter`);
- ``extraction`` and ``scoring``: the answer of free-form model output, read against the
  task's answer alphabet and checked by the task's own checker (:func:`score_output`);
- ``rewards``: reward functions with verl's (:func:`compute_score`, :func:`compute_execution_score`)
  and TRL's (:func:`gengap_reward`, :func:`gengap_token_reward`, :func:`gengap_format_reward`,
  :func:`gengap_execution_reward`) signatures;
- ``export``: lm-evaluation-harness task directories, verl Parquet, chat JSONL and process
  labels (``prm``: gengap.harnesses.prm) (:func:`export_release`); ``lmeval``: the hooks the
  exported lm-eval tasks call;
- ``releases``: reading a release's configs;
- ``procedural``: tasks and release parts as reasoning-gym-compatible datasets (items, metadata
  and ``score_answer`` as reasoning-gym's ``ProceduralDataset``); ``rg_registry``: registering a
  task with reasoning-gym's own registry (reasoning-gym imported there only). ``gengap.rg``
  gathers both.

Its public names are imported on first access, so that importing one submodule (the command
line reads ``gengap.harnesses.extraction``'s formats) does not import the others.

This package uses the tasks' checkers (generators) and reads releases; it never imports
baselines or gengap. pyarrow (verl export) and datasets (lm-eval documents) are imported when
used.
"""

from __future__ import annotations


from gengap.legacy_names import redirect as _redirect

_redirect(__name__)  # imported as the deprecated top-level name: that name becomes gengap.harnesses

import importlib
from typing import Any

from gengap.harnesses.errors import HarnessError

_HOMES = {  # public name -> the module defining it, imported on first access (PEP 562)
    "FORMATS": "formats",
    "export_release": "export",
    **dict.fromkeys(("Alphabet", "answer_tokens", "extract_answer"), "extraction"),
    **dict.fromkeys(("Pause", "Prompter", "choose_shots", "explanation", "instruction"), "prompts"),
    **dict.fromkeys(("Release", "ReleaseConfig", "open_release"), "releases"),
    **dict.fromkeys(("compute_execution_score", "compute_score", "gengap_execution_reward", "gengap_format_reward", "gengap_reward",
                     "gengap_token_reward"), "rewards"),
    **dict.fromkeys(("Score", "exact_match", "read_answer", "score_output", "score_outputs"), "scoring"),
}


def __getattr__(name: str) -> Any:
    """A public name, from its module (imported now): importing one submodule imports no other."""
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    globals()[name] = value
    return value

__all__ = [
    "Alphabet",
    "FORMATS",
    "HarnessError",
    "Pause",
    "Prompter",
    "Release",
    "ReleaseConfig",
    "Score",
    "answer_tokens",
    "choose_shots",
    "compute_execution_score",
    "compute_score",
    "exact_match",
    "explanation",
    "export_release",
    "extract_answer",
    "gengap_execution_reward",
    "gengap_format_reward",
    "gengap_reward",
    "gengap_token_reward",
    "instruction",
    "open_release",
    "read_answer",
    "score_output",
    "score_outputs",
]
