"""docs/validity.md, rendered from the protocol's JSON document (benchmarks/validity_engine.py).

The page is a pure function of the document (and the edition history and tier costs passed in),
so running one axis and rendering again changes only that axis's rows and section, and
``validity.py --recompute`` renders the same bytes from the shipped evidence.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from validity_engine import EDITION, fmt, seeds_text

VERDICT_TEXT = {
    "holds": "**holds**",
    "does not hold": "**does not hold**",
    "not learned": "**not learned**",
    "not testable": "**not testable**",
    "unstable": "**unstable**",
}
HEADLINE = ("holds", "holds (winner only / vacuous)", "unstable", "does not hold", "not learned", "not testable")
SHORT = {"holds": "H", "does not hold": "D", "not learned": "N", "not testable": "T", "unstable": "U"}


def headline_class(claim: Mapping[str, Any]) -> str:
    """A claim's headline count: a holds whose comparison is vacuous or that compares nothing is counted apart."""
    if claim["verdict"] == "holds" and (claim.get("vacuous") or claim.get("winner_only")):
        return "holds (winner only / vacuous)"
    return claim["verdict"]


def verdict_cell(claim: Mapping[str, Any]) -> str:
    text = VERDICT_TEXT[claim["verdict"]]
    if claim["verdict"] == "unstable":
        flips = ", ".join(f"without seed {s}: {v}" for s, v in claim.get("left_out", {}).items() if v != claim.get("rule_verdict"))
        text += f" (holds with every seed; {flips})"
    if claim["not_learned"]:
        text += f" ({'; '.join(claim['not_learned'])})"
    if claim["vacuous"]:
        text += f"; vacuous for {'; '.join(claim['vacuous'])} (not learned)"
    if claim.get("winner_only") and claim["verdict"] == "holds":
        text += "; winner only (no comparison)"
    return text


def stability_cell(claim: Mapping[str, Any]) -> str:
    loo = claim.get("left_out") or {}
    if not loo:
        return claim.get("stability", "n/a")
    changed = [s for s, v in loo.items() if v != claim.get("rule_verdict")]
    return claim["stability"] + (f" (seed {', '.join(changed)} left out: " + ", ".join(loo[s] for s in changed) + ")" if changed else "")


def _made_at(commits: Mapping[str, int] | None) -> str:
    if not commits:
        return ""
    return "; trained at " + ", ".join(f"{commit} ({n})" for commit, n in commits.items())


def _context_line(axis: str, ctx: Mapping[str, Any]) -> str:
    cpu = ctx.get("cpu_minutes", {}).get(axis)
    return (f"`{ctx['command']}` on {ctx['machine']}, commit {ctx['commit']}, {ctx['date']}: {ctx['runs']} runs "
            f"({ctx['reused']} finished by earlier invocations and reused"
            + (f", {ctx['reused_from_evidence']} of them from their committed evidence files" if ctx.get("reused_from_evidence") else "")
            + f"{_made_at(ctx.get('run_commits'))}"
            + ("; on " + ", ".join(f"{m} ({n})" for m, n in ctx["run_machines"].items()) if ctx.get("run_machines") else "") + "), "
            f"{ctx['wall_minutes']:.1f} min wall for this invocation"
            + (f"; this axis's runs took {cpu:.1f} CPU min (each run counted once)" if cpu is not None else "")
            + (f", the protocol's {ctx['cpu_minutes_all']:.1f}" if ctx.get("cpu_minutes_all") is not None else ""))


def _values(values: Sequence[Any] | None) -> str:
    return ", ".join(fmt(v) for v in values) if values else "–"


def arm_table(claim: Mapping[str, Any]) -> list[str]:
    """One row per arm, figures per seed: the scored checkpoint's ID (what the learned rule reads),
    ID per length and over records, OOD exact match and the length score."""
    if claim["verdict"] == "not testable":
        return _table(["arm", "config", "seeds"], [[a["label"], a["config"], ", ".join(map(str, a["seeds"])) + " (not trained: premise not met)"]
                                                   for a in claim["arms"]])
    columns = ["arm", "config", "seeds learned", "steps", "selected at", "ID (scored)", "ID per length", "ID exact match", "OOD exact match",
               "length score"]
    rows = []
    for arm in claim["arms"]:
        rows.append([arm["label"], arm["config"], f"{len(arm['learned_seeds'])}/{len(arm['seeds'])}", _values(arm.get("steps")),
                     _values(arm.get("selected_at")), _values(arm.get("id_selected")), _values(arm.get("id")), _values(arm.get("id_records")),
                     _values(arm.get("ood")), _values(arm.get("score"))])
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


