"""Local structures (Bogin et al. 2022) as a compound definition, and the local_holdout split."""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from gengap.cli import main
from gengap.cross_check import report_problems
from gengap.fresh import draw_fresh
from gengap.generators import get_task
from gengap.splits import SplitError, generate_records, get_strategy, make_options, split
from gengap.splits.atoms import CompoundDefinition, record_compounds, remembered
from gengap.splits.base import divergence_report
from gengap.splits.local_structures import structure_size, tree_local_structures
from gengap.splits.novelty import annotate
from gengap.splits.validation import task_input

LOCAL = CompoundDefinition("local", 3)

# A hand-worked derivation: A over (B over x), the leaf y, and (C over z, w).
TREE = ["A", ["B", "x"], "y", ["C", "z", "w"]]
SIZE_2 = {  # parent-child pairs and adjacent-sibling pairs
    "p:A / c:B", "p:B / c:x", "p:A / c:y", "s:B / c:y", "p:A / c:C", "s:y / c:C", "p:C / c:z", "p:C / c:w", "s:z / c:w",
}
SIZE_3 = SIZE_2 | {
    "p:A / p:B / c:x",  # grandparent, parent, child
    "p:A / s:B / c:y",  # parent, left sibling, node
    "s:B / s:y / c:C", "p:A / s:y / c:C",
    "p:A / p:C / c:z",
    "p:A / p:C / c:w", "p:C / s:z / c:w",
}


def test_local_structures_of_a_hand_worked_derivation_are_exactly_the_expected_set() -> None:
    assert tree_local_structures(TREE, 2) == Counter(SIZE_2)
    assert tree_local_structures(TREE, 3) == Counter(SIZE_3)
    assert len(SIZE_3) == 16 and all(structure_size(s) in (2, 3) for s in SIZE_3)


def test_lexical_items_abstracted_and_repeated_structures_counted() -> None:
    assert tree_local_structures(TREE, 2, abstract_lexical=True) == Counter({
        "p:A / c:B": 1, "p:B / c:*": 1, "p:A / c:*": 1, "s:B / c:*": 1, "p:A / c:C": 1, "s:* / c:C": 1, "p:C / c:*": 2, "s:* / c:*": 1,
    })
    twice = ["A", ["B", "x"], ["B", "x"]]
    assert tree_local_structures(twice, 2) == Counter({"p:A / c:B": 2, "p:B / c:x": 2, "s:B / c:B": 1})
    with pytest.raises(ValueError, match="at least 2 nodes"):
        tree_local_structures(TREE, 1)


labels = st.sampled_from(["S", "NP", "VP", "V -> D twice", "x", "y"])
trees = st.recursive(labels, lambda inner: st.builds(lambda rule, kids: [rule, *kids], labels, st.lists(inner, min_size=1, max_size=3)),
                     max_leaves=12)


def _nodes(tree: Any, depth: int = 0, index: int = 0):
    """(depth, index among its siblings, node) of every node."""
    yield depth, index, tree
    if isinstance(tree, list):
        for position, child in enumerate(tree[1:]):
            yield from _nodes(child, depth + 1, position)


def _plain(tree: Any) -> Any:
    return "*" if isinstance(tree, str) else [tree[0], *(_plain(c) for c in tree[1:])]


@settings(max_examples=60, deadline=None)
@given(trees, st.integers(2, 5))
def test_structure_counts_match_an_independent_count(tree: Any, size: int) -> None:
    """A node at depth d with i preceding siblings anchors one structure per (a, s) with a <= d,
    s <= i and 1 <= a + s <= size - 1; each written with a + s + 1 nodes."""
    found = tree_local_structures(tree, size)
    expected = sum(1 for depth, index, _ in _nodes(tree) for up in range(depth + 1) for left in range(index + 1) if 1 <= up + left <= size - 1)
    assert sum(found.values()) == expected
    assert all(2 <= structure_size(text) <= size for text in found)
    assert not tree_local_structures(tree, size) - tree_local_structures(tree, size + 1)  # a larger bound keeps every structure
    assert tree_local_structures(tree, size, abstract_lexical=True) == tree_local_structures(_plain(tree), size)


