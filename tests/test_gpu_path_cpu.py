"""The GPU code path forced onto the CPU: torch.compile, bf16 autocast, left-padded bf16 decoding;
what a run records as having run (compile, precision), the dtypes of every architecture under
autocast, no host read-back in a training step, pinned batch transfers, one read-back per step
for an adaptive curriculum, the deterministic switch, and out-of-memory backoff in evaluation.

``GENGAP_TEST_DEVICE=cuda`` runs the same tests on a GPU (benchmarks/gpu_check.py does); the
default is the CPU.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch

from gengap.baselines.decoding import autocast_context, greedy_decode
from gengap.baselines.errors import BaselineError
from gengap.baselines.models import ModelShape, build_model
from gengap.baselines.training import train_and_evaluate
from gengap.splits import sample_length_split

DEVICE = torch.device(os.environ.get("GENGAP_TEST_DEVICE", "cpu"))


@pytest.fixture(scope="module")
def split():
    return sample_length_split("reverse_string", (1, 5), (6, 7), {"train": 200, "validation": 16, "test": 16}, seed=2)


def test_compiled_bf16_training_on_cpu_writes_a_run(split, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """torch.compile, bf16 autocast and fused AdamW, as on CUDA, forced onto the CPU."""
    made: list[dict] = []
    adamw = torch.optim.AdamW

    def recording_adamw(*args, **kwargs):
        optimizer = adamw(*args, **kwargs)
        made.append(optimizer.defaults)
        return optimizer

    monkeypatch.setattr(torch.optim, "AdamW", recording_adamw)
    settings = dict(pos="rope", preset="tiny", steps=6, eval_every=3, eval_examples=8, seeds=(0,), layers=1, d_model=32, heads=2, batch_size=16)
    from torch._dynamo.utils import counters

    counters.clear()
    results = train_and_evaluate(split, out=tmp_path / "run", device=str(DEVICE), compile=True, precision="bf16", fused=True, **settings)
    assert results["compiled"] is True and results["settings"]["precision"] == "bf16" and results["precision"] == "bf16-autocast"
    assert [d["fused"] for d in made] == [True]
    assert counters["stats"]["unique_graphs"] >= 1  # dynamo captured and compiled the model's forward
    assert results["device"].split()[0] == DEVICE.type
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [row["step"] for row in rows] == [3, 6]
    assert all(row["loss"] == row["loss"] and 0 < row["loss"] < 20 for row in rows)  # finite
    fp32 = train_and_evaluate(split, device=str(DEVICE), compile=False, precision="fp32", **settings)
    assert bool(made[-1]["fused"]) == (DEVICE.type == "cuda")  # the device's default
    assert fp32["compiled"] is False and fp32["precision"] == "fp32"
    # bf16 rounds the activations: the losses differ from fp32, but not by much
    assert fp32["per_seed"][0]["final_loss"] != results["per_seed"][0]["final_loss"]
    assert fp32["per_seed"][0]["final_loss"] == pytest.approx(results["per_seed"][0]["final_loss"], rel=0.05)


def test_unknown_precision_is_refused(split) -> None:
    with pytest.raises(BaselineError, match="precision"):
        train_and_evaluate(split, preset="tiny", steps=1, precision="fp16")


def test_autocast_context_follows_precision() -> None:
    cpu = torch.device("cpu")
    a, b = torch.randn(4, 4), torch.randn(4, 4)
    with autocast_context(cpu, "bf16"):
        assert (a @ b).dtype == torch.bfloat16
    with autocast_context(cpu, "auto"):
        assert (a @ b).dtype == torch.float32
    with autocast_context(cpu, "fp32"):
        assert (a @ b).dtype == torch.float32
    with pytest.raises(ValueError):
        autocast_context(cpu, "half")


@pytest.mark.parametrize("pos", ["rope", "nope", "learned", "alibi"])
def test_left_padded_bf16_decoding_matches_each_prompt_alone(pos: str) -> None:
    """A left-padded bf16 batch decodes as each prompt alone under bf16 (cache or not)."""
    torch.manual_seed(5)
    model = build_model(pos, ModelShape(layers=2, d_model=32, heads=2), vocab_size=12, max_len=24)
    with torch.no_grad():  # a sharper model than the initialisation, so that argmax is not flat
        for p in model.parameters():
            p.mul_(4.0)
    generator = torch.Generator().manual_seed(1)
    prompts = [torch.randint(3, 12, (int(n),), generator=generator).tolist() for n in (2, 7, 4, 9, 3, 5)]
    limits = [6, 4, 8, 3, 7, 5]
    batched = greedy_decode(model, prompts, limits, end_id=2, batch_size=4, precision="bf16")
    recomputed = greedy_decode(model, prompts, limits, end_id=2, batch_size=4, use_cache=False, precision="bf16")
    alone = [greedy_decode(model, [p], [k], end_id=2, precision="bf16")[0] for p, k in zip(prompts, limits)]
    assert all(len(out) <= k for out, k in zip(batched, limits))
    assert len({tuple(out) for out in batched}) > 3  # not a constant output
    assert batched == recomputed == alone


# -- what ran is what is recorded (issue 43, items 1 and 2) ------------------------------------

TINY = dict(preset="tiny", steps=2, eval_every=2, eval_examples=4, eval_limit=4, layers=1, d_model=16, heads=2, batch_size=8, seeds=(0,))
ARCHS = [("transformer", "rope"), ("rnn", "none"), ("lstm", "none"), ("stack_rnn", "none"), ("tape_rnn", "none"), ("looped", "rope")]


@pytest.mark.parametrize("arch", ["rnn", "lstm", "stack_rnn", "tape_rnn"])
def test_a_recurrent_model_asked_to_compile_records_that_it_ran_uncompiled(split, arch: str, capsys: pytest.CaptureFixture) -> None:
    from torch._dynamo.utils import counters

    counters.clear()
    results = train_and_evaluate(split, arch=arch, device=str(DEVICE), compile=True, precision="bf16", **{**TINY, "iterations": None})
    assert results["compiled"] is False and results["execution"]["compile_requested"] is True
    assert "graph" in results["execution"]["compile_note"]  # the reason (a graph break, or a graph per length)
    assert counters["stats"]["unique_graphs"] == 0  # nothing went through TorchDynamo
    assert f"--compile does not apply to {arch}" in capsys.readouterr().err
    assert results["precision"] == "fp32" and results["execution"]["precision_requested"] == "bf16"


def test_execution_names_what_each_architecture_runs() -> None:
    from gengap.baselines.execution import execution_of

    for arch, _ in ARCHS:
        recurrent = arch in ("rnn", "lstm", "stack_rnn", "tape_rnn")
        cuda_default = execution_of(arch, None, "auto", "cuda")
        assert cuda_default.compiled == (arch == "transformer") and cuda_default.compile_note is None  # the default asks only the transformer
        assert cuda_default.precision == ("fp32" if recurrent else "bf16-autocast")
        assert execution_of(arch, None, "auto", "cpu").precision == "fp32" and not execution_of(arch, None, "auto", "cpu").compiled
        asked = execution_of(arch, True, "fp32", "cuda")
        assert asked.compiled == (not recurrent) and (asked.compile_note is not None) == recurrent
        assert execution_of(arch, False, "bf16", "cpu").precision == ("fp32" if recurrent else "bf16-autocast")


@pytest.mark.parametrize("arch,pos", ARCHS)
def test_every_architecture_computes_in_the_precision_it_records(arch: str, pos: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under bf16 autocast (CPU here; CUDA with GENGAP_TEST_DEVICE=cuda, where cuDNN RNNs would go to fp16):
    the transformer and the looped model compute matrix products in bf16; the recurrent models
    compute everything, their stack and tape included, and every gradient in fp32."""
    from gengap.baselines import tape_rnn
    from gengap.baselines.architectures import build
    from gengap.baselines.execution import execution_of
    from gengap.baselines.probes import dtypes_of_a_step
    from gengap.baselines.spec import ModelSpec

    tapes: set = set()
    update = tape_rnn.update_tape
    monkeypatch.setattr(tape_rnn, "update_tape", lambda *args: (lambda tape: tapes.add(tape.dtype) or tape)(update(*args)))
    torch.manual_seed(0)
    model = build(ModelSpec(arch, pos, 1, 32, 2, 8, 2, 0), 12, 32, 0, 1).to(DEVICE)
    ids = torch.randint(3, 12, (4, 10))
    ids[:, 4] = 1  # <sep>
    activations, gradients, parameter_gradients, logits = dtypes_of_a_step(model, ids.to(DEVICE))
    recorded = execution_of(arch, None, "bf16", DEVICE.type).precision
    assert parameter_gradients == {torch.float32}  # fp32 weights, fp32 gradients for the optimizer
    if recorded == "fp32":
        assert arch in ("rnn", "lstm", "stack_rnn", "tape_rnn")
        assert activations == {torch.float32} and gradients == {torch.float32} and logits == torch.float32
        assert tapes == ({torch.float32} if arch == "tape_rnn" else set())
    else:
        assert torch.bfloat16 in activations and logits == torch.bfloat16  # autocast ran the matrix products
        assert torch.bfloat16 in gradients


