"""The task gallery, docs/tasks.md, generated from the task registry.

    python -m gengap.gallery > docs/tasks.md

Per task, in registry order (sorted by name): its family, description and size knob; its
parameters (default, range or choices, meaning); its levels 1..10 (the parameters that change
between levels); its reasoning-trace formats; and examples at levels 1, 5 and 10, drawn as
``gengap generate TASK --level K --n 2 --seed 0`` draws them. The text depends on the
registry alone, so the same code gives the same bytes (tests/test_gallery.py compares the
committed file with a fresh rendering).
"""

from __future__ import annotations

import sys
from typing import Any, Iterable, Mapping

from gengap.generators import BlockPlan, get_task, task_names

EXAMPLE_LEVELS = (1, 5, 10)
EXAMPLES = 2  # per level
SEED = 0
MAX_CHARS = 240  # longer inputs and targets are cut, saying how many characters are left out


def cell(value: Any) -> str:
    """A markdown table cell: pipes escaped, line breaks as spaces."""
    return str(value).replace("|", "\\|").replace("\n", " ")


def shorten(text: str) -> str:
    """text, or its first MAX_CHARS characters and how many more there are."""
    return text if len(text) <= MAX_CHARS else f"{text[:MAX_CHARS]} … (+{len(text) - MAX_CHARS:,} characters)"


def bounds(parameter: Mapping[str, Any]) -> str:
    """A parameter's range or choices, as `list` shows them."""
    if "choices" in parameter:
        return "one of " + ", ".join(f"`{c}`" for c in parameter["choices"])
    lo, hi = parameter.get("range", (None, None))
    if lo is not None and hi is not None:
        return f"{lo}..{hi}"
    return f">= {lo}" if lo is not None else f"<= {hi}" if hi is not None else ""


def parameters_table(parameters: Iterable[Mapping[str, Any]]) -> list[str]:
    lines = ["| parameter | default | range | meaning |", "|---|---|---|---|"]
    for p in parameters:
        lines.append(f"| `{p['name']}` | `{cell(repr(p['default']))}` | {cell(bounds(p))} | {cell(p['doc'])} |")
    return lines


def levels_table(levels: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Levels 1..10 with the parameters that change between them (one line when none does)."""
    rows = list(levels.values())
    varying = [name for name in rows[0] if len({repr(row[name]) for row in rows}) > 1]
    if not varying:
        return ["Every level uses the default parameters."]
    lines = ["| level | " + " | ".join(f"`{name}`" for name in varying) + " |", "|---|" + "---|" * len(varying)]
    for level, row in levels.items():
        lines.append(f"| {level} | " + " | ".join(cell(row[name]) for name in varying) + " |")
    return lines


def examples(name: str, level: int) -> list[dict[str, Any]]:
    """The first EXAMPLES records of ``gengap generate name --level level --seed SEED``."""
    task = get_task(name)
    plan = BlockPlan(name, task.level(level), EXAMPLES, SEED)
    return [record for batch in plan.batches() for record in batch.records(name)][:EXAMPLES]


def examples_block(name: str) -> list[str]:
    lines = ["```text"]
    for level in EXAMPLE_LEVELS:
        for record in examples(name, level):
            lines += [f"level {level:>2}  input:  {shorten(record['input'])}", f"          target: {shorten(record['target'])}"]
    return lines + ["```"]


def task_section(name: str) -> list[str]:
    described = get_task(name).describe()
    lines = [
        f"## {name}",
        "",
        f"*{described['family']}*: {described['description'].rstrip('.')}. Size knob: {str(described['size_knob']).rstrip('.')}.",
        "",
        *parameters_table(described["parameters"]),
        "",
        "Levels:",
        "",
        *levels_table(described["levels"]),
        "",
    ]
    traces = described.get("traces") or {}
    if traces:
        lines += ["Reasoning traces (`trace=`):", ""]
        lines += [f"- `{fmt}`: {text}" for fmt, text in traces.items()]
        lines.append("")
    lines += [f"Examples (`gengap generate {name} --level K --n {EXAMPLES} --seed {SEED}`):", "", *examples_block(name), ""]
    return lines


def render() -> str:
    """The whole gallery (markdown, ending with a newline)."""
    names = task_names()
    lines = [
        "# Task gallery",
        "",
        "Generated from the task registry by `python -m gengap.gallery > docs/tasks.md`; do not edit by hand "
        "(tests/test_gallery.py checks that it is current). `gengap list` prints the same parameters and levels.",
        "",
        f"{len(names)} tasks: " + ", ".join(f"[{name}](#{name})" for name in names) + ".",
        "",
    ]
    for name in names:
        lines += task_section(name)
    return "\n".join(lines).rstrip("\n") + "\n"


def main() -> int:
    sys.stdout.write(render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
