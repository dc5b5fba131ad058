"""Queries of a facts world (gengap.generators.worlds): lookup, reversal, composition, comparison.

Every task draws its world from its world knobs (n_entities, n_relations, n_attributes,
n_values, world_seed), which every record carries in ``meta``; the checker rebuilds the
world from them and recomputes the answer from the input. Records of one world setting
share one world whatever the task, the seed or the split part.

==================  ==========================  ========  =====================================
task                input                       target    derivation (``structure``)
==================  ==========================  ========  =====================================
``fact_lookup``     ``e17 r3``                  ``e42``   ``["lookup", "e17 r3 e42"]``
``fact_reverse``    ``e42 r3^-1``               ``e17``   ``["reverse", "e17 r3 e42"]``
``fact_two_hop``    ``e17 r3 r1``               ``e5``    ``["compose", ["lookup", "e17 r3 e42"],
                                                          ["lookup", "e42 r1 e5"]]``
``fact_compare``    ``e17 e8 a1``               ``<``     ``["compare", ["attribute", "e17 a1 v2"],
                                                          ["attribute", "e8 a1 v7"]]``
==================  ==========================  ========  =====================================

Atomic records: a share ``atomic_share`` of the records of fact_reverse, fact_two_hop and
fact_compare are the atomic facts their queries rest on (a forward lookup ``e17 r3`` ->
``e42`` with derivation ``["lookup", fact]``; for fact_compare an attribute lookup
``e17 a1`` -> ``v2`` with ``["attribute", fact]``), so one task's pool holds the facts a
split pins to train (gengap.splits.facts). ``enumerate`` lists every atomic fact, then every query.

fact_two_hop composes ``hops`` relations at most (2..hops, uniform): ``e r_1 .. r_k`` ->
``r_k(..r_1(e))``; the entities in between are its bridges. fact_compare's target is ``<``,
``=`` or ``>``: the first entity's attribute value against the second's (two distinct
entities).

Features: ``hops`` (relations followed: 0 for an attribute lookup or a comparison, 1 for a
lookup or a reversal, k for a composition), ``entities`` (the world's size: the level
feature), ``atomic`` (1 for an atomic record).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any, ClassVar, Mapping

import numpy as np

from gengap.generators.batch import Batch
from gengap.generators.derivation import Tree, tree_atoms, tree_compounds
from gengap.generators.lexicons import SYLLABLES, LexiconSpec, WordClass, lexical, lexicon_knob, made_up_words
from gengap.generators.params import ParamError, knob
from gengap.generators.registry import register
from gengap.generators.task import Task
from gengap.generators.worlds import (
    MAX_ENTITIES,
    WORLD_KEYS,
    FactsWorld,
    WorldParams,
    attribute_fact,
    fact,
    index_of,
    world_of,
)

# (n_entities, n_relations, n_attributes, n_values, most hops) of levels 1..10
WORLD_LEVELS = (
    (20, 2, 1, 5, 2), (30, 2, 2, 8, 2), (50, 3, 2, 10, 2), (80, 3, 3, 12, 2), (120, 4, 3, 16, 2),
    (160, 4, 4, 20, 3), (200, 5, 4, 25, 3), (300, 6, 5, 32, 3), (500, 8, 6, 50, 4), (1000, 8, 8, 100, 4),
)  # fmt: skip
MAX_HOPS = 6
COMPARISONS = ("<", "=", ">")
MAX_RELATIONS = 64
INVERSE = "^-1"


def _word_classes() -> tuple[WordClass, ...]:
    """Entities and relations; a lexicon k > 0 names them with made-up words (entities three
    syllables, relations two: ``e17`` -> ``kobera``, ``r3`` -> ``tuni`` and ``r3^-1`` -> ``tuni^-1``)."""
    entities = WordClass(
        "entity", [(f"e{i}",) for i in range(MAX_ENTITIES)], len(SYLLABLES) ** 3, lambda js: [(w,) for w in made_up_words(js, 3)]
    )
    relations = WordClass(
        "relation", [(f"r{i}", f"r{i}{INVERSE}") for i in range(MAX_RELATIONS)], len(SYLLABLES) ** 2,
        lambda js: [(w, w + INVERSE) for w in made_up_words(js, 2)],
    )
    return entities, relations


LEXICON = LexiconSpec("facts", _word_classes)  # one lexicon for every facts task: same names for one world


@dataclasses.dataclass(frozen=True)
class FactParams(WorldParams):
    """A world's knobs and the lexicon its entities and relations are named in."""

    lexicon: int = lexicon_knob()


