"""The reference reader of cfq_like questions, written apart from the sampler.

- :func:`parse_question`: the derivation of a question (a recursive-descent parser over the
  lexicon; ValueError for words that are not a question of the grammar). Lists are read
  greedily: an ``and`` or a comma continues the innermost open list whose items can start with
  the next word (NPs start with a placeholder or a/an, VPs and verb lists with a verb, passive
  phrases with a participle, role lists with a role noun); ``'s`` attaches to the NP just
  read; a relative clause runs to the first word that cannot continue it. ``a`` (or ``an``), a
  role noun (a gender before it or not) and ``of`` start ``a R of NP`` (its NP read as any NP,
  ``'s`` included); ``Which N was`` and no participle is ``Which N was NP``.
- :func:`interpret`: the query a derivation states (variables numbered as they are met; the
  caller takes the normal form).
- :func:`features`: the nesting depth (NPs inside a possessive or a relative clause), the
  longest list, and the rule count of a derivation.
"""

from __future__ import annotations

from typing import Any, Callable

from gengap.generators.derivation import Tree, rule_count
from gengap.generators.kb_world import PERSON
from gengap.generators.tasks import _cfq_grammar as G
from gengap.generators.tasks._cfq_lexicon import (
    ADJECTIVES,
    ATTRIBUTE_PREDICATES,
    CLASS_TOKENS,
    GENDER_WORDS,
    PARTICIPLES,
    PAST_FORMS,
    ROLES,
    TYPE_NOUNS,
    TYPE_PREDICATE,
    VALUE_TOKENS,
    VERBS,
    relation_items,
)
from gengap.generators.tasks._cfq_query import PLACEHOLDER, Query

_TWO_WORD_NOUNS = {tuple(noun.split()) for noun in TYPE_NOUNS if " " in noun}


class _Words:
    """The question's tokens and a position."""

    def __init__(self, text: str) -> None:
        self.tokens = text.split()
        self.at = 0

    def peek(self, ahead: int = 0) -> str | None:
        at = self.at + ahead
        return self.tokens[at] if at < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None:
            raise ValueError("the question ends early" + (f" (expected {expected!r})" if expected else ""))
        if expected is not None and token != expected:
            raise ValueError(f"expected {expected!r}, got {token!r}")
        self.at += 1
        return token


def _starts_np(token: str | None) -> bool:
    return token is not None and (token in ("a", "an") or PLACEHOLDER.fullmatch(token) is not None)


