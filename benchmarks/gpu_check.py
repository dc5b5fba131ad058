"""The GPU path, checked in one command: what to run first when a GPU is lent (at most ~8 minutes on one).

    python benchmarks/gpu_check.py --out gpu-check                # on a CUDA GPU; commit gpu-check/gpu-check.{md,json}
    python benchmarks/gpu_check.py --out /tmp/check --device cpu  # the same code path at CPU sizes (well under a minute)

It writes ``OUT/gpu-check.json`` (every figure) and ``OUT/gpu-check.md`` (docs/baselines.md, "Reading
gpu_check's report", says how to read it), sections in this order, each timed, a failing
section recorded without stopping the others, and a section that no longer fits the budget
(``--budget``, default 480 s) skipped and named:

1. ``tests``: tests/test_gpu_path_cpu.py run on the device (``GENGAP_TEST_DEVICE``), passed and failed;
2. ``architectures``: per architecture at the protocols' size (preset small, batch 128, 120
   tokens), ``--steps`` (200) training steps after a warm-up, with the training loop's device
   settings (compile, fused AdamW, precision as a run would record them): seconds per step,
   peak memory, aten operations per step and the host time per operation they imply, the
   dtypes of the activations and gradients under bf16 autocast, the synchronisations per
   step (CUDA's sync debug mode over a few steps) and whether a step runs on the meta device
   (no read of a device value);
3. ``concurrency``: the small transformer, the stack RNN and the tape RNN at 120 tokens, one
   process alone and ``--workers`` (8) at once, with the GPU's utilisation while they run:
   the throughput the protocols' worker pools get from sharing one GPU;
4. ``determinism``: two runs of a tiny config under ``--deterministic`` (and two without) per
   architecture family, compared bitwise;
5. ``protocol``: a slice of the gaps protocol (reverse_string, lengths 1..40 -> 41..100, RoPE)
   and of the Deletang protocol (reverse_string, 1..40 -> 41..500, empty tape, stack and tape
   RNN), each a real run of a few hundred steps with the protocol's evaluation, extrapolated to
   the whole protocol with the measured concurrency (benchmarks/gpu_estimate.py's arithmetic,
   the costs now measured), beside the assumed estimate.

``--device cpu`` runs every section at CPU sizes (a tiny model, a few steps, 2 workers, two
quick tests): the same code, so that the CPU test suite keeps it working
(tests/test_gpu_check.py); its figures say nothing about a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable
from arguments import positive_float

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

ARCHS = (("transformer", "rope"), ("rnn", None), ("lstm", None), ("stack_rnn", None), ("tape_rnn", None), ("looped", "rope"))
CONCURRENT = ("transformer", "stack_rnn", "tape_rnn")
REPORT = "gpu-check"


@dataclass(frozen=True)
class Sizes:
    """How big each section runs."""

    preset: str
    d_model: int | None  # None: the preset's
    batch: int
    tokens: int
    steps: int  # timed training steps per architecture
    warmup: int  # untimed steps before them (compilation, cuDNN plans, allocator)
    workers: int
    concurrent_steps: int
    concurrent_archs: tuple[str, ...]
    sync_steps: int
    determinism_steps: int
    slice_steps: int  # steps of each protocol slice run
    slice_eval_limit: int | None
    tests: str | None  # a pytest -k selection (None: the whole file)


GPU_SIZES = Sizes("small", None, 128, 120, 200, 20, 8, 60, CONCURRENT, 3, 30, 200, None, None)
CPU_SIZES = Sizes("tiny", 16, 4, 24, 3, 1, 2, 3, ("tape_rnn",), 2, 2, 3, 16,
                  "test_execution_names_what_each_architecture_runs or test_out_of_memory_at_one_example_is_raised")


# -- one architecture's training steps (also the --worker process) ---------------------------


def _setup(arch: str, pos: str | None, sizes: Sizes, device: Any) -> tuple[Any, Any, Any, Any]:
    """(model, trainer, ids, labels) of a random batch at the sizes, with the loop's device settings."""
    import torch

    from gengap.baselines.architectures import build
    from gengap.baselines.execution import execution_of
    from gengap.baselines.settings import TrainSettings
    from gengap.baselines.training import Trainer

    settings = TrainSettings(arch=arch, pos=pos, preset=sizes.preset, d_model=sizes.d_model, heads=2 if sizes.d_model and sizes.d_model < 64 else None,
                             steps=10_000, batch_size=sizes.batch).resolve()
    vocab = 24
    torch.manual_seed(0)
    model = build(settings.spec, vocab, sizes.tokens + 8, 0, 1).to(device)
    execution = execution_of(arch, None, settings.precision, device.type)
    trainer = Trainer(model, None, settings, device, execution.compiled)  # type: ignore[arg-type]
    generator = torch.Generator().manual_seed(1)
    ids = torch.randint(3, vocab, (sizes.batch, sizes.tokens), generator=generator)
    ids[:, sizes.tokens // 3] = 1  # <sep>: an input a third of the row long
    return model, trainer, ids.to(device), ids.roll(-1, dims=1).to(device)


def time_steps(trainer: Any, ids: Any, labels: Any, sizes: Sizes, steps: int) -> dict[str, Any]:
    """Seconds per training step after the warm-up (steps 1.. of the trainer) and peak memory."""
    import torch

    from gengap.baselines import cuda

    device = ids.device
    for step in range(1, sizes.warmup + 1):
        trainer.step(ids, labels, step)
    cuda.synchronize(device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    started = time.perf_counter()
    for step in range(sizes.warmup + 1, sizes.warmup + steps + 1):
        loss = trainer.step(ids, labels, step)
    cuda.synchronize(device)
    seconds = (time.perf_counter() - started) / steps
    return {"seconds_per_step": seconds, "tokens_per_s": sizes.batch * sizes.tokens / seconds, "final_loss": float(loss),
            "peak_memory_gib": torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else None}


def worker(arch: str, sizes: Sizes, device_name: str) -> int:
    """The --worker process: print one JSON line of time_steps for arch."""
    import torch

    device = torch.device(device_name)
    if device.type == "cpu":
        torch.set_num_threads(1)  # as a CPU run trains (gengap.baselines.training)
    _, trainer, ids, labels = _setup(arch, dict(ARCHS)[arch], sizes, device)
    print(json.dumps({"arch": arch, **time_steps(trainer, ids, labels, sizes, sizes.concurrent_steps)}), flush=True)
    return 0


# -- sections ---------------------------------------------------------------------------------


def section_tests(sizes: Sizes, device: Any, limit: float) -> dict[str, Any]:
    from gengap.baselines.cuda import CUBLAS_WORKSPACE

    command = [sys.executable, "-m", "pytest", str(ROOT / "tests" / "test_gpu_path_cpu.py"), "-p", "no:randomly", "-p", "no:cacheprovider",
               "-rfE", "-o", "addopts=", "-q", *(["-k", sizes.tests] if sizes.tests else [])]
    env = {**os.environ, "GENGAP_TEST_DEVICE": device.type, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           CUBLAS_WORKSPACE[0]: CUBLAS_WORKSPACE[1]}  # before the tests start CUDA: --deterministic runs need it
    try:
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=max(limit, 10))
    except subprocess.TimeoutExpired as err:
        partial = err.stdout.decode() if isinstance(err.stdout, bytes) else (err.stdout or "")
        return {"ok": False, "error": f"pytest ran past {limit:.0f} s", "output_tail": partial[-2000:]}
    summary = next((line for line in reversed(done.stdout.splitlines()) if " passed" in line or " failed" in line or " error" in line), "")
    counts = {word: int(number) for number, word in (part.split()[:2] for part in summary.strip("= ").split(" in ")[0].split(", ") if part[:1].isdigit())}
    failed = [line.split(" ", 1)[1].split(" - ")[0] for line in done.stdout.splitlines() if line.startswith(("FAILED ", "ERROR "))]
    return {"ok": done.returncode == 0, "returncode": done.returncode, "passed": counts.get("passed", 0),
            "failed": counts.get("failed", 0) + counts.get("error", 0) + counts.get("errors", 0), "failing": failed,
            "selection": sizes.tests, "summary": summary.strip("= ")}


def _syncs_per_step(trainer: Any, ids: Any, labels: Any, steps: int, first: int) -> float | None:
    """Synchronising CUDA calls per training step (steps first.. of the trainer), from the sync
    debug mode's warnings (CUDA only)."""
    import torch

    if ids.device.type != "cuda":
        return None
    torch.cuda.synchronize()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            for step in range(first, first + steps):
                trainer.step(ids, labels, step)
        finally:
            torch.cuda.set_sync_debug_mode("default")
    return sum("synchroniz" in str(w.message) for w in caught) / steps


def section_architectures(sizes: Sizes, device: Any, limit: float) -> dict[str, Any]:
    from gengap.baselines.execution import execution_of
    from gengap.baselines.probes import count_operations, dtypes_of_a_step, step_on_meta

    deadline = time.perf_counter() + limit
    rows = []
    for arch, pos in ARCHS:
        if time.perf_counter() > deadline:
            rows.append({"arch": arch, "skipped": "out of time"})
            continue
        row: dict[str, Any] = {"arch": arch, "pos": pos or "none"}
        try:
            model, trainer, ids, labels = _setup(arch, pos, sizes, device)
            timing = time_steps(trainer, ids, labels, sizes, sizes.steps)
            done = sizes.warmup + sizes.steps
            operations = count_operations(lambda: trainer.step(ids, labels, done + 1))
            syncs = _syncs_per_step(trainer, ids, labels, sizes.sync_steps, done + 2)
            activations, gradients, parameter_gradients, logits = dtypes_of_a_step(model, ids[:8])
            execution = execution_of(arch, None, "auto", device.type)
            row.update(timing, operations_per_step=operations, host_us_per_operation=timing["seconds_per_step"] / operations * 1e6,
                       compiled=execution.compiled, precision=execution.precision,
                       activation_dtypes=sorted(str(d).split(".")[-1] for d in activations),
                       gradient_dtypes=sorted(str(d).split(".")[-1] for d in gradients | parameter_gradients),
                       logits_dtype=str(logits).split(".")[-1], syncs_per_step=syncs, meta_step=step_on_meta(arch, pos or "none") or "ok")
        except Exception as err:  # recorded, the other architectures still run
            row["error"] = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
        rows.append(row)
    return {"ok": all("error" not in r for r in rows), "rows": rows, "batch": sizes.batch, "tokens": sizes.tokens, "steps": sizes.steps,
            "preset": sizes.preset}


class _Utilisation:
    """GPU utilisation (%) sampled every half second while the block runs (torch.cuda.utilization,
    else nvidia-smi; nothing off CUDA)."""

    def __init__(self, device: Any) -> None:
        self.device = device
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> float | None:
        import torch

        try:
            return float(torch.cuda.utilization(self.device))
        except Exception:
            pass
        try:
            out = subprocess.run(["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits", "-i", str(self.device.index or 0)],
                                 capture_output=True, text=True, timeout=5)
            return float(out.stdout.split()[0])
        except Exception:
            return None

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            value = self._sample()
            if value is not None:
                self.samples.append(value)

    def __enter__(self) -> "_Utilisation":
        if self.device.type == "cuda":
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def summary(self) -> dict[str, float] | None:
        return {"mean": statistics.fmean(self.samples), "max": max(self.samples)} if self.samples else None


def _workers(arch: str, count: int, sizes: Sizes, device: Any, limit: float) -> tuple[list[dict[str, Any]], float]:
    """count --worker processes of arch at once: their JSON lines and the wall seconds."""
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", arch, "--device", str(device), "--sizes", json.dumps(asdict(sizes))]
    started = time.perf_counter()
    processes = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT) for _ in range(count)]
    rows = []
    for process in processes:
        try:
            out, err = process.communicate(timeout=max(limit - (time.perf_counter() - started), 1))
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
        line = next((text for text in reversed(out.splitlines()) if text.startswith("{")), None)
        rows.append(json.loads(line) if line else {"error": (err.strip().splitlines() or ["no output"])[-1]})
    return rows, time.perf_counter() - started


