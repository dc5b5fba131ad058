"""Supervised fine-tuning with TRL on gengap's chat export: the loss is on the completion's tokens only.

Tested with trl 1.16.0 (transformers 5.24.0, datasets 5.2.0, torch 2.13.0) and gengap from this checkout (`pip install -e '.[train,trl]'`).

    python examples/trl_sft.py --model /models/Qwen2.5-0.5B --release release --config addition-iid --steps 500 --out sft-addition

Without --release it builds the release of examples/suite.yaml into OUT/release (gengap's write_release). It
exports --config for chat into OUT/chat-data (export_release: prompt/completion rows, the reply in
--answer-format), trains SFTTrainer on the train part (TRL chooses completion_only_loss from the columns) and
saves the model to --out. The defaults (2 steps of 4 rows) run in seconds on a CPU with a tiny model; the last
line printed is a JSON summary (steps, training loss, the train file). Evaluate the result on the ID and OOD
sides with `gengap eval OUT --release RELEASE --config CONFIG --chat`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

SUITE = Path(__file__).resolve().parent / "suite.yaml"


def parser() -> argparse.ArgumentParser:
    """The recipe's command line."""
    p = argparse.ArgumentParser(description="SFT with TRL on gengap's chat export")
    p.add_argument("--model", required=True, help="a local Hugging Face causal LM directory or a hub id")
    p.add_argument("--release", help="a gengap release (default: build examples/suite.yaml's into OUT/release)")
    p.add_argument("--config", default="addition-iid", help="the release config to train on (default addition-iid)")
    p.add_argument("--answer-format", default="line", choices=["line", "tags", "think", "boxed"])
    p.add_argument("--shots", type=int, default=0, help="examples from the train part in each prompt")
    p.add_argument("--steps", type=int, default=2, help="optimizer steps")
    p.add_argument("--batch-size", type=int, default=4, help="per-device train batch size")
    p.add_argument("--learning-rate", type=float, default=2e-5)
    p.add_argument("--out", default="sft-run", help="output directory (TRL's output_dir; the model is saved there)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    import torch
    from datasets import load_dataset
    from trl import SFTConfig, SFTTrainer

    from gengap.release import write_release
    from gengap.suite import load_suite
    from gengap.harnesses import export_release

    out = Path(args.out)
    release = Path(args.release) if args.release else out / "release"
    out.mkdir(parents=True, exist_ok=True)
    if not args.release and not release.exists():
        write_release(load_suite(SUITE), release)
    chat = out / "chat-data"
    if not chat.exists():
        export_release(release, chat, "chat", shots=args.shots, answer_format=args.answer_format, configs=[args.config])
    train_file = chat / args.config / "train.jsonl"
    config = SFTConfig(
        output_dir=str(out), max_steps=args.steps, per_device_train_batch_size=args.batch_size, learning_rate=args.learning_rate,
        logging_steps=1, save_strategy="no", report_to="none",
        use_cpu=not torch.cuda.is_available(), bf16=torch.cuda.is_available() and torch.cuda.is_bf16_supported(),
    )
    trainer = SFTTrainer(model=args.model, args=config, train_dataset=load_dataset("json", data_files=str(train_file), split="train"))
    result = trainer.train()
    trainer.save_model(str(out))
    print(json.dumps({"steps": result.global_step, "training_loss": result.training_loss,
                      "completion_only_loss": bool(trainer.completion_only_loss), "train_file": str(train_file), "out": str(out)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
