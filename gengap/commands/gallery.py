"""The task gallery, docs/tasks.md, generated from the task registry.

    python -m gengap.gallery > docs/tasks.md

Per task, in registry order (sorted by name): its family, description and size knob; its
parameters (default, range or choices, meaning); its levels 1..10 (the parameters that change
between levels); its reasoning-trace formats, each with one example (the first record with a
non-empty trace of ``gengap generate TASK --level 2 --n 4 --seed 0 --param trace=FORMAT``; the
index hints of a task whose ``format`` parameter has them likewise, with ``format=index_hints``);
and examples at levels 1, 5 and 10, drawn as ``gengap generate TASK --level K --n 2 --seed 0``
draws them. The text depends on the
registry alone, so the same code gives the same bytes (tests/test_gallery.py compares the
committed file with a fresh rendering).
"""

from __future__ import annotations

import sys
from typing import Any, Iterable, Mapping

from gengap.generators import BlockPlan, get_task, task_names

EXAMPLE_LEVELS = (1, 5, 10)
EXAMPLES = 2  # per level
TRACE_LEVEL = 2  # the level of each trace format's example
TRACE_DRAWS = 4  # the example is the first of these records with a non-empty trace
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


def examples(name: str, level: int, n: int = EXAMPLES, **values: Any) -> list[dict[str, Any]]:
    """The first n records of ``gengap generate name --level level --seed SEED`` (with the
    parameters values, e.g. trace=fine)."""
    task = get_task(name)
    plan = BlockPlan(name, task.make_params(values, level=level), n, SEED)
    return [record for batch in plan.batches() for record in batch.records(name)][:n]


def format_example(name: str, **values: Any) -> dict[str, Any]:
    """The example of a trace (or output) format: the first of TRACE_DRAWS records at
    TRACE_LEVEL whose target has a trace before its '=>' (the first record if none has)."""
    drawn = examples(name, TRACE_LEVEL, TRACE_DRAWS, **values)
    return next((r for r in drawn if not r["target"].startswith("=> ")), drawn[0])


def hinted_output(described: Mapping[str, Any]) -> bool:
    """Whether a task writes index hints through its ``format`` parameter (addition, multiplication)."""
    return any(p["name"] == "format" and "index_hints" in p.get("choices", ()) for p in described["parameters"])


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
        if hinted_output(described):
            lines.append("- index hints: `format=index_hints` (input and answer; combines with every trace format)")
        lines += ["", f"One example per format (level {TRACE_LEVEL}, the first of `--n {TRACE_DRAWS} --seed {SEED}` with a trace):", "", "```text"]
        shown = [(f"trace={fmt}", format_example(name, trace=fmt)) for fmt in traces]
        if hinted_output(described):
            shown.append(("format=index_hints", format_example(name, format="index_hints", trace=next(iter(traces)))))
        for label, record in shown:
            lines += [f"{label}", f"  input:  {shorten(record['input'])}", f"  target: {shorten(record['target'])}"]
        lines += ["```", ""]
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