def section_concurrency(sizes: Sizes, device: Any, limit: float) -> dict[str, Any]:
    deadline = time.perf_counter() + limit
    rows = []
    for arch in sizes.concurrent_archs:
        left = deadline - time.perf_counter()
        if left < 5:
            rows.append({"arch": arch, "skipped": "out of time"})
            continue
        alone, _ = _workers(arch, 1, sizes, device, left / 2)
        with _Utilisation(device) as utilisation:
            together, wall = _workers(arch, sizes.workers, sizes, device, deadline - time.perf_counter())
        good = [r for r in together if "seconds_per_step" in r]
        row: dict[str, Any] = {"arch": arch, "workers": sizes.workers, "alone": alone[0], "together": together, "wall_seconds": wall,
                               "utilisation": utilisation.summary()}
        if "seconds_per_step" in alone[0] and len(good) == sizes.workers:
            each = statistics.fmean(r["seconds_per_step"] for r in good)
            row.update(seconds_per_step_together=each, speedup=sizes.workers * alone[0]["seconds_per_step"] / each)
        rows.append(row)
    return {"ok": all("speedup" in r for r in rows), "rows": rows, "tokens": sizes.tokens, "batch": sizes.batch}


def _tiny_run(arch: str, pos: str | None, deterministic: bool, sizes: Sizes, device: Any, split: Any) -> list[Any]:
    from gengap.baselines.training import train_and_evaluate

    results = train_and_evaluate(split, "reverse", arch=arch, pos=pos, preset="tiny", steps=sizes.determinism_steps, eval_every=sizes.determinism_steps,
                                 eval_examples=16, eval_limit=16, seeds=(0,), device=str(device), deterministic=deterministic, progress=False, plots=False)
    seed = results["per_seed"][0]
    return [seed["final_loss"], seed["id_exact_match"], seed["ood_exact_match"]]