class _Parser:
    def __init__(self, text: str) -> None:
        self.words = _Words(text)

    # lists ---------------------------------------------------------------------------------

    def listed(self, symbol: str, item: Callable[[], Tree], starts: Callable[[str | None], bool]) -> Tree:
        """One item, or a list ``A and B`` / ``A , B , ... , and Z`` of items."""
        w = self.words
        items = [item()]
        if w.peek() == "and" and starts(w.peek(1)):
            w.take()
            items.append(item())
        elif w.peek() == "," and (starts(w.peek(1)) or (w.peek(1) == "and" and starts(w.peek(2)))):
            while True:
                if w.peek() == "," and w.peek(1) == "and" and starts(w.peek(2)):
                    w.take()
                    w.take()
                    items.append(item())
                    break
                if w.peek() == "," and starts(w.peek(1)):
                    w.take()
                    items.append(item())
                    continue
                raise ValueError("a list of 3 or more items must end with ', and'")
            if len(items) == 2:
                raise ValueError("a list of two items is written 'A and B'")
        if len(items) == 1:
            return items[0]
        if len(items) > G.MAX_LIST:
            raise ValueError(f"a list of more than {G.MAX_LIST} items")
        return [G.list_rule(symbol, len(items)), *items]

    def verbs(self, forms: dict[str, Any]) -> Tree:
        """A verb, or a list of verbs, in one form (forms: word -> Verb)."""

        def verb() -> Tree:
            word = self.words.take()
            if word not in forms:
                raise ValueError(f"expected a verb, got {word!r}")
            return forms[word].lemma

        return self.listed("V", verb, lambda t: t in forms)

    # phrases ------------------------------------------------------------------------------

    def vp(self, forms: dict[str, Any]) -> Tree:
        def item() -> Tree:
            verbs = self.verbs(forms)
            return [G.VP_RULE, verbs, self.listed("NP", self.np, _starts_np)]

        return self.listed("VP", item, lambda t: t in forms)

    def passive(self) -> Tree:
        def item() -> Tree:
            verbs = self.verbs(PARTICIPLES)
            self.words.take("by")
            return [G.P_RULE, verbs, self.listed("NP", self.np, _starts_np)]

        return self.listed("P", item, lambda t: t in PARTICIPLES)

    def np(self) -> Tree:
        w = self.words
        token = w.take()
        if PLACEHOLDER.fullmatch(token):
            node: Tree = [G.NP_ENTITY, token]
        elif token in ("a", "an") and self.role_of_ahead():
            role: Tree = w.take()
            if role in GENDER_WORDS:
                role = [G.R_ADJ, role, w.take()]
            w.take("of")
            node = [G.NP_OF, role, self.np()]
        elif token in ("a", "an"):
            node = [G.NP_INDEFINITE, self.nominal()]
        else:
            raise ValueError(f"expected a noun phrase, got {token!r}")
        while w.peek() == "'s":
            w.take()
            node = [G.NP_POSSESSIVE, node, self.role()]
        return node

    def role_of_ahead(self) -> bool:
        """Whether the words after an article are a role noun (a gender before it or not) and ``of``."""
        w = self.words
        skip = 1 if w.peek() in GENDER_WORDS else 0
        return w.peek(skip) in ROLES and w.peek(skip + 1) == "of"

    def role(self) -> Tree:
        w = self.words
        if w.peek() in GENDER_WORDS:
            adjective = w.take()
            noun = w.take()
            if noun not in ROLES:
                raise ValueError(f"expected a role noun, got {noun!r}")
            return [G.R_ADJ, adjective, noun]

        def noun() -> Tree:
            word = w.take()
            if word not in ROLES:
                raise ValueError(f"expected a role noun, got {word!r}")
            return word

        return self.listed("R", noun, lambda t: t in ROLES)

    def nominal(self) -> Tree:
        w = self.words
        adjectives = []
        while w.peek() in ADJECTIVES:
            adjectives.append(w.take())
        first = w.take()
        if (first, w.peek()) in _TWO_WORD_NOUNS:
            noun = f"{first} {w.take()}"
        elif first in TYPE_NOUNS:
            noun = first
        else:
            raise ValueError(f"expected a type noun, got {first!r}")
        tree: Tree = noun
        for adjective in reversed(adjectives):
            tree = [G.N_ADJ, adjective, tree]
        if w.peek() == "that":
            w.take()
            if w.peek() == "was":
                w.take()
                return [G.N_THAT_P, tree, self.passive()]
            if _starts_np(w.peek()):
                np = self.np()
                return [G.N_THAT_NP_V, tree, np, self.verbs(PAST_FORMS)]
            return [G.N_THAT_VP, tree, self.vp(PAST_FORMS)]
        return tree

    # questions ----------------------------------------------------------------------------

    def question(self) -> Tree:
        w = self.words
        first = w.take()
        if first == "Did":
            tree: Tree = [G.Q_DID, self.np(), self.vp(VERBS)]
        elif first == "Was":
            np = self.np()
            tree = [G.Q_WAS_P, np, self.passive()] if w.peek() in PARTICIPLES else [G.Q_WAS_NP, np, self.np()]
        elif first == "Who":
            if w.peek() == "was":
                w.take()
                tree = [G.Q_WHO_P, self.passive()] if w.peek() in PARTICIPLES else [G.Q_WHO_NP, self.np()]
            else:
                tree = [G.Q_WHO, self.vp(PAST_FORMS)]
        elif first == "What":
            w.take("did")
            np = self.np()
            tree = [G.Q_WHAT, np, self.verbs(VERBS)]
        elif first == "Which":
            noun = self.nominal()
            if w.peek() == "was":
                w.take()
                tree = [G.Q_WHICH_P, noun, self.passive()] if w.peek() in PARTICIPLES else [G.Q_WHICH_NP, noun, self.np()]
            elif w.peek() == "did":
                w.take()
                np = self.np()
                tree = [G.Q_WHICH_DID, noun, np, self.verbs(VERBS)]
            else:
                tree = [G.Q_WHICH, noun, self.vp(PAST_FORMS)]
        else:
            raise ValueError(f"a question starts with Did, Was, Who, What or Which, not {first!r}")
        w.take("?")
        if w.peek() is not None:
            raise ValueError(f"unexpected {w.peek()!r} after the question mark")
        return tree


def parse_question(text: str) -> Tree:
    """The derivation of a question; ValueError when the words are not one."""
    return _Parser(text).question()


# -- the query a derivation states ---------------------------------------------------------------


