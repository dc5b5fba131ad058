"""Scoring predictions against records: exact match, per-token accuracy, buckets, gap, seeds.

Definitions (pure Python, no torch):

- exact match: the predicted token sequence equals the target's (whitespace tokens);
- traced records (a ``meta.trace`` format, target ``trace => answer``): also answer exact
  match (the tokens after the prediction's first ``=>`` equal the target's) and trace exact
  match (the tokens before it equal the target's); a prediction without ``=>`` gets neither.
  Sets without traced records have no such figures (their scores are as before);
- per-token accuracy of one example: the share of target positions i whose predicted token
  equals target token i (a missing position counts as wrong; tokens predicted beyond the
  target's length are not counted); a set's token accuracy is the mean over its examples;
- by length: the same two figures per input length (tokens), keys are the lengths as text;
- by difficulty: per measured difficulty feature, per bucket: the feature's value when it
  takes at most ``MAX_VALUES`` distinct values over the scored sets, else ``BINS`` equal-width
  integer ranges labelled ``lo-hi``;
- by novelty: the same two figures per bucket of ``novelty.unseen_compounds`` (how many of
  the record's compounds never occur in its split's train part, written by splits/):
  ``"0"``, ``"1"``, ``"2"`` and ``"3+"``; only records that carry novelty are counted, only
  buckets holding records appear (an empty dict when no record carries it);
- by task: the same two figures per record ``task`` (a multi-task config's tasks; one entry
  for a config of one task);
- gap = ID exact match - OOD exact match (validation vs test);
- per-length means (Deletang et al. 2023's averaging): a figure averaged over the input lengths
  of a set, each length once however many records it has, so that a few short inputs (of
  which there are few distinct ones, and many records) do not dominate it. The length score
  is per-token accuracy averaged so (over seeds the paper reports the maximum, gengap reports
  it beside the mean); ``length_mean_exact_match`` is exact match averaged so, for ID
  (validation: what ``--until-id`` and the report's "learned" verdict read) and OOD (test);
- over seeds: mean, sample standard deviation (0 for one seed), min and max, and the share of
  seeds whose OOD exact match reaches ``SOLVED`` (0.95); per length, per novelty bucket and per
  task the same summary of the seeds' exact matches.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Iterable, Mapping, Sequence

from gengap.generators.traces import split_target

Record = dict[str, Any]

MAX_VALUES = 16
BINS = 8
SOLVED = 0.95
NOVELTY_BUCKETS = ("0", "1", "2", "3+")
SIDES = ("id", "ood")


def compare(target: str, prediction: str) -> tuple[bool, float]:
    """(exact match, per-token accuracy) of one prediction."""
    want = target.split()
    got = prediction.split()
    correct = sum(1 for a, b in zip(want, got) if a == b)
    return want == got, correct / len(want)


def is_traced(record: Record) -> bool:
    """Whether the record's target is a trace, a separator and the answer (``meta.trace`` not none)."""
    meta = record.get("meta")
    return isinstance(meta, Mapping) and meta.get("trace", "none") != "none"


def compare_parts(target: str, prediction: str) -> tuple[bool, bool]:
    """(answer exact match, trace exact match) of a prediction for a traced target."""
    want, got = split_target(target), split_target(prediction)
    if want is None or got is None:
        return False, False
    return got[1] == want[1], got[0] == want[0]


def input_length(record: Record) -> int:
    value = record.get("difficulty", {}).get("input_length")
    return int(value) if isinstance(value, int) else len(record["input"].split())


def novelty_bucket(record: Record) -> str | None:
    """The novelty bucket of a record ("0", "1", "2" or "3+" unseen compounds), None when it carries no novelty."""
    novelty = record.get("novelty")
    if not isinstance(novelty, Mapping):
        return None
    count = novelty.get("unseen_compounds")
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        return None
    return str(count) if count < 3 else "3+"


def _figures(exact: Sequence[bool], token: Sequence[float]) -> dict[str, Any]:
    n = len(exact)
    return {
        "n": n,
        "exact_match": sum(exact) / n if n else None,
        "token_accuracy": sum(token) / n if n else None,
    }


