"""Train a decoder-only transformer on one split, evaluate ID vs OOD, over several seeds.

``train_and_evaluate(source, config=None, out=RUN_DIR, **settings)`` is the whole job (the
``gengap train`` command calls it). Per seed:

- the model is initialised on the CPU under its *init seed* (so CPU and GPU runs start from
  the same weights), the training order comes from its *data seed*: the batch of step s is a
  pure function of (data seed, s) (consecutive slices of per-epoch permutations), so resuming
  needs no iterator state. Both seeds come from the run seed (streams ``init`` and ``data``
  of gengap.generators.seeding), or are fixed for all seeds with ``init_seed`` / ``data_seed`` (to
  vary one source of randomness at a time);
- AdamW (weight decay on matrices only), linear warmup then cosine decay to
  ``min_lr_ratio * lr``, gradient clipping; on CUDA bf16 autocast, torch.compile and fused
  AdamW; on the CPU fp32 on one thread (``torch.set_num_threads(1)`` for the run). What
  actually runs is recorded (gengap.baselines.execution: the recurrent models compute in fp32
  and are not compiled, whatever was asked); ``deterministic`` runs under deterministic
  algorithms, and what differs on CUDA (pinned batch transfers, the cuBLAS workspace setting,
  halving the evaluation batch on out-of-memory) is gengap.baselines.cuda;
- sequences follow the run's layout (``output_mode`` and ``computation_steps``,
  gengap.baselines.layout; n input, m target tokens, c computation steps): ``autoregressive``
  reads ``input <sep> <blank>*(c n) target <end>``, the loss is the cross-entropy of the
  target tokens and the end token only (a looped model with ``progressive_loss`` alpha: mixed
  with the progressive loss, gengap.baselines.looped), answers are decoded greedily from ``input <sep>
  <blank>*(c n)``; ``empty-tape`` reads ``input <sep> <blank>*(c n) <blank>*m``, the loss is
  at the m output-tape positions (each predicts its target token, no shift, no end token) and
  the answer is the argmax there, from one forward pass. ``<blank>`` joins the vocabulary
  only when the layout needs it (an autoregressive run with c = 0 has the ids, weights and
  results it had before output modes existed);
- every ``eval_every`` steps: decoding of a fixed subset of validation (ID) and test
  (OOD), one line in ``metrics.jsonl``; every ``checkpoint_every`` steps the checkpoint
  ``seed-<s>/checkpoint.pt`` (gengap.baselines.checkpoints: model, optimizer, scheduler, RNG
  states, progress) is replaced atomically; ``resume=True`` continues from it and ends
  with exactly the metrics of an uninterrupted run on the CPU (on CUDA up to the
  nondeterminism of its kernels);
- with ``until_id`` a seed stops at the step gengap.baselines.learned.stop_step works out from
  the periodic rows (the learned rule met at step s, then ``until_extra`` x s more steps, at
  most ``steps``; an evaluation is made at that step); results record ``learned_at``,
  ``stopped_at`` and ``converged``;
- with ``select: best`` every periodic evaluation reads the whole validation part (the records the
  final evaluation scores), the weights of the first evaluation with the highest ID figure
  (``until_over``: gengap.baselines.learned.selected_row) are kept, in memory and in every
  checkpoint, and the final evaluation scores them: results record ``selected_step`` and
  ``selected_id``, so the model that is scored is the model validation chose;
- at the end: full evaluation of validation and test (scores, by length, difficulty and
  novelty bucket, a sample of mistakes, each record's exact match as ``outcomes``: one character
  per record in the part's order, named by ``outcomes_sha256``, the digest of their ids; ID also
  as ``id_train_weighted_exact_match``, per-length exact match weighted by train's length shares),
  ``seed-<s>/result.json``.

With ``stream=TASK`` (and ``level``, ``curriculum``, ``stream_params``, ``sizes``), or
``stream=MIXTURE.yaml`` (a multi-task mixture file, gengap.generators.mixtures), the batches come
from a record stream seeded by the data seed instead of the train part
(gengap.baselines.stream_train: a :class:`StreamSource` in place of a :class:`FixedSource`),
excluding the inputs of the split's validation and test sides; its cursor and curriculum
state go into the checkpoint, metric rows gain ``level`` and ``mean_level`` (a mixture:
``levels``, ``mean_levels`` and ``shares`` per component), results gain ``stream`` and per
seed ``curriculum``, and ``plots/curriculum.png`` is drawn.

A run directory holds ``run.json`` (settings and data fingerprint, checked on resume, as the
run identity every checkpoint and seed result carries is: gengap.baselines.run_identity),
``tokenizer.json``, ``metrics.jsonl``, ``results.json`` (per seed and aggregated over seeds,
and the split's divergence figures when its report was found),
``plots/accuracy_by_length.png`` and the per-seed folders.
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from gengap.baselines import checkpoints, cuda
from gengap.baselines.checkpoints import RUN_FORMAT, Progress, load_checkpoint, rng_states, save_checkpoint, set_rng_states  # noqa: F401
from gengap.baselines.data import SplitData, load_split, subset
from gengap.baselines.decoding import autocast_context, greedy_decode, tape_decode
from gengap.baselines.errors import BaselineError, RunFileError
from gengap.baselines.execution import execution_of
from gengap.baselines import run_files
from gengap.baselines.model_size import check_model_size
from gengap.baselines.run_identity import KEY, check_identity, run_identity, settings_changes
from gengap.baselines.label_noise import corrupt
from gengap.baselines.layout import IGNORE, Layout
from gengap.baselines.learned import id_figure, learned_at, selected_row, stop_step
from gengap.baselines.metrics import (aggregate, input_length, iteration_summary, length_shares, make_buckets, score, seed_summary,
                                      weighted_length_mean)
from gengap.baselines.architectures import build
from gengap.baselines.looped import progressive_draw
from gengap.baselines.sequence_model import SequenceModel
from gengap.baselines.settings import LOOPED_PRESETS, PRESETS, RECURRENT_PRESETS, SCHEDULES, Preset, TrainSettings, make_settings, preset_of  # noqa: F401
from gengap.baselines.length_test import LengthTest, with_length_test
from gengap.baselines.stream_train import StreamPlan, StreamSource, reach_warnings
from gengap.baselines.tokenizer import Tokenizer
from gengap.baselines.train_progress import SeedStatus, postfix
from gengap.generators.exclusion import Exclusion
from gengap.generators.reading import ReadError, read_json
from gengap.generators.safe_files import atomic_write_text, placement_problem
from gengap.generators.seeding import data_seed_of, epoch_rng, init_seed_of

RESULTS_FORMAT = "gengap-baseline-results/1"
Heartbeat = Callable[[Callable[[], str]], AbstractContextManager[Any]]  # heartbeat(describe): lines while a seed trains


def pick_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError:
        raise BaselineError(f"unknown device {name!r}") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise BaselineError("device cuda was asked for but CUDA is not available")
    return device


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(device)})"
    return device.type


# -- data on the device ---------------------------------------------------------------


class EncodedTrain:
    """The training part as right-padded id and label matrices, for fast batch slicing.

    Rows follow the layout (gengap.baselines.layout); labels[i, t] is what the logits at t
    predict (autoregressive: the token at t + 1 when that is a target token or the end token;
    empty-tape: the target token of tape position t), else IGNORE.
    """

    def __init__(self, records: Sequence[Mapping[str, Any]], tokenizer: Tokenizer, device: torch.device, layout: Layout = Layout()) -> None:
        encoded = [layout.example(tokenizer, r["input"], r["target"]) for r in records]
        width = max(len(ids) for ids, _ in encoded)
        ids = np.full((len(encoded), width), tokenizer.pad_id, dtype=np.int32)  # int32 at rest, int64 per batch
        labels = np.full((len(encoded), width), IGNORE, dtype=np.int32)
        lengths = np.zeros(len(encoded), dtype=np.int64)
        for row, (tokens, targets) in enumerate(encoded):
            ids[row, : len(tokens)] = tokens
            labels[row, : len(tokens)] = targets
            lengths[row] = len(tokens)
        self.size = len(encoded)
        self.width = width
        self.lengths = lengths
        self.ids = cuda.to_device(ids, device)
        self.labels = cuda.to_device(labels, device)
        self.device = device
        self.pad_multiple = 8 if device.type == "cuda" else 1  # fewer distinct shapes for torch.compile

    def batch(self, indices: np.ndarray) -> tuple[torch.Tensor, torch.Tensor, int]:
        """(ids, labels, number of real tokens) of the rows at indices, trimmed to their longest."""
        lengths = self.lengths[indices]
        longest = int(lengths.max())
        longest = min(self.width, -(-longest // self.pad_multiple) * self.pad_multiple)
        index = cuda.to_device(indices, self.device)  # on CUDA from pinned memory, without blocking the host
        return self.ids[index, :longest].long(), self.labels[index, :longest].long(), int(lengths.sum())


class DataOrder:
    """Batch indices of step s (1-based): slice s of the stream of per-epoch permutations."""

    def __init__(self, size: int, batch_size: int, seed: int) -> None:
        self.size = size
        self.batch_size = batch_size
        self.seed = seed
        self._epochs: dict[int, np.ndarray] = {}

    def permutation(self, epoch: int) -> np.ndarray:
        if epoch not in self._epochs:
            if len(self._epochs) > 4:
                self._epochs.clear()
            self._epochs[epoch] = epoch_rng(self.seed, epoch).permutation(self.size)
        return self._epochs[epoch]

    def indices(self, step: int) -> np.ndarray:
        start = (step - 1) * self.batch_size
        out = np.empty(self.batch_size, dtype=np.int64)
        filled = 0
        while filled < self.batch_size:
            epoch, offset = divmod(start + filled, self.size)
            take = min(self.batch_size - filled, self.size - offset)
            out[filled : filled + take] = self.permutation(epoch)[offset : offset + take]
            filled += take
        return out


class FixedSource:
    """The split's training part in DataOrder's order: batch s is a pure function of (data seed, s), no state."""

    needs_logits = False

    def __init__(self, train: EncodedTrain, batch_size: int, data_seed: int, inputs: Sequence[str] = ()) -> None:
        self.train = train
        self.order = DataOrder(train.size, batch_size, data_seed)
        self.inputs = inputs  # the train part's inputs, row by row (for training_data)

    def batch(self, step: int) -> tuple[torch.Tensor, torch.Tensor, int]:
        return self.train.batch(self.order.indices(step))

    def observe(self, step: int, logits: torch.Tensor | None, labels: torch.Tensor) -> None:
        pass

    def metrics(self) -> dict[str, Any]:
        return {}

    def state(self) -> dict[str, Any]:
        return {}

    def load_state(self, state: Mapping[str, Any]) -> None:
        pass

    def summary(self) -> dict[str, Any] | None:
        return None

    def training_data(self, steps: int) -> dict[str, Any]:
        """What results.json records per seed of the data trained on: a fixed set, its size and distinct inputs."""
        trained = steps * self.order.batch_size
        rows = range(len(self.inputs)) if trained >= self.train.size else self.order.permutation(0)[:trained].tolist()
        return {"kind": "fixed set", "records": self.train.size, "records_trained": trained,
                "distinct_inputs": len({self.inputs[i] for i in rows})}


# -- the optimisation step -------------------------------------------------------------


def lr_factor(step: int, warmup: int, total: int, min_ratio: float, schedule: str = "cosine") -> float:
    """Multiplier of the base learning rate at 0-based step index: linear warmup, then cosine
    decay to min_ratio (schedule cosine) or 1 (schedule constant)."""
    if step < warmup:
        return (step + 1) / warmup
    if schedule == "constant":
        return 1.0
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))


class Trainer:
    """Optimizer, schedule and one training step of a model on an EncodedTrain (with
    ``progressive_loss``, the looped model's progressive loss drawn from ``data_seed``)."""

    def __init__(self, model: SequenceModel, data: EncodedTrain, settings: TrainSettings, device: torch.device, compile_model: bool,
                 data_seed: int = 0) -> None:
        self.model = model
        self.data = data
        self.settings = settings
        self.device = device
        self.data_seed = data_seed
        params = [p for p in model.parameters() if p.requires_grad]
        self.params = params
        groups = [
            {"params": [p for p in params if p.dim() >= 2], "weight_decay": settings.weight_decay},
            {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
        ]
        fused = settings.fused if settings.fused is not None else device.type == "cuda"
        extra = {"fused": True} if fused else {}
        self.optimizer = torch.optim.AdamW(groups, lr=settings.lr, betas=(0.9, settings.adam_beta2), **extra)
        warmup, total, ratio, schedule = settings.warmup, settings.steps, settings.min_lr_ratio, settings.schedule
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lambda i: lr_factor(i, warmup, total, ratio, schedule))
        self.forward = torch.compile(model) if compile_model else model
        self.autocast = lambda: autocast_context(device, settings.precision)

    def loss(self, ids: torch.Tensor, labels: torch.Tensor, at: int = 0) -> torch.Tensor:
        return self.loss_logits(ids, labels, at)[0]

    def loss_logits(self, ids: torch.Tensor, labels: torch.Tensor, at: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        """The loss of training step ``at`` and its logits: the cross-entropy of the target and end
        tokens; with progressive_loss alpha, (1 - alpha) x that of the full pass + alpha x that of
        the progressive pass drawn for (data seed, at) (alpha 1: its logits, no full pass)."""
        alpha = self.settings.progressive_loss
        with self.autocast():
            logits = self.forward(ids) if alpha < 1 else None
            if alpha > 0:
                frozen, iterations = progressive_draw(self.data_seed, at, int(self.settings.iterations))
                partial = self.model.forward_progressive(ids, frozen, iterations)
        if not alpha:
            return cross_entropy(logits, labels), logits
        if logits is None:
            return cross_entropy(partial, labels), partial
        return (1 - alpha) * cross_entropy(logits, labels) + alpha * cross_entropy(partial, labels), logits

    def step(self, ids: torch.Tensor, labels: torch.Tensor, at: int = 0) -> torch.Tensor:
        """Optimisation step ``at``; returns the (detached) loss without synchronising."""
        return self.step_logits(ids, labels, at)[0]

    def step_logits(self, ids: torch.Tensor, labels: torch.Tensor, at: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        """Optimisation step ``at``; returns the (detached) loss and logits without synchronising."""
        loss, logits = self.loss_logits(ids, labels, at)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.params, self.settings.grad_clip)
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        return loss.detach(), logits.detach()


def cross_entropy(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy (in fp32) of the positions whose label is not IGNORE."""
    return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=IGNORE)


# -- files -------------------------------------------------------------------------------


def atomic_write(path: Path, text: str) -> None:
    """Replace path with text through path.tmp (created exclusively, never through a link, removed if the write fails)."""
    atomic_write_text(path, text)


# -- one run ---------------------------------------------------------------------------


class EvalSet:
    """Records of one side with what decoding reads (the layout's prompts: with the empty tape
    in empty-tape mode) and their answers' lengths, ready to decode."""

    def __init__(self, records: Sequence[dict], tokenizer: Tokenizer, layout: Layout = Layout()) -> None:
        self.records = list(records)
        self.max_new = [len(r["target"].split()) for r in self.records]
        self.prompts = [layout.prompt(tokenizer, r["input"], m) for r, m in zip(self.records, self.max_new)]


class Run:
    """Shared state of a run: data, tokenizer, settings, device, output folder."""

    def __init__(
        self,
        data: SplitData,
        settings: TrainSettings,
        device: torch.device,
        out: Path | None,
        progress: bool,
        callback: Callable[[dict[str, Any]], None] | None,
        heartbeat: Heartbeat | None = None,
    ) -> None:
        self.data = data
        self.settings = settings
        self.device = device
        self.out = out
        self.progress = progress
        self.callback = callback
        self.heartbeat = heartbeat
        self.identity: dict[str, Any] | None = None  # the run's (gengap.baselines.run_identity), set with the run directory
        self.legacy_checkpoints = False  # checkpoints without an identity are accepted when run.json vouched for them
        self.stream = stream_plan(settings)
        self.probe = [r for seed in settings.seeds for r in self.stream.probe(self.seeds(seed)[1])] if self.stream else []
        seen = [*(r for part in data.parts().values() for r in part), *self.probe]
        self.layout = layout = settings.layout
        self.tokenizer = Tokenizer.build((r[key] for r in seen for key in ("input", "target")), blank=layout.needs_blank)
        self.max_len = max(sequence_length(r, layout) for r in seen)
        # what runs: compiled or not, bf16 autocast or fp32 (a recurrent model is neither compiled nor autocast)
        self.execution = execution_of(settings.arch, settings.compile, settings.precision, device.type)
        self.compile = self.execution.compiled
        if settings.compile and self.execution.compile_note:
            cuda.warn(f"gengap: --compile does not apply to {settings.arch}: {self.execution.compile_note}; it trains uncompiled (results.json says so)")
        self.eval_batch_size = int(settings.eval_batch_size)  # halved for good when CUDA runs out of memory decoding
        self.eval_backoffs: list[dict[str, int]] = []
        # the train part as trained on: with label noise, a seeded share of its targets is wrong
        self.corruption = corrupt(data.train, settings.label_noise, settings.noise_seed) if self.stream is None else None
        trained = self.corruption.records if self.corruption is not None else []
        self.train = EncodedTrain(trained, self.tokenizer, device, layout) if self.stream is None else None
        self.exclusion = Exclusion.from_split(data, data.name) if self.stream is not None else None
        self.buckets = make_buckets([data.validation, data.test])
        self.length_shares = length_shares(trained or self.probe)  # the weights of the train_lengths ID figure
        self.final = {
            "id": EvalSet(subset(data.validation, settings.eval_limit), self.tokenizer, layout),
            "ood": EvalSet(subset(data.test, settings.eval_limit), self.tokenizer, layout),
        }
        self.periodic = {  # select best: the selection reads the validation records the final evaluation scores
            "id": self.final["id"] if settings.select == "best" else EvalSet(subset(data.validation, settings.eval_examples), self.tokenizer, layout),
            "ood": EvalSet(subset(data.test, settings.eval_examples), self.tokenizer, layout),
        }
        self.train_sets: dict[str, EvalSet] = {}  # train exact match, on a fixed subset of the targets trained on
        if trained:
            self.periodic["train"] = self.train_sets["train"] = EvalSet(subset(trained, settings.eval_examples), self.tokenizer, layout)
        if self.corruption is not None and self.corruption.corrupted:
            corrupted = set(self.corruption.corrupted)
            wrong = [trained[i] for i in self.corruption.corrupted]
            self.train_sets["clean"] = EvalSet(subset([r for i, r in enumerate(trained) if i not in corrupted], settings.eval_examples), self.tokenizer, layout)
            self.train_sets["corrupted"] = EvalSet(subset(wrong, settings.eval_examples), self.tokenizer, layout)
            self.train_sets["corrupted_true"] = EvalSet(subset([{**r, "target": r["true_target"]} for r in wrong], settings.eval_examples), self.tokenizer, layout)

    @property
    def batch_size(self) -> int:
        """Records per training step: the whole train part with full_batch."""
        if self.settings.full_batch and self.train is not None:
            return self.train.size
        return int(self.settings.batch_size)

    def seeds(self, seed: int) -> tuple[int, int]:
        """(init seed, data seed) of a run seed: derived (streams init and data) unless fixed by the settings."""
        s = self.settings
        return (s.init_seed if s.init_seed is not None else init_seed_of(seed), s.data_seed if s.data_seed is not None else data_seed_of(seed))

    def source(self, data_seed: int) -> "FixedSource | StreamSource":
        """The training batches of one seed: the train part, or the stream seeded by the data seed."""
        if self.stream is None:
            assert self.train is not None
            return FixedSource(self.train, self.batch_size, data_seed, [r["input"] for r in self.corruption.records] if self.corruption else [])
        assert self.exclusion is not None
        return StreamSource(self.stream, data_seed, self.exclusion, self.encode, self.settings.batch_size)

    def encode(self, records: Sequence[Mapping[str, Any]]) -> tuple[torch.Tensor, torch.Tensor, int]:
        """ids, labels and token count of stream records (BaselineError for one longer than the model allows)."""
        longest = max(sequence_length(r, self.layout) for r in records)
        if longest > self.max_len:
            record = next(r for r in records if sequence_length(r, self.layout) == longest)
            raise BaselineError(f"a stream record has {longest} tokens in the run's layout, more than the "
                                f"{self.max_len} the model was sized for (from the config and block 0 of each level): {record['id']}")
        encoded = EncodedTrain(records, self.tokenizer, self.device, self.layout)
        return encoded.batch(np.arange(len(records)))

    def new_model(self, init_seed: int) -> SequenceModel:
        torch.manual_seed(init_seed)
        model = build(self.settings.spec, len(self.tokenizer), self.max_len, self.tokenizer.pad_id, self.tokenizer.sep_id, self.tokenizer.tokens)
        return model.to(self.device)

    def evaluate(self, model: SequenceModel, side: EvalSet, mistakes: int, iterations: int | None = None) -> dict[str, Any]:
        """Scores of decoding one side in the run's layout (greedy, or the empty tape's one pass;
        a looped model with ``iterations``, default its training count). When CUDA runs out of
        memory the evaluation batch is halved, for the rest of the run, and the side decoded
        again (gengap.baselines.cuda.with_oom_backoff; each halving is recorded and printed)."""
        model.set_eval_iterations(iterations if iterations is not None else self.settings.iterations)
        s = self.settings

        def decode(batch_size: int) -> list[list[int]]:
            if self.layout.empty_tape:
                return tape_decode(model, side.prompts, side.max_new, self.tokenizer.pad_id, batch_size=batch_size,
                                   device=self.device, precision=s.precision)
            return greedy_decode(
                model, side.prompts, side.max_new, self.tokenizer.end_id, self.tokenizer.pad_id,
                batch_size=batch_size, use_cache=s.kv_cache, device=self.device, precision=s.precision,
            )

        def backoff(old: int, new: int) -> None:
            self.eval_backoffs.append({"from": old, "to": new, "examples": len(side.records)})
            cuda.warn(cuda.backoff_message(f"{len(side.records):,} examples of {self.data.name}", old, new))

        outputs, self.eval_batch_size = cuda.with_oom_backoff(decode, self.eval_batch_size, backoff)
        predictions = [self.tokenizer.decode(ids) for ids in outputs]
        scored = score(side.records, predictions, self.buckets, mistakes, outcomes=True)
        scored["train_weighted_exact_match"] = weighted_length_mean(scored["by_length"], self.length_shares)
        return scored

    # metrics.jsonl ---------------------------------------------------------------------

    def metrics_path(self) -> Path | None:
        return self.out / "metrics.jsonl" if self.out else None

    def keep_metrics(self, seed: int, upto: int) -> None:
        """Drop the lines of seed after step upto (left by an interrupted run) and a torn last line."""
        path = self.metrics_path()
        if path is not None:
            run_files.keep_metrics(path, seed, upto)

    def append_metrics(self, row: Mapping[str, Any]) -> None:
        path = self.metrics_path()
        if path is not None:
            run_files.append_line(path, run_files.strict_json(row))

    # one seed --------------------------------------------------------------------------

    def run_seed(self, seed: int, resume: bool, model: SequenceModel | None = None) -> dict[str, Any]:
        """Train and evaluate one seed (model: train this one instead of a fresh one, for benchmarks)."""
        s = self.settings
        init_seed, data_seed = self.seeds(seed)
        folder = self.out / f"seed-{seed}" if self.out else None
        if folder is not None:
            run_files.make_folder(folder)
            if resume and (folder / "result.json").exists():
                return self.finished(folder / "result.json", seed)
        model = model if model is not None else self.new_model(init_seed)
        trainer = Trainer(model, self.train, s, self.device, self.compile, data_seed)
        source = self.source(data_seed)
        path = folder / "checkpoint.pt" if folder else None
        if resume and path is not None and path.exists():
            progress = checkpoints.restore(path, model, trainer.optimizer, trainer.scheduler, self.device, lambda found: self.check_run(found, path))
            source.load_state(progress.data_state)
        else:
            progress = Progress(loss_sum=torch.zeros((), device=self.device))
        self.keep_metrics(seed, progress.step)
        from tqdm import tqdm

        label = s.arch if s.arch != "transformer" else s.pos
        bar = tqdm(
            total=s.steps, initial=progress.step, desc=f"{self.data.name} {label} seed {seed}", unit="step",
            file=sys.stderr, disable=not self.progress, dynamic_ncols=True,
        )
        clock = _Clock()
        stop = stop_step(progress.history, s.until_id, s.until_extra, s.steps, s.until_over)  # the learned rule's, from the history: resumable
        stopped = progress.step >= stop or diverged_at(progress.history) is not None  # a resumed run that had stopped
        status = SeedStatus(f"train {self.data.name} {label} seed {seed}", progress.step, stop)
        with bar, self.heartbeat(status.describe) if self.heartbeat is not None else nullcontext():
            for step in range(progress.step + 1, s.steps + 1):
                if stopped:
                    break
                ids, labels, count = source.batch(step)
                if source.needs_logits:
                    loss, logits = trainer.step_logits(ids, labels, step)
                    source.observe(step, logits, labels)
                else:
                    loss = trainer.step(ids, labels, step)
                progress.advance(step, loss, count)
                clock.tokens += count
                bar.update(1)
                status.step = step
                row = None
                if step % s.eval_every == 0 or step == s.steps or step == stop:
                    cuda.synchronize(self.device)
                    progress.train_seconds += clock.lap()
                    row = self.periodic_row(model, trainer, progress, seed, clock.rate(), source.metrics())
                    bar.set_postfix(postfix(row))
                    clock.restart(window=True)  # evaluation time is not training time
                    stop = stop_step(progress.history, s.until_id, s.until_extra, s.steps, s.until_over)
                    stopped = step >= stop or row["loss"] is None
                    if s.select == "best" and selected_row(progress.history, s.until_over) is row:
                        progress.selected = {"step": step, "model": {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}}
                    status.row, status.stop = row, stop
                saved = path is not None and (step % s.checkpoint_every == 0 or step == s.steps or stopped)
                if saved:
                    if row is None:
                        progress.train_seconds += clock.lap()
                    progress.data_state = source.state()
                    checkpoints.save(path, seed, model, trainer.optimizer, trainer.scheduler, progress, self.identity)
                    clock.restart()
                if self.callback is not None:
                    self.callback({"seed": seed, "step": step, "checkpoint": saved, "metrics": row})
        history, tokens, train_seconds = progress.history, progress.tokens, progress.train_seconds
        learned = learned_at(history, s.until_id, s.until_over)
        selection = self.select(model, progress) if s.select == "best" else {}
        by_iterations = {k: {side: self.evaluate(model, evals, s.mistakes, k) for side, evals in self.final.items()} for k in s.test_iterations}
        scores = by_iterations[s.test_iterations[0]]
        result = {
            "seed": seed,
            "init_seed": init_seed,
            "data_seed": data_seed,
            **seed_summary(scores["id"], scores["ood"]),
            "id_n": scores["id"]["n"],
            "ood_n": scores["ood"]["n"],
            "by_difficulty": {side: scores[side]["by_difficulty"] for side in scores},
            "by_length_detail": {side: scores[side]["by_length"] for side in scores},
            "mistakes": {side: scores[side]["mistakes"] for side in scores},
            "final_loss": history[-1]["loss"] if history else None,
            "tokens_per_s": tokens / train_seconds if train_seconds > 0 else 0.0,
            "train_seconds": train_seconds,
            "train_tokens": tokens,
            "steps": s.steps,
            "stopped_at": progress.step,
            "learned_at": learned,  # the step the --until-id rule was first met (None: never, or no rule)
            "converged": learned is not None if s.until_id is not None else None,  # met the rule
            "diverged_at": diverged_at(history),
            **reach_steps(history, s.reach),
            "id_train_weighted_exact_match": scores["id"]["train_weighted_exact_match"],
            "select": s.select,
            **selection,
            "outcomes": {side: scores[side]["outcomes"] for side in scores},
            "outcomes_sha256": {side: scores[side]["outcomes_sha256"] for side in scores},
        }
        if self.train_sets:
            train = {name: self.evaluate(model, evals, 0) for name, evals in self.train_sets.items()}
            result["train_exact_match"] = train["train"]["exact_match"]
            result["train_token_accuracy"] = train["train"]["token_accuracy"]
            if self.corruption is not None and self.corruption.corrupted:
                result["label_noise"] = {
                    **self.corruption.describe(s.label_noise, s.noise_seed),
                    "train_exact_match": {"clean": train["clean"]["exact_match"], "corrupted_as_trained": train["corrupted"]["exact_match"],
                                          "corrupted_true_answer": train["corrupted_true"]["exact_match"]},
                }
        if s.arch == "looped":
            result["by_iterations"] = {str(k): iteration_summary(v["id"], v["ood"]) for k, v in by_iterations.items()}
        result["training_data"] = source.training_data(progress.step)
        summary = source.summary()
        if summary is not None:
            key = "mean_level" if self.stream is not None and self.stream.single is not None else "mean_levels"
            means = [[row["step"], row[key]] for row in history if row.get(key) is not None]
            result["curriculum"] = {**summary, "mean_levels": means}
        if folder is not None:
            atomic_write(folder / "result.json", run_files.strict_json({**result, KEY: self.identity}, indent=1) + "\n")
        return result

    def select(self, model: SequenceModel, progress: Progress) -> dict[str, Any]:
        """Load the selected checkpoint's weights into model (select best); its step and ID figure.
        The history decides the row; the weights kept with it (in memory and in every checkpoint)
        must be of that row's step."""
        row = selected_row(progress.history, self.settings.until_over)
        chosen = progress.selected
        if row is None or chosen is None:
            return {"selected_step": None, "selected_id": None}
        if int(chosen["step"]) != int(row["step"]):
            raise RunFileError(f"the kept checkpoint is of step {chosen['step']}, but the history selects step {row['step']}")
        model.load_state_dict(chosen["model"])
        return {"selected_step": int(row["step"]), "selected_id": id_figure(row, self.settings.until_over)}

    def check_run(self, found: Any, path: Path) -> None:
        """Refuse a checkpoint or seed result of another run (see gengap.baselines.run_identity)."""
        assert self.identity is not None
        if found is None and self.legacy_checkpoints and path.name == "checkpoint.pt":
            return  # made before checkpoints carried an identity; run.json matched
        check_identity(found, self.identity, default_settings(), str(path))

    def check_seed_files(self, seed: int) -> None:
        """Refuse (writing nothing) a seed folder that is a link, or a result or checkpoint of another run in it."""
        assert self.out is not None
        folder = self.out / f"seed-{seed}"
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            raise BaselineError(f"{folder} is a symbolic link or not a directory: gengap never writes through one; remove it")
        if (folder / "result.json").exists():
            self.finished(folder / "result.json", seed)
        elif (folder / "checkpoint.pt").exists():
            self.check_run(checkpoints.read_checkpoint(folder / "checkpoint.pt").get(KEY), folder / "checkpoint.pt")

    def finished(self, path: Path, seed: int) -> dict[str, Any]:
        """The result of a seed finished earlier, once it is known to be of this run and seed."""
        try:
            result = read_json(path)
        except ReadError as err:
            raise RunFileError(f"cannot read a finished seed's result: {err}") from None
        if not isinstance(result, dict) or not all(key in result for key in ("id_exact_match", "ood_exact_match", "gap", "tokens_per_s")):
            raise RunFileError(f"{path} is not the result of a seed")
        self.check_run(result.pop(KEY, None), path)
        if result.get("seed") != seed:
            raise BaselineError(f"{path} is the result of seed {result.get('seed')!r}, not {seed}; cannot resume")
        return result

    def periodic_row(self, model: SequenceModel, trainer: Trainer, progress: Progress, seed: int, rate: float, extra: Mapping[str, Any]) -> dict[str, Any]:
        """Evaluate the periodic subsets; append the row to the history and metrics.jsonl and
        start a new loss window."""
        scores = {side: self.evaluate(model, evals, 0) for side, evals in self.periodic.items()}
        row = {
            "seed": seed,
            "step": progress.step,
            "loss": finite_or_none(float(progress.loss_sum) / max(progress.loss_count, 1)),  # None: the loss diverged
            "lr": trainer.scheduler.get_last_lr()[0],
            "id_exact_match": scores["id"]["exact_match"],
            "ood_exact_match": scores["ood"]["exact_match"],
            "id_token_accuracy": scores["id"]["token_accuracy"],
            "ood_token_accuracy": scores["ood"]["token_accuracy"],
            "id_length_mean_exact_match": scores["id"]["length_mean_exact_match"],
            "ood_length_mean_exact_match": scores["ood"]["length_mean_exact_match"],
            "id_train_weighted_exact_match": scores["id"]["train_weighted_exact_match"],
            **({"train_exact_match": scores["train"]["exact_match"], "train_token_accuracy": scores["train"]["token_accuracy"]}
               if "train" in scores else {}),
            "tokens_per_s": rate,
            "train_seconds": progress.train_seconds,
            **extra,
        }
        for side in ("id", "ood"):  # traced records: answer and trace exact match apart
            for figure in ("answer_exact_match", "trace_exact_match"):
                if figure in scores[side]:
                    row[f"{side}_{figure}"] = scores[side][figure]
        progress.loss_sum.zero_()
        progress.loss_count = 0
        progress.history.append(row)
        self.append_metrics(row)
        return row


def reach_steps(history: Sequence[Mapping[str, Any]], threshold: float) -> dict[str, Any]:
    """The first evaluated steps at which train and validation (ID) exact match reach threshold
    (None when never), and the grokking delay: validation's step over train's (None unless both)."""
    def first(key: str) -> int | None:
        return next((int(row["step"]) for row in history if row.get(key) is not None and row[key] >= threshold), None)

    train, validation = first("train_exact_match"), first("id_exact_match")
    delay = validation / train if train and validation is not None else None
    return {"first_step": {"threshold": threshold, "train": train, "id": validation}, "grokking_delay": delay}


def diverged_at(history: Sequence[Mapping[str, Any]]) -> int | None:
    """The first evaluated step whose mean training loss was not a finite number (None when none was)."""
    return next((int(row["step"]) for row in history if row.get("loss", 0.0) is None), None)


def finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


class _Clock:
    """Training time between marks, and tokens and time of the window since the last evaluation."""

    def __init__(self) -> None:
        self.mark = time.perf_counter()
        self.tokens = 0
        self.seconds = 0.0

    def lap(self) -> float:
        """Seconds since the last mark (added to the window); the mark moves to now."""
        now = time.perf_counter()
        elapsed, self.mark = now - self.mark, now
        self.seconds += elapsed
        return elapsed

    def rate(self) -> float:
        """Tokens per second of the window."""
        return self.tokens / max(self.seconds, 1e-9)

    def restart(self, window: bool = False) -> None:
        """Move the mark to now (time since the last lap is not counted); window: also empty the window."""
        self.mark = time.perf_counter()
        if window:
            self.tokens, self.seconds = 0, 0.0


# -- the whole job ---------------------------------------------------------------------


def _run_record(data: SplitData, settings: TrainSettings) -> dict[str, Any]:
    return {"format": RUN_FORMAT, "config": data.name, "source": data.source, "data_fingerprint": data.fingerprint(), "settings": settings.to_json()}


def default_settings() -> dict[str, Any]:
    """Resolved default settings, for settings added after a run was made."""
    return TrainSettings().resolve().to_json()


def check_out(out: Path, resume: bool, record: Mapping[str, Any], tokenizer: Tokenizer) -> bool:
    """Check that the run directory is new or empty, or on resume that its run.json and
    tokenizer.json are of the same run (writing nothing); True when a run.json of the same run
    was found (it vouches for checkpoints older than run identities)."""
    run_file = out / "run.json"
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise BaselineError(f"{out} exists and is not a directory")
    vouched = False
    if out.exists() and any(out.iterdir()):
        if not resume:
            raise BaselineError(f"{out} is not empty: use --resume to continue that run, or another directory")
        if run_file.exists():
            old = run_files.read_object(run_file, ("config", "data_fingerprint", "settings"))
            if old.get("data_fingerprint") != record["data_fingerprint"] or old.get("config") != record["config"]:
                raise BaselineError(f"{out} was trained on other data (config {old.get('config')!r}); cannot resume")
            changed = settings_changes(old["settings"], record["settings"], default_settings())
            if changed:
                raise BaselineError(f"cannot resume {out} with different settings: {', '.join(changed)}")
            vouched = True
        if (out / "tokenizer.json").exists() and Tokenizer.load(out / "tokenizer.json") != tokenizer:
            raise BaselineError(f"{out}/tokenizer.json does not match the data's vocabulary")
    return vouched


def prepare_out(out: Path, record: Mapping[str, Any], tokenizer: Tokenizer) -> None:
    """Create the run directory (checked by check_out) and write run.json and tokenizer.json."""
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / "run.json", json.dumps(record, indent=1) + "\n")
    tokenizer.save(out / "tokenizer.json")


def sequence_length(record: Mapping[str, Any], layout: Layout = Layout()) -> int:
    """Tokens of a record's sequence in the layout (default: ``input <sep> target <end>``)."""
    return layout.length(len(record["input"].split()), len(record["target"].split()))


def stream_plan(settings: TrainSettings) -> StreamPlan | None:
    if settings.stream is None:
        return None
    return StreamPlan.from_settings(settings.stream, settings.stream_params, settings.level, settings.curriculum, settings.sizes)


def _length_range(records: Sequence[Mapping[str, Any]]) -> list[int]:
    lengths = [input_length(r) for r in records]
    return [min(lengths), max(lengths)]


def train_and_evaluate(
    source: Any,
    config: str | None = None,
    *,
    settings: TrainSettings | None = None,
    out: str | Path | None = None,
    resume: bool = False,
    progress: bool | None = None,
    callback: Callable[[dict[str, Any]], None] | None = None,
    plots: bool = True,
    heartbeat: Heartbeat | None = None,
    **overrides: Any,
) -> dict[str, Any]:
    """Train and evaluate one config over the given seeds; returns (and writes) the results.

    source: a release or split directory, a ``gengap.splits.SplitResult`` or a mapping of parts;
    config: the release config (or the name of an in-memory split). Settings come from
    ``settings`` and keyword overrides (fields of :class:`TrainSettings`). With ``out`` the
    run directory is written (see the module doc), without it nothing is written and
    nothing can be resumed. ``callback(event)`` is called after every step with
    ``{"seed", "step", "checkpoint": saved?, "metrics": row or None}``; an exception it
    raises (e.g. KeyboardInterrupt) stops the run as a kill would. ``heartbeat(describe)``, a
    context manager around each seed's training (the gengap CLI gives gengap.progress.Ticker),
    may call ``describe()`` from another thread for a line on where the seed is
    (gengap.baselines.train_progress); ``progress`` (default: stderr is a terminal) draws tqdm bars.
    """
    chosen = make_settings(settings, overrides).resolve()
    data, sampled = with_length_test(load_split(source, config), chosen)
    device = pick_device(chosen.device)
    if resume and out is None:
        raise BaselineError("resume needs a run directory")
    if progress is None:
        progress = sys.stderr.isatty()
    out_path = Path(out) if out is not None else None
    placed = placement_problem(out_path, [source] if isinstance(source, (str, Path)) else []) if out_path is not None else None
    if placed is not None:  # never inside the release trained on, nor any release
        raise BaselineError(placed)
    threads = torch.get_num_threads()
    if device.type == "cpu":
        torch.set_num_threads(1)
    try:
        with cuda.deterministic_mode(chosen.deterministic, device):
            return _train(data, chosen, device, out_path, resume, progress, callback, plots, heartbeat, sampled)
    finally:
        torch.set_num_threads(threads)


def _train(data: SplitData, chosen: TrainSettings, device: torch.device, out_path: Path | None, resume: bool, progress: bool,
           callback: Callable[[dict[str, Any]], None] | None, plots: bool, heartbeat: Heartbeat | None,
           sampled: LengthTest | None = None) -> dict[str, Any]:
    """train_and_evaluate's work once the settings, data and device are known."""
    run = Run(data, chosen, device, out_path, progress, callback, heartbeat)
    check_model_size(chosen.spec, len(run.tokenizer), device)
    if out_path is not None:
        record = _run_record(data, chosen)
        run.legacy_checkpoints = check_out(out_path, resume, record, run.tokenizer)
        run.identity = run_identity(record, run.tokenizer.tokens)
        if resume:  # every seed's files (of the seeds asked for and any other there), before anything is written
            for seed in sorted({*chosen.seeds, *run_files.seed_folders(out_path)}):
                run.check_seed_files(seed)
        prepare_out(out_path, record, run.tokenizer)
    per_seed = [run.run_seed(seed, resume) for seed in chosen.seeds]
    with torch.random.fork_rng(devices=[]):
        model = build(chosen.spec, len(run.tokenizer), run.max_len, run.tokenizer.pad_id, run.tokenizer.sep_id, run.tokenizer.tokens)
    results = {
        "format": RESULTS_FORMAT,
        "config": data.name,
        "source": data.source,
        "arch": chosen.arch,
        "pos": chosen.pos,
        "output_mode": chosen.output_mode,
        "computation_steps": chosen.computation_steps,
        "preset": chosen.preset,
        "until_id": chosen.until_id,
        "steps": chosen.steps,
        "batch_size": run.batch_size,
        "seeds": list(chosen.seeds),
        "device": device_name(device),
        "compiled": run.execution.compiled,  # what ran (gengap.baselines.execution), not what was asked
        "precision": run.execution.precision,
        "execution": {**run.execution.to_json(), "deterministic": chosen.deterministic,
                      "eval_batch_size": {"requested": chosen.eval_batch_size, "used": run.eval_batch_size},
                      "eval_oom_backoffs": list(run.eval_backoffs)},
        "model": model.describe(),
        "settings": chosen.to_json(),
        "data": {
            "sizes": {part: len(records) for part, records in data.parts().items()},
            "evaluated": {side: len(run.final[side].records) for side in run.final},
            "vocab_size": len(run.tokenizer),
            "max_len": run.max_len,
            "input_length": {**{part: _length_range(records) for part, records in data.parts().items()},
                             **({"train": _length_range(run.probe)} if run.stream else {})},
            "fingerprint": data.fingerprint(),
        },
        "test_data": sampled.describe() | {"kind": "sampled per length"} if sampled is not None else {"kind": "the config's test part"},
        "training_data": {"kind": "stream" if run.stream is not None else "fixed set",
                          "distinct_inputs": [r["training_data"]["distinct_inputs"] for r in per_seed]},
        "divergence": dict(data.divergence),
        "tokens_per_s": sum(r["tokens_per_s"] for r in per_seed) / len(per_seed),
        "per_seed": per_seed,
        "diverged": [r["seed"] for r in per_seed if r.get("diverged_at") is not None],  # seeds whose loss became NaN or infinite
        "aggregate": aggregate(per_seed),
        "plots": [],
    }
    if run.stream is not None:
        results["stream"] = {**run.stream.describe(), "excluded_inputs": len(run.exclusion or ()),
                             "exclusion_bytes": run.exclusion.nbytes if run.exclusion is not None else 0}
        results["warnings"] = reach_warnings(run.probe, data.test)
    if out_path is not None:
        if plots:
            from gengap.baselines.plots import plot_curriculum, plot_run

            made = [plot_run(results, out_path / "plots" / "accuracy_by_length.png")]
            if run.stream is not None:
                made.append(plot_curriculum(results, out_path / "plots" / "curriculum.png"))
            results["plots"] = [str(Path(m).relative_to(out_path)) for m in made if m]
        atomic_write(out_path / "results.json", run_files.strict_json(results, indent=1) + "\n")
    return results
