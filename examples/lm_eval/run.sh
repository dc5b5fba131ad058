#!/usr/bin/env bash
# lm-evaluation-harness on a gengap release: each config an ID task (validation) and an OOD task (test), few-shot
# examples from the train part only. Tested with lm-eval 0.4.13 (transformers 5.24.0, torch 2.13.0).
# Install, in a gengap checkout: `pip install -e '.[lm-eval,release]'` (lm-eval, and the release's plots for step 1).
#
#   MODEL=/models/SmolLM2-135M bash examples/lm_eval/run.sh [LM_EVAL_ARG ...]
#
# 1. builds the release of SUITE into OUT/release and exports it for lm-eval into OUT/lm-tasks, each unless it is
#    there (examples/export.sh: `gengap release`, `gengap export --to lm-eval`);
# 2. runs lm_eval on TASKS with --num_fewshot; arguments are passed on to lm_eval (e.g. --limit 100,
#    --apply_chat_template --fewshot_as_multiturn for a chat model). Results and samples go to OUT/lm-out.
#
# Variables: MODEL (required: a local Hugging Face model directory or a hub id), MODEL_ARGS (more --model_args,
# e.g. ",dtype=bfloat16"), GENGAP (gengap's command, default gengap), LM_EVAL (default lm_eval), SUITE (default:
# suite.yaml beside this folder), OUT (default lm-eval-run), TASKS (default gengap-examples: the release's group,
# every config's ID and OOD task, for a base model that answers at once: the answer is read from the first line, so
# a right answer after reasoning or inside <think> tags scores wrong; gengap-examples_cot: their chain-of-thought
# variants, answer in <answer> tags, for an instruct or reasoning model that reasons first),
# NUM_FEWSHOT (default 3), DEVICE (default cpu; cuda for a GPU), BATCH_SIZE
# (default 8).
set -euo pipefail
: "${MODEL:?set MODEL to a local Hugging Face model directory or a hub id}"
OUT="${OUT:-lm-eval-run}"
bash "$(dirname "$0")/../export.sh" "$OUT" lm-eval lm-tasks
LM_EVAL="${LM_EVAL:-lm_eval}"
TASKS="${TASKS:-gengap-examples}"
NUM_FEWSHOT="${NUM_FEWSHOT:-3}"
DEVICE="${DEVICE:-cpu}"
BATCH_SIZE="${BATCH_SIZE:-8}"

"$LM_EVAL" --include_path "$OUT/lm-tasks" --tasks "$TASKS" --num_fewshot "$NUM_FEWSHOT" \
  --model hf --model_args "pretrained=$MODEL${MODEL_ARGS:-}" --device "$DEVICE" --batch_size "$BATCH_SIZE" \
  --log_samples --output_path "$OUT/lm-out" "$@"
