"""CFQ-style questions about a generated knowledge base mapped to SPARQL-like queries (Keysers et al. 2020).

Questions (the grammar: gengap.generators.tasks._cfq_grammar; the words:
gengap.generators.tasks._cfq_lexicon) are yes/no questions (``Did M0 direct M1 ?``, ``Was M0 a
French film director ?``, ``Was M0 produced by M1 and M2 ?``) and wh-questions (``Who
directed and edited M0 ?``, ``What did M0 's spouse produce ?``, ``Which actor that M1
married starred M0 ?``), with conjunctions of verbs, objects, roles and whole predicates
(``M0 's star , editor , and cinematographer``), relative clauses, possessive roles, gender
and nationality modifiers, and entity placeholders ``M0``, ``M1``, ... numbered in order of
appearance, as CFQ writes its questions once their entities are masked.

Target: the question's query (gengap.generators.tasks._cfq_query) in normal form, e.g.
``Who directed and edited M0 ?`` ->
``SELECT DISTINCT ?x0 WHERE { ?x0 a ns:people.person . M0 ns:film.film.directed_by ?x0 .
M0 ns:film.film.edited_by ?x0 }``: ``SELECT count(*)`` for a yes/no question, triples sorted,
variables named canonically (?x0 the answer), a ``FILTER ( a != b )`` with every spouse or
sibling triple. Exact match (``check``) compares a prediction's normal form with the target,
so the order of its triples and the names of its variables do not matter.

Knowledge base: every record carries its knobs (``n_films``, ``n_people``, ``n_companies``,
``world_seed``) in ``meta`` (gengap.generators.kb_world); the question and its query do not
depend on it. :meth:`CfqLike.check_execution` runs a predicted query on it and compares the
answers with a direct evaluation of the question's meaning (gengap.generators.tasks._cfq_meaning)
under several bindings of the placeholders to entities, drawn from the ``binding`` stream of
the question (distinct ones only): up to GROUNDED under which the question's own query has a
solution (a shuffled search, gengap.generators.tasks._cfq_execute.ground), up to RELAXED under
which the query with one of its triples left out has one (the triples chosen at random: where
a query that misses a constraint answers otherwise), and RANDOM uniform over each
placeholder's kind (the answer is mostly empty or no). On the knowledge base about a quarter of
the gold queries answer empty (or no) under every such binding, so that alone would pass any
wrong query that also answers empty: the check first runs the predicted and the reference
query on the reference query's probe worlds (gengap.generators.tasks._cfq_probe: small free
triple stores built from the query, where the gold's answer is never empty and each triple,
and each FILTER, changes it), and they must agree on every one.

Derivation (``structure``): rule applications with the lexical items as leaves (verb lemmas,
role and type nouns, adjectives, placeholders): atoms are the rules and the items, compounds
the connected sub-derivations of 2 to 5 rules (gengap.generators.derivation), as CFQ's atoms and
compounds are its grammar's rule applications and their combinations.

Knobs: ``max_depth`` (NPs nested in possessives and relative clauses), ``max_conjuncts``
(longest list), ``max_modifiers`` (adjectives on a noun) and ``lexicon`` (as the other
compositional tasks: k > 0 writes the same questions with the verbs, nouns and adjectives
permuted within their classes, gengap.generators.tasks._cfq_lexicon.word_classes; the articles
``a``/``an`` stay lexicon 0's, queries are unchanged; records carry meta.lexicon) and
``query_tokens`` (``cfq``: targets write ``SELECT count ( * )`` as CFQ's tokenised queries do;
the checks read either form; records carry meta.query_tokens) and ``constructions`` (``cfq``
adds CFQ's ``a R of NP``, ``Was M0 a director of M1 ?``, and ``Which N was NP ?``, each a rule
of its own; ``base``, the default, draws the records it always has, its seed unchanged: left
out of the canonical parameters at its default); the sampler:
gengap.generators.tasks._cfq_sampler. Features: ``triples`` (the level feature), ``filters``,
``variables``, ``entities`` (placeholders), ``depth``, ``conjuncts`` and ``rules``.
The reference checker parses the question with its own parser (gengap.generators.tasks._cfq_reader)
and builds the query from the derivation with its own interpreter.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from functools import lru_cache
from typing import Any, Mapping

import numpy as np

from gengap.generators.batch import Batch
from gengap.generators.derivation import Tree, rule_count, tree_atoms, tree_compounds
from gengap.generators.gc_pause import paused_gc
from gengap.generators.kb_world import KNOWLEDGE_BASE, KbWorldParams, KnowledgeBase
from gengap.generators.lexicons import LexiconSpec, lexical, lexicon_knob, role_view
from gengap.generators.params import ParamError, knob
from gengap.generators.registry import register
from gengap.generators.seeding import binding_rng
from gengap.generators.sequences import UniformBuffer
from gengap.generators.task import Task
from gengap.generators.tasks import _cfq_grammar as G
from gengap.generators.tasks._cfq_lexicon import word_classes
from gengap.generators.tasks._cfq_execute import ExecutionLimit, execute, ground, placeholder_kinds
from gengap.generators.tasks._cfq_meaning import evaluate
from gengap.generators.tasks._cfq_probe import agrees
from gengap.generators.tasks._cfq_query import TOKENIZATIONS, Query, is_variable, normal_form, parse_query, render
from gengap.generators.tasks._cfq_reader import features, interpret, parse_question
from gengap.generators.tasks._cfq_sampler import Sampler

MAX_DEPTH = 3
MAX_CONJUNCTS = 5
MAX_MODIFIERS = 2
LEVELS = (  # (max_depth, max_conjuncts, max_modifiers) of levels 1..10
    (0, 1, 0), (0, 1, 1), (0, 2, 1), (0, 2, 2), (0, 3, 2), (1, 3, 2), (1, 4, 2), (2, 4, 2), (2, 5, 2), (3, 5, 2),
)  # fmt: skip
SIZE_BOUNDS = (15, 25, 40)  # with_size: the nesting depth is how many of these the size range reaches
GROUNDED = 2  # bindings under which the question's query has a solution (at most)
RELAXED = 8  # bindings under which it has one once one of its triples is left out (at most)
RANDOM = 2  # bindings drawn uniformly over each placeholder's kind
TOKENS_KEY = "query_tokens"  # the parameter and the meta field
CONSTRUCTIONS_KEY = "constructions"
FEATURES = ("triples", "filters", "variables", "entities", "depth", "conjuncts", "rules")


@dataclasses.dataclass(frozen=True)
class CfqParams(KbWorldParams):
    """The knowledge base's knobs and the three knobs of the questions."""

    max_depth: int = knob(2, lo=0, hi=MAX_DEPTH, doc="most NPs nested in possessives and relative clauses")
    max_conjuncts: int = knob(3, lo=1, hi=MAX_CONJUNCTS, doc="most items of a list (verbs, objects, roles, predicates)")
    max_modifiers: int = knob(2, lo=0, hi=MAX_MODIFIERS, doc="most adjectives (gender, nationality) on a noun")
    lexicon: int = lexicon_knob()
    query_tokens: str = knob("gengap", choices=TOKENIZATIONS, rendering=True,
                             doc="how targets write SELECT count(*): gengap (count(*) one token) or cfq (CFQ's count ( * )); "
                                 "the same examples, records carry meta.query_tokens")
    constructions: str = knob("base", choices=G.CONSTRUCTIONS, added=True,
                              doc="base, or cfq: also CFQ's 'a R of NP' (Was M0 a director of M1 ?) and 'Which N was NP ?'")

    def canonical(self) -> str:
        """Params.canonical, without constructions at its default (base draws what it always has)."""
        text = super().canonical()
        if self.constructions != "base":
            return text
        values = json.loads(text)
        del values[CONSTRUCTIONS_KEY]
        return json.dumps(values, sort_keys=True, separators=(",", ":"))


