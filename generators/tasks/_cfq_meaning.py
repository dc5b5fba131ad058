"""The meaning of a cfq_like question evaluated directly on a knowledge base, without queries.

A question's derivation (gengap.generators.tasks._cfq_reader) is read as set algebra over the
knowledge base (gengap.generators.kb_world), its placeholders bound to entities:

- an NP denotes a set of entities: a placeholder its entity, ``a N`` the entities N describes,
  ``P 's R`` the union over the possessors p of the entities that hold every role of R to p
  (``a R of P`` likewise);
- an N: a class's members, narrowed by an adjective (an attribute value) or a relative clause
  (those the clause holds of);
- a VP holds of s when, for every item ``V NP``, some entity o of each NP is related to s by
  every verb of V (one o for all the verbs: "directed and produced a film" is one film); a
  passive phrase likewise with the NP as the verbs' subjects;
- a yes/no question is true when some entity of its subject NP satisfies its predicate; a
  wh-question denotes the set of entities that answer it.

The answers are what :func:`gengap.generators.tasks._cfq_execute.execute` must give for the
question's query: a bool for a yes/no question, a frozenset for a wh-question.
"""

from __future__ import annotations

from typing import Mapping

from gengap.generators.derivation import Tree
from gengap.generators.kb_world import PERSON, KnowledgeBase
from gengap.generators.tasks import _cfq_grammar as G
from gengap.generators.tasks._cfq_lexicon import ADJECTIVES, ROLES, TYPE_NOUNS, VERBS, Verb

Answer = bool | frozenset


class _Meaning:
    def __init__(self, kb: KnowledgeBase, binding: Mapping[str, int]) -> None:
        self.kb, self.binding = kb, binding
        self.memo: dict[int, frozenset[int]] = {}

    def verbs(self, node: Tree) -> list[Verb]:
        return [VERBS[lemma] for lemma in G.list_items(node)]

    def objects(self, verb: Verb, subject: int) -> frozenset[int]:
        """Every o with "subject <verb> o"."""
        kb = self.kb
        return kb.subjects(verb.relation, subject) if verb.reverse else kb.objects(verb.relation, subject)

    def agents(self, verb: Verb, obj: int) -> frozenset[int]:
        """Every s with "s <verb> obj"."""
        kb = self.kb
        return kb.objects(verb.relation, obj) if verb.reverse else kb.subjects(verb.relation, obj)

    def of_all(self, sets: list[frozenset[int]]) -> frozenset[int]:
        found = sets[0]
        for other in sets[1:]:
            found = found & other
        return found

    # phrases ------------------------------------------------------------------------------

    def vp(self, node: Tree, subject: int) -> bool:
        for _, verbs_node, objects in G.list_items(node):
            reached = self.of_all([self.objects(v, subject) for v in self.verbs(verbs_node)])
            if not all(reached & self.np(np) for np in G.list_items(objects)):
                return False
        return True

    def passive(self, node: Tree, patient: int) -> bool:
        for _, verbs_node, agents in G.list_items(node):
            reached = self.of_all([self.agents(v, patient) for v in self.verbs(verbs_node)])
            if not all(reached & self.np(np) for np in G.list_items(agents)):
                return False
        return True

    def np(self, node: Tree) -> frozenset[int]:
        key = id(node)
        if key not in self.memo:
            self.memo[key] = self._np(node)
        return self.memo[key]

    def _np(self, node: Tree) -> frozenset[int]:
        rule = node[0]
        if rule == G.NP_ENTITY:
            return frozenset({self.binding[node[1]]})
        if rule == G.NP_INDEFINITE:
            return self.nominal(node[1])
        owners, role_node = (self.np(node[2]), node[1]) if rule == G.NP_OF else (self.np(node[1]), node[2])
        narrowed: frozenset[int] | None = None
        if isinstance(role_node, list) and role_node[0] == G.R_ADJ:
            narrowed = self.having(role_node[1])
            role_node = role_node[2]
        roles = [ROLES[noun] for noun in G.list_items(role_node)]
        found: set[int] = set()
        for owner in owners:
            found |= self.of_all([self.holders(role, owner) for role in roles])
        return frozenset(found) if narrowed is None else frozenset(found) & narrowed

    def holders(self, role, owner: int) -> frozenset[int]:
        """The entities that are role of owner."""
        kb = self.kb
        return kb.objects(role.relation, owner) if role.possessor_is_subject else kb.subjects(role.relation, owner)

    def having(self, adjective: str) -> frozenset[int]:
        name, value = ADJECTIVES[adjective]
        return frozenset(p for p in self.kb.entities(PERSON) if self.kb.attribute(name, p) == value)

    def nominal(self, node: Tree) -> frozenset[int]:
        if isinstance(node, str):
            return self.kb.members(TYPE_NOUNS[node])
        key = id(node)
        if key in self.memo:
            return self.memo[key]
        rule = node[0]
        base = self.nominal(node[1] if rule != G.N_ADJ else node[2])
        if rule == G.N_ADJ:
            found = base & self.having(node[1])
        elif rule == G.N_THAT_VP:
            found = frozenset(x for x in base if self.vp(node[2], x))
        elif rule == G.N_THAT_P:
            found = frozenset(x for x in base if self.passive(node[2], x))
        else:
            found = base & self.reached(node[2], node[3])
        self.memo[key] = found
        return found

    def reached(self, np: Tree, verbs_node: Tree) -> frozenset[int]:
        """Every o that some entity of np <verbs> (all of them)."""
        verbs = self.verbs(verbs_node)
        found: set[int] = set()
        for subject in self.np(np):
            found |= self.of_all([self.objects(v, subject) for v in verbs])
        return frozenset(found)

    # questions ----------------------------------------------------------------------------

    def question(self, tree: Tree) -> Answer:
        rule = tree[0]
        people = self.kb.members(PERSON)
        if rule == G.Q_DID:
            return any(self.vp(tree[2], s) for s in self.np(tree[1]))
        if rule == G.Q_WAS_NP:
            return bool(self.np(tree[1]) & self.np(tree[2]))
        if rule == G.Q_WAS_P:
            return any(self.passive(tree[2], s) for s in self.np(tree[1]))
        if rule == G.Q_WHO:
            return frozenset(x for x in people if self.vp(tree[1], x))
        if rule == G.Q_WHO_P:
            return frozenset(x for x in people if self.passive(tree[1], x))
        if rule == G.Q_WHO_NP:
            return people & self.np(tree[1])
        if rule == G.Q_WHAT:
            return self.reached(tree[1], tree[2])
        which = self.nominal(tree[1])
        if rule == G.Q_WHICH:
            return frozenset(x for x in which if self.vp(tree[2], x))
        if rule == G.Q_WHICH_P:
            return frozenset(x for x in which if self.passive(tree[2], x))
        if rule == G.Q_WHICH_NP:
            return which & self.np(tree[2])
        return which & self.reached(tree[2], tree[3])


def evaluate(tree: Tree, kb: KnowledgeBase, binding: Mapping[str, int]) -> Answer:
    """The answer of a question's derivation on kb, its placeholders bound by binding."""
    return _Meaning(kb, binding).question(tree)
