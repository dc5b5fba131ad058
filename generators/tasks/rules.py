"""Rule-in-context tasks: the rule system is part of the input, and what must generalize is
rule systems never seen in training (Markov-algorithm string rewriting; regular expressions
as instructions, as Hard RegSet).

``string_rewrite``: an ordered rewrite system and a string -> the string the system leaves
when run as a Markov algorithm: repeatedly apply the first rule (in order) whose left side
occurs in the string, at its leftmost occurrence, until no rule applies. Input tokens: the
rules ``lhs -> rhs`` separated by ``;`` (symbols one token each, an empty right side written
``_``), then ``:`` and the string, e.g. ``a b -> b a ; c -> _ : a c b`` (target ``b a``:
``a c b`` -> ``a b`` -> ``b a``). An empty result is written ``_``. Only systems and strings
that halt after min_steps..max_steps applications are generated (others are redrawn), so
every target is a halted string. Left sides within a system are distinct. Derivation
(``structure``): the chain of applications, ``[rule, [rule, ... "halt"]]``, each rule
written ``lhs -> rhs``, so atoms are the rules applied and compounds runs of 2-5 consecutive
applications. Features: ``rules``, ``steps`` (applications), ``string_length``.

``regex_match``: a regular expression (union ``|``, implicit concatenation, ``*``, and with
``extended`` also ``+`` and ``?``; syntax in generators/tasks/_regex.py) and a string ->
``yes`` if the whole string matches, else ``no``; the two answers are drawn with equal
probability (a member of the chosen length sampled exactly from the automaton; a non-member
half the time one symbol away from a member, else a random string). Input: the regex, ``:``,
the string. Derivation: the regex's syntax tree (operators as rules, symbols as leaves).
Features: ``depth`` (operator nesting, the level knob), ``regex_size`` (nodes),
``string_length``, ``match`` (1 for yes).

Both tasks take ``systems``: 0 draws a fresh rule system (or regex) for every record; N > 0
draws every record's system uniformly from a fixed universe of N systems drawn from
``system_seed`` alone (gengap.generators.seeding's support stream; a rewrite system enters it only
if one of 50 random strings gives it a record, a regex only if it gave both a member and a
non-member of the string lengths in 20 tries each; a record keeps its rewrite system while
its string is redrawn (after 2,000 failed draws it takes the string that admitted the system), and a regex whose draw fails is replaced by another of the universe), so that
many records share each system and a split can hold systems out (splits/rules.py: ``rule_holdout``). ``rule_system(record)`` is
the canonical form the split compares: for rewriting the ordered rule list as written; for
regexes the normalized tree (_regex.canonical).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from functools import lru_cache
from typing import Any, Callable, Mapping

import numpy as np

from gengap.generators.batch import Batch
from gengap.generators.derivation import Tree, tree_atoms, tree_compounds
from gengap.generators.gc_pause import paused_gc
from gengap.generators.params import ParamError, Params, knob
from gengap.generators.registry import register
from gengap.generators.seeding import support_rng
from gengap.generators.sequences import uniform_stream
from gengap.generators.task import Task
from gengap.generators.tasks import _regex

SYMBOLS = "abcdefgh"
ARROW, RULE_SEP, STRING_SEP, EMPTY_WORD = "->", ";", ":", "_"
HALT = "halt"
YES, NO = "yes", "no"
ATTEMPTS = 2000  # draws (system and string) tried for one record before giving up
SOLVE_STEP_CAP = 10_000  # the checker's own bound on applications (generation caps far lower)
MAX_SYSTEMS = 100_000


def system_knobs() -> tuple[Any, Any]:
    """The ``systems`` and ``system_seed`` knobs both tasks share."""
    return (
        knob(0, lo=0, hi=MAX_SYSTEMS, doc="0: a fresh rule system per record; N: records draw from a fixed universe of N systems"),
        knob(0, lo=0, hi=2**31 - 1, doc="seed of the universe of systems (used when systems > 0)"),
    )


def _draws(attempts: int, what: str) -> ParamError:
    return ParamError(f"no {what} found in {attempts} draws: these parameters (almost) never admit one")


# -- string_rewrite --------------------------------------------------------------------------

Rule = tuple[str, str]  # lhs, rhs as strings of one-character symbols


@dataclasses.dataclass(frozen=True)
class RewriteParams(Params):
    """Size of the rewrite systems, of the strings, and the range of derivation lengths."""

    alphabet_size: int = knob(3, lo=2, hi=len(SYMBOLS), doc="symbols a, b, c, ...")
    min_rules: int = knob(2, lo=1, hi=12, doc="fewest rules in a system")
    max_rules: int = knob(3, lo=1, hi=12, doc="most rules in a system")
    max_lhs: int = knob(2, lo=1, hi=4, doc="longest left side (each is 1..max_lhs symbols)")
    max_rhs: int = knob(2, lo=0, hi=4, doc="longest right side (each is 0..max_rhs symbols)")
    min_length: int = knob(2, lo=1, hi=60, doc="shortest starting string")
    max_length: int = knob(6, lo=1, hi=60, doc="longest starting string")
    min_steps: int = knob(1, lo=0, hi=200, doc="fewest rule applications before halting")
    max_steps: int = knob(8, lo=1, hi=200, doc="most rule applications (the step cap: longer runs are redrawn)")
    systems: int = system_knobs()[0]
    system_seed: int = system_knobs()[1]

    def check_consistency(self) -> None:
        for low in ("rules", "length", "steps"):
            lo, hi = getattr(self, f"min_{low}"), getattr(self, f"max_{low}")
            self.require(lo <= hi, f"parameter min_{low}={lo} exceeds max_{low}={hi}")
        sides = sum(self.alphabet_size**k for k in range(1, self.max_lhs + 1))
        self.require(
            self.max_rules <= sides,
            f"parameter max_rules={self.max_rules} exceeds the {sides} distinct left sides "
            f"of up to max_lhs={self.max_lhs} symbols over alphabet_size={self.alphabet_size}",
        )


def run_markov(rules: list[Rule], word: str, cap: int) -> tuple[str, list[int]] | None:
    """(halted word, indices of the rules applied) or None past cap applications.

    None comes early for two kinds of runs that never halt: the first rule applies and its
    right side contains its left side (it then applies forever), or a word is seen again (a
    loop; the word is compared with the one after 1, 2, 4, 8, ... applications, Brent's
    cycle detection)."""
    applied: list[int] = []
    saved = word
    first_sustains = rules[0][0] in rules[0][1]
    while True:
        for index, (lhs, rhs) in enumerate(rules):
            if lhs in word:
                if first_sustains and not index:
                    return None
                word = word.replace(lhs, rhs, 1)  # the leftmost occurrence
                applied.append(index)
                break
        else:
            return word, applied
        if word == saved:
            return None
        count = len(applied)
        if count > cap:
            return None
        if not count & (count - 1):
            saved = word


def _spelled(symbols: str) -> str:
    return " ".join(symbols) if symbols else EMPTY_WORD


def rule_text(rule: Rule) -> str:
    return f"{_spelled(rule[0])} {ARROW} {_spelled(rule[1])}"


def _chain(texts: list[str], applied: list[int]) -> Tree:
    node: Tree = HALT
    for index in reversed(applied):
        node = [texts[index], node]
    return node


@register
class StringRewrite(Task[RewriteParams]):
    """Ordered rewrite system + string -> the string after running it as a Markov algorithm."""

    name = "string_rewrite"
    family = "reasoning"
    description = "ordered rewrite rules + string -> the halted string of the Markov algorithm (rules in context)"
    params_type = RewriteParams
    size_knob = "starting string length in symbols (min_length..max_length)"
    test_caps = {"max_rules": 6, "min_rules": 6, "max_length": 12, "min_length": 12, "max_steps": 40, "min_steps": 3}
    may_not_admit = True  # a rejection sampler: some parameters (almost) never admit a record (a ParamError says so)
    rule_system_form = "the ordered rule list as written (rules in order, each lhs -> rhs)"

    def levels(self) -> dict[int, RewriteParams]:
        return {
            k: RewriteParams(
                min_rules=1 + (k + 1) // 2, max_rules=1 + (k + 1) // 2, min_length=1 + k, max_length=4 + 4 * k,
                min_steps=1 + (k - 1) // 3, max_steps=4 + 4 * k,
            )
            for k in range(1, 11)
        }

    def with_size(self, lo: int, hi: int) -> RewriteParams:
        if hi < 1:
            raise ParamError(f"{self.name}: strings have at least 1 symbol, got a size range up to {hi}")
        return self.default_params().replace(min_length=max(lo, 1), max_length=hi)

    def generate(self, rng: np.random.Generator, n: int, params: RewriteParams) -> Batch:
        with paused_gc():  # the derivation chains hold no cycles (see gengap.generators.gc_pause)
            return self._generate(rng, n, params)

    def _generate(self, rng: np.random.Generator, n: int, params: RewriteParams) -> Batch:
        nxt = uniform_stream(rng).__next__
        universe = _rewrite_universe(params) if params.systems else None
        inputs, targets, trees = [], [], []
        rules_count, steps, lengths = [], [], []
        for _ in range(n):
            chosen, witness = universe[int(nxt() * len(universe))] if universe else (None, None)  # kept: systems uniform
            for _attempt in range(ATTEMPTS):
                rules = chosen or _draw_system(nxt, params)
                word = _draw_word(nxt, params)
                found = _admissible(rules, word, params)
                if found is not None:
                    break
            else:
                if witness is None:
                    raise _draws(ATTEMPTS, f"{self.name} record halting after {params.min_steps}..{params.max_steps} steps")
                rules, word = chosen, witness  # a universe system that rarely halts in range: its witness string
                found = _admissible(rules, word, params)
            result, applied = found
            texts = [rule_text(r) for r in rules]
            inputs.append(f" {RULE_SEP} ".join(texts) + f" {STRING_SEP} " + " ".join(word))
            targets.append(_spelled(result))
            trees.append(_chain(texts, applied))
            rules_count.append(len(rules))
            steps.append(len(applied))
            lengths.append(len(word))
        features = {"rules": rules_count, "steps": steps, "string_length": lengths}
        return Batch.from_lists(inputs, targets, features, structure=trees)

    # -- the checker (token lists, written apart from the generator) --

    def solve(self, example: Mapping[str, Any]) -> str:
        rules, word = parse_rewrite(example["input"])
        result, _ = apply_markov(rules, word)
        return " ".join(result) if result else EMPTY_WORD

    def derive(self, example: Mapping[str, Any]) -> Tree:
        rules, word = parse_rewrite(example["input"])
        _, applied = apply_markov(rules, word)
        node: Tree = HALT
        for index in reversed(applied):
            lhs, rhs = rules[index]
            node = [f"{' '.join(lhs) or EMPTY_WORD} {ARROW} {' '.join(rhs) or EMPTY_WORD}", node]
        return node

    def measure(self, example: Mapping[str, Any]) -> dict[str, int]:
        rules, word = parse_rewrite(example["input"])
        _, applied = apply_markov(rules, word)
        return {"rules": len(rules), "steps": len(applied), "string_length": len(word)}

    def atoms(self, example: Mapping[str, Any]) -> Counter[str]:
        return tree_atoms(self.structure_of(example))

    def compounds(self, example: Mapping[str, Any], abstract_lexical: bool = False) -> Counter[str]:
        return tree_compounds(self.structure_of(example), abstract_lexical)

    def rule_system(self, example: Mapping[str, Any]) -> str:
        rules, _ = parse_rewrite(example["input"])
        return f" {RULE_SEP} ".join(f"{' '.join(l)} {ARROW} {' '.join(r) or EMPTY_WORD}" for l, r in rules)


def _draw_system(nxt: Callable[[], float], params: RewriteParams) -> list[Rule]:
    count = params.min_rules + int(nxt() * (params.max_rules - params.min_rules + 1))
    alphabet = SYMBOLS[: params.alphabet_size]
    symbols, max_lhs, rhs_lengths = len(alphabet), params.max_lhs, params.max_rhs + 1
    rules: list[Rule] = []
    seen: set[str] = set()
    while len(rules) < count:
        more = int(nxt() * max_lhs)  # symbols after the first
        lhs = alphabet[int(nxt() * symbols)]
        while more:
            lhs += alphabet[int(nxt() * symbols)]
            more -= 1
        if lhs in seen:
            continue
        seen.add(lhs)
        rhs, more = "", int(nxt() * rhs_lengths)
        while more:
            rhs += alphabet[int(nxt() * symbols)]
            more -= 1
        rules.append((lhs, rhs))
    return rules


def _draw_word(nxt: Callable[[], float], params: RewriteParams) -> str:
    length = params.min_length + int(nxt() * (params.max_length - params.min_length + 1))
    alphabet = SYMBOLS[: params.alphabet_size]
    symbols = len(alphabet)
    return "".join([alphabet[int(nxt() * symbols)] for _ in range(length)])


def _admissible(rules: list[Rule], word: str, params: RewriteParams) -> tuple[str, list[int]] | None:
    found = run_markov(rules, word, params.max_steps)
    if found is None or len(found[1]) < params.min_steps:
        return None
    return found


@lru_cache(maxsize=8)
def _rewrite_universe(params: RewriteParams) -> list[tuple[list[Rule], str]]:
    """The fixed universe of ``systems`` systems, each with a string it admits a record for
    (its witness: the first admitted among 50 tried), drawn from the support stream of
    system_seed, never from the block."""
    nxt = uniform_stream(support_rng(params.system_seed)).__next__
    universe: list[tuple[list[Rule], str]] = []
    for _ in range(params.systems):
        for _attempt in range(ATTEMPTS):
            rules = _draw_system(nxt, params)
            witness = next((w for w in (_draw_word(nxt, params) for _ in range(50)) if _admissible(rules, w, params)), None)
            if witness is not None:
                universe.append((rules, witness))
                break
        else:
            raise _draws(ATTEMPTS, "string_rewrite system admitting a record")
    return universe


def parse_rewrite(text: str) -> tuple[list[tuple[list[str], list[str]]], list[str]]:
    """(rules as token lists, string) of a string_rewrite input; ValueError when malformed."""
    tokens = text.split()
    if tokens.count(STRING_SEP) != 1:
        raise ValueError(f"input needs exactly one {STRING_SEP!r} between the rules and the string")
    cut = tokens.index(STRING_SEP)
    word = tokens[cut + 1 :]
    if not word or any(t not in SYMBOLS for t in word):
        raise ValueError("the string must be one or more symbols")
    rules: list[tuple[list[str], list[str]]] = []
    for chunk in " ".join(tokens[:cut]).split(f" {RULE_SEP} ") if cut else []:
        parts = chunk.split()
        if parts.count(ARROW) != 1:
            raise ValueError(f"rule {chunk!r} needs exactly one {ARROW}")
        at = parts.index(ARROW)
        lhs, rhs = parts[:at], parts[at + 1 :]
        if not lhs or any(t not in SYMBOLS for t in lhs):
            raise ValueError(f"rule {chunk!r} needs a left side of symbols")
        if rhs == [EMPTY_WORD]:
            rhs = []
        if not rhs and parts[at + 1 :] != [EMPTY_WORD] or any(t not in SYMBOLS for t in rhs):
            raise ValueError(f"rule {chunk!r} needs a right side of symbols or {EMPTY_WORD}")
        rules.append((lhs, rhs))
    if not rules:
        raise ValueError("input has no rules")
    return rules, word


def apply_markov(rules: list[tuple[list[str], list[str]]], word: list[str]) -> tuple[list[str], list[int]]:
    """Run the rules on the token list as a Markov algorithm: (halted word, rules applied);
    ValueError past SOLVE_STEP_CAP applications."""
    applied: list[int] = []
    word = list(word)
    while len(applied) <= SOLVE_STEP_CAP:
        for index, (lhs, rhs) in enumerate(rules):
            width = len(lhs)
            at = next((i for i in range(len(word) - width + 1) if word[i : i + width] == lhs), -1)
            if at >= 0:
                word[at : at + width] = rhs
                applied.append(index)
                break
        else:
            return word, applied
    raise ValueError(f"the system does not halt within {SOLVE_STEP_CAP} applications")


# -- regex_match -------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class RegexParams(Params):
    """Alphabet, operator nesting depth of the regexes, and string lengths."""

    alphabet_size: int = knob(2, lo=2, hi=len(SYMBOLS), doc="symbols a, b, c, ...")
    min_depth: int = knob(1, lo=1, hi=12, doc="shallowest operator nesting")
    max_depth: int = knob(3, lo=1, hi=12, doc="deepest operator nesting")
    min_length: int = knob(1, lo=1, hi=60, doc="shortest string")
    max_length: int = knob(8, lo=1, hi=60, doc="longest string")
    extended: bool = knob(True, doc="also + and ? (else union, concatenation and * only)")
    systems: int = system_knobs()[0]
    system_seed: int = system_knobs()[1]

    def check_consistency(self) -> None:
        for low in ("depth", "length"):
            lo, hi = getattr(self, f"min_{low}"), getattr(self, f"max_{low}")
            self.require(lo <= hi, f"parameter min_{low}={lo} exceeds max_{low}={hi}")


@register
class RegexMatch(Task[RegexParams]):
    """Regular expression + string -> yes if the whole string matches, else no."""

    name = "regex_match"
    family = "reasoning"
    description = "regular expression (| concatenation * + ?) + string -> yes if it matches (regex in context)"
    params_type = RegexParams
    answer_tokens = ("no", "yes")
    size_knob = "string length in symbols (min_length..max_length)"
    level_feature = "depth"
    test_caps = {"max_depth": 6, "min_depth": 6, "max_length": 16, "min_length": 16}
    rule_system_form = ("the normalized syntax tree, written: unions and concatenations flattened, union alternatives "
                        "deduplicated and sorted, stacked postfix operators collapsed (language equivalence not decided)")

    def levels(self) -> dict[int, RegexParams]:
        return {k: RegexParams(min_depth=k, max_depth=k, max_length=4 + 2 * k) for k in range(1, 11)}

    def with_size(self, lo: int, hi: int) -> RegexParams:
        if hi < 1:
            raise ParamError(f"{self.name}: strings have at least 1 symbol, got a size range up to {hi}")
        return self.default_params().replace(min_length=max(lo, 1), max_length=hi)

    def generate(self, rng: np.random.Generator, n: int, params: RegexParams) -> Batch:
        with paused_gc():  # the derivations hold no cycles (see gengap.generators.gc_pause)
            return self._generate(rng, n, params)

    def _generate(self, rng: np.random.Generator, n: int, params: RegexParams) -> Batch:
        nxt = uniform_stream(rng).__next__
        universe = _regex_universe(params) if params.systems else None
        alphabet = SYMBOLS[: params.alphabet_size]
        inputs, targets, trees = [], [], []
        depths, sizes, lengths, labels = [], [], [], []
        for _ in range(n):
            want = nxt() < 0.5
            for _attempt in range(ATTEMPTS):
                tree, nfa, reach = universe[int(nxt() * len(universe))] if universe else _compiled(_draw_regex(nxt, params), params)
                length = params.min_length + int(nxt() * (params.max_length - params.min_length + 1))
                word = _sample_word(nxt, nfa, reach, length, want, len(alphabet))
                if word is not None:
                    break
            else:
                raise _draws(ATTEMPTS, f"{self.name} string with answer {YES if want else NO}")
            written = _regex.show(tree)
            inputs.append(" ".join(written) + f" {STRING_SEP} " + " ".join(alphabet[c] for c in word))
            targets.append(YES if want else NO)
            trees.append(_regex.derivation(tree))
            depths.append(_regex.depth(tree))
            sizes.append(_regex.size(tree))
            lengths.append(length)
            labels.append(int(want))
        features = {"depth": depths, "regex_size": sizes, "string_length": lengths, "match": labels}
        return Batch.from_lists(inputs, targets, features, structure=trees)

    # -- the checker (Brzozowski derivatives on the parsed input) --

    def solve(self, example: Mapping[str, Any]) -> str:
        tree, word = parse_regex_input(example["input"])
        return YES if _regex.matches(tree, word) else NO

    def derive(self, example: Mapping[str, Any]) -> Tree:
        return _regex.derivation(parse_regex_input(example["input"])[0])

    def measure(self, example: Mapping[str, Any]) -> dict[str, int]:
        tree, word = parse_regex_input(example["input"])
        return {"depth": _regex.depth(tree), "regex_size": _regex.size(tree), "string_length": len(word),
                "match": int(_regex.matches(tree, word))}

    def atoms(self, example: Mapping[str, Any]) -> Counter[str]:
        return tree_atoms(self.structure_of(example))

    def compounds(self, example: Mapping[str, Any], abstract_lexical: bool = False) -> Counter[str]:
        return tree_compounds(self.structure_of(example), abstract_lexical)

    def rule_system(self, example: Mapping[str, Any]) -> str:
        return _regex.canonical(parse_regex_input(example["input"])[0])


def parse_regex_input(text: str) -> tuple[_regex.Regex, list[str]]:
    """(regex tree, string) of a regex_match input; ValueError when malformed."""
    tokens = text.split()
    if tokens.count(STRING_SEP) != 1:
        raise ValueError(f"input needs exactly one {STRING_SEP!r} between the regex and the string")
    cut = tokens.index(STRING_SEP)
    word = tokens[cut + 1 :]
    if not word or any(t not in SYMBOLS for t in word):
        raise ValueError("the string must be one or more symbols")
    return _regex.parse(tokens[:cut], frozenset(SYMBOLS)), word


_BINARY, _UNARY = ("cat", "alt"), ("star", "plus", "opt")
NON_MEMBER_TRIES = 8  # random / one-off strings tried for a non-member before redrawing


@lru_cache(maxsize=2)
def _kinds_under(extended: bool) -> dict[str, tuple[str, ...]]:
    """The operators a node may have under each parent kind ("" at the root)."""
    unary = _UNARY if extended else ("star",)
    return {
        parent: _BINARY if parent in _UNARY else tuple(k for k in _BINARY if k != parent) + unary
        for parent in ("", *_BINARY, *_UNARY)
    }


def _draw_regex(nxt: Callable[[], float], params: RegexParams) -> _regex.Regex:
    """A tree of operator nesting exactly d (d uniform in min_depth..max_depth): no union or
    concatenation directly inside one of its own kind, no postfix operator directly inside
    another, so the written form parses back to the same tree."""
    kinds_under = _kinds_under(params.extended)
    leaves = [("sym", symbol) for symbol in SYMBOLS[: params.alphabet_size]]
    symbols = len(leaves)

    def grow(d: int, parent: str) -> _regex.Regex:
        if d == 0:
            return leaves[int(nxt() * symbols)]
        kinds = kinds_under[parent]
        kind = kinds[int(nxt() * len(kinds))]
        if kind in _UNARY:
            return (kind, grow(d - 1, kind))
        arity = 2 + int(nxt() * 2)
        deep = int(nxt() * arity)
        children = []
        for i in range(arity):
            children.append(grow(d - 1 if i == deep else int(nxt() * d), kind))
        return (kind, tuple(children))

    tree = grow(params.min_depth + int(nxt() * (params.max_depth - params.min_depth + 1)), "")
    del grow  # empties its own closure cell: the function is freed now, not left to the collector
    return tree


def _compiled(tree: _regex.Regex, params: RegexParams) -> tuple[_regex.Regex, _regex.Nfa, list[int]]:
    nfa = _regex.Nfa(tree, SYMBOLS[: params.alphabet_size])
    return tree, nfa, nfa.reach(params.max_length)


def _sample_word(
    nxt: Callable[[], float], nfa: _regex.Nfa, reach: list[int], length: int, member: bool, symbols: int
) -> list[int] | None:
    """A word of the length in the language (member) or outside it; None when none was found.

    A non-member is tried NON_MEMBER_TRIES times. When a try fails and the automaton accepts
    every word of the length, the remaining tries cannot succeed: their uniforms are skipped
    (as many as they would draw) instead of building and testing their words."""
    if member:
        return _member(nxt, nfa, reach, length)
    for tried in range(1, NON_MEMBER_TRIES + 1):
        word = None
        if nxt() < 0.5:  # one symbol away from a member
            word = _member(nxt, nfa, reach, length)
            if word is not None:
                at = int(nxt() * length)
                word[at] = (word[at] + 1 + int(nxt() * (symbols - 1))) % symbols
        if word is None:
            word = [int(nxt() * symbols) for _ in range(length)]
        if not nfa.accepts(word):
            return word
        if nfa.accepts_all(length):
            _skip_non_member_tries(nxt, NON_MEMBER_TRIES - tried, length)
            return None
    return None


def _skip_non_member_tries(nxt: Callable[[], float], tries: int, length: int) -> None:
    """Draw the uniforms of `tries` non-member tries on a length where every word is a member:
    the coin, then a member (one per symbol) and its change (position, symbol), or a random
    word (one per symbol)."""
    for _ in range(tries):
        for _ in range(length + 2 if nxt() < 0.5 else length):
            nxt()


def _member(nxt: Callable[[], float], nfa: _regex.Nfa, reach: list[int], length: int) -> list[int] | None:
    """A member of exactly `length` symbols, each symbol uniform among those that can still
    complete a member; None when the language has no word of that length."""
    states = nfa.start
    if not states & reach[length]:
        return None
    word = []
    choices = nfa.choices
    for remaining in range(length - 1, -1, -1):
        options = choices(states, reach[remaining])
        code, states = options[int(nxt() * len(options))]
        word.append(code)
    return word


@lru_cache(maxsize=8)
def _regex_universe(params: RegexParams) -> list[tuple[_regex.Regex, _regex.Nfa, list[int]]]:
    """The fixed universe of ``systems`` regexes (drawn from the support stream of system_seed):
    each one gave a member and a non-member of lengths in range within 20 tries each."""
    nxt = uniform_stream(support_rng(params.system_seed)).__next__
    span = params.max_length - params.min_length + 1
    symbols = params.alphabet_size

    def admits(nfa: _regex.Nfa, reach: list[int], member: bool) -> bool:
        return any(
            _sample_word(nxt, nfa, reach, params.min_length + int(nxt() * span), member, symbols) is not None for _ in range(20)
        )

    universe = []
    for _ in range(params.systems):
        for _attempt in range(ATTEMPTS):
            tree, nfa, reach = _compiled(_draw_regex(nxt, params), params)
            if admits(nfa, reach, True) and admits(nfa, reach, False):
                universe.append((tree, nfa, reach))
                break
        else:
            raise _draws(ATTEMPTS, "regex_match regex with members and non-members of the string lengths")
    return universe
