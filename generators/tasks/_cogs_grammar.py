"""COGS's grammar read backwards: the independent checker of the ``cogs`` task.

:func:`parse` reads a COGS sentence (or a one-word primitive) into its derivation tree with
a recursive-descent parser over the lexicon (``_cogs_lexicon``); :func:`interpret` rebuilds
the logical form from the tree; :func:`category` names the generalization category of a
tree (``""`` in distribution). None of this is used to generate: ``cogs.py`` builds its
sentences and logical forms on its own, and tests compare the two.

Derivation trees (nested lists, see gengap.generators.derivation):

- ``["ROOT -> S .", S]`` for a sentence; a primitive is ``["ROOT -> N", noun]``,
  ``["ROOT -> Name", name]``, ``["ROOT -> V_trans", lemma]``, ``["ROOT -> V_unacc", lemma]``
  or ``["ROOT -> V_unerg", lemma]``.
- ``["S -> NP VP", NP, VP]``; ``["NP -> Name", name]``, ``["NP -> Det N", det, noun]``,
  ``["NP -> Det N PP", det, noun, ["PP -> P NP", prep, NP]]``.
- VP rules (children: the verb lemma, then the NPs or the clause in surface order):
  ``VP -> V_unerg``, ``VP -> V_unacc``, ``VP -> V_trans`` (object omitted),
  ``VP -> V_trans NP``, ``VP -> was V_trans``, ``VP -> was V_trans by NP``,
  ``VP -> V_dat NP NP``, ``VP -> V_dat NP to NP``, ``VP -> was V_dat to NP``,
  ``VP -> was V_dat to NP by NP``, ``VP -> was V_dat NP``, ``VP -> was V_dat NP by NP``,
  ``VP -> V_cp that S`` and ``VP -> V_xcomp to V_inf`` (children: the two lemmas).

These are the rule names of ``cogs_like`` (a fragment of this grammar) plus the object-omitted
transitive, the infinitival complement and the primitives; ``cogs_like`` reads its sentences
with :class:`Words` and interprets its trees with :func:`interpret` from here.
"""

from __future__ import annotations

from typing import Any, Collection, Mapping

from gengap.generators.derivation import Tree
from gengap.generators.tasks import _cogs_lexicon as lex

ROOT_RULE = "ROOT -> S ."
S_RULE = "S -> NP VP"
NAME_RULE = "NP -> Name"
DET_RULE = "NP -> Det N"
DET_PP_RULE = "NP -> Det N PP"
PP_RULE = "PP -> P NP"
CP_RULE = "VP -> V_cp that S"
XCOMP_RULE = "VP -> V_xcomp to V_inf"
PRIMITIVE_RULES = ("ROOT -> N", "ROOT -> Name", "ROOT -> V_trans", "ROOT -> V_unacc", "ROOT -> V_unerg")
PREPOSITIONS = ("in", "on", "beside")
DETERMINERS = ("a", "the")

# roles of the subject and of the NPs of each VP rule, in surface order
ROLES: dict[str, tuple[str, ...]] = {
    "VP -> V_unerg": ("agent",),
    "VP -> V_unacc": ("theme",),
    "VP -> V_trans": ("agent",),
    "VP -> V_trans NP": ("agent", "theme"),
    "VP -> was V_trans": ("theme",),
    "VP -> was V_trans by NP": ("theme", "agent"),
    "VP -> V_dat NP NP": ("agent", "recipient", "theme"),
    "VP -> V_dat NP to NP": ("agent", "theme", "recipient"),
    "VP -> was V_dat to NP": ("theme", "recipient"),
    "VP -> was V_dat to NP by NP": ("theme", "recipient", "agent"),
    "VP -> was V_dat NP": ("recipient", "theme"),
    "VP -> was V_dat NP by NP": ("recipient", "theme", "agent"),
    CP_RULE: ("agent",),
    XCOMP_RULE: ("agent",),
}

