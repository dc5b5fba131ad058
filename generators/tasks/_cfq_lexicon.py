"""The vocabulary of cfq_like: question words, what they mean in the knowledge base
(gengap.generators.kb_world) and the query tokens they map to.

- verbs (``VERBS``, by lemma): past and participle forms, the relation they state and whether
  the grammatical subject is the relation's object (``reverse``: "M0 directed M1" is
  ``M1 directed_by M0``);
- role nouns (``ROLES``): ``M0 's director`` is the people M0 is ``directed_by``;
  ``possessor_is_subject`` false for ``employee`` (``M0 's employee`` is ``?x employer M0``);
- type nouns (``TYPE_NOUNS``: ``film director`` -> the class ``director``) and adjectives
  (``ADJECTIVES``: gender and nationality, for people);
- query tokens: ``PREDICATES`` (relation -> ``ns:...``), ``CLASS_TOKENS``, the attribute
  predicates and their value tokens. Spouse and sibling are symmetric: every triple of theirs
  comes with ``FILTER ( a != b )`` (as CFQ writes them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gengap.generators.kb_world import (
    ATTRIBUTES,
    COMPANY,
    FILM,
    KINDS,
    PERSON,
    RELATIONS,
    ROLE_CLASSES,
    SYMMETRIC,
)

Triple = tuple[str, str, str]

# -- query tokens ---------------------------------------------------------------------------

TYPE_PREDICATE = "a"
PREDICATES = {
    "directed_by": "ns:film.film.directed_by",
    "produced_by": "ns:film.film.produced_by",
    "written_by": "ns:film.film.written_by",
    "edited_by": "ns:film.film.edited_by",
    "cinematography": "ns:film.film.cinematography",
    "starring": "ns:film.film.starring",
    "distributed_by": "ns:film.film.distributor",
    "influenced_by": "ns:influence.influence_node.influenced_by",
    "spouse": "ns:people.person.spouse",
    "sibling": "ns:people.person.sibling",
    "employer": "ns:people.person.employer",
    "founded_by": "ns:business.company.founder",
}
RELATION_OF = {token: relation for relation, token in PREDICATES.items()}
CLASS_TOKENS = {
    FILM: "ns:film.film", PERSON: "ns:people.person", COMPANY: "ns:business.company",
    "actor": "ns:film.actor", "director": "ns:film.director", "producer": "ns:film.producer",
    "writer": "ns:film.writer", "editor": "ns:film.editor", "cinematographer": "ns:film.cinematographer",
    "distributor": "ns:film.distributor",
}  # fmt: skip
CLASS_OF = {token: cls for cls, token in CLASS_TOKENS.items()}
ATTRIBUTE_PREDICATES = {"gender": "ns:people.person.gender", "nationality": "ns:people.person.nationality"}
ATTRIBUTE_OF = {token: name for name, token in ATTRIBUTE_PREDICATES.items()}
VALUE_TOKENS = {(name, value): f"ns:m.{value}" for name, values in ATTRIBUTES.items() for value in values}
VALUE_OF = {token: pair for pair, token in VALUE_TOKENS.items()}


def class_kind(cls: str) -> str:
    """The kind of a class's members: itself for a kind, else the object kind of its relation."""
    return cls if cls in KINDS else RELATIONS[ROLE_CLASSES[cls]][1]


def relation_items(relation: str, subject: str, obj: str) -> tuple[Triple, tuple[str, str] | None]:
    """The WHERE items of relation(subject, obj): its triple, and for a symmetric relation the
    FILTER (its two terms differ), else None."""
    return (subject, PREDICATES[relation], obj), ((subject, obj) if relation in SYMMETRIC else None)


# -- question words --------------------------------------------------------------------------


@dataclass(frozen=True)
class Verb:
    """A transitive verb: "S <verb> O" states relation(O, S) when reverse, else relation(S, O)."""

    lemma: str
    past: str
    participle: str | None  # None: no passive
    relation: str
    reverse: bool

    @property
    def subject_kind(self) -> str:
        return RELATIONS[self.relation][1 if self.reverse else 0]

    @property
    def object_kind(self) -> str:
        return RELATIONS[self.relation][0 if self.reverse else 1]

    def arguments(self, subject: str, obj: str) -> tuple[str, str]:
        """(relation subject, relation object) of "subject <verb> obj"."""
        return (obj, subject) if self.reverse else (subject, obj)


