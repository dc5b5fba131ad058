"""COGS from its grammar (Kim & Linzen 2020): sentences and logical forms in COGS's format.

Lexicon: COGS's words and classes (``_cogs_lexicon``: 408 common nouns, 103 proper names,
134 verbs: unaccusative, transitive, object-omissible, unergative, dative, CP- and
infinitive-taking, infinitival). Constructions: active and passive with and without a
by-phrase, both dative forms and their four passives, unaccusatives, unergatives,
object-omitted transitives, infinitival complements (``Emma wanted to run .``), sentential
complements nested up to ``max_cp_depth``, PPs nested up to ``max_pp_depth`` on a
post-verbal theme, and one-word primitives (``shark`` -> ``LAMBDA a . shark ( a )``).
Logical forms follow COGS exactly (checked against every line of the official train, dev and
test files: benchmarks/cogs_official.py), with the 2022 corrected roles: the subject of an
intransitive unaccusative is always its theme, animate or not.

Distribution: with ``gen_share`` 0 the generator draws COGS's training distribution without
the held-out words of the lexical categories: a primitive with probability
``primitive_share``, else a sentence whose innermost construction is drawn with COGS's train
frequencies, CP depth c with weight 0.1^c, and, when the construction has a post-verbal
theme, a PP chain on it of depth d with weights 1, 0.8, 0.08, ... (train.tsv: 5,754 / 4,594 /
448); names, ``a N`` and ``the N`` one third each. With ``gen_share`` > 0 that share of the
examples comes from the generalization categories (``category``: one of the 21, or ``all``
evenly), shaped as in COGS's gen.tsv: a held-out subject is the agent of an active clause, a
held-out common-noun object carries the PP chain when there is one (a name none), cobra and
hippo are mostly embedded subjects (CP depth 1), 79 % of the passives of bless have a
by-phrase; obj_pp_to_subj_pp puts a PP (depth 2 in 6 %) on every clause's subject; pp_recursion
nests 3..``gen_max_depth`` PPs on an active object, cp_recursion as many CPs.
``_cogs_grammar.category_of`` names the category of any derivation; the ``category`` split
strategy reads it.

Derivation (``structure``): see ``_cogs_grammar`` (cogs_like's rule names plus
``VP -> V_trans``, ``VP -> V_xcomp to V_inf`` and the ``ROOT -> ...`` primitives).
Features: ``cp_depth``, ``pp_depth``, ``derivation_depth``, ``rules``.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from operator import itemgetter
from typing import Any, Callable, Mapping

import numpy as np

from gengap.generators.batch import Batch
from gengap.generators.derivation import Tree, tree_atoms, tree_compounds
from gengap.generators.gc_pause import paused_gc
from gengap.generators.lexicons import LexiconSpec, WordClass, classes_of, lexical, lexicon_knob
from gengap.generators.params import Params, knob
from gengap.generators.registry import register
from gengap.generators.sequences import uniform_stream
from gengap.generators.task import Task
from gengap.generators.tasks import _cogs_grammar as grammar
from gengap.generators.tasks import _cogs_lexicon as lex

MAX_DEPTH = 30
CP_DECAY, PP_FIRST, PP_DECAY = 0.1, 0.8, 0.1
# shapes of COGS's gen.tsv: share of depth-2 subject PPs (obj_pp_to_subj_pp: 58 of 1,000), of
# by-phrases in active_to_passive (791 of 1,000), and the CP depths 0 / 1 / 2 of the
# only_seen_as_* categories (about 40 / 915 / 45 of 1,000: the word is mostly an embedded subject)
SUBJECT_PP_DEEP = 0.06
PASSIVE_BY_SHARE = 0.79
EMBEDDED_SUBJECT_CP = (0.04, 0.91, 0.05)
# innermost constructions with their frequencies in COGS's train.tsv (in_distribution lines)
CONSTRUCTIONS = (
    ("VP -> V_trans NP", 5066), ("VP -> was V_trans by NP", 4189), ("VP -> was V_trans", 2077),
    ("VP -> V_dat NP to NP", 1642), ("VP -> V_dat NP NP", 1633), ("VP -> was V_dat to NP by NP", 1548),
    ("VP -> was V_dat to NP", 1380), (grammar.XCOMP_RULE, 1329), ("VP -> was V_dat NP by NP", 1248),
    ("VP -> was V_dat NP", 1207), ("VP -> V_unacc", 1037), ("VP -> V_unerg", 828), ("VP -> V_trans", 816),
)  # fmt: skip
# primitives by kind with their counts in train.tsv
PRIMITIVES = (("ROOT -> N", 41), ("ROOT -> V_trans", 40), ("ROOT -> V_unerg", 21), ("ROOT -> Name", 21), ("ROOT -> V_unacc", 20))
CATEGORY_CHOICES = ("all", *grammar.CATEGORIES)
VERB_CLASSES = (
    ("unaccusative", lex.UNACCUSATIVE), ("transitive", lex.TRANSITIVE), ("object_omissible", lex.OBJECT_OMISSIBLE),
    ("unergative", lex.UNERGATIVE), ("dative", lex.DATIVE), ("cp", lex.CP_TAKING), ("xcomp", lex.XCOMP_TAKING),
    ("infinitival", lex.INFINITIVAL),
)  # fmt: skip


def _word_classes() -> tuple[WordClass, ...]:
    """COGS's lexical items by class, each permuted by a lexicon: proper names; common nouns by
    animacy and use in PPs (forms: lemma, sentence form); verbs by the verb classes they belong
    to (forms: lemma, past, participle). A held-out word's role is one of its class's."""
    animate, pp = frozenset(lex.ANIMATE_NOUNS), frozenset(lex.PP_NOUNS)
    items: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [("name", (name,), ("name",)) for name in lex.NAMES]
    for noun in lex.NOUNS:
        kind = "noun" + " animate" * (noun in animate) + " pp" * (noun in pp)
        items.append((kind, (noun, lex.SURFACE.get(noun, noun)), ("lemma", "sentence form")))
    for lemma, (past, participle) in lex.VERB_FORMS.items():
        kinds = "+".join(name for name, members in VERB_CLASSES if lemma in members)
        items.append((f"verb {kinds}", (lemma, past, participle), VERB_FORMS))
    return classes_of(items)


VERB_FORMS = ("lemma", "past", "participle")
LEXICON = LexiconSpec("cogs", _word_classes)


def _id(words: tuple[str, ...], drop: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Words of the training distribution: without held-out words (and without those in drop)."""
    return tuple(w for w in words if w not in grammar.HELD_OUT and w not in drop)