_NAMES = frozenset(lex.NAMES)
_NOUN_OF = {lex.SURFACE.get(noun, noun): noun for noun in lex.NOUNS}  # sentence form -> lemma
_UNACC = frozenset(lex.UNACCUSATIVE)
_TRANS = frozenset(lex.TRANSITIVE)
_OMISSIBLE = frozenset(lex.OBJECT_OMISSIBLE)
_UNERG = frozenset(lex.UNERGATIVE)
_DATIVE = frozenset(lex.DATIVE)
_CP = frozenset(lex.CP_TAKING)
_XCOMP = frozenset(lex.XCOMP_TAKING)
_INF = frozenset(lex.INFINITIVAL)
_PAST: dict[str, list[str]] = {}
_PARTICIPLE: dict[str, list[str]] = {}
for _lemma, (_past, _participle) in lex.VERB_FORMS.items():
    _PAST.setdefault(_past, []).append(_lemma)
    if _lemma in _TRANS or _lemma in _DATIVE:
        _PARTICIPLE.setdefault(_participle, []).append(_lemma)


def _one(lemmas: list[str], allowed: frozenset[str]) -> str | None:
    found = [lemma for lemma in lemmas if lemma in allowed]
    return found[0] if len(found) == 1 else None


class Words:
    """The words of a sentence (sentence-initial A/The lowercased, final '.' removed), a cursor."""

    def __init__(self, text: str) -> None:
        tokens = text.split()
        if len(tokens) < 3 or tokens[-1] != ".":
            raise ValueError("a sentence has at least two words and ends with '.'")
        words = tokens[:-1]
        if words[0] in DETERMINERS:
            raise ValueError("the first word is capitalized")
        if words[0] in ("A", "The"):
            words[0] = words[0].lower()
        self.words = words
        self.i = 0

    def peek(self) -> str | None:
        return self.words[self.i] if self.i < len(self.words) else None

    def take(self) -> str:
        if self.i >= len(self.words):
            raise ValueError("the sentence ends too early")
        self.i += 1
        return self.words[self.i - 1]

    def done(self) -> bool:
        return self.i == len(self.words)


def read_noun_phrase(
    words: Words, names: Collection[str], noun_of: Mapping[str, str], prepositions: Collection[str]
) -> list[Any]:
    """NP -> name | det noun (prep det noun)*, the PPs nested to the right; `noun_of` maps a
    sentence's noun to its lemma (the vocabulary of the grammar reading it)."""
    if words.peek() in names:
        return [NAME_RULE, words.take()]

    def det_noun() -> list[Any]:
        det, word = words.take(), words.take()
        noun = noun_of.get(word)
        if det not in DETERMINERS or noun is None:
            raise ValueError(f"expected a determiner and a noun, got {det!r} {word!r}")
        return [DET_RULE, det, noun]

    top = node = det_noun()
    while words.peek() in prepositions:
        prep = words.take()
        inner = det_noun()
        node[0] = DET_PP_RULE
        node.append([PP_RULE, prep, inner])
        node = inner
    return top


def _np(words: Words) -> list[Any]:
    return read_noun_phrase(words, _NAMES, _NOUN_OF, PREPOSITIONS)


def _passive(words: Words) -> list[Any]:
    participle = words.take()
    lemmas = _PARTICIPLE.get(participle, [])
    dative = _one(lemmas, _DATIVE)
    if dative is not None:
        if words.peek() == "to":
            words.take()
            node = ["VP -> was V_dat to NP", dative, _np(words)]
        else:
            node = ["VP -> was V_dat NP", dative, _np(words)]
    else:
        lemma = _one(lemmas, _TRANS)
        if lemma is None:
            raise ValueError(f"unknown participle {participle!r}")
        node = ["VP -> was V_trans", lemma]
    if words.peek() == "by":
        words.take()
        node[0] += " by NP"
        node.append(_np(words))
    return node


