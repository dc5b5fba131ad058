"""Evaluate a pretrained Hugging Face causal LM on one config: ID vs OOD, shaped like a training run.

``evaluate_pretrained(model_dir, source, config=None, out=RUN_DIR, **settings)`` is the whole
job (``gengap eval`` calls it):

- records come from a release (or split directory) as for ``gengap train``; validation is the
  in-distribution side (ID), test the out-of-distribution side (OOD), each capped by ``limit``:
  the first ``limit`` records of gengap's evaluation order
  (:func:`gengap.harnesses.releases.evaluation_order`), the records ``lm_eval --limit N`` evaluates on
  the lm-eval export (not the spread ``gengap train --eval-limit`` takes);
- prompts are the harnesses' (:class:`gengap.harnesses.prompts.Prompter`): the task's instruction,
  ``shots`` examples from the train part (seeded per record with ``seed``) and the query, as a
  text prompt ending ``Answer:`` or, with ``chat``, as messages through the tokenizer's chat
  template (asking for ``answer_format``, see :mod:`gengap.harnesses.prompts`);
- generation is greedy and batched (left padding); a text prompt's answer is its first line
  (generation stops at a newline) and gets as many new tokens as the target has in the
  model's tokenizer, plus ``slack``; a chat reply gets ``max_new_tokens`` (default 512);
- answers are extracted and checked by the harnesses (:func:`gengap.harnesses.scoring.score_output`:
  the task's own checker, so any correct answer of a task with several counts); per-token
  accuracy compares the answer read with the target;
- ``results.json`` has the shape of ``gengap train``'s (``pos`` is ``"pretrained"``, ``preset``
  the model's name with the number of shots, ``steps`` 0, one entry in ``per_seed`` for the
  prompt seed), with exact match and token accuracy by length, difficulty and novelty bucket,
  so ``gengap report`` tabulates pretrained and from-scratch runs side by side;
  ``generations.jsonl`` holds every prompt, output, answer read and verdict;
- a config whose task executes its answers (cfq_like: the query run on the record's knowledge
  base, :func:`gengap.harnesses.scoring.execution_span`) also gets execution accuracy,
  ``id_execution_accuracy`` and ``ood_execution_accuracy`` (records of other tasks in the
  config count by their checker's verdict, as lm-eval's ``execution_accuracy`` does), and each
  generation its ``executes`` verdict.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

import torch

from gengap.baselines.data import SplitData, load_split
from gengap.baselines.errors import BaselineError, RunFileError
from gengap.baselines.metrics import aggregate, make_buckets, score, seed_summary
from gengap.baselines.numbers import EVAL_RANGES, check_numbers
from gengap.baselines.run_files import strict_json
from gengap.generators.safe_files import placement_problem
from gengap.baselines.training import RESULTS_FORMAT, _length_range, atomic_write, device_name, pick_device
from gengap.harnesses.extraction import ANSWER_FORMATS
from gengap.harnesses.prompts import config_prompter
from gengap.harnesses.releases import first_in_evaluation_order, multitask_params, open_release
from gengap.harnesses.scoring import executable, execution_span, score_output

POS = "pretrained"
CHAT_MAX_NEW_TOKENS = 512


@dataclass(frozen=True)
class EvalSettings:
    """What configures an evaluation of a pretrained model."""

    shots: int = 0
    seed: int = 0
    limit: int | None = None  # records per side (None: all)
    chat: bool = False  # prompts through the tokenizer's chat template
    system: bool = False  # chat: the instruction as a system message
    answer_format: str = "line"  # chat: the answer format asked for (gengap.harnesses.prompts)
    batch_size: int = 16
    max_new_tokens: int | None = None  # default: target tokens + slack (text), 512 (chat)
    slack: int = 8
    mistakes: int = 20
    device: str = "auto"

    def check(self) -> None:
        check_numbers(asdict(self), EVAL_RANGES, {})
        if self.shots < 0 or self.seed < 0:
            raise BaselineError("shots and seed must be non-negative")
        for name in ("limit", "max_new_tokens"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise BaselineError(f"{name} must be at least 1, got {value}")
        if self.batch_size < 1 or self.slack < 0 or self.mistakes < 0:
            raise BaselineError("batch_size must be at least 1, slack and mistakes non-negative")
        if self.answer_format not in ANSWER_FORMATS:
            raise BaselineError(f"unknown answer format {self.answer_format!r}; choose one of {', '.join(ANSWER_FORMATS)}")


def make_eval_settings(overrides: Mapping[str, Any]) -> EvalSettings:
    known = {f.name for f in fields(EvalSettings)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise BaselineError(f"unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    settings = replace(EvalSettings(), **dict(overrides))
    settings.check()
    return settings


def _config_params(source: Any, data: SplitData, tasks: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Task -> generation parameters of the config's tasks when the source is a release with a
    manifest (a multi-task config: each task's own; {} per task otherwise)."""
    found: dict[str, dict[str, Any]] = {}
    if isinstance(source, (str, Path)) and (Path(source) / "data").is_dir():
        try:
            release = open_release(source)
            found = multitask_params(release.entry(data.name)) or {tasks[0]: release.params(data.name)}
        except ValueError:
            found = {}
    return {task: found.get(task, {}) for task in tasks}


