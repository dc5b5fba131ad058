"""Resource limits on what a suite config may ask for, checked before anything is built.

- Suite YAML: at most ``MAX_SUITE_BYTES``, nesting at most ``MAX_YAML_DEPTH`` deep, and
  at most ``MAX_YAML_VALUES`` values once every alias (``*name``) is expanded, so that a
  few lines cannot expand into gigabytes (a "billion laughs" bomb); an alias inside the
  value it names (a cycle) is refused. These are the limits of the one YAML reader,
  generators.reading, found from the parser's events before anything is built.
- Records: a config holds at most ``max_records`` records (its pool, or the sum of its
  sampled sizes). The default is ``DEFAULT_MAX_RECORDS``, lowered to what the machine's
  memory can hold by an estimate from a small sample of the config's examples; an explicit
  limit (``gengap release --max-records N`` or the environment variable
  ``GENGAP_MAX_RECORDS``) replaces both.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from generators import Params, batch_to_jsonl, get_task
from generators.reading import MAX_YAML_BYTES as MAX_SUITE_BYTES
from generators.reading import MAX_YAML_DEPTH, MAX_YAML_VALUES  # noqa: F401  (documented here too)
from generators.seeding import estimate_rng

DEFAULT_MAX_RECORDS = 10_000_000
ENVIRONMENT_VARIABLE = "GENGAP_MAX_RECORDS"
SAMPLE = 64  # examples generated to estimate the size of a record
OVERHEAD = 400  # bytes of Python objects per record besides ~3 copies of its JSON text


class LimitError(ValueError):
    """A suite config asks for more than the limits allow."""


@dataclass(frozen=True)
class RecordLimit:
    """The most records a config may hold; explicit when the user set it."""

    max_records: int = DEFAULT_MAX_RECORDS
    explicit: bool = False

    @classmethod
    def from_environment(cls, value: int | None = None) -> "RecordLimit":
        """The limit given (a --max-records value), else GENGAP_MAX_RECORDS, else the default."""
        if value is None:
            raw = os.environ.get(ENVIRONMENT_VARIABLE, "").strip()
            if not raw:
                return cls()
            try:
                value = int(raw.replace("_", ""))
            except ValueError:
                raise LimitError(f"{ENVIRONMENT_VARIABLE}={raw!r} is not an integer") from None
        if value < 1:
            raise LimitError(f"the record limit must be at least 1, got {value}")
        return cls(value, explicit=True)


def physical_memory() -> int | None:
    """Bytes of RAM of this machine, when the OS says."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def record_bytes(task: str, params: Params) -> int:
    """Mean JSONL bytes of a record, from a small seeded sample."""
    batch = get_task(task).generate(estimate_rng(), SAMPLE, params)
    return max(1, len(batch_to_jsonl(batch, task)) // SAMPLE)


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if n < 1000 or unit == "PB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    return f"{n:,.1f} PB"


def check_records(task: str, params: Params, n: int, limit: RecordLimit) -> None:
    """LimitError, with an estimate of memory and disk, when n records exceed the limit."""
    over_cap = n > limit.max_records
    if not over_cap and (limit.explicit or n <= 10_000):
        return
    line = record_bytes(task, params)
    memory = n * (3 * line + OVERHEAD)
    ram = physical_memory()
    over_memory = not limit.explicit and ram is not None and memory > ram
    if not (over_cap or over_memory):
        return
    estimate = f"{n:,} records would need about {human_bytes(memory)} of memory and {human_bytes(n * line)} on disk"
    if over_memory and not over_cap:
        reason = f"this machine has {human_bytes(ram or 0)}"
    else:
        reason = f"the limit is {limit.max_records:,} records per config"
    raise LimitError(f"{estimate}; {reason} (raise the limit with --max-records N or {ENVIRONMENT_VARIABLE}=N)")