_NAMES = _id(lex.NAMES)
_ANIMATE = _id(lex.ANIMATE_NOUNS)
_NOUNS = _id(lex.NOUNS)
_PP_NOUNS = _id(lex.PP_NOUNS)
_NOT_VERBS = tuple(lex.NOUNS) + tuple(lex.NAMES)  # a primitive must read as one word class only
_VERBS = {
    "VP -> V_unerg": _id(lex.UNERGATIVE),
    "VP -> V_unacc": _id(lex.UNACCUSATIVE),
    "VP -> V_trans": _id(lex.OBJECT_OMISSIBLE),
    "trans": _id(lex.TRANSITIVE),
    "dat": _id(lex.DATIVE),
    grammar.CP_RULE: _id(lex.CP_TAKING),
    grammar.XCOMP_RULE: _id(lex.XCOMP_TAKING),
    "inf": _id(lex.INFINITIVAL),
    "ROOT -> V_trans": _id(tuple(v for v in lex.TRANSITIVE if v not in lex.UNACCUSATIVE), _NOT_VERBS),
    "ROOT -> V_unerg": _id(lex.UNERGATIVE, _NOT_VERBS),
    "ROOT -> V_unacc": _id(lex.UNACCUSATIVE, _NOT_VERBS),
    "ROOT -> N": _NOUNS,
    "ROOT -> Name": _NAMES,
}
_CP_VERBS = _VERBS[grammar.CP_RULE]
_PAST = {lemma: forms[0] for lemma, forms in lex.VERB_FORMS.items()}
_SURFACE = lex.SURFACE
_KEY = 1 << 20  # conjunct sort key: first argument's position * _KEY + second's + 1 (see _Sentence)
_OBJECT_RULES = ("VP -> V_trans NP", "VP -> V_dat NP NP", "VP -> V_dat NP to NP")
# actives whose subject is an agent: where COGS's gen tests a held-out subject
_AGENT_SUBJECT_RULES = _OBJECT_RULES + (grammar.XCOMP_RULE, "VP -> V_unerg", "VP -> V_trans")
_THEME_AFTER_VERB = tuple(rule for rule, _ in CONSTRUCTIONS if "theme" in grammar.ROLES[rule][1:])