def load_model(model_dir: str | Path, device: torch.device) -> tuple[Any, Any]:
    """(model, tokenizer) of a local Hugging Face causal LM directory, offline; left padding."""
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if not sys.stderr.isatty():  # its loading bars would come before gengap's one-line error
        transformers.utils.logging.disable_progress_bar()
    path = Path(model_dir)
    if not path.is_dir():
        raise BaselineError(f"{model_dir} is not a directory (gengap eval reads a local Hugging Face model)")
    if not any((path / name).is_file() for name in TOKENIZER_FILES):
        raise BaselineError(f"{model_dir} has no tokenizer files ({', '.join(TOKENIZER_FILES[:2])}, ...): gengap eval needs the model's tokenizer beside it")
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
        major, minor = (int(part) for part in transformers.__version__.split(".")[:2])
        key = "dtype" if (major, minor) >= (4, 56) else "torch_dtype"  # renamed in transformers 4.56
        model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True, **{key: dtype})
    except (OSError, ValueError) as err:
        raise BaselineError(f"cannot load a causal LM from {model_dir}: {err}") from None
    except Exception as err:  # e.g. safetensors' error for a truncated weights file
        raise RunFileError(f"cannot load a causal LM from {model_dir}: {type(err).__name__}: {err}") from None
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None and tokenizer.eos_token is None:  # a bare WordLevel tokenizer, say: batches cannot be padded
        raise RunFileError(f"{model_dir}: the tokenizer has neither a pad token nor an end token (eos): gengap eval needs one to pad batches and end answers")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    check_tokenizer_fits(model, tokenizer, model_dir)
    model.to(device).eval()
    return model, tokenizer


TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json", "vocab.txt", "spiece.model", "sentencepiece.bpe.model")


def check_tokenizer_fits(model: Any, tokenizer: Any, model_dir: str | Path) -> None:
    """RunFileError when the tokenizer can produce ids the model has no embedding for (a
    tokenizer of another model), or its pad or end token is not one of the model's ids."""
    rows = model.get_input_embeddings().num_embeddings
    ids = {"its largest id": len(tokenizer) - 1, "pad": tokenizer.pad_token_id, "end": tokenizer.eos_token_id}
    beyond = [f"{name} {value}" for name, value in ids.items() if value is not None and not 0 <= value < rows]
    if beyond:
        raise RunFileError(f"{model_dir}: the tokenizer does not match the model ({', '.join(beyond)}; the model embeds ids 0..{rows - 1})")


