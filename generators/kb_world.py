"""A seeded knowledge base of films, the people who made them and companies (the cfq_like world).

The second kind of seeded world (gengap.generators.worlds): a pure function of its knobs
(:class:`KbWorldParams`: ``n_films``, ``n_people``, ``n_companies``, ``world_seed``), drawn
from the ``world`` stream under the label ``knowledge-base,F,P,C``, rebuilt from the knobs a
record carries in ``meta`` (``KNOWLEDGE_BASE.of(meta)``).

Entities are integers: films ``0 .. F-1``, people ``F .. F+P-1``, companies after them
(written ``f3``, ``p12``, ``c4`` by :meth:`KnowledgeBase.name`). Every person has a gender
(``male``/``female``) and a nationality (``NATIONALITIES``), uniform and independent.
Relations (subject kind -> object kind), drawn per film from a team of ``TEAM`` people, so
that one person often holds several roles in one film:

==================  ================  =====================================================
relation            subject -> object per entity
==================  ================  =====================================================
``directed_by``     film -> person    1-2 of the film's team
``produced_by``     film -> person    1-3 of the team
``written_by``      film -> person    1-2 of the team
``edited_by``       film -> person    1 of the team
``cinematography``  film -> person    1 of the team
``starring``        film -> person    2-4 of the team
``distributed_by``  film -> company   1 company
``influenced_by``   person -> person  0-3 other people
``spouse``          person <-> person symmetric: a random matching of about 40 % of the people
``sibling``         person <-> person symmetric: families of 1-3 people (each other's siblings)
``employer``        person -> company 1 company for about 70 % of the people
``founded_by``      company -> person 1-2 people
==================  ================  =====================================================

No relation holds between an entity and itself. Classes: the kinds ``film``, ``person``,
``company``, and the roles ``ROLE_CLASSES`` (an actor is a person some film stars, a
director a person who directed a film, a distributor a company that distributed one).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import Any, Mapping

from gengap.generators.params import knob
from gengap.generators.seeding import world_rng
from gengap.generators.worlds import WORLD_SEED_MAX, SeededWorldParams, WorldKind

FILM, PERSON, COMPANY = "film", "person", "company"
KINDS = (FILM, PERSON, COMPANY)
GENDERS = ("male", "female")
NATIONALITIES = ("usa", "uk", "canada", "france", "germany", "italy", "japan", "sweden")
TEAM = 6  # people a film's crew and cast are drawn from
FILM_SLOTS = (  # (relation, fewest, most) of each film's people
    ("directed_by", 1, 2), ("produced_by", 1, 3), ("written_by", 1, 2),
    ("edited_by", 1, 1), ("cinematography", 1, 1), ("starring", 2, 4),
)  # fmt: skip
RELATIONS: dict[str, tuple[str, str]] = {  # name -> (subject kind, object kind)
    **{name: (FILM, PERSON) for name, _, _ in FILM_SLOTS},
    "distributed_by": (FILM, COMPANY),
    "influenced_by": (PERSON, PERSON),
    "spouse": (PERSON, PERSON),
    "sibling": (PERSON, PERSON),
    "employer": (PERSON, COMPANY),
    "founded_by": (COMPANY, PERSON),
}
SYMMETRIC = frozenset({"spouse", "sibling"})
ROLE_CLASSES: dict[str, str] = {  # class -> the relation whose objects are its members
    "actor": "starring", "director": "directed_by", "producer": "produced_by", "writer": "written_by",
    "editor": "edited_by", "cinematographer": "cinematography", "distributor": "distributed_by",
}  # fmt: skip
ATTRIBUTES = {"gender": GENDERS, "nationality": NATIONALITIES}
MAX_FILMS = 20_000
MAX_PEOPLE = 50_000
MAX_COMPANIES = 5_000


@dataclass(frozen=True)
class KbWorldParams(SeededWorldParams):
    """The knobs of a knowledge base: how many films, people and companies, and its seed."""

    n_films: int = knob(150, lo=2, hi=MAX_FILMS, doc="films of the knowledge base")
    n_people: int = knob(300, lo=TEAM, hi=MAX_PEOPLE, doc="people of the knowledge base (at least a film's team)")
    n_companies: int = knob(20, lo=1, hi=MAX_COMPANIES, doc="companies of the knowledge base")
    world_seed: int = knob(0, lo=0, hi=WORLD_SEED_MAX, doc="seed of the knowledge base (same knobs and seed: same facts)")


@dataclass(frozen=True, eq=False)
class KnowledgeBase:
    """Entities, attributes and relation pairs; the indexes are built from the pairs. Compared and
    hashed by identity (one object per knob setting and process, KNOWLEDGE_BASE.of); compare
    two knowledge bases' facts with :meth:`dump`."""

    n_films: int
    n_people: int
    n_companies: int
    gender: tuple[str, ...]  # per person, in entity order
    nationality: tuple[str, ...]
    pairs: Mapping[str, tuple[tuple[int, int], ...]]  # relation -> sorted (subject, object)
    _objects: dict[str, dict[int, frozenset[int]]] = dataclasses.field(init=False, repr=False, compare=False)
    _subjects: dict[str, dict[int, frozenset[int]]] = dataclasses.field(init=False, repr=False, compare=False)
    _classes: dict[str, frozenset[int]] = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        objects: dict[str, dict[int, set[int]]] = {name: {} for name in RELATIONS}
        subjects: dict[str, dict[int, set[int]]] = {name: {} for name in RELATIONS}
        for name, pairs in self.pairs.items():
            for s, o in pairs:
                objects[name].setdefault(s, set()).add(o)
                subjects[name].setdefault(o, set()).add(s)
        freeze = lambda table: {name: {k: frozenset(v) for k, v in rows.items()} for name, rows in table.items()}  # noqa: E731
        object.__setattr__(self, "_objects", freeze(objects))
        object.__setattr__(self, "_subjects", freeze(subjects))
        classes = {kind: frozenset(self.entities(kind)) for kind in KINDS}
        classes.update({name: frozenset(subjects[relation]) for name, relation in ROLE_CLASSES.items()})
        object.__setattr__(self, "_classes", classes)

    @property
    def size(self) -> int:
        return self.n_films + self.n_people + self.n_companies

    def entities(self, kind: str) -> range:
        """The entities of a kind (film, person or company)."""
        first = {FILM: 0, PERSON: self.n_films, COMPANY: self.n_films + self.n_people}[kind]
        count = {FILM: self.n_films, PERSON: self.n_people, COMPANY: self.n_companies}[kind]
        return range(first, first + count)

    def kind_of(self, entity: int) -> str:
        if not 0 <= entity < self.size:
            raise ValueError(f"entity {entity} is outside the knowledge base (size {self.size})")
        return FILM if entity < self.n_films else PERSON if entity < self.n_films + self.n_people else COMPANY

    def name(self, entity: int) -> str:
        """``f3``, ``p12`` or ``c4``: the kind's letter and the index within the kind."""
        kind = self.kind_of(entity)
        return f"{kind[0]}{entity - self.entities(kind).start}"

    def objects(self, relation: str, subject: int) -> frozenset[int]:
        """Every o with relation(subject, o)."""
        return self._objects[relation].get(subject, frozenset())

    def subjects(self, relation: str, obj: int) -> frozenset[int]:
        """Every s with relation(s, obj)."""
        return self._subjects[relation].get(obj, frozenset())

    def members(self, cls: str) -> frozenset[int]:
        """The entities of a class: a kind or a role of ROLE_CLASSES."""
        return self._classes[cls]

    def attribute(self, name: str, entity: int) -> str | None:
        """A person's gender or nationality; None for a film or a company."""
        if self.kind_of(entity) != PERSON:
            return None
        values = self.gender if name == "gender" else self.nationality
        return values[entity - self.n_films]

    def dump(self) -> str:
        """Canonical JSON of every fact (what a fingerprint hashes)."""
        facts = {
            "sizes": [self.n_films, self.n_people, self.n_companies],
            "gender": list(self.gender),
            "nationality": list(self.nationality),
            "pairs": {name: [list(pair) for pair in self.pairs[name]] for name in sorted(self.pairs)},
        }
        return json.dumps(facts, sort_keys=True, separators=(",", ":"))

    def fingerprint(self) -> str:
        return hashlib.sha256(self.dump().encode()).hexdigest()


