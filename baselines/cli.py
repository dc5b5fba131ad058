"""The ``train``, ``eval`` and ``report`` subcommands, for the gengap CLI to mount.

``add_commands(subparsers)`` adds them to an argparse subparsers object (its parser class is
used); each sets ``func`` to a command function taking the parsed namespace and returning an
exit code. Errors are :class:`gengap.baselines.errors.BaselineError` (a ValueError), which the gengap
CLI reports as one line with exit code 2. This module imports neither torch nor gengap:
torch is imported when ``train`` or ``eval`` runs (``train`` checks its settings and reads its data
first, so that a usage error comes at once).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
from typing import Any

from gengap.baselines.errors import BaselineError
from gengap.baselines.layout import MAX_COMPUTATION_STEPS, OUTPUT_MODES
from gengap.generators.extras import install_hint
from gengap.harnesses.extraction import ANSWER_FORMATS

from gengap.baselines.settings import LOOPED_PRESETS, PRESETS as _PRESETS, RECURRENT_PRESETS, SELECT, UNTIL_OVER, TrainSettings
from gengap.baselines.spec import ARCHITECTURES, POSITIONAL  # noqa: F401

PRESETS = tuple(_PRESETS)


def _distinct_integers(text: str, minimum: int, what: str) -> tuple[int, ...]:
    """'0,1,2' -> (0, 1, 2): distinct comma-separated integers >= minimum (argparse error naming ``what``)."""
    try:
        values = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what} must be comma-separated integers, got {text!r}") from None
    if not values or min(values) < minimum or len(set(values)) != len(values):
        kind = "non-negative" if minimum == 0 else "positive"
        raise argparse.ArgumentTypeError(f"{what} must be distinct {kind} integers, got {text!r}")
    return values


def parse_seeds(text: str) -> tuple[int, ...]:
    """'0,1,2' -> (0, 1, 2); distinct non-negative integers."""
    return _distinct_integers(text, 0, "--seeds")


def parse_counts(text: str) -> tuple[int, ...]:
    """'8,16,32' -> (8, 16, 32); distinct positive integers."""
    return _distinct_integers(text, 1, "--test-iterations")


def parse_share(text: str) -> float:
    """'0.95' -> 0.95: a number in (0, 1]."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1], got {text!r}")
    return value


def preset_values(field: str) -> str:
    """The presets' values of a setting, for its help: ``tiny 64, small 128, base 128`` (the
    transformer's), then where the recurrent models' or the looped model's differ."""
    def listed(presets: Any) -> str:
        return ", ".join(f"{name} {getattr(preset, field):g}" for name, preset in presets.items())

    text = listed(_PRESETS)
    others = [f"; {who}: {listed(presets)}" for who, presets in (("rnn, lstm, stack_rnn, tape_rnn", RECURRENT_PRESETS), ("looped", LOOPED_PRESETS))
              if listed(presets) != text]
    return text + "".join(others)


def parse_sizes(text: str) -> tuple[tuple[int, int], ...]:
    """'1-5,6-10' -> ((1, 5), (6, 10)); each range lo <= hi."""
    try:
        ranges = tuple(tuple(int(x) for x in part.split("-", 1)) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"--sizes must be ranges LO-HI separated by commas, got {text!r}") from None
    if not ranges or any(len(r) != 2 or r[0] > r[1] for r in ranges):
        raise argparse.ArgumentTypeError(f"--sizes must be ranges LO-HI (LO <= HI) separated by commas, got {text!r}")
    return ranges  # type: ignore[return-value]


def parse_range(text: str) -> tuple[int, int]:
    """'41-500' -> (41, 500); 1 <= LO <= HI."""
    try:
        ranges = parse_sizes(text)
    except argparse.ArgumentTypeError:
        ranges = ()
    if len(ranges) != 1 or ranges[0][0] < 1:
        raise argparse.ArgumentTypeError(f"must be one range LO-HI of positive lengths, got {text!r}")
    return ranges[0]


def parse_params(options: list[str]) -> tuple[tuple[str, str], ...]:
    """['k=v', ...] -> (('k', 'v'), ...); BaselineError for an option without '='."""
    pairs = []
    for option in options:
        key, sep, value = option.partition("=")
        if not sep or not key.strip():
            raise BaselineError(f"--param {option!r} is not of the form key=value")
        pairs.append((key.strip(), value.strip()))
    return tuple(pairs)