@torch.no_grad()
def generate(
    model: Any, tokenizer: Any, prompts: Sequence[str], budgets: Sequence[int], batch_size: int, device: torch.device,
    stop_at_newline: bool, progress: bool = False,
) -> tuple[list[str], int]:
    """Greedy continuations of the prompts (at most budgets[i] new tokens each) and the number of tokens generated.

    Prompts are sorted by length and batched with left padding; a text prompt's continuation is
    cut at its first newline.
    """
    from tqdm import tqdm

    order = sorted(range(len(prompts)), key=lambda i: -len(prompts[i]))
    outputs: list[str] = [""] * len(prompts)
    produced = 0
    extra: dict[str, Any] = {"stop_strings": ["\n"], "tokenizer": tokenizer} if stop_at_newline else {}
    with tqdm(total=len(prompts), desc="generate", unit="ex", file=sys.stderr, disable=not progress) as bar:
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            batch = tokenizer([prompts[i] for i in rows], return_tensors="pt", padding=True, add_special_tokens=False).to(device)
            width = batch["input_ids"].shape[1]
            new = model.generate(
                **batch, max_new_tokens=max(budgets[i] for i in rows), do_sample=False,
                pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id, **extra,
            )[:, width:]
            for row, index in enumerate(rows):
                ids = new[row, : budgets[index]].tolist()
                ids = [t for t in ids if t != tokenizer.pad_token_id]
                produced += len(ids)
                text = tokenizer.decode(ids, skip_special_tokens=True)
                outputs[index] = text.split("\n")[0] if stop_at_newline else text
            bar.update(len(rows))
    return outputs, produced


def _first_line(err: BaseException) -> str:
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    return lines[0] if lines else ""


def model_name(model_dir: str | Path) -> str:
    return Path(model_dir).resolve().name