def _verb_pool(rule: str) -> tuple[str, ...]:
    if rule in _VERBS:
        return _VERBS[rule]
    return _VERBS["dat"] if "V_dat" in rule else _VERBS["trans"]


@dataclasses.dataclass(frozen=True)
class CogsFullParams(Params):
    """Depth bounds of the training distribution, the primitive share and the generalization mix."""

    min_cp_depth: int = knob(0, lo=0, hi=MAX_DEPTH, doc="fewest nested sentential complements")
    max_cp_depth: int = knob(2, lo=0, hi=MAX_DEPTH, doc="most nested sentential complements (COGS train: 2)")
    min_pp_depth: int = knob(0, lo=0, hi=MAX_DEPTH, doc="fewest nested PPs (> 0: only constructions with a post-verbal theme)")
    max_pp_depth: int = knob(2, lo=0, hi=MAX_DEPTH, doc="most nested PPs on a post-verbal theme (COGS train: 2)")
    primitive_share: float = knob(143 / 24155, lo=0.0, hi=1.0, doc="share of one-word primitives (COGS train: 0.6%)")
    gen_share: float = knob(0.0, lo=0.0, hi=1.0, doc="share of examples drawn from the generalization categories")
    category: str = knob("all", choices=CATEGORY_CHOICES, doc="generalization category of the gen_share (all: the 21 evenly)")
    gen_max_depth: int = knob(12, lo=3, hi=MAX_DEPTH, doc="deepest nesting of cp_recursion and pp_recursion (COGS: 12)")
    lexicon: int = lexicon_knob()

    def check_consistency(self) -> None:
        for part in ("pp", "cp"):
            lo, hi = getattr(self, f"min_{part}_depth"), getattr(self, f"max_{part}_depth")
            self.require(lo <= hi, f"parameter min_{part}_depth={lo} exceeds max_{part}_depth={hi}")


