"""The task mixture of a stream run's settings (``gengap train --stream TASK`` or ``--stream
MIXTURE.yaml``), resolved without torch, so that the command line refuses a misspelt task, a
bad curriculum or an unreadable mixture file at once, before torch is imported
(gengap.baselines.stream_train.StreamPlan.from_settings resolves through this too)."""

from __future__ import annotations

from typing import Sequence

from gengap.baselines.errors import BaselineError
from gengap.generators.curriculum import CurriculumError
from gengap.generators.mixtures import Component, MixtureError, TaskMixture, is_mixture_file, load_mixture, resolve_stream
from gengap.generators.params import ParamError
from gengap.generators.registry import UnknownTaskError


def stream_mixture(
    task: str,
    params: Sequence[tuple[str, str]] = (),
    level: int | None = None,
    curriculum: str | None = None,
    sizes: Sequence[tuple[int, int]] = (),
) -> tuple[TaskMixture, str | None]:
    """(the mixture, its file or None for one task); BaselineError naming the problem (``task`` may name a mixture file)."""
    if is_mixture_file(task):
        if params or level is not None or curriculum is not None or sizes:
            raise BaselineError("a mixture file sets level, curriculum, params and sizes per component: drop --level, --curriculum, --param and --sizes")
        try:
            return load_mixture(task), task
        except MixtureError as err:
            raise BaselineError(str(err)) from None
    try:
        levels, spec = resolve_stream(task, params, level, curriculum, sizes)
    except UnknownTaskError as err:
        raise BaselineError(str(err)) from None
    except (ParamError, CurriculumError) as err:
        raise BaselineError(f"{task}: {err}") from None
    return TaskMixture((Component(task, levels, spec),)), None
