"""Entry points: split a pool of records, or sample a split of a generated task."""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from gengap.generators import BlockPlan, get_task
from gengap.generators.batch import Record
from gengap.generators.params import ParamError, Params, knob
from gengap.generators.seeding import side_seed, train_sample_rng, validation_seed
from gengap.splits.atoms import LOCAL, CompoundDefinition
from gengap.splits.base import (
    LOCAL_SIZE_ALONE, Partition, SplitError, SplitOptions, SplitResult, Strategy, compounds_knob, finish, local_size_knob,
    sampler_knob, split_rng,
)
from gengap.splits.diverse import DIVERSE, DIVERSE_CANDIDATES, TrainSelection
from gengap.splits.local_structures import LOCAL_SIZE
from gengap.splits.exposure import expose
from gengap.splits.gotu import Gotu
from gengap.splits.local_holdout import LocalHoldout
from gengap.splits.mcd import Mcd
from gengap.splits.ranges import as_lists, check_disjoint, is_union, parse_ranges, regimes
from gengap.splits.rules import RuleHoldout
from gengap.splits.strategies import STRATEGIES as POOL_STRATEGIES
from gengap.splits.tasks import check_single_task
from gengap.splits.validation import draw_validation

STRATEGIES: dict[str, Strategy] = {**POOL_STRATEGIES, "mcd": Mcd(), "gotu": Gotu(), "rule_holdout": RuleHoldout(), "local_holdout": LocalHoldout()}


def get_strategy(name: str) -> Strategy:
    if name not in STRATEGIES:
        raise SplitError(f"unknown split strategy {name!r}; known: {', '.join(sorted(STRATEGIES))}")
    return STRATEGIES[name]


def strategy_problem(entry: Mapping[str, Any]) -> tuple[str, str] | None:
    """(key, message) when a suite entry names no strategy: its ``strategy`` key, else its
    ``split`` name, with the closest strategy names when it looks misspelt; None when it does."""
    key = "strategy" if entry.get("strategy") else "split"
    name = entry[key]
    if name in STRATEGIES:
        return None
    close = difflib.get_close_matches(name, sorted(STRATEGIES), n=3, cutoff=0.75) if isinstance(name, str) else []
    hint = f"did you mean {' or '.join(close)}?" if close else f"strategies: {', '.join(sorted(STRATEGIES))}"
    if key == "strategy":
        return key, f"unknown split strategy {name!r} ({hint})"
    return key, f"split {name!r} is not a strategy name: add a strategy key ({hint})"


def make_options(strategy: Strategy, values: Mapping[str, Any] | None = None) -> SplitOptions:
    """Typed options of a strategy from a mapping; unknown or invalid ones raise SplitError."""
    try:
        return strategy.options_type().replace(**dict(values or {}))
    except ParamError as err:
        raise SplitError(f"{strategy.name}: {str(err).replace('parameter', 'option')}") from None


def parse_options(strategy: Strategy, texts: Mapping[str, str]) -> SplitOptions:
    """Options from command-line text values (key=value)."""
    try:
        typed = {k: strategy.options_type.parse_value(k, v) for k, v in texts.items()}
    except ParamError as err:
        raise SplitError(f"{strategy.name}: {str(err).replace('parameter', 'option')}") from None
    return make_options(strategy, typed)


def split(
    records: Sequence[Record], strategy: str, options: Mapping[str, Any] | SplitOptions | None = None, seed: int = 0
) -> SplitResult:
    """Split a pool of records with a named strategy; see gengap.splits.base for the contract."""
    chosen = get_strategy(strategy)
    typed = options if isinstance(options, SplitOptions) else make_options(chosen, options)
    if not records:
        raise SplitError("the pool is empty")
    check_single_task(chosen.name, records)
    if typed.train_budget and not chosen.samples_train:
        raise SplitError("its search chooses the train side itself (train_size): train_budget and train_sampler are for the other strategies")
    rng = split_rng(seed, chosen.name)
    partition = expose(chosen.partition(records, typed, rng), typed.exposure, typed.exposure_copies, seed)
    if typed.train_budget:
        selection = TrainSelection(typed.train_sampler, typed.train_budget, typed.abstract_lexical, typed.compound_definition())
        partition = dataclasses.replace(partition, selection=selection)
    return finish(chosen.name, typed.to_dict(), seed, partition, typed.validation_fraction, rng)


def generate_records(task: str, params: Params, n: int, seed: int) -> list[Record]:
    """n records of a task, generated block-wise from seed (same records as `gengap generate`)."""
    records: list[Record] = []
    for batch in BlockPlan(task, params, n, seed).batches():
        records.extend(batch.records(task))
    return records