@dataclasses.dataclass(frozen=True)
class LookupParams(FactParams):
    """A world's knobs and the lexicon (fact_lookup has no others)."""


@dataclasses.dataclass(frozen=True)
class AtomicShareParams(FactParams):
    """A world's knobs and the share of atomic records."""

    atomic_share: float = knob(0.5, lo=0.0, hi=1.0, doc="share of records that are the atomic facts the queries rest on")


@dataclasses.dataclass(frozen=True)
class TwoHopParams(FactParams):
    """A world's knobs, the share of atomic records and the most relations a query composes."""

    atomic_share: float = knob(0.25, lo=0.0, hi=1.0, doc="share of records that are atomic facts (one-relation lookups)")
    hops: int = knob(2, lo=2, hi=MAX_HOPS, doc="most relations a query composes (2..hops, uniform)")


@dataclasses.dataclass(frozen=True)
class CompareParams(FactParams):
    """A world's knobs and the share of atomic (attribute lookup) records."""

    atomic_share: float = knob(0.5, lo=0.0, hi=1.0, doc="share of records that are attribute lookups (e a -> v)")


def _world_level(k: int) -> dict[str, int]:
    n, relations, attributes, values, _ = WORLD_LEVELS[k - 1]
    return {"n_entities": n, "n_relations": relations, "n_attributes": attributes, "n_values": values}


def _tokens(example: Mapping[str, Any], count: int) -> list[str]:
    tokens = str(example["input"]).split()
    if len(tokens) != count:
        raise ValueError(f"expected {count} input tokens, got {len(tokens)}")
    return tokens


class FactTask(Task[Any]):
    """What the fact tasks share: the world from meta, features, atoms and compounds."""

    family: ClassVar[str] = "reasoning"
    meta_keys = WORLD_KEYS
    size_knob = "entities of the world (n_entities)"
    level_feature = "entities"
    test_caps: ClassVar[dict[str, int]] = {"n_entities": 40, "n_relations": 4, "n_attributes": 3, "hops": 4, "lexicon": 3}  # lexicon: each costs ~0.2 s to build

    def levels(self) -> dict[int, Any]:
        """Worlds of 20 .. 1000 entities (WORLD_LEVELS)."""
        return {k: self.params_type(**_world_level(k)) for k in range(1, 11)}

    def world(self, example: Mapping[str, Any]) -> FactsWorld:
        meta = example.get("meta")
        if not isinstance(meta, Mapping):
            raise ValueError("meta is missing")
        return world_of(meta)

    def with_size(self, lo: int, hi: int) -> Any:
        """Default parameters with a world of hi entities (a world has one size)."""
        if hi < 2:
            raise ParamError(f"{self.name}: a world has at least 2 entities, got a size range up to {hi}")
        return self.default_params().replace(n_entities=hi)

    def _batch(self, params: WorldParams, inputs: list[str], targets: list[str], trees: list[Tree],
               hops: list[int], atomic: list[int]) -> Batch:
        features = {"hops": hops, "entities": [params.n_entities] * len(inputs), "atomic": atomic}
        return Batch.from_lists(inputs, targets, features, structure=trees, meta=params.world_knobs())

    def measure(self, example: Mapping[str, Any]) -> dict[str, int] | None:
        tree = self.derive(example)
        kind = tree[0]
        hops = len(tree) - 1 if kind == "compose" else 1 if kind in ("lookup", "reverse") else 0
        return {"hops": hops, "entities": self.world(example).n_entities, "atomic": int(kind in ("lookup", "attribute"))}

    def enumeration_size(self, params: Any) -> int:
        """enumerate lists every input once."""
        return self.input_space_size(params)

    def atoms(self, example: Mapping[str, Any]) -> Counter[str]:
        return tree_atoms(self.structure_of(example))

    def compounds(self, example: Mapping[str, Any], abstract_lexical: bool = False) -> Counter[str]:
        return tree_compounds(self.structure_of(example), abstract_lexical)

    def solve(self, example: Mapping[str, Any]) -> str:
        tree = self.derive(example)
        return _answer_of(tree)

    def possible_answer(self, example: Mapping[str, Any], answer: str) -> bool:
        """Answers are the world's entities e0..e{n_entities-1} (meta.n_entities)."""
        return _indexed(answer, "e", self.meta(example, "n_entities"))

    def _lookup_tree(self, world: FactsWorld, tokens: list[str]) -> Tree:
        n = world.n_entities
        h = index_of(tokens[0], "e", n)
        r = index_of(tokens[1], "r", world.tails.shape[0])
        return ["lookup", fact(h, r, world.tail(h, r))]