class _Sentence:
    """One sentence being drawn left to right: tokens, definites, conjuncts and the tree.

    A conjunct is kept with its sort key: (position of its first argument) * _KEY + (position
    of its second argument, -1 for none) + 1."""

    def __init__(self, nxt: Callable[[], float]) -> None:
        self.nxt = nxt
        self.toks: list[str] = []
        self.defs: list[tuple[int, str]] = []
        self.conj: list[tuple[int, str]] = []

    def pick(self, words: tuple[str, ...]) -> str:
        return words[int(self.nxt() * len(words))]

    def noun(self, det: str, noun: str) -> int:
        toks = self.toks
        toks.append(det)
        toks.append(_SURFACE.get(noun, noun))
        at = len(toks) - 1
        if det == "the":
            self.defs.append((at, f"* {noun} ( x _ {at} )"))
        else:
            self.conj.append((at * _KEY, f"{noun} ( x _ {at} )"))
        return at

    def np(self, animate: bool, pp: int = 0, word: str | None = None) -> tuple[str, int, Tree]:
        """Append an NP (a given word, or drawn); return its LF argument, position and tree."""
        nxt = self.nxt
        if word is None and pp == 0 and nxt() < 1 / 3:
            word = _NAMES[int(nxt() * len(_NAMES))]
        if word is not None and word[0].isupper():
            self.toks.append(word)
            return word, len(self.toks) - 1, [grammar.NAME_RULE, word]
        return self.det_np(animate, pp, word)

    def det_np(self, animate: bool, pp: int = 0, word: str | None = None) -> tuple[str, int, Tree]:
        """Append an NP with a determiner (and pp PPs); as np."""
        nxt = self.nxt
        det = "the" if nxt() < 0.5 else "a"
        if not word:
            nouns = _ANIMATE if animate else _NOUNS
            word = nouns[int(nxt() * len(nouns))]
        head = at = self.noun(det, word)
        top = node = [grammar.DET_RULE, det, word]
        for _ in range(pp):
            prep = grammar.PREPOSITIONS[int(nxt() * 3)]
            self.toks.append(prep)
            det2 = "the" if nxt() < 0.5 else "a"
            noun2 = _PP_NOUNS[int(nxt() * len(_PP_NOUNS))]
            at2 = self.noun(det2, noun2)
            self.conj.append((at * _KEY + at2 + 1, f"{node[2]} . nmod . {prep} ( x _ {at} , x _ {at2} )"))
            inner = [grammar.DET_RULE, det2, noun2]
            node[0] = grammar.DET_PP_RULE
            node.append([grammar.PP_RULE, prep, inner])
            node, at = inner, at2
        return f"x _ {head}", head, top

    def role(self, lemma: str, role: str, event: int, arg: str, at: int) -> None:
        """The conjunct of a verb's role filled by the argument arg at position at."""
        self.conj.append((event * _KEY + at + 1, f"{lemma} . {role} ( x _ {event} , {arg} )"))

    def complement(self, verb: tuple[str, int] | None, event: int) -> None:
        """The ccomp link from a CP-taking verb (lemma, position) to its complement's event."""
        if verb is not None:
            self.conj.append((verb[1] * _KEY + event + 1, f"{verb[0]} . ccomp ( x _ {verb[1]} , x _ {event} )"))

    def clause(self, rule: str, plan: dict[str, Any]) -> tuple[list[Any], int]:
        """Append the innermost clause; plan may force 'verb', 'subject', 'object', 'inf', 'pp',
        'pp_on_object', 'subject_pp'. Returns the S tree and the event position."""
        roles = grammar.ROLES[rule]
        subject = self.np(roles[0] != "theme", plan.get("subject_pp", 0), plan.get("subject"))
        lemma = plan.get("verb") or self.pick(_verb_pool(rule))
        passive = rule.startswith("VP -> was")
        if passive:
            self.toks.append("was")
        event = len(self.toks)
        self.toks.append(lex.VERB_FORMS[lemma][1 if passive else 0])
        self.role(lemma, roles[0], event, *subject[:2])
        vp: list[Any] = [rule, lemma]
        if rule == grammar.XCOMP_RULE:
            infinitive = plan.get("inf") or self.pick(_VERBS["inf"])
            self.toks += ["to", infinitive]
            self.conj.append((event * _KEY + event + 3, f"{lemma} . xcomp ( x _ {event} , x _ {event + 2} )"))
            self.role(infinitive, "agent", event + 2, *subject[:2])
            vp.append(infinitive)
        objects = roles[1:]
        forced_at = int(self.nxt() * len(objects)) if objects and "object" in plan else -1
        themes = [j for j, r in enumerate(objects) if r == "theme"]
        carrier = themes[int(self.nxt() * len(themes))] if themes and plan.get("pp") else -1
        if plan.get("pp_on_object") and plan.get("pp"):
            carrier = forced_at
        symbols = rule.split(" -> ")[1].split()
        j = 0
        for symbol in [] if rule == grammar.XCOMP_RULE else symbols[symbols.index("was") + 2 if passive else 1 :]:
            if symbol != "NP":
                self.toks.append(symbol)
                continue
            role = objects[j]
            arg = self.np(role != "theme", plan.get("pp", 0) if j == carrier else 0, plan.get("object") if j == forced_at else None)
            self.role(lemma, role, event, *arg[:2])
            vp.append(arg[2])
            j += 1
        return [grammar.S_RULE, subject[2], vp], event

    def finish(self) -> tuple[str, str]:
        if self.toks[0] in ("a", "the"):
            self.toks[0] = self.toks[0].capitalize()
        self.toks.append(".")
        self.conj.sort(key=itemgetter(0))
        self.defs.sort()
        body = " AND ".join(text for _, text in self.conj)
        return " ".join(self.toks), "".join(f"{text} ; " for _, text in self.defs) + body


def _choose(nxt: Callable[[], float], weights: list[float]) -> int:
    """An index drawn with the given weights."""
    u = nxt() * sum(weights)
    for index, weight in enumerate(weights):
        u -= weight
        if u < 0:
            return index
    return len(weights) - 1


def _cp_depth(nxt: Callable[[], float], lo: int, hi: int) -> int:
    """CP depth lo..hi with weight 0.1^c (COGS's train: 21,726 / 2,114 / 160 at depths 0 / 1 / 2)."""
    return lo + _choose(nxt, [CP_DECAY**c for c in range(lo, hi + 1)])


def _pp_depth(nxt: Callable[[], float], lo: int, hi: int) -> int:
    """PP depth lo..hi of a construction with a post-verbal theme: weights 1, 0.8, 0.08, ...
    (COGS's train: 5,754 / 4,594 / 448 at depths 0 / 1 / 2)."""
    return lo + _choose(nxt, [PP_FIRST * PP_DECAY ** (d - 1) if d else 1.0 for d in range(lo, hi + 1)])


def _weighted(nxt: Callable[[], float], table: tuple[tuple[str, int], ...], allowed: tuple[str, ...] | None = None) -> str:
    rows = [(k, w) for k, w in table if allowed is None or k in allowed]
    return rows[_choose(nxt, [w for _, w in rows])][0]