def test_a_record_with_shared_subtrees_reads_as_its_json_copy() -> None:
    """SCAN's generator shares subtrees between records' trees: the in-memory record and its
    JSON copy (what a release file holds) give the same local structures."""
    records = generate_records("scan", get_task("scan").default_params(), 200, 3)
    for record in records:
        again = json.loads(json.dumps(record))
        assert record_compounds(record, False, LOCAL) == record_compounds(again, False, LOCAL)
        assert record_compounds(record, False, LOCAL) == tree_local_structures(again["structure"], 3)


def test_records_without_a_derivation_keep_their_derivation_compounds() -> None:
    plain = {"id": "toy-0", "task": "toy", "input": "a b c", "target": "x", "difficulty": {"input_length": 3, "output_length": 1}}
    assert record_compounds(plain, False, LOCAL) == record_compounds(plain) == Counter({"a b": 1, "b c": 1})
    tree = {**plain, "structure": ["R", ["Q", "a"], "b"]}  # a task gengap does not know: its own structure tree
    assert record_compounds(tree, False, LOCAL) == Counter(
        {"p:R / c:Q", "p:Q / c:a", "p:R / c:b", "s:Q / c:b", "p:R / p:Q / c:a", "p:R / s:Q / c:b"})
    parity = generate_records("parity_check", get_task("parity_check").default_params(), 1, 0)[0]  # a task without derivations
    assert record_compounds(parity, False, LOCAL) == record_compounds(parity)


def test_compound_definition_of_options() -> None:
    assert CompoundDefinition.of({}) == CompoundDefinition("derivation", 3)
    assert CompoundDefinition.of({"compounds": "local", "local_size": 4}) == CompoundDefinition("local", 4)
    assert CompoundDefinition.of({"compounds": "local"}).describe(True) == "local structures of 2-3 nodes, lexical items abstracted"
    assert CompoundDefinition().describe(False) == "lexical"
    for bad in ({"compounds": "trees"}, {"compounds": "local", "local_size": 1}, {"local_size": "3"}, {"local_size": True}):
        with pytest.raises(ValueError):
            CompoundDefinition.of(bad)


def _pool(task: str, n: int, seed: int) -> list[dict]:
    return generate_records(task, get_task(task).default_params(), n, seed)


def test_splits_measure_and_annotate_with_the_chosen_definition() -> None:
    pool = _pool("scan", 600, 1)
    result = split(pool, "iid", {"compounds": "local"}, seed=2)
    assert result.report["options"]["compounds"] == "local" and result.report["compounds"] == "local structures of 2-3 nodes, lexical"
    assert result.report["compound_divergence"] == divergence_report(result.train, result.test, False, LOCAL)["compound_divergence"]
    assert [r["novelty"] for r in result.test] == [r["novelty"] for r in annotate(result.parts(), False, LOCAL)["test"]]
    default = split(pool, "iid", {}, seed=2)
    assert "compounds" not in default.report["options"] and default.report["compounds"] == "lexical"  # bytes as before
    assert default.report["compound_divergence"] != result.report["compound_divergence"]
    with pytest.raises(SplitError, match="local_size=4 sizes local structures: set compounds=local"):
        split(pool, "iid", {"local_size": 4})


def test_mcd_and_a_template_holdout_read_local_structures() -> None:
    pool = _pool("scan", 400, 5)
    mcd = split(pool, "mcd", {"compounds": "local", "steps": 3000, "train_size": 300, "test_size": 40}, seed=1)
    assert mcd.report["compound_divergence"] == divergence_report(mcd.train, mcd.test, False, LOCAL)["compound_divergence"]
    structure = "p:S -> V twice / c:V -> U"
    held = split(pool, "holdout", {"template": structure, "compounds": "local"}, seed=1)
    assert held.test and all(record_compounds(r, False, LOCAL)[structure] for r in held.test)
    assert not any(record_compounds(r, False, LOCAL)[structure] for r in held.train + held.validation)