LEXICON = LexiconSpec("cfq_like", word_classes)


def query_features(query: Query) -> dict[str, int]:
    """triples, filters, variables and entities (placeholders) of a query in normal form."""
    return {"triples": len(query.triples), "filters": len(query.filters), "variables": len(query.variables()),
            "entities": len(query.placeholders())}


@register
@lexical(LEXICON)
class CfqLike(Task[CfqParams]):
    """A question about films, people and companies -> its SPARQL-like query (CFQ-style)."""

    name = "cfq_like"
    family = "compositional"
    description = "CFQ-style English question over a generated knowledge base (placeholders M0..) -> SPARQL-like query"
    params_type = CfqParams
    size_knob = "nesting depth (max_depth): 0, 1, 2 or 3 for a size range up to fewer than 15, 25, 40 or more tokens"
    level_feature = "triples"
    test_caps = {"max_depth": 3, "n_films": 60, "n_people": 80, "n_companies": 8}

    def levels(self) -> dict[int, CfqParams]:
        return {k: CfqParams(max_depth=d, max_conjuncts=c, max_modifiers=m) for k, (d, c, m) in enumerate(LEVELS, start=1)}

    def with_size(self, lo: int, hi: int) -> CfqParams:
        """Default parameters with the nesting depth that keeps most inputs within hi tokens."""
        if hi < 4:
            raise ParamError(f"{self.name}: a question has at least 4 tokens, got a size range up to {hi}")
        depth = sum(hi >= bound for bound in SIZE_BOUNDS)
        return self.default_params().replace(max_depth=depth)

    @paused_gc()
    def generate(self, rng: np.random.Generator, n: int, params: CfqParams) -> Batch:
        stream = UniformBuffer(rng)
        sampler = Sampler(lambda: stream.take(1)[0], params.max_depth, params.max_conjuncts, params.max_modifiers,
                          params.constructions)
        inputs, targets, trees = [], [], []
        columns: dict[str, list[int]] = {name: [] for name in FEATURES}
        for _ in range(n):
            tokens, tree, query, measured = sampler.question()
            normal = normal_form(query)
            inputs.append(" ".join(tokens))
            targets.append(render(normal, params.query_tokens))
            trees.append(tree)
            for name, value in {**query_features(normal), **measured, "rules": rule_count(tree)}.items():
                columns[name].append(value)
        meta = {**params.world_knobs(), **({TOKENS_KEY: params.query_tokens} if params.query_tokens != "gengap" else {})}
        return Batch.from_lists(inputs, targets, columns, structure=trees, meta=meta)

    # -- the reference checker ----------------------------------------------------------------

    def derive(self, example: Mapping[str, Any]) -> Tree:
        return parse_question(str(example["input"]))

    def reference_query(self, example: Mapping[str, Any]) -> Query:
        """The query of the record's question (in any lexicon), read by the reference parser, in normal form."""
        return normal_form(interpret(self.derive(role_view(LEXICON, example))))

    def solve(self, example: Mapping[str, Any]) -> str:
        return render(self.reference_query(example), query_tokens(example))

    def check_answer(self, example: Mapping[str, Any], prediction: str) -> bool:
        """Exact match of normal forms: the prediction read as a query and normalized equals the
        reference query (triple order and variable names do not matter)."""
        try:
            reference = self.reference_query(example)
            query = parse_query(prediction)
            if _shape(query) != _shape(reference):  # renaming keeps the shape: no naming search for a query that cannot match
                return False
            predicted = render(normal_form(query))
        except (ValueError, KeyError, IndexError, TypeError):
            return False
        return predicted == render(reference)

    def measure(self, example: Mapping[str, Any]) -> dict[str, int]:
        tree = self.derive(example)
        return {**query_features(self.reference_query(example)), **features(tree)}

    def atoms(self, example: Mapping[str, Any]) -> Counter[str]:
        return tree_atoms(self.structure_of(example))

    def compounds(self, example: Mapping[str, Any], abstract_lexical: bool = False) -> Counter[str]:
        return tree_compounds(self.structure_of(example), abstract_lexical)

    def meta_problem(self, example: Mapping[str, Any]) -> str | None:
        """Task.meta_problem, and the knowledge base's knobs in meta (what check_execution builds
        its world from: ``meta.n_people=10**9`` would ask for a world of a billion people) each
        present and within its parameter's range. The answer check reads no meta."""
        problem = super().meta_problem(example)
        if problem is not None:
            return problem
        meta = example.get("meta")
        if isinstance(meta, Mapping) and meta.get(TOKENS_KEY, "gengap") not in TOKENIZATIONS:
            return f"meta.{TOKENS_KEY}={meta[TOKENS_KEY]!r} is not one of {', '.join(TOKENIZATIONS)}"
        for key in KNOWLEDGE_BASE.keys:
            if not isinstance(meta, Mapping) or key not in meta:
                return f"meta.{key} is missing ({self.name}'s execution check reads it)"
            found = self.params_type.value_problem(key, meta[key])
            if found is not None:
                return found.replace(f"parameter {key}", f"meta.{key}", 1)
        return None

    # -- execution ----------------------------------------------------------------------------

    def knowledge_base(self, example: Mapping[str, Any]) -> KnowledgeBase:
        meta = example.get("meta")
        if not isinstance(meta, Mapping):
            raise ValueError("meta is missing")
        return KNOWLEDGE_BASE.of(meta)

    def bindings(self, example: Mapping[str, Any]) -> list[dict[str, int]]:
        """The bindings of the question's placeholders an execution check uses (see the module doc)."""
        view = role_view(LEXICON, example)  # a record of lexicon k binds as its lexicon-0 twin
        return [dict(binding) for binding in _bindings(self.knowledge_base(view), str(view["input"]))]

    def check_execution(self, example: Mapping[str, Any], prediction: str) -> bool:
        """Whether the predicted query answers as the reference query on every probe world of it
        (gengap.generators.tasks._cfq_probe) and, run on the record's knowledge base, gives the
        answers of the question's meaning under every binding of :meth:`bindings` (False for a
        prediction that is not a query, mentions a placeholder the question has not, or runs too long).
        A record of lexicon k is checked as its lexicon-0 twin (queries hold no words of a lexicon)."""
        try:
            example = role_view(LEXICON, example)
            kb = self.knowledge_base(example)
            tree = self.derive(example)
            predicted = parse_query(prediction)
            if not agrees(predicted, normal_form(interpret(tree))):
                return False
            bindings = _bindings(kb, str(example["input"]))
            for binding in bindings:
                if execute(predicted, kb, binding) != evaluate(tree, kb, binding):
                    return False
        except (ValueError, KeyError, IndexError, TypeError, ExecutionLimit):
            return False
        return True


