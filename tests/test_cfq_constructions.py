"""cfq_like's constructions parameter (issue 54, item 4): ``cfq`` adds CFQ's ``a R of NP`` and
``Which N was NP ?``; ``base``, the default, draws exactly the records it always has."""

from __future__ import annotations

import random
import subprocess
import sys
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from gengap.generators import get_task
from gengap.generators.lexicons import lexicon_of
from gengap.generators.tasks import _cfq_grammar as G
from gengap.generators.tasks._cfq_corrupt import corruptions
from gengap.generators.tasks._cfq_query import normal_form, parse_query, render
from gengap.generators.tasks._cfq_reader import features, interpret, parse_question
from gengap.splits.api import generate_records

TASK = get_task("cfq_like")
NEW_RULES = (G.NP_OF, G.Q_WHICH_NP)


def cfq_records(level: int, n: int, seed: int, **changes: object) -> list[dict]:
    return generate_records("cfq_like", TASK.level(level).replace(constructions="cfq", **changes), n, seed)


def new_rules(records: list[dict]) -> Counter[str]:
    found: Counter[str] = Counter()
    for record in records:
        found.update({rule: n for rule, n in TASK.atoms(record).items() if rule in NEW_RULES})
    return found


def test_the_default_draws_the_records_it_always_has() -> None:
    """constructions=base is the parameters without it: the same canonical form (the seed), the
    same dict, the same records; cfq is another stream."""
    default = TASK.default_params()
    assert default.constructions == "base" and "constructions" not in default.to_dict()
    assert "constructions" not in default.canonical() and "constructions" in default.replace(constructions="cfq").canonical()
    for level in (1, 6, 10):
        params = TASK.level(level)
        unset = generate_records("cfq_like", params, 40, level)
        assert generate_records("cfq_like", params.replace(constructions="base"), 40, level) == unset
        assert not new_rules(unset)
    assert [r["input"] for r in cfq_records(6, 40, 6)] != [r["input"] for r in generate_records("cfq_like", TASK.level(6), 40, 6)]


def test_the_new_constructions_read_as_cfq_writes_them() -> None:
    tree = parse_question("Was M0 a director of M1 ?")
    assert tree == [G.Q_WAS_NP, [G.NP_ENTITY, "M0"], [G.NP_OF, "director", [G.NP_ENTITY, "M1"]]]
    same = render(normal_form(interpret(parse_question("Was M0 M1 's director ?"))))
    assert render(normal_form(interpret(tree))) == same
    assert parse_question("Which actor was a female spouse of M2 ?") == [
        G.Q_WHICH_NP, "actor", [G.NP_OF, [G.R_ADJ, "female", "spouse"], [G.NP_ENTITY, "M2"]]]
    who = parse_question("Who was a producer of a film that M0 distributed ?")
    assert who[1][0] == G.NP_OF and who[1][2][0] == G.NP_INDEFINITE and features(who)["depth"] == 2
    # a cinematographer is a type noun and a role noun: ``of`` decides
    assert parse_question("Was M0 a cinematographer ?")[2] == [G.NP_INDEFINITE, "cinematographer"]
    assert parse_question("Was M0 a cinematographer of M1 ?")[2][0] == G.NP_OF
    # the NP after ``of`` takes a possessive: a director of (M1 's spouse)
    assert parse_question("Was M0 a director of M1 's spouse ?")[2][2][0] == G.NP_POSSESSIVE


def test_every_level_checks_its_gold_and_refuses_the_corruptions_and_the_constructions_occur() -> None:
    rng = random.Random(54)
    counts: Counter[str] = Counter()
    refused = 0
    for level in range(1, 11):
        records = cfq_records(level, 40, 100 + level)
        counts += new_rules(records)
        for record in records:
            assert TASK.check(record, record["target"]) and TASK.check_execution(record, record["target"]), record["input"]
            assert TASK.solve(record) == record["target"]
            for wrong in corruptions(parse_query(record["target"]), rng).values():
                assert not TASK.check(record, wrong) and not TASK.check_execution(record, wrong), (record["input"], wrong)
                refused += 1
    assert counts[G.NP_OF] >= 40 and counts[G.Q_WHICH_NP] >= 10, counts
    assert refused >= 1000


@settings(max_examples=15, deadline=None)
@given(level=st.integers(1, 10), seed=st.integers(0, 2**31 - 1), lexicon=st.sampled_from([0, 3]))
def test_any_seed_and_level_passes_both_checks(level: int, seed: int, lexicon: int) -> None:
    """Any seed, level and lexicon: the records' derivations, features and queries are the
    reader's, both checks accept the gold and refuse a corruption."""
    rng = random.Random(seed)
    for record in cfq_records(level, 8, seed, lexicon=lexicon):
        assert TASK.check(record, record["target"]) and TASK.check_execution(record, record["target"])
        assert TASK.derive(record) == record["structure"] or lexicon
        wrong = next(iter(corruptions(parse_query(record["target"]), rng).values()), None)
        if wrong is not None:
            assert not TASK.check(record, wrong) and not TASK.check_execution(record, wrong)


def test_a_lexicon_permutes_the_role_nouns_of_the_new_constructions() -> None:
    zero = cfq_records(8, 60, 3)
    written = cfq_records(8, 60, 3, lexicon=2)
    words = lexicon_of(TASK.lexicon_spec, 2)
    assert [r["input"] for r in written] == [words.write(r["input"]) for r in zero]
    assert [r["target"] for r in written] == [r["target"] for r in zero]
    assert any(" of " in r["input"] for r in written)
    for record in written:
        assert TASK.check(record, record["target"]) and TASK.check_execution(record, record["target"])


def test_the_measured_features_are_the_samplers() -> None:
    from gengap.generators.tasks._cfq_sampler import Sampler

    stream = random.Random(7)
    sampler = Sampler(stream.random, 3, 5, 2, "cfq")
    seen = 0
    for _ in range(400):
        tokens, tree, query, measured = sampler.question()
        parsed = parse_question(" ".join(tokens))
        assert parsed == tree
        assert render(normal_form(interpret(parsed))) == render(normal_form(query))
        assert {k: features(tree)[k] for k in measured} == measured
        seen += G.NP_OF in str(tree)
    assert seen >= 50


def test_a_bad_value_is_one_line_on_the_command_line() -> None:
    bad = subprocess.run([sys.executable, "-m", "gengap", "generate", "cfq_like", "--n", "2", "--param", "constructions=x"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stdout == "" and bad.stderr.count("\n") == 1 and "constructions" in bad.stderr
    made = subprocess.run([sys.executable, "-m", "gengap", "generate", "cfq_like", "--n", "30", "--level", "8", "--param", "constructions=cfq"],
                          capture_output=True, text=True)
    assert made.returncode == 0 and " of " in made.stdout
    checked = subprocess.run([sys.executable, "-m", "gengap", "check", "-"], input=made.stdout, capture_output=True, text=True)
    assert checked.returncode == 0 and "30 passed" in checked.stdout
