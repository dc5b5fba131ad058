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

A length is **exhausted** when validation took every record its strata could give and that is
still below their share in train's proportions at the level the others reached (the water
level of :func:`exhausted`): the short lengths, and the lengths that ran out giving the short
ones' records. The warning names them all. How far validation ended from train's shape is
``validation.tv_lengths`` (:func:`tv_lengths`), warned about above ``TV_LENGTHS_MAX``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Hashable, Iterable, Sequence

import numpy as np

from gengap.generators.batch import Record

DRAW_ROUNDS = 4  # a sampled split draws at most 2 + 4 + 8 + 16 = 30 candidates per validation record of a setting
MIN_ROUND = 64  # fewest candidates of a setting in one round
TV_LENGTHS_MAX = 0.2  # validation.tv_lengths above this is warned about (validation far from train's shape; the default suite's
# configs whose short lengths run out sit at 0.10-0.17, which the shortfall warning already names)
TV_DECIMALS = 4  # places of validation.tv_lengths


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


def exhausted(total: int, weights: Sequence[int], caps: Sequence[int]) -> list[bool]:
    """Which entries their caps hold below their proportional share of ``total``: at the water
    level r where sum(min(cap, r x weight)) first reaches ``total`` (r infinite when the caps of
    the weighted entries sum below it), an entry is exhausted when cap < r x weight. Exact
    (integer) arithmetic; zero weights are never exhausted. The short entries of
    :func:`apportion` (cap below the uncapped share) are among them."""
    weighted = [i for i, w in enumerate(weights) if w > 0]
    if sum(caps[i] for i in weighted) < total:
        return [weights[i] > 0 for i in range(len(weights))]
    out = [False] * len(weights)
    held, free = 0, sum(weights[i] for i in weighted)  # r = (total - held) / free while the rest is below its cap
    for i in sorted(weighted, key=lambda i: (Fraction(caps[i], weights[i]), i)):
        if caps[i] * free >= (total - held) * weights[i]:
            break
        out[i] = True
        held, free = held + caps[i], free - weights[i]
    return out


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
    exhausted: list[int] = field(default_factory=list)  # the exhausted input lengths (module doc), sorted


def tv_lengths(train: Sequence[Record], validation: Sequence[Record]) -> float | None:
    """Total variation distance (0.5 x sum |p - q|) between the (task, input length) histograms
    of the two parts, exact and rounded to TV_DECIMALS places (half to even); in [0, 1]. None when
    either part is empty."""
    if not train or not validation:
        return None
    return total_variation(Counter(_stratum(r) for r in train), Counter(_stratum(r) for r in validation))


def total_variation(p: Counter[Hashable], q: Counter[Hashable]) -> float:
    """Total variation distance between two non-empty histograms (counts), rounded to TV_DECIMALS places."""
    a, b = sum(p.values()), sum(q.values())
    gap = sum(abs(p[k] * b - q[k] * a) for k in set(p) | set(q))
    return float(round(Fraction(gap, 2 * a * b), TV_DECIMALS)) + 0.0


TV_WARNING = "validation: its input lengths are "  # how the tv warning begins (a capped release replaces it)


def tv_warnings(tv: float | None, exhausted_lengths: Sequence[int]) -> list[str]:
    """One warning when ``tv`` (validation.tv_lengths) exceeds TV_LENGTHS_MAX, naming every exhausted length."""
    if tv is None or tv <= TV_LENGTHS_MAX:
        return []
    noun = "length" if len(exhausted_lengths) == 1 else "lengths"
    where = (f"validation could not fill input {noun} {_ranges(exhausted_lengths)} in train's proportions (it holds all they could give)"
             if exhausted_lengths else "no input length ran out")
    return [f"{TV_WARNING}{tv:.4f} in total variation from train's, above the bound {TV_LENGTHS_MAX}; {where}"]


def _stratum(record: Record) -> tuple[str, int]:
    return record["task"], input_length(record)


def _exhausted_lengths(keys: Sequence[Hashable], flags: Sequence[bool], length: Callable[[Hashable], int]) -> list[int]:
    """The input lengths of the flagged strata, sorted."""
    return sorted({length(key) for key, flag in zip(keys, flags) if flag})


def _shortfall(keys: Sequence[Hashable], wanted: Sequence[int], got: Sequence[int], length: Callable[[Hashable], int]) -> dict[str, int]:
    """Input length -> validation records its strata could not give (their proportional share minus what they gave)."""
    short: Counter[int] = Counter()
    for key, want, have in zip(keys, wanted, got):
        if have < want:
            short[length(key)] += want - have
    return {str(k): short[k] for k in sorted(short)}


def _warnings(requested: int, got: int, short: dict[str, int], why: str, exhausted_lengths: Iterable[int] = ()) -> list[str]:
    """At most one warning: validation short of its size, or short at some lengths (``why``: the
    reason); exhausted lengths that were not short are named as having run out too."""
    if not short and got == requested:
        return []
    missing = sum(short.values())
    noun, its = ("input length", "its") if len(short) == 1 else ("input lengths", "their")
    where = f"{noun} {_ranges([int(k) for k in short])} could not give {its} share ({_records(missing)}: {why.format(its=its)})" if short else ""
    if got < requested:
        return [f"validation: {got} of the {_records(requested)} asked for" + (f"; {where}" if where else f": {why.format(its='its')}")]
    also = sorted(set(exhausted_lengths) - {int(k) for k in short})
    if also:
        return [f"validation: {where}; {'length' if len(also) == 1 else 'lengths'} {_ranges(also)} ran out giving them too, "
                "the other lengths gave the rest, in proportion"]
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
    caps = [len(singles.get(k, ())) for k in keys]
    shares = apportion(wanted, weights, caps)
    chosen: set[int] = set()
    for key, share in zip(keys, shares):
        if share:
            pool = singles[key]
            chosen.update(pool[i] for i in rng.permutation(len(pool))[:share].tolist())
    train = [r for i, r in enumerate(train_side) if i not in chosen]
    validation = [r for i, r in enumerate(train_side) if i in chosen]
    short = _shortfall(keys, ideal, shares, lambda key: key[1])
    ran_out = _exhausted_lengths(keys, _given_all(exhausted(wanted, weights, caps), shares, caps), lambda key: key[1])
    info = {"method": "carved", "stratum": "input_length", "requested": wanted, "size": len(validation), "short": short, "exhausted": ran_out}
    why = "too few of {its} inputs occur only once on the train side"
    return train, ValidationDraw(validation, info, _warnings(wanted, len(validation), short, why, ran_out), ran_out)


def _given_all(flags: Sequence[bool], shares: Sequence[int], caps: Sequence[int]) -> list[bool]:
    """The flagged strata that gave validation everything they had (share = cap)."""
    return [flag and share == cap for flag, share, cap in zip(flags, shares, caps)]


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
    weights = [counts[k] for k in keys]
    ran_out = _exhausted_lengths(keys, _given_all(exhausted(n, weights, caps), final, caps), lambda key: key[2])
    info = {"method": "drawn", "stratum": "input_length", "requested": n, "size": len(validation), "candidates": drawn, "short": short,
            "exhausted": ran_out}
    why = "the train part holds (nearly) all {its} inputs"
    return ValidationDraw(validation, info, _warnings(n, len(validation), short, why, ran_out), ran_out)