def add_commands(subparsers: Any) -> None:
    """Add ``train``, ``eval`` and ``report`` to the gengap subcommands."""
    p = subparsers.add_parser("train", help="train a baseline (transformer, RNN, LSTM, stack/tape RNN, looped) on one config; ID vs OOD gap")
    p.add_argument("release", metavar="RELEASE_DIR", nargs="?", help="release directory (data/<config>/*.jsonl) or split directory")
    p.add_argument("--suite", metavar="SUITE.yaml", help="build --config from this suite config in memory instead of reading a release")
    p.add_argument("--config", help="release config (needed when the release has several, and with --suite)")
    p.add_argument("--arch", choices=ARCHITECTURES, default="transformer", help="architecture (default transformer)")
    p.add_argument("--pos", choices=(*POSITIONAL, "none"), help="positional encoding: transformer rope (default), nope, learned, sinusoidal, alibi, randomized, fire, abacus; "
                   "looped rope (default), nope, randomized, fire, abacus; none for the recurrent ones")
    p.add_argument("--preset", choices=PRESETS, help="model size: tiny (CPU-sized), small, base (GPU), deletang (Deletang et al. 2023: "
                   "recurrent 256 units, stack 30 cells, transformer 5 x 64 with 8 heads; Adam without weight decay, constant lr 3e-4, "
                   "batch 128, clip 1); default small (on a CPU, gengap train says so: small's 10,000 steps take about an hour there)")
    p.add_argument("--steps", type=int, help="training steps, the cap with --until-id (default: the preset's: tiny 2,000, small 10,000, "
                                              "base 20,000, deletang 10,000; base 50,000 for rnn, lstm, stack_rnn and tape_rnn)")
    p.add_argument("--until-id", type=float, metavar="EM", help="the learned rule: stop once validation (ID) exact match averaged over input lengths (each length once) reaches EM at two consecutive evaluations (--steps caps the run)")
    p.add_argument("--until-over", choices=UNTIL_OVER, help="with --until-id or --select best: the ID figure they read: lengths (default: "
                   "exact match averaged over input lengths, each once; Deletang et al.), records (over validation records, as CFQ and COGS report) "
                   "or train_lengths (per-length exact match weighted by the train part's length shares)")
    p.add_argument("--select", choices=SELECT, help="the checkpoint the final evaluation scores: last (default) or best (every evaluation "
                   "reads the whole validation part; the first step with the highest ID figure is scored, its step in results.json)")
    p.add_argument("--until-extra", type=float, metavar="F", help="with --until-id: once the rule is met at step s, train on to step ceil(s x (1 + F)), then stop (default 0)")
    p.add_argument("--iterations", type=int, help="looped: iterations of the block in training (default: the preset's, 8)")
    p.add_argument("--test-iterations", type=parse_counts, metavar="K,...", help="looped: iterations in the final evaluation, each in turn, e.g. 8,16,32 (default: --iterations); the first gives the headline figures")
    p.add_argument("--memory-cell", type=int, help="stack_rnn, tape_rnn: width of a memory cell (default 8)")
    p.add_argument("--stack-size", type=int, help="stack_rnn: cells of the stack, 0 unbounded (default: the preset's; deletang 30, else 0)")
    p.add_argument("--progressive-loss", type=float, metavar="A", help="looped: weight A in [0, 1] of the progressive loss (Bansal et al. 2022): per step, n random iterations without gradient, then 1..k-n with gradient from the detached state; loss (1 - A) x full + A x progressive (default 0)")
    p.add_argument("--window", type=int, help="looped: each position attends to itself and the WINDOW - 1 before it (default 0: the whole causal prefix)")
    p.add_argument("--output-mode", choices=OUTPUT_MODES, help="autoregressive (default: input <sep> target <end>, greedy decoding) or "
                   "empty-tape (input <sep> then one blank per target token; every answer token predicted at its blank in one pass, as Deletang et al. 2023)")
    p.add_argument("--computation-steps", type=int, metavar="C", help=f"C x (input length) blank tokens between the input and the output, 0..{MAX_COMPUTATION_STEPS} (default 0)")
    p.add_argument("--seeds", type=parse_seeds, default=(0,), help="comma-separated seeds, e.g. 0,1,2 (default 0)")
    p.add_argument("--batch-size", type=int, help=f"training batch size (default: the preset's: {preset_values('batch_size')})")
    p.add_argument("--lr", type=float, help=f"peak learning rate (default: the preset's: {preset_values('lr')})")
    p.add_argument("--eval-every", type=int, help="steps between evaluations (default steps/10)")
    p.add_argument("--checkpoint-every", type=int, help="steps between checkpoints (default: --eval-every)")
    p.add_argument("--eval-examples", type=int, default=512, help="examples per side decoded at each periodic evaluation (default 512)")
    p.add_argument("--eval-limit", type=int, help="cap on the examples per side of the final evaluation (default: all)")
    p.add_argument("--test-per-length", type=int, metavar="N", help="replace the test part by N sequences per input length sampled from the task's generator "
                   "(deterministic; Deletang et al. score each length, then average; N >= 100 keeps each length's standard error <= 0.05)")
    p.add_argument("--test-lengths", type=parse_range, metavar="LO-HI", help="with --test-per-length: the input lengths (default: the test part's range, e.g. 41-500)")
    p.add_argument("--layers", type=int, help="override the preset's number of layers")
    p.add_argument("--d-model", type=int, help="override the preset's model width")
    p.add_argument("--heads", type=int, help="override the preset's number of attention heads")
    p.add_argument("--warmup", type=int, help="warmup steps (default min(steps/10, 1000))")
    p.add_argument("--weight-decay", type=float, help="AdamW weight decay on matrices (default: the preset's, 0.1; deletang 0, which is Adam)")
    p.add_argument("--adam-beta2", type=float, help="Adam's beta2 (default: the preset's, 0.95; deletang 0.999)")
    p.add_argument("--schedule", choices=("cosine", "constant"), help="learning rate after warmup: cosine decay to 0.1 x lr (default; deletang: constant, no warmup) or constant")
    p.add_argument("--full-batch", action="store_true", default=None, help="every step trains on the whole train part (--batch-size is ignored)")
    p.add_argument("--label-noise", type=float, metavar="XI", help="replace this share of training targets by wrong answers, in training only (default 0)")
    p.add_argument("--noise-seed", type=int, help="seed of which targets --label-noise corrupts (default 0; the same for every --seeds)")
    p.add_argument("--reach", type=float, metavar="EM", help="results record the first step at which train and validation exact match reach EM (default 0.99)")
    p.add_argument("--device", default="auto", help="auto (CUDA when available), cpu, cuda or cuda:N")
    p.add_argument("--compile", action=argparse.BooleanOptionalAction, default=None, help="torch.compile the model (default: on CUDA only; --compile forces it on the CPU too)")
    p.add_argument("--fused", action=argparse.BooleanOptionalAction, default=None, help="fused AdamW (default: on CUDA only; --fused forces it on the CPU too)")
    p.add_argument("--precision", choices=("auto", "fp32", "bf16"), help="auto (default: bf16 autocast on CUDA, fp32 on the CPU), fp32, or bf16 autocast on any device (the recurrent models compute in fp32 whatever is chosen)")
    p.add_argument("--deterministic", action="store_true", default=None, help="deterministic algorithms (torch.use_deterministic_algorithms, cuDNN deterministic, CUBLAS_WORKSPACE_CONFIG=:4096:8): on CUDA the same command gives the same numbers again on the same GPU and software")
    p.add_argument("--out", required=True, metavar="RUN_DIR", help="run directory (results, metrics, checkpoints, plots)")
    p.add_argument("--resume", action="store_true", help="continue an interrupted run in RUN_DIR from its checkpoints")
    p.add_argument("--stream", metavar="TASK|MIXTURE.yaml", help="train on records of TASK, or of the weighted tasks of a mixture file (.yaml, .yml, .json; each task with its own curriculum), generated on the fly (never an input of the config's validation or test side); evaluate on --config")
    p.add_argument("--curriculum", metavar="SPEC", help="with --stream: levels over training, e.g. fixed:3, mixture:1=0.5,2=0.5, step:start=1,end=10,every=500, linear:start=1,end=10,steps=5000, adaptive:start=1,end=10,threshold=0.9,window=50,replay=0.2")
    p.add_argument("--level", type=int, help="with --stream: the task's difficulty level 1..10 (one level throughout)")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="with --stream: set a task parameter at every level (repeatable)")
    p.add_argument("--sizes", type=parse_sizes, metavar="LO-HI,...", help="with --stream: levels 1..k are these ranges of the task's size knob instead of its levels, e.g. 1-5,6-10,11-20")
    p.set_defaults(func=cmd_train, heartbeat=None, run_lock=None)  # the gengap CLI supplies its heartbeat (lines when stderr is not a terminal) and run lock

    p = subparsers.add_parser("eval", help="evaluate a pretrained Hugging Face causal LM (local directory) on one config: ID vs OOD gap")
    p.add_argument("model", metavar="MODEL_DIR", help="local Hugging Face model directory (config, weights, tokenizer)")
    p.add_argument("--release", required=True, metavar="DIR", help="release directory (data/<config>/*.jsonl) or split directory")
    p.add_argument("--config", help="release config (needed when the release has several)")
    p.add_argument("--shots", type=int, default=0, metavar="K", help="examples from the train part in every prompt (default 0)")
    p.add_argument("--limit", type=int, metavar="N", help="records per side, validation (ID) and test (OOD): the first N in gengap's evaluation order, the records `lm_eval --limit N` takes on the lm-eval export (default: all)")
    p.add_argument("--seed", type=int, default=0, help="seed of the k-shot draws (default 0)")
    p.add_argument("--chat", action="store_true", help="prompt through the tokenizer's chat template (default: text prompts ending in 'Answer:')")
    p.add_argument("--system", action="store_true", help="with --chat: the instruction as a system message")
    p.add_argument("--answer-format", choices=ANSWER_FORMATS, default="line", help="with --chat: the answer format the prompt asks for and its examples use (default line: a last line 'Answer: ...')")
    p.add_argument("--batch-size", type=int, default=16, help="prompts generated together (default 16)")
    p.add_argument("--max-new-tokens", type=int, help="new tokens per answer (default: the target's length + 8; 512 with --chat)")
    p.add_argument("--device", default="auto", help="auto (CUDA when available), cpu, cuda or cuda:N")
    p.add_argument("--out", metavar="RUN_DIR", help="run directory for results.json and generations.jsonl (default runs/eval-<model>-<config>)")
    p.set_defaults(func=cmd_eval)

    p = subparsers.add_parser("report", help="markdown table of ID, OOD and gap over baseline runs (with divergence and novelty sections)")
    p.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run directories (or folders holding several)")
    p.add_argument("--out", metavar="FILE.md", help="write the report here, its plots (FILE.png, FILE-divergence.png, FILE-novelty.png, ...) and its rows (FILE.json) next to it; default stdout")
    p.add_argument("--learned", type=parse_share, default=0.95, metavar="EM", help="a run trained without --until-id is marked not learned when a seed ends with ID exact match averaged over input lengths below EM (default 0.95)")
    p.add_argument("--force", action="store_true", help="replace existing regular files at --out and its plots' paths")
    p.set_defaults(func=cmd_report, report_outputs=None)  # the gengap CLI supplies its output discipline


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    names = {
        "arch": "arch", "pos": "pos", "preset": "preset", "steps": "steps", "until_id": "until_id", "until_extra": "until_extra", "until_over": "until_over", "select": "select", "iterations": "iterations",
        "test_iterations": "test_iterations", "memory_cell": "memory_cell", "stack_size": "stack_size", "adam_beta2": "adam_beta2",
        "test_per_length": "test_per_length", "test_lengths": "test_lengths", "window": "window", "progressive_loss": "progressive_loss", "schedule": "schedule",
        "full_batch": "full_batch", "label_noise": "label_noise", "noise_seed": "noise_seed", "reach": "reach", "seeds": "seeds", "batch_size": "batch_size",
        "lr": "lr", "eval_every": "eval_every", "checkpoint_every": "checkpoint_every",
        "eval_examples": "eval_examples", "eval_limit": "eval_limit", "layers": "layers",
        "d_model": "d_model", "heads": "heads", "warmup": "warmup", "weight_decay": "weight_decay",
        "device": "device", "compile": "compile", "precision": "precision", "fused": "fused", "deterministic": "deterministic",
        "stream": "stream", "curriculum": "curriculum", "level": "level", "sizes": "sizes",
        "output_mode": "output_mode", "computation_steps": "computation_steps",
    }
    chosen = {field: getattr(args, attr) for attr, field in names.items() if getattr(args, attr, None) is not None}
    if getattr(args, "param", None):
        chosen["stream_params"] = parse_params(args.param)
    return chosen


