"""Validation that is the train distribution: distinct inputs never seen in train, spread over
input lengths in the train part's proportions.

Two ways to get there, one rule for both (the report states which ran and what fell short):

- **carved** (pool splits, :func:`carve_validation`): from the train side, only records whose
  input occurs once there (the same input of the same task) may move to validation, so no
  input is seen in both parts, none repeats in validation and no train record is lost. The
  records that occur once stand for what a fresh draw would bring that train has not seen
  (Good and Turing's estimate of the unseen mass).
- **drawn** (sampled splits, :func:`draw_validation`): validation is generated from the train
  side's own parameter settings on a stream of its own, candidates whose input occurs in train
  or already in validation rejected, until every stratum holds its share.

A stratum is the input length (tokens) of one task (of one parameter setting for a sampled
split, whose settings are drawn evenly). The validation size is apportioned over the strata in
proportion to the train part's records (largest remainders); a stratum that cannot give its
share (a short input length whose every input train already holds) gives what it can, and the
rest is apportioned over the others in the same proportions. What was short is reported as
``validation.short`` (input length -> records) with a warning.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Sequence

import numpy as np

from gengap.generators.batch import Record

DRAW_ROUNDS = 4  # a sampled split draws at most 2 + 4 + 8 + 16 = 30 candidates per validation record of a setting
MIN_ROUND = 64  # fewest candidates of a setting in one round


def task_input(record: Record) -> tuple[str, str]:
    """What makes two records the same example for a split: the same input of the same task."""
    return record["task"], record["input"]


def input_length(record: Record) -> int:
    """The stratum variable: the record's measured input length (its token count when absent)."""
    value = record.get("difficulty", {}).get("input_length")
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else len(record["input"].split())


def apportion(total: int, weights: Sequence[int], caps: Sequence[int] | None = None) -> list[int]:
    """Integer shares of ``total`` in proportion to ``weights`` (largest remainders, ties to the
    earlier), each at most its cap; what a capped share cannot take is apportioned over the
    others in the same proportions. The shares sum to ``total`` or, when the caps of the
    weighted entries allow less, to their sum. Zero weights get nothing."""
    limits = list(caps) if caps is not None else [total] * len(weights)
    shares = [0] * len(weights)
    open_ = [i for i, w in enumerate(weights) if w > 0 and limits[i] > 0]
    remaining = min(total, sum(limits[i] for i in open_))
    while remaining > 0 and open_:
        step = _largest_remainders(remaining, [weights[i] for i in open_])
        remaining = 0
        for i, share in zip(open_, step):
            take = min(share, limits[i] - shares[i])
            shares[i] += take
            remaining += share - take
        open_ = [i for i in open_ if shares[i] < limits[i]]
    return shares