class _Interpreter:
    def __init__(self) -> None:
        self.triples: list[tuple[str, str, str]] = []
        self.filters: list[tuple[str, str]] = []
        self.count = 0

    def fresh(self) -> str:
        self.count += 1
        return f"?y{self.count - 1}"

    def relate(self, relation: str, subject: str, obj: str) -> None:
        triple, different = relation_items(relation, subject, obj)
        self.triples.append(triple)
        if different:
            self.filters.append(different)

    def verbs(self, node: Tree, subject: str, obj: str) -> None:
        for lemma in G.list_items(node):
            verb = VERBS[lemma]
            self.relate(verb.relation, *verb.arguments(subject, obj))

    def vp(self, node: Tree, subject: str) -> None:
        for item in G.list_items(node):
            _, verbs, objects = item
            for np in G.list_items(objects):
                self.verbs(verbs, subject, self.np(np))

    def passive(self, node: Tree, patient: str) -> None:
        for item in G.list_items(node):
            _, verbs, agents = item
            for np in G.list_items(agents):
                self.verbs(verbs, self.np(np), patient)

    def np(self, node: Tree, head: str | None = None) -> str:
        rule = node[0]
        if rule == G.NP_ENTITY:
            if head is not None:
                raise ValueError("a placeholder cannot stand for another noun phrase")
            return str(node[1])
        term = head if head is not None else self.fresh()
        if rule == G.NP_INDEFINITE:
            self.nominal(node[1], term)
            return term
        owner, role = (self.np(node[2]), node[1]) if rule == G.NP_OF else (self.np(node[1]), node[2])
        if isinstance(role, list) and role[0] == G.R_ADJ:
            self.adjective(role[1], term)
            role = role[2]
        for noun in G.list_items(role):
            r = ROLES[noun]
            self.relate(r.relation, *r.arguments(owner, term))
        return term

    def adjective(self, word: str, term: str) -> None:
        name, value = ADJECTIVES[word]
        self.triples.append((term, ATTRIBUTE_PREDICATES[name], VALUE_TOKENS[(name, value)]))

    def nominal(self, node: Tree, term: str) -> None:
        if isinstance(node, str):
            self.triples.append((term, TYPE_PREDICATE, CLASS_TOKENS[TYPE_NOUNS[node]]))
            return
        rule = node[0]
        if rule == G.N_ADJ:
            self.adjective(node[1], term)
            self.nominal(node[2], term)
        elif rule == G.N_THAT_VP:
            self.nominal(node[1], term)
            self.vp(node[2], term)
        elif rule == G.N_THAT_P:
            self.nominal(node[1], term)
            self.passive(node[2], term)
        else:
            self.nominal(node[1], term)
            self.verbs(node[3], self.np(node[2]), term)

    def question(self, tree: Tree) -> Query:
        rule = tree[0]
        if rule == G.Q_DID:
            self.vp(tree[2], self.np(tree[1]))
            return self.query(None)
        if rule == G.Q_WAS_NP:
            self.np(tree[2], head=self.np(tree[1]))
            return self.query(None)
        if rule == G.Q_WAS_P:
            self.passive(tree[2], self.np(tree[1]))
            return self.query(None)
        answer = self.fresh()
        if rule in (G.Q_WHO, G.Q_WHO_P, G.Q_WHO_NP):
            self.triples.append((answer, TYPE_PREDICATE, CLASS_TOKENS[PERSON]))
            if rule == G.Q_WHO:
                self.vp(tree[1], answer)
            elif rule == G.Q_WHO_P:
                self.passive(tree[1], answer)
            else:
                self.np(tree[1], head=answer)
        elif rule == G.Q_WHAT:
            self.verbs(tree[2], self.np(tree[1]), answer)
        else:
            self.nominal(tree[1], answer)
            if rule == G.Q_WHICH:
                self.vp(tree[2], answer)
            elif rule == G.Q_WHICH_P:
                self.passive(tree[2], answer)
            elif rule == G.Q_WHICH_NP:
                self.np(tree[2], head=answer)
            else:
                self.verbs(tree[3], self.np(tree[2]), answer)
        return self.query(answer)

    def query(self, select: str | None) -> Query:
        return Query(select, tuple(self.triples), tuple(self.filters))


def interpret(tree: Tree) -> Query:
    """The query a question's derivation states (its own variable names; not normalized)."""
    return _Interpreter().question(tree)


# -- measured features ----------------------------------------------------------------------------


def features(tree: Tree) -> dict[str, int]:
    """depth (the most NPs nested: a possessor, or the phrases of a relative clause, are one
    deeper than the NP they are in), conjuncts (the longest list, 1 without lists) and rules."""
    deepest, longest = 0, 1
    stack: list[tuple[Tree, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, str):
            continue
        rule = node[0]
        if rule.startswith("NP -> ") and rule not in G.LIST_RULES:
            deepest = max(deepest, depth)
        if rule in G.LIST_RULES:
            longest = max(longest, len(node) - 1)
        for i, child in enumerate(node[1:], start=1):
            deeper = (rule == G.NP_POSSESSIVE and i == 1) or (rule == G.NP_OF and i == 2) or (rule in G.RELATIVE and i > 1)
            stack.append((child, depth + deeper))
    return {"depth": deepest, "conjuncts": longest, "rules": rule_count(tree)}