def check_run_directory(out: str, resume: bool, inputs: list[str]) -> None:
    """BaselineError when the run directory may not be written: it is, or lies inside, one of
    the inputs (the release or split directory trained on) or a release; or, with resume, it
    holds no run (absent or empty: nothing to continue, and a fresh start would pass for one)."""
    from pathlib import Path

    from gengap.generators.safe_files import placement_problem

    placed = placement_problem(out, inputs)
    if placed is not None:
        raise BaselineError(placed)
    folder = Path(out)
    if resume and (not folder.is_dir() or folder.is_symlink() or not any(folder.iterdir())):
        raise BaselineError(f"--resume: {out} holds no run to continue (drop --resume to start one there)")


ABACUS_DOCS = "docs/baselines.md#positional-encodings-for-length-generalization"


def pairing_warnings(settings: dict[str, Any], source: Any) -> list[str]:
    """Warnings for an encoding whose documented pairing the config's records do not meet:
    ``--pos abacus`` counts places in runs of one-digit tokens from the first digit written, so it
    is documented with numbers written least significant digit first, operands and answer
    (addition's ``format: little_endian``); on records without one-digit tokens it is ``nope``."""
    if settings.get("pos") != "abacus":
        return []
    records = [r for part in (source.train, source.validation, source.test) for r in part]
    formats: dict[str, int] = {}
    for record in records:
        meta = record.get("meta")
        if isinstance(meta, dict) and "format" in meta and meta["format"] != "little_endian":
            formats[str(meta["format"])] = formats.get(str(meta["format"]), 0) + 1
    warnings = []
    if formats:
        tasks = sorted({str(r.get("task")) for r in records if isinstance(r.get("meta"), dict) and r["meta"].get("format") in formats})
        written = ", ".join(f"{name} ({count:,} of {len(records):,} records)" for name, count in sorted(formats.items()))
        warnings.append(f"--pos abacus on {', '.join(tasks)} records written in format {written}: abacus places count from the first "
                        f"digit written, so they align by significance only in numbers written least significant digit first: "
                        f"pair it with format: little_endian ({ABACUS_DOCS})")
    digit = any(len(token) == 1 and "0" <= token <= "9" for r in records for token in f"{r['input']} {r['target']}".split())
    if records and not digit:
        warnings.append(f"--pos abacus on records without one-digit tokens: no token gets a place, so abacus is nope here ({ABACUS_DOCS})")
    return warnings


