"""The knowledge-base world (gengap.generators.kb_world): the second kind of seeded world."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gengap.generators.kb_world import (
    FILM_SLOTS,
    KNOWLEDGE_BASE,
    RELATIONS,
    ROLE_CLASSES,
    SYMMETRIC,
    TEAM,
    KbWorldParams,
    build_knowledge_base,
    knowledge_base_of,
)
from gengap.generators.worlds import FACTS, WorldKind, WorldParams, world_of

ROOT = Path(__file__).resolve().parents[1]
KNOBS = {"n_films": 30, "n_people": 50, "n_companies": 4, "world_seed": 7}


@settings(max_examples=15, deadline=None)
@given(films=st.integers(2, 40), people=st.integers(TEAM, 60), companies=st.integers(1, 6), seed=st.integers(0, 2**31 - 1))
def test_facts_are_typed_and_shaped_as_documented(films: int, people: int, companies: int, seed: int) -> None:
    kb = build_knowledge_base(films, people, companies, seed)
    assert kb.size == films + people + companies
    for relation, (subject_kind, object_kind) in RELATIONS.items():
        for s, o in kb.pairs[relation]:
            assert kb.kind_of(s) == subject_kind and kb.kind_of(o) == object_kind, relation
            assert s != o
        if relation in SYMMETRIC:
            pairs = set(kb.pairs[relation])
            assert all((o, s) in pairs for s, o in pairs)
    per_film = {relation: Counter(s for s, _ in kb.pairs[relation]) for relation, _, _ in FILM_SLOTS}
    for film in kb.entities("film"):
        crew = {o for relation, _, _ in FILM_SLOTS for o in kb.objects(relation, film)}
        assert len(crew) <= TEAM
        for relation, lo, hi in FILM_SLOTS:
            assert lo <= per_film[relation][film] <= hi
        assert len(kb.objects("distributed_by", film)) == 1
    for person in kb.entities("person"):
        assert len(kb.objects("spouse", person)) <= 1
        assert len(kb.objects("influenced_by", person)) <= 3
        assert len(kb.objects("employer", person)) <= 1
        family = kb.objects("sibling", person) | {person}
        assert len(family) <= 3 and all(kb.objects("sibling", p) | {p} == family for p in family)
        assert kb.attribute("gender", person) in ("male", "female")
    for company in kb.entities("company"):
        assert 1 <= len(kb.objects("founded_by", company)) <= 2
        assert kb.attribute("gender", company) is None
    for cls, relation in ROLE_CLASSES.items():
        assert kb.members(cls) == {o for _, o in kb.pairs[relation]}


def test_same_knobs_same_facts_and_each_knob_changes_them() -> None:
    base = build_knowledge_base(**KNOBS)
    assert build_knowledge_base(**KNOBS).dump() == base.dump()
    for key, value in (("world_seed", 8), ("n_films", 31), ("n_people", 51), ("n_companies", 5)):
        assert build_knowledge_base(**{**KNOBS, key: value}).dump() != base.dump(), key


def test_rebuilt_from_a_records_meta_bit_for_bit() -> None:
    params = KbWorldParams(**KNOBS)
    assert params.world_knobs() == KNOBS
    kb = knowledge_base_of({**KNOBS, "other": "ignored"})
    assert kb is params.world()  # built once per process and setting
    assert kb.dump() == build_knowledge_base(**KNOBS).dump()
    with pytest.raises(ValueError, match="^meta.world_seed is missing$"):
        knowledge_base_of({k: v for k, v in KNOBS.items() if k != "world_seed"})
    with pytest.raises(ValueError, match="^world knobs: parameter n_people=2 is out of range"):
        knowledge_base_of({**KNOBS, "n_people": 2})
    with pytest.raises(ValueError, match="must be an integer"):
        knowledge_base_of({**KNOBS, "n_films": 3.0})


def test_the_same_facts_in_other_processes() -> None:
    """Bit for bit whatever the hash seed (Python's hash() is salted per process)."""
    code = f"from gengap.generators.kb_world import build_knowledge_base as b; print(b(**{KNOBS!r}).fingerprint())"
    outputs = set()
    for hash_seed in ("1", "2", "random"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
        outputs.add(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout)
    assert outputs == {build_knowledge_base(**KNOBS).fingerprint() + "\n"}


def test_both_worlds_are_kinds_of_one_seeded_world() -> None:
    assert isinstance(FACTS, WorldKind) and isinstance(KNOWLEDGE_BASE, WorldKind)
    assert FACTS.keys == ("n_entities", "n_relations", "n_attributes", "n_values", "world_seed")
    assert KNOWLEDGE_BASE.keys == ("n_films", "n_people", "n_companies", "world_seed")
    facts = {"n_entities": 12, "n_relations": 3, "n_attributes": 2, "n_values": 5, "world_seed": 4}
    assert world_of(facts) is WorldParams(**facts).world() is FACTS.of(facts)
    # the two kinds draw from one stream under different labels: same seed, unrelated worlds
    assert KNOWLEDGE_BASE.of({**KNOBS, "world_seed": 4}).dump() != build_knowledge_base(**{**KNOBS, "world_seed": 5}).dump()


def test_names_and_kinds_of_entities() -> None:
    kb = knowledge_base_of(KNOBS)
    assert [kb.name(e) for e in (0, 29, 30, 79, 80, 83)] == ["f0", "f29", "p0", "p49", "c0", "c3"]
    with pytest.raises(ValueError, match="outside the knowledge base"):
        kb.kind_of(84)
