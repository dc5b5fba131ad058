"""Split builders the axis specs name (``validity_axes.builders:FUNCTION``): pure functions of
their arguments, every seed derived from a fixed label, so a run's split is the same whenever
and wherever it is built."""

from __future__ import annotations

from typing import Any, Sequence

PROTOCOL_SEED = 20261203  # the fourth edition's split seeds: config_seed(PROTOCOL_SEED, label)


def _seed(label: str) -> int:
    from gengap.generators.seeding import config_seed

    return config_seed(PROTOCOL_SEED, label)


def _ranges(value: Any) -> Any:
    """A side as the splits API takes it: (lo, hi) or a list of (lo, hi)."""
    if value and isinstance(value[0], (list, tuple)):
        return [tuple(r) for r in value]
    return tuple(value)


def length(task: str, train: Sequence[Any], test: Sequence[Any], sizes: dict[str, int], label: str, params: dict[str, Any] | None = None) -> Any:
    """A sampled length split (gengap.splits.sample_length_split) of the task's size knob."""
    from gengap.splits import sample_length_split

    return sample_length_split(task, _ranges(train), _ranges(test), sizes, seed=_seed(label), base=params)


def level(task: str, level_max: int, test_levels: Sequence[int], sizes: dict[str, int], label: str) -> Any:
    from gengap.splits import sample_level_split

    return sample_level_split(task, level_max, sizes, seed=_seed(label), test_levels=list(test_levels))


def same_distribution(task: str, lengths: Sequence[int], sizes: dict[str, int], label: str, cue: dict[str, float] | None = None) -> Any:
    """Train, validation and test from one setting (strategy iid; test inputs unseen in train and
    validation), with shortcut cues (gengap.splits.cues) when ``cue`` gives their rates."""
    from gengap.generators import get_task
    from gengap.splits.api import sample_split
    from gengap.splits.cues import apply_cue

    params = get_task(task).with_size(*lengths)
    result = sample_split(task, [params], [params], sizes, _seed(label), "iid", {})
    return apply_cue(result, cue, _seed(label)) if cue else result


def scan(strategy: str, options: dict[str, Any], label: str) -> Any:
    """A split of all 20,910 SCAN commands."""
    from gengap.generators import get_task
    from gengap.splits import split

    task = get_task("scan")
    pool = list(task.enumerate(task.default_params()).records("scan"))
    return split(pool, strategy, options, seed=_seed(label))


def pool(task: str, params: dict[str, Any], n: int | None, strategy: str, options: dict[str, Any], label: str,
         pool_label: str | None = None) -> Any:
    """A split of a generated pool of n records (n None: the task's whole enumeration); configs
    that name the same ``pool_label`` split the same pool (by default each label draws its own)."""
    from gengap.generators import get_task
    from gengap.splits import generate_records, split

    spec = get_task(task)
    typed = spec.make_params(params)
    records = list(spec.enumerate(typed).records(task)) if n is None else generate_records(task, typed, n, _seed((pool_label or label) + "-pool"))
    return split(records, strategy, options, seed=_seed(label))


def reversal(params: dict[str, Any], holdout_fraction: float, label: str, test: str = "reversed") -> Any:
    """The reversal split of fact_reverse (every query of one world): ID = the forward lookups of
    the held-out facts (in train: were they learned?), OOD (``test``): their reversed queries
    ("reversed"), the reversed queries of the facts trained in both directions ("both": records of
    train), or the forward lookups of those facts ("forward": records of train). Train and
    validation are the same whatever ``test`` is."""
    from gengap.generators import get_task
    from gengap.splits import SplitResult, split
    from gengap.splits.facts import query_kind, reversed_fact

    task = get_task("fact_reverse")
    records = list(task.enumerate(task.make_params(params)).records(task.name))
    result = split(records, "facts", {"by": "direction", "holdout_fraction": holdout_fraction}, seed=_seed(label))
    held = {reversed_fact(r) for r in result.test}
    forward = [r for r in result.train if query_kind(r) == "lookup" and reversed_fact(r) in held]
    if test == "reversed":
        part, evaluation = result.test, "OOD = their reversed queries"
    else:
        lookups = [r for r in result.train if query_kind(r) == "lookup" and reversed_fact(r) not in held]
        both = {reversed_fact(r) for r in lookups}
        part = [r for r in result.train if query_kind(r) == "reverse" and reversed_fact(r) in both] if test == "both" else lookups
        evaluation = ("OOD = the reversed queries of the facts trained in both directions (in train)" if test == "both"
                      else "OOD = the forward lookups of the facts trained in both directions (in train)")
    report = {**result.report, "evaluation": f"ID = forward lookups of the held-out facts (in train); {evaluation}"}
    return SplitResult(result.train, forward, list(part), report)


_RELEASES: dict[str, str] = {}  # suite text -> the release this process built from it


def _release_of(suite_text: str) -> str:
    """The folder of a release built from suite_text (cards left out), once per process, in a
    temporary folder removed when the process ends."""
    if suite_text not in _RELEASES:
        import atexit
        import shutil
        import tempfile
        from pathlib import Path

        from gengap.release import write_release
        from gengap.suite import parse_suite

        scratch = tempfile.mkdtemp(prefix="gengap-validity-release-")
        atexit.register(shutil.rmtree, scratch, True)
        out = Path(scratch) / "release"
        write_release(parse_suite(suite_text, "<validity>"), out, cards=False)
        _RELEASES[suite_text] = str(out)
    return _RELEASES[suite_text]


def released(suite: str, config: str, test: str, contaminate: int = 0, fresh_n: int = 500, fresh_seed: int = 1) -> Any:
    """A config of the release built from ``suite`` (a suite's YAML text): its train and validation
    parts, and as test its cited part (``test`` "cited") or a fresh test part of ``fresh_n``
    records drawn with ``gengap fresh``'s machinery from draw ``fresh_seed`` ("fresh": no input of
    the release, the config's own test rule). ``contaminate``: the cited test part is added to
    train that many times (a model that saw the cited test part in training; False/True read as 0/1)."""
    from gengap.fresh import draw_fresh
    from gengap.release_view import read_release
    from gengap.splits import SplitResult

    root = _release_of(suite)
    view = read_release(root, keep=(config,))
    train, validation, cited = (view.part(config, side) for side in ("train", "validation", "test"))
    if test not in ("cited", "fresh"):
        raise ValueError(f"test part {test!r} is not cited or fresh")
    part = cited if test == "cited" else draw_fresh(view, config, fresh_n, fresh_seed).records
    copies = int(contaminate)
    held = "; train holds the cited test part" + (f" {copies} times" if copies > 1 else "")
    report = {**view.config(config)["report"], "evaluation": f"test: the {test} part" + (held if copies else "")}
    return SplitResult(list(train) + list(cited) * copies, list(validation), list(part), report)