def default_preset_notice(settings: dict[str, Any], resume: bool) -> str | None:
    """What a run without --preset trains, when it trains on a CPU: the default preset is sized for
    a GPU (a new run on a CPU without --preset is the second week's hour-long surprise). None when a
    preset was given, the run resumes (its settings are the run's), or the device is a GPU."""
    if "preset" in settings or resume:
        return None
    from gengap.baselines.training import pick_device

    if pick_device(str(settings.get("device", "auto"))).type != "cpu":
        return None
    default, tiny = _PRESETS[TrainSettings.preset], _PRESETS["tiny"]
    model = f"the default preset {TrainSettings.preset!r} ({default.layers} layers, d_model {default.d_model})"
    if "steps" in settings:
        return f"no --preset given: {model} on the CPU; --preset tiny is sized for a CPU"
    return (f"no --preset given: {model}, {default.steps:,} steps a seed, on the CPU: about an hour a seed on a README "
            f"config (2 cores); --preset tiny ({tiny.steps:,} steps, minutes) is sized for a CPU")


def cmd_train(args: argparse.Namespace) -> int:
    """Check the settings and read the data (no torch yet: a usage error comes at once), then train."""
    from gengap.baselines.data import load_split
    from gengap.baselines.settings import make_settings

    if (args.release is None) == (args.suite is None):
        raise BaselineError("give a RELEASE_DIR or --suite SUITE.yaml (not both)")
    check_run_directory(args.out, args.resume, [name for name in (args.release, args.suite) if name is not None])
    settings = _settings(args)
    make_settings(None, settings).resolve()
    if settings.get("stream") is not None:  # a misspelt task or mixture file is refused now, not after torch is imported
        from gengap.baselines.stream_mixture import stream_mixture

        stream_mixture(settings["stream"], settings.get("stream_params", ()), settings.get("level"), settings.get("curriculum"),
                       settings.get("sizes") or ())
    if args.suite is not None:
        build = getattr(args, "build_suite_split", None)
        if build is None or not args.config:
            raise BaselineError("--suite needs --config NAME (a <task>-<split> entry of the suite)")
        source = load_split(build(args.suite, args.config), args.config)  # an in-memory SplitResult, supplied by the gengap CLI
    else:
        source = load_split(args.release, args.config)
    try:
        from gengap.baselines.training import train_and_evaluate
    except ImportError as err:
        raise BaselineError(f"gengap train needs torch and transformers ({install_hint('train')}): {err}") from None
    for warning in pairing_warnings(settings, source):
        print(f"gengap: warning: {warning}", file=sys.stderr)
    notice = default_preset_notice(settings, args.resume)
    if notice:
        print(f"gengap: note: {notice}", file=sys.stderr)
    heartbeat = getattr(args, "heartbeat", None)
    if heartbeat is not None:  # off a terminal, also a line as each seed starts and ends: a short run is not silent
        from gengap.baselines.train_progress import bookended

        heartbeat = bookended(heartbeat)
    lock = getattr(args, "run_lock", None) or (lambda out: contextlib.nullcontext())  # the gengap CLI supplies its lock (gengap.locking)
    with lock(args.out):  # one writer per run directory: a second train or --resume of it fails at once
        results = train_and_evaluate(source, args.config, out=args.out, resume=args.resume, heartbeat=heartbeat, **settings)
    print(summary(results))
    for warning in results.get("warnings", []):
        print(f"gengap: warning: {warning}", file=sys.stderr)
    print(f"wrote {args.out}/results.json")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    try:
        from gengap.baselines.pretrained import evaluate_pretrained, model_name
    except ImportError as err:
        raise BaselineError(f"gengap eval needs torch and transformers ({install_hint('train')}): {err}") from None
    from pathlib import Path

    from gengap.baselines.data import load_split

    out = args.out
    if out is None:  # the config's name: given, or the release's only one
        config = args.config or load_split(args.release).name
        out = str(Path("runs") / f"eval-{model_name(args.model)}-{config}")
    settings = {
        "shots": args.shots, "seed": args.seed, "limit": args.limit, "chat": args.chat, "system": args.system,
        "answer_format": args.answer_format, "batch_size": args.batch_size, "max_new_tokens": args.max_new_tokens, "device": args.device,
    }
    results = evaluate_pretrained(args.model, args.release, args.config, out=out, **settings)
    print(summary(results))
    print(f"wrote {out}/results.json and {out}/generations.jsonl")
    return 0