def counts_line(claims: Sequence[Mapping[str, Any]]) -> str:
    """The headline: claims by headline class, controls by verdict, stability."""
    main = [c for c in claims if c.get("role", "claim") == "claim"]
    controls = [c for c in claims if c.get("role", "claim") != "claim"]
    by_class = {k: sum(1 for c in main if headline_class(c) == k) for k in HEADLINE}
    parts = [f"{n} {k}" for k, n in by_class.items() if n]
    judged = [c for c in claims if c.get("stability") in ("stable", "unstable")]
    stable = sum(1 for c in judged if c["stability"] == "stable")
    text = f"{len(main)} claims: " + ", ".join(parts) + "."
    if controls:
        behaved = sum(1 for c in controls if c["verdict"] == "holds")
        text += f" {len(controls)} controls: {behaved} behaved as a control must (holds), {len(controls) - behaved} did not."
    if judged:
        text += f" Leave-one-seed-out: {stable} of {len(judged)} verdicts stable, {len(judged) - stable} unstable."
    return text


def history_table(claims: Sequence[Mapping[str, Any]], history: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[str]:
    """Per claim: the editions that judged it, its verdict in each (this one last), the flips and the
    editions whose set-up of it changed."""
    rows = []
    for claim in claims:
        past = list(history.get(claim["key"], []))
        entries = [*past, {"edition": EDITION, "verdict": claim["verdict"], "setup_changed": True}]
        verdicts = [e["verdict"] for e in entries]
        flips = sum(1 for a, b in zip(verdicts, verdicts[1:]) if a != b)
        changed = [str(e["edition"]) for e in entries[1:] if e.get("setup_changed")]
        rows.append([claim["key"], str(len(entries)), " ".join(f"{e['edition']}:{SHORT.get(e['verdict'], '?')}" for e in entries), str(flips),
                     ", ".join(changed) or "–"])
    return _table(["claim", "editions", "verdict by edition", "flips", "set-up changed in"], rows)


INTRO = (
    "Every claim below is a spec in `benchmarks/validity_axes/` (the arms it trains, the rule that decides it, the learned "
    "rule its models must meet, the published figure it is set against), written and committed before any of its runs; "
    "`python benchmarks/validity.py` runs them (`--tier quick` the re-check, `--axis A` one axis) with one engine "
    "(`benchmarks/validity_engine.py`) and renders this page from `docs/validity.json`; `python benchmarks/validity.py "
    "--recompute` re-derives every verdict of it from the files shipped in `docs/validity-evidence/` (each run's metric "
    "history, per-record test results and figures, with their sha256 in the JSON), with no training. Tiny models (preset "
    "tiny) trained from scratch on 2 CPU cores."
)
RULES = (
    "**How a claim is decided.** Every arm a claim compares has the same seeds (at least 3, losing arms included) and trains "
    "the same number of steps, every one of them (no early stop); the checkpoint scored is the one validation selected (the "
    "first evaluation with the highest ID on the whole validation part), so the gate and the score read one set, and a seed "
    "has learned when its scored checkpoint's ID reaches the threshold. An arm learned when at least half its seeds did; "
    "rules read means over the learned seeds with a percentile-bootstrap interval over seeds at the level each claim states "
    "(95 %), and a rule is met only when the whole interval is on its side of the margin. Verdicts: *holds* (every arm the "
    "claim needs learned and the rule is met), *does not hold* (they learned, the rule is not met), *not learned* (an arm "
    "the claim needs never fit its train distribution: nothing was tested), *not testable* (a premise the splits alone "
    "decide is unmet: nothing was trained), and *unstable*: the rule is met with every seed but not with some one seed left "
    "out, which is not a holds. Each verdict is recomputed with each one seed left out of every arm; it is *stable* when "
    "none of these changes it. A comparison whose *losing* arm did not learn is *vacuous* for it, and a holds that compares "
    "nothing (one model's figure) is *winner only*: the headline counts both apart. *Controls* check the measurement: a "
    "negative control holds when an effect is absent where it must be; a positive control holds when a model does what a "
    "claim says it fails at. ID is exact match per input length weighted by the train part's length shares (a length with 2 "
    "validation records weighs what it weighs in train). Validation is the train distribution "
    "([splits](splits.md#strategies-and-reports))."
)


def render(document: Mapping[str, Any], titles: Mapping[str, str], deferred: Sequence[Mapping[str, str]], changes: Sequence[str] = (),
           history: Mapping[str, Sequence[Mapping[str, Any]]] | None = None, tiers: Sequence[Mapping[str, Any]] = (),
           decided: Mapping[str, str] | None = None) -> str:
    """The page: how to read it, what changed from the previous edition, the headline and summary table, the tiers' costs,
    one section per axis, each claim's edition history, what waits for a GPU. ``decided`` (the quick tier's page): the
    full tier's verdict of each claim, shown beside the re-check's."""
    claims = document["claims"]
    contexts = document["context"]
    quick = document.get("tier") == "quick"
    lines = [
        f"# Validity protocol, edition {EDITION}{' (quick tier)' if quick else ''}: do the splits measure generalization?",
        "",
        *(["This is the **quick tier**: a re-check of claims the full tier decided (docs/validity.md), each of which could fail, "
           "at most 90 CPU minutes on 2 cores; its verdicts are set against the full tier's below.", ""] if quick else []),
        INTRO,
        "",
        RULES,
        "",
        *([f"**What changed from edition {EDITION - 1}** (fixed and committed before this edition's runs):", "",
           *(f"- {change}" for change in changes), ""] if changes else []),
        counts_line(claims),
        "",
    ]
    if tiers:
        lines += ["Each tier's cost: the CPU minutes of its runs (each counted once, as measured when it trained; the full tier "
                  "reuses the quick tier's runs) and of the invocation's own process; wall minutes of the invocation that wrote its "
                  "page, on 2 cores.", "",
                  "| tier | claims | runs (reused) | CPU min (measured) | wall min | command |", "|---|---|---|---|---|---|"]
        lines += [f"| {t['tier']} | {t['claims']} | {t.get('runs', 'n/a')} ({t.get('reused', 'n/a')}) | {fmt(t.get('cpu_minutes'), 1)} | "
                  f"{fmt(t.get('wall_minutes'), 1)} | `{t['command']}` |" for t in tiers]
        lines.append("")
    recheck = decided is not None
    lines += [f"| axis | claim | role | rule | measured | published | verdict | stability | edition {EDITION - 1} |"
              + (" full tier |" if recheck else ""), "|---|---|---|---|---|---|---|---|---|" + ("---|" if recheck else "")]
    for c in claims:
        full = f" {decided.get(c['key'], 'not run yet')} |" if decided is not None else ""
        lines.append(f"| {c['axis']} | {c['title']} | {c.get('role', 'claim')} | {c['rule']} | {c['measured']} | {c['published']} | "
                     f"{verdict_cell(c)} | {stability_cell(c)} | {c['previous'] or '–'} |{full}")
    for axis, ctx in contexts.items():
        lines += ["", f"## {titles.get(axis, axis)}", "", f"Measured by {_context_line(axis, ctx)}.", ""]
        for c in (c for c in claims if c["axis"] == axis):
            lines += [f"### {c['title']}" + (f" ({c['role']})" if c.get("role", "claim") != "claim" else ""), ""]
            if c["setup"]:
                lines += [c["setup"], ""]
            lines += [f"- learned rule: {c['learned_rule']}", f"- verdict rule: {c['rule']}", f"- published: {c['published']}",
                      f"- verdict: {verdict_cell(c)} ({c['measured']}); seeds learned: {seeds_text(c['arms'])}; {c['cpu_minutes']:.1f} CPU min",
                      f"- stability: {stability_cell(c)}" + (f"; {c['resolution']}" if c.get("resolution") else "")]
            if c.get("premise"):
                lines.append(f"- premise: {c['premise']}")
            lines.append("")
            lines += arm_table(c)
            lines += _detail_lines(c["details"])
            lines.append("")
    if history is not None:
        lines += ["## Edition history", "", "Each claim's verdict in every edition that judged it (H holds, D does not hold, N not learned, "
                  "T not testable, U unstable), how often it flipped, and the editions whose set-up of it changed (seeds, steps, "
                  "settings or rule: from each edition's committed docs/validity.json; editions 1-3 used other claim keys).", ""]
        lines += history_table(claims, history)
        lines.append("")
    if deferred:
        lines += ["## Deferred to a GPU", "", "Set-ups whose published budget does not fit 2 CPU cores (they are not counted in the headline "
                  "above); each is one command of `benchmarks/gpu_protocol.py`. Its training time is estimated by per-step arithmetic on "
                  "one H200 with 8 workers, every run at its step cap (evaluation and split building come on top): "
                  "`python benchmarks/gpu_protocol.py --estimate --protocol NAME`, never yet measured on a GPU.", "",
                  "| what | why | training (estimate) | command |", "|---|---|---|---|"]
        lines += [f"| {d['what']} | {d['why']} | {d.get('estimate', 'n/a')} | `{d['command']}` |" for d in deferred]
        lines.append("")
    return "\n".join(lines) + "\n"