def _active(words: Words, past: str) -> tuple[list[Any], list[Any] | None]:
    """The VP of an active clause and the embedded clause it opens (None when it opens none)."""
    lemmas = _PAST.get(past)
    if lemmas is None:
        raise ValueError(f"unknown verb {past!r}")
    nxt = words.peek()
    if nxt == "that" and _one(lemmas, _CP):
        words.take()
        embedded: list[Any] = [S_RULE]
        return [CP_RULE, _one(lemmas, _CP), embedded], embedded
    if nxt == "to" and _one(lemmas, _XCOMP):
        words.take()
        infinitive = words.take()
        if infinitive not in _INF:
            raise ValueError(f"{infinitive!r} is not an infinitival verb")
        return [XCOMP_RULE, _one(lemmas, _XCOMP), infinitive], None
    if nxt is None:
        for rule, allowed in (("VP -> V_unacc", _UNACC), ("VP -> V_unerg", _UNERG), ("VP -> V_trans", _OMISSIBLE)):
            lemma = _one(lemmas, allowed)
            if lemma is not None:
                return [rule, lemma], None
        raise ValueError(f"verb {past!r} needs an object")
    dative = _one(lemmas, _DATIVE)
    if dative is not None:
        first = _np(words)
        if words.peek() == "to":
            words.take()
            return ["VP -> V_dat NP to NP", dative, first, _np(words)], None
        return ["VP -> V_dat NP NP", dative, first, _np(words)], None
    lemma = _one(lemmas, _TRANS)
    if lemma is None:
        raise ValueError(f"verb {past!r} takes no object")
    return ["VP -> V_trans NP", lemma, _np(words)], None


def _primitive(word: str) -> Tree:
    if word in _NAMES:
        return ["ROOT -> Name", word]
    if word in _NOUN_OF:
        return ["ROOT -> N", _NOUN_OF[word]]
    for rule, allowed in (("ROOT -> V_unacc", _UNACC), ("ROOT -> V_trans", _TRANS), ("ROOT -> V_unerg", _UNERG)):
        if word in allowed:
            return [rule, word]
    raise ValueError(f"unknown primitive {word!r}")


def parse(text: str) -> Tree:
    """The derivation tree of a COGS sentence or primitive; ValueError when it is not one."""
    tokens = text.split()
    if len(tokens) == 1:
        return _primitive(tokens[0])
    words = Words(text)
    clause: list[Any] = [S_RULE]
    root = [ROOT_RULE, clause]
    while clause is not None:
        clause.append(_np(words))
        verb = words.take()
        if verb == "was":
            clause.append(_passive(words))
            break
        vp, embedded = _active(words, verb)
        clause.append(vp)
        clause = embedded  # type: ignore[assignment]
    if words.peek() is not None:
        raise ValueError(f"unexpected word {words.peek()!r} after a complete sentence")
    return root


# -- the logical form ----------------------------------------------------------------------

PRIMITIVE_LF = {
    "ROOT -> N": "LAMBDA a . {w} ( a )",
    "ROOT -> Name": "{w}",
    "ROOT -> V_unacc": "LAMBDA a . LAMBDA e . {w} . theme ( e , a )",
    "ROOT -> V_unerg": "LAMBDA a . LAMBDA e . {w} . agent ( e , a )",
    "ROOT -> V_trans": "LAMBDA a . LAMBDA b . LAMBDA e . {w} . agent ( e , b ) AND {w} . theme ( e , a )",
}


