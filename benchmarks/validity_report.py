"""docs/validity.md, rendered from the protocol's JSON document (benchmarks/validity_engine.py).

The page is a pure function of the document, so running one axis and rendering again changes
only that axis's rows and section.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from validity_engine import EDITION, fmt, seeds_text

VERDICT_TEXT = {
    "holds": "**holds**",
    "does not hold": "**does not hold**",
    "not learned": "**not learned**",
}


def verdict_cell(claim: Mapping[str, Any]) -> str:
    text = VERDICT_TEXT[claim["verdict"]]
    if claim["not_learned"]:
        text += f" ({'; '.join(claim['not_learned'])})"
    if claim["vacuous"]:
        text += f"; vacuous for {'; '.join(claim['vacuous'])} (not learned)"
    return text


def _made_at(commits: Mapping[str, int] | None) -> str:
    if not commits:
        return ""
    return "; trained at " + ", ".join(f"{commit} ({n})" for commit, n in commits.items())


def _context_line(axis: str, ctx: Mapping[str, Any]) -> str:
    cpu = ctx.get("cpu_minutes", {}).get(axis)
    return (f"`{ctx['command']}` on {ctx['machine']}, commit {ctx['commit']}, {ctx['date']}: {ctx['runs']} runs "
            f"({ctx['reused']} finished by earlier invocations and reused{_made_at(ctx.get('run_commits'))}), "
            f"{ctx['wall_minutes']:.1f} min wall for this invocation"
            + (f"; this axis's runs took {cpu:.1f} CPU min (each run counted once)" if cpu is not None else "")
            + (f", the protocol's {ctx['cpu_minutes_all']:.1f}" if ctx.get("cpu_minutes_all") is not None else ""))


def arm_table(claim: Mapping[str, Any]) -> list[str]:
    """One row per arm, figures per seed: ID both as the per-length mean (the learned rule's figure)
    and as exact match over the validation records (documents without the latter omit its column)."""
    records = all("id_records" in arm for arm in claim["arms"])
    columns = ["arm", "config", "seeds learned", "stopped at (learned at)", "ID per length", *(["ID exact match"] if records else []),
               "OOD exact match", "length score"]
    rows = []
    for arm in claim["arms"]:
        stops = ", ".join(f"{s}" + (f" ({l})" if l is not None else "") for s, l in zip(arm["stopped_at"], arm["learned_at"]))
        figures = [arm["id"], *([arm["id_records"]] if records else []), arm["ood"], arm["score"]]
        rows.append([arm["label"], arm["config"], f"{len(arm['learned_seeds'])}/{len(arm['seeds'])}", stops,
                     *(", ".join(fmt(v) for v in values) for values in figures)])
    return _table(columns, rows)


def _table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A markdown table: header, separator, one line per row of cells."""
    return ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns), *("| " + " | ".join(row) + " |" for row in rows)]


def _detail_lines(details: Mapping[str, Any]) -> list[str]:
    lines = []
    for name, value in details.items():
        if isinstance(value, list) and value and isinstance(value[0], Mapping):  # a table
            keys = list(value[0])
            lines += ["", f"{name}:", "", *_table(keys, [[fmt(row.get(k)) for k in keys] for row in value])]
            lines.append("")
        else:
            lines.append(f"- {name}: {fmt(value) if not isinstance(value, (list, dict)) else value}")
    return lines


def render(document: Mapping[str, Any], titles: Mapping[str, str], deferred: Sequence[Mapping[str, str]], runs_table: str | None,
           changes: Sequence[str] = ()) -> str:
    """The page: how to read it, what changed from the previous edition, the summary table, one section per axis, what
    waits for a GPU, all runs."""
    claims = document["claims"]
    contexts = document["context"]
    counts = {v: sum(1 for c in claims if c["verdict"] == v) for v in ("holds", "does not hold", "not learned")}
    lines = [
        f"# Validity protocol, edition {EDITION}: do the splits measure generalization?",
        "",
        "Every claim below is a spec in `benchmarks/validity_axes/` (the arms it trains, the rule that decides it, the learned "
        "rule its models must meet, the published figure it is set against), written and committed before any of its runs; "
        "`python benchmarks/validity.py` runs them all (`--axis A` one axis) with one engine (`benchmarks/validity_engine.py`) "
        "and renders this page from `docs/validity.json`. Tiny models (preset tiny) trained from scratch on 2 CPU cores.",
        "",
        "**Three verdicts.** *holds*: every arm the claim needs learned its train distribution and the rule is met; *does not "
        "hold*: they learned and the rule is not met; *not learned*: an arm the claim needs never met the learned rule within "
        "its step cap, so nothing was tested (the arm is named). An arm learned when at least half its seeds met the learned "
        "rule (each claim states it: ID, the validation exact match averaged over input lengths, at or above a threshold at two "
        "consecutive evaluations, then 25 % more steps); rules read the figures of the learned seeds. A comparison whose "
        "*losing* arm did not learn is marked *vacuous for* that arm: its failure out of distribution says nothing. "
        "Validation is the train distribution (distinct inputs unseen in train, over lengths in train's proportions: "
        "[splits](splits.md#strategies-and-reports)).",
        "",
        *([f"**What changed from edition {EDITION - 1}** (fixed and committed before this edition's runs):", "",
           *(f"- {change}" for change in changes), ""] if changes else []),
        f"{len(claims)} claims: {counts['holds']} hold, {counts['does not hold']} do not hold, {counts['not learned']} not learned.",
        "",
        f"| axis | claim | rule | measured | published | verdict | edition {EDITION - 1} |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in claims:
        lines.append(f"| {c['axis']} | {c['title']} | {c['rule']} | {c['measured']} | {c['published']} | {verdict_cell(c)} | {c['previous'] or '–'} |")
    for axis, ctx in contexts.items():
        lines += ["", f"## {titles.get(axis, axis)}", "", f"Measured by {_context_line(axis, ctx)}.", ""]
        for c in (c for c in claims if c["axis"] == axis):
            lines += [f"### {c['title']}", ""]
            if c["setup"]:
                lines += [c["setup"], ""]
            lines += [f"- learned rule: {c['learned_rule']}", f"- verdict rule: {c['rule']}", f"- published: {c['published']}",
                      f"- verdict: {verdict_cell(c)} ({c['measured']}); seeds learned: {seeds_text(c['arms'])}; {c['cpu_minutes']:.1f} CPU min", ""]
            lines += arm_table(c)
            lines += _detail_lines(c["details"])
            lines.append("")
    if deferred:
        lines += ["## Deferred to a GPU", "", "Set-ups whose published budget does not fit 2 CPU cores; each is one command of "
                  "`benchmarks/gpu_protocol.py`. Its training time is estimated by per-step arithmetic on one H200 with 8 "
                  "workers, every run at its step cap (runs trained until learned stop sooner; evaluation and split building "
                  "come on top): `python benchmarks/gpu_protocol.py --estimate --protocol NAME`, never yet measured on a GPU.", "",
                  "| what | why | training (estimate) | command |", "|---|---|---|---|"]
        lines += [f"| {d['what']} | {d['why']} | {d.get('estimate', 'n/a')} | `{d['command']}` |" for d in deferred]
        lines.append("")
    if runs_table:
        lines += ["## All runs", "", "Every run of the protocol, as `gengap report` prints it.", "", runs_table, ""]
    return "\n".join(lines) + "\n"
