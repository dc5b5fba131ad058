"""What "learned" means: ID exact match averaged over input lengths, the --until-id rule with its
extra steps (learned_at, stopped_at), and their resume."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from gengap.baselines.learned import id_figure, learned_at, seed_learned, stop_step
from gengap.baselines.metrics import aggregate, score, seed_length_mean, seed_summary


def rec(tokens: int, target: str = "a") -> dict:
    return {"input": " ".join(["x"] * tokens), "target": target}


# -- exact match averaged over input lengths -------------------------------------------------


def test_each_input_length_counts_once_however_many_records_it_has() -> None:
    # length 2: three records, all right; length 5: one record, wrong; length 7: two, one right
    records = [rec(2), rec(2), rec(2), rec(5), rec(7), rec(7)]
    predictions = ["a", "a", "a", "b", "a", "b"]
    scored = score(records, predictions)
    assert scored["exact_match"] == pytest.approx(4 / 6)  # by records
    assert scored["length_mean_exact_match"] == pytest.approx((1.0 + 0.0 + 0.5) / 3)  # by lengths
    ood = score([rec(9), rec(9), rec(12)], ["a", "a", "b"])
    summary = seed_summary(scored, ood)
    assert summary["id_length_mean_exact_match"] == pytest.approx(0.5)
    assert summary["ood_length_mean_exact_match"] == pytest.approx(0.5) and summary["ood_exact_match"] == pytest.approx(2 / 3)
    assert score([], [])["length_mean_exact_match"] is None


@given(st.lists(st.tuples(st.integers(1, 6), st.booleans()), min_size=1, max_size=40))
def test_the_length_mean_is_the_mean_of_the_per_length_exact_matches(cells: list[tuple[int, bool]]) -> None:
    records = [rec(n) for n, _ in cells]
    scored = score(records, ["a" if ok else "b" for _, ok in cells])
    lengths = sorted({n for n, _ in cells})
    per_length = [sum(ok for n, ok in cells if n == k) / sum(1 for n, _ in cells if n == k) for k in lengths]
    assert scored["length_mean_exact_match"] == pytest.approx(sum(per_length) / len(per_length))
    if len(lengths) == 1:
        assert scored["length_mean_exact_match"] == pytest.approx(scored["exact_match"])


def _seed(seed: int, id_em: float, by_length: dict[str, float], **extra) -> dict:
    return {"seed": seed, "id_exact_match": id_em, "ood_exact_match": 0.0, "gap": id_em, "id_token_accuracy": id_em,
            "ood_token_accuracy": 0.0, "by_length": {"id": by_length, "ood": {"9": 0.0}}, **extra}


def test_seeds_and_their_aggregate_carry_the_length_means_and_older_results_are_read_from_by_length() -> None:
    new = _seed(0, 0.9, {"2": 1.0, "5": 0.2}, id_length_mean_exact_match=0.6, ood_length_mean_exact_match=0.0)
    old = _seed(1, 0.9, {"2": 1.0, "5": 0.4})  # written before the per-length means existed
    assert seed_length_mean(new, "id") == 0.6 and seed_length_mean(old, "id") == pytest.approx(0.7)
    assert seed_length_mean({"by_length": {"id": {}}}, "id") is None
    summary = aggregate([new, old])["id_length_mean_exact_match"]
    assert summary["mean"] == pytest.approx(0.65) and summary["n"] == 2 and summary["min"] == pytest.approx(0.6)
    assert aggregate([_seed(2, 0.9, {})])["id_length_mean_exact_match"]["n"] == 0  # no ID records: no figure


# -- the rule --------------------------------------------------------------------------------


def rows(*figures: float | None, every: int = 10, plain: float = 1.0) -> list[dict]:
    return [{"step": every * (i + 1), "id_exact_match": plain, "id_length_mean_exact_match": f} for i, f in enumerate(figures)]


def test_the_rule_reads_the_per_length_mean_and_needs_two_consecutive_evaluations() -> None:
    assert learned_at(rows(0.5, 0.96, 0.8, 0.97, 0.99), 0.95) == 50
    assert learned_at(rows(0.99), 0.95) is None  # one evaluation is not two
    assert learned_at(rows(0.96, 0.94, 0.96), 0.95) is None
    assert learned_at(rows(0.99, 0.99), None) is None
    assert learned_at(rows(0.5, 0.5, plain=1.0), 0.95) is None  # plain exact match 1.0 does not count
    assert learned_at(rows(None, 0.99, 0.99), 0.95) == 30
    assert id_figure({"id_exact_match": 0.97}) == 0.97  # a row written before the per-length mean existed
    assert learned_at([{"step": 5, "id_exact_match": 0.97}, {"step": 10, "id_exact_match": 0.98}], 0.95) == 10


def test_the_stop_step_adds_the_extra_share_of_the_learned_step_capped_by_steps() -> None:
    history = rows(0.5, 0.99, 0.99)  # learned at 30
    assert stop_step(history, 0.95, 0.0, 1000) == 30
    assert stop_step(history, 0.95, 0.1, 1000) == 33
    assert stop_step(history, 0.95, 0.5, 1000) == 45
    assert stop_step(history, 0.95, 0.01, 1000) == 31  # ceil(30.3)
    assert stop_step(history, 0.95, 2.0, 50) == 50  # capped
    assert stop_step(rows(0.5, 0.5), 0.95, 0.5, 1000) == 1000  # not learned: the cap
    assert stop_step(rows(0.99, 0.99, every=10), 0.95, 0.1, 1000) == 22  # 20 * 1.1 is 22, not 23 (binary 0.1)


@given(learned=st.integers(1, 10**6), extra=st.floats(0, 5, allow_nan=False), steps=st.integers(1, 10**7))
def test_the_stop_step_is_the_ceiling_written_out(learned: int, extra: float, steps: int) -> None:
    history = [{"step": learned - 1 if learned > 1 else 0, "id_length_mean_exact_match": 1.0}, {"step": learned, "id_length_mean_exact_match": 1.0}]
    stop = stop_step(history, 1.0, extra, steps)
    assert stop <= steps
    if stop < steps:
        assert stop >= learned * (1 + extra) - 1e-6 * learned and stop - 1 < learned * (1 + extra) + 1e-6 * learned
        assert stop >= learned


def test_a_seed_learned_when_it_met_its_rule_or_without_one_when_its_per_length_id_reaches_the_threshold() -> None:
    assert seed_learned({"converged": True, "id_length_mean_exact_match": 0.1}) is True
    assert seed_learned({"converged": False, "id_length_mean_exact_match": 1.0}) is False
    assert seed_learned({"converged": None, "id_length_mean_exact_match": 0.96}) is True
    assert seed_learned({"converged": None, "id_length_mean_exact_match": 0.94}) is False
    assert seed_learned({"id_length_mean_exact_match": 0.94}, threshold=0.9) is True
    assert seed_learned({"id_exact_match": 0.99, "by_length": {"id": {"2": 1.0, "9": 0.5}}}) is False  # older result: from by_length
    assert seed_learned({"id_exact_match": 0.99}) is None


# -- in a run ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_split():
    from gengap.splits import sample_length_split

    return sample_length_split("reverse_string", (1, 6), (7, 9), {"train": 300, "validation": 40, "test": 40}, seed=1)


RUN = dict(arch="rnn", preset="tiny", eval_examples=4, seeds=(0,), d_model=8, plots=False)


def _script(monkeypatch: pytest.MonkeyPatch, by_step: dict[int, float], plain: float | None = None) -> None:
    """Periodic evaluations at step s report ID exact match averaged over lengths by_step[s] (0 when
    absent) and, with plain, that plain ID exact match; the final evaluation runs for real. Keyed
    by step, so a resumed run sees what an uninterrupted one saw."""
    from gengap.baselines import training

    evaluate, periodic_row = training.Run.evaluate, training.Run.periodic_row
    current: dict[str, int] = {}

    def row(self, model, trainer, progress, *args):
        current["step"] = progress.step
        return periodic_row(self, model, trainer, progress, *args)

    def scripted(self, model, side, mistakes, iterations=None):
        scores = evaluate(self, model, side, mistakes, iterations)
        if side is self.periodic["id"] and "step" in current:
            scores = {**scores, "length_mean_exact_match": by_step.get(current["step"], 0.0)}
            if plain is not None:
                scores["exact_match"] = plain
        return scores

    monkeypatch.setattr(training.Run, "periodic_row", row)
    monkeypatch.setattr(training.Run, "evaluate", scripted)


def _metrics(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def test_periodic_rows_carry_the_length_means_and_the_rule_reads_them_not_plain_exact_match(small_split, tmp_path: Path,
                                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from gengap.baselines.training import train_and_evaluate

    _script(monkeypatch, {}, plain=1.0)  # plain ID exact match 1.0 at every evaluation, per-length mean 0
    results = train_and_evaluate(small_split, out=tmp_path / "run", steps=8, eval_every=2, until_id=0.9, **RUN)
    seed = results["per_seed"][0]
    assert (seed["stopped_at"], seed["learned_at"], seed["converged"]) == (8, None, False)
    rows = _metrics(tmp_path / "run")
    assert [r["step"] for r in rows] == [2, 4, 6, 8] and all(r["id_exact_match"] == 1.0 and r["id_length_mean_exact_match"] == 0.0 for r in rows)
    assert all(0 <= r["ood_length_mean_exact_match"] <= 1 for r in rows)
    assert seed["id_length_mean_exact_match"] == pytest.approx(sum(seed["by_length"]["id"].values()) / len(seed["by_length"]["id"]))
    assert results["aggregate"]["id_length_mean_exact_match"]["n"] == 1


def test_the_extra_steps_after_the_rule_is_met_and_learned_at(small_split, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gengap.baselines.training import train_and_evaluate

    _script(monkeypatch, {4: 0.99, 6: 0.99, 8: 0.2})  # met at 6 (4 and 6); a later drop does not unmeet it
    results = train_and_evaluate(small_split, out=tmp_path / "run", steps=40, eval_every=2, until_id=0.95, until_extra=0.5, **RUN)
    seed = results["per_seed"][0]
    assert (seed["learned_at"], seed["stopped_at"], seed["converged"]) == (6, 9, True)  # ceil(6 * 1.5) = 9
    assert [r["step"] for r in _metrics(tmp_path / "run")] == [2, 4, 6, 8, 9]  # an evaluation at the stop step
    assert results["settings"]["until_extra"] == 0.5 and results["aggregate"]["converged"] == {"met": 1, "checked": 1}
    capped = train_and_evaluate(small_split, steps=8, eval_every=2, until_id=0.95, until_extra=1.0, **RUN)["per_seed"][0]
    assert (capped["learned_at"], capped["stopped_at"]) == (6, 8)


def test_a_run_killed_during_its_extra_steps_resumes_to_the_same_end(small_split, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gengap.baselines.errors import BaselineError
    from gengap.baselines.training import train_and_evaluate

    _script(monkeypatch, {4: 0.99, 6: 0.99})
    settings = dict(steps=40, eval_every=2, checkpoint_every=2, until_id=0.95, until_extra=0.5, **RUN)
    whole = train_and_evaluate(small_split, out=tmp_path / "whole", **settings)

    def kill(event: dict) -> None:
        if event["step"] == 7:  # learned at 6 (checkpointed), stopping at 9
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_and_evaluate(small_split, out=tmp_path / "cut", callback=kill, **settings)
    with pytest.raises(BaselineError, match="until_extra 0.5 -> 0.25"):
        train_and_evaluate(small_split, out=tmp_path / "cut", resume=True, **{**settings, "until_extra": 0.25})
    seen: list[int] = []
    resumed = train_and_evaluate(small_split, out=tmp_path / "cut", resume=True, callback=lambda e: seen.append(e["step"]), **settings)
    assert seen == [7, 8, 9]
    timing = {"tokens_per_s", "train_seconds"}
    assert [{k: v for k, v in s.items() if k not in timing} for s in resumed["per_seed"]] == [
        {k: v for k, v in s.items() if k not in timing} for s in whole["per_seed"]]
    figures = lambda name: [(r["step"], r["loss"], r["id_length_mean_exact_match"]) for r in _metrics(tmp_path / name)]  # noqa: E731
    assert figures("cut") == figures("whole")
    seen.clear()
    again = train_and_evaluate(small_split, out=tmp_path / "whole", resume=True, callback=lambda e: seen.append(e["step"]), **settings)
    assert seen == [] and again["per_seed"][0]["stopped_at"] == 9  # a finished seed trains no further


def test_until_extra_needs_until_id_and_a_non_negative_number() -> None:
    from gengap.baselines.errors import BaselineError
    from gengap.baselines.settings import TrainSettings

    with pytest.raises(BaselineError, match="until_extra needs until_id"):
        TrainSettings(until_extra=0.5).resolve()
    for bad in (-0.1, math.inf, math.nan):
        with pytest.raises(BaselineError, match="until_extra must be"):
            TrainSettings(until_id=0.9, until_extra=bad).resolve()
    assert TrainSettings(until_id=0.9, until_extra=0.25).resolve().until_extra == 0.25


# -- the report's verdict ---------------------------------------------------------------------


def results(config: str, seeds: list[dict], until_id: float | None = None, **extra) -> dict:
    return {"config": config, "pos": "rope", "preset": "tiny", "steps": 10, "until_id": until_id, "per_seed": seeds,
            "data": {"input_length": {"train": [1, 2]}}, **extra}


def judged(id_by_length: float, converged: bool | None = None, seed: int = 0) -> dict:
    return _seed(seed, 1.0, {"2": 1.0, "9": 2 * id_by_length - 1.0}, id_length_mean_exact_match=id_by_length, converged=converged)


def test_rows_are_not_learned_when_a_seed_missed_its_rule_or_ended_below_the_threshold() -> None:
    from gengap.baselines.report import group_runs

    rows = group_runs([
        results("until", [judged(1.0, True, 0), judged(1.0, False, 1)], until_id=0.99),  # seed 1 never met it (its final figure is 1.0)
        results("met", [judged(0.2, True, 0)], until_id=0.99),  # met the rule: learned, whatever its final figure
        results("plain", [judged(0.97, seed=0), judged(0.9, seed=1)]),
        results("fine", [judged(0.97, seed=0), judged(0.96, seed=1)]),
        results("old", [_seed(0, 0.99, {"2": 1.0, "30": 0.5})]),  # written before the per-length mean: from by_length (0.75)
        results("llm", [judged(0.1)], kind="pretrained"),
    ])
    verdicts = {row["config"]: (row["learned"], row["unlearned_seeds"]) for row in rows}
    assert verdicts == {"until": (False, [1]), "met": (True, []), "plain": (False, [1]), "fine": (True, []), "old": (False, [0]),
                        "llm": (None, [])}
    lenient = {row["config"]: row["learned"] for row in group_runs([results("plain", [judged(0.97), judged(0.9, seed=1)])], learned=0.9)}
    assert lenient == {"plain": True}


def test_the_table_marks_the_gap_of_a_run_not_learned_and_says_why_with_the_threshold() -> None:
    from gengap.baselines.report import group_runs, markdown

    rows = group_runs([results("plain", [judged(0.9)]), results("fine", [judged(0.97)]), results("llm", [judged(0.1)], kind="pretrained")])
    table = markdown(rows)
    lines = {line.split(" | ")[0][2:]: line for line in table.splitlines() if line.startswith("| ") and " | rope | " in line}
    assert lines["plain"].count("†") == 1 and "| 1.000 ± 0.000 † |" in lines["plain"]  # beside the gap (ID 1.0 - OOD 0.0)
    assert "†" not in lines["fine"] and "†" not in lines["llm"]
    assert "| 0.900 ± 0.000 |" in lines["plain"]  # the ID-by-length column
    assert ("† not learned: the model never fit its train distribution, so its gap measures nothing" in table
            and "below 0.95: gengap report --learned EM" in table)
    assert "below 0.8:" in markdown(group_runs([results("plain", [judged(0.5)])], learned=0.8), learned=0.8)
    assert "not learned" not in markdown(group_runs([results("fine", [judged(0.97)])]))


def test_the_report_writes_its_rows_with_the_verdict_to_file_json_and_takes_learned(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from gengap.cli import main

    for name, seeds in {"plain": [judged(0.9)], "fine": [judged(0.97)]}.items():
        (tmp_path / "runs" / name).mkdir(parents=True)
        (tmp_path / "runs" / name / "results.json").write_text(json.dumps(results(name, seeds)))
    assert main(["report", str(tmp_path / "runs"), "--out", str(tmp_path / "report.md")]) == 0
    written = json.loads((tmp_path / "report.json").read_text())
    assert written["format"] == "gengap-baseline-report/1" and written["learned"] == 0.95
    assert {row["config"]: row["learned"] for row in written["rows"]} == {"plain": False, "fine": True}
    assert "report.json" in capsys.readouterr().out
    assert main(["report", str(tmp_path / "runs"), "--learned", "0.85"]) == 0
    assert "†" not in capsys.readouterr().out
    for bad in ("0", "1.5", "nan", "x"):
        assert main(["report", str(tmp_path / "runs"), "--learned", bad]) == 2
        assert capsys.readouterr().err == f"gengap: error: argument --learned: must be a number in (0, 1], got {bad!r}\n"


# -- the options ------------------------------------------------------------------------------


def test_the_cli_and_sweep_files_take_until_extra_and_the_progressive_loss(tmp_path: Path) -> None:
    import argparse

    from gengap.baselines.cli import _settings, add_commands
    from gengap.sweep_config import SweepError, parse_sweep

    parser = argparse.ArgumentParser(prog="gengap")
    add_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["train", "rel", "--arch", "looped", "--until-id", "0.99", "--until-extra", "0.5", "--progressive-loss", "0.3", "--out", "o"])
    chosen = _settings(args)
    assert (chosen["until_extra"], chosen["progressive_loss"], chosen["until_id"]) == (0.5, 0.3, 0.99)
    assert "until_extra" not in _settings(parser.parse_args(["train", "rel", "--out", "o"]))  # the default, 0, from the settings
    (tmp_path / "suite.yaml").write_text("name: s\n")
    sweep = parse_sweep("suite: suite.yaml\nconfigs: [a]\ntrain: {until_id: 0.99, until_extra: 0.5, progressive_loss: 1}\n", "s.yaml", tmp_path)
    assert sweep.overrides == {"until_id": 0.99, "until_extra": 0.5, "progressive_loss": 1}
    for bad in ("until_extra: -1", "progressive_loss: 1.5"):
        with pytest.raises(SweepError, match=f"train.{bad.split(':')[0]}"):
            parse_sweep(f"suite: suite.yaml\nconfigs: [a]\ntrain: {{{bad}}}\n", "s.yaml", tmp_path)


def test_a_run_made_before_until_extra_and_the_progressive_loss_pools_with_a_new_run_of_its_setup() -> None:
    from gengap.baselines.report import group_runs
    from gengap.baselines.settings import TrainSettings
    from gengap.baselines.setup import LEGACY_DEFAULTS, setup_of

    new = results("c", [judged(1.0, seed=0)], settings={"lr": 0.001, "until_extra": 0.0, "progressive_loss": 0.0})
    old = results("c", [judged(1.0, seed=1)], settings={"lr": 0.001})
    assert setup_of(new) == setup_of(old)
    rows = group_runs([new, old])
    assert [(row["model"], row["seeds"]) for row in rows] == [("rope", [0, 1])]
    other = results("c", [judged(1.0, seed=2)], settings={"lr": 0.001, "until_extra": 0.5, "progressive_loss": 0.0})
    assert [row["model"] for row in group_runs([new, other])] == ["rope (until_extra=0.0)", "rope (until_extra=0.5)"]
    assert LEGACY_DEFAULTS == {name: getattr(TrainSettings().resolve(), name) for name in LEGACY_DEFAULTS}


# -- the rule over records (--until-over records) ----------------------------------------------


def test_the_rule_over_records_reads_plain_exact_match_and_not_the_per_length_mean() -> None:
    history = rows(0.5, 0.5, 0.5, plain=0.99)  # per-length mean 0.5 throughout, exact match over records 0.99
    assert learned_at(history, 0.95) is None and learned_at(history, 0.95, "lengths") is None
    assert learned_at(history, 0.95, "records") == 20
    assert stop_step(history, 0.95, 0.5, 1000, "records") == 30 and stop_step(history, 0.95, 0.5, 1000) == 1000
    assert learned_at(rows(0.99, 0.99, plain=0.5), 0.95, "records") is None  # the per-length mean does not count either
    assert id_figure({"id_exact_match": 0.7, "id_length_mean_exact_match": 0.2}, "records") == 0.7


def test_a_run_over_records_stops_when_exact_match_over_records_meets_the_rule(small_split, tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from gengap.baselines.cli import summary
    from gengap.baselines.report import group_runs, markdown
    from gengap.baselines.training import train_and_evaluate

    _script(monkeypatch, {}, plain=1.0)  # plain ID exact match 1.0 at every evaluation, per-length mean 0
    results = train_and_evaluate(small_split, out=tmp_path / "run", steps=40, eval_every=2, until_id=0.9, until_over="records", **RUN)
    seed = results["per_seed"][0]
    assert (seed["learned_at"], seed["stopped_at"], seed["converged"]) == (4, 4, True)  # the same run over lengths: (None, 8, False) above
    assert results["settings"]["until_over"] == "records"
    assert "met --until-id 0.9 over records at step 4, stopped at step 4" in summary(results)
    table = markdown(group_runs([results]))
    assert "1/1 (ID over records ≥ 0.9)" in table


def test_until_over_is_lengths_or_records_and_needs_until_id(tmp_path: Path) -> None:
    import argparse

    from gengap.baselines.cli import _settings, add_commands
    from gengap.baselines.errors import BaselineError
    from gengap.baselines.settings import TrainSettings
    from gengap.sweep_config import SweepError, parse_sweep

    with pytest.raises(BaselineError, match="until_over must be one of lengths, records, train_lengths, got 'tokens'"):
        TrainSettings(until_id=0.9, until_over="tokens").resolve()
    with pytest.raises(BaselineError, match="until_over needs until_id"):
        TrainSettings(until_over="records").resolve()
    assert TrainSettings().resolve().until_over == "lengths"
    parser = argparse.ArgumentParser(prog="gengap")
    add_commands(parser.add_subparsers(dest="command", required=True))
    assert _settings(parser.parse_args(["train", "rel", "--until-id", "0.9", "--until-over", "records", "--out", "o"]))["until_over"] == "records"
    with pytest.raises(SystemExit):
        parser.parse_args(["train", "rel", "--until-over", "tokens", "--out", "o"])
    (tmp_path / "suite.yaml").write_text("name: s\n")
    sweep = parse_sweep("suite: suite.yaml\nconfigs: [a]\ntrain: {until_id: 0.95, until_over: records}\n", "s.yaml", tmp_path)
    assert sweep.overrides == {"until_id": 0.95, "until_over": "records"}
    with pytest.raises(SweepError, match="train.until_over"):
        parse_sweep("suite: suite.yaml\nconfigs: [a]\ntrain: {until_id: 0.95, until_over: tokens}\n", "s.yaml", tmp_path)


def test_a_resume_with_another_until_over_is_refused(small_split, tmp_path: Path) -> None:
    from gengap.baselines.errors import BaselineError
    from gengap.baselines.training import train_and_evaluate

    settings = dict(steps=4, eval_every=2, checkpoint_every=2, until_id=0.99, **RUN)
    train_and_evaluate(small_split, out=tmp_path / "run", until_over="records", **settings)
    with pytest.raises(BaselineError, match="different settings: until_over 'records' -> 'lengths'"):
        train_and_evaluate(small_split, out=tmp_path / "run", resume=True, until_over="lengths", **settings)
