"""Check, before anything starts, that verl's environment holds what examples/verl_grpo/run.sh needs.

    PYTHON check_env.py N_GPUS

PYTHON is the interpreter of verl's environment (run.sh's PYTHON). A GPU run of verl 0.9.1's
main_ppo with vLLM rollouts needs verl with its core extra (TransferQueue, cachetools, ...),
vLLM, gengap (the exported reward.py imports gengap.harnesses.rewards) and N_GPUS CUDA devices.
The install, in a virtual environment of its own (verl pins its own torch, vLLM and transformers):

    python -m venv .venv-verl
    .venv-verl/bin/pip install 'verl[vllm]==0.9.1'   # verl-core + vLLM 0.24.0, torch 2.11.0, transformers 5.9.0
    .venv-verl/bin/pip install -e '.[release,harness]'  # gengap, from its checkout (reward.py; run.sh's GENGAP=.venv-verl/bin/gengap)

``verl`` alone lacks the core extra (main_ppo stops at ``No module named 'transfer_queue'``,
then ``cachetools``); ``verl[verl-core]`` lacks vLLM, and main_ppo then waits for rollout workers
that never start. Each of those is one line here and exit 1, before the release is built. Modules
are looked up, not imported (importing vLLM takes long), except torch, for the device count.
A verl version other than 0.9.1 is a note on stderr, not an error.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import sys

VERL_VERSION = "0.9.1"
INSTALL = f"pip install 'verl[vllm]=={VERL_VERSION}'"
NEEDED = (  # module, what provides it, how to get it
    ("verl", f"verl {VERL_VERSION}", INSTALL),
    ("transfer_queue", "verl's core extra (TransferQueue)", INSTALL),
    ("cachetools", "verl's core extra", INSTALL),
    ("vllm", "vLLM, verl's rollout engine here (actor_rollout_ref.rollout.name=vllm)", INSTALL),
    ("gengap.harnesses.rewards", "gengap, which the exported reward.py imports", "pip install -e . in a gengap checkout, or set PYTHONPATH to one"),
)
WHO = "examples/verl_grpo/run.sh"


def missing_module() -> str | None:
    """The line naming the first module that cannot be found (None: all are there)."""
    for module, what, install in NEEDED:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a parent package is missing or broken
            found = False
        if not found:
            return f"{WHO}: {sys.executable} has no module {module!r} ({what}): {install}"
    return None


def gpu_problem(wanted: int) -> str | None:
    """The line saying that torch sees fewer CUDA devices than wanted (None: enough)."""
    try:
        import torch
    except ImportError as err:
        return f"{WHO}: {sys.executable} cannot import torch ({err}): {INSTALL}"
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if count < wanted:
        return f"{WHO}: N_GPUS={wanted} but torch sees {count} CUDA device{'s' if count != 1 else ''}: verl's vLLM rollouts need GPUs"
    return None


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not argv[0].isdigit() or int(argv[0]) < 1:
        print(f"{WHO}: N_GPUS must be a positive integer, got {' '.join(argv) or 'nothing'}", file=sys.stderr)
        return 2
    problem = missing_module() or gpu_problem(int(argv[0]))
    if problem:
        print(problem, file=sys.stderr)
        return 1
    version = importlib.metadata.version("verl") if importlib.util.find_spec("verl") else None
    if version != VERL_VERSION:
        print(f"{WHO}: note: verl {version} here; the recipe was checked with verl {VERL_VERSION}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
