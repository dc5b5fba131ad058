#!/usr/bin/env bash
# GRPO with verl on a gengap release: ID (validation) and OOD (test) scores come out apart, per data source.
# Tested with verl 0.9.1 (its overrides and reward: torch 2.13.0, transformers 5.10.4, hydra-core 1.3.8, on a CPU),
# in a virtual environment of its own. A GPU run needs verl's core extra and vLLM, and gengap there, for reward.py
# and for step 1 (the release and its Parquet export: gengap's release and harness extras), in a gengap checkout:
#
#   python -m venv .venv-verl && .venv-verl/bin/pip install 'verl[vllm]==0.9.1' && .venv-verl/bin/pip install -e '.[release,harness]'
#   MODEL=/models/Qwen2.5-0.5B-Instruct PYTHON=.venv-verl/bin/python GENGAP=.venv-verl/bin/gengap bash examples/verl_grpo/run.sh [OVERRIDE ...]
#
# ('verl[vllm]==0.9.1' brings verl-core, vLLM 0.24.0, torch 2.11.0 and transformers 5.9.0.)
# 0. checks PYTHON's environment (check_env.py: verl, its core extra, vLLM, gengap, N_GPUS CUDA devices) and stops
#    with one line naming what is missing and how to install it;
# 1. builds the release of SUITE into OUT/release and exports CONFIG of it for verl into OUT/verl-data (Parquet and
#    reward.py), each unless it is there (examples/export.sh: `gengap release`, `gengap export --to verl`);
# 2. launches verl's main_ppo with the overrides below; arguments are appended to them (Hydra: the last one wins),
#    e.g. trainer.total_epochs=3 or +reward.custom_reward_function.reward_kwargs.partial_credit=true.
#
# Variables: MODEL (required: a local Hugging Face model directory or a hub id), PYTHON (the Python of verl's
# environment; gengap must be importable there too, for reward.py: install it or set PYTHONPATH to a checkout;
# default python), GENGAP (gengap's command, default gengap), SUITE (default: suite.yaml beside this folder),
# OUT (default verl-grpo), CONFIG (default parity_check-length), SHOTS (default 2), N_GPUS (default 1).
# A training step needs GPU rollout workers (vLLM here); tests/test_verl_recipe.py runs this script on a CPU with
# main_ppo replaced by a check with verl's own config and reward loader (tests/verl_recipe.py), and step 0 on its own.
set -euo pipefail
: "${MODEL:?set MODEL to a local Hugging Face model directory or a hub id}"
PYTHON="${PYTHON:-python}"
CONFIG="${CONFIG:-parity_check-length}"
N_GPUS="${N_GPUS:-1}"
"$PYTHON" "$(dirname "$0")/check_env.py" "$N_GPUS"
GENGAP="${GENGAP:-gengap}" bash "$(dirname "$0")/../export.sh" "${OUT:-verl-grpo}" verl verl-data --config "$CONFIG" --shots "${SHOTS:-2}"
DATA="$(cd "${OUT:-verl-grpo}/verl-data" && pwd)"  # absolute: verl's workers need not share this directory

"$PYTHON" -m verl.trainer.main_ppo algorithm.adv_estimator=grpo \
  data.train_files="$DATA/$CONFIG/train.parquet" \
  data.val_files="[$DATA/$CONFIG/validation.parquet,$DATA/$CONFIG/test.parquet]" \
  data.train_batch_size=64 data.max_prompt_length=1024 data.max_response_length=512 \
  reward.custom_reward_function.path="$DATA/reward.py" reward.custom_reward_function.name=compute_score \
  actor_rollout_ref.model.path="$MODEL" \
  actor_rollout_ref.actor.use_kl_loss=true actor_rollout_ref.actor.ppo_mini_batch_size=32 \
  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8 \
  actor_rollout_ref.rollout.name=vllm actor_rollout_ref.rollout.n=8 \
  actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=16 \
  actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=16 \
  trainer.n_gpus_per_node="$N_GPUS" trainer.nnodes=1 trainer.logger=console "$@"