# -- no host read-back in a training step (item 3) ---------------------------------------------


@pytest.mark.parametrize("arch,pos", [("transformer", "alibi"), *ARCHS[1:]])
def test_a_training_step_reads_nothing_back_from_the_device(arch: str, pos: str) -> None:
    """A whole step (batch, forward, backward, clipping, AdamW, schedule) runs on the meta device,
    where reading a tensor's value (.item(), int(), bool()) is an error: on CUDA the step queues
    its work without waiting for the GPU. (The Hugging Face Llama, SmolLM3 and GPT-2 classes read
    a flag from their input in an uncompiled forward pass; Bloom, alibi, does not.)"""
    from gengap.baselines.probes import step_on_meta

    assert step_on_meta(arch, pos) is None


def test_the_meta_probe_catches_a_read_back() -> None:
    """Llama's uncompiled forward pass reads whether the batch is packed (left alone: compiled on
    CUDA by default, where it does not read)."""
    from gengap.baselines.probes import step_on_meta

    assert step_on_meta("transformer", "rope") == "Tensor.item() cannot be called on meta tensors"


def test_the_tape_rnn_forward_pass_is_one_graph_without_breaks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under torch.compile the tape's width comes from the sequence's shape, not from a read of the
    input lengths (which made 6 graphs and 5 breaks), and that wider tape computes what the eager
    pass's exact one does."""
    import torch._dynamo as dynamo

    from gengap.baselines import tape_rnn
    from gengap.baselines.tape_rnn import TapeRNN

    torch.manual_seed(0)
    model = TapeRNN(16, 4, 10, pad_id=0, sep_id=1)
    ids = torch.randint(3, 10, (5, 11))
    ids[:, 3] = 1
    ids[0, 1] = 1  # rows of input lengths 1 and 3: rings of 4 and 8 cells
    explained = dynamo.explain(model)(ids)
    assert (explained.graph_count, explained.graph_break_count) == (1, 0)
    widths: list[int] = []
    width = tape_rnn.tape_width
    monkeypatch.setattr(tape_rnn, "tape_width", lambda *args: widths.append(width(*args)) or widths[-1])
    exact = model(ids)
    monkeypatch.setattr(torch.compiler, "is_compiling", lambda: True)  # as while TorchDynamo traces
    torch.testing.assert_close(model(ids), exact, rtol=1e-5, atol=1e-6)
    assert widths == [8, 2 * 11 + 2]