def _part_figures(parts: Sequence[tuple[bool, bool]]) -> dict[str, Any]:
    """Answer and trace exact match of the traced records of a set (nothing when it has none)."""
    if not parts:
        return {}
    n = len(parts)
    return {
        "traced_n": n,
        "answer_exact_match": sum(a for a, _ in parts) / n,
        "trace_exact_match": sum(t for _, t in parts) / n,
    }


def make_buckets(record_sets: Iterable[Sequence[Record]], max_values: int = MAX_VALUES, bins: int = BINS) -> dict[str, list[int] | None]:
    """Per difficulty feature: None (one bucket per value) or the lower edges of equal-width bins."""
    values: dict[str, set[int]] = defaultdict(set)
    for records in record_sets:
        for record in records:
            for name, value in record.get("difficulty", {}).items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    values[name].add(int(value))
    buckets: dict[str, list[int] | None] = {}
    for name in sorted(values):
        seen = values[name]
        if len(seen) <= max_values:
            buckets[name] = None
            continue
        lo, hi = min(seen), max(seen)
        width = max(1, math.ceil((hi - lo + 1) / bins))
        buckets[name] = list(range(lo, hi + 1, width))
    return buckets


def bucket_label(value: int, edges: list[int] | None) -> str:
    """The bucket of a value: the value itself, or ``lo-hi`` of the bin holding it."""
    if edges is None:
        return str(value)
    index = 0
    for i, edge in enumerate(edges):
        if value >= edge:
            index = i
    lo = edges[index]
    hi = edges[index + 1] - 1 if index + 1 < len(edges) else None
    if hi is None:
        width = edges[1] - edges[0] if len(edges) > 1 else 1
        hi = lo + width - 1
    return f"{lo}-{hi}"


def _sort_key(label: str) -> tuple[int, str]:
    head = label.split("-")[0]
    try:
        return int(head), label
    except ValueError:
        return 0, label


def score(
    records: Sequence[Record],
    predictions: Sequence[str],
    buckets: Mapping[str, list[int] | None] | None = None,
    mistakes: int = 20,
    correct: Sequence[bool] | None = None,
    outcomes: bool = False,
) -> dict[str, Any]:
    """Exact match, token accuracy, by length, by difficulty bucket, by novelty bucket and the first mistakes of a set.

    ``correct`` (one flag per record) replaces the token comparison for exact match: a task's
    checker, which accepts any of several right answers (``gengap eval`` passes it). With
    ``outcomes`` the score also holds ``outcomes``, one character per record in order (``1``
    exact match, ``0`` not), and ``outcomes_sha256``, the digest of the records' ids in that order.
    """
    if len(records) != len(predictions):
        raise ValueError(f"{len(records)} records but {len(predictions)} predictions")
    if correct is not None and len(correct) != len(records):
        raise ValueError(f"{len(records)} records but {len(correct)} correctness flags")
    if buckets is None:
        buckets = make_buckets([records])
    exact: list[bool] = []
    token: list[float] = []
    by_length: dict[int, tuple[list[bool], list[float]]] = defaultdict(lambda: ([], []))
    by_feature: dict[str, dict[str, tuple[list[bool], list[float]]]] = defaultdict(lambda: defaultdict(lambda: ([], [])))
    by_novelty: dict[str, tuple[list[bool], list[float]]] = defaultdict(lambda: ([], []))
    by_task: dict[str, tuple[list[bool], list[float]]] = defaultdict(lambda: ([], []))
    wrong: list[dict[str, str]] = []
    parts: list[tuple[bool, bool]] = []
    by_length_parts: dict[int, list[tuple[bool, bool]]] = defaultdict(list)
    for index, (record, prediction) in enumerate(zip(records, predictions)):
        if is_traced(record):
            parts.append(compare_parts(record["target"], prediction))
            by_length_parts[input_length(record)].append(parts[-1])
        ok, accuracy = compare(record["target"], prediction)
        if correct is not None:
            ok = bool(correct[index])
        exact.append(ok)
        token.append(accuracy)
        cell = by_length[input_length(record)]
        cell[0].append(ok)
        cell[1].append(accuracy)
        task_cell = by_task[str(record.get("task", ""))]
        task_cell[0].append(ok)
        task_cell[1].append(accuracy)
        novelty = novelty_bucket(record)
        if novelty is not None:
            by_novelty[novelty][0].append(ok)
            by_novelty[novelty][1].append(accuracy)
        for name, value in record.get("difficulty", {}).items():
            if name in buckets and isinstance(value, (int, float)) and not isinstance(value, bool):
                slot = by_feature[name][bucket_label(int(value), buckets[name])]
                slot[0].append(ok)
                slot[1].append(accuracy)
        if not ok and len(wrong) < mistakes:
            wrong.append({"id": str(record.get("id", "")), "input": record["input"], "target": record["target"], "prediction": prediction})
    lengths = {str(k): {**_figures(*by_length[k]), **_part_figures(by_length_parts[k])} for k in sorted(by_length)}
    return {
        **_figures(exact, token),
        "length_mean_exact_match": length_mean(lengths, "exact_match"),
        **_part_figures(parts),
        "by_length": lengths,
        "by_difficulty": {
            name: {label: _figures(*cells[label]) for label in sorted(cells, key=_sort_key)}
            for name, cells in sorted(by_feature.items())
        },
        "by_novelty": {label: _figures(*by_novelty[label]) for label in NOVELTY_BUCKETS if label in by_novelty},
        "by_task": {name: _figures(*by_task[name]) for name in sorted(by_task)},
        "mistakes": wrong,
        **({"outcomes": "".join("1" if ok else "0" for ok in exact), "outcomes_sha256": outcome_digest(records)} if outcomes else {}),
    }


