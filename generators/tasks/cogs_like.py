"""A COGS-style English fragment mapped to neo-Davidsonian logical forms (Kim & Linzen 2020).

Sentences
---------
Tokens are words separated by spaces, cased as in COGS: proper names capitalized, the
first word capitalized (``A``, ``The``), everything else lowercase, and the sentence ends
with the token ``.``. Constructions:

- intransitive (unergative) ``Emma smiled .``; unaccusative ``The cake rolled .``;
- transitive ``Emma saw a cat .``; passive ``A cat was seen .`` / ``A cat was seen by Emma .``;
- ditransitive, double object ``Emma gave the girl a cake .`` and PP dative
  ``Emma gave a cake to the girl .``; passives ``A cake was given to the girl ( by Emma ) .``
  and ``The girl was given a cake ( by Emma ) .``;
- PP modification of a common-noun NP, right-branching: ``the cat on the mat in a box``
  (prepositions in, on, beside; each PP modifies the noun just before it);
- sentential complements ``Emma said that the cat slept .``, nested to any depth.

Agents, recipients and complement-taking subjects are animate (names or animate nouns);
themes are any NP. Unaccusative verbs alternate (``Emma rolled the ball``). An NP is a
name, ``a N`` or ``the N`` with probability 1/3 each.

Logical forms (COGS conventions)
--------------------------------
Tokens separated by spaces. Variables are ``x _ i`` where i is the 0-based position in
the sentence of the word that introduces the entity or event: the noun of a common-noun
NP, the verb of a clause (for passives the participle, not ``was``). Proper names are
constants (``Emma``). Predicates:

- a noun: ``cat ( x _ 1 )``; a definite (``the``) noun is written ``* cat ( x _ 1 )`` and
  moved to the front;
- a verb role: ``see . agent ( x _ 1 , Emma )``, roles agent, theme, recipient, and
  ``say . ccomp ( x _ 1 , x _ 5 )`` (second argument: the complement clause's verb);
- a PP modifier: ``cat . nmod . on ( x _ 1 , x _ 4 )``.

Layout: every definite ``* N ( x _ i )`` in order of i, each followed by `` ; ``, then all
other conjuncts joined by `` AND ``, ordered by (position of the first argument, position
of the second argument's word), a one-place noun predicate coming before the binary
predicates of the same noun. This reproduces COGS, e.g. ``A rose was helped by a dog .`` ->
``rose ( x _ 1 ) AND help . theme ( x _ 3 , x _ 1 ) AND help . agent ( x _ 3 , x _ 6 ) AND
dog ( x _ 6 )`` and ``Emma saw a cat .`` -> ``see . agent ( x _ 1 , Emma ) AND see . theme
( x _ 1 , x _ 3 ) AND cat ( x _ 3 )``.

Sampling
--------
Per sentence: a complement depth c uniform in [min_cp_depth, max_cp_depth] (c clauses
``NP V_cp that`` before the innermost clause); a PP depth d uniform in
[min_pp_depth, max_pp_depth]; the innermost construction from a fixed table (unergative,
unaccusative, transitive 4/24 each; short and long transitive passive, double-object and
PP dative 2/24 each; the four ditransitive passives 1/24 each); when d > 0, one NP slot of
the sentence chosen uniformly carries a chain of d nested PPs (all other NPs carry none).

Derivation (``structure``): ``["ROOT -> S .", S]``, ``["S -> NP VP", NP, VP]``,
``["NP -> Name", "Emma"]``, ``["NP -> Det N", "the", "cat"]``,
``["NP -> Det N PP", "the", "cat", ["PP -> P NP", "on", NP]]`` and one rule per verb
phrase: ``VP -> V_unerg``, ``VP -> V_unacc``, ``VP -> V_trans NP``, ``VP -> was V_trans``,
``VP -> was V_trans by NP``, ``VP -> V_dat NP NP``, ``VP -> V_dat NP to NP``,
``VP -> was V_dat to NP``, ``VP -> was V_dat to NP by NP``, ``VP -> was V_dat NP``,
``VP -> was V_dat NP by NP``, ``VP -> V_cp that S``. Leaves are lexical items: names,
lowercase determiners and nouns, prepositions and verb lemmas (``see``, not ``saw``).

Features: ``cp_depth``, ``pp_depth``, ``derivation_depth`` (tree depth) and ``rules``
(rule applications). The reference checker re-parses the sentence with its own
recursive-descent parser over the lexicon and interprets the derivation.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any, Mapping

import numpy as np

from gengap.generators.batch import Batch
from gengap.generators.derivation import Tree, tree_atoms, tree_compounds
from gengap.generators.gc_pause import paused_gc
from gengap.generators.lexicons import LexiconSpec, WordClass, classes_of, lexical, lexicon_knob
from gengap.generators.params import Params, knob
from gengap.generators.registry import register
from gengap.generators.sequences import UniformBuffer
from gengap.generators.task import Task
from gengap.generators.traces import least_to_most, trace_knob, with_traces
from gengap.generators.tasks._cogs_grammar import (  # noqa: F401  (interpret: the shared LF builder)
    CP_RULE,
    DET_PP_RULE,
    DET_RULE,
    NAME_RULE,
    PP_RULE,
    ROOT_RULE,
    S_RULE,
    Words,
    interpret,
    read_noun_phrase,
)

# -- lexicon ----------------------------------------------------------------------------

NAMES = (
    "Emma", "Liam", "Noah", "Olivia", "Ava", "Mason", "Sophia", "Lucas",
    "Mia", "Ethan", "Isabella", "James", "Amelia", "Oliver", "Harper", "Elijah",
)  # fmt: skip
ANIMATE_NOUNS = (
    "cat", "dog", "girl", "boy", "teacher", "baby", "monkey",
    "hedgehog", "child", "king", "queen", "mouse", "bird", "lion",
)  # fmt: skip
INANIMATE_NOUNS = (
    "cake", "mat", "box", "table", "ball", "book", "cookie", "house",
    "bed", "car", "bottle", "tree", "chair", "boat", "cup", "rose",
)  # fmt: skip
NOUNS = ANIMATE_NOUNS + INANIMATE_NOUNS
PREPOSITIONS = ("in", "on", "beside")
# (lemma, past) of verbs without an object
UNERGATIVE = (
    ("smile", "smiled"), ("sleep", "slept"), ("laugh", "laughed"), ("dance", "danced"),
    ("jog", "jogged"), ("sneeze", "sneezed"), ("cry", "cried"), ("run", "ran"),
)  # fmt: skip
# (lemma, past, participle); unaccusatives are also transitive (causative alternation)
UNACCUSATIVE = (
    ("roll", "rolled", "rolled"), ("break", "broke", "broken"), ("freeze", "froze", "frozen"),
    ("burn", "burned", "burned"), ("shatter", "shattered", "shattered"), ("melt", "melted", "melted"),
)  # fmt: skip
TRANSITIVE = UNACCUSATIVE + (
    ("see", "saw", "seen"), ("help", "helped", "helped"), ("find", "found", "found"),
    ("like", "liked", "liked"), ("eat", "ate", "eaten"), ("hold", "held", "held"),
    ("touch", "touched", "touched"), ("draw", "drew", "drawn"),
)  # fmt: skip
DATIVE = (
    ("give", "gave", "given"), ("send", "sent", "sent"), ("lend", "lent", "lent"),
    ("offer", "offered", "offered"), ("show", "showed", "shown"), ("sell", "sold", "sold"),
)  # fmt: skip
COMPLEMENT = (
    ("say", "said"), ("think", "thought"), ("believe", "believed"),
    ("hope", "hoped"), ("know", "knew"), ("notice", "noticed"),
)  # fmt: skip

MAX_DEPTH = 100


def _word_classes() -> tuple[WordClass, ...]:
    """The fragment's lexical items by class, each permuted by a lexicon: names, animate and
    inanimate nouns, verbs by the verb classes they belong to (forms: lemma, past, participle)."""
    items: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [("name", (name,), ()) for name in NAMES]
    items += [("noun animate", (noun,), ()) for noun in ANIMATE_NOUNS] + [("noun", (noun,), ()) for noun in INANIMATE_NOUNS]
    kinds: dict[str, list[str]] = {}
    forms: dict[str, tuple[str, ...]] = {}
    for kind, verbs in (("unergative", UNERGATIVE), ("unaccusative", UNACCUSATIVE), ("transitive", TRANSITIVE),
                        ("dative", DATIVE), ("cp", COMPLEMENT)):  # fmt: skip
        for verb in verbs:
            kinds.setdefault(verb[0], []).append(kind)
            forms[verb[0]] = verb
    items += [(f"verb {'+'.join(kinds[lemma])}", forms[lemma], ("lemma", "past", "participle")) for lemma in kinds]
    return classes_of(items)


LEXICON = LexiconSpec("cogs_like", _word_classes)

# Innermost constructions: (VP rule, verb class, roles of the subject and the NPs after the verb).
CONSTRUCTIONS = (
    ("VP -> V_unerg", "unerg", ("agent",)),
    ("VP -> V_unacc", "unacc", ("theme",)),
    ("VP -> V_trans NP", "trans", ("agent", "theme")),
    ("VP -> was V_trans", "trans", ("theme",)),
    ("VP -> was V_trans by NP", "trans", ("theme", "agent")),
    ("VP -> V_dat NP NP", "dat", ("agent", "recipient", "theme")),
    ("VP -> V_dat NP to NP", "dat", ("agent", "theme", "recipient")),
    ("VP -> was V_dat to NP", "dat", ("theme", "recipient")),
    ("VP -> was V_dat to NP by NP", "dat", ("theme", "recipient", "agent")),
    ("VP -> was V_dat NP", "dat", ("recipient", "theme")),
    ("VP -> was V_dat NP by NP", "dat", ("recipient", "theme", "agent")),
)
CONSTRUCTION_TABLE = (0,) * 4 + (1,) * 4 + (2,) * 4 + (3, 3, 4, 4, 5, 5, 6, 6, 7, 8, 9, 10)
# fixed words of each VP rule after the verb, by construction: tokens placed before each NP
_BEFORE_NP = {
    "VP -> V_trans NP": ((),),
    "VP -> was V_trans by NP": (("by",),),
    "VP -> V_dat NP NP": ((), ()),
    "VP -> V_dat NP to NP": ((), ("to",)),
    "VP -> was V_dat to NP": (("to",),),
    "VP -> was V_dat to NP by NP": (("to",), ("by",)),
    "VP -> was V_dat NP": ((),),
    "VP -> was V_dat NP by NP": ((), ("by",)),
}
_VERBS = {"unerg": UNERGATIVE, "unacc": UNACCUSATIVE, "trans": TRANSITIVE, "dat": DATIVE}
# pieces of sentences and logical forms, by word index
_THE_NOUN = tuple(f"the {noun}" for noun in NOUNS)
_A_NOUN = tuple(f"a {noun}" for noun in NOUNS)
_PP_TEXT = tuple(tuple(tuple(f"{prep} {det} {noun}" for noun in NOUNS) for det in ("a", "the")) for prep in PREPOSITIONS)
_NOUN_PRED = tuple(f"{noun} ( x _ " for noun in NOUNS)
_DEF_PRED = tuple(f"* {noun} ( x _ " for noun in NOUNS)
_NMOD = tuple(tuple(f"{noun} . nmod . {prep} ( x _ " for prep in PREPOSITIONS) for noun in NOUNS)
_CP_WORDS = tuple(f"{past} that" for _, past in COMPLEMENT)
_CP_AGENT = tuple(f"{lemma} . agent ( x _ " for lemma, _ in COMPLEMENT)
_CCOMP = tuple(f"{lemma} . ccomp ( x _ " for lemma, _ in COMPLEMENT)


@dataclasses.dataclass(frozen=True)
class CogsParams(Params):
    """Ranges of the two recursion depths (nested PPs, nested sentential complements)."""

    min_pp_depth: int = knob(0, lo=0, hi=MAX_DEPTH, doc="fewest nested PPs on the PP-carrying NP")
    max_pp_depth: int = knob(2, lo=0, hi=MAX_DEPTH, doc="most nested PPs on the PP-carrying NP")
    min_cp_depth: int = knob(0, lo=0, hi=MAX_DEPTH, doc="fewest nested sentential complements")
    max_cp_depth: int = knob(2, lo=0, hi=MAX_DEPTH, doc="most nested sentential complements")
    trace: str = trace_knob("least_to_most")
    lexicon: int = lexicon_knob()

    def check_consistency(self) -> None:
        for part in ("pp", "cp"):
            lo, hi = getattr(self, f"min_{part}_depth"), getattr(self, f"max_{part}_depth")
            self.require(lo <= hi, f"parameter min_{part}_depth={lo} exceeds max_{part}_depth={hi}")


def _derivation_depth(c: int, d: int, carrier: int, n_roles: int) -> int:
    """Depth of the derivation of c complement clauses around an innermost clause with n_roles
    NP slots, slot carrier (-1: none) carrying d PPs (an NP of depth 1 + 2 d)."""
    carried = 1 + 2 * d
    subject = carried if carrier == c else 1
    vp = max((carried if carrier == slot else 1 for slot in range(c + 1, c + n_roles)), default=0)
    depth = 1 + max(subject, 1 + vp)
    if 0 <= carrier < c:  # complement clauses below the carrier add 2 each, the carrier's its NP
        depth = 1 + max(carried, 1 + depth + 2 * (c - 1 - carrier)) + 2 * carrier
    else:
        depth += 2 * c
    return depth + 1


# input length is about SIZE_BASE + SIZE_PER_DEPTH * depth when both depths equal depth
SIZE_BASE = 5.75
SIZE_PER_DEPTH = 6.67


@register
@lexical(LEXICON)
class CogsLike(Task[CogsParams]):
    """English sentence of a COGS-like fragment -> its COGS-style logical form."""

    name = "cogs_like"
    family = "compositional"
    description = "COGS-style English sentence (datives, passives, nested PPs and CPs) -> logical form"
    params_type = CogsParams
    size_knob = (
        "approximate input length in tokens: both recursion depths (nested PPs, nested "
        "complements) range over round((size - 5.75) / 6.67), clipped to 0..100"
    )
    level_feature = "rules"
    test_caps = {"max_pp_depth": 6, "min_pp_depth": 6, "max_cp_depth": 6, "min_cp_depth": 6}
    trace_formats = {
        "least_to_most": "the sub-phrases from the smallest up (every noun phrase with a PP, then every embedded "
        "clause, innermost first, as written in the sentence), each as '<words> = <its conjuncts> |': the "
        "conjuncts of the logical form whose variables all stand for words of the sub-phrase, in the "
        "logical form's order",
    }

    def levels(self) -> dict[int, CogsParams]:
        return {
            k: CogsParams(
                min_pp_depth=(k - 1) // 2, max_pp_depth=k - 1, min_cp_depth=(k - 1) // 2, max_cp_depth=k - 1
            )
            for k in range(1, 11)
        }

    def with_size(self, lo: int, hi: int) -> CogsParams:
        def depth(size: int) -> int:
            return min(MAX_DEPTH, max(0, round((size - SIZE_BASE) / SIZE_PER_DEPTH)))

        a, b = depth(lo), depth(hi)
        return CogsParams(min_pp_depth=a, max_pp_depth=b, min_cp_depth=a, max_cp_depth=b)

    @paused_gc()  # hundreds of tree lists per sentence (see gengap.generators.gc_pause)
    def generate(self, rng: np.random.Generator, n: int, params: CogsParams) -> Batch:
        stream = UniformBuffer(rng)
        n_names, n_animate, n_nouns = len(NAMES), len(ANIMATE_NOUNS), len(NOUNS)
        pp_lo, pp_span = params.min_pp_depth, params.max_pp_depth - params.min_pp_depth + 1
        cp_lo, cp_span = params.min_cp_depth, params.max_cp_depth - params.min_cp_depth + 1
        # one sentence: its uniforms u (read at j), its text pieces and token count, its
        # definites and its other conjuncts, written in their final (sorted) order
        u: list[float] = []
        j = pos = 0
        toks: list[str] = []
        defs: list[str] = []
        conj: list[str] = []

        def noun_phrase(animate: bool, pp: int, out: list[str]) -> tuple[str, int, Tree]:
            """Append an NP (2 + 3 pp uniforms); its conjuncts go to out. Returns its LF argument,
            head position and tree."""
            nonlocal j, pos
            a, b = u[j], u[j + 1]
            j += 2
            if pp == 0 and a < 1 / 3:
                name = NAMES[int(b * n_names)]
                toks.append(name)
                pos += 1
                return name, pos - 1, [NAME_RULE, name]
            noun = int(b * (n_animate if animate else n_nouns))
            at = head = pos + 1
            if a < 2 / 3:
                toks.append(_THE_NOUN[noun])
                defs.append(f"{_DEF_PRED[noun]}{head} )")
            else:
                toks.append(_A_NOUN[noun])
                out.append(f"{_NOUN_PRED[noun]}{head} )")
            node: list[Any] = [DET_RULE, "the" if a < 2 / 3 else "a", NOUNS[noun]]
            top = node
            for _ in range(pp):
                prep, the2, noun2 = int(u[j] * 3), u[j + 1] < 0.5, int(u[j + 2] * n_nouns)
                j += 3
                toks.append(_PP_TEXT[prep][the2][noun2])
                out.append(f"{_NMOD[noun][prep]}{head} , x _ {head + 3} )")
                head += 3
                if the2:
                    defs.append(f"{_DEF_PRED[noun2]}{head} )")
                else:
                    out.append(f"{_NOUN_PRED[noun2]}{head} )")
                inner = [DET_RULE, "the" if the2 else "a", NOUNS[noun2]]
                node[0] = DET_PP_RULE
                node.append([PP_RULE, PREPOSITIONS[prep], inner])
                node, noun = inner, noun2
            pos = head + 1
            return f"x _ {at}", at, top

        inputs, targets, trees = [], [], []
        cp_depths, pp_depths, tree_depths, rule_counts = [], [], [], []
        for _ in range(n):
            head = stream.take(3)
            c = cp_lo + int(head[0] * cp_span)
            d = pp_lo + int(head[1] * pp_span)
            rule, verb_class, roles = CONSTRUCTIONS[CONSTRUCTION_TABLE[int(head[2] * 24)]]
            slots = c + len(roles)
            # the rest: the carrier slot when d > 0, then 3 per clause prefix (NP, verb), 2 per
            # NP of the innermost clause, 1 for its verb, 3 per PP
            u = stream.take(3 * c + 2 * len(roles) + 1 + (3 * d + 1 if d else 0))
            carrier = int(u[0] * slots) if d else -1
            j = 1 if d else 0
            pos = 0
            toks.clear()
            defs.clear()
            conj.clear()
            parent: list[Any] = [S_RULE]
            root: list[Any] = [ROOT_RULE, parent]
            pending = ""  # ccomp conjunct of the previous clause's verb, up to its complement's event
            for k in range(c):
                if k == carrier:
                    mark = len(conj)
                    arg, at, subj = noun_phrase(True, d, conj)
                    if pending:
                        conj.insert(mark, f"{pending}{pos} )")
                elif u[j] < 1 / 3:  # a name (noun_phrase without PPs, inlined: most clauses)
                    arg = NAMES[int(u[j + 1] * n_names)]
                    toks.append(arg)
                    pos += 1
                    if pending:
                        conj.append(f"{pending}{pos} )")
                    subj = [NAME_RULE, arg]
                    j += 2
                else:
                    noun = int(u[j + 1] * n_animate)
                    pos += 2
                    if pending:
                        conj.append(f"{pending}{pos} )")
                    arg = f"x _ {pos - 1}"
                    if u[j] < 2 / 3:
                        toks.append(_THE_NOUN[noun])
                        defs.append(f"{_DEF_PRED[noun]}{pos - 1} )")
                        subj = [DET_RULE, "the", NOUNS[noun]]
                    else:
                        toks.append(_A_NOUN[noun])
                        conj.append(f"{_NOUN_PRED[noun]}{pos - 1} )")
                        subj = [DET_RULE, "a", NOUNS[noun]]
                    j += 2
                v = pos
                lemma = int(u[j] * 6)
                j += 1
                toks.append(_CP_WORDS[lemma])
                pos += 2
                conj.append(f"{_CP_AGENT[lemma]}{v} , {arg} )")
                pending = f"{_CCOMP[lemma]}{v} , x _ "
                embedded: list[Any] = [S_RULE]
                parent.append(subj)
                parent.append([CP_RULE, COMPLEMENT[lemma][0], embedded])
                parent = embedded
            # innermost clause: the verb's role conjuncts precede its objects' conjuncts
            mark = len(conj)
            arg, at, subj = noun_phrase(roles[0] != "theme", d if carrier == c else 0, conj)
            passive = rule.startswith("VP -> was")
            if passive:
                toks.append("was")
                pos += 1
            v = pos
            if pending:
                conj.insert(mark, f"{pending}{v} )")
            table = _VERBS[verb_class]
            entry = table[int(u[j] * len(table))]
            j += 1
            verb = entry[0]
            toks.append(entry[2] if passive else entry[1])
            pos += 1
            conj.append(f"{verb} . {roles[0]} ( x _ {v} , {arg} )")
            objects: list[str] = []
            vp: list[Any] = [rule, verb]
            for slot, before in enumerate(_BEFORE_NP.get(rule, ()), start=c + 1):
                toks.extend(before)
                pos += len(before)
                role = roles[slot - c]
                arg, at, sub = noun_phrase(role != "theme", d if carrier == slot else 0, objects)
                conj.append(f"{verb} . {role} ( x _ {v} , {arg} )")
                vp.append(sub)
            conj += objects
            parent.append(subj)
            parent.append(vp)
            tree_depths.append(_derivation_depth(c, d, carrier, len(roles)))
            # ROOT, S and VP per clause, one NP per slot, an NP and a PP per PP level
            rule_counts.append(1 + 2 * (c + 1) + slots + 2 * d)
            first = toks[0]
            if first[:4] == "the ":
                toks[0] = "The" + first[3:]
            elif first[:2] == "a ":
                toks[0] = "A" + first[1:]
            toks.append(".")
            inputs.append(" ".join(toks))
            body = " AND ".join(conj)
            if defs:
                defs.append(body)
                targets.append(" ; ".join(defs))
            else:
                targets.append(body)
            trees.append(root)
            cp_depths.append(c)
            pp_depths.append(d)
        features = {
            "cp_depth": cp_depths,
            "pp_depth": pp_depths,
            "derivation_depth": tree_depths,
            "rules": rule_counts,
        }
        return with_traces(self, Batch.from_lists(inputs, targets, features, structure=trees), params.trace)

    def solve(self, example: Mapping[str, Any]) -> str:
        return interpret(parse_sentence(example["input"]))

    def trace_tokens(self, example: Mapping[str, Any], fmt: str) -> list[str]:
        """least_to_most: each sub-phrase (:func:`subphrases`) and its part of the logical form."""
        tree = parse_sentence(example["input"])
        words = example["input"].split()
        definites, conjuncts = split_logical_form(interpret(tree))
        return least_to_most((words[a:b], conjuncts_within(definites, conjuncts, a, b)) for a, b in subphrases(tree))

    def derive(self, example: Mapping[str, Any]) -> Tree:
        return parse_sentence(example["input"])

    def atoms(self, example: Mapping[str, Any]) -> Counter[str]:
        return tree_atoms(self.structure_of(example))

    def compounds(self, example: Mapping[str, Any], abstract_lexical: bool = False) -> Counter[str]:
        return tree_compounds(self.structure_of(example), abstract_lexical)

    def input_space_size(self, params: CogsParams) -> int:
        """Distinct sentences (each has one derivation): counted per depth and construction."""
        animate = len(NAMES) + 2 * len(ANIMATE_NOUNS)  # animate NPs without PPs
        anything = len(NAMES) + 2 * len(NOUNS)
        pp_step = len(PREPOSITIONS) * 2 * len(NOUNS)
        verbs = {"unerg": len(UNERGATIVE), "unacc": len(UNACCUSATIVE), "trans": len(TRANSITIVE), "dat": len(DATIVE)}
        prefix = len(COMPLEMENT) * animate  # one "NP V_cp that" without PPs
        total = 0
        for c in range(params.min_cp_depth, params.max_cp_depth + 1):
            for d in range(params.min_pp_depth, params.max_pp_depth + 1):
                for _, verb_class, roles in CONSTRUCTIONS:
                    plain = [animate if role != "theme" else anything for role in roles]
                    product = 1
                    for count in plain:
                        product *= count
                    if d == 0:
                        total += verbs[verb_class] * product * prefix**c
                        continue
                    carried = 0  # the PP chain on an NP of the innermost clause
                    for role, count in zip(roles, plain):
                        chain = 2 * (len(ANIMATE_NOUNS) if role != "theme" else len(NOUNS)) * pp_step**d
                        carried += product // count * chain
                    total += verbs[verb_class] * carried * prefix**c
                    if c:  # the chain on the subject of one of the c complement clauses
                        chain = len(COMPLEMENT) * 2 * len(ANIMATE_NOUNS) * pp_step**d
                        total += verbs[verb_class] * product * c * chain * prefix ** (c - 1)
        return total


# -- least-to-most decomposition (Zhou et al. 2022) ---------------------------------------------


def subphrases(tree: Tree) -> list[tuple[int, int]]:
    """The word spans [start, end) of a derivation's sub-phrases, least to most: every noun
    phrase that carries a PP and every embedded clause, in post-order (inner before outer,
    left to right); the sentence itself is not one. Positions count the sentence's words as
    the logical form's variables do."""
    spans: list[tuple[int, int]] = []

    def walk(node: Any, start: int, embedded: bool = False) -> int:
        rule = node[0]
        if rule == NAME_RULE:
            return start + 1
        if rule in (DET_RULE, DET_PP_RULE):
            end = start + 2 if rule == DET_RULE else walk(node[3], start + 2)
            if rule == DET_PP_RULE:
                spans.append((start, end))
            return end
        if rule == PP_RULE:
            return walk(node[2], start + 1)
        if rule == S_RULE:
            end = walk(node[2], walk(node[1], start))
            if embedded:
                spans.append((start, end))
            return end
        if rule == ROOT_RULE:
            return walk(node[1], start) + 1  # the final "."
        children = iter(node[2:])  # a verb phrase: one word per symbol but its NP and S
        end = start
        for symbol in rule.split(" -> ")[1].split():
            end = walk(next(children), end, embedded=True) if symbol in ("NP", "S") else end + 1
        return end

    walk(tree, 0)
    return spans


