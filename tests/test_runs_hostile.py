"""Issues 23 and 30, training and evaluation: run directories that know what they hold, numeric
options that are finite and in range, one line instead of a traceback for damaged run and
model files, and run files never written through a link.

Each case runs gengap (a subprocess, or ``gengap.cli.main`` where the case patches something
in-process) and checks the exit code, the one line printed and that nothing else changed on
disk. Runs are the tiniest that train: 2 steps of a 1-layer model of width 16.
"""

from __future__ import annotations

import errno
import io
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gengap.cli import main
from tests.output_helpers import gengap, tree
from tests.test_output_discipline import TINY

torch = pytest.importorskip("torch")

TINY_RUN = ["--preset", "tiny", "--steps", "2", "--eval-every", "2", "--eval-examples", "2", "--layers", "1", "--d-model", "16", "--heads", "2"]
PARITY = "parity_check-length"
EVEN = "even_pairs-length"  # same vocabulary as parity_check: only the run's identity tells them apart


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny release (parity_check-length, even_pairs-length) and a finished parity run, run/."""
    root = tmp_path_factory.mktemp("runs")
    (root / "tiny.yaml").write_text(TINY)
    assert main(["release", str(root / "tiny.yaml"), "--out", str(root / "release"), "--workers", "1"]) == 0
    assert main(["train", str(root / "release"), "--config", PARITY, *TINY_RUN, "--out", str(root / "run")]) == 0
    return root


@pytest.fixture()
def home(made: Path, tmp_path: Path) -> Path:
    """A copy of the finished run, the release beside it (a link to the module's: run.json names
    the release by path), and a victims/ folder that links may point at."""
    (tmp_path / "release").symlink_to(made / "release")
    shutil.copytree(made / "run", tmp_path / "run")
    (tmp_path / "victims").mkdir()
    (tmp_path / "victims" / "thesis.tex").write_text("years of work\n")
    return tmp_path


def train(home: Path, *extra: str, config: str = PARITY, out: str = "run") -> subprocess.CompletedProcess[str]:
    return gengap("train", str((home / "release").resolve()), "--config", config, *TINY_RUN, "--out", str(home / out), *extra, cwd=home)


def one_error_line(stderr: str) -> bool:
    """stderr ends in exactly one line `gengap: error: ...`; any line before it is a training progress line
    (a run that fails after it started has said which seed it was on), never a traceback."""
    lines = stderr.splitlines()
    return (stderr.endswith("\n") and bool(lines) and lines[-1].startswith("gengap: error: ")
            and all(line.startswith("gengap: train ") for line in lines[:-1]))


def failed(result: subprocess.CompletedProcess[str], code: int, fragment: str) -> None:
    """Exit code, exactly one line `gengap: error: ...` holding fragment, no traceback, nothing on stdout."""
    assert result.returncode == code, (result.returncode, result.stderr[-3000:])
    assert one_error_line(result.stderr), result.stderr[-3000:]
    assert fragment in result.stderr and result.stdout == "", result.stderr


def refused_in_process(argv: list[str], capsys: pytest.CaptureFixture[str], code: int, fragment: str) -> None:
    assert main(argv) == code
    captured = capsys.readouterr()
    assert one_error_line(captured.err), captured.err
    assert fragment in captured.err, captured.err


def result_of(home: Path, seed: int = 0) -> dict:
    return json.loads((home / "run" / f"seed-{seed}" / "result.json").read_text())


# -- 1. run directories that know what they hold -------------------------------------------------


@pytest.mark.parametrize(
    "deleted, config, extra, message",
    [
        ("run.json", EVEN, [], "seed-0/result.json belongs to a run of other data (config 'parity_check-length', not 'even_pairs-length')"),
        pytest.param("seed-0/result.json", EVEN, [], "trained on other data (config 'parity_check-length')", marks=pytest.mark.slow),
        pytest.param("run.json+seed-0/result.json", EVEN, [], "seed-0/checkpoint.pt belongs to a run of other data", marks=pytest.mark.slow),
        pytest.param("run.json+tokenizer.json", PARITY, ["--d-model", "32"], "belongs to a run with other settings (d_model 16 -> 32)",
                     marks=pytest.mark.slow),
    ],
)
def test_resume_refuses_another_run_whatever_file_was_deleted(home: Path, deleted: str, config: str, extra: list[str], message: str) -> None:
    """Issue 23: with run.json deleted, `train --resume --config even_pairs-length` on a
    parity_check run (same vocabulary) exited 0 and evaluated the parity checkpoint as even_pairs."""
    for name in deleted.split("+"):
        (home / "run" / name).unlink()
    before = tree(home)
    failed(train(home, "--resume", *extra, config=config), 2, message)
    assert tree(home) == before


def test_a_seed_result_of_another_run_is_never_merged(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A seed-N/result.json copied from another run (its identity names another config), or one
    without an identity, is refused, not merged into results.json."""
    (home / "run" / "results.json").unlink()
    shutil.copytree(home / "run" / "seed-0", home / "run" / "seed-1")
    foreign = result_of(home)
    foreign["seed"] = 1
    foreign["run"] = {**foreign["run"], "config": EVEN, "data_fingerprint": "0" * 64}
    (home / "run" / "seed-1" / "result.json").write_text(json.dumps(foreign))
    before = tree(home)
    failed(train(home, "--seeds", "0,1", "--resume"), 2, "seed-1/result.json belongs to a run of other data (config 'even_pairs-length'")
    assert tree(home) == before
    del foreign["run"]
    (home / "run" / "seed-1" / "result.json").write_text(json.dumps(foreign))
    before = tree(home)
    argv = ["train", str((home / "release").resolve()), "--config", PARITY, *TINY_RUN, "--out", str(home / "run"), "--seeds", "0,1", "--resume"]
    refused_in_process(argv, capsys, 1, "seed-1/result.json records no run identity")
    assert tree(home) == before
    # a seed folder of another run is refused even when the command does not ask for that seed
    foreign["run"] = {**result_of(home)["run"], "config": EVEN}
    (home / "run" / "seed-1" / "result.json").write_text(json.dumps(foreign))
    before = tree(home)
    refused_in_process(argv[: argv.index("--seeds")] + ["--resume"], capsys, 2, "seed-1/result.json belongs to a run of other data")
    assert tree(home) == before