def query_tokens(example: Mapping[str, Any]) -> str:
    """How the record's target writes count(*): ``meta.query_tokens``, gengap without it."""
    meta = example.get("meta")
    return str(meta.get(TOKENS_KEY, "gengap")) if isinstance(meta, Mapping) else "gengap"


def _shape(query: Query) -> tuple[Any, ...]:
    """What renaming the variables of a query leaves as it is: whether it selects one, its
    filter count and the sorted triples with every variable written ``?`` (a bound on the work
    of comparing a prediction: a 5 KB prediction of 99 spouse pairs is not searched for names)."""
    def blank(term: str) -> str:
        return "?" if is_variable(term) else term

    triples = sorted((blank(s), p, blank(o)) for s, p, o in set(query.triples))
    return query.select is None, len({tuple(sorted(f)) for f in query.filters}), tuple(triples)


@lru_cache(maxsize=4096)
def _bindings(kb: KnowledgeBase, question: str) -> tuple[dict[str, int], ...]:
    query = normal_form(interpret(parse_question(question)))
    kinds = placeholder_kinds(query)
    if not kinds:
        return ({},)
    rng = binding_rng(CfqLike.name, question)
    found: list[dict[str, int]] = []

    def add(binding: dict[str, int] | None) -> None:
        if binding is None:
            return
        for placeholder, kind in sorted(kinds.items()):
            if placeholder not in binding:  # left out with the triple: any entity of its kind
                entities = kb.entities(kind)
                binding[placeholder] = entities.start + int(rng.integers(0, len(entities)))
        if binding not in found:
            found.append(binding)

    for _ in range(GROUNDED):
        binding = ground(query, kb, rng)
        if binding is None:
            break  # none, or none within the search's budget: another order will not do better
        add(binding)
    triples = list(query.triples)
    for i in rng.permutation(len(triples))[:RELAXED].tolist():
        add(ground(Query(None, tuple(triples[:i] + triples[i + 1 :]), query.filters), kb, rng))
    for _ in range(RANDOM):
        add({})
    return tuple(found)