def evaluate_pretrained(
    model_dir: str | Path,
    source: Any,
    config: str | None = None,
    *,
    out: str | Path | None = None,
    progress: bool | None = None,
    **overrides: Any,
) -> dict[str, Any]:
    """Evaluate a local Hugging Face causal LM on one config (see the module doc); returns (and writes) the results."""
    settings = make_eval_settings(overrides)
    data = load_split(source, config)
    out_path = Path(out) if out is not None else None
    placed = placement_problem(out_path, [model_dir, *([source] if isinstance(source, (str, Path)) else [])]) if out_path is not None else None
    if placed is not None:  # never inside the model or the release evaluated, nor any release
        raise BaselineError(placed)
    if out_path is not None and out_path.exists() and (not out_path.is_dir() or any(out_path.iterdir())):
        raise BaselineError(f"{out_path} is not empty: choose another directory")
    tasks = list(dict.fromkeys(str(r.get("task")) for part in data.parts().values() for r in part))
    if not tasks:
        raise BaselineError(f"{data.name}: the config has no records")
    prompter = config_prompter(  # a multi-task config: each record prompted by its own task (gengap.harnesses.prompts)
        _config_params(source, data, tasks), data.train, k=settings.shots, seed=settings.seed, system=settings.system,
        answer_format=settings.answer_format,
    )
    device = pick_device(settings.device)
    if progress is None:
        progress = sys.stderr.isatty()
    model, tokenizer = load_model(model_dir, device)
    if settings.chat and not getattr(tokenizer, "chat_template", None):
        raise BaselineError(f"{model_dir}: the tokenizer has no chat template; leave out --chat to use text prompts")
    executes = any(executable(task) for task in tasks)
    sides = {"id": first_in_evaluation_order(data.validation, settings.limit), "ood": first_in_evaluation_order(data.test, settings.limit)}
    buckets = make_buckets(list(sides.values()))
    scores: dict[str, Any] = {}
    generations: list[dict[str, Any]] = []
    produced, seconds = 0, 0.0
    for side, records in sides.items():
        started = time.perf_counter()
        try:
            if settings.chat:
                prompts = [tokenizer.apply_chat_template(prompter.chat(r), add_generation_prompt=True, tokenize=False) for r in records]
                budgets = [settings.max_new_tokens or CHAT_MAX_NEW_TOKENS] * len(records)
            else:
                prompts = [prompter.text(r) for r in records]
                budgets = [
                    settings.max_new_tokens or len(tokenizer(" " + r["target"], add_special_tokens=False)["input_ids"]) + settings.slack
                    for r in records
                ]
            started = time.perf_counter()
            outputs, count = generate(model, tokenizer, prompts, budgets, settings.batch_size, device, not settings.chat, progress)
        except (ValueError, IndexError, KeyError, TypeError) as err:  # a tokenizer or model that transformers cannot run as loaded
            raise RunFileError(f"cannot generate with the model in {model_dir}: {type(err).__name__}: {_first_line(err)}") from None
        seconds += time.perf_counter() - started
        produced += count
        verdicts = [score_output(r, text) for r, text in zip(records, outputs)]
        scores[side] = score(records, [v.answer for v in verdicts], buckets, settings.mistakes, correct=[v.correct for v in verdicts])
        executed = [execution_span(r, v.span) if executes and executable(str(r.get("task"))) else v.correct for r, v in zip(records, verdicts)]
        if executes:
            scores[side]["execution_accuracy"] = sum(executed) / len(executed) if executed else 0.0
        by_id = {str(r.get("id", "")): text for r, text in zip(records, outputs)}
        for mistake in scores[side]["mistakes"]:
            mistake["output"] = by_id.get(mistake["id"], "")
        generations += [
            {"side": side, "id": r.get("id"), "prompt": prompt, "output": text, "answer": v.answer, "correct": v.correct,
             **({"executes": bool(executed[i])} if executes else {})}
            for i, (r, prompt, text, v) in enumerate(zip(records, prompts, outputs, verdicts))
        ]
    rate = produced / seconds if seconds > 0 else 0.0
    seed_result = {
        "seed": settings.seed,
        **seed_summary(scores["id"], scores["ood"]),
        "id_n": scores["id"]["n"],
        "ood_n": scores["ood"]["n"],
        "by_difficulty": {side: scores[side]["by_difficulty"] for side in scores},
        "by_length_detail": {side: scores[side]["by_length"] for side in scores},
        "mistakes": {side: scores[side]["mistakes"] for side in scores},
        "tokens_per_s": rate,
        "generated_tokens": produced,
        "generation_seconds": seconds,
        **({f"{side}_execution_accuracy": scores[side]["execution_accuracy"] for side in scores} if executes else {}),
    }
    name = model_name(model_dir)
    results = {
        "format": RESULTS_FORMAT,
        "kind": "pretrained",
        "config": data.name,
        "source": data.source,
        "task": "+".join(tasks),
        "pos": POS,
        "preset": f"{name} {settings.shots}-shot" + (" chat" if settings.chat else "") + (f" {settings.answer_format}" if settings.chat and settings.answer_format != "line" else ""),
        "steps": 0,
        "seeds": [settings.seed],
        "device": device_name(device),
        "compiled": False,
        "model": {
            "name": name,
            "path": str(Path(model_dir).resolve()),
            "hf_class": type(model).__name__,
            "parameters": sum(p.numel() for p in model.parameters()),
        },
        "settings": asdict(settings),
        "data": {
            "sizes": {part: len(records) for part, records in data.parts().items()},
            "evaluated": {side: len(records) for side, records in sides.items()},
            "input_length": {part: _length_range(records) for part, records in data.parts().items()},
            "fingerprint": data.fingerprint(),
        },
        "divergence": dict(data.divergence),
        "tokens_per_s": rate,
        "per_seed": [seed_result],
        "aggregate": aggregate([seed_result]),
        "plots": [],
    }
    if out_path is not None:
        out_path.mkdir(parents=True, exist_ok=True)
        atomic_write(out_path / "generations.jsonl", "".join(json.dumps(g, ensure_ascii=False) + "\n" for g in generations))
        from gengap.baselines.plots import plot_run

        made = plot_run(results, out_path / "plots" / "accuracy_by_length.png")
        results["plots"] = [str(Path(made).relative_to(out_path))] if made else []
        atomic_write(out_path / "results.json", strict_json(results, indent=1) + "\n")  # a NaN figure as null
    return results