def _plan(category: str, nxt: Callable[[], float], params: CogsFullParams) -> tuple[int, str, dict[str, Any]]:
    """(CP depth, innermost construction, forced choices) of one sentence of a category ("" =
    the training distribution); the shapes follow COGS's gen.tsv (see the module doc)."""
    cp = _cp_depth(nxt, params.min_cp_depth, params.max_cp_depth)
    allowed: tuple[str, ...] | None = _THEME_AFTER_VERB if params.min_pp_depth else None
    plan: dict[str, Any] = {}
    recursion = 3 + int(nxt() * (params.gen_max_depth - 2))
    if category == "cp_recursion":
        cp = recursion
    elif category == "pp_recursion":
        allowed, plan["pp"] = _OBJECT_RULES, recursion
    elif category == "obj_pp_to_subj_pp":
        plan["subject_pp"] = 2 if nxt() < SUBJECT_PP_DEEP else 1
    elif category in grammar.LEXICAL:
        word, context = grammar.LEXICAL[category]
        if context == "obj":
            allowed, plan["object"] = _OBJECT_RULES, word
            plan["pp_on_object"] = word[0].islower()  # a held-out common noun carries the PP; a name none
            plan["pp"] = 0 if word[0].isupper() else None
        elif context == "subj":
            allowed, plan["subject"] = _AGENT_SUBJECT_RULES, word
        elif context == "inf":
            allowed, plan["inf"] = (grammar.XCOMP_RULE,), word
        elif context.startswith("subj:"):
            allowed, plan["subject"] = (context[5:],), word
            cp = _choose(nxt, list(EMBEDDED_SUBJECT_CP))
        else:
            plan["verb"] = word
            allowed = (context,)
            if context == "passive":
                allowed = ("VP -> was V_trans by NP",) if nxt() < PASSIVE_BY_SHARE else ("VP -> was V_trans",)
    rule = _weighted(nxt, CONSTRUCTIONS, allowed)
    if plan.get("pp") is None:
        plan["pp"] = _pp_depth(nxt, params.min_pp_depth, params.max_pp_depth) if rule in _THEME_AFTER_VERB else 0
    return cp, rule, plan


def draw(nxt: Callable[[], float], params: CogsFullParams, category: str) -> tuple[str, str, Tree]:
    """One example of the training distribution (category "") or of a category: (input, LF, tree)."""
    if not category and nxt() < params.primitive_share:
        kind = _weighted(nxt, PRIMITIVES)
        word = _VERBS[kind][int(nxt() * len(_VERBS[kind]))]
        return lex.SURFACE.get(word, word), grammar.PRIMITIVE_LF[kind].format(w=word), [kind, word]
    cp, rule, plan = _plan(category, nxt, params)
    sentence = _Sentence(nxt)
    root_clause: list[Any] = [grammar.S_RULE]
    parent = root_clause
    pending: tuple[str, int] | None = None
    subject_pp, toks = plan.get("subject_pp", 0), sentence.toks
    for _ in range(cp):
        if not subject_pp and nxt() < 1 / 3:  # sentence.np, its name branch inlined
            arg = _NAMES[int(nxt() * len(_NAMES))]
            toks.append(arg)
            at, subject = len(toks) - 1, [grammar.NAME_RULE, arg]
        else:
            arg, at, subject = sentence.det_np(True, subject_pp)
        lemma = sentence.pick(_CP_VERBS)
        event = len(toks)
        toks.append(_PAST[lemma])
        toks.append("that")
        sentence.complement(pending, event)
        sentence.role(lemma, "agent", event, arg, at)
        embedded: list[Any] = [grammar.S_RULE]
        parent.append(subject)
        parent.append([grammar.CP_RULE, lemma, embedded])
        parent, pending = embedded, (lemma, event)
    inner, event = sentence.clause(rule, plan)
    sentence.complement(pending, event)
    parent += inner[1:]
    text, lf = sentence.finish()
    return text, lf, [grammar.ROOT_RULE, root_clause]