@dataclass(frozen=True)
class Role:
    """A role noun: "P 's <noun>" is every X with relation(P, X) (relation(X, P) unless possessor_is_subject)."""

    noun: str
    relation: str
    possessor_is_subject: bool = True

    @property
    def possessor_kind(self) -> str:
        return RELATIONS[self.relation][0 if self.possessor_is_subject else 1]

    @property
    def kind(self) -> str:
        return RELATIONS[self.relation][1 if self.possessor_is_subject else 0]

    def arguments(self, possessor: str, value: str) -> tuple[str, str]:
        return (possessor, value) if self.possessor_is_subject else (value, possessor)


VERBS = {
    verb.lemma: verb
    for verb in (
        Verb("direct", "directed", "directed", "directed_by", True),
        Verb("produce", "produced", "produced", "produced_by", True),
        Verb("write", "wrote", "written", "written_by", True),
        Verb("edit", "edited", "edited", "edited_by", True),
        Verb("feature", "featured", None, "starring", False),  # "star" is the role noun (M0 's star)
        Verb("influence", "influenced", "influenced", "influenced_by", True),
        Verb("marry", "married", None, "spouse", False),
        Verb("employ", "employed", "employed", "employer", True),
        Verb("found", "founded", "founded", "founded_by", True),
        Verb("distribute", "distributed", "distributed", "distributed_by", True),
    )
}
ROLES = {
    role.noun: role
    for role in (
        Role("director", "directed_by"), Role("producer", "produced_by"), Role("writer", "written_by"),
        Role("editor", "edited_by"), Role("star", "starring"), Role("cinematographer", "cinematography"),
        Role("distributor", "distributed_by"), Role("spouse", "spouse"), Role("sibling", "sibling"),
        Role("employer", "employer"), Role("founder", "founded_by"), Role("employee", "employer", False),
    )  # fmt: skip
}
TYPE_NOUNS = {  # surface (one or two words) -> class
    "film": FILM, "person": PERSON, "company": COMPANY, "actor": "actor", "film director": "director",
    "film producer": "producer", "screenwriter": "writer", "film editor": "editor",
    "cinematographer": "cinematographer", "film distributor": "distributor",
}  # fmt: skip
GENDER_WORDS = {"male": "male", "female": "female"}
NATIONALITY_WORDS = {
    "American": "usa", "British": "uk", "Canadian": "canada", "French": "france",
    "German": "germany", "Italian": "italy", "Japanese": "japan", "Swedish": "sweden",
}  # fmt: skip
ADJECTIVES = {**{w: ("gender", v) for w, v in GENDER_WORDS.items()}, **{w: ("nationality", v) for w, v in NATIONALITY_WORDS.items()}}
ADJECTIVE_KINDS = ("gender", "nationality")  # their order before a noun: "a male French actor"
PAST_FORMS = {verb.past: verb for verb in VERBS.values()}
PARTICIPLES = {verb.participle: verb for verb in VERBS.values() if verb.participle}


def article(word: str) -> str:
    """``an`` before a vowel (``an actor``, ``an American``), else ``a``."""
    return "an" if word[0].lower() in "aeiou" else "a"


# -- lexicons: which words play the question's lexical roles ----------------------------------


def word_classes() -> tuple[Any, ...]:
    """The classes a ``lexicon`` k > 0 permutes (gengap.generators.lexicons): verbs by the
    pattern of their forms (lemma, past, participle; a verb without a passive: lemma, past),
    every noun token (role nouns and the words of type nouns, one class, since ``director`` is
    both: a token map keeps ``film director`` and ``M0 's director`` apart by position), the
    gender adjectives and the nationality adjectives. Grammar words (``Did``, ``a``, ``'s``,
    ``that``, ``by``, ...), placeholders and query tokens are no roles."""
    from gengap.generators.lexicons import WordClass, classes_of

    verbs = classes_of(
        ("verb", (v.lemma, v.past, v.participle), ("lemma", "past", "participle")) if v.participle
        else ("verb without a passive", (v.lemma, v.past), ("lemma", "past"))
        for v in VERBS.values()
    )
    nouns = list(dict.fromkeys([*ROLES, *(word for surface in TYPE_NOUNS for word in surface.split())]))
    return (*verbs, WordClass.permuted("noun", nouns), WordClass.permuted("gender adjective", GENDER_WORDS),
            WordClass.permuted("nationality adjective", NATIONALITY_WORDS))