def _indexed(token: str, prefix: str, size: int) -> bool:
    """Whether token is {prefix}{i} with 0 <= i < size (gengap.generators.worlds.index_of)."""
    try:
        index_of(token, prefix, size)
    except ValueError:
        return False
    return True


def _answer_of(tree: Tree) -> str:
    """The answer a derivation states: the last fact's tail, or the comparison of two values."""
    kind = tree[0]
    if kind in ("lookup", "attribute"):
        return tree[1].split()[2]
    if kind == "reverse":
        return tree[1].split()[0]
    if kind == "compose":
        return tree[-1][1].split()[2]
    first, second = (int(child[1].split()[2][1:]) for child in tree[1:])
    return COMPARISONS[(first > second) - (first < second) + 1]


@register
@lexical(LEXICON)
class FactLookup(FactTask):
    """e r -> the tail of the atomic fact (e, r, t)."""

    name = "fact_lookup"
    description = "facts world: atomic lookup, entity and relation -> the related entity (e17 r3 -> e42)"
    params_type = LookupParams

    def generate(self, rng: np.random.Generator, n: int, params: LookupParams) -> Batch:
        world = params.world()
        heads = rng.integers(0, params.n_entities, size=n)
        relations = rng.integers(0, params.n_relations, size=n)
        return self._lookups(params, world, heads.tolist(), relations.tolist())

    def _lookups(self, params: WorldParams, world: FactsWorld, heads: list[int], relations: list[int]) -> Batch:
        tails = world.tails[relations, heads].tolist() if heads else []
        inputs = [f"e{h} r{r}" for h, r in zip(heads, relations)]
        targets = [f"e{t}" for t in tails]
        trees: list[Tree] = [["lookup", fact(h, r, t)] for h, r, t in zip(heads, relations, tails)]
        return self._batch(params, inputs, targets, trees, [1] * len(inputs), [1] * len(inputs))

    def derive(self, example: Mapping[str, Any]) -> Tree:
        return self._lookup_tree(self.world(example), _tokens(example, 2))

    def input_space_size(self, params: LookupParams) -> int:
        return params.n_entities * params.n_relations

    def enumerate(self, params: LookupParams) -> Batch:
        heads, relations = _all_pairs(params.n_entities, params.n_relations)
        return self._lookups(params, params.world(), heads, relations)


def _all_pairs(n_entities: int, n_relations: int) -> tuple[list[int], list[int]]:
    """Every (entity, relation), relations outermost."""
    return [h for _ in range(n_relations) for h in range(n_entities)], [r for r in range(n_relations) for _ in range(n_entities)]