def build_knowledge_base(n_films: int, n_people: int, n_companies: int, world_seed: int) -> KnowledgeBase:
    """The knowledge base of these knobs, drawn from the ``world`` stream (see the module doc)."""
    rng = world_rng(world_seed, f"knowledge-base,{n_films},{n_people},{n_companies}")
    F, P, C = n_films, n_people, n_companies
    gender = tuple(GENDERS[g] for g in rng.integers(0, len(GENDERS), size=P).tolist())
    nationality = tuple(NATIONALITIES[k] for k in rng.integers(0, len(NATIONALITIES), size=P).tolist())
    found: dict[str, set[tuple[int, int]]] = {name: set() for name in RELATIONS}
    for film in range(F):
        team = (rng.choice(P, size=TEAM, replace=False) + F).tolist()
        for relation, lo, hi in FILM_SLOTS:
            count = int(rng.integers(lo, hi + 1))
            for person in rng.choice(team, size=count, replace=False).tolist():
                found[relation].add((film, person))
        found["distributed_by"].add((film, F + P + int(rng.integers(0, C))))
    for person in range(P):
        count = int(rng.integers(0, 4))
        for other in rng.choice(P - 1, size=count, replace=False).tolist():
            found["influenced_by"].add((F + person, F + other + (other >= person)))
    order = rng.permutation(P).tolist()
    for i in range(0, 2 * (int(0.4 * P) // 2), 2):
        a, b = F + order[i], F + order[i + 1]
        found["spouse"].update({(a, b), (b, a)})
    order = rng.permutation(P).tolist()
    at = 0
    while at < P:
        family = [F + p for p in order[at : at + int(rng.integers(1, 4))]]
        at += len(family)
        found["sibling"].update((a, b) for a in family for b in family if a != b)
    employed = (rng.random(P) < 0.7).tolist()
    employers = rng.integers(0, C, size=P).tolist()
    for person in range(P):
        if employed[person]:
            found["employer"].add((F + person, F + P + employers[person]))
    for company in range(C):
        for person in rng.choice(P, size=int(rng.integers(1, 3)), replace=False).tolist():
            found["founded_by"].add((F + P + company, F + person))
    pairs = {name: tuple(sorted(found[name])) for name in RELATIONS}
    return KnowledgeBase(F, P, C, gender, nationality, pairs)


KNOWLEDGE_BASE = WorldKind("knowledge base", KbWorldParams, build_knowledge_base)
KbWorldParams.world_kind = KNOWLEDGE_BASE


def knowledge_base_of(knobs: Mapping[str, Any]) -> KnowledgeBase:
    """The knowledge base of a record's meta (or knobs); ValueError when a knob is missing or invalid."""
    return KNOWLEDGE_BASE.of(knobs)
