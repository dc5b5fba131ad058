"""select best: the checkpoint scored is the one validation chose, read on the whole validation part;
the train-weighted ID figure; per-record outcomes in results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from gengap.baselines.errors import BaselineError
from gengap.baselines.learned import id_figure, selected_row
from gengap.baselines.metrics import length_shares, outcome_digest, score, weighted_length_mean
from gengap.baselines.settings import TrainSettings


def rec(tokens: int, target: str = "a", rid: str = "") -> dict:
    return {"id": rid, "input": " ".join(["x"] * tokens), "target": target}


def test_the_train_weighted_figure_weighs_each_length_by_its_train_share() -> None:
    records = [rec(2), rec(2), rec(9)]  # length 2 right twice, length 9 wrong
    scored = score(records, ["a", "a", "b"])
    shares = {2: 0.9, 9: 0.1}
    assert weighted_length_mean(scored["by_length"], shares) == pytest.approx(0.9)
    assert scored["length_mean_exact_match"] == pytest.approx(0.5)  # each length once
    assert weighted_length_mean(scored["by_length"], {5: 1.0}) is None  # no length of the set has a weight
    assert weighted_length_mean(scored["by_length"], {2: 0.3, 5: 0.7}) == pytest.approx(1.0)  # renormalised over the set's lengths
    assert length_shares([rec(2), rec(2), rec(2), rec(4)]) == {2: 0.75, 4: 0.25}


@given(st.lists(st.tuples(st.integers(1, 5), st.booleans()), min_size=1, max_size=30))
def test_weights_of_the_set_itself_give_exact_match_over_records(cells: list[tuple[int, bool]]) -> None:
    records = [rec(n) for n, _ in cells]
    scored = score(records, ["a" if ok else "b" for _, ok in cells])
    assert weighted_length_mean(scored["by_length"], length_shares(records)) == pytest.approx(scored["exact_match"])


def test_outcomes_are_one_flag_per_record_in_order_named_by_the_ids() -> None:
    records = [rec(1, rid="r1"), rec(2, rid="r2"), rec(3, rid="r3")]
    scored = score(records, ["a", "b", "a"], outcomes=True)
    assert scored["outcomes"] == "101" and scored["outcomes_sha256"] == outcome_digest(records)
    assert outcome_digest(records) != outcome_digest(records[::-1])
    assert "outcomes" not in score(records, ["a", "b", "a"])


def test_selected_row_is_the_first_with_the_highest_figure() -> None:
    rows = [{"step": 10, "id_train_weighted_exact_match": 0.5}, {"step": 20, "id_train_weighted_exact_match": 0.9},
            {"step": 30, "id_train_weighted_exact_match": 0.9}, {"step": 40, "id_train_weighted_exact_match": 0.7}]
    assert selected_row(rows, "train_lengths")["step"] == 20
    assert selected_row([], "train_lengths") is None
    assert id_figure({"id_exact_match": 0.3, "id_train_weighted_exact_match": 0.8}, "train_lengths") == 0.8


def test_select_is_checked() -> None:
    with pytest.raises(BaselineError, match="select must be one of"):
        TrainSettings(select="worst").resolve()
    with pytest.raises(BaselineError, match="until_over needs until_id or select best"):
        TrainSettings(until_over="train_lengths").resolve()
    assert TrainSettings(select="best", until_over="train_lengths").resolve().select == "best"


@pytest.fixture(scope="module")
def small_split():
    from gengap.splits import sample_length_split

    return sample_length_split("reverse_string", (1, 6), (7, 9), {"train": 300, "validation": 40, "test": 40}, seed=1)


RUN = dict(arch="rnn", preset="tiny", eval_examples=4, seeds=(0,), d_model=8, plots=False, steps=12, eval_every=2, checkpoint_every=2,
           select="best", until_over="train_lengths")


def _metrics(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def _script(monkeypatch: pytest.MonkeyPatch, by_step: dict[int, float]) -> None:
    """Periodic ID evaluations report the train-weighted figure by_step[step]; the final evaluation runs for real."""
    from gengap.baselines import training

    evaluate, periodic_row = training.Run.evaluate, training.Run.periodic_row
    current: dict[str, int] = {}

    def row(self, model, trainer, progress, *args):
        current["step"] = progress.step
        try:
            return periodic_row(self, model, trainer, progress, *args)
        finally:
            current.pop("step")

    def scripted(self, model, side, mistakes, iterations=None):
        scores = evaluate(self, model, side, mistakes, iterations)
        if side is self.periodic["id"] and "step" in current:
            scores = {**scores, "train_weighted_exact_match": by_step.get(current["step"], 0.0)}
        return scores

    monkeypatch.setattr(training.Run, "periodic_row", row)
    monkeypatch.setattr(training.Run, "evaluate", scripted)


def test_the_scored_model_is_the_selected_one_read_on_the_whole_validation_part(small_split, tmp_path: Path) -> None:
    from gengap.baselines.training import train_and_evaluate

    results = train_and_evaluate(small_split, out=tmp_path / "run", **RUN)
    seed = results["per_seed"][0]
    rows = _metrics(tmp_path / "run")
    best = selected_row(rows, "train_lengths")
    assert seed["select"] == "best" and seed["selected_step"] == best["step"]
    # the selection read the whole validation part, so the final ID figures of the selected model are the row's
    assert seed["selected_id"] == best["id_train_weighted_exact_match"] == pytest.approx(seed["id_train_weighted_exact_match"])
    assert seed["id_exact_match"] == pytest.approx(best["id_exact_match"])
    assert seed["id_n"] == len(small_split.validation)
    assert len(seed["outcomes"]["ood"]) == len(small_split.test) and set(seed["outcomes"]["ood"]) <= {"0", "1"}
    assert seed["outcomes"]["ood"].count("1") / len(small_split.test) == pytest.approx(seed["ood_exact_match"])
    assert seed["outcomes_sha256"]["ood"] == outcome_digest(small_split.test)


def test_the_selected_checkpoint_is_scored_even_when_later_ones_are_worse(small_split, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gengap.baselines.training import train_and_evaluate

    _script(monkeypatch, {4: 0.8, 6: 0.9, 8: 0.9, 10: 0.1})
    results = train_and_evaluate(small_split, out=tmp_path / "run", **RUN)
    seed = results["per_seed"][0]
    assert (seed["selected_step"], seed["selected_id"], seed["stopped_at"]) == (6, 0.9, 12)
    last = train_and_evaluate(small_split, **{**RUN, "select": "last", "until_over": "lengths"})["per_seed"][0]
    assert last["select"] == "last" and "selected_step" not in last


def test_a_killed_select_best_run_resumes_to_the_same_end(small_split, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gengap.baselines.training import train_and_evaluate

    _script(monkeypatch, {4: 0.5, 6: 0.9, 8: 0.2, 10: 0.95, 12: 0.3})
    whole = train_and_evaluate(small_split, out=tmp_path / "whole", **RUN)

    def kill(event: dict) -> None:
        if event["step"] == 9:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_and_evaluate(small_split, out=tmp_path / "cut", callback=kill, **RUN)
    with pytest.raises(BaselineError, match="select"):
        train_and_evaluate(small_split, out=tmp_path / "cut", resume=True, **{**RUN, "select": "last", "until_over": "lengths"})
    resumed = train_and_evaluate(small_split, out=tmp_path / "cut", resume=True, **RUN)
    timing = {"tokens_per_s", "train_seconds"}
    strip = lambda seeds: [{k: v for k, v in s.items() if k not in timing} for s in seeds]  # noqa: E731
    assert strip(resumed["per_seed"]) == strip(whole["per_seed"])
    assert resumed["per_seed"][0]["selected_step"] == 10
