"""The sampler of cfq_like questions: words, derivation and query built in one pass.

Independent of the reader (gengap.generators.tasks._cfq_reader), which parses the words back
and rebuilds derivation and query with its own code. Every NP is drawn for a kind (film,
person, company) so that questions are typed: a verb's subject and object, a role's possessor
and value, a class or an adjective (people only) always fit.

Per question: a form (``FORMS``, with their weights), then its phrases, recursively:

- a list (of VPs, passive phrases, verbs, object NPs, roles) has 1 item (SINGLE), else
  2..max_conjuncts uniformly (verbs and roles: at most as many as there are of the kind,
  distinct; lists of phrases nested at depth >= 1: at most NESTED_LIST items);
- an NP at depth d < max_depth is a placeholder (ENTITY), ``NP 's R`` (POSSESSIVE; its
  possessor one deeper) or ``a N``; at d = max_depth a placeholder (ENTITY_LEAF) or ``a N``.
  An NP in place of another's head (``Was M0 a film director``, ``Who was M0 's star``) is
  ``NP 's R`` (HEAD_POSSESSIVE) or ``a N``; the subject of ``Was NP NP`` a placeholder (0.7)
  or ``NP 's R``. A possessor is never a list of roles and never has a relative clause;
- ``a N``: a type noun of the kind; for people 0 adjectives (0.5) or 1..max_modifiers
  (gender, nationality, in that order); at d < max_depth a relative clause (RELATIVE, its
  phrases one deeper) ``that VP``, ``that NP V`` or ``that was P``, but only where no list
  can go on after the NP (so that every question reads one way: nothing but a verb or the
  end follows);
- a list item written as an earlier item of its list is drawn again (REDRAWS times at most);
- a role of a single-role possessive of a person gets a gender (0.25, max_modifiers >= 1).

With ``constructions=cfq`` (CFQ's forms; ``base``, the default, draws exactly what it always
has): the form ``Which N was NP`` joins FORMS (``CFQ_FORMS``), and a possessive NP that is no
possessor and not the definite subject of ``Was NP NP`` is written ``a R of NP`` instead (OF:
one more draw, made only under cfq), one role (a person's with a gender as above), its NP one
deeper, never a list, drawn with the outer NP's tail.

Placeholders are numbered in order of appearance (M0 first). The query's variables are named
afresh by the normal form (gengap.generators.tasks._cfq_query).
"""

from __future__ import annotations

from typing import Any, Callable

from gengap.generators.derivation import Tree
from gengap.generators.kb_world import COMPANY, FILM, KINDS, PERSON
from gengap.generators.tasks import _cfq_grammar as G
from gengap.generators.tasks._cfq_lexicon import (
    ADJECTIVES,
    ATTRIBUTE_PREDICATES,
    CLASS_TOKENS,
    GENDER_WORDS,
    NATIONALITY_WORDS,
    ROLES,
    TYPE_NOUNS,
    TYPE_PREDICATE,
    VALUE_TOKENS,
    VERBS,
    Role,
    Verb,
    article,
    relation_items,
    class_kind,
)
from gengap.generators.tasks._cfq_query import Query

FORMS = (  # (rule, weight)
    (G.Q_DID, 22), (G.Q_WAS_NP, 8), (G.Q_WAS_P, 8), (G.Q_WHO, 14), (G.Q_WHO_P, 6),
    (G.Q_WHO_NP, 5), (G.Q_WHAT, 9), (G.Q_WHICH, 14), (G.Q_WHICH_P, 7), (G.Q_WHICH_DID, 7),
)  # fmt: skip
FORM_TOTAL = sum(weight for _, weight in FORMS)
CFQ_FORMS = (*FORMS, (G.Q_WHICH_NP, 7))  # constructions=cfq
OF = 0.5  # constructions=cfq: a possessive NP that may be is written ``a R of NP``
SINGLE = 0.6  # a list has one item
ENTITY, POSSESSIVE = 0.3, 0.3  # an NP below max_depth: a placeholder, NP 's R (the rest: a N)
ENTITY_LEAF = 0.7  # an NP at max_depth: a placeholder (the rest: a N)
HEAD_POSSESSIVE = 0.4  # an NP in place of another's head: NP 's R (the rest: a N)
RELATIVE = 0.5  # an ``a N`` that may have a relative clause has one
ROLE_GENDER = 0.25
NESTED_LIST = 2  # most items of a list in a nested phrase (a possessive's roles, a relative clause's lists)
REDRAWS = 8  # draws of a list item written as an earlier one (the last draw stays)

