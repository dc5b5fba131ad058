"""Shared helpers for the tests: random task parameters and target corruptions."""

from __future__ import annotations

import dataclasses
import os
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import settings

from gengap.generators import ParamError, Params, Task

settings.register_profile("ci", max_examples=25, deadline=None)
settings.register_profile("dev", max_examples=25, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

SMALL_CAP = 30  # widest span of an integer parameter drawn by the generic tests


def random_params(task: Task, rng: random.Random, cap: int = SMALL_CAP) -> Params:
    """Random parameters over each field's documented range (capped to keep tests fast).

    Integer fields are drawn from [lo, min(hi, lo + cap)] (a task may narrow this with a
    class attribute ``test_caps`` mapping field -> upper bound); pairs min_X/max_X are
    drawn together and sorted; choices and booleans uniformly. Draws that break a
    cross-field rule are redrawn, and so are, for a task whose ``may_not_admit`` is true (a
    rejection sampler), draws its generator reports (almost) never admit a record.
    """
    caps: dict[str, int] = getattr(task, "test_caps", {})
    fields = {f.name: f for f in dataclasses.fields(task.params_type)}
    for _ in range(200):
        values: dict[str, Any] = {}
        for name, field in fields.items():
            meta = field.metadata
            if meta.get("choices"):
                values[name] = rng.choice(list(meta["choices"]))
            elif isinstance(field.default, bool):
                values[name] = rng.random() < 0.5
            elif isinstance(field.default, int):
                lo = int(meta["lo"]) if meta.get("lo") is not None else 0
                hi = int(meta["hi"]) if meta.get("hi") is not None else lo + cap
                hi = min(hi, lo + cap, caps.get(name, hi))
                values[name] = rng.randint(lo, max(lo, hi))
            elif isinstance(field.default, float):
                lo = meta.get("lo") if meta.get("lo") is not None else 0.0
                hi = meta.get("hi") if meta.get("hi") is not None else lo + 1.0
                values[name] = rng.uniform(lo, hi)
            else:
                values[name] = field.default
        for name in fields:
            if name.startswith("min_") and "max_" + name[4:] in fields:
                other = "max_" + name[4:]
                if isinstance(values[name], (int, float)) and values[name] > values[other]:
                    values[name], values[other] = values[other], values[name]
        try:
            params = task.params_type(**values)
            if getattr(task, "may_not_admit", False):  # a rejection sampler: its generator must find records
                task.generate(np.random.default_rng(0), 8, params)
            return params
        except ParamError:
            continue
    return task.default_params()


def corruptions(target: str) -> list[str]:
    """Wrong targets derived from a correct one: last token dropped, a token appended."""
    tokens = target.split()
    wrong = [" ".join(tokens + [tokens[0]])]
    if len(tokens) > 1:
        wrong.append(" ".join(tokens[:-1]))
    return wrong


@pytest.fixture(scope="session")
def built_outputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What gengap writes, built once for the output-discipline tests: release/ (of
    test_output_discipline.TINY, from tiny.yaml), pool.jsonl, split/ (iid of the pool),
    harness/release/ (tests.harness_fixture) and its exports export-chat/ and export-lm-eval/."""
    from gengap.cli import main
    from tests.harness_fixture import build_release as build_harness_release
    from tests.test_output_discipline import TINY

    root = tmp_path_factory.mktemp("built")
    (root / "tiny.yaml").write_text(TINY)
    assert main(["release", str(root / "tiny.yaml"), "--out", str(root / "release"), "--workers", "1"]) == 0
    assert main(["generate", "parity_check", "--n", "60", "--out", str(root / "pool.jsonl")]) == 0
    assert main(["split", str(root / "pool.jsonl"), "--strategy", "iid", "--out", str(root / "split")]) == 0
    (root / "harness").mkdir()
    build_harness_release(root / "harness")
    for to in ("chat", "lm-eval"):
        assert main(["export", str(root / "harness" / "release"), "--to", to, "--out", str(root / f"export-{to}")]) == 0
    return root