# -- host-to-device transfers (item 4) ---------------------------------------------------------


def test_batches_go_to_a_cuda_device_from_pinned_memory_without_blocking(monkeypatch: pytest.MonkeyPatch) -> None:
    """On CUDA, batch indices (and a stream's encoded batches) are copied from pinned memory with
    non_blocking; elsewhere nothing is pinned (stand-ins for the copies on a CPU-only machine)."""
    import numpy as np

    from gengap.baselines import cuda
    from gengap.baselines.tokenizer import Tokenizer
    from gengap.baselines.training import EncodedTrain

    copies: list[tuple[str, bool, bool]] = []
    real_to = torch.Tensor.to

    def pin(self: torch.Tensor) -> torch.Tensor:
        pinned = self.clone()
        pinned.was_pinned = True
        return pinned

    def to(self: torch.Tensor, device, *args, non_blocking: bool = False, **kwargs) -> torch.Tensor:
        if isinstance(device, torch.device) and device.type == "cuda":
            copies.append((str(self.dtype), getattr(self, "was_pinned", False), non_blocking))
            return self
        return real_to(self, device, *args, non_blocking=non_blocking, **kwargs)

    monkeypatch.setattr(torch.Tensor, "pin_memory", pin)
    monkeypatch.setattr(torch.Tensor, "to", to)
    records = [{"input": "a b", "target": "b a"}, {"input": "c", "target": "c"}, {"input": "b c a", "target": "a c b"}]
    tokenizer = Tokenizer.build([text for r in records for text in (r["input"], r["target"])])
    train = EncodedTrain(records, tokenizer, torch.device("cuda"))
    ids, labels, count = train.batch(np.array([2, 0]))
    assert copies == [("torch.int32", True, True), ("torch.int32", True, True), ("torch.int64", True, True)]  # ids, labels; the indices
    assert ids[0, :3].tolist() == tokenizer.encode("b c a") and count == (3 + 1 + 3 + 1) + (2 + 1 + 2 + 1)
    copies.clear()
    assert cuda.to_device(np.arange(3), torch.device("cpu")).tolist() == [0, 1, 2] and copies == []