def gap(id_score: Mapping[str, Any], ood_score: Mapping[str, Any]) -> float:
    """ID exact match - OOD exact match."""
    return float(id_score["exact_match"]) - float(ood_score["exact_match"])


PART_HEADLINE = ("id_answer_exact_match", "ood_answer_exact_match", "id_trace_exact_match", "ood_trace_exact_match")
EXECUTION_HEADLINE = ("id_execution_accuracy", "ood_execution_accuracy")  # tasks that execute their answers (gengap eval)


def over_lengths(values: Iterable[float | None]) -> float | None:
    """The mean of per-length figures, each input length once (None when there are none)."""
    known = [float(v) for v in values if v is not None]
    return sum(known) / len(known) if known else None


def length_mean(by_length: Mapping[str, Mapping[str, Any]], figure: str) -> float | None:
    """A figure (``exact_match``, ``token_accuracy``) of a score's ``by_length`` cells averaged over
    input lengths (None for a set without records)."""
    return over_lengths(cell.get(figure) for cell in by_length.values())


def weighted_length_mean(by_length: Mapping[str, Mapping[str, Any]], shares: Mapping[int, float], figure: str = "exact_match") -> float | None:
    """A figure of ``by_length`` cells averaged with the weights ``shares`` (input length -> the
    train part's share of it), over the lengths the set holds that have a weight (renormalised);
    None when no length of the set has one."""
    pairs = [(float(shares.get(int(length), 0.0)), cell.get(figure)) for length, cell in by_length.items()]
    pairs = [(w, float(v)) for w, v in pairs if w > 0 and v is not None]
    total = sum(w for w, _ in pairs)
    return sum(w * v for w, v in pairs) / total if total > 0 else None


def length_shares(records: Iterable[Record]) -> dict[int, float]:
    """Each input length's share of the records (the weights of :func:`weighted_length_mean`)."""
    counts: dict[int, int] = defaultdict(int)
    for record in records:
        counts[input_length(record)] += 1
    n = sum(counts.values())
    return {length: count / n for length, count in sorted(counts.items())} if n else {}


