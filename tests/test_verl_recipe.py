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


# -- the environment check: one line naming what is missing, before anything is built ---------------

CHECK = ROOT / "examples" / "verl_grpo" / "check_env.py"
STUBBED = ("verl", "transfer_queue", "cachetools", "vllm")


def stub_environment(root: Path, leave_out: str | None = None, gpus: int = 1) -> dict[str, str]:
    """An environment whose PYTHONPATH holds empty stand-ins for verl's modules (all but leave_out),
    a torch that sees `gpus` CUDA devices, and this checkout (gengap)."""
    for name in STUBBED:
        if name != leave_out:
            (root / name).mkdir(parents=True, exist_ok=True)
            (root / name / "__init__.py").write_text("")
    (root / "torch").mkdir(exist_ok=True)
    (root / "torch" / "__init__.py").write_text(f"class cuda:\n    is_available = staticmethod(lambda: {gpus} > 0)\n    device_count = staticmethod(lambda: {gpus})\n")
    (root / "verl.dist-info").mkdir(exist_ok=True)
    (root / "verl.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: verl\nVersion: 0.9.1\n")
    return {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{ROOT}"}


def check(env: dict[str, str], *args: str, isolated: bool = False) -> subprocess.CompletedProcess:
    """check_env.py run with env (isolated: without site-packages, so only PYTHONPATH provides modules)."""
    command = [sys.executable, *(["-S"] if isolated else []), str(CHECK), *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)


@pytest.mark.parametrize("missing", [*STUBBED, None])
def test_the_environment_check_names_what_is_missing_in_one_line(tmp_path: Path, missing: str | None) -> None:
    done = check(stub_environment(tmp_path, leave_out=missing), "1")
    if missing is None:
        assert done.returncode == 0 and done.stderr == "", done.stderr
        return
    assert done.returncode == 1 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and f"no module {missing!r}" in done.stderr, done.stderr
    assert f"pip install 'verl[vllm]=={VERL_VERSION}'" in done.stderr and "Traceback" not in done.stderr


def test_the_environment_check_counts_gpus_and_names_gengap(tmp_path: Path) -> None:
    done = check(stub_environment(tmp_path, gpus=1), "2")
    assert done.returncode == 1 and done.stderr.strip() == "examples/verl_grpo/run.sh: N_GPUS=2 but torch sees 1 CUDA device: verl's vLLM rollouts need GPUs"
    env = stub_environment(tmp_path / "no-gengap")
    env["PYTHONPATH"] = str(tmp_path / "no-gengap")
    done = check(env, "1", isolated=True)
    assert done.returncode == 1 and "no module 'gengap.harnesses.rewards'" in done.stderr and len(done.stderr.splitlines()) == 1
    assert check(stub_environment(tmp_path), "zero").returncode == 2


def test_the_recipe_stops_at_once_without_verl_and_builds_nothing(tmp_path: Path) -> None:
    """This test environment has no verl: run.sh stops with the check's one line, before the release is built."""
    env = {**os.environ, "MODEL": "/models/stand-in", "PYTHON": sys.executable, "OUT": str(tmp_path / "run"), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(["bash", str(RECIPE)], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert done.returncode == 1 and done.stderr.strip().startswith("examples/verl_grpo/run.sh: ") and "no module 'verl'" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "run").exists()


def test_the_docs_name_the_gpu_install() -> None:
    install = f"pip install 'verl[vllm]=={VERL_VERSION}'"
    for path in (RECIPE, CHECK, ROOT / "docs" / "harnesses.md", ROOT / "examples" / "README.md"):
        assert install in path.read_text(encoding="utf-8"), path


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
    main_ppo.write_text(  # the environment check (check_env.py) asks for vLLM and GPUs, which this CPU environment lacks: its own tests are below
        "#!/bin/sh\n"
        'case "$1" in */check_env.py) exit 0;; esac\n'
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
