"""What `gengap train` says while it runs: heartbeat lines when stderr is not a terminal, a short
tqdm postfix on one (issue 39 item 5)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gengap.baselines.train_progress import SeedStatus, duration_text, loss_text, postfix

LINE = re.compile(r"^gengap: train rev rnn seed 0: step (\d+)/(\d+)(, loss \S+, ID \d\.\d{3}, OOD \d\.\d{3} \(step (\d+)\))?(, ETA \d+ s)? \(\d+ s\)$")


def test_losses_have_4_significant_digits_and_durations_a_unit() -> None:
    assert loss_text(0.123456789) == "0.1235" and loss_text(1234.5678) == "1235" and loss_text(2.0) == "2"
    assert loss_text(3.3e-07) == "3.3e-07" and loss_text(None) == "nan" and loss_text(float("inf")) == "nan"
    assert [duration_text(s) for s in (4.4, 119, 120, 5000, 7200, 36000)] == ["4 s", "119 s", "2 min", "83 min", "2.0 h", "10.0 h"]
    assert postfix({"loss": 0.98765432123, "id_exact_match": 0.5, "ood_exact_match": 0.0}) == {"loss": "0.9877", "id": "0.500", "ood": "0.000"}


def test_the_status_line_says_step_last_figures_and_eta() -> None:
    status = SeedStatus("train rev rope seed 0", 100, 1100)
    assert status.describe() == "train rev rope seed 0: step 100/1,100"  # nothing trained yet here: no ETA
    status.step, status.started = 600, status.started - 50.0  # 500 steps in 50 s: 500 more take 50 s
    status.row = {"step": 500, "loss": 0.0123456, "id_exact_match": 0.95, "ood_exact_match": 0.0104}
    assert status.describe() == "train rev rope seed 0: step 600/1,100, loss 0.01235, ID 0.950, OOD 0.010 (step 500), ETA 50 s"
    status.step = 1100
    assert status.describe().endswith("(step 500)")  # done: no ETA


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from gengap.splits import sample_length_split

    split = sample_length_split("reverse_string", (1, 4), (5, 6), {"train": 100, "validation": 16, "test": 16}, seed=3)
    root = tmp_path_factory.mktemp("rel")
    (root / "data" / "rev").mkdir(parents=True)
    for part in ("train", "validation", "test"):
        (root / "data" / "rev" / f"{part}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in getattr(split, part)))
    return root


ARGS = ["--config", "rev", "--arch", "rnn", "--preset", "tiny", "--d-model", "8", "--eval-examples", "4"]


def test_train_prints_heartbeat_lines_when_stderr_is_not_a_terminal(release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    from gengap.baselines import training
    from gengap.cli import main

    step = training.Trainer.step

    def slow_step(self, *args):
        time.sleep(0.02)
        return step(self, *args)

    monkeypatch.setattr(training.Trainer, "step", slow_step)
    monkeypatch.setenv("GENGAP_PROGRESS_SECONDS", "0.1")
    assert main(["train", str(release), *ARGS, "--steps", "40", "--eval-every", "10", "--out", str(tmp_path / "run")]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("gengap: train")]
    assert len(lines) >= 3, lines
    parsed = [LINE.match(line) for line in lines]
    assert all(parsed), lines
    assert all(int(m.group(2)) == 40 for m in parsed) and [int(m.group(1)) for m in parsed] == sorted(int(m.group(1)) for m in parsed)
    assert any(m.group(3) for m in parsed) and any(m.group(5) for m in parsed)  # after an evaluation: its figures; an ETA
    assert all(len(line) <= 120 for line in lines)


def test_the_terminal_bar_shows_a_short_loss(release: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from gengap.baselines.training import train_and_evaluate

    train_and_evaluate(release, "rev", arch="rnn", preset="tiny", d_model=8, eval_examples=4, steps=4, eval_every=2, progress=True, plots=False)
    err = capsys.readouterr().err
    losses = re.findall(r"loss=([^,\]\s]+)", err)
    assert losses and all(len(re.sub(r"[.\-e+]", "", value).lstrip("0")) <= 4 for value in losses), losses


def test_the_heartbeat_reads_where_the_seed_is_and_its_stop_step(release: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from contextlib import contextmanager

    from gengap.baselines import training

    seen: list[str] = []
    describe: list = []

    @contextmanager
    def heartbeat(read):
        describe.append(read)
        yield

    evaluate = training.Run.evaluate

    def perfect(self, model, side, mistakes, iterations=None):  # periodic ID always 1.0: the rule is met at step 4
        scores = evaluate(self, model, side, mistakes, iterations)
        return {**scores, "exact_match": 1.0, "length_mean_exact_match": 1.0} if side is self.periodic["id"] else scores

    monkeypatch.setattr(training.Run, "evaluate", perfect)
    training.train_and_evaluate(release, "rev", arch="rnn", preset="tiny", d_model=8, eval_examples=4, steps=100, eval_every=2,
                                until_id=0.9, until_extra=0.5, plots=False, heartbeat=heartbeat,
                                callback=lambda event: seen.append(describe[-1]()))
    assert seen[0].startswith("train rev rnn seed 0: step 1/100, ETA")
    assert seen[3].startswith("train rev rnn seed 0: step 4/6, loss ")  # met at 4: stops at ceil(4 x 1.5)
    assert seen[-1].startswith("train rev rnn seed 0: step 6/6,") and "(step 6)" in seen[-1] and len(seen) == 6