def section_determinism(sizes: Sizes, device: Any, limit: float) -> dict[str, Any]:
    from gengap.splits import sample_length_split

    split = sample_length_split("reverse_string", (1, 8), (9, 12), {"train": 300, "validation": 32, "test": 32}, seed=0)
    deadline = time.perf_counter() + limit
    rows = []
    for arch, pos in (("transformer", "rope"), ("lstm", None), ("tape_rnn", None)):
        if time.perf_counter() > deadline:
            rows.append({"arch": arch, "skipped": "out of time"})
            continue
        row: dict[str, Any] = {"arch": arch}
        for deterministic in (True, False):
            first, second = (_tiny_run(arch, pos, deterministic, sizes, device, split) for _ in range(2))
            row["deterministic" if deterministic else "default"] = {"bitwise_equal": first == second, "first": first, "second": second}
        rows.append(row)
    return {"ok": all(r.get("deterministic", {}).get("bitwise_equal") for r in rows), "rows": rows, "steps": sizes.determinism_steps}


def section_protocol(sizes: Sizes, device: Any, limit: float, concurrency: dict[str, Any]) -> dict[str, Any]:
    """A real slice of each protocol, extrapolated (see the module doc)."""
    import gpu_protocol as protocol
    from gengap.baselines.training import train_and_evaluate

    cpu = device.type == "cpu"
    speedups = {r["arch"]: r["speedup"] for r in concurrency.get("rows", []) if "speedup" in r}
    slices = []
    deadline = time.perf_counter() + limit
    gaps = protocol.build_splits(["reverse_string"], cpu, {"train": 300, "validation": 24, "test": 24} if cpu else
                                 {"train": 20000, "validation": 1000, "test": 2000})["reverse_string"]
    deletang = protocol.build_deletang_splits(["reverse_string"], cpu, {"train": 300, "validation": 24, "test": 24} if cpu else
                                              {"train": 10000, "validation": 1000, "test": 2000})["reverse_string-deletang"]
    plan = [("gaps", gaps, "transformer", "rope", {}, 72, 2000, 8),
            ("deletang", deletang, "stack_rnn", None, {"output_mode": "empty-tape"}, 45, 10000, 8),
            ("deletang", deletang, "tape_rnn", None, {"output_mode": "empty-tape"}, 45, 10000, 8)]
    for name, parts, arch, pos, extra, runs, full_steps, workers in plan:
        if time.perf_counter() > deadline:
            slices.append({"protocol": name, "arch": arch, "skipped": "out of time"})
            continue
        steps = sizes.slice_steps
        started = time.perf_counter()
        evaluations = 20 if name == "deletang" else 4  # the protocol's periodic evaluations per run, whatever its steps
        results = train_and_evaluate(parts, f"{name}-slice", arch=arch, pos=pos, preset=sizes.preset, d_model=sizes.d_model,
                                     heads=2 if sizes.d_model and sizes.d_model < 64 else None, steps=steps, batch_size=sizes.batch if cpu else 128,
                                     warmup=max(1, steps // 10), eval_every=max(1, steps // evaluations), eval_examples=16 if cpu else 256,
                                     eval_limit=sizes.slice_eval_limit or 2000, eval_batch_size=64 if cpu else 512, seeds=(0,),
                                     device=str(device), progress=False, plots=False, **extra)
        wall = time.perf_counter() - started
        seed = results["per_seed"][0]
        per_step = seed["train_seconds"] / steps
        evaluation = wall - seed["train_seconds"]  # setup, and the protocol's periodic and final evaluations: those of a whole run
        one_run = full_steps * per_step + evaluation
        speedup = speedups.get(arch, speedups.get("transformer", 1.0))
        slices.append({"protocol": name, "arch": arch, "steps": steps, "seconds_per_step": per_step, "evaluation_seconds": evaluation,
                       "full_steps": full_steps, "runs": runs, "workers": workers, "concurrency_speedup": speedup,
                       "one_run_minutes": one_run / 60, "runs_total_minutes": runs * one_run / max(min(speedup, workers), 1.0) / 60})
    return {"ok": all("runs_total_minutes" in s for s in slices), "slices": slices,
            "note": "a run per slice at the protocol's sizes; the totals assume every run reaches its step cap and the measured "
                    "concurrency speed-up of the architecture (the transformer's for the others)"}


# -- the report -----------------------------------------------------------------------------


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value))
    return str(value)


