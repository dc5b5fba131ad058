"""The ``cue`` split option: shortcut cues at one rate in train and validation, another in test.

``cue: {train: 0.95, test: 0.5}`` (a suite entry's key, or `gengap split --cue
train=0.95,test=0.5`) puts a cue token in front of every record of a finished split
(gengap.generators.cues): in train and validation it names the record's answer with probability
``train``, in test with probability ``test`` (0.5 on a binary task: uninformative; 0.05:
reversed). It works with any strategy, since it runs after the split is made (and after a
release's caps), on the parts as they are: the answer set is measured over all three parts
together, and each part draws from its own stream (``cue`` of gengap.generators.seeding, from the
split's seed and the part's name), so the same split and option give the same bytes.

The report gains ``cue``: the configured rate and the measured agreement of each part, the
answer set and the token form; its per-part summaries (``parts``) describe the cued records
(``input_length`` counts the cue, ``cue_agrees`` is a feature). Divergences and novelty are
those of the cue-less split.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from gengap.generators.cues import CUE_PREFIX, CueError, add_cues, agreement, answer_set
from gengap.generators.params import ParamError, Params, knob
from gengap.generators.seeding import cue_rng
from gengap.splits.base import PARTS, SplitError, SplitResult, part_summary
from gengap.splits.precision import rounded


@dataclass(frozen=True)
class CueOption(Params):
    """Cue rates: the probability that a record's cue names its answer, per side."""

    train: float = knob(0.95, lo=0.0, hi=1.0, doc="agreement rate of the cue in train and validation")
    test: float = knob(0.5, lo=0.0, hi=1.0, doc="agreement rate of the cue in test")

    def rate(self, part: str) -> float:
        return self.test if part == "test" else self.train


def cue_option(value: Any) -> CueOption:
    """The typed option from a mapping ({train, test}, both required); SplitError otherwise."""
    if not isinstance(value, Mapping):
        raise SplitError(f"cue must be a mapping with train and test rates, got {value!r}")
    missing = [key for key in ("train", "test") if key not in value]
    if missing:
        raise SplitError(f"cue needs a {missing[0]} rate (e.g. cue: {{train: 0.95, test: 0.5}})")
    try:
        return CueOption.from_dict(value)
    except ParamError as err:
        raise SplitError(f"cue: {str(err).replace('parameter', 'rate')}") from None


def parse_cue(text: str) -> dict[str, float]:
    """``train=0.95,test=0.5`` as a mapping of rates (checked by cue_option); SplitError otherwise."""
    values: dict[str, float] = {}
    for item in text.split(","):
        key, sep, number = item.partition("=")
        if not sep:
            raise SplitError(f"--cue takes train=RATE,test=RATE, got {text!r}")
        try:
            values[key.strip()] = CueOption.parse_value(key.strip(), number.strip())
        except ParamError as err:
            raise SplitError(f"cue: {str(err).replace('parameter', 'rate')}") from None
    cue_option(values)
    return values


def apply_cue(result: SplitResult, option: Mapping[str, Any] | CueOption, seed: int) -> SplitResult:
    """The split with cues in every part (module doc); SplitError when its records have no small
    answer set. The report's ``cue`` states per part the rate and the measured agreement."""
    typed = option if isinstance(option, CueOption) else cue_option(option)
    parts = result.parts()
    try:
        answers = answer_set(record for part in PARTS for record in parts[part])
        cued = {part: add_cues(parts[part], typed.rate(part), answers, cue_rng(seed, part)) for part in PARTS}
    except CueError as err:
        raise SplitError(str(err)) from None
    report = dict(result.report)
    report["parts"] = {part: part_summary(cued[part]) for part in PARTS}
    report["cue"] = rounded({
        "token": f"{CUE_PREFIX}<answer>",
        "answers": list(answers),
        "rate": {part: typed.rate(part) for part in PARTS},
        "agreement": {part: agreement(cued[part]) for part in PARTS},
    })
    return SplitResult(cued["train"], cued["validation"], cued["test"], report)


def cue_summary(cue: Mapping[str, Any]) -> str:
    """One line of a report's ``cue``: configured rate and measured agreement per part."""
    parts = ", ".join(f"{part} {cue['rate'][part]:g} ({_share(cue['agreement'][part])})" for part in PARTS)
    return f"cue rate (measured agreement): {parts}"


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