@register
@lexical(LEXICON)
class Cogs(Task[CogsFullParams]):
    """English sentence or primitive of COGS's grammar -> its COGS logical form."""

    name = "cogs"
    family = "compositional"
    description = "COGS sentence (full lexicon, all constructions, primitives) -> COGS logical form"
    params_type = CogsFullParams
    size_knob = "nesting depth: CP and PP depths both range over round((size - 6) / 6.5), clipped to 0..30"
    level_feature = "rules"
    test_caps = {"max_cp_depth": 4, "max_pp_depth": 4, "min_cp_depth": 4, "min_pp_depth": 4, "gen_max_depth": 5}

    def levels(self) -> dict[int, CogsFullParams]:
        return {
            k: CogsFullParams(min_cp_depth=(k - 1) // 2, max_cp_depth=k - 1, min_pp_depth=(k - 1) // 2, max_pp_depth=k - 1)
            for k in range(1, 11)
        }

    def with_size(self, lo: int, hi: int) -> CogsFullParams:
        def depth(size: int) -> int:
            return min(MAX_DEPTH, max(0, round((size - 6) / 6.5)))

        a, b = depth(lo), depth(hi)
        return CogsFullParams(min_cp_depth=a, max_cp_depth=b, min_pp_depth=a, max_pp_depth=b)

    @paused_gc()  # hundreds of tree lists per sentence (see gengap.generators.gc_pause)
    def generate(self, rng: np.random.Generator, n: int, params: CogsFullParams) -> Batch:
        nxt = uniform_stream(rng).__next__
        chosen = grammar.CATEGORIES if params.category == "all" else (params.category,)
        inputs, targets, trees = [], [], []
        features: dict[str, list[int]] = {"cp_depth": [], "pp_depth": [], "derivation_depth": [], "rules": []}
        for _ in range(n):
            category = chosen[int(nxt() * len(chosen))] if nxt() < params.gen_share else ""
            text, lf, tree = draw(nxt, params, category)
            inputs.append(text)
            targets.append(lf)
            trees.append(tree)
            for key, value in tree_features(tree).items():
                features[key].append(value)
        return Batch.from_lists(inputs, targets, features, structure=trees)

    def solve(self, example: Mapping[str, Any]) -> str:
        return grammar.interpret(grammar.parse(example["input"]))

    def derive(self, example: Mapping[str, Any]) -> Tree:
        return grammar.parse(example["input"])

    def atoms(self, example: Mapping[str, Any]) -> Counter[str]:
        return tree_atoms(self.structure_of(example))

    def compounds(self, example: Mapping[str, Any], abstract_lexical: bool = False) -> Counter[str]:
        return tree_compounds(self.structure_of(example), abstract_lexical)

    def measure(self, example: Mapping[str, Any]) -> dict[str, int]:
        return tree_features(grammar.parse(example["input"]))

    def category(self, example: Mapping[str, Any]) -> str | None:
        return grammar.category_of(self.structure_of(example))

    def categories(self) -> tuple[str, ...]:
        return grammar.CATEGORIES

    def exposure(self, category: str) -> list[str]:
        """Inputs of the category's exposure examples (COGS's train.tsv); none for structural ones."""
        return [grammar.EXPOSURE[category]] if category in grammar.EXPOSURE else []


def tree_features(tree: Tree) -> dict[str, int]:
    """cp_depth, pp_depth, derivation_depth and rules of a derivation, read along its spine of
    clauses (an NP is a chain of k PPs: 1 + 2 k rules deep and in number)."""
    if tree[0] != grammar.ROOT_RULE:  # a primitive
        return {"cp_depth": 0, "pp_depth": 0, "derivation_depth": 1, "rules": 1}
    clauses: list[tuple[int, int, int]] = []  # subject size, largest NP of the VP, rules without the embedded clause
    clause = tree[1]
    while clause is not None:
        subject, children = _np_size(clause[1]), clause[2][2:]
        largest, rules, clause = 0, 2 + subject, None  # S, VP and the subject
        for child in children:
            if isinstance(child, str):
                continue
            if child[0] == grammar.S_RULE:
                clause = child
                continue
            size = _np_size(child)
            rules += size
            largest = max(largest, size)
        clauses.append((subject, largest, rules))
    depth, total, widest = 0, 1, 1  # ROOT
    for subject, largest, rules in reversed(clauses):
        depth = 1 + max(subject, 1 + max(largest, depth))  # S over its NP and its VP; the VP over its NPs or clause
        total += rules
        widest = max(widest, subject, largest)
    return {"cp_depth": len(clauses) - 1, "pp_depth": (widest - 1) // 2, "derivation_depth": depth + 1, "rules": total}


def _np_size(node: list[Any]) -> int:
    """Depth of an NP, which is also its number of rules: 1 + 2 per PP of its chain."""
    size = 1
    while node[0] == grammar.DET_PP_RULE:
        node = node[3][2]
        size += 2
    return size