def outcome_digest(records: Sequence[Record]) -> str:
    """sha256 of the records' ids in order, one per line: names the order of an ``outcomes`` string."""
    import hashlib

    return hashlib.sha256("".join(f"{r.get('id', '')}\n" for r in records).encode()).hexdigest()


def length_score(by_length: Mapping[str, Mapping[str, Any]]) -> float | None:
    """Per-token accuracy averaged over input lengths (None for a set without records)."""
    return length_mean(by_length, "token_accuracy")


def seed_length_mean(seed: Mapping[str, Any], side: str) -> float | None:
    """A seed result's exact match averaged over the input lengths of side ("id" or "ood"): its
    ``<side>_length_mean_exact_match``, or for a result written before that existed the mean of its
    per-length exact matches."""
    recorded = seed.get(f"{side}_length_mean_exact_match")
    if recorded is not None:
        return float(recorded)
    return over_lengths(((seed.get("by_length") or {}).get(side) or {}).values())


def iteration_summary(id_score: Mapping[str, Any], ood_score: Mapping[str, Any]) -> dict[str, Any]:
    """The headline figures of one evaluation (e.g. a looped model at one iteration count), with
    OOD per-token accuracy per input length."""
    return {
        "id_exact_match": id_score["exact_match"],
        "ood_exact_match": ood_score["exact_match"],
        "id_token_accuracy": id_score["token_accuracy"],
        "ood_token_accuracy": ood_score["token_accuracy"],
        **length_means(id_score, ood_score),
        "ood_length_score": length_score(ood_score["by_length"]),
        "ood_token_accuracy_by_length": {k: v["token_accuracy"] for k, v in ood_score["by_length"].items()},
    }


def length_means(id_score: Mapping[str, Any], ood_score: Mapping[str, Any]) -> dict[str, float | None]:
    """``id_length_mean_exact_match`` and ``ood_length_mean_exact_match`` of two scores."""
    return {f"{side}_length_mean_exact_match": length_mean(s["by_length"], "exact_match") for side, s in (("id", id_score), ("ood", ood_score))}


def seed_summary(id_score: Mapping[str, Any], ood_score: Mapping[str, Any]) -> dict[str, Any]:
    """The headline figures of one seed from its ID (validation) and OOD (test) scores (with
    answer and trace exact match per side when both sides hold traced records)."""
    summary = {
        "id_exact_match": id_score["exact_match"],
        "ood_exact_match": ood_score["exact_match"],
        "gap": gap(id_score, ood_score),
        "id_token_accuracy": id_score["token_accuracy"],
        "ood_token_accuracy": ood_score["token_accuracy"],
        **length_means(id_score, ood_score),
        "ood_length_score": length_score(ood_score["by_length"]),
        "by_length": {
            "id": {k: v["exact_match"] for k, v in id_score["by_length"].items()},
            "ood": {k: v["exact_match"] for k, v in ood_score["by_length"].items()},
        },
        "by_novelty": {"id": dict(id_score.get("by_novelty", {})), "ood": dict(ood_score.get("by_novelty", {}))},
        "by_task": {"id": dict(id_score.get("by_task", {})), "ood": dict(ood_score.get("by_task", {}))},
    }
    if "answer_exact_match" in id_score and "answer_exact_match" in ood_score:
        for name in PART_HEADLINE:
            side, figure = name.split("_", 1)
            summary[name] = (id_score if side == "id" else ood_score)[figure]
    return summary


def summarize(values: Sequence[float]) -> dict[str, Any]:
    """Mean, sample standard deviation (0 for one value), min, max and count."""
    values = [float(v) for v in values]
    n = len(values)
    if not n:
        return {"mean": None, "std": None, "min": None, "max": None, "n": 0}
    mean = sum(values) / n
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return {"mean": mean, "std": std, "min": min(values), "max": max(values), "n": n}


