"""pcfg_set and cogs_like: hand-worked examples, checker, parsers, structure consistency."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from gengap.generators import ParamError, get_task
from gengap.generators.tasks.cogs_like import CogsParams, interpret, parse_sentence
from gengap.generators.derivation import internal_nodes, rule_count, tree_depth
from gengap.generators.tasks.pcfg_set import SYMBOLS, PcfgSetParams, evaluate, parse_program

PCFG = get_task("pcfg_set")
COGS = get_task("cogs_like")


def leaves(tree: object) -> list[str]:
    """Lexical leaves of a derivation, left to right."""
    if isinstance(tree, str):
        return [tree]
    return [leaf for child in tree[1:] for leaf in leaves(child)]


# -- pcfg_set ---------------------------------------------------------------------------

PCFG_CASES = [
    ("copy A1 B1 C1", "A1 B1 C1"),
    ("reverse A1 B1 C1", "C1 B1 A1"),
    ("shift A1 B1 C1", "B1 C1 A1"),
    ("shift A1", "A1"),
    ("echo A1 B1 C1", "A1 B1 C1 C1"),
    ("echo A1", "A1 A1"),
    ("swap_first_last A1 B1 C1 D1", "D1 B1 C1 A1"),
    ("swap_first_last A1 B1", "B1 A1"),
    ("swap_first_last A1", "A1"),
    ("repeat A1 B1", "A1 B1 A1 B1"),
    ("append A1 B1 , C1 D1", "A1 B1 C1 D1"),
    ("prepend A1 B1 , C1 D1", "C1 D1 A1 B1"),
    ("remove_first A1 B1 , C1 D1", "C1 D1"),
    ("remove_second A1 B1 , C1 D1", "A1 B1"),
    ("append swap_first_last A2 B1 C3 , prepend A1 B2 , C1", "C3 B1 A2 C1 A1 B2"),
    ("echo remove_first shift A1 B1 , reverse C1 D1 E1", "E1 D1 C1 C1"),
    ("append append A1 , B1 , C1", "A1 B1 C1"),
    ("prepend remove_second A1 , B1 , repeat C1", "C1 C1 A1"),
    ("repeat repeat shift Z20 A1", "A1 Z20 A1 Z20 A1 Z20 A1 Z20"),
]


@pytest.mark.parametrize("program,output", PCFG_CASES)
def test_pcfg_hand_worked(program: str, output: str) -> None:
    example = {"input": program}
    assert PCFG.solve(example) == output
    assert PCFG.check(example, output)
    assert not PCFG.check(example, output + " A1")
    assert not PCFG.check(example, " ".join(reversed(output.split())) + " B1")


def test_pcfg_checker_rejects_wrong_answers() -> None:
    example = {"input": "append swap_first_last A2 B1 C3 , prepend A1 B2 , C1"}
    for wrong in ("C3 B1 A2 A1 B2 C1", "A2 B1 C3 C1 A1 B2", "C3 B1 A2 C1 A1", "C3 B1 A2 C1 A1 B2 B2"):
        assert not PCFG.check(example, wrong)


@pytest.mark.parametrize(
    "program",
    ["", "append A1 B1", "copy", "A1 , B1", "reverse A1 , B1", "copy A1 Z21", "copy a1", "append A1 , ", "echo , A1"],
)
def test_pcfg_malformed_programs(program: str) -> None:
    with pytest.raises(ValueError):
        PCFG.solve({"input": program})
    assert not PCFG.check({"input": program}, "A1")


def test_pcfg_parse_tree() -> None:
    assert parse_program("append swap_first_last A2 B1 C3 , prepend A1 B2 , C1") == [
        "X -> append X , X",
        ["X -> swap_first_last X", ["X -> SYM+", "A2", "B1", "C3"]],
        ["X -> prepend X , X", ["X -> SYM+", "A1", "B2"], ["X -> SYM+", "C1"]],
    ]


def test_pcfg_symbols_follow_pcfg_set() -> None:
    assert SYMBOLS[:3] == ("A1", "B1", "C1") and SYMBOLS[25] == "Z1" and SYMBOLS[26] == "A2"
    assert SYMBOLS[-1] == "Z20" and len(SYMBOLS) == 520
    batch = PCFG.generate(np.random.default_rng(0), 200, PCFG.default_params().replace(alphabet_size=26))
    for record in batch.records("pcfg_set"):
        assert all(tok.endswith("1") and len(tok) == 2 for tok in record["target"].split())


@pytest.mark.parametrize("level", [1, 4, 7, 10])
def test_pcfg_structure_and_features_consistent(level: int) -> None:
    params = PCFG.level(level)
    batch = PCFG.generate(np.random.default_rng(level), 150, params)
    for record in batch.records("pcfg_set"):
        tree, feats = record["structure"], record["difficulty"]
        assert parse_program(record["input"]) == tree
        assert " ".join(evaluate(tree)) == record["target"]
        functions = [node for node in internal_nodes(tree) if node[0] != "X -> SYM+"]
        arguments = [node for node in internal_nodes(tree) if node[0] == "X -> SYM+"]
        assert feats["functions"] == len(functions)
        assert params.min_functions <= feats["functions"] <= params.max_functions
        assert feats["arguments"] == len(arguments)
        assert feats["argument_symbols"] == sum(len(node) - 1 for node in arguments)
        assert feats["max_argument_length"] == max(len(node) - 1 for node in arguments)
        assert feats["depth"] == tree_depth(tree) - 1 <= params.max_depth
        assert feats["derivation_depth"] == tree_depth(tree)
        assert feats["rules"] == rule_count(tree)
        assert PCFG.atoms(record) == PCFG.atoms({"structure": parse_program(record["input"])})


def test_pcfg_atoms_and_compounds() -> None:
    record = {"structure": parse_program("append reverse A1 B1 , A1")}
    assert PCFG.atoms(record) == {"X -> append X , X": 1, "X -> reverse X": 1, "X -> SYM+": 2, "A1": 2, "B1": 1}
    compounds = PCFG.compounds(record, abstract_lexical=True)
    assert compounds["X -> append X , X(X -> reverse X(_),_)"] == 1  # parent-child
    assert compounds["X -> append X , X(X -> reverse X(_),X -> SYM+(*))"] == 1  # parent with all children
    assert compounds["X -> reverse X(X -> SYM+(*,*))"] == 1
    assert all(text.count("(") >= 2 for text in compounds)  # at least two rule nodes each


def test_pcfg_deterministic() -> None:
    a = PCFG.generate(np.random.default_rng(5), 50, PCFG.default_params())
    b = PCFG.generate(np.random.default_rng(5), 50, PCFG.default_params())
    assert a.inputs.tolist() == b.inputs.tolist() and a.structure == b.structure


def _programs(k: int, depth: int, strings: list[str]) -> list[str]:
    """Every program with exactly k functions and nesting depth <= depth (brute force)."""
    if k == 0:
        return list(strings)
    if depth == 0:
        return []
    out = [f"{f} {x}" for f in ("copy", "reverse", "shift", "echo", "swap_first_last", "repeat")
           for x in _programs(k - 1, depth - 1, strings)]  # fmt: skip
    for a in range(k):
        for x, y in itertools.product(_programs(a, depth - 1, strings), _programs(k - 1 - a, depth - 1, strings)):
            out += [f"{f} {x} , {y}" for f in ("append", "prepend", "remove_first", "remove_second")]
    return out


def test_pcfg_input_space_size() -> None:
    tiny = PcfgSetParams(
        min_functions=1, max_functions=1, max_depth=1, min_arg_length=1, max_arg_length=1, alphabet_size=2
    )
    assert PCFG.input_space_size(tiny) == 6 * 2 + 4 * 2 * 2
    seen = {r["input"] for r in PCFG.generate(np.random.default_rng(0), 3000, tiny).records("pcfg_set")}
    assert len(seen) == 28
    params = PcfgSetParams(
        min_functions=1, max_functions=3, max_depth=2, min_arg_length=1, max_arg_length=2, alphabet_size=2
    )
    strings = ["A1", "B1", "A1 A1", "A1 B1", "B1 A1", "B1 B1"]
    programs = [p for k in range(1, 4) for p in _programs(k, 2, strings)]
    assert len(set(programs)) == len(programs) == PCFG.input_space_size(params)
    assert PCFG.input_space_size(PCFG.with_size(100, 200)) is None


def test_pcfg_params_validation() -> None:
    with pytest.raises(ParamError, match="max_depth"):
        PcfgSetParams(max_functions=16, max_depth=4)
    with pytest.raises(ParamError, match="min_functions"):
        PcfgSetParams(min_functions=5, max_functions=4)
    with pytest.raises(ParamError, match="min_arg_length"):
        PcfgSetParams(min_arg_length=6, max_arg_length=5)
    with pytest.raises(ParamError):
        PcfgSetParams(alphabet_size=521)
    assert PcfgSetParams(max_functions=15, max_depth=4).max_functions == 15


def test_pcfg_levels_and_size() -> None:
    his = [PCFG.level(k).max_functions for k in range(1, 11)]
    assert his == sorted(his)
    big = PCFG.with_size(500, 500)
    assert big.min_functions == big.max_functions == 500 and big.max_depth >= 9
    batch = PCFG.generate(np.random.default_rng(1), 3, big)
    assert (batch.features["functions"] == 500).all()
    edge = PcfgSetParams(min_functions=15, max_functions=15, max_depth=4, min_arg_length=1, max_arg_length=1)
    batch = PCFG.generate(np.random.default_rng(2), 20, edge)  # full: binary above the bottom level
    assert (batch.features["depth"] == 4).all()
    assert ((batch.features["arguments"] >= 8) & (batch.features["arguments"] <= 16)).all()


# -- cogs_like ---------------------------------------------------------------------------

COGS_CASES = [
    # unergative
    ("Emma smiled .", "smile . agent ( x _ 1 , Emma )"),
    # unaccusative (theme subject)
    ("The cake rolled .", "* cake ( x _ 1 ) ; roll . theme ( x _ 2 , x _ 1 )"),
    # transitive, and the causative use of an unaccusative verb
    ("Emma saw a cat .", "see . agent ( x _ 1 , Emma ) AND see . theme ( x _ 1 , x _ 3 ) AND cat ( x _ 3 )"),
    (
        "A hedgehog ate the cake .",
        "* cake ( x _ 4 ) ; hedgehog ( x _ 1 ) AND eat . agent ( x _ 2 , x _ 1 ) AND eat . theme ( x _ 2 , x _ 4 )",
    ),
    ("Emma rolled the ball .", "* ball ( x _ 3 ) ; roll . agent ( x _ 1 , Emma ) AND roll . theme ( x _ 1 , x _ 3 )"),
    # passive without and with "by"
    ("A cat was seen .", "cat ( x _ 1 ) AND see . theme ( x _ 3 , x _ 1 )"),
    (
        "A rose was helped by a dog .",
        "rose ( x _ 1 ) AND help . theme ( x _ 3 , x _ 1 ) AND help . agent ( x _ 3 , x _ 6 ) AND dog ( x _ 6 )",
    ),
    # ditransitive: double object and PP dative
    (
        "Liam gave the girl a cake .",
        "* girl ( x _ 3 ) ; give . agent ( x _ 1 , Liam ) AND give . recipient ( x _ 1 , x _ 3 ) "
        "AND give . theme ( x _ 1 , x _ 5 ) AND cake ( x _ 5 )",
    ),
    (
        "Emma gave a cake to the girl .",
        "* girl ( x _ 6 ) ; give . agent ( x _ 1 , Emma ) AND give . theme ( x _ 1 , x _ 3 ) "
        "AND give . recipient ( x _ 1 , x _ 6 ) AND cake ( x _ 3 )",
    ),
    # ditransitive passives: theme subject, recipient subject, with and without "by"
    (
        "A cake was given to Emma .",
        "cake ( x _ 1 ) AND give . theme ( x _ 3 , x _ 1 ) AND give . recipient ( x _ 3 , Emma )",
    ),
    (
        "A cake was given to Emma by the boy .",
        "* boy ( x _ 8 ) ; cake ( x _ 1 ) AND give . theme ( x _ 3 , x _ 1 ) AND give . recipient ( x _ 3 , Emma ) "
        "AND give . agent ( x _ 3 , x _ 8 )",
    ),
    (
        "The girl was given a cake .",
        "* girl ( x _ 1 ) ; give . recipient ( x _ 3 , x _ 1 ) AND give . theme ( x _ 3 , x _ 5 ) AND cake ( x _ 5 )",
    ),
    (
        "Emma was sent a book by Liam .",
        "send . recipient ( x _ 2 , Emma ) AND send . theme ( x _ 2 , x _ 4 ) AND send . agent ( x _ 2 , Liam ) "
        "AND book ( x _ 4 )",
    ),
    # PP modification, one and two levels
    (
        "Emma saw the cat on the mat .",
        "* cat ( x _ 3 ) ; * mat ( x _ 6 ) ; see . agent ( x _ 1 , Emma ) AND see . theme ( x _ 1 , x _ 3 ) "
        "AND cat . nmod . on ( x _ 3 , x _ 6 )",
    ),
    (
        "A dog ate a cake in a box beside the bed .",
        "* bed ( x _ 10 ) ; dog ( x _ 1 ) AND eat . agent ( x _ 2 , x _ 1 ) AND eat . theme ( x _ 2 , x _ 4 ) "
        "AND cake ( x _ 4 ) AND cake . nmod . in ( x _ 4 , x _ 7 ) AND box ( x _ 7 ) "
        "AND box . nmod . beside ( x _ 7 , x _ 10 )",
    ),
    (
        "The cat on a mat smiled .",
        "* cat ( x _ 1 ) ; cat . nmod . on ( x _ 1 , x _ 4 ) AND mat ( x _ 4 ) AND smile . agent ( x _ 5 , x _ 1 )",
    ),
    # sentential complements, one and two levels
    (
        "Emma said that the cat slept .",
        "* cat ( x _ 4 ) ; say . agent ( x _ 1 , Emma ) AND say . ccomp ( x _ 1 , x _ 5 ) "
        "AND sleep . agent ( x _ 5 , x _ 4 )",
    ),
    (
        "A girl thought that Liam knew that a cake was eaten .",
        "girl ( x _ 1 ) AND think . agent ( x _ 2 , x _ 1 ) AND think . ccomp ( x _ 2 , x _ 5 ) "
        "AND know . agent ( x _ 5 , Liam ) AND know . ccomp ( x _ 5 , x _ 10 ) AND cake ( x _ 8 ) "
        "AND eat . theme ( x _ 10 , x _ 8 )",
    ),
]


@pytest.mark.parametrize("sentence,form", COGS_CASES)
def test_cogs_hand_worked(sentence: str, form: str) -> None:
    example = {"input": sentence}
    assert COGS.solve(example) == form
    assert COGS.check(example, form)


def test_cogs_checker_rejects_wrong_answers() -> None:
    example = {"input": "A rose was helped by a dog ."}
    right = "rose ( x _ 1 ) AND help . theme ( x _ 3 , x _ 1 ) AND help . agent ( x _ 3 , x _ 6 ) AND dog ( x _ 6 )"
    wrong = [
        right.replace("theme", "agent", 1),  # role swapped
        right.replace("x _ 6", "x _ 5"),  # wrong variable
        "* " + right,  # indefinite written as definite
        # conjuncts out of order
        "help . theme ( x _ 3 , x _ 1 ) AND rose ( x _ 1 ) AND help . agent ( x _ 3 , x _ 6 ) AND dog ( x _ 6 )",
        right + " AND dog ( x _ 6 )",
    ]
    for form in wrong:
        assert not COGS.check(example, form)


@pytest.mark.parametrize(
    "sentence",
    [
        "Emma smiled",  # no period
        "the cat slept .",  # first word not capitalized
        "Emma saw The cat .",
        "emma smiled .",
        "Emma smiled the cat .",  # intransitive with an object
        "Emma saw .",  # transitive without object
        "Emma gave a cake .",  # ditransitive with one object
        "Emma said that .",
        "Emma said the cat slept .",  # complement without "that"
        "Emma saw the cat on .",
        "Emma saw the cat on Liam .",  # PP objects are common nouns
        "The cat was smiled .",  # no passive of an intransitive
        "Emma saw a cat a dog .",
        ". .",
    ],
)
def test_cogs_rejects_ungrammatical(sentence: str) -> None:
    with pytest.raises(ValueError):
        parse_sentence(sentence)
    assert not COGS.check({"input": sentence}, "smile . agent ( x _ 1 , Emma )")


def test_cogs_parse_tree() -> None:
    assert parse_sentence("Emma saw the cat on the mat .") == [
        "ROOT -> S .",
        [
            "S -> NP VP",
            ["NP -> Name", "Emma"],
            [
                "VP -> V_trans NP",
                "see",
                ["NP -> Det N PP", "the", "cat", ["PP -> P NP", "on", ["NP -> Det N", "the", "mat"]]],
            ],
        ],
    ]
    assert parse_sentence("A cake was given to Emma by the boy .")[1][2] == [
        "VP -> was V_dat to NP by NP", "give", ["NP -> Name", "Emma"], ["NP -> Det N", "the", "boy"]
    ]  # fmt: skip
    assert parse_sentence("Emma said that Liam cried .")[1][2][:2] == ["VP -> V_cp that S", "say"]


def _depth_of(tree: object, rule: str) -> int:
    """Longest chain of nested `rule` nodes (PP or CP recursion depth)."""
    if isinstance(tree, str):
        return 0
    below = max((_depth_of(child, rule) for child in tree[1:]), default=0)
    return below + (tree[0] == rule)


@pytest.mark.parametrize("level", [1, 3, 6, 10])
def test_cogs_structure_and_features_consistent(level: int) -> None:
    params = COGS.level(level)
    batch = COGS.generate(np.random.default_rng(level), 150, params)
    for record in batch.records("cogs_like"):
        tree, feats = record["structure"], record["difficulty"]
        assert parse_sentence(record["input"]) == tree
        assert interpret(tree) == record["target"]
        assert feats["derivation_depth"] == tree_depth(tree)
        assert feats["rules"] == rule_count(tree)
        assert feats["pp_depth"] == _depth_of(tree, "PP -> P NP")
        assert feats["cp_depth"] == _depth_of(tree, "VP -> V_cp that S")
        assert params.min_pp_depth <= feats["pp_depth"] <= params.max_pp_depth
        assert params.min_cp_depth <= feats["cp_depth"] <= params.max_cp_depth
        words = [w.lower() for w in record["input"].split()[:-1] if w not in ("was", "to", "by", "that")]
        assert len(leaves(tree)) == len(words)  # one leaf per content word, verbs as lemmas


def test_cogs_covers_every_construction() -> None:
    batch = COGS.generate(np.random.default_rng(0), 2000, COGS.default_params())
    rules = {node[0] for tree in batch.structure for node in internal_nodes(tree)}
    for rule in (
        "VP -> V_unerg", "VP -> V_unacc", "VP -> V_trans NP", "VP -> was V_trans", "VP -> was V_trans by NP",
        "VP -> V_dat NP NP", "VP -> V_dat NP to NP", "VP -> was V_dat to NP", "VP -> was V_dat to NP by NP",
        "VP -> was V_dat NP", "VP -> was V_dat NP by NP", "VP -> V_cp that S", "NP -> Name", "NP -> Det N",
        "NP -> Det N PP", "PP -> P NP",
    ):  # fmt: skip
        assert rule in rules


def test_cogs_atoms_and_compounds() -> None:
    record = {"structure": parse_sentence("Emma saw a cat .")}
    assert COGS.atoms(record) == {
        "ROOT -> S .": 1, "S -> NP VP": 1, "NP -> Name": 1, "Emma": 1, "VP -> V_trans NP": 1,
        "see": 1, "NP -> Det N": 1, "a": 1, "cat": 1,
    }  # fmt: skip
    compounds = COGS.compounds(record)
    assert compounds["VP -> V_trans NP(see,NP -> Det N(a,cat))"] == 1
    assert compounds["S -> NP VP(NP -> Name(Emma),_)"] == 1
    assert COGS.compounds(record, abstract_lexical=True)["VP -> V_trans NP(*,NP -> Det N(*,*))"] == 1


def test_cogs_deep_recursion() -> None:
    params = COGS.with_size(500, 500)
    assert 60 <= params.min_cp_depth == params.max_cp_depth <= 100
    batch = COGS.generate(np.random.default_rng(3), 5, params)
    for record in batch.records("cogs_like"):
        assert COGS.check(record, record["target"])
        assert 350 <= record["difficulty"]["input_length"] <= 700
    top = CogsParams(min_pp_depth=100, max_pp_depth=100, min_cp_depth=100, max_cp_depth=100)
    record = next(COGS.generate(np.random.default_rng(4), 1, top).records("cogs_like"))
    assert COGS.solve(record) == record["target"]


def test_cogs_input_space_size() -> None:
    base = CogsParams(min_pp_depth=0, max_pp_depth=0, min_cp_depth=0, max_cp_depth=0)
    # animate NPs 16 + 2 * 14 = 44, any NP 16 + 2 * 30 = 76, per construction (verbs x slots)
    by_hand = (
        8 * 44 + 6 * 76 + 14 * 44 * 76 + 14 * 76 + 14 * 76 * 44
        + 6 * 44 * 44 * 76 * 2 + 6 * 76 * 44 * 2 + 6 * 76 * 44 * 44 * 2
    )  # fmt: skip
    assert COGS.input_space_size(base) == by_hand == 3_666_896
    one_cp = base.replace(max_cp_depth=1, min_cp_depth=1)
    assert COGS.input_space_size(one_cp) == by_hand * 6 * 44
    # one PP on the single NP of an unergative/unaccusative clause
    one_pp = base.replace(min_pp_depth=1, max_pp_depth=1)
    assert COGS.input_space_size(one_pp) > COGS.input_space_size(base)


def test_cogs_params_levels_and_size() -> None:
    with pytest.raises(ParamError, match="min_pp_depth"):
        CogsParams(min_pp_depth=3, max_pp_depth=2)
    with pytest.raises(ParamError, match="min_cp_depth"):
        CogsParams(min_cp_depth=3, max_cp_depth=2)
    with pytest.raises(ParamError):
        CogsParams(max_cp_depth=101)
    maxima = [COGS.level(k).max_pp_depth for k in range(1, 11)]
    assert maxima == sorted(maxima) and maxima[0] == 0
    assert COGS.with_size(1, 5) == CogsParams(min_pp_depth=0, max_pp_depth=0, min_cp_depth=0, max_cp_depth=0)
    lengths = COGS.generate(np.random.default_rng(0), 400, COGS.with_size(40, 40)).difficulty()["input_length"]
    assert 30 <= lengths.mean() <= 50