def even_counts(n: int, settings: Sequence[Params]) -> list[int]:
    """n spread evenly over settings (remainders to the first ones)."""
    return [n // len(settings) + (1 if index < n % len(settings) else 0) for index in range(len(settings))]


def _side(task: str, settings: Sequence[Params], n: int, seed: int, side: str, times: int = 1) -> list[list[Record]]:
    """n records spread evenly over parameter settings (times x each setting's share), each
    setting's from its own seed; one list per setting."""
    return [generate_records(task, params, count * times, side_seed(seed, side, index)) if count else []
            for index, (params, count) in enumerate(zip(settings, even_counts(n, settings)))]


def space_warnings(task: str, settings: Sequence[Params], n: int, side: str) -> list[str]:
    """Warnings when a side asks for more examples than its parameters have distinct inputs."""
    spec = get_task(task)
    sizes = [spec.input_space_size(p) for p in settings]
    if any(size is None for size in sizes):
        return []
    space = sum(sizes)  # type: ignore[arg-type]
    if n > space:
        return [f"{side}: {n} examples drawn from only {space} distinct inputs: duplicates are certain"]
    if n > space // 10:
        return [f"{side}: {n} examples drawn from {space} distinct inputs: expect many duplicates"]
    return []


@dataclass(frozen=True)
class SampledOptions(Params):
    """The options a sampled split takes (a suite's sampled entry: ``options``): how its compounds
    are read (as SplitOptions) and how its train records are chosen. Every one left at its default
    leaves the split as it was."""

    abstract_lexical: bool = knob(False, added=True, doc="compounds with lexical items written * (structure only) in the report")
    compounds: str = compounds_knob()
    local_size: int = local_size_knob()
    train_sampler: str = sampler_knob("how the train records are chosen among sampler_candidates x as many candidates of the train settings")
    sampler_candidates: int = knob(DIVERSE_CANDIDATES, lo=2, hi=64, added=True,
                                   doc="candidates drawn per train record for the diverse sampler (train_sampler=diverse)")

    def check_consistency(self) -> None:
        self.require(self.local_size == LOCAL_SIZE or self.compounds == LOCAL, LOCAL_SIZE_ALONE.format(self.local_size))
        self.require(self.sampler_candidates == DIVERSE_CANDIDATES or self.train_sampler == DIVERSE,
                     f"sampler_candidates={self.sampler_candidates} is for train_sampler=diverse")


def sampled_options(values: Mapping[str, Any] | SampledOptions | None) -> SampledOptions:
    """Typed SampledOptions of a mapping; SplitError naming the option when one is unknown or invalid."""
    if isinstance(values, SampledOptions):
        return values
    try:
        return SampledOptions().replace(**dict(values or {}))
    except ParamError as err:
        raise SplitError(f"sampled split: {str(err).replace('parameter', 'option')}") from None


def sample_split(
    task: str,
    train_settings: Sequence[Params],
    test_settings: Sequence[Params],
    sizes: Mapping[str, int],
    seed: int,
    strategy: str,
    options: Mapping[str, Any],
    notes: Mapping[str, Any] | None = None,
    sampling: Mapping[str, Any] | SampledOptions | None = None,
) -> SplitResult:
    """A split whose sides are generated from their own parameter settings (notes: added to the report).

    Train (sizes["train"] records) is drawn evenly from train_settings, test (sizes["test"])
    from test_settings, each setting from its own seed (stream ``side`` of
    gengap.generators.seeding). Validation (sizes["validation"]) is drawn from the train
    settings on stream ``validation``: distinct inputs that train does not hold, over input
    lengths in train's proportions (gengap.splits.validation). Test inputs that also occur in
    train or validation are removed as for any split, so the test part can come out smaller
    than asked.

    sampling (SampledOptions): with ``train_sampler: diverse`` each train setting draws
    ``sampler_candidates`` x its share from its own seed and the diverse sampler keeps its
    share of them (gengap.splits.diverse, stream ``train_sample``); validation is then drawn
    holding none of the candidates' inputs, in the candidates' proportions of input lengths.
    Its options set away from their defaults join the report's options.
    """
    for part in ("train", "validation", "test"):
        if sizes.get(part, 0) < 0:
            raise SplitError(f"size of {part} must be non-negative, got {sizes[part]}")
    n_train, n_validation = sizes.get("train", 0), sizes.get("validation", 0)
    if n_train < 1 or sizes.get("test", 0) < 1:
        raise SplitError("a sampled split needs at least one train and one test example")
    chosen = sampled_options(sampling)
    counts = even_counts(n_train, train_settings)
    extra: dict[str, Any] = {}
    if chosen.train_sampler == DIVERSE:
        pools = _side(task, train_settings, n_train, seed, "train", chosen.sampler_candidates)
        selection = TrainSelection(DIVERSE, n_train, chosen.abstract_lexical, CompoundDefinition(chosen.compounds, chosen.local_size))
        train, extra["train_sample"] = selection.choose_groups(pools, counts, train_sample_rng(seed))
        extra["train_sample"]["candidates_per_record"] = chosen.sampler_candidates
    else:
        pools = train = _side(task, train_settings, n_train, seed, "train")
    test_side = [r for part in _side(task, test_settings, sizes["test"], seed, "test") for r in part]

    def candidates(index: int, round_: int, count: int) -> list[Record]:
        return generate_records(task, train_settings[index], count, validation_seed(seed, index, round_))

    validation = draw_validation(pools, n_validation, candidates)
    notes = {
        "sampled": True,
        "train_params": [p.to_dict() for p in train_settings],
        "test_params": [p.to_dict() for p in test_settings],
        "warnings": space_warnings(task, train_settings, n_train + n_validation, "train side")
        + space_warnings(task, test_settings, sizes["test"], "test side"),
        **extra,
        **dict(notes or {}),
    }
    rng = split_rng(seed, strategy)
    fraction = n_validation / (n_train + n_validation)
    options = {**options, **chosen.to_dict(), "validation_fraction": fraction}
    partition = Partition([r for part in train for r in part], test_side, notes=notes, validation=validation)
    return finish(strategy, options, seed, partition, fraction, rng)


def sample_length_split(
    task: str,
    train_range: Sequence[int] | Sequence[Sequence[int]],
    test_range: Sequence[int] | Sequence[Sequence[int]],
    sizes: Mapping[str, int],
    seed: int = 0,
    base: Mapping[str, Any] | None = None,
    sampling: Mapping[str, Any] | SampledOptions | None = None,
) -> SplitResult:
    """Length split of a generated task: each side sampled from its own size-knob range.

    A side is one inclusive range ``(lo, hi)`` or a union of them ``[(lo, hi), ...]``
    (gengap.splits.ranges: no overlap within a side or between the sides); a union side draws evenly
    from its ranges (one parameter setting each), and the report then lists the ranges and,
    under ``regimes``, whether each test range is interpolation or extrapolation. Ranges refer
    to the task's size knob (`gengap list`: input length in tokens for sequence tasks, digits
    per operand for arithmetic); base overrides other parameters of both sides; sampling: see
    sample_split (e.g. ``{"train_sampler": "diverse"}``).
    """
    train_ranges, test_ranges = parse_ranges(train_range, "train_range"), parse_ranges(test_range, "test_range")
    if not is_union(train_ranges, test_ranges):
        if train_ranges[0][1] >= test_ranges[0][0] and test_ranges[0][1] >= train_ranges[0][0]:
            raise SplitError(f"train range {tuple(train_range)} and test range {tuple(test_range)} overlap")
    check_disjoint(train_ranges, test_ranges)
    spec = get_task(task)
    train, test = size_settings(task, train_ranges, base), size_settings(task, test_ranges, base)
    union = is_union(train_ranges, test_ranges)
    written = (as_lists if union else lambda ranges: list(ranges[0]))
    options = {"by": "size", "size_knob": spec.size_knob, "train_range": written(train_ranges), "test_range": written(test_ranges)}
    notes = {"regimes": regimes(train_ranges, test_ranges)} if union else None
    return sample_split(task, train, test, sizes, seed, "length", options, notes, sampling)


def size_settings(task: str, ranges: Sequence[Sequence[int]], base: Mapping[str, Any] | None = None) -> list[Params]:
    """The parameter settings of a sampled length side: one per size-knob range, base overriding
    the other parameters; SplitError naming the task when a setting is invalid."""
    spec = get_task(task)
    try:
        return [spec.with_size(*r).replace(**dict(base or {})) for r in ranges]
    except ParamError as err:
        raise SplitError(f"{task}: {err}") from None


def sample_level_split(
    task: str, level_max: int, sizes: Mapping[str, int], seed: int = 0, test_levels: Sequence[int] | None = None,
    sampling: Mapping[str, Any] | SampledOptions | None = None,
) -> SplitResult:
    """Easy-to-hard split of a generated task: train on levels 1..level_max, test on higher ones.

    test_levels defaults to level_max + 1 .. 10. Each side draws evenly from its levels.
    sampling: see sample_split.
    """
    spec = get_task(task)
    if not 1 <= level_max <= 9:
        raise SplitError(f"level_max must be in 1..9, got {level_max}")
    tests = list(test_levels) if test_levels else list(range(level_max + 1, 11))
    if any(not level_max < k <= 10 for k in tests):
        raise SplitError(f"test levels must lie in {level_max + 1}..10, got {tests}")
    train = [spec.level(k) for k in range(1, level_max + 1)]
    options = {"by": "level", "level_max": level_max, "test_levels": tests}
    return sample_split(task, train, [spec.level(k) for k in tests], sizes, seed, "difficulty", options, sampling=sampling)


def records_of_batch(batch: Any, task: str) -> list[Record]:
    """The record dicts of a generated or enumerated Batch."""
    return list(batch.records(task))