def test_an_adaptive_curriculum_reads_the_device_once_per_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two adaptive components observe their exact match after a step with one read-back of the
    batch's per-record exact match (it was two per component: any() and mean()); the fractions
    are those counted by hand."""
    import numpy as np

    from gengap.baselines.layout import IGNORE
    from gengap.baselines.stream_train import StreamPlan, StreamSource
    from gengap.generators.exclusion import Exclusion
    from gengap.generators.mixtures import parse_mixture

    adaptive = "adaptive:start=1,end=3,threshold=0.9,window=10"
    plan = StreamPlan(parse_mixture(f"components: [{{task: parity_check, curriculum: '{adaptive}'}}, {{task: even_pairs, curriculum: '{adaptive}'}}]"), "mix.yaml")
    source = StreamSource(plan, 0, Exclusion.from_inputs([]), lambda records: records, batch_size=12)
    source.batch(1)
    components, levels = source.components.copy(), source.levels.copy()
    assert set(components) == {0, 1} and set(levels) == {1}
    labels = torch.randint(0, 5, (12, 6))
    labels[:, :2] = IGNORE
    logits = torch.nn.functional.one_hot(labels.clamp(min=0), 5).float()
    wrong = [0, 3, 4, 7]
    logits[wrong, 3] = logits[wrong, 3].roll(1, dims=-1)  # these records miss one labelled token
    seen: list[tuple[int, float]] = []
    for k, curriculum in enumerate(source.curricula):
        monkeypatch.setattr(curriculum, "observe", lambda step, value, k=k: seen.append((k, value)))
    reads = []
    for name in ("item", "tolist", "cpu", "__bool__", "__float__", "__int__"):  # numpy() reads a host tensor only
        real = getattr(torch.Tensor, name)
        monkeypatch.setattr(torch.Tensor, name, lambda self, *a, real=real, name=name, **kw: reads.append(name) or real(self, *a, **kw))
    source.observe(1, logits.to(DEVICE), labels.to(DEVICE))
    monkeypatch.undo()
    assert len(reads) == 1
    expected = [(k, float(np.float32(sum(i not in wrong for i in np.flatnonzero(components == k))) / np.float32((components == k).sum())))
                for k in (0, 1)]
    assert seen == expected and any(value < 1 for _, value in seen)


# -- the deterministic switch (item 5) ---------------------------------------------------------


def test_deterministic_runs_under_deterministic_algorithms_and_records_it(split, monkeypatch: pytest.MonkeyPatch) -> None:
    from gengap.baselines.cuda import CUBLAS_WORKSPACE

    name, value = CUBLAS_WORKSPACE
    if DEVICE.type == "cuda":
        monkeypatch.setenv(name, value)  # CUDA may have started in this process: the setting must come first (gpu_check sets it)
    else:
        monkeypatch.delenv(name, raising=False)  # the run sets it
    inside: list[tuple] = []
    callback = lambda event: inside.append((torch.are_deterministic_algorithms_enabled(), torch.backends.cudnn.deterministic,
                                            torch.backends.cudnn.benchmark, os.environ.get(name)))
    before = torch.are_deterministic_algorithms_enabled(), torch.backends.cudnn.deterministic
    results = train_and_evaluate(split, device=str(DEVICE), deterministic=True, callback=callback, **{**TINY, "arch": "lstm", "pos": "none"})
    assert inside and set(inside) == {(True, True, False, value)}
    assert (torch.are_deterministic_algorithms_enabled(), torch.backends.cudnn.deterministic) == before  # put back after the run
    assert results["execution"]["deterministic"] is True and results["settings"]["deterministic"] is True
    again = train_and_evaluate(split, device=str(DEVICE), deterministic=True, **{**TINY, "arch": "lstm", "pos": "none"})
    assert again["per_seed"][0]["final_loss"] == results["per_seed"][0]["final_loss"]  # bitwise, on this device
    plain = train_and_evaluate(split, device=str(DEVICE), callback=callback, **{**TINY, "arch": "lstm", "pos": "none"})
    assert plain["execution"]["deterministic"] is False and inside[-1][0] is before[0]


def test_deterministic_is_refused_once_cuda_started_without_the_cublas_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    from gengap.baselines import cuda

    monkeypatch.delenv(cuda.CUBLAS_WORKSPACE[0], raising=False)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    with pytest.raises(BaselineError, match="CUBLAS_WORKSPACE_CONFIG=:4096:8"):
        with cuda.deterministic_mode(True, torch.device("cuda")):
            pass
    monkeypatch.setenv(cuda.CUBLAS_WORKSPACE[0], ":16:8")  # set by the user before CUDA started: kept
    with cuda.deterministic_mode(True, torch.device("cuda")):
        assert os.environ[cuda.CUBLAS_WORKSPACE[0]] == ":16:8" and torch.are_deterministic_algorithms_enabled()


def test_the_cli_and_a_sweep_file_take_deterministic(tmp_path: Path) -> None:
    import argparse

    from gengap.baselines.cli import _settings, add_commands
    from gengap.sweep_config import SweepError, parse_sweep

    parser = argparse.ArgumentParser()
    add_commands(parser.add_subparsers())
    chosen = _settings(parser.parse_args(["train", "r", "--out", "o", "--deterministic"]))
    assert chosen["deterministic"] is True
    assert "deterministic" not in _settings(parser.parse_args(["train", "r", "--out", "o"]))
    (tmp_path / "rel" / "data").mkdir(parents=True)
    assert parse_sweep("release: rel\nconfigs: x\ntrain: {deterministic: true}\n", "s.yaml", tmp_path).overrides == {"deterministic": True}
    with pytest.raises(SweepError, match="s.yaml line 3"):
        parse_sweep("release: rel\nconfigs: x\ntrain: {deterministic: 1}\n", "s.yaml", tmp_path)


# -- out-of-memory backoff in evaluation (item 6) ----------------------------------------------


def test_evaluation_halves_its_batch_when_cuda_runs_out_of_memory(split, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture) -> None:
    """Decoding more than 4 examples at once raises CUDA's out-of-memory error (simulated): the run
    halves its evaluation batch 16 -> 8 -> 4, says so on stderr and in results.json, keeps 4 for
    the rest of the run, and ends with the scores of a run that evaluated 4 at a time."""
    from gengap.baselines import training

    sizes: list[int] = []
    real = training.greedy_decode

    def decode(*args, batch_size: int, **kwargs):
        sizes.append(batch_size)
        if batch_size > 4:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 6.00 GiB (simulated)")
        return real(*args, batch_size=batch_size, **kwargs)

    settings = {**TINY, "steps": 4, "eval_every": 2, "eval_examples": 8, "eval_limit": 12}
    reference = train_and_evaluate(split, device=str(DEVICE), eval_batch_size=4, **settings)
    monkeypatch.setattr(training, "greedy_decode", decode)
    results = train_and_evaluate(split, device=str(DEVICE), out=tmp_path / "run", eval_batch_size=16, **settings)
    assert sizes[:3] == [16, 8, 4] and set(sizes[3:]) == {4}  # halved once, kept for the later evaluations
    first = len(split.validation[:8])  # the first evaluation: the periodic validation subset
    assert results["execution"]["eval_oom_backoffs"] == [{"from": 16, "to": 8, "examples": first}, {"from": 8, "to": 4, "examples": first}]
    assert results["execution"]["eval_batch_size"] == {"requested": 16, "used": 4}
    err = capsys.readouterr().err
    assert err.count(f"CUDA ran out of memory decoding {first} examples") == 2 and "retrying 4 at a time" in err
    strip = lambda r: [{k: v for k, v in seed.items() if k not in ("tokens_per_s", "train_seconds")} for seed in r["per_seed"]]
    assert strip(results) == strip(reference)
    assert json.loads((tmp_path / "run" / "results.json").read_text())["execution"]["eval_batch_size"]["used"] == 4


def test_out_of_memory_at_one_example_is_raised() -> None:
    from gengap.baselines.cuda import with_oom_backoff

    halvings: list[tuple[int, int]] = []

    def never(batch_size: int) -> None:
        raise torch.cuda.OutOfMemoryError("simulated")

    with pytest.raises(torch.cuda.OutOfMemoryError):
        with_oom_backoff(never, 5, lambda old, new: halvings.append((old, new)))
    assert halvings == [(5, 2), (2, 1)]
    assert with_oom_backoff(lambda b: b * 10, 3, lambda old, new: halvings.append((old, new))) == (30, 3)
    with pytest.raises(ValueError):  # any other error is the caller's
        with_oom_backoff(lambda b: int("x"), 8, lambda old, new: None)