def _model(results: dict[str, Any]) -> str:
    """``pos=rope`` for a transformer, ``arch=lstm`` (``arch=looped  pos=rope``) otherwise; then
    ``output=empty-tape`` and ``computation-steps=C`` when not the defaults."""
    arch = results.get("arch", "transformer")
    model = f"pos={results['pos']}" if arch == "transformer" else f"arch={arch}" + (f"  pos={results['pos']}" if arch == "looped" else "")
    if results.get("output_mode", "autoregressive") != "autoregressive":
        model += f"  output={results['output_mode']}"
    if results.get("computation_steps"):
        model += f"  computation-steps={results['computation_steps']}"
    return model


def summary(results: dict[str, Any]) -> str:
    """A few lines: the run, then ID / OOD exact match and gap per seed and over seeds."""
    lines = [
        f"{results['config']}  {_model(results)}  preset={results['preset']}  "
        f"steps={results['steps']}  device={results['device']}  tokens/s={results['tokens_per_s']:.0f}"
    ]
    over = " over records" if (results.get("settings") or {}).get("until_over") == "records" else ""
    for seed in results["per_seed"]:
        stop = ""
        if seed.get("converged"):
            at = f" at step {seed['learned_at']}" if seed.get("learned_at") is not None else ""
            stop = f"  met --until-id {results['until_id']}{over}{at}, stopped at step {seed['stopped_at']}"
        elif seed.get("converged") is not None:
            stop = f"  did not meet --until-id {results['until_id']}{over} (step {seed['stopped_at']})"
        if seed.get("diverged_at") is not None:
            stop += f"  diverged: the loss was not finite at step {seed['diverged_at']}"
        lines.append(
            f"  seed {seed['seed']}: ID {seed['id_exact_match']:.3f}  OOD {seed['ood_exact_match']:.3f}  gap {seed['gap']:+.3f}{stop}"
        )
        data = seed.get("training_data")
        if data and data.get("kind") == "stream":
            lines.append(f"    trained on a stream: {data['records_trained']:,} records, {data['distinct_inputs']:,} distinct inputs")
        if seed.get("id_execution_accuracy") is not None:
            lines.append(f"    execution accuracy: ID {seed['id_execution_accuracy']:.3f}  OOD {seed['ood_execution_accuracy']:.3f}")
        for count, figures in (seed.get("by_iterations") or {}).items():
            lines.append(f"    {count} iterations: ID {figures['id_exact_match']:.3f}  OOD {figures['ood_exact_match']:.3f}  "
                         f"OOD length score {figures['ood_length_score']:.3f}")
    test = results.get("test_data") or {}
    if test.get("kind") == "sampled per length":
        lo, hi = test["lengths"]
        lines.append(f"  test: {test['per_length']} sequences sampled at each length {lo}..{hi} (standard error <= {test['standard_error_at_most']:.3f} a length)")
    a = results["aggregate"]
    lines += task_lines(a.get("by_task") or {})
    lines.append(
        f"  mean: ID {a['id_exact_match']['mean']:.3f} ± {a['id_exact_match']['std']:.3f}  "
        f"OOD {a['ood_exact_match']['mean']:.3f} ± {a['ood_exact_match']['std']:.3f}  "
        f"gap {a['gap']['mean']:+.3f}  OOD solved {a['ood_solved_fraction']:.2f}"
    )
    return "\n".join(lines)


