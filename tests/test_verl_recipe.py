"""The verl recipe (examples/verl_grpo/run.sh): the keys verl 0.9.1's main_ppo reads, checked as text and against verl itself.

The slow test runs the script itself (it builds the release of examples/suite.yaml and exports it
for verl with gengap's CLI) with its PYTHON set to a stand-in for ``python -m
verl.trainer.main_ppo``: tests/verl_recipe.py in a virtual environment holding verl 0.9.1
(GENGAP_VERL_PYTHON, which .ci/run sets, else .venv-verl/bin/python at the repository root),
where verl's Hydra config composes with exactly the script's overrides and passes main_ppo's
validation, and verl's own reward loader loads the export's reward.py and scores its rows.
Without such an environment (verl pins its own torch, transformers and ray; it takes minutes to
install) it is skipped, never in CI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gengap.harnesses.export import VERL_VERSION, verl_reward_overrides
from tests.verl_recipe import MICRO_BATCH, ROOT, command_overrides

VERL_ENV = "GENGAP_VERL_PYTHON"
RECIPE = ROOT / "examples" / "verl_grpo" / "run.sh"


def test_recipe_main_ppo_command_uses_the_keys_verl_reads() -> None:
    overrides = command_overrides(RECIPE)
    keys = {o.split("=")[0]: o.split("=", 1)[1] for o in overrides}
    assert set(verl_reward_overrides("$DATA/reward.py").split()) <= set(overrides)
    assert not any(key.startswith("custom_reward_function.") for key in keys)  # top-level keys: ignored by main_ppo
    for key in ("actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu", "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu",
                "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu", "actor_rollout_ref.rollout.name"):
        assert key in keys, key
    assert sum(key.endswith(MICRO_BATCH) for key in keys) == 3
    assert keys["actor_rollout_ref.model.path"] == "$MODEL"
    assert f"verl {VERL_VERSION}" in RECIPE.read_text() and f"verl {VERL_VERSION}" in (ROOT / "docs" / "harnesses.md").read_text()


def test_the_docs_show_the_recipe_main_ppo_command() -> None:
    assert command_overrides(ROOT / "docs" / "harnesses.md") == command_overrides(RECIPE)


def verl_python() -> Path | None:
    configured = os.environ.get(VERL_ENV)
    if configured:
        return Path(configured)
    local = ROOT / ".venv-verl" / "bin" / "python"
    return local if local.exists() else None


@pytest.mark.slow
def test_verl_composes_the_recipe_command_and_loads_and_calls_the_reward(tmp_path: Path) -> None:
    python = verl_python()
    if python is None:
        pytest.skip(f"no verl environment: set {VERL_ENV} or make .venv-verl (see tests/verl_recipe.py)")
    main_ppo = tmp_path / "verl-python"  # `$PYTHON -m verl.trainer.main_ppo ARGS` -> the check of ARGS, with verl's own code
    main_ppo.write_text(
        "#!/bin/sh\n"
        '[ "$1" = -m ] && [ "$2" = verl.trainer.main_ppo ] || { echo "not main_ppo: $*" >&2; exit 97; }\n'
        "shift 2\n"
        f'PYTHONPATH="{ROOT}" exec "{python}" -m tests.verl_recipe "$@"\n'
    )
    main_ppo.chmod(0o755)
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "HF_HUB_OFFLINE": "1",
           "MODEL": "/models/stand-in", "PYTHON": str(main_ppo), "GENGAP": str(bin_dir / "gengap"), "OUT": str(tmp_path / "run")}
    done = subprocess.run(["bash", str(RECIPE), "trainer.total_epochs=2"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["verl"] == VERL_VERSION and report["failures"] == []
    data = tmp_path / "run" / "verl-data"
    assert report["overrides"][-1] == "trainer.total_epochs=2" and f"reward.custom_reward_function.path={data}/reward.py" in report["overrides"]
    exported = json.loads((data / "gengap-export.json").read_text())
    assert [entry["name"] for entry in exported["configs"]] == ["parity_check-length"]
    assert report["rows"] == sum(count for entry in exported["configs"] for count in entry["files"].values()) > 0