def interpret(tree: Tree) -> str:
    """The COGS logical form of a derivation tree, token positions recounted from the tree.

    Definites ``* N ( x _ i ) ;`` first in order of i, then every other conjunct joined by
    ``AND``, ordered by (position of the first argument, position of the second), a noun's
    one-place predicate before the nmod predicates of the same noun.
    """
    if tree[0] in PRIMITIVE_LF:
        return PRIMITIVE_LF[tree[0]].format(w=tree[1])
    if tree[0] != ROOT_RULE:
        raise ValueError("not a COGS derivation")
    definites: list[tuple[int, str]] = []
    conjuncts: list[tuple[tuple[int, int], str]] = []
    position = 0

    def noun(det: str, word: str, at: int) -> None:
        if det == "the":
            definites.append((at, f"* {word} ( x _ {at} )"))
        else:
            conjuncts.append(((at, -1), f"{word} ( x _ {at} )"))

    def noun_phrase(node: list[Any]) -> tuple[str, int]:
        nonlocal position
        if node[0] == NAME_RULE:
            position += 1
            return node[1], position - 1
        head = position + 1
        noun(node[1], node[2], head)
        position += 2
        current, at = node, head
        while current[0] == DET_PP_RULE:
            prep, inner = current[3][1], current[3][2]
            inner_at = position + 2
            noun(inner[1], inner[2], inner_at)
            conjuncts.append(((at, inner_at), f"{current[2]} . nmod . {prep} ( x _ {at} , x _ {inner_at} )"))
            position += 3
            current, at = inner, inner_at
        return f"x _ {head}", head

    def role(lemma: str, name: str, event: int, argument: tuple[str, int]) -> None:
        conjuncts.append(((event, argument[1]), f"{lemma} . {name} ( x _ {event} , {argument[0]} )"))

    clause = tree[1]
    complement: tuple[str, int] | None = None
    while clause is not None:
        subject = noun_phrase(clause[1])
        vp = clause[2]
        rule, lemma = vp[0], vp[1]
        children = iter(vp[2:])
        arguments = [subject]
        event = -1
        embedded = None
        for symbol in rule.split(" -> ")[1].split():
            if symbol == "V_inf":
                role(vp[2], "agent", position, subject)
                conjuncts.append(((event, position), f"{lemma} . xcomp ( x _ {event} , x _ {position} )"))
                position += 1
            elif symbol.startswith("V_"):
                event = position
                position += 1
            elif symbol == "NP":
                arguments.append(noun_phrase(next(children)))
            elif symbol == "S":
                embedded = next(children)
            else:  # was, to, by, that
                position += 1
        if complement is not None:
            conjuncts.append(((complement[1], event), f"{complement[0]} . ccomp ( x _ {complement[1]} , x _ {event} )"))
        for name, argument in zip(ROLES[rule], arguments):
            role(lemma, name, event, argument)
        complement = (lemma, event) if embedded is not None else None
        clause = embedded
    definites.sort()
    conjuncts.sort(key=lambda item: item[0])
    return "".join(f"{text} ; " for _, text in definites) + " AND ".join(text for _, text in conjuncts)


# -- generalization categories ------------------------------------------------------------------

STRUCTURAL = ("obj_pp_to_subj_pp", "cp_recursion", "pp_recursion")
# lexical category -> (held-out word, the context it is tested in)
LEXICAL: dict[str, tuple[str, str]] = {
    "subj_to_obj_common": ("hedgehog", "obj"),
    "subj_to_obj_proper": ("Lina", "obj"),
    "obj_to_subj_common": ("cockroach", "subj"),
    "obj_to_subj_proper": ("Charlie", "subj"),
    "prim_to_subj_common": ("shark", "subj"),
    "prim_to_subj_proper": ("Paula", "subj"),
    "prim_to_obj_common": ("shark", "obj"),
    "prim_to_obj_proper": ("Paula", "obj"),
    "prim_to_inf_arg": ("crawl", "inf"),
    "active_to_passive": ("bless", "passive"),
    "passive_to_active": ("squeeze", "VP -> V_trans NP"),
    "obj_omitted_transitive_to_transitive": ("bake", "VP -> V_trans NP"),
    "unacc_to_transitive": ("shatter", "VP -> V_trans NP"),
    "do_dative_to_pp_dative": ("teleport", "VP -> V_dat NP to NP"),
    "pp_dative_to_do_dative": ("ship", "VP -> V_dat NP NP"),
    "only_seen_as_transitive_subj_as_unacc_subj": ("cobra", "subj:VP -> V_unacc"),
    "only_seen_as_unacc_subj_as_unerg_subj": ("hippo", "subj:VP -> V_unerg"),
    "only_seen_as_unacc_subj_as_obj_omitted_transitive_subj": ("hippo", "subj:VP -> V_trans"),
}
CATEGORIES = STRUCTURAL + tuple(LEXICAL)
HELD_OUT = frozenset(word for word, _ in LEXICAL.values())
# COGS's exposure examples (train.tsv): the one training sentence with each held-out word
EXPOSURE: dict[str, str] = {
    "subj_to_obj_common": "A hedgehog ate the cake on the bed .",
    "subj_to_obj_proper": "Lina gave the cake beside a stage to Olivia .",
    "obj_to_subj_common": "Henry liked a cockroach in a box .",
    "obj_to_subj_proper": "The creature grew Charlie .",
    "prim_to_subj_common": "shark",
    "prim_to_subj_proper": "Paula",
    "prim_to_obj_common": "shark",
    "prim_to_obj_proper": "Paula",
    "prim_to_inf_arg": "crawl",
    "active_to_passive": "A crocodile blessed William .",
    "passive_to_active": "The book was squeezed .",
    "obj_omitted_transitive_to_transitive": "The goose baked .",
    "unacc_to_transitive": "Julian shattered .",
    "do_dative_to_pp_dative": "The girl teleported Liam the cookie .",
    "pp_dative_to_do_dative": "The girl shipped a cookie in a container to Scarlett .",
    "only_seen_as_transitive_subj_as_unacc_subj": "A cobra helped a cake in the house .",
    "only_seen_as_unacc_subj_as_unerg_subj": "A landlord hoped that the hippo decomposed .",
    "only_seen_as_unacc_subj_as_obj_omitted_transitive_subj": "A landlord hoped that the hippo decomposed .",
}
# the training distribution's bounds: COGS's train has at most 2 nested CPs and 2 nested PPs
TRAIN_MAX_DEPTH = 2


