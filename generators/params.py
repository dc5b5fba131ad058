"""Typed task parameters: frozen dataclasses whose fields carry ranges and docs.

A task declares its parameters as a frozen dataclass subclassing :class:`Params`, with
each field made by :func:`knob`. Construction coerces an integer given for a float field
to a float (so ``1`` from YAML and ``1.0`` from the command line are one setting, with one
canonical JSON and hence one seed), validates types, ranges and choices and then calls
``check_consistency`` for cross-field rules (e.g. min <= max). Numbers follow the one numeric
rule (gengap.generators.numbers): a float is finite (NaN and infinities are refused, ranged or
not) and every number lies in its knob's range. Any violation raises :class:`ParamError`
with a one-line message naming the parameter; :meth:`Params.value_problem` gives the same
message for one value without building the parameters (a record's meta fields).
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any, Mapping, TypeVar

from gengap.generators.numbers import Range

P = TypeVar("P", bound="Params")


class ParamError(ValueError):
    """A task parameter is unknown, malformed, out of range or inconsistent."""


def knob(
    default: Any,
    *,
    lo: float | None = None,
    hi: float | None = None,
    choices: tuple[str, ...] | None = None,
    doc: str = "",
    rendering: bool = False,
    added: bool = False,
) -> Any:
    """A parameter field with a default, an inclusive range or a set of choices, and a doc.

    A ``rendering`` knob changes how an example is written, never which example is drawn
    (e.g. ``trace``; ``lexicon``, gengap.generators.lexicons): it is left out of
    :meth:`Params.canonical` (the seed), so settings that differ only in it draw the same
    examples, and out of :meth:`Params.to_dict` at its default,
    so settings made before it existed keep their dict (manifests, reports) byte for byte.
    An ``added`` knob (one added after releases were made with its owner) is only left out of
    :meth:`Params.to_dict` at its default, for the same reason.
    """
    return dataclasses.field(
        default=default, metadata={"lo": lo, "hi": hi, "choices": choices, "doc": doc, "rendering": rendering, "added": added}
    )


def _type_of(field: dataclasses.Field) -> type:
    kind = field.type if isinstance(field.type, type) else str(field.type)
    return {"int": int, "float": float, "str": str, "bool": bool}.get(kind, kind)  # type: ignore[arg-type]


def _as_float(value: int) -> float:
    """An int as a float; infinity for one too large for a float (the numeric rule refuses it)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _field_problem(field: dataclasses.Field, value: Any) -> str | None:
    """Why value cannot be the parameter field (None: it can): see the module doc."""
    kind = _type_of(field)
    meta = field.metadata
    name = field.name
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        return f"parameter {name} must be an integer, got {value!r}"
    if kind is float and (isinstance(value, bool) or not isinstance(value, (int, float))):
        return f"parameter {name} must be a number, got {value!r}"
    if kind is bool and not isinstance(value, bool):
        return f"parameter {name} must be true or false, got {value!r}"
    if kind is str and not isinstance(value, str):
        return f"parameter {name} must be a string, got {value!r}"
    lo, hi, choices = meta.get("lo"), meta.get("hi"), meta.get("choices")
    if kind is float and isinstance(value, int):
        value = _as_float(value)
    if kind in (int, float):
        if isinstance(value, float) and not math.isfinite(value):
            return f"parameter {name}={value} is not a finite number"
        if not Range.between(lo, hi).holds(value):
            return f"parameter {name}={value} is out of range [{lo}, {hi}]"
    if choices is not None and value not in choices:
        return f"parameter {name}={value!r} is not one of {', '.join(choices)}"
    return None


@dataclasses.dataclass(frozen=True)
class Params:
    """Base class of every task's parameter dataclass."""

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            problem = _field_problem(field, value)
            if problem is not None:
                raise ParamError(problem)
            if _type_of(field) is float and isinstance(value, int):
                object.__setattr__(self, field.name, _as_float(value))  # the declared type, before anything reads or hashes it
        self.check_consistency()

    @classmethod
    def value_problem(cls, name: str, value: Any) -> str | None:
        """Why value cannot be parameter name (its type, the numeric rule, its range or choices),
        in the words construction would raise; None when it can (cross-field rules not checked)."""
        fields = {f.name: f for f in dataclasses.fields(cls)}
        if name not in fields:
            return f"unknown parameter {name!r}"
        return _field_problem(fields[name], value)

    def check_consistency(self) -> None:
        """Cross-field rules; raise ParamError. Override in subclasses."""

    def require(self, condition: bool, message: str) -> None:
        """Raise ParamError(message) unless condition holds."""
        if not condition:
            raise ParamError(message)

    # -- conversions -------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Every parameter, except a rendering or an added knob (see :func:`knob`) at its default."""
        values = dataclasses.asdict(self)
        for field in dataclasses.fields(self):
            quiet = field.metadata.get("rendering") or field.metadata.get("added")
            if quiet and values[field.name] == field.default:
                del values[field.name]
        return values

    def canonical(self) -> str:
        """Canonical JSON of the parameters that decide which examples are drawn (sorted keys,
        no spaces, values of their declared types; rendering knobs left out): part of the seed."""
        values = dataclasses.asdict(self)
        for field in dataclasses.fields(self):
            if field.metadata.get("rendering"):
                del values[field.name]
        return json.dumps(values, sort_keys=True, separators=(",", ":"))

    def replace(self: P, **changes: Any) -> P:
        unknown = set(changes) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise ParamError(f"unknown parameter {sorted(unknown)[0]!r}; known: {', '.join(self.names())}")
        return dataclasses.replace(self, **changes)

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def from_dict(cls: type[P], values: Mapping[str, Any]) -> P:
        """Build from a mapping of typed values (e.g. parsed YAML); unknown keys are errors."""
        return cls().replace(**dict(values))

    @classmethod
    def parse_value(cls, name: str, text: str) -> Any:
        """Parse the command-line text of one parameter into its declared type."""
        fields = {f.name: f for f in dataclasses.fields(cls)}
        if name not in fields:
            raise ParamError(f"unknown parameter {name!r}; known: {', '.join(fields)}")
        kind = _type_of(fields[name])
        try:
            if kind is int:
                return int(text)
            if kind is float:
                return float(text)
            if kind is bool:
                lowered = text.lower()
                if lowered in ("1", "true", "yes"):
                    return True
                if lowered in ("0", "false", "no"):
                    return False
                raise ValueError(text)
        except ValueError:
            raise ParamError(f"parameter {name}={text!r} is not a valid {kind.__name__}") from None
        return text

    @classmethod
    def describe(cls) -> list[dict[str, Any]]:
        """One entry per parameter: name, type, default, range or choices, doc."""
        rows = []
        for field in dataclasses.fields(cls):
            meta = field.metadata
            row: dict[str, Any] = {
                "name": field.name,
                "type": _type_of(field).__name__,
                "default": field.default,
                "doc": meta.get("doc", ""),
            }
            if meta.get("lo") is not None or meta.get("hi") is not None:
                row["range"] = [meta.get("lo"), meta.get("hi")]
            if meta.get("choices") is not None:
                row["choices"] = list(meta["choices"])
            rows.append(row)
        return rows
