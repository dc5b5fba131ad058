"""GRPO with TRL on a gengap stream: prompts generated on the fly, rewarded by the task's own checker.

Tested with trl 1.16.0 (transformers 5.24.0, datasets 5.2.0, torch 2.13.0) and gengap from this checkout (`pip install -e '.[train,trl]'`).

    python examples/trl_grpo.py --model /models/Qwen2.5-0.5B-Instruct --stream addition \
        --curriculum linear:start=1,end=5,steps=500 --steps 500 --batch-size 8 --generations 8 --max-completion-length 256

--stream is a task (its levels 1..10, the level chosen by --curriculum, which follows the trainer's steps) or
a mixture file (.yaml/.yml/.json, each component with its own curriculum). --release and --config exclude
that config's validation and test inputs from the stream. The rewards are gengap_reward (correct) and, with
--format-weight, gengap_format_reward (the reply keeps to --answer-format). The defaults (2 steps of 4
prompts, 2 generations of 8 tokens) run in seconds on a CPU with a tiny model; the trained model is saved to
--out, and the last line printed is a JSON summary (steps, mean reward logged per step).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def parser() -> argparse.ArgumentParser:
    """The recipe's command line."""
    p = argparse.ArgumentParser(description="GRPO with TRL on a gengap stream")
    p.add_argument("--model", required=True, help="a local Hugging Face causal LM directory or a hub id")
    p.add_argument("--stream", default="parity_check", help="a task name or a mixture file (default parity_check)")
    p.add_argument("--curriculum", default="step:start=1,end=4,every=1", help="the task's curriculum (a task stream only)")
    p.add_argument("--seed", type=int, default=0, help="the stream's seed")
    p.add_argument("--release", help="a release whose --config inputs the stream must not yield")
    p.add_argument("--config", help="the config of --release to exclude")
    p.add_argument("--answer-format", default="tags", choices=["line", "tags", "think", "boxed"])
    p.add_argument("--format-weight", type=float, default=0.1, help="weight of the format reward (0: correct only)")
    p.add_argument("--steps", type=int, default=2, help="optimizer steps")
    p.add_argument("--batch-size", type=int, default=4, help="per-device train batch size (completions)")
    p.add_argument("--generations", type=int, default=2, help="completions per prompt")
    p.add_argument("--max-completion-length", type=int, default=8)
    p.add_argument("--learning-rate", type=float, default=1e-6)
    p.add_argument("--out", default="grpo-run", help="output directory (TRL's output_dir; the model is saved there)")
    return p


def prompt_rows(tasks: list[str], answer_format: str) -> Any:
    """A row -> its chat prompt and answer format, by the row's own task."""
    from gengap.harnesses import Prompter

    prompters = {task: Prompter(task, answer_format=answer_format) for task in tasks}
    return lambda row: {"prompt": prompters[row["task"]].chat({**row, "meta": json.loads(row["meta"])}), "answer_format": answer_format}


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if (args.release is None) != (args.config is None):
        parser().error("--release and --config go together")
    import torch
    from trl import GRPOConfig, GRPOTrainer

    from gengap.baselines.stream_datasets import grpo_records_per_step, hf_iterable_dataset
    from gengap.generators import Exclusion, RecordStream, load_mixture, parse_curriculum
    from gengap.harnesses import gengap_format_reward, gengap_reward

    config = GRPOConfig(
        output_dir=args.out, max_steps=args.steps, per_device_train_batch_size=args.batch_size, num_generations=args.generations,
        max_completion_length=args.max_completion_length, learning_rate=args.learning_rate, shuffle_dataset=False,
        reward_weights=[1.0, args.format_weight], logging_steps=1, save_strategy="no", report_to="none",
        use_cpu=not torch.cuda.is_available(), bf16=torch.cuda.is_available() and torch.cuda.is_bf16_supported(),
    )
    exclusion = Exclusion.from_release(args.release, args.config) if args.release else None
    per_step = grpo_records_per_step(config)
    if Path(args.stream).suffix in (".yaml", ".yml", ".json"):
        mixture = load_mixture(args.stream)
        tasks = [component.task for component in mixture.components]
        data = hf_iterable_dataset(mixture.stream(args.seed, exclusion=exclusion), records_per_step=per_step)
    else:
        tasks = [args.stream]
        stream = RecordStream.of_task(args.stream, seed=args.seed, exclusion=exclusion)
        data = hf_iterable_dataset(stream, curriculum=parse_curriculum(args.curriculum), records_per_step=per_step)
    trainer = GRPOTrainer(model=args.model, reward_funcs=[gengap_reward, gengap_format_reward], args=config,
                          train_dataset=data.map(prompt_rows(tasks, args.answer_format)))
    trainer.train()
    trainer.save_model(args.out)
    rewards = [row["reward"] for row in trainer.state.log_history if "reward" in row]
    print(json.dumps({"steps": trainer.state.global_step, "records_per_step": per_step, "rewards": rewards, "out": args.out}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
