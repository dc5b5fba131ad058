"""Check the ``cogs`` task against the official COGS files (not run in CI: it needs a checkout).

    python benchmarks/cogs_official.py PATH/TO/COGS/data [--show 5]

For each of train.tsv, dev.tsv, test.tsv and gen.tsv found in the directory (sentence, LF,
category per line) it reports (a) the share of lines whose sentence the task's independent
checker parses and whose rebuilt LF equals the official LF exactly, per file and per category
(gen.tsv: the 21 generalization categories; train.tsv: in_distribution, primitive and the
exposure examples), with the categories the checker assigns to them; and (b) lexicon
coverage: the nouns, proper names and verb lemmas of the official files against gengap's
lists. Exit 0 always; it prints its figures.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generators.tasks import _cogs_grammar as grammar  # noqa: E402
from generators.tasks import _cogs_lexicon as lex  # noqa: E402
from generators.tasks._cogs_grammar import category_of  # noqa: E402

FILES = ("train", "dev", "test", "gen")
_NOUN = re.compile(r"(?:^|; |AND |LAMBDA a \. )\*? ?(\w+) \( (?:x _ \d+|a) \)")
_VERB = re.compile(r"(\w+) \. (?:agent|theme|recipient|ccomp|xcomp) \(")
_NAME = re.compile(r", ([A-Z]\w*) \)")


def read(path: Path) -> list[tuple[str, str, str]]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            sentence, lf, category = line.split("\t")[:3]
            rows.append((sentence, lf, category))
    return rows


def check_rows(rows: list[tuple[str, str, str]], show: int) -> tuple[Counter, Counter, Counter, list[str]]:
    total, exact, assigned, misses = Counter(), Counter(), Counter(), []
    for sentence, lf, category in rows:
        total[category] += 1
        try:
            tree = grammar.parse(sentence)
            rebuilt = grammar.interpret(tree)
        except ValueError as err:
            rebuilt, tree = f"<parse error: {err}>", None
        if rebuilt == lf:
            exact[category] += 1
        elif len(misses) < show:
            misses.append(f"  [{category}] {sentence}\n    official: {lf}\n    rebuilt:  {rebuilt}")
        if tree is not None:
            found = category_of(tree)
            label = "in distribution" if found == "" else (found or "neither (exposure or mixed)")
            assigned[(category, label)] += 1
    return total, exact, assigned, misses


def lexicon(rows: list[tuple[str, str, str]]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = defaultdict(set)
    for sentence, lf, category in rows:
        found["nouns"].update(_NOUN.findall(lf))
        found["verbs"].update(_VERB.findall(lf))
        found["names"].update(_NAME.findall(lf))
        if category == "primitive" and not lf.startswith("LAMBDA"):
            found["names"].add(lf)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="the data/ directory of a COGS checkout")
    parser.add_argument("--show", type=int, default=3, help="mismatches to print per file")
    args = parser.parse_args(argv)
    every: list[tuple[str, str, str]] = []
    for name in FILES:
        path = args.data / f"{name}.tsv"
        if not path.is_file():
            print(f"{name}.tsv: not found in {args.data}")
            continue
        rows = read(path)
        every.extend(rows)
        total, exact, assigned, misses = check_rows(rows, args.show)
        n, ok = sum(total.values()), sum(exact.values())
        print(f"{name}.tsv: {ok:,} / {n:,} lines rebuilt exactly ({ok / max(n, 1):.4%})")
        for category in sorted(total):
            labels = ", ".join(f"{label} {count:,}" for (cat, label), count in sorted(assigned.items()) if cat == category)
            print(f"  {category}: {exact[category]:,} / {total[category]:,} exact; checker's category: {labels}")
        for miss in misses:
            print(miss)
    if every:
        official = lexicon(every)
        ours = {"nouns": set(lex.NOUNS), "names": set(lex.NAMES), "verbs": set(lex.VERB_FORMS)}
        print("lexicon coverage (official words in gengap's lists):")
        for kind in ("nouns", "names", "verbs"):
            seen = official[kind]
            print(
                f"  {kind}: {len(seen & ours[kind])} / {len(seen)} official; gengap lists {len(ours[kind])},"
                f" {len(ours[kind] - seen)} not in the files read"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