@register
@lexical(LEXICON)
class FactReverse(FactTask):
    """e2 r^-1 -> e1 for the atomic fact (e1, r, e2); a share of records are forward lookups."""

    name = "fact_reverse"
    description = "facts world: reversed lookup, tail and inverse relation -> the head (e42 r3^-1 -> e17), with the forward facts"
    params_type = AtomicShareParams

    def generate(self, rng: np.random.Generator, n: int, params: AtomicShareParams) -> Batch:
        heads = rng.integers(0, params.n_entities, size=n).tolist()
        relations = rng.integers(0, params.n_relations, size=n).tolist()
        forward = (rng.random(n) < params.atomic_share).tolist()
        return self._records(params, heads, relations, forward)

    def _records(self, params: AtomicShareParams, heads: list[int], relations: list[int], forward: list[bool]) -> Batch:
        world = params.world()
        tails = world.tails[relations, heads].tolist() if heads else []
        inputs, targets, trees = [], [], []
        for h, r, t, f in zip(heads, relations, tails, forward):
            inputs.append(f"e{h} r{r}" if f else f"e{t} r{r}^-1")
            targets.append(f"e{t}" if f else f"e{h}")
            trees.append(["lookup" if f else "reverse", fact(h, r, t)])
        ones = [1] * len(inputs)
        return self._batch(params, inputs, targets, trees, ones, [int(f) for f in forward])

    def derive(self, example: Mapping[str, Any]) -> Tree:
        world = self.world(example)
        tokens = _tokens(example, 2)
        if not tokens[1].endswith("^-1"):
            return self._lookup_tree(world, tokens)
        t = index_of(tokens[0], "e", world.n_entities)
        r = index_of(tokens[1][:-3], "r", world.tails.shape[0])
        return ["reverse", fact(world.head(t, r), r, t)]

    def input_space_size(self, params: AtomicShareParams) -> int:
        return 2 * params.n_entities * params.n_relations

    def enumerate(self, params: AtomicShareParams) -> Batch:
        heads, relations = _all_pairs(params.n_entities, params.n_relations)
        size = len(heads)
        return self._records(params, heads * 2, relations * 2, [True] * size + [False] * size)


@register
@lexical(LEXICON)
class FactTwoHop(FactTask):
    """e r1 .. rk -> rk(..r1(e)) (2 <= k <= hops); a share of records are atomic lookups."""

    name = "fact_two_hop"
    description = "facts world: composition, entity and 2..hops relations -> the entity they lead to (e17 r3 r1 -> e5), with the atomic facts"
    params_type = TwoHopParams

    def levels(self) -> dict[int, TwoHopParams]:
        return {k: TwoHopParams(**_world_level(k), hops=WORLD_LEVELS[k - 1][4]) for k in range(1, 11)}

    def generate(self, rng: np.random.Generator, n: int, params: TwoHopParams) -> Batch:
        heads = rng.integers(0, params.n_entities, size=n).tolist()
        atomic = (rng.random(n) < params.atomic_share).tolist()
        lengths = rng.integers(2, params.hops + 1, size=n).tolist()
        paths = rng.integers(0, params.n_relations, size=(n, params.hops)).tolist()
        chains = [path[:1] if a else path[:k] for path, a, k in zip(paths, atomic, lengths)]
        return self._records(params, heads, chains)

    def _records(self, params: TwoHopParams, heads: list[int], chains: list[list[int]]) -> Batch:
        tails = params.world().tails.tolist()
        inputs, targets, trees, hops = [], [], [], []
        for h, chain in zip(heads, chains):
            facts: list[Tree] = []
            here = h
            for r in chain:
                there = tails[r][here]
                facts.append(["lookup", fact(here, r, there)])
                here = there
            inputs.append(f"e{h} " + " ".join(f"r{r}" for r in chain))
            targets.append(f"e{here}")
            trees.append(facts[0] if len(facts) == 1 else ["compose", *facts])
            hops.append(len(chain))
        return self._batch(params, inputs, targets, trees, hops, [int(k == 1) for k in hops])

    def derive(self, example: Mapping[str, Any]) -> Tree:
        world = self.world(example)
        tokens = str(example["input"]).split()
        if not 2 <= len(tokens) <= MAX_HOPS + 1:
            raise ValueError(f"expected an entity and 1..{MAX_HOPS} relations, got {len(tokens)} tokens")
        here = index_of(tokens[0], "e", world.n_entities)
        facts: list[Tree] = []
        for token in tokens[1:]:
            r = index_of(token, "r", world.tails.shape[0])
            there = world.tail(here, r)
            facts.append(["lookup", fact(here, r, there)])
            here = there
        return facts[0] if len(facts) == 1 else ["compose", *facts]

    def input_space_size(self, params: TwoHopParams) -> int:
        return params.n_entities * sum(params.n_relations**k for k in range(1, params.hops + 1))

    def enumerate(self, params: TwoHopParams) -> Batch:
        """Every atomic fact, then every query of 2..hops relations (heads outermost)."""
        heads, chains = [], []
        for k in range(1, params.hops + 1):
            for h in range(params.n_entities):
                for code in range(params.n_relations**k):
                    chain = []
                    for _ in range(k):
                        code, r = divmod(code, params.n_relations)
                        chain.append(r)
                    heads.append(h)
                    chains.append(chain[::-1])
        return self._records(params, heads, chains)