def _largest_remainders(total: int, weights: Sequence[int]) -> list[int]:
    whole = sum(weights)
    shares = [total * w // whole for w in weights]
    left = total - sum(shares)
    order = sorted(range(len(weights)), key=lambda i: (-(total * weights[i] % whole), i))
    for i in order[:left]:
        shares[i] += 1
    return shares


@dataclass
class ValidationDraw:
    """Validation records and what the report says of them."""

    records: list[Record]
    info: dict[str, Any]
    warnings: list[str] = field(default_factory=list)


def _shortfall(keys: Sequence[Hashable], wanted: Sequence[int], got: Sequence[int], length: Callable[[Hashable], int]) -> dict[str, int]:
    """Input length -> validation records its strata could not give (their proportional share minus what they gave)."""
    short: Counter[int] = Counter()
    for key, want, have in zip(keys, wanted, got):
        if have < want:
            short[length(key)] += want - have
    return {str(k): short[k] for k in sorted(short)}


def _warnings(requested: int, got: int, short: dict[str, int], why: str) -> list[str]:
    """At most one warning: validation short of its size, or short at some lengths (``why``: the reason)."""
    if not short and got == requested:
        return []
    missing = sum(short.values())
    noun, its = ("input length", "its") if len(short) == 1 else ("input lengths", "their")
    where = f"{noun} {_ranges([int(k) for k in short])} could not give {its} share ({_records(missing)}: {why.format(its=its)})" if short else ""
    if got < requested:
        return [f"validation: {got} of the {_records(requested)} asked for" + (f"; {where}" if where else f": {why.format(its='its')}")]
    return [f"validation: {where}; the other lengths gave them, in proportion"]


def _records(count: int) -> str:
    return f"{count} record" + ("" if count == 1 else "s")


def _ranges(values: Sequence[int]) -> str:
    """Sorted integers as compact ranges: 1-3, 5, 8-9."""
    out: list[str] = []
    values = sorted(values)
    start = prev = values[0]
    for value in [*values[1:], None]:
        if value is not None and value == prev + 1:
            prev = value
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if value is not None:
            start = prev = value
    return ", ".join(out)


def carve_validation(train_side: Sequence[Record], fraction: float, rng: np.random.Generator) -> tuple[list[Record], ValidationDraw]:
    """(train, validation) of a pool split's train side: round(fraction x its size) records whose
    input occurs once on the train side, stratified by (task, input length) as the module doc says;
    both parts keep the train side's order."""
    wanted = int(round(fraction * len(train_side))) if fraction > 0 else 0
    if wanted == 0:
        return list(train_side), ValidationDraw([], {"method": "carved", "requested": 0, "size": 0, "short": {}})
    counts = Counter(task_input(r) for r in train_side)
    records: dict[tuple[str, int], int] = Counter()
    singles: dict[tuple[str, int], list[int]] = {}
    for index, record in enumerate(train_side):
        key = (record["task"], input_length(record))
        records[key] += 1
        if counts[task_input(record)] == 1:
            singles.setdefault(key, []).append(index)
    keys = sorted(records)
    weights = [records[k] for k in keys]
    ideal = apportion(wanted, weights)
    shares = apportion(wanted, weights, [len(singles.get(k, ())) for k in keys])
    chosen: set[int] = set()
    for key, share in zip(keys, shares):
        if share:
            pool = singles[key]
            chosen.update(pool[i] for i in rng.permutation(len(pool))[:share].tolist())
    train = [r for i, r in enumerate(train_side) if i not in chosen]
    validation = [r for i, r in enumerate(train_side) if i in chosen]
    short = _shortfall(keys, ideal, shares, lambda key: key[1])
    info = {"method": "carved", "stratum": "input_length", "requested": wanted, "size": len(validation), "short": short}
    why = "too few of {its} inputs occur only once on the train side"
    return train, ValidationDraw(validation, info, _warnings(wanted, len(validation), short, why))


@dataclass
class _Stratum:
    quota: int
    taken: list[tuple[tuple[int, int], Record]] = field(default_factory=list)  # (draw order, record)
    spare: list[tuple[tuple[int, int], Record]] = field(default_factory=list)  # unseen, distinct, beyond the quota

    @property
    def missing(self) -> int:
        return self.quota - len(self.taken)


def draw_validation(
    train: Sequence[Sequence[Record]],
    n: int,
    candidates: Callable[[int, int, int], Sequence[Record]],
) -> ValidationDraw:
    """n validation records of a sampled split (module doc). ``train[i]``: the train records of
    setting i; ``candidates(i, round, count)``: ``count`` fresh records of setting i, a pure
    function of its arguments (round r of setting i draws 2^(r+1) x the setting's share, at
    least MIN_ROUND, for at most DRAW_ROUNDS rounds, while its strata are short and the last
    round filled some of them)."""
    seen = {task_input(r) for part in train for r in part}
    counts: Counter[tuple[int, str, int]] = Counter((i, r["task"], input_length(r)) for i, part in enumerate(train) for r in part)
    keys = sorted(counts)
    ideal = apportion(n, [counts[k] for k in keys])
    strata = {key: _Stratum(share) for key, share in zip(keys, ideal)}
    accepted: set[tuple[str, str]] = set()
    drawn = 0
    for setting in range(len(train)):
        own = [strata[k] for k in keys if k[0] == setting]
        share = sum(s.quota for s in own)
        for round_ in range(DRAW_ROUNDS):
            if share == 0 or not any(s.missing > 0 for s in own):
                break
            before = sum(len(s.taken) for s in own)
            batch = candidates(setting, round_, max(MIN_ROUND, share * 2 ** (round_ + 1)))
            drawn += len(batch)
            for position, record in enumerate(batch):
                identity = task_input(record)
                stratum = strata.get((setting, record["task"], input_length(record)))
                if stratum is None or identity in seen or identity in accepted:
                    continue
                accepted.add(identity)
                (stratum.taken if stratum.missing > 0 else stratum.spare).append(((round_, position), record))
            if round_ > 0 and sum(len(s.taken) for s in own) == before:
                break  # the short strata gained nothing: their inputs are used up
    caps = [len(strata[k].taken) + len(strata[k].spare) for k in keys]
    final = apportion(n, [counts[k] for k in keys], caps)
    rows: list[tuple[tuple[int, int, int], Record]] = []
    for key, share in zip(keys, final):
        stratum = strata[key]
        for order, record in (stratum.taken + stratum.spare)[:share]:
            rows.append(((key[0], *order), record))
    rows.sort(key=lambda row: row[0])
    validation = [record for _, record in rows]
    short = _shortfall(keys, ideal, [min(i, f) for i, f in zip(ideal, final)], lambda key: key[2])
    info = {"method": "drawn", "stratum": "input_length", "requested": n, "size": len(validation), "candidates": drawn, "short": short}
    why = "the train part holds (nearly) all {its} inputs"
    return ValidationDraw(validation, info, _warnings(n, len(validation), short, why))