def render(document: dict[str, Any]) -> str:
    sections = document["sections"]
    lines = [f"# gpu_check report: {document['device']}", "",
             f"{document['command']}; torch {document['torch']}, Python {document['python']}; {document['wall_seconds']:.0f} s in all; "
             f"{document['when']}.", ""]
    if document["device_type"] != "cuda":
        lines += ["**Not a GPU**: this report ran at CPU sizes; its figures check the code path, not a GPU.", ""]
    lines += ["| section | ok | seconds |", "|---|---|---:|"]
    lines += [f"| {name} | {'skipped' if s.get('skipped') else 'yes' if s.get('ok') else 'NO'} | {s.get('seconds', 0):.0f} |" for name, s in sections.items()]
    tests = sections.get("tests", {})
    if "passed" in tests:
        lines += ["", "## 1. Tests of the GPU path on the device", "", f"{tests['passed']} passed, {tests['failed']} failed"
                  + (f" (selection: {tests['selection']})" if tests.get("selection") else "") + "."]
        lines += [f"- failed: `{name}`" for name in tests.get("failing", [])]
    archs = sections.get("architectures", {})
    if archs.get("rows"):
        lines += ["", f"## 2. Architectures ({archs['steps']} steps, batch {archs['batch']} x {archs['tokens']} tokens, preset {archs['preset']})", "",
                  "| arch | s/step | tokens/s | peak GiB | ops/step | us/op | compiled | run precision | activations (bf16 autocast) | gradients | syncs/step | meta step |",
                  "|---|---:|---:|---:|---:|---:|---|---|---|---|---:|---|"]
        for r in archs["rows"]:
            if "seconds_per_step" not in r:
                lines.append(f"| {r['arch']} | {r.get('error') or r.get('skipped')} |" + " |" * 11)
                continue
            lines.append(f"| {r['arch']} | {_fmt(r['seconds_per_step'])} | {r['tokens_per_s']:,.0f} | {_fmt(r['peak_memory_gib'])} | {r['operations_per_step']:,} | "
                         f"{_fmt(r['host_us_per_operation'])} | {r['compiled']} | {r['precision']} | {_fmt(r['activation_dtypes'])} | "
                         f"{_fmt(r['gradient_dtypes'])} | {_fmt(r['syncs_per_step'])} | {r['meta_step']} |")
    conc = sections.get("concurrency", {})
    if conc.get("rows"):
        lines += ["", f"## 3. Concurrency ({conc['tokens']} tokens, batch {conc['batch']})", "",
                  "| arch | alone s/step | workers | each s/step together | throughput vs alone | GPU utilisation mean / max |", "|---|---:|---:|---:|---:|---|"]
        for r in conc["rows"]:
            if "speedup" not in r:
                lines.append(f"| {r['arch']} | {r.get('skipped') or r.get('alone', {}).get('error') or 'a worker failed'} | | | | |")
                continue
            use = r["utilisation"]
            busy = f"{use['mean']:.0f} / {use['max']:.0f} %" if use else "n/a"
            lines.append(f"| {r['arch']} | {_fmt(r['alone']['seconds_per_step'])} | {r['workers']} | {_fmt(r['seconds_per_step_together'])} | "
                         f"{r['speedup']:.2f}x | {busy} |")
    det = sections.get("determinism", {})
    if det.get("rows"):
        lines += ["", f"## 4. Determinism (two runs each, {det['steps']} steps)", "", "| arch | --deterministic: equal | default: equal |", "|---|---|---|"]
        lines += [f"| {r['arch']} | {r.get('deterministic', {}).get('bitwise_equal', r.get('skipped'))} | {r.get('default', {}).get('bitwise_equal', '')} |"
                  for r in det["rows"]]
    proto = sections.get("protocol", {})
    if proto.get("slices"):
        lines += ["", "## 5. Protocol slices, extrapolated", "", proto["note"] + ".", "",
                  "| protocol | arch | steps run | s/step | evaluation s | one run at the cap, min | runs | speed-up used | all runs, min |",
                  "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
        for s in proto["slices"]:
            if "runs_total_minutes" not in s:
                lines.append(f"| {s['protocol']} | {s['arch']} | {s.get('skipped') or s.get('error')} | | | | | | |")
                continue
            lines.append(f"| {s['protocol']} | {s['arch']} | {s['steps']} | {_fmt(s['seconds_per_step'])} | {s['evaluation_seconds']:.1f} | "
                         f"{s['one_run_minutes']:.1f} | {s['runs']} | {s['concurrency_speedup']:.2f}x | {s['runs_total_minutes']:.0f} |")
    errors = {name: s["error"] for name, s in sections.items() if s.get("error")}
    if errors:
        lines += ["", "## Errors", ""] + [f"- {name}: {text}" for name, text in errors.items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="folder for gpu-check.json and gpu-check.md")
    parser.add_argument("--device", default="auto", help="auto (CUDA when available), cuda, cuda:N or cpu (CPU sizes)")
    parser.add_argument("--budget", type=positive_float, help="seconds for the whole check (default 480 on CUDA, 120 on the CPU)")
    parser.add_argument("--skip", default="", help="comma-separated sections to leave out: tests, architectures, concurrency, determinism, protocol")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--sizes", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args.worker, Sizes(**{k: tuple(v) if isinstance(v, list) else v for k, v in json.loads(args.sizes).items()}), args.device)
    if not args.out:
        parser.error("--out is required")
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # before CUDA starts, for the --deterministic runs (gengap.baselines.cuda)

    import torch

    from gengap.baselines.training import device_name, pick_device
    from gengap.baselines.errors import BaselineError

    try:
        device = pick_device(args.device)
    except BaselineError as err:
        parser.error(str(err))
    sizes = GPU_SIZES if device.type == "cuda" else CPU_SIZES
    if device.type == "cpu":
        torch.set_num_threads(1)  # as a CPU run trains (gengap.baselines.training)
    budget = args.budget or (480.0 if device.type == "cuda" else 120.0)
    skip = {name for name in args.skip.split(",") if name}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    # each section's weight (its expected seconds on one GPU); a section gets what is left of the
    # budget in proportion to its weight among the sections still to run, so time one saves goes to the next
    plan: list[tuple[str, float, Callable[[float], dict[str, Any]]]] = [
        ("tests", 150, lambda limit: section_tests(sizes, device, limit)),
        ("architectures", 90, lambda limit: section_architectures(sizes, device, limit)),
        ("concurrency", 150, lambda limit: section_concurrency(sizes, device, limit)),
        ("determinism", 30, lambda limit: section_determinism(sizes, device, limit)),
        ("protocol", 60, lambda limit: section_protocol(sizes, device, limit, sections.get("concurrency", {}))),
    ]
    sections: dict[str, dict[str, Any]] = {}
    for index, (name, weight, run) in enumerate(plan):
        left = budget - (time.perf_counter() - started)
        if name in skip or left < 3:
            sections[name] = {"skipped": "--skip" if name in skip else "out of time"}
            continue
        clock = time.perf_counter()
        try:
            sections[name] = run(left * weight / sum(w for later, w, _ in plan[index:] if later not in skip))
        except Exception as err:  # a section's failure is a finding, not the end of the check
            sections[name] = {"ok": False, "error": f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"}
        sections[name]["seconds"] = time.perf_counter() - clock
        print(f"gpu_check: {name} {'ok' if sections[name].get('ok') else 'NOT ok'} in {sections[name]['seconds']:.0f} s", file=sys.stderr, flush=True)
    document = {
        "format": "gengap-gpu-check/1",
        "command": "python benchmarks/gpu_check.py" + (f" --device {args.device}" if args.device != "auto" else ""),
        "device": device_name(device), "device_type": device.type, "torch": torch.__version__, "cuda": torch.version.cuda,
        "python": platform.python_version(), "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "sizes": asdict(sizes), "budget_seconds": budget, "wall_seconds": time.perf_counter() - started, "sections": sections,
    }
    (out / f"{REPORT}.json").write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    (out / f"{REPORT}.md").write_text(render(document), encoding="utf-8")
    print(f"gpu_check: wrote {out / (REPORT + '.md')} and {REPORT}.json in {document['wall_seconds']:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