HEADLINE = ("id_exact_match", "ood_exact_match", "gap", "id_token_accuracy", "ood_token_accuracy")
LENGTH_MEANS = ("id_length_mean_exact_match", "ood_length_mean_exact_match")
ITERATION_HEADLINE = ("id_exact_match", "ood_exact_match", "id_token_accuracy", "ood_token_accuracy", *LENGTH_MEANS, "ood_length_score")


def aggregate(per_seed: Sequence[Mapping[str, Any]], threshold: float = SOLVED) -> dict[str, Any]:
    """Headline figures over seeds (with the per-length means and the length score, over the seeds
    that have them), per-length and per-novelty-bucket exact match over seeds, and the solved share.

    ``by_novelty[side][bucket]`` summarizes the exact matches of the seeds that have the bucket
    (seeds of runs made before novelty existed have none and are skipped).
    """
    result: dict[str, Any] = {name: summarize([s[name] for s in per_seed]) for name in HEADLINE}
    # runs made before these figures existed have none of them: summarized over the seeds that do
    for side in SIDES:  # older results: from their per-length exact matches (seed_length_mean)
        result[f"{side}_length_mean_exact_match"] = summarize([v for s in per_seed if (v := seed_length_mean(s, side)) is not None])
    result["ood_length_score"] = summarize([s["ood_length_score"] for s in per_seed if s.get("ood_length_score") is not None])
    checked = [s["converged"] for s in per_seed if s.get("converged") is not None]
    result["converged"] = {"met": sum(1 for c in checked if c), "checked": len(checked)}
    counts = sorted({k for s in per_seed for k in (s.get("by_iterations") or {})}, key=int)
    if counts:
        result["by_iterations"] = {
            k: {name: summarize([s["by_iterations"][k][name] for s in per_seed if k in (s.get("by_iterations") or {})
                                 and s["by_iterations"][k].get(name) is not None])
                for name in ITERATION_HEADLINE}
            for k in counts
        }
    for headline in (PART_HEADLINE, EXECUTION_HEADLINE):
        if per_seed and all(name in s for s in per_seed for name in headline):
            result.update({name: summarize([s[name] for s in per_seed]) for name in headline})
    result["ood_solved_fraction"] = (
        sum(1 for s in per_seed if s["ood_exact_match"] >= threshold) / len(per_seed) if per_seed else None
    )
    result["solved_threshold"] = threshold
    by_length: dict[str, dict[str, Any]] = {}
    for side in ("id", "ood"):
        lengths = sorted({k for s in per_seed for k in s["by_length"][side]}, key=int)
        by_length[side] = {
            k: summarize([s["by_length"][side][k] for s in per_seed if k in s["by_length"][side]]) for k in lengths
        }
    result["by_length"] = by_length
    result["by_novelty"] = aggregate_novelty(per_seed)
    result["by_task"] = aggregate_tasks(per_seed)
    if all("tokens_per_s" in s for s in per_seed):
        result["tokens_per_s"] = summarize([s["tokens_per_s"] for s in per_seed])
    return result


def aggregate_tasks(per_seed: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """``{side: {task: summarize(exact matches of the seeds)}}``, tasks sorted (seeds of runs
    made before per-task figures existed have none and are skipped)."""
    result: dict[str, dict[str, Any]] = {}
    for side in SIDES:
        cells = [(s.get("by_task") or {}).get(side) or {} for s in per_seed]
        names = sorted({name for c in cells for name in c})
        result[side] = {
            name: summarize([c[name]["exact_match"] for c in cells if name in c and c[name]["exact_match"] is not None])
            for name in names
        }
    return result


def aggregate_novelty(per_seed: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """``{side: {bucket: summarize(exact matches of the seeds with that bucket)}}``, buckets in order."""
    result: dict[str, dict[str, Any]] = {}
    for side in SIDES:
        cells = [(s.get("by_novelty") or {}).get(side) or {} for s in per_seed]
        result[side] = {
            bucket: summarize([c[bucket]["exact_match"] for c in cells if bucket in c and c[bucket]["exact_match"] is not None])
            for bucket in NOVELTY_BUCKETS
            if any(bucket in c for c in cells)
        }
    return result
