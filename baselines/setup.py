"""A run's training setup: the settings that decide what was trained and evaluated.

``TRAJECTORY`` names the training settings a resumed run must share with the interrupted
one. :func:`setup_of` is the key the gap report pools seeds by: two runs with the same
setup differ only in their seeds, so their seeds may be pooled; runs with different
setups (a plain run and a stream run of one config, other step counts, learning rates,
label noise, data) are never pooled. This module imports neither torch nor gengap.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

# Settings a resumed run must share with the interrupted one (they decide the trajectory).
TRAJECTORY = (
    "arch", "pos", "layers", "d_model", "heads", "memory_cell", "iterations", "window", "progressive_loss", "steps", "batch_size", "lr", "warmup",
    "min_lr_ratio", "weight_decay", "grad_clip", "init_seed", "data_seed", "until_id", "until_extra", "until_over", "stream", "stream_params", "level",
    "curriculum", "sizes", "schedule", "full_batch", "label_noise", "noise_seed", "output_mode", "computation_steps", "select",
    "adam_beta2", "stack_size",
)
# What runs made before a trajectory setting existed trained with (gengap.baselines.settings.TrainSettings' resolved defaults).
LEGACY_DEFAULTS = {"output_mode": "autoregressive", "computation_steps": 0, "until_extra": 0.0, "until_over": "lengths", "progressive_loss": 0.0, "select": "last",
                   "adam_beta2": 0.95, "stack_size": 0, "test_per_length": 0, "test_lengths": ()}
# Further settings that change what a run trained or measured, but not its resumable trajectory.
MEASURED = ("precision", "eval_limit", "test_iterations", "test_per_length", "test_lengths")
# What configures an evaluation of a pretrained model (gengap.baselines.pretrained.EvalSettings, less its seed and machinery).
EVALUATED = ("shots", "limit", "chat", "system", "answer_format", "max_new_tokens", "slack")
SETUP_FIELDS = ("preset", "data", *dict.fromkeys(TRAJECTORY + MEASURED + EVALUATED))

Setup = tuple[tuple[str, str], ...]


def setup_of(results: Mapping[str, Any]) -> Setup:
    """The setup of a run's results.json as (name, value as compact JSON) pairs, in SETUP_FIELDS order.

    Fields come from the results' settings, with ``arch``, ``pos``, ``preset``, ``steps``,
    ``output_mode`` and ``computation_steps`` read from the results themselves (older runs
    recorded no settings) and ``data`` the data's fingerprint; a field a run does not record is
    null, but for the settings of LEGACY_DEFAULTS (output mode, computation steps, until_extra,
    until_over, progressive_loss, select, adam_beta2, stack_size, test_per_length, test_lengths), which read as
    what every run made before they existed trained with.
    """
    settings = {**LEGACY_DEFAULTS, **(results.get("settings") or {})}
    settings.update({name: results.get(name) for name in ("arch", "pos", "steps", "output_mode", "computation_steps") if name in results})
    settings.setdefault("arch", "transformer")
    settings["preset"] = results.get("preset", "")
    settings["data"] = (results.get("data") or {}).get("fingerprint")
    return tuple((name, _compact(settings.get(name))) for name in SETUP_FIELDS)


def _compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def differences(setups: list[Setup]) -> list[str]:
    """The field names whose values differ between the setups, in SETUP_FIELDS order."""
    return [name for i, name in enumerate(SETUP_FIELDS) if len({setup[i][1] for setup in setups}) > 1]


def describe(setup: Setup, names: list[str]) -> str:
    """``name=value`` for the named fields of a setup (``data`` shortened to 12 hex digits), comma separated."""
    values = dict(setup)
    parts = []
    for name in names:
        value = json.loads(values[name])
        text = "none" if value is None else (value[:12] if name == "data" and isinstance(value, str) else _compact(value) if isinstance(value, (list, dict)) else str(value))
        parts.append(f"{name}={text}")
    return ", ".join(parts)
