"""Resource limits on what a suite config may ask for, checked before anything is built.

- Suite YAML: at most ``MAX_SUITE_BYTES``, nesting at most ``MAX_YAML_DEPTH`` deep, and
  at most ``MAX_YAML_VALUES`` values once every alias (``*name``) is expanded, so that a
  few lines cannot expand into gigabytes (a "billion laughs" bomb); an alias inside the
  value it names (a cycle) is refused. These are the limits of the one YAML reader,
  gengap.generators.reading, found from the parser's events before anything is built.
- Records: a config holds at most ``max_records`` records (its pool: ``n``, or for
  ``pool: all`` the size of the task's enumeration, counted without enumerating; or the sum
  of its sampled sizes). The default is ``DEFAULT_MAX_RECORDS``, lowered to what the
  machine's memory can hold by an estimate from a small sample of the config's examples; an
  explicit limit (``gengap release --max-records N`` or the environment variable
  ``GENGAP_MAX_RECORDS``) replaces both.
- Totals: all configs of a suite together hold at most ``max_total`` records
  (``DEFAULT_MAX_TOTAL_RECORDS``; ``--max-total-records N`` or
  ``GENGAP_MAX_TOTAL_RECORDS``), and their data files, estimated from the same samples,
  must fit in the free space of the file system they are written to (check_disk_space).
"""

from __future__ import annotations

import functools
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from gengap.generators import Params, batch_to_jsonl, get_task
from gengap.generators.reading import MAX_YAML_BYTES as MAX_SUITE_BYTES
from gengap.generators.reading import MAX_YAML_DEPTH, MAX_YAML_VALUES  # noqa: F401  (documented here too)
from gengap.generators.seeding import estimate_rng

DEFAULT_MAX_RECORDS = 10_000_000
ENVIRONMENT_VARIABLE = "GENGAP_MAX_RECORDS"
DEFAULT_MAX_TOTAL_RECORDS = 100_000_000
TOTAL_ENVIRONMENT_VARIABLE = "GENGAP_MAX_TOTAL_RECORDS"
SAMPLE = 64  # examples generated to estimate the size of a record
OVERHEAD = 400  # bytes of Python objects per record besides ~3 copies of its JSON text


class LimitError(ValueError):
    """A suite config asks for more than the limits allow."""


@dataclass(frozen=True)
class RecordLimit:
    """The most records a config may hold (explicit when the user set it) and the most all
    configs of a suite may hold together."""

    max_records: int = DEFAULT_MAX_RECORDS
    explicit: bool = False
    max_total: int = DEFAULT_MAX_TOTAL_RECORDS

    @classmethod
    def from_environment(cls, value: int | None = None, total: int | None = None) -> "RecordLimit":
        """The limits given (--max-records and --max-total-records values), else
        GENGAP_MAX_RECORDS and GENGAP_MAX_TOTAL_RECORDS, else the defaults."""
        value = _setting(value, ENVIRONMENT_VARIABLE, "record limit")
        total = _setting(total, TOTAL_ENVIRONMENT_VARIABLE, "limit on the total of records")
        return cls(
            value if value is not None else DEFAULT_MAX_RECORDS,
            explicit=value is not None,
            max_total=total if total is not None else DEFAULT_MAX_TOTAL_RECORDS,
        )


def _setting(value: int | None, variable: str, what: str) -> int | None:
    """value, else the integer in the environment variable, else None; LimitError when < 1."""
    if value is None:
        raw = os.environ.get(variable, "").strip()
        if not raw:
            return None
        try:
            value = int(raw.replace("_", ""))
        except ValueError:
            raise LimitError(f"{variable}={raw[:40]!r} is not an integer") from None
    if value < 1:
        raise LimitError(f"the {what} must be at least 1, got {value}")
    return value


def physical_memory() -> int | None:
    """Bytes of RAM of this machine, when the OS says."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


@functools.lru_cache(maxsize=4096)
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


def check_total(total: int, configs: int, limit: RecordLimit) -> None:
    """LimitError when the configs of a suite hold more records together than limit.max_total."""
    if total > limit.max_total:
        raise LimitError(
            f"the suite holds {total:,} records in {configs:,} configs; the limit is {limit.max_total:,} records in all "
            f"(raise it with --max-total-records N or {TOTAL_ENVIRONMENT_VARIABLE}=N)"
        )


def free_bytes(path: str | Path) -> tuple[Path, int] | None:
    """(the nearest existing directory at or above path, the bytes free on its file system); None when unknown."""
    where = Path(path).absolute()
    while not where.is_dir() and where != where.parent:
        where = where.parent
    try:
        return where, shutil.disk_usage(where).free
    except OSError:
        return None


def check_disk_space(estimate: int, path: str | Path, what: str = "the release") -> None:
    """LimitError when estimate bytes (of data files) exceed the free space where path is to be written."""
    free = free_bytes(path)
    if free is not None and estimate > free[1]:
        raise LimitError(
            f"{what} needs about {human_bytes(estimate)} on disk (estimated from a sample of each config's records); "
            f"{free[0]} has {human_bytes(free[1])} free"
        )