VERBS_BY_SUBJECT = {kind: [v for v in VERBS.values() if v.subject_kind == kind] for kind in KINDS}
VERBS_BY_OBJECT = {kind: [v for v in VERBS.values() if v.object_kind == kind] for kind in KINDS}
PASSIVES_BY_OBJECT = {kind: [v for v in VERBS_BY_OBJECT[kind] if v.participle] for kind in KINDS}
ROLES_BY_KIND = {kind: [r for r in ROLES.values() if r.kind == kind] for kind in KINDS}
NOUNS_BY_KIND = {kind: [noun for noun, cls in TYPE_NOUNS.items() if class_kind(cls) == kind] for kind in KINDS}
GENDERS = tuple(GENDER_WORDS)
NATIONALITIES = tuple(NATIONALITY_WORDS)
# kinds a form can be about: those with what it needs
WAS_P_KINDS = [kind for kind in KINDS if PASSIVES_BY_OBJECT[kind]]
OBJECT_KINDS = [kind for kind in KINDS if VERBS_BY_OBJECT[kind]]
assert set(WAS_P_KINDS) == {FILM, PERSON, COMPANY} and OBJECT_KINDS


class Sampler:
    """Draws one question at a time from ``u`` (uniforms in [0, 1)) under the three knobs and
    the constructions (``base`` or ``cfq``)."""

    def __init__(self, u: Callable[[], float], max_depth: int, max_conjuncts: int, max_modifiers: int,
                 constructions: str = "base") -> None:
        self.u, self.max_depth, self.max_conjuncts, self.max_modifiers = u, max_depth, max_conjuncts, max_modifiers
        self.cfq = constructions == "cfq"
        self.forms = CFQ_FORMS if self.cfq else FORMS
        self.form_total = sum(weight for _, weight in self.forms)

    # -- one question ------------------------------------------------------------------------

    def question(self) -> tuple[list[str], Tree, Query, dict[str, int]]:
        """(tokens, derivation, query before its normal form, measured knobs: depth, conjuncts)."""
        self.tokens: list[str] = []
        self.triples: list[tuple[str, str, str]] = []
        self.filters: list[tuple[str, str]] = []
        self.placeholders = 0
        self.variables = 0
        self.deepest = 0
        self.longest = 1
        x = self.u() * self.form_total
        for rule, weight in self.forms:
            x -= weight
            if x < 0:
                break
        tree, select = self._form(rule)
        self.tokens.append("?")
        query = Query(select, tuple(self.triples), tuple(self.filters))
        return self.tokens, tree, query, {"depth": self.deepest, "conjuncts": self.longest}

    def _form(self, rule: str) -> tuple[Tree, str | None]:
        words = self.tokens
        if rule == G.Q_DID:
            words.append("Did")
            verb = self.pick(list(VERBS.values()))
            np, subject = self.np(verb.subject_kind, 0, True)
            return [rule, np, self.vp(subject, verb.subject_kind, 0, True, "base")], None
        if rule in (G.Q_WAS_NP, G.Q_WAS_P):
            words.append("Was")
            kind = self.pick(list(KINDS) if rule == G.Q_WAS_NP else WAS_P_KINDS)
            np, subject = self.np(kind, 0, False, definite=rule == G.Q_WAS_NP)
            if rule == G.Q_WAS_NP:
                return [rule, np, self.np(kind, 0, True, head=subject)[0]], None
            return [rule, np, self.passive(subject, kind, 0, True)], None
        x0 = self.var()
        if rule in (G.Q_WHO, G.Q_WHO_P, G.Q_WHO_NP):
            words.append("Who")
            self.triples.append((x0, TYPE_PREDICATE, CLASS_TOKENS[PERSON]))
            if rule == G.Q_WHO:
                return [rule, self.vp(x0, PERSON, 0, True, "past")], x0
            words.append("was")
            if rule == G.Q_WHO_P:
                return [rule, self.passive(x0, PERSON, 0, True)], x0
            return [rule, self.np(PERSON, 0, True, head=x0)[0]], x0
        if rule == G.Q_WHAT:
            words += ["What", "did"]
            verb = self.pick(list(VERBS.values()))
            np, subject = self.np(verb.subject_kind, 0, True)
            return [rule, np, self.verbs_of(verb, subject, [x0], "base")], x0
        words.append("Which")
        kind = self.pick(list(KINDS) if rule != G.Q_WHICH_DID else OBJECT_KINDS)
        noun = self.nominal(x0, kind, 0, True)
        if rule == G.Q_WHICH:
            return [rule, noun, self.vp(x0, kind, 0, True, "past")], x0
        if rule == G.Q_WHICH_P:
            words.append("was")
            return [rule, noun, self.passive(x0, kind, 0, True)], x0
        if rule == G.Q_WHICH_NP:
            words.append("was")
            return [rule, noun, self.np(kind, 0, True, head=x0)[0]], x0
        words.append("did")
        verb = self.pick(VERBS_BY_OBJECT[kind])
        np, subject = self.np(verb.subject_kind, 0, True)
        return [rule, noun, np, self.verbs_of(verb, subject, [x0], "base")], x0

    # -- helpers ---------------------------------------------------------------------------

    def pick(self, options: list[Any]) -> Any:
        return options[int(self.u() * len(options))]

    def sample(self, options: list[Any], k: int) -> list[Any]:
        pool = list(options)
        return [pool.pop(int(self.u() * len(pool))) for _ in range(k)]

    def count(self, most: int, depth: int = 0) -> int:
        """A list's length: 1 (SINGLE), else 2..most uniformly (at most NESTED_LIST below the top)."""
        most = min(most, self.max_conjuncts, NESTED_LIST if depth else most)
        if most <= 1 or self.u() < SINGLE:
            return 1
        return 2 + int(self.u() * (most - 1))

    def var(self) -> str:
        self.variables += 1
        return f"?v{self.variables - 1}"

    def relation(self, relation: str, subject: str, obj: str) -> None:
        triple, different = relation_items(relation, subject, obj)
        self.triples.append(triple)
        if different:
            self.filters.append(different)

    def _mark(self) -> tuple[int, ...]:
        return (len(self.tokens), len(self.triples), len(self.filters), self.placeholders, self.variables,
                self.deepest, self.longest)

    def _restore(self, mark: tuple[int, ...]) -> None:
        del self.tokens[mark[0]:], self.triples[mark[1]:], self.filters[mark[2]:]
        self.placeholders, self.variables, self.deepest, self.longest = mark[3:]

    def conjoin(self, symbol: str, size: int, item: Callable[[int, bool], Tree]) -> Tree:
        """A list of size items (item(i, last) writes each), joined as ``A and B`` or ``A , B , and C``.
        An item written as an earlier one was is drawn again (up to REDRAWS times)."""
        children = []
        spans: list[list[str]] = []
        for i in range(size):
            if i:
                if size > 2:
                    self.tokens.append(",")
                if i == size - 1:
                    self.tokens.append("and")
            for attempt in range(REDRAWS):
                mark = self._mark()
                child = item(i, i == size - 1)
                words = self.tokens[mark[0]:]
                if words not in spans or attempt == REDRAWS - 1:
                    break
                self._restore(mark)
            spans.append(words)
            children.append(child)
        if size == 1:
            return children[0]
        self.longest = max(self.longest, size)
        return [G.list_rule(symbol, size), *children]

    # -- phrases ---------------------------------------------------------------------------

    def verbs_of(self, first: Verb, subject: str, objects: list[str], form: str, depth: int = 0) -> Tree:
        """A list of verbs of first's kinds (first among them, the others distinct), written in
        form (base, past or participle), each stated of subject and every object."""
        group = [v for v in VERBS.values() if (v.subject_kind, v.object_kind) == (first.subject_kind, first.object_kind)
                 and (form != "participle" or v.participle)]
        others = [v for v in group if v is not first]
        size = self.count(len(group), depth)
        verbs = [first, *self.sample(others, size - 1)]
        verbs = [verbs[i] for i in self.sample(list(range(size)), size)]  # first need not lead

        def word(i: int, last: bool) -> Tree:
            verb = verbs[i]
            self.tokens.append(verb.lemma if form == "base" else verb.past if form == "past" else str(verb.participle))
            return verb.lemma

        tree = self.conjoin("V", size, word)
        for verb in verbs:
            for obj in objects:
                self.relation(verb.relation, *verb.arguments(subject, obj))
        return tree

    def objects(self, kind: str, depth: int, tail: bool) -> tuple[Tree, list[str]]:
        """A list of NPs of a kind: (tree, their terms)."""
        terms: dict[int, str] = {}  # by position: a redrawn item replaces its term

        def item(i: int, last: bool) -> Tree:
            tree, terms[i] = self.np(kind, depth, tail and last)
            return tree

        tree = self.conjoin("NP", self.count(self.max_conjuncts, depth), item)
        return tree, [terms[i] for i in sorted(terms)]

    def state(self, verbs: Tree, subject: str, objects: list[str]) -> None:
        """The relations of a verb list (leaves of verbs) between subject and every object."""
        for lemma in G.list_items(verbs):
            verb = VERBS[lemma]
            for obj in objects:
                self.relation(verb.relation, *verb.arguments(subject, obj))

    def vp(self, subject: str, kind: str, depth: int, tail: bool, form: str) -> Tree:
        """A list of ``V NP`` phrases stated of subject (of a kind)."""

        def item(i: int, last: bool) -> Tree:
            verb = self.pick(VERBS_BY_SUBJECT[kind])
            verbs = self.verbs_of(verb, subject, [], form, depth)
            objects, terms = self.objects(verb.object_kind, depth, tail and last)
            self.state(verbs, subject, terms)
            return [G.VP_RULE, verbs, objects]

        return self.conjoin("VP", self.count(self.max_conjuncts, depth), item)

    def passive(self, patient: str, kind: str, depth: int, tail: bool) -> Tree:
        """A list of ``V by NP`` phrases (participles) stated of patient (of a kind)."""

        def item(i: int, last: bool) -> Tree:
            verb = self.pick(PASSIVES_BY_OBJECT[kind])
            verbs = self.verbs_of(verb, "", [], "participle", depth)
            self.tokens.append("by")
            agents, terms = self.objects(verb.subject_kind, depth, tail and last)
            for agent in terms:
                self.state(verbs, agent, [patient])
            return [G.P_RULE, verbs, agents]

        return self.conjoin("P", self.count(self.max_conjuncts, depth), item)

    def np(self, kind: str, depth: int, tail: bool, head: str | None = None, possessor: bool = False,
           definite: bool = False) -> tuple[Tree, str]:
        """An NP of a kind at a nesting depth: (tree, its term). tail: nothing but a verb or the
        end of the question follows it; head: the term it must denote (no placeholder then);
        definite: a placeholder or a possessive, never ``a N``."""
        self.deepest = max(self.deepest, depth)
        nest = depth < self.max_depth
        roles = ROLES_BY_KIND[kind] if nest else []
        x = self.u()
        if definite:
            x = 0.0 if x < 0.7 or not roles else 0.9
        if head is None and x < (ENTITY if nest else ENTITY_LEAF):
            self.tokens.append(f"M{self.placeholders}")
            self.placeholders += 1
            return [G.NP_ENTITY, self.tokens[-1]], self.tokens[-1]
        possessive = roles and (x >= 1 - POSSESSIVE if head is None else x >= 1 - HEAD_POSSESSIVE)
        term = head if head is not None else self.var()
        if possessive:
            if self.cfq and not possessor and not definite and self.u() < OF:
                return self.role_of(term, kind, depth, tail), term
            return self.possessive(term, kind, depth, possessor), term
        noun = self.nominal(term, kind, depth, tail and not possessor, article_first=True)
        return [G.NP_INDEFINITE, noun], term

    def possessive(self, term: str, kind: str, depth: int, possessor: bool) -> Tree:
        role: Role = self.pick(ROLES_BY_KIND[kind])
        group = [r for r in ROLES.values() if (r.possessor_kind, r.kind) == (role.possessor_kind, role.kind)]
        owner_tree, owner = self.np(role.possessor_kind, depth + 1, False, possessor=True)
        self.tokens.append("'s")
        size = 1 if possessor else self.count(len(group), depth)
        roles = [role, *self.sample([r for r in group if r is not role], size - 1)]
        roles = [roles[i] for i in self.sample(list(range(size)), size)]
        if size == 1 and kind == PERSON and self.max_modifiers >= 1 and self.u() < ROLE_GENDER:
            gender = self.pick(list(GENDERS))
            self.tokens += [gender, role.noun]
            self.attribute(term, gender)
            role_tree: Tree = [G.R_ADJ, gender, role.noun]
        else:

            def word(i: int, last: bool) -> Tree:
                self.tokens.append(roles[i].noun)
                return roles[i].noun

            role_tree = self.conjoin("R", size, word)
        for r in roles:
            self.relation(r.relation, *r.arguments(owner, term))
        return [G.NP_POSSESSIVE, owner_tree, role_tree]

    def role_of(self, term: str, kind: str, depth: int, tail: bool) -> Tree:
        """``a R of NP`` (constructions=cfq): one role of a kind, its NP one deeper."""
        role: Role = self.pick(ROLES_BY_KIND[kind])
        words = [role.noun]
        role_tree: Tree = role.noun
        if kind == PERSON and self.max_modifiers >= 1 and self.u() < ROLE_GENDER:
            gender = self.pick(list(GENDERS))
            words = [gender, role.noun]
            self.attribute(term, gender)
            role_tree = [G.R_ADJ, gender, role.noun]
        self.tokens += [article(words[0]), *words, "of"]
        owner_tree, owner = self.np(role.possessor_kind, depth + 1, tail)
        self.relation(role.relation, *role.arguments(owner, term))
        return [G.NP_OF, role_tree, owner_tree]

    def attribute(self, term: str, adjective: str) -> None:
        name, value = ADJECTIVES[adjective]
        self.triples.append((term, ATTRIBUTE_PREDICATES[name], VALUE_TOKENS[(name, value)]))

    def nominal(self, term: str, kind: str, depth: int, relative_ok: bool, article_first: bool = False) -> Tree:
        """``[a] ADJ* noun [that ...]`` of a kind, stated of term."""
        noun = self.pick(NOUNS_BY_KIND[kind])
        adjectives: list[str] = []
        if kind == PERSON and self.max_modifiers and self.u() >= 0.5:
            count = 1 + int(self.u() * self.max_modifiers)
            if count == 1:
                adjectives = [self.pick(list(GENDERS) if self.u() < 0.5 else list(NATIONALITIES))]
            else:
                adjectives = [self.pick(list(GENDERS)), self.pick(list(NATIONALITIES))]
        words = adjectives + noun.split()
        if article_first:
            self.tokens.append(article(words[0]))
        self.tokens += words
        self.triples.append((term, TYPE_PREDICATE, CLASS_TOKENS[TYPE_NOUNS[noun]]))
        tree: Tree = noun
        for adjective in reversed(adjectives):
            self.attribute(term, adjective)
            tree = [G.N_ADJ, adjective, tree]
        if relative_ok and depth < self.max_depth and self.u() < RELATIVE:
            tree = self.relative(tree, term, kind, depth + 1)
        return tree

    def relative(self, noun: Tree, term: str, kind: str, depth: int) -> Tree:
        """``N that VP`` / ``N that NP V`` / ``N that was P`` around noun, its phrases at depth."""
        forms = [G.N_THAT_VP] * bool(VERBS_BY_SUBJECT[kind]) + [G.N_THAT_NP_V] * bool(VERBS_BY_OBJECT[kind])
        forms += [G.N_THAT_P] * bool(PASSIVES_BY_OBJECT[kind])
        rule = self.pick(forms)
        self.tokens.append("that")
        self.deepest = max(self.deepest, depth)
        if rule == G.N_THAT_VP:
            return [rule, noun, self.vp(term, kind, depth, True, "past")]
        if rule == G.N_THAT_P:
            self.tokens.append("was")
            return [rule, noun, self.passive(term, kind, depth, True)]
        verb = self.pick(VERBS_BY_OBJECT[kind])
        np, subject = self.np(verb.subject_kind, depth, True)
        return [rule, noun, np, self.verbs_of(verb, subject, [term], "past", depth)]

