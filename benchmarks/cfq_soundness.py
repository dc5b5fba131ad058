"""Soundness of cfq_like's checks: wrong queries accepted by each reward path, and empty gold answers.

    python benchmarks/cfq_soundness.py                     # 2,000 records of the default parameters (seed 20200429)
    python benchmarks/cfq_soundness.py --records 200 --json out.json
    python benchmarks/cfq_soundness.py --knowledge-base-only    # the check before issue 54 (no probe worlds)

Records are ``--records`` cfq_like records of the default parameters (what the cfq-like suite's
pool draws), seed ``--seed``. For each record it writes one wrong query per corruption class
that applies (gengap.generators.tasks._cfq_corrupt: swapped relation, dropped / added /
reversed triple, wrong variable, wrong SELECT, wrong FILTER; each differs from the gold in
normal form) and one equivalent form of the gold (items shuffled, variables renamed), and
scores every one on every reward path: the task's ``check`` (exact match) and
``check_execution``; the harness rewards ``score_record`` and ``execution_reward``; verl's
``compute_score`` and ``compute_execution_score`` (called as verl calls them); TRL's
``gengap_reward`` and ``gengap_execution_reward`` (chat-export columns). It prints, per path,
the corruptions accepted (by class) and the equivalent forms accepted, and two empty-answer
fractions: records whose gold answer is empty (or no) under every binding of the knowledge
base the check uses, and records whose gold answer is empty on every world the check
executes on (the knowledge base and the probe worlds, gengap.generators.tasks._cfq_probe).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Mapping

from gengap.generators import BlockPlan, get_task
from gengap.generators.tasks._cfq_corrupt import CLASSES, corruptions, equivalent
from gengap.generators.tasks._cfq_execute import EMPTY, execute
from gengap.generators.tasks._cfq_probe import gold_answers
from gengap.generators.tasks._cfq_query import parse_query
from gengap.harnesses.rewards import (
    compute_execution_score, compute_score, execution_reward, gengap_execution_reward, gengap_reward, score_record,
)

CFQ = get_task("cfq_like")
Record = Mapping[str, Any]


def _verl(score: Callable[..., Any]) -> Callable[[Record, str], bool]:
    def call(record: Record, answer: str) -> bool:
        info = {"task": record["task"], "input": record["input"], "meta": json.dumps(record["meta"]), "index": 0}
        return float(score("gengap/cfq_like-random", answer, record["target"], info)) == 1.0
    return call


def _trl(score: Callable[..., list[float | None]]) -> Callable[[Record, str], bool]:
    def call(record: Record, answer: str) -> bool:
        columns = {"task": [record["task"]], "input": [record["input"]], "target": [record["target"]], "meta": [json.dumps(record["meta"])]}
        return score([answer], **columns) == [1.0]
    return call


PATHS: dict[str, Callable[[Record, str], bool]] = {
    "check (exact match)": lambda r, a: bool(CFQ.check(r, a)),
    "check_execution": lambda r, a: bool(CFQ.check_execution(r, a)),
    "harness score_record": lambda r, a: score_record(r, a) == 1.0,
    "harness execution_reward": lambda r, a: execution_reward(r, a) == 1.0,
    "verl compute_score": _verl(compute_score),
    "verl compute_execution_score": _verl(compute_execution_score),
    "TRL gengap_reward": _trl(gengap_reward),
    "TRL gengap_execution_reward": _trl(gengap_execution_reward),
}


def empty_on_knowledge_base(record: Record) -> bool:
    """Whether the gold query answers empty (or no) under every binding the check uses."""
    gold, kb = parse_query(record["target"]), CFQ.knowledge_base(record)
    return all(execute(gold, kb, binding) in (False, EMPTY) for binding in CFQ.bindings(record))


def empty_everywhere(record: Record, probes: bool = True) -> bool:
    """Whether the gold answers empty (or no) on every world the check executes on (the knowledge
    base alone without probes)."""
    empty = empty_on_knowledge_base(record)
    return empty and (not probes or all(answer in (False, EMPTY) for answer in gold_answers(CFQ.reference_query(record))))


def measure(n: int, seed: int, paths: Mapping[str, Callable[[Record, str], bool]] = PATHS, probes: bool = True) -> dict[str, Any]:
    records = list(BlockPlan("cfq_like", CFQ.default_params(), n, seed).generate_block(0).records("cfq_like"))
    rng = random.Random(seed)
    tried: Counter[str] = Counter()
    accepted: dict[str, Counter[str]] = {path: Counter() for path in paths}
    equivalent_accepted: Counter[str] = Counter()
    equivalent_corruptions: Counter[str] = Counter()
    examples: dict[str, list[list[str]]] = {path: [] for path in paths}
    empty_kb = empty_all = 0
    for record in records:
        empty_kb += empty_on_knowledge_base(record)
        empty_all += empty_everywhere(record, probes)
        gold = parse_query(record["target"])
        for kind, wrong in corruptions(gold, rng, equivalent_corruptions).items():
            tried[kind] += 1
            for path, accepts in paths.items():
                if accepts(record, wrong):
                    accepted[path][kind] += 1
                    if len(examples[path]) < 3:
                        examples[path].append([kind, record["input"], wrong])
        same = equivalent(gold, rng)
        for path, accepts in paths.items():
            equivalent_accepted[path] += accepts(record, same)
    return {"records": n, "seed": seed, "corrupted": sum(tried.values()), "tried": dict(tried),
            "accepted": {path: dict(found) for path, found in accepted.items()},
            "equivalent_accepted": dict(equivalent_accepted),
            "equivalent_corruptions": dict(equivalent_corruptions), "examples": examples,
            "empty_on_knowledge_base": empty_kb / n, "empty_on_every_world": empty_all / n}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=20200429)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--knowledge-base-only", action="store_true",
                        help="the check as it was before issue 54: no probe worlds, the knowledge base's bindings alone")
    args = parser.parse_args(argv)
    if args.records < 1:
        parser.error("--records must be at least 1")
    if args.knowledge_base_only:
        import gengap.generators.tasks.cfq_like as cfq_like

        cfq_like.agrees = lambda predicted, gold: True  # every reward path reaches the probe worlds through this name
    start = time.perf_counter()
    found = measure(args.records, args.seed, probes=not args.knowledge_base_only)
    found["knowledge_base_only"] = args.knowledge_base_only
    found["seconds"] = round(time.perf_counter() - start, 1)
    n = found["records"]
    print(f"{n:,} records (seed {found['seed']}), {found['corrupted']:,} corrupted queries: " +
          ", ".join(f"{kind} {found['tried'].get(kind, 0):,}" for kind in CLASSES))
    print(f"left out as equivalent to the gold (they map into it both ways): {sum(found['equivalent_corruptions'].values())} "
          f"({', '.join(f'{k} {v}' for k, v in sorted(found['equivalent_corruptions'].items()))})")
    print(f"gold answer empty under every knowledge-base binding: {found['empty_on_knowledge_base']:.1%}; "
          f"on every world the check executes on: {found['empty_on_every_world']:.1%}")
    for path in PATHS:
        hits = found["accepted"][path]
        detail = ", ".join(f"{kind} {hits[kind]}/{found['tried'][kind]}" for kind in CLASSES if hits.get(kind))
        print(f"{path:30s} accepted {sum(hits.values()):5d}/{found['corrupted']:,} corrupted"
              f"{' (' + detail + ')' if detail else ''}; equivalent forms {found['equivalent_accepted'][path]}/{n}")
    print(f"{found['seconds']} s")
    if args.json:
        args.json.write_text(json.dumps(found, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