# -- 2. numeric options ----------------------------------------------------------------------------


def test_numeric_options_must_be_finite_and_in_range(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--lr inf`, `--weight-decay nan` and the like: one usage line, exit 2, nothing created."""
    before = tree(home)
    failed(train(home, "--lr", "inf", out="new"), 2, "lr must be a finite number > 0, got inf")
    cases = [
        (["--weight-decay", "nan"], "weight_decay must be a finite number >= 0, got nan"),
        (["--weight-decay", "inf"], "weight_decay must be a finite number >= 0, got inf"),
        (["--lr", "1e400"], "lr must be a finite number > 0, got inf"),
        (["--until-id", "nan"], "until_id must be a number in (0, 1], got nan"),
        (["--reach=-inf"], "reach must be a number in (0, 1], got -inf"),
        (["--label-noise", "nan"], "label_noise must be a number in [0, 1), got nan"),
        (["--steps", str(10**13)], "steps must be an integer from 1 to 1,000,000,000,000"),
    ]
    for extra, message in cases:
        refused_in_process(["train", str((home / "release").resolve()), "--config", PARITY, *TINY_RUN, "--out", str(home / "new"), *extra], capsys, 2, message)
    refused_in_process(["eval", str(home / "victims"), "--release", str((home / "release").resolve()), "--config", PARITY, "--shots", str(10**13),
                        "--out", str(home / "new")], capsys, 2, "shots must be an integer from 0")
    assert tree(home) == before


def test_the_python_api_and_sweep_files_check_numbers_alike(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from gengap.baselines.errors import BaselineError
    from gengap.baselines.training import TrainSettings, train_and_evaluate

    for bad in ({"lr": float("nan")}, {"grad_clip": float("inf")}, {"steps": 2.5}, {"seeds": (0, True)}, {"min_lr_ratio": float("nan")}):
        with pytest.raises(BaselineError, match="must be"):
            train_and_evaluate(home / "release", PARITY, out=home / "new", **bad)
        with pytest.raises(BaselineError, match="must be"):
            TrainSettings(**bad).resolve()
    (home / "sweep.yaml").write_text(f"release: release\nconfigs: [{PARITY}]\npresets: [tiny]\ntrain: {{weight_decay: 1.0e+999}}\n")
    before = tree(home)
    assert main(["sweep", str(home / "sweep.yaml"), "--out", str(home / "sweep")]) == 2
    assert "sweep.yaml line 4" in capsys.readouterr().err
    assert tree(home) == before


def test_a_diverged_loss_leaves_strict_json_and_marks_the_run(home: Path) -> None:
    """A loss that becomes NaN (lr 1e30) is written as null, the seed stops there and is marked
    diverged; every file stays JSON that strict parsers (and resume) read."""
    result = train(home, "--lr", "1e30", "--warmup", "0", "--steps", "6", out="diverged")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "diverged: the loss was not finite at step" in result.stdout
    run = home / "diverged"

    def strict(text: str) -> object:
        return json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in a run file"))

    results = strict((run / "results.json").read_text())
    assert results["diverged"] == [0] and results["per_seed"][0]["diverged_at"] in (2, 4, 6)
    rows = [strict(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert rows[-1]["loss"] is None and rows[-1]["step"] == results["per_seed"][0]["diverged_at"]
    strict((run / "seed-0" / "result.json").read_text())


# -- 3. damaged run and model files: one line, exit 1 ---------------------------------------------


def test_damaged_run_files_are_one_line_not_a_traceback(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--resume with a torch file that is not a checkpoint, with another run's checkpoint, with
    run.json holding [1,2], with a corrupt seed result: one line, exit 1, nothing changed."""
    run = home / "run"
    (run / "results.json").unlink()
    (run / "seed-0" / "result.json").unlink()
    checkpoint = (run / "seed-0" / "checkpoint.pt").read_bytes()
    torch.save({"weights": torch.zeros(3)}, run / "seed-0" / "checkpoint.pt")
    before = tree(home)
    failed(train(home, "--resume"), 1, "seed-0/checkpoint.pt is not a gengap training checkpoint")
    assert tree(home) == before
    argv = ["train", str((home / "release").resolve()), "--config", PARITY, *TINY_RUN, "--out", str(run), "--resume"]

    state = torch.load(io.BytesIO(checkpoint), weights_only=True)  # another run's weights under this run's identity
    state["model"] = {name: torch.zeros(3) for name in state["model"]}
    torch.save(state, run / "seed-0" / "checkpoint.pt")
    before = tree(home)
    refused_in_process(argv, capsys, 1, "seed-0/checkpoint.pt does not fit this run's model and optimizer")
    assert tree(home) == before

    (run / "seed-0" / "checkpoint.pt").write_bytes(checkpoint[: len(checkpoint) // 2])
    before = tree(home)
    refused_in_process(argv, capsys, 1, "cannot load checkpoint")
    assert tree(home) == before

    (run / "seed-0" / "checkpoint.pt").write_bytes(checkpoint)
    (run / "seed-0" / "result.json").write_text('{"seed": 0, "id_exact_')
    before = tree(home)
    refused_in_process(argv, capsys, 1, "cannot read a finished seed's result")
    assert tree(home) == before

    (run / "run.json").write_text("[1,2]\n")
    before = tree(home)
    refused_in_process(argv, capsys, 1, "run.json is not the record of a gengap run")
    assert tree(home) == before


def test_a_torn_last_metrics_line_is_dropped_on_resume(home: Path) -> None:
    """What a full disk leaves: the last row of metrics.jsonl cut short. Resume drops it and goes on."""
    run = home / "run"
    rows = (run / "metrics.jsonl").read_text()
    (run / "results.json").unlink()
    (run / "seed-0" / "result.json").unlink()
    (run / "metrics.jsonl").write_text(rows + '{"seed": 0, "step": 4, "lo')
    result = train(home, "--resume")
    assert result.returncode == 0, result.stderr[-3000:]
    assert (run / "metrics.jsonl").read_text() == rows
    assert json.loads((run / "results.json").read_text())["seeds"] == [0]


def test_a_full_disk_at_checkpoint_save_is_one_line_and_leaves_no_tmp(home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(torch, "save", full)
    refused_in_process(["train", str((home / "release").resolve()), "--config", PARITY, *TINY_RUN, "--out", str(home / "full")], capsys, 2,
                       "checkpoint.pt: No space left on device")
    assert not list((home / "full").rglob("*.tmp"))


def test_a_model_too_large_for_memory_is_refused_before_allocating(home: Path) -> None:
    before = tree(home)
    failed(train(home, "--d-model", "100000000", out="huge"), 2, "d_model 100,000,000 and 1 layers has at least")
    assert tree(home) == before  # no run directory left behind


# -- 4. run files never written through a link ----------------------------------------------------


@pytest.mark.parametrize(
    "name, message",
    [
        ("metrics.jsonl", "metrics.jsonl is a symbolic link or not a regular file"),
        pytest.param("seed-0", "seed-0 is a symbolic link or not a directory", marks=pytest.mark.slow),
        pytest.param("plots", "plots: a symbolic link or a file is in the place of a directory", marks=pytest.mark.slow),
    ],
)
def test_links_in_a_run_directory_are_refused(home: Path, name: str, message: str) -> None:
    """metrics.jsonl appended through a link, seed-N or plots/ linked to a folder outside: refused, the victim intact."""
    run = home / "run"
    (run / "results.json").unlink()
    (run / "seed-0" / "result.json").unlink()
    victims = home / "victims"
    if name == "metrics.jsonl":
        (run / name).unlink()
        (run / name).symlink_to(victims / "thesis.tex")
    else:  # the folder moved outside, a link to it in its place
        shutil.move(run / name, victims / name)
        (run / name).symlink_to(victims / name)
    before = tree(victims)
    failed(train(home, "--resume"), 2, message)
    assert tree(victims) == before


# -- gengap eval: damaged model directories ------------------------------------------------------


@pytest.fixture(scope="module")
def models(made: Path) -> Path:
    """Two tiny Hugging Face models with tokenizers of different sizes (tests.harness_models)."""
    pytest.importorskip("transformers")
    from tests.harness_models import tiny_model

    texts = [" ".join(f"w{i}x{j}y" for j in range(30)) for i in range(100)]
    tiny_model(made / "model", texts, vocab_size=270)
    tiny_model(made / "wide", texts, vocab_size=400)
    return made


@pytest.mark.parametrize("damage", ["truncated weights", "another model's tokenizer"])
def test_eval_of_a_damaged_model_directory_is_one_line(models: Path, tmp_path: Path, damage: str) -> None:
    model = tmp_path / "model"
    shutil.copytree(models / "model", model)
    if damage == "truncated weights":
        weights = (model / "model.safetensors").read_bytes()
        (model / "model.safetensors").write_bytes(weights[: len(weights) // 3])
        message = "cannot load a causal LM from"
    else:
        for name in os.listdir(models / "wide"):
            if "token" in name:
                shutil.copy(models / "wide" / name, model / name)
        message = "the tokenizer does not match the model"
    assert len(json.loads((models / "wide" / "tokenizer.json").read_text())["model"]["vocab"]) > 300 > len(json.loads((models / "model" / "tokenizer.json").read_text())["model"]["vocab"])
    before = tree(tmp_path)
    result = gengap("eval", str(model), "--release", str(models / "release"), "--config", PARITY, "--limit", "2", "--device", "cpu",
                    "--out", str(tmp_path / "eval"), cwd=tmp_path)
    failed(result, 1, message)
    assert tree(tmp_path) == before


def test_a_full_disk_inside_torchs_writer_is_one_line_not_a_torch_traceback(home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 38, item 16: on a full disk torch's zip writer raises RuntimeError ("unexpected pos
    ..."), which was a traceback. The handle it writes to here refuses every byte past the 100th
    with ENOSPC, as a full file system does."""
    real_save = torch.save

    class Full(io.RawIOBase):
        def __init__(self) -> None:
            self.written = 0

        def writable(self) -> bool:
            return True

        def write(self, data: bytes) -> int:
            if self.written + len(data) > 100:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            self.written += len(data)
            return len(data)

    monkeypatch.setattr(torch, "save", lambda state, handle: real_save(state, io.BufferedWriter(Full())))
    refused_in_process(["train", str((home / "release").resolve()), "--config", PARITY, *TINY_RUN, "--out", str(home / "full")], capsys, 2,
                       "cannot write the checkpoint")
    assert not list((home / "full").rglob("*.tmp"))


@pytest.mark.parametrize("tokenizer", ["none", "word level"])
def test_eval_of_a_model_without_a_usable_tokenizer_is_one_line(models: Path, tmp_path: Path, tokenizer: str) -> None:
    """Issue 38, item 17: a model directory without tokenizer files was an IndexError, a WordLevel
    tokenizer (no pad, no end token) a ValueError inside transformers."""
    model = tmp_path / "model"
    shutil.copytree(models / "model", model)
    for name in os.listdir(model):
        if name.startswith(("tokenizer", "special_tokens", "chat_template")):
            (model / name).unlink()
    if tokenizer == "word level":
        from tokenizers import Tokenizer, models as tokenizer_models, pre_tokenizers
        from transformers import PreTrainedTokenizerFast

        words = Tokenizer(tokenizer_models.WordLevel({"[UNK]": 0, **{str(i): i + 1 for i in range(10)}}, unk_token="[UNK]"))
        words.pre_tokenizer = pre_tokenizers.Whitespace()
        PreTrainedTokenizerFast(tokenizer_object=words).save_pretrained(model)
    before = tree(tmp_path)
    result = gengap("eval", str(model), "--release", str(models / "release"), "--config", PARITY, "--limit", "2", "--device", "cpu",
                    "--out", str(tmp_path / "eval"), cwd=tmp_path)
    if tokenizer == "none":
        failed(result, 2, "has no tokenizer files")
    else:
        failed(result, 1, "the tokenizer has neither a pad token nor an end token")
    assert tree(tmp_path) == before