def split_logical_form(form: str) -> tuple[list[list[str]], list[list[str]]]:
    """The definites (each ``* N ( x _ i ) ;``) and the other conjuncts of a logical form, as token lists."""
    tokens = form.split()
    definites: list[list[str]] = []
    while tokens and tokens[0] == "*":
        cut = tokens.index(";") + 1
        definites.append(tokens[:cut])
        tokens = tokens[cut:]
    conjuncts: list[list[str]] = [[]]
    for token in tokens:
        if token == "AND":
            conjuncts.append([])
        else:
            conjuncts[-1].append(token)
    return definites, [c for c in conjuncts if c]


def _variables(tokens: list[str]) -> list[int]:
    return [int(tokens[i + 2]) for i in range(len(tokens) - 2) if tokens[i] == "x" and tokens[i + 1] == "_"]


def conjuncts_within(definites: list[list[str]], conjuncts: list[list[str]], start: int, end: int) -> list[str]:
    """The part of a logical form whose variables all stand for words in [start, end): its
    definites, then its other conjuncts joined by AND, in the form's order."""
    inside = lambda tokens: bool(_variables(tokens)) and all(start <= v < end for v in _variables(tokens))  # noqa: E731
    kept = [c for c in conjuncts if inside(c)]
    out = [t for d in definites if inside(d) for t in d]
    for i, conjunct in enumerate(kept):
        out += (["AND"] if i else []) + conjunct
    return out