@register
@lexical(LEXICON)
class FactCompare(FactTask):
    """e1 e2 a -> <, = or >: attribute a of e1 against that of e2; a share are attribute lookups."""

    name = "fact_compare"
    description = "facts world: comparison, two entities and an attribute -> <, = or > (e17 e8 a1 -> <), with the attribute facts"
    params_type = CompareParams

    def possible_answer(self, example: Mapping[str, Any], answer: str) -> bool:
        """Answers are <, = and > (comparisons) and the values v0..v{n_values-1} (attribute lookups)."""
        return answer in COMPARISONS or _indexed(answer, "v", self.meta(example, "n_values"))

    def generate(self, rng: np.random.Generator, n: int, params: CompareParams) -> Batch:
        firsts = rng.integers(0, params.n_entities, size=n)
        seconds = (firsts + rng.integers(1, params.n_entities, size=n)) % params.n_entities  # distinct
        attributes = rng.integers(0, params.n_attributes, size=n).tolist()
        atomic = (rng.random(n) < params.atomic_share).tolist()
        pairs = [(a, None if lookup else b) for a, b, lookup in zip(firsts.tolist(), seconds.tolist(), atomic)]
        return self._records(params, pairs, attributes)

    def _records(self, params: CompareParams, pairs: list[tuple[int, int | None]], attributes: list[int]) -> Batch:
        values = params.world().values.tolist()
        inputs, targets, trees = [], [], []
        for (a, b), k in zip(pairs, attributes):
            va = values[k][a]
            first: Tree = ["attribute", attribute_fact(a, k, va)]
            if b is None:
                inputs.append(f"e{a} a{k}")
                targets.append(f"v{va}")
                trees.append(first)
                continue
            vb = values[k][b]
            inputs.append(f"e{a} e{b} a{k}")
            targets.append(COMPARISONS[(va > vb) - (va < vb) + 1])
            trees.append(["compare", first, ["attribute", attribute_fact(b, k, vb)]])
        atomic = [int(b is None) for _, b in pairs]
        return self._batch(params, inputs, targets, trees, [0] * len(inputs), atomic)

    def derive(self, example: Mapping[str, Any]) -> Tree:
        world = self.world(example)
        tokens = str(example["input"]).split()
        if len(tokens) not in (2, 3):
            raise ValueError(f"expected 2 or 3 input tokens, got {len(tokens)}")
        k = index_of(tokens[-1], "a", world.values.shape[0])
        entities = [index_of(token, "e", world.n_entities) for token in tokens[:-1]]
        leaves: list[Tree] = [["attribute", attribute_fact(e, k, world.value(e, k))] for e in entities]
        if len(leaves) == 1:
            return leaves[0]
        if entities[0] == entities[1]:
            raise ValueError("a comparison needs two distinct entities")
        return ["compare", *leaves]

    def input_space_size(self, params: CompareParams) -> int:
        n = params.n_entities
        return params.n_attributes * (n + n * (n - 1))

    def enumerate(self, params: CompareParams) -> Batch:
        """Every attribute fact, then every comparison (attributes outermost)."""
        n, count = params.n_entities, params.n_attributes
        pairs: list[tuple[int, int | None]] = [(a, None) for _ in range(count) for a in range(n)]
        attributes = [k for k in range(count) for _ in range(n)]
        for k in range(count):
            for a in range(n):
                for b in range(n):
                    if a != b:
                        pairs.append((a, b))
                        attributes.append(k)
        return self._records(params, pairs, attributes)
