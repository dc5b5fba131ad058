"""The settings of a baseline run, without torch: presets, :class:`TrainSettings` and their checks.

``TrainSettings.resolve()`` fills in the preset's and derived defaults and raises BaselineError
(one line) for any setting the run cannot take, so ``gengap train`` and sweep files refuse bad
values before torch is imported. The training loop is gengap.baselines.training. This module
imports neither torch nor gengap.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Mapping

from gengap.baselines.errors import BaselineError
from gengap.baselines.layout import Layout
from gengap.baselines.numbers import check_numbers
from gengap.baselines.spec import ARCHITECTURES, ModelShape, ModelSpec, positions_of

PRECISIONS = ("auto", "fp32", "bf16")  # auto: bf16 autocast on CUDA, fp32 elsewhere (gengap.baselines.decoding)


@dataclass(frozen=True)
class Preset:
    """Sizes and optimiser of a preset; a run's setting left at None takes the preset's."""

    layers: int
    d_model: int
    heads: int
    batch_size: int
    lr: float
    steps: int
    iterations: int = 1  # the looped model's training iterations
    weight_decay: float = 0.1  # decoupled (AdamW) decay of the matrices; 0: Adam
    schedule: str = "cosine"
    warmup: int | None = None  # None: min(steps // 10, 1000)
    adam_beta2: float = 0.95
    stack_size: int = 0  # stack_rnn: cells of the stack (0: unbounded, it grows with the input)


# Deletang et al. 2023 (and google-deepmind/neural_networks_chomsky_hierarchy): Adam without weight
# decay at a constant learning rate from this grid, batch 128, gradient clip 1; the recurrent models
# 256 units, the Stack-RNN's stack 30 cells of 8 (the repo's StackRNNCore default stack_size); the
# transformer encoder 5 layers, d_model 64, 8 heads; 10,000 steps as the repo's example (the paper: 10^6).
DELETANG_LEARNING_RATES = (1e-4, 3e-4, 5e-4)
DELETANG_STACK_SIZE = 30
_DELETANG = dict(batch_size=128, lr=3e-4, steps=10000, weight_decay=0.0, schedule="constant", warmup=0, adam_beta2=0.999)


PRESETS: dict[str, Preset] = {  # the transformer's
    "tiny": Preset(layers=2, d_model=64, heads=4, batch_size=64, lr=3e-3, steps=2000),  # CPU tests
    "small": Preset(layers=4, d_model=256, heads=4, batch_size=128, lr=1e-3, steps=10000),
    "base": Preset(layers=8, d_model=512, heads=8, batch_size=128, lr=5e-4, steps=20000),  # GPU
    "deletang": Preset(layers=5, d_model=64, heads=8, **_DELETANG),  # the paper's transformer (encoder and causal decoder alike)
}
# rnn, lstm, stack_rnn, tape_rnn: one layer (Deletang et al. use 256 units and batch 128)
RECURRENT_PRESETS: dict[str, Preset] = {
    "tiny": Preset(layers=1, d_model=128, heads=1, batch_size=64, lr=3e-3, steps=2000),
    "small": Preset(layers=1, d_model=256, heads=1, batch_size=128, lr=1e-3, steps=10000),
    "base": Preset(layers=1, d_model=256, heads=1, batch_size=128, lr=1e-3, steps=50000),
    "deletang": Preset(layers=1, d_model=256, heads=1, stack_size=DELETANG_STACK_SIZE, **_DELETANG),
}
# looped: one weight-tied layer iterated in depth
LOOPED_PRESETS: dict[str, Preset] = {
    "tiny": Preset(layers=1, d_model=64, heads=4, batch_size=64, lr=3e-3, steps=2000, iterations=8),
    "small": Preset(layers=1, d_model=256, heads=4, batch_size=128, lr=1e-3, steps=10000, iterations=8),
    "base": Preset(layers=2, d_model=512, heads=8, batch_size=128, lr=5e-4, steps=20000, iterations=8),
    "deletang": Preset(layers=1, d_model=64, heads=8, iterations=5, **_DELETANG),  # not in the paper: its 5 layers as 5 iterations
}


def preset_of(arch: str, name: str) -> Preset:
    """The preset ``name`` of an architecture (BaselineError for an unknown name)."""
    if name not in PRESETS:
        raise BaselineError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
    if arch in ("transformer", "encoder"):
        return PRESETS[name]
    return (LOOPED_PRESETS if arch == "looped" else RECURRENT_PRESETS)[name]


SCHEDULES = ("cosine", "constant")
UNTIL_OVER = ("lengths", "records", "train_lengths")  # the ID figure the --until-id rule and --select best read (gengap.baselines.learned.id_figure)
SELECT = ("last", "best")  # the checkpoint scored at the end: the last one, or the best by the ID figure on the whole validation part


@dataclass(frozen=True)
class TrainSettings:
    """Everything that configures a run; None means the preset's (or a derived) default."""

    arch: str = "transformer"  # gengap.baselines.architectures.ARCHITECTURES
    pos: str | None = None  # default: rope for the transformer and looped, none for the recurrent models
    preset: str = "small"
    layers: int | None = None
    d_model: int | None = None
    heads: int | None = None
    memory_cell: int = 8  # width of a stack or tape cell (stack_rnn, tape_rnn)
    stack_size: int | None = None  # stack_rnn: cells of the stack, 0 unbounded (default: the preset's; deletang 30, else 0)
    iterations: int | None = None  # the looped model's iterations in training (default: the preset's)
    test_iterations: tuple[int, ...] = ()  # the looped model's iterations in the final evaluation, each in turn (default: iterations)
    window: int = 0  # the looped model's attention window (0: the whole causal prefix)
    progressive_loss: float = 0.0  # looped: weight alpha in [0, 1] of the progressive loss (Bansal et al. 2022; gengap.baselines.looped)
    until_id: float | None = None  # the learned rule: periodic ID exact match averaged over input lengths reaches this at two consecutive evaluations (steps: the cap)
    until_extra: float = 0.0  # once the rule is met at step s, train on to step ceil(s * (1 + until_extra)) (capped by steps), then stop
    until_over: str = "lengths"  # the rule's ID figure: lengths (exact match averaged over input lengths, each once), records (over validation records) or train_lengths (per-length exact match weighted by train's length shares)
    select: str = "last"  # the checkpoint the final evaluation scores: last, or best (every evaluation reads the whole validation part; the first step of the highest ID figure wins)
    reach: float = 0.99  # results record the first evaluated step at which train and validation exact match reach this
    schedule: str | None = None  # default: the preset's (cosine; deletang constant). cosine: warmup then cosine decay to min_lr_ratio * lr; constant: warmup then lr
    full_batch: bool = False  # every step trains on the whole train part (batch_size is ignored)
    label_noise: float = 0.0  # share of training targets replaced by wrong answers, in training only (gengap.baselines.label_noise)
    noise_seed: int = 0  # the seed of which targets label noise corrupts (the same for every seed of the run)
    steps: int | None = None
    batch_size: int | None = None
    lr: float | None = None
    warmup: int | None = None  # default: min(steps // 10, 1000)
    min_lr_ratio: float = 0.1
    weight_decay: float | None = None  # default: the preset's (0.1; deletang 0, i.e. Adam)
    adam_beta2: float | None = None  # default: the preset's (0.95; deletang 0.999, Adam's default)
    grad_clip: float = 1.0
    seeds: tuple[int, ...] = (0,)
    init_seed: int | None = None  # same init for every seed when set
    data_seed: int | None = None  # same data order for every seed when set
    eval_every: int | None = None  # default: steps // 10
    eval_examples: int = 512  # validation / test examples decoded at each periodic evaluation
    eval_limit: int | None = None  # cap on the final evaluation (None: every example)
    eval_batch_size: int = 256
    test_per_length: int = 0  # > 0: the test part is this many sequences per input length, sampled from the task's generator (gengap.baselines.length_test)
    test_lengths: tuple[int, ...] = ()  # with test_per_length: (LO, HI), the input lengths (default: the test part's range)
    checkpoint_every: int | None = None  # default: eval_every
    mistakes: int = 20
    device: str = "auto"  # auto, cpu, cuda, cuda:N
    compile: bool | None = None  # default: on CUDA only
    precision: str = "auto"  # auto (bf16 autocast on CUDA, fp32 elsewhere), fp32 or bf16 (autocast, also on the CPU)
    fused: bool | None = None  # fused AdamW; default: on CUDA only
    deterministic: bool = False  # deterministic algorithms, cuDNN and cuBLAS settings for the run (gengap.baselines.cuda)
    kv_cache: bool = True
    stream: str | None = None  # train from a record stream of this task, or of a mixture file (.yaml, .yml, .json), instead of the train part
    stream_params: tuple[tuple[str, str], ...] = ()  # the stream's task parameters, as KEY=VALUE text (applied to every level)
    level: int | None = None  # the stream's level (one level; or use curriculum)
    curriculum: str | None = None  # a curriculum spec over the stream's levels (gengap.generators.curriculum)
    sizes: tuple[tuple[int, int], ...] = ()  # levels 1..k as bands of the task's size knob instead of its levels
    output_mode: str = "autoregressive"  # the layout (gengap.baselines.layout): autoregressive or empty-tape
    computation_steps: int = 0  # c: c x (input length) blank tokens between the input and the output (0..16)

    def resolve(self) -> "TrainSettings":
        """Settings with the preset's and derived defaults filled in; BaselineError if invalid."""
        check_numbers({f.name: getattr(self, f.name) for f in fields(self)})
        if self.arch not in ARCHITECTURES:
            raise BaselineError(f"unknown architecture {self.arch!r}; choose one of {', '.join(ARCHITECTURES)}")
        preset = preset_of(self.arch, self.preset)
        pos = self.pos if self.pos is not None else positions_of(self.arch)[0]
        iterations = self.iterations if self.iterations is not None else preset.iterations
        steps = self.steps if self.steps is not None else preset.steps
        eval_every = self.eval_every if self.eval_every is not None else max(1, steps // 10)
        resolved = replace(
            self,
            pos=pos,
            iterations=iterations,
            test_iterations=tuple(int(k) for k in self.test_iterations) or (iterations,),
            layers=self.layers if self.layers is not None else preset.layers,
            d_model=self.d_model if self.d_model is not None else preset.d_model,
            heads=self.heads if self.heads is not None else preset.heads,
            steps=steps,
            batch_size=self.batch_size if self.batch_size is not None else preset.batch_size,
            lr=self.lr if self.lr is not None else preset.lr,
            warmup=self.warmup if self.warmup is not None else preset.warmup if preset.warmup is not None else min(steps // 10, 1000),
            weight_decay=self.weight_decay if self.weight_decay is not None else preset.weight_decay,
            adam_beta2=self.adam_beta2 if self.adam_beta2 is not None else preset.adam_beta2,
            schedule=self.schedule if self.schedule is not None else preset.schedule,
            stack_size=self.stack_size if self.stack_size is not None else (preset.stack_size if self.arch == "stack_rnn" else 0),
            eval_every=eval_every,
            checkpoint_every=self.checkpoint_every if self.checkpoint_every is not None else eval_every,
            seeds=tuple(int(s) for s in self.seeds),
            stream_params=tuple((str(k), str(v)) for k, v in self.stream_params),
            sizes=tuple((int(lo), int(hi)) for lo, hi in self.sizes),
            test_lengths=tuple(int(n) for n in self.test_lengths),
        )
        resolved.check()
        return resolved

    def check(self) -> None:
        check_numbers({f.name: getattr(self, f.name) for f in fields(self)})
        positive = ("layers", "d_model", "heads", "steps", "batch_size", "eval_every", "eval_examples", "eval_batch_size", "checkpoint_every")
        for name in positive:
            value = getattr(self, name)
            if value is not None and value < 1:
                raise BaselineError(f"{name} must be at least 1, got {value}")
        if self.lr is not None and not self.lr > 0:
            raise BaselineError(f"lr must be positive, got {self.lr}")
        if self.warmup is not None and self.warmup < 0:
            raise BaselineError(f"warmup must be non-negative, got {self.warmup}")
        if not 0 <= self.min_lr_ratio <= 1:
            raise BaselineError(f"min_lr_ratio must be in [0, 1], got {self.min_lr_ratio}")
        if (self.weight_decay is not None and self.weight_decay < 0) or self.grad_clip <= 0:
            raise BaselineError("weight_decay must be >= 0 and grad_clip > 0")
        if self.adam_beta2 is not None and not 0 <= self.adam_beta2 < 1:
            raise BaselineError(f"adam_beta2 must be in [0, 1), got {self.adam_beta2}")
        if self.stack_size is not None and (self.stack_size < 0 or (self.stack_size and self.arch != "stack_rnn")):
            raise BaselineError(f"stack_size applies to stack_rnn only and is non-negative (0: unbounded), got {self.stack_size} for {self.arch}")
        if self.arch == "encoder" and self.output_mode != "empty-tape":
            raise BaselineError("the encoder reads the whole sequence at once: it needs output_mode empty-tape (--output-mode empty-tape)")
        if not self.seeds or len(set(self.seeds)) != len(self.seeds) or min(self.seeds) < 0:
            raise BaselineError(f"seeds must be distinct non-negative integers, got {list(self.seeds)}")
        if self.eval_limit is not None and self.eval_limit < 1:
            raise BaselineError(f"eval_limit must be at least 1, got {self.eval_limit}")
        if self.precision not in PRECISIONS:
            raise BaselineError(f"unknown precision {self.precision!r}; choose one of {', '.join(PRECISIONS)}")
        if self.mistakes < 0:
            raise BaselineError(f"mistakes must be non-negative, got {self.mistakes}")
        if self.until_id is not None and not 0 < self.until_id <= 1:
            raise BaselineError(f"until_id must be in (0, 1], got {self.until_id}")
        if self.until_extra and self.until_id is None:
            raise BaselineError("until_extra needs until_id: the extra steps follow the step the --until-id rule is met at")
        if self.until_over not in UNTIL_OVER:
            raise BaselineError(f"until_over must be one of {', '.join(UNTIL_OVER)}, got {self.until_over!r}")
        if self.select not in SELECT:
            raise BaselineError(f"select must be one of {', '.join(SELECT)}, got {self.select!r}")
        if self.until_over != "lengths" and self.until_id is None and self.select != "best":
            raise BaselineError("until_over needs until_id or select best: it chooses the ID figure the --until-id rule and the selection read")
        if not 0 < self.reach <= 1:
            raise BaselineError(f"reach must be in (0, 1], got {self.reach}")
        if self.schedule is not None and self.schedule not in SCHEDULES:
            raise BaselineError(f"unknown schedule {self.schedule!r}; choose one of {', '.join(SCHEDULES)}")
        if not 0 <= self.label_noise < 1:
            raise BaselineError(f"label_noise must be in [0, 1), got {self.label_noise}")
        if self.noise_seed < 0:
            raise BaselineError(f"noise_seed must be non-negative, got {self.noise_seed}")
        if self.test_lengths and (not self.test_per_length or len(self.test_lengths) != 2 or not 1 <= self.test_lengths[0] <= self.test_lengths[1]):
            raise BaselineError(f"test_lengths must be (LO, HI) with 1 <= LO <= HI, and needs test_per_length, got {list(self.test_lengths)}")
        if self.test_per_length and self.eval_limit is not None:
            raise BaselineError("eval_limit would subsample the per-length test part (test_per_length): drop one of them")
        if self.stream is not None and (self.full_batch or self.label_noise):
            raise BaselineError("full_batch and label_noise apply to a config's train part, not to a stream")
        if any(k < 1 for k in self.test_iterations) or len(set(self.test_iterations)) != len(self.test_iterations):
            raise BaselineError(f"test_iterations must be distinct positive integers, got {list(self.test_iterations)}")
        if self.arch != "looped" and (self.test_iterations not in ((), (self.iterations,)) or self.iterations not in (None, 1)):
            raise BaselineError(f"iterations and test_iterations apply to the looped architecture only, not {self.arch}")
        if self.progressive_loss and self.arch != "looped":
            raise BaselineError(f"progressive_loss applies to the looped architecture only, not {self.arch}")
        if self.layers is not None and self.d_model is not None and self.heads is not None and self.pos is not None:
            self.spec.check()
        if self.stream is None and (self.stream_params or self.level is not None or self.curriculum is not None or self.sizes):
            raise BaselineError("level, curriculum, sizes and stream parameters need a stream (--stream TASK)")
        self.layout.check()

    @property
    def layout(self) -> Layout:
        """The run's sequence layout (gengap.baselines.layout)."""
        return Layout(self.output_mode, self.computation_steps)

    @property
    def shape(self) -> ModelShape:
        assert self.layers and self.d_model and self.heads, "resolve() first"
        return ModelShape(self.layers, self.d_model, self.heads)

    @property
    def spec(self) -> ModelSpec:
        """The model's architecture and sizes (resolved settings only)."""
        assert self.layers and self.d_model and self.heads and self.pos and self.iterations, "resolve() first"
        return ModelSpec(self.arch, self.pos, self.layers, self.d_model, self.heads, self.memory_cell, self.iterations, self.window,
                         self.stack_size or 0)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["seeds"] = list(self.seeds)
        data["test_iterations"] = list(self.test_iterations)
        data["stream_params"] = [list(pair) for pair in self.stream_params]
        data["sizes"] = [list(pair) for pair in self.sizes]
        data["test_lengths"] = list(self.test_lengths)
        return data


def make_settings(settings: TrainSettings | None, overrides: Mapping[str, Any]) -> TrainSettings:
    known = {f.name for f in fields(TrainSettings)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise BaselineError(f"unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    values = dict(overrides)
    for name in ("seeds", "test_iterations", "stream_params", "sizes", "test_lengths"):
        if name in values:
            values[name] = tuple(tuple(v) if isinstance(v, (list, tuple)) else v for v in values[name])
    return replace(settings or TrainSettings(), **values)

