"""The README's verl recipe: the keys verl 0.9.1's main_ppo reads, checked as text and against verl itself.

The second test runs tests/verl_recipe.py in a virtual environment holding verl 0.9.1
(GENGAP_VERL_PYTHON, which .ci/run sets, else .venv-verl/bin/python at the repository root):
verl's Hydra config composes with the README's overrides and passes main_ppo's validation, and
verl's own reward loader loads the export's reward.py and scores its rows. Without such an
environment (verl pins its own torch, transformers and ray; it takes minutes to install) it is
skipped, never in CI.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from gengap.cli import main
from harnesses.export import VERL_VERSION, verl_reward_overrides
from tests.harness_fixture import build_release
from tests.verl_recipe import MICRO_BATCH, ROOT, readme_overrides

VERL_ENV = "GENGAP_VERL_PYTHON"


def test_readme_main_ppo_command_uses_the_keys_verl_reads() -> None:
    overrides = readme_overrides(ROOT / "README.md")
    keys = {o.split("=")[0]: o.split("=", 1)[1] for o in overrides}
    assert set(verl_reward_overrides("verl-data/reward.py").split()) <= set(overrides)
    assert keys["reward.custom_reward_function.path"] == "verl-data/reward.py"
    assert not any(key.startswith("custom_reward_function.") for key in keys)  # top-level keys: ignored by main_ppo
    for key in ("actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu", "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu",
                "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu", "actor_rollout_ref.rollout.name"):
        assert key in keys, key
    assert sum(key.endswith(MICRO_BATCH) for key in keys) == 3
    assert f"verl {VERL_VERSION}" in (ROOT / "README.md").read_text()


def verl_python() -> Path | None:
    configured = os.environ.get(VERL_ENV)
    if configured:
        return Path(configured)
    local = ROOT / ".venv-verl" / "bin" / "python"
    return local if local.exists() else None


@pytest.mark.slow
def test_verl_composes_the_readme_command_and_loads_and_calls_the_reward(tmp_path: Path) -> None:
    python = verl_python()
    if python is None:
        pytest.skip(f"no verl environment: set {VERL_ENV} or make .venv-verl (see tests/verl_recipe.py)")
    release = build_release(tmp_path)
    out = tmp_path / "verl-data"
    assert main(["export", str(release), "--to", "verl", "--out", str(out), "--shots", "1"]) == 0
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([str(python), "-m", "tests.verl_recipe", "--export", str(out), "--config", "parity_check-length"],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["verl"] == VERL_VERSION and report["failures"] == []
    exported = json.loads((out / "gengap-export.json").read_text())
    assert report["rows"] == sum(count for entry in exported["configs"] for count in entry["files"].values())