# -- the reference parser (independent of generate); interpret is _cogs_grammar's ----------

_NAME_SET = frozenset(NAMES)
_NOUN_OF = {noun: noun for noun in NOUNS}  # this fragment writes nouns as their lemmas
_PREP_SET = frozenset(PREPOSITIONS)
_PAST: dict[str, dict[str, str]] = {}  # past form -> {verb class: lemma}
for _cls, _table in (*_VERBS.items(), ("cp", COMPLEMENT)):
    for _entry in _table:
        _PAST.setdefault(_entry[1], {})[_cls] = _entry[0]
_PARTICIPLE = {entry[2]: ("trans", entry[0]) for entry in TRANSITIVE}
_PARTICIPLE.update({entry[2]: ("dat", entry[0]) for entry in DATIVE})


def _parse_np(words: Words) -> list[Any]:
    return read_noun_phrase(words, _NAME_SET, _NOUN_OF, _PREP_SET)


def parse_sentence(text: str) -> Tree:
    """The derivation tree of a sentence of the fragment; ValueError when it is not one."""
    words = Words(text)
    clause: list[Any] = [S_RULE]
    root = [ROOT_RULE, clause]
    while True:
        clause.append(_parse_np(words))
        word = words.take()
        if word == "was":
            participle = words.take()
            if participle not in _PARTICIPLE:
                raise ValueError(f"unknown participle {participle!r}")
            verb_class, lemma = _PARTICIPLE[participle]
            args: list[Any] = []
            if verb_class == "trans":
                rule = "VP -> was V_trans"
            elif words.peek() == "to":
                words.take()
                args.append(_parse_np(words))
                rule = "VP -> was V_dat to NP"
            else:
                args.append(_parse_np(words))
                rule = "VP -> was V_dat NP"
            if words.peek() == "by":
                words.take()
                args.append(_parse_np(words))
                rule += " by NP"
            clause.append([rule, lemma, *args])
            break
        readings = _PAST.get(word)
        if readings is None:
            raise ValueError(f"unknown verb {word!r}")
        if "cp" in readings and words.peek() == "that":
            words.take()
            embedded: list[Any] = [S_RULE]
            clause.append([CP_RULE, readings["cp"], embedded])
            clause = embedded
            continue
        if words.done():
            if "unerg" in readings:
                clause.append(["VP -> V_unerg", readings["unerg"]])
            elif "unacc" in readings:
                clause.append(["VP -> V_unacc", readings["unacc"]])
            else:
                raise ValueError(f"verb {word!r} needs an object")
        elif "trans" in readings:
            clause.append(["VP -> V_trans NP", readings["trans"], _parse_np(words)])
        elif "dat" in readings:
            first = _parse_np(words)
            if words.peek() == "to":
                words.take()
                clause.append(["VP -> V_dat NP to NP", readings["dat"], first, _parse_np(words)])
            else:
                clause.append(["VP -> V_dat NP NP", readings["dat"], first, _parse_np(words)])
        else:
            raise ValueError(f"verb {word!r} takes no object")
        break
    if not words.done():
        raise ValueError(f"unexpected word {words.peek()!r} after a complete sentence")
    return root