def _np_word(node: list[Any]) -> str:
    return node[1] if node[0] == NAME_RULE else node[2]


def shape(tree: Tree) -> dict[str, Any]:
    """What the categories read off a derivation: CP depth, deepest PP chain, whether a subject
    carries a PP, and the held-out words with their contexts (``subj:<VP rule>``, ``obj``,
    ``pp``, ``prim``, ``inf``, ``passive`` or the VP rule of a held-out verb)."""
    held: list[tuple[str, str]] = []
    if tree[0] != ROOT_RULE:
        if tree[1] in HELD_OUT:
            held.append((tree[1], "prim"))
        return {"cp": 0, "pp": 0, "subject_pp": False, "held": held}
    cp = pp = 0
    subject_pp = False

    def chain(node: list[Any], context: str) -> int:
        if _np_word(node) in HELD_OUT:
            held.append((_np_word(node), context))
        depth = 0
        while node[0] == DET_PP_RULE:
            node = node[3][2]
            depth += 1
            if node[2] in HELD_OUT:
                held.append((node[2], "pp"))
        return depth

    clause = tree[1]
    while clause is not None:
        vp = clause[2]
        rule = vp[0]
        depth = chain(clause[1], f"subj:{rule}")
        subject_pp = subject_pp or depth > 0
        pp = max(pp, depth)
        if vp[1] in HELD_OUT:
            held.append((vp[1], "passive" if rule.startswith("VP -> was V_trans") else rule))
        if rule == XCOMP_RULE and vp[2] in HELD_OUT:
            held.append((vp[2], "inf"))
        clause = None
        for child in vp[2:]:
            if isinstance(child, list) and child[0] == S_RULE:
                clause = child
                cp += 1
            elif isinstance(child, list):
                pp = max(pp, chain(child, "obj"))
    return {"cp": cp, "pp": pp, "subject_pp": subject_pp, "held": held}


def category_of(tree: Tree) -> str | None:
    """The generalization category of a derivation: ``""`` for the training distribution (no
    held-out word, at most 2 nested CPs and PPs, no PP on a subject), a category name when the
    tree shows exactly that category's construction (one held-out word in its tested context
    within the training bounds, or one structural excess), else None (e.g. an exposure
    sentence, or two categories at once)."""
    found = shape(tree)
    excess = [
        name
        for name, on in (
            ("obj_pp_to_subj_pp", found["subject_pp"]),
            ("cp_recursion", found["cp"] > TRAIN_MAX_DEPTH),
            ("pp_recursion", found["pp"] > TRAIN_MAX_DEPTH),
        )
        if on
    ]
    held = found["held"]
    if not held:
        return excess[0] if len(excess) == 1 else ("" if not excess else None)
    if excess or len(held) > 1:
        return None
    word, context = held[0]
    for name, (held_word, tested) in LEXICAL.items():
        if word == held_word and (context == tested or context.startswith(tested + ":")):
            return name
    return None
