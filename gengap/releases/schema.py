"""The gengap JSON Schemas and validators built once per process.

Validation uses jsonschema-rs (a base dependency; release, verify and check run ~5-10x
faster with it) and the pure-Python jsonschema Draft 2020-12 validator where it cannot be
imported; both report the same verdict and a message naming the failing location.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any, Callable

from jsonschema import Draft202012Validator

try:  # optional accelerator
    import jsonschema_rs
except ImportError:  # pragma: no cover - depends on the environment
    jsonschema_rs = None


@lru_cache(maxsize=None)
def load_schema(name: str = "example") -> dict[str, Any]:
    """The parsed JSON Schema gengap/schemas/<name>.schema.json."""
    text = resources.files("gengap").joinpath(f"schemas/{name}.schema.json").read_text()
    return json.loads(text)


@lru_cache(maxsize=None)
def python_validator(name: str = "example") -> Draft202012Validator:
    schema = load_schema(name)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


@lru_cache(maxsize=None)
def _errors_function(name: str, accelerated: bool) -> Callable[[Any], list[str]]:
    if accelerated and jsonschema_rs is not None:
        fast = jsonschema_rs.validator_for(load_schema(name))

        def fast_errors(instance: Any) -> list[str]:
            if fast.is_valid(instance):
                return []
            return [
                f"{'/'.join(str(p) for p in e.instance_path) or 'record'}: {e.message}"
                for e in fast.iter_errors(instance)
            ]

        return fast_errors
    slow = python_validator(name)

    def slow_errors(instance: Any) -> list[str]:
        return [
            f"{'/'.join(str(p) for p in e.absolute_path) or 'record'}: {e.message}"
            for e in slow.iter_errors(instance)
        ]

    return slow_errors


def schema_errors(instance: Any, name: str = "example", accelerated: bool = True) -> list[str]:
    """Violations of schema `name` by instance, as 'location: message' (empty when valid)."""
    return _errors_function(name, accelerated)(instance)


def record_errors(record: Any, accelerated: bool = True) -> list[str]:
    """Schema violations of one example record (empty when valid)."""
    return schema_errors(record, "example", accelerated)