def test_divergence_command_reads_local_structures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pool = _pool("cogs_like", 300, 2)
    train, test = tmp_path / "train.jsonl", tmp_path / "test.jsonl"
    train.write_text("".join(json.dumps(r) + "\n" for r in pool[:200]))
    test.write_text("".join(json.dumps(r) + "\n" for r in pool[200:]))
    assert main(["divergence", str(train), str(test), "--json", "--compounds", "local", "--local-size", "4"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures == json.loads(json.dumps(divergence_report(pool[:200], pool[200:], False, CompoundDefinition("local", 4))))
    assert main(["divergence", str(train), str(test), "--local-size", "4"]) == 2
    assert capsys.readouterr().err.strip() == "gengap: error: --local-size sizes local structures: give it with --compounds local"
    assert main(["divergence", str(train), str(test), "--compounds", "local", "--local-size", "7"]) == 2
    assert capsys.readouterr().err.strip() == "gengap: error: --local-size must be in 2..6, got 7"


# -- local_holdout ---------------------------------------------------------------------------


def _held(record: dict, structures: list[str], size: int = 3) -> int:
    found = record_compounds(record, False, CompoundDefinition("local", size))
    return sum(1 for s in structures if found[s])


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(["scan", "cogs_like", "pcfg_set", "cfq_like"]), st.integers(0, 2**16), st.integers(1, 4))
def test_local_holdout_rule_holds_on_random_pools(task: str, seed: int, held_out: int) -> None:
    pool = _pool(task, 400, seed)
    options = {"held_out": held_out, "min_share": 0.01, "max_share": 0.2}
    result = split(pool, "local_holdout", options, seed=seed)
    chosen = result.report["held_out_structures"]
    assert 1 <= len(chosen) <= held_out and result.test
    assert all(_held(r, chosen) >= 1 for r in result.test)  # every test record holds a held-out structure
    assert not any(_held(r, chosen) for r in result.train + result.validation)  # no train or validation record does
    assert result.report["overlap"] == 0 and not {task_input(r) for r in result.test} & {task_input(r) for r in result.train + result.validation}
    histogram = Counter(str(min(_held(r, chosen), 3)).replace("3", "3+") for r in result.test)
    assert result.report["held_out_per_test_record"] == {k: histogram.get(k, 0) for k in ("1", "2", "3+")}
    assert result.report["held_out_records"] == {s: sum(1 for r in pool if _held(r, [s])) for s in chosen}
    assert all(0.01 * len(pool) <= n <= 0.2 * len(pool) for n in result.report["held_out_records"].values())
    assert all(r["novelty"]["unseen_compounds"] >= 1 for r in result.test)  # local structures unseen in train, counted per record
    again = split(pool, "local_holdout", options, seed=seed)
    assert again.parts() == result.parts() and again.report == result.report
    named = split(pool, "local_holdout", {"structures": "|".join(chosen)}, seed=seed)  # the chosen list, given: the same partition
    assert [r["id"] for r in named.test] == [r["id"] for r in result.test]
    rule = get_strategy("local_holdout").test_rule(make_options(get_strategy("local_holdout"), {"structures": "|".join(chosen)}))
    assert [r["id"] for r in pool if rule(r)] == [r["id"] for r in pool if _held(r, chosen)]


def test_local_holdout_options_and_refusals() -> None:
    pool = _pool("scan", 500, 4)
    sized = split(pool, "local_holdout", {"held_out": 2, "held_out_size": 2, "local_size": 2, "min_share": 0.0, "max_share": 1.0,
                                          "test_share": 0.9}, seed=0)
    assert all(structure_size(s) == 2 for s in sized.report["held_out_structures"])
    assert split(pool, "local_holdout", {}, seed=0).report["options"]["compounds"] == "local"  # always named: the report measures local structures
    assert get_strategy("local_holdout").test_rule(make_options(get_strategy("local_holdout"), {})) is None  # chosen from the pool: no rule
    refusals = [
        ({"structures": "p:nothing / c:here"}, "no example holds the local structure 'p:nothing / c:here'"),
        ({"structures": "p:A / p:B / p:C / c:D"}, "has 4 nodes, more than local_size=3"),
        ({"min_share": 0.5, "max_share": 0.1}, "min_share=0.5 is above max_share=0.1"),
        ({"min_share": 0.9, "max_share": 0.95}, "no local structure occurs in 0.9-0.95 of the pool's 500 records"),
        ({"held_out_size": 4}, "held_out_size=4 is above local_size=3"),
        ({"test_share": 0.0}, "would put more than test_share=0 of the pool in test"),
    ]
    for options, message in refusals:
        with pytest.raises(SplitError, match=message.replace("(", r"\(").replace(")", r"\)")):
            split(pool, "local_holdout", options, seed=0)
    few = split(pool, "local_holdout", {"held_out": 500}, seed=0)
    assert any("structures asked for could be held out" in w for w in few.report["warnings"])


def test_local_holdout_of_plain_records_with_structure_trees(tmp_path: Path) -> None:
    """Your own JSONL: plain records (input, target, structure) split through the command line."""
    pool = _pool("cogs_like", 300, 9)
    plain = tmp_path / "mine.jsonl"
    plain.write_text("".join(json.dumps({"input": r["input"], "target": r["target"], "structure": r["structure"]}) + "\n" for r in pool))
    out = tmp_path / "split"
    assert main(["split", str(plain), "--strategy", "local_holdout", "--option", "held_out=2", "--option", "max_share=0.2",
                 "--seed", "3", "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    parts = {p: [json.loads(line) for line in (out / f"{p}.jsonl").read_text().splitlines()] for p in ("train", "validation", "test")}
    chosen = report["held_out_structures"]
    assert parts["test"] and all(_held(r, chosen) for r in parts["test"])
    assert not any(_held(r, chosen) for r in parts["train"] + parts["validation"])
    assert report["compounds"] == "local structures of 2-3 nodes, lexical"


def test_a_release_with_local_structures_verifies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Configs whose reports say local (a local_holdout, an MCD over local structures with its parts
    capped, a sampled split with compounds: local) verify: the release writes and verify recomputes
    novelty and divergences with the report's definition."""
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: local-demo\nversion: 0.1.0\nseed: 7\nlicense: cc-by-4.0\nentries:\n"
        "  - {task: scan, split: local, strategy: local_holdout, pool: {n: 1500}, options: {held_out: 2}}\n"
        "  - {task: scan, split: mcd_local, strategy: mcd, pool: {n: 800}, options: {compounds: local, steps: 4000},"
        " sizes: {train: 400, validation: 40, test: 60}}\n"
        "  - {task: scan, split: length, train_range: [1, 4], test_range: [5, 9], sizes: {train: 300, test: 100},"
        " options: {compounds: local, local_size: 4}}\n"
    )
    release = tmp_path / "release"
    assert main(["release", str(suite), "--out", str(release), "--workers", "1"]) == 0
    assert main(["verify", str(release)]) == 0
    manifest = json.loads((release / "manifest.json").read_text())
    config = next(c for c in manifest["configs"] if c["name"] == "scan-mcd_local")
    assert config["report"]["compounds"] == "local structures of 2-3 nodes, lexical"
    parts = {p: [json.loads(line) for line in (release / "data" / "scan-mcd_local" / f"{p}.jsonl").read_text().splitlines()]
             for p in ("train", "validation", "test")}
    with remembered():
        assert report_problems(config, parts) == []
        restated = copy.deepcopy(config)
        restated["report"]["options"]["compounds"] = "derivation"  # a report that names the other definition
        assert any("compound_divergence" in p for p in report_problems(restated, parts))
        restated["report"]["options"]["compounds"] = "forest"
        assert report_problems(restated, parts) == [
            "manifest.json: config scan-mcd_local's report names compounds no split defines "
            "(unknown compound definition 'forest'; known: derivation, local)"]
    # a fresh test part of a local config sets its figures with the config's definition: the cited part's are the report's
    part = draw_fresh(release, "scan-length", 30, 1)
    cited = next(c for c in manifest["configs"] if c["name"] == "scan-length")["report"]
    assert part.report["cited"]["compound_divergence"] == cited["compound_divergence"]
    assert part.report["cited"]["novelty"] == cited["novelty"]["test"]
    capsys.readouterr()