def task_lines(by_task: dict[str, Any]) -> list[str]:
    """Per task, the exact match over seeds on each side where it has records: one line per task
    when the run's records come from several tasks (a multi-task config), none otherwise."""
    names = list(dict.fromkeys(name for side in ("id", "ood") for name in by_task.get(side) or {}))
    if len(names) < 2:
        return []
    lines = []
    for name in names:
        cells = [f"{side.upper()} {cell['mean']:.3f}" for side in ("id", "ood")
                 for cell in [(by_task.get(side) or {}).get(name)] if cell and cell["mean"] is not None]
        lines.append(f"  task {name}: " + "  ".join(cells))
    return lines


def cmd_report(args: argparse.Namespace) -> int:
    from contextlib import nullcontext

    from gengap.baselines.report import make_report, report_paths

    if args.out is not None and not str(args.out):
        raise BaselineError("--out '' is empty: give a file name ending in .md, or leave out --out for standard output")
    checked = args.out and args.report_outputs  # every path checked and locked up front, published at the end
    with args.report_outputs(report_paths(args.out), args.force, args.runs) if checked else nullcontext(None) as opener:
        report = make_report(args.runs, args.out, opener=opener, learned=args.learned)
    from gengap.ground.errors import one_line

    for warning in report["warnings"]:
        print(f"gengap: warning: {one_line(warning)}", file=sys.stderr)
    if args.out:
        written = [str(report["rows_file"]), *(str(path) for path in report["plots"].values())]
        print(f"wrote {args.out} and {', '.join(written)}")
    else:
        sys.stdout.write(report["text"])
    return 0
