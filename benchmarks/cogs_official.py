"""Check the ``cogs`` task against the official COGS files (not run in CI: it needs a checkout).

    python benchmarks/cogs_official.py PATH/TO/COGS/data [--show 5] [--varfree GEN.tsv]

For each of train.tsv, dev.tsv, test.tsv and gen.tsv found in the directory (sentence, LF,
category per line) it reports (a) the share of lines whose sentence the task's independent
checker parses and whose rebuilt LF equals the official LF exactly, per file and per category
(gen.tsv: the 21 generalization categories; train.tsv: in_distribution, primitive and the
exposure examples), with the categories the checker assigns to them; and (b) lexicon
coverage: the nouns, proper names and verb lemmas of the official files against gengap's
lists. ``--varfree`` reads a copy of gen.tsv whose logical forms are rewritten in the
variable-free format of Qiu et al. (2022) (``paint ( agent = Paula , theme = cake ( nmod . in
= closet ) )``): for a checkout whose gen.tsv is missing, it reports per category the
sentences parsed, the category assigned, and the variable-free form of the rebuilt
derivation against the file's. Exit 0 always; it prints its figures.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gengap.generators.tasks import _cogs_grammar as grammar  # noqa: E402
from gengap.generators.tasks import _cogs_lexicon as lex  # noqa: E402
from gengap.generators.tasks._cogs_grammar import category_of  # noqa: E402
from arguments import non_negative_int  # noqa: E402

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


def variable_free(tree: list, unaccusative_subject: str = "theme") -> str:
    """The variable-free logical form (Qiu et al. 2022) of a sentence's derivation; with
    unaccusative_subject="agent", the role COGS's gen.tsv gave some unaccusative subjects
    before its 2022 fix."""

    def np(node: list) -> str:
        if node[0] == grammar.NAME_RULE:
            return node[1]
        text = ("* " if node[1] == "the" else "") + node[2]
        if node[0] == grammar.DET_PP_RULE:
            text += f" ( nmod . {node[3][1]} = {np(node[3][2])} )"
        return text

    def clause(node: list) -> str:
        vp = node[2]
        rule, lemma = vp[0], vp[1]
        arguments = [np(node[1])] + [np(child) for child in vp[2:] if isinstance(child, list) and child[0] != grammar.S_RULE]
        roles = (unaccusative_subject,) if rule == "VP -> V_unacc" else grammar.ROLES[rule]
        parts = [f"{role} = {argument}" for role, argument in zip(roles, arguments)]
        if rule == grammar.XCOMP_RULE:
            parts.append(f"xcomp = {vp[2]} ( agent = {arguments[0]} )")
        if rule == grammar.CP_RULE:
            parts.append(f"ccomp = {clause(vp[2])}")
        return f"{lemma} ( {' , '.join(parts)} )"

    return clause(tree[1])


def check_variable_free(path: Path, show: int) -> None:
    total, parsed, assigned, same, old, misses = Counter(), Counter(), Counter(), Counter(), Counter(), []
    for sentence, lf, category in read(path):
        total[category] += 1
        try:
            tree = grammar.parse(sentence)
        except ValueError as err:
            if len(misses) < show:
                misses.append(f"  [{category}] {sentence}: {err}")
            continue
        parsed[category] += 1
        assigned[category] += category_of(tree) == category
        same[category] += variable_free(tree) == lf
        old[category] += variable_free(tree) != lf and variable_free(tree, "agent") == lf
    n = sum(total.values())
    print(
        f"{path.name} (variable-free LFs): {sum(parsed.values()):,} / {n:,} parsed, category assigned as in the file"
        f" {sum(assigned.values()):,}, variable-free LF equal {sum(same.values()):,}"
    )
    for category in sorted(total):
        line = f"  {category}: parsed {parsed[category]:,} / {total[category]:,}; category {assigned[category]:,}; LF {same[category]:,}"
        if old[category]:
            line += f" (+{old[category]:,} equal with the pre-2022 agent role of an unaccusative subject)"
        print(line)
    for miss in misses:
        print(miss)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="the data/ directory of a COGS checkout")
    parser.add_argument("--show", type=non_negative_int, default=3, help="mismatches to print per file")
    parser.add_argument("--varfree", type=Path, help="gen.tsv with variable-free logical forms (Qiu et al. 2022)")
    args = parser.parse_args(argv)
    if args.varfree:
        check_variable_free(args.varfree, args.show)
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
