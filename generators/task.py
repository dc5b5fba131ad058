"""The task interface every generator implements.

A task is a class with a snake_case ``name``, a ``family``, a one-line ``description``
and a frozen :class:`~gengap.generators.params.Params` dataclass. It provides

- ``levels()``: difficulty levels 1..10 mapped to parameter settings, monotone in difficulty;
- ``generate(rng, n, params)``: a :class:`~gengap.generators.batch.Batch` of n examples drawn
  with ``rng`` only (so seeding fixes the output);
- ``solve(example)``: an independent reference answer recomputed from the record's input
  (and ``meta``) in plain Python, never by calling ``generate``;
- ``check(example, prediction)``: whether a predicted target is correct (default: token
  equality with ``solve``; tasks with several correct answers override it); for a traced
  record (gengap.generators.traces) both the answer after the separator and the trace before it
  must be right, and ``check_parts`` reports the two separately;
- for tasks with a ``trace`` parameter: ``trace_formats`` (what each format writes) and
  ``trace_tokens(example, fmt)``, the intermediate states recomputed from the input;
  ``trace_steps`` cuts a trace into steps (``trace_step_widths``: tokens per coarse or fine
  step, 1 by default) and ``step_verdicts`` judges each step;
- ``meta_keys``: the ``meta`` fields ``solve`` reads (read with :meth:`Task.meta`, which
  never falls back to a default: a record without them cannot be checked). A meta field that
  names a task parameter (``max_depth``, ``modulus``, a world's ``n_entities``; those of
  ``meta_parameters``) holds that parameter's value and keeps to its rule (type, the numeric
  rule, range, choices): the one bound on the work a record can ask of a checker, applied by
  :meth:`Task.meta_problem` in ``check_parts`` (every check and reward), ``gengap check`` and
  ``gengap verify``;
- optionally ``categories``/``category``/``exposure`` (named generalization categories, as
  COGS's: the ``category`` split strategy reads them),
  ``derive`` (compositional tasks: the derivation tree read from the input,
  which a record's ``structure`` must equal), ``atoms``/``compounds`` (from the record's
  ``structure``, or its derivation when it has none), ``enumerate`` (finite tasks),
  ``input_space_size`` (how many distinct inputs a parameter setting allows),
  ``measure`` (difficulty features recomputed from a record) and ``rule_system``
  (rule-in-context tasks: the canonical form of the rules a record's input carries).
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections import Counter
from typing import Any, ClassVar, Generic, Mapping, TypeVar

import numpy as np

from gengap.generators.batch import Batch
from gengap.generators.markers import task_input
from gengap.generators.derivation import Tree
from gengap.generators.lexicons import KEY as LEXICON
from gengap.generators.params import ParamError, Params
from gengap.generators.traces import split_steps, split_target, trace_format

P = TypeVar("P", bound=Params)


def meta_value(example: Mapping[str, Any], key: str) -> Any:
    """``example["meta"][key]``; ValueError when the record has no such meta field (never a default)."""
    meta = example.get("meta")
    if not isinstance(meta, Mapping) or key not in meta:
        raise ValueError(f"meta.{key} is missing")
    return meta[key]

def decimal_below(token: str, bound: int) -> bool:
    """Whether token is a decimal number in 0..bound-1 written without leading zeros."""
    return token.isascii() and token.isdigit() and (token == "0" or token[0] != "0") and len(token) <= len(str(bound)) and int(token) < bound


FAMILIES = (
    "regular",
    "context_free",
    "context_sensitive",
    "arithmetic",
    "reasoning",
    "structured",
    "compositional",
)


class Task(ABC, Generic[P]):
    """Base class of all tasks; subclasses set the class attributes and implement the methods."""

    name: ClassVar[str]
    family: ClassVar[str]
    description: ClassVar[str]
    params_type: ClassVar[type[Params]]
    size_knob: ClassVar[str] = "input length in tokens (min_length..max_length)"
    level_feature: ClassVar[str] = "input_length"  # difficulty feature whose mean rises with level
    meta_keys: ClassVar[tuple[str, ...]] = ()  # meta fields solve reads: every record carries them
    # meta fields holding the value of the task parameter of that name (None: every meta key naming a parameter)
    meta_parameters: ClassVar[tuple[str, ...] | None] = None
    trace_formats: ClassVar[dict[str, str]] = {}  # format -> what the trace writes (none: no traces)
    trace_step_widths: ClassVar[dict[str, int]] = {}  # coarse/fine -> tokens per step (default 1)
    rule_system_form: ClassVar[str] = ""  # rule-in-context tasks: how rule_system canonicalizes a record's rules
    answer_tokens: ClassVar[tuple[str, ...]] = ()  # every answer of the task, when that is a small fixed set

    # -- parameters -----------------------------------------------------------------

    def default_params(self) -> P:
        return self.params_type()  # type: ignore[return-value]

    def make_params(self, values: Mapping[str, Any] | None = None, level: int | None = None) -> P:
        """Parameters from a level (if given) overridden by typed values."""
        base = self.level(level) if level is not None else self.default_params()
        if not values:
            return base
        try:
            return base.replace(**dict(values))
        except ParamError as err:
            raise ParamError(f"{self.name}: {err}") from None

    @abstractmethod
    def levels(self) -> dict[int, P]:
        """Difficulty levels 1..10 (all ten keys) mapped to parameters."""

    def level(self, k: int) -> P:
        levels = self.levels()
        if k not in levels:
            raise ParamError(f"{self.name}: level {k} is not one of 1..{max(levels)}")
        return levels[k]

    def with_size(self, lo: int, hi: int) -> P:
        """Default parameters with the task's size knob ranging over [lo, hi].

        The size knob is ``size_knob`` below: the input length in tokens for sequence
        tasks (min_length/max_length); tasks without those fields override this. A range
        that starts below the task's shortest input starts at the shortest input instead
        (so 1..40 means "up to 40" for every task). Length splits and benchmarks use this
        to sample each side from its own range.
        """
        fields = {f.name: f for f in dataclasses.fields(self.params_type)}
        if "min_length" not in fields or "max_length" not in fields:
            raise ParamError(f"{self.name}: task has no size knob")
        shortest = fields["min_length"].metadata.get("lo") or 1
        if hi < shortest:
            raise ParamError(f"{self.name}: inputs have at least {shortest} tokens, got a size range up to {hi}")
        return self.default_params().replace(min_length=max(lo, shortest), max_length=hi)

    # -- meta -------------------------------------------------------------------------

    def _bounded_meta(self) -> tuple[str, ...]:
        """The meta keys that hold a parameter's value (see ``meta_parameters``)."""
        if self.meta_parameters is not None:
            return self.meta_parameters
        names = set(self.params_type.names())
        return tuple(key for key in self.meta_keys if key in names)

    def meta_problem(self, example: Mapping[str, Any]) -> str | None:
        """Why the record's meta cannot be read (None: it can): a meta key the checker reads is
        missing, or a field holding a parameter's value breaks that parameter's rule
        (``meta.max_depth=99 is out of range [1, 4]``): a record never asks a checker for more
        work than the parameters allow."""
        meta = example.get("meta")
        if isinstance(meta, Mapping) and LEXICON in meta and LEXICON not in self.params_type.names():
            return f"meta.{LEXICON} is set, but {self.name} has no lexicons (gengap.generators.lexicons)"
        if not self.meta_keys:
            return None
        for key in self.meta_keys:
            if not isinstance(meta, Mapping) or key not in meta:
                return f"meta.{key} is missing ({self.name}'s checker reads it)"
        for key in self._bounded_meta():
            problem = self.params_type.value_problem(key, meta[key])
            if problem is not None:
                return problem.replace(f"parameter {key}", f"meta.{key}", 1)
        return None

    def meta(self, example: Mapping[str, Any], key: str) -> Any:
        """``example["meta"][key]``, held to its parameter's rule (meta_problem); ValueError otherwise."""
        value = meta_value(example, key)
        if key in self._bounded_meta():
            problem = self.params_type.value_problem(key, value)
            if problem is not None:
                raise ValueError(problem.replace(f"parameter {key}", f"meta.{key}", 1))
        return value

    # -- generation and checking ------------------------------------------------------

    @abstractmethod
    def generate(self, rng: np.random.Generator, n: int, params: P) -> Batch:
        """n examples drawn with rng from the distribution that params describe."""

    @abstractmethod
    def solve(self, example: Mapping[str, Any]) -> str:
        """The correct target of a record, recomputed from its input (and meta)."""

    def check(self, example: Mapping[str, Any], prediction: str) -> bool:
        """Whether prediction is a correct target for the record (tokens compared exactly;
        for a traced record, answer and trace both)."""
        answer_ok, trace_ok = self.check_parts(example, prediction)
        return answer_ok and trace_ok

    def check_parts(self, example: Mapping[str, Any], prediction: str) -> tuple[bool, bool]:
        """(answer correct, trace correct) of a prediction. For an answer-only record the
        trace is vacuously correct; for a traced one the answer is what follows the separator
        and the trace what precedes it (both wrong when the prediction has no separator).
        A shortcut cue or a task marker in front of the input (gengap.generators.cues, .markers)
        is not read. A record whose meta breaks its parameters' rules (meta_problem) is wrong
        whatever the prediction."""
        if self.meta_keys and self.meta_problem(example) is not None:
            return False, False
        example = task_input(example)
        try:
            fmt = trace_format(example)
        except ValueError:
            return False, False
        if fmt == "none":
            return self.check_answer(example, prediction), True
        parts = split_target(prediction)
        if parts is None:
            return False, False
        trace, answer = parts
        return self.check_answer(example, " ".join(answer)), self.check_trace(example, trace, fmt)

    def check_answer(self, example: Mapping[str, Any], prediction: str) -> bool:
        """Whether prediction is the record's answer (tokens equal to ``solve``'s)."""
        try:
            expected = self.solve(example)
        except (ValueError, KeyError, IndexError, TypeError, ZeroDivisionError):
            return False
        return prediction.split() == expected.split()

    def trace_tokens(self, example: Mapping[str, Any], fmt: str) -> list[str]:
        """The trace of a record in format fmt (coarse or fine), recomputed from its input and
        meta in plain Python (never from its target); ValueError for a malformed input."""
        raise ValueError(f"{self.name} has no trace formats")

    def check_trace(self, example: Mapping[str, Any], trace: list[str], fmt: str) -> bool:
        """Whether trace is the record's correct computation in format fmt (``verify_trace``;
        False for a format the task lacks or a trace or input it cannot read)."""
        if fmt not in self.trace_formats:
            return False
        try:
            return self.verify_trace(example, trace, fmt)
        except (ValueError, KeyError, IndexError, TypeError, ZeroDivisionError):
            return False

    def verify_trace(self, example: Mapping[str, Any], trace: list[str], fmt: str) -> bool:
        """Step-by-step verification of a trace against the input (not the target). Default:
        the trace equals ``trace_tokens``; tasks override it with a check written apart from
        the builder, each step verified from the input and the trace's own previous step."""
        return trace == self.trace_tokens(example, fmt)

    def trace_steps(self, trace: list[str], fmt: str, example: Mapping[str, Any] | None = None) -> list[list[str]]:
        """The steps of a trace in format fmt (gengap.generators.traces.split_steps; coarse and
        fine steps are ``trace_step_widths[fmt]`` tokens). Tasks whose steps are not of one
        width override it (example: the record, for steps that depend on its input)."""
        return split_steps(trace, fmt, self.trace_step_widths.get(fmt, 1))

    def step_verdicts(self, example: Mapping[str, Any], trace: list[str], fmt: str) -> list[bool]:
        """Per step of trace (``trace_steps``), whether it is the step of the correct computation
        at its place: the steps re-derived from the record's input (``trace_tokens``, never its
        target). A step past the correct trace's last is wrong; all False when the input cannot
        be read or the task has no such format. All true for the record's own trace."""
        example = task_input(example)
        given = self.trace_steps(trace, fmt, example)
        try:
            expected = self.trace_steps(self.trace_tokens(example, fmt), fmt, example) if fmt in self.trace_formats else []
        except (ValueError, KeyError, IndexError, TypeError, ZeroDivisionError):
            expected = []
        return [i < len(expected) and step == expected[i] for i, step in enumerate(given)]

    # -- optional capabilities ------------------------------------------------------------

    def size_bounds(self, params: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
        """Bounds that every record generated with params (``Params.to_dict()``) keeps on its
        difficulty features: ``{"input_length": (min_length, max_length)}`` for the default size
        knob (with_size's input length in tokens); {} when the task states none. `gengap verify`
        holds the parts of splits drawn from parameter settings (sampled length and level splits:
        their report's ``train_params`` and ``test_params``) to them."""
        if type(self).with_size is not Task.with_size or not self.size_knob.startswith("input length in tokens"):
            return {}
        lo, hi = params.get("min_length"), params.get("max_length")
        return {"input_length": (lo, hi)} if isinstance(lo, int) and isinstance(hi, int) else {}

    def measure(self, example: Mapping[str, Any]) -> dict[str, int] | None:
        """The task's difficulty features (besides input_length and output_length) recomputed
        in plain Python from the record's input, target and meta; None when the task cannot.

        `gengap check` and `gengap verify` compare them with the record's ``difficulty``.
        """
        return None

    def input_space_size(self, params: P) -> int | None:
        """Number of distinct inputs params allow, when it is cheap to count; else None."""
        return None

    def enumerate(self, params: P) -> Batch | None:
        """Every example params allow, in a fixed order, for finite tasks; else None."""
        return None

    def enumeration_size(self, params: P) -> int | None:
        """How many records enumerate(params) returns, counted without enumerating (so that
        ``pool: all`` is held to the record limits before anything is built); ParamError when
        enumerate would refuse params; None for tasks that do not enumerate."""
        return None

    def derive(self, example: Mapping[str, Any]) -> Tree | None:
        """The derivation tree of a compositional record, read from its input (ValueError when
        the input has none); None for tasks without derivations. A record's ``structure``
        must equal it (`gengap check`, `gengap verify`, `gengap release`)."""
        return None

    def structure_problem(self, example: Mapping[str, Any]) -> str | None:
        """For a task whose input does not determine the derivation (``derive`` gives None), why
        the record's own ``structure`` (a tree) cannot be its derivation; None when it can. Splits
        read atoms and compounds from it, so a task whose records carry one re-checks it here
        against the record (grid_program: the program maps every demonstration and makes the
        target). Default: any tree."""
        return None

    def structure_of(self, example: Mapping[str, Any]) -> Tree:
        """The record's ``structure``, or its derivation read from the input when it has none."""
        structure = example.get("structure")
        return structure if structure is not None else self.derive(example)

    def atoms(self, example: Mapping[str, Any]) -> Counter[str] | None:
        """Multiset of atoms (rules, primitives) of a compositional example; else None."""
        return None

    def compounds(self, example: Mapping[str, Any], abstract_lexical: bool = False) -> Counter[str] | None:
        """Multiset of compounds (connected sub-derivations); else None.

        With abstract_lexical, lexical items are replaced by a placeholder.
        """
        return None

    def possible_answer(self, example: Mapping[str, Any], answer: str) -> bool | None:
        """Whether answer (one token) is an answer some record like this one (its task and meta)
        can have, for a task with a small answer set (``answer_tokens``, or a range its meta
        gives: ``0..modulus-1``); None when the task does not say. A shortcut cue must name one
        (`gengap check`, `gengap verify`: ``cue:banana`` on parity_check is refused)."""
        return answer in self.answer_tokens if self.answer_tokens else None

    def rule_system(self, example: Mapping[str, Any]) -> str | None:
        """The canonical form of the rule system a rule-in-context record carries in its input
        (``rule_system_form`` says how it is canonicalized; the ``rule_holdout`` split compares
        it); None for tasks without one. ValueError when the input cannot be read."""
        return None

    def categories(self) -> tuple[str, ...]:
        """Names of the generalization categories the task defines (COGS's 21); none by default."""
        return ()

    def category(self, example: Mapping[str, Any]) -> str | None:
        """The record's generalization category: a name of ``categories()``, ``""`` for the
        training distribution, None for neither (e.g. an exposure example)."""
        return None

    def exposure(self, category: str) -> list[str]:
        """Inputs of the exposure examples a split of this category puts in train."""
        return []

    # -- description --------------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        """What `gengap list --json` prints for this task."""
        return {
            "name": self.name,
            "family": self.family,
            "description": self.description,
            "size_knob": self.size_knob,
            "level_feature": self.level_feature,
            "parameters": self.params_type.describe(),
            "traces": dict(self.trace_formats),
            "levels": {str(k): p.to_dict() for k, p in sorted(self.levels().items())},
        }
