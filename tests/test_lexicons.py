"""Lexicon resampling (gengap.generators.lexicons): lexicon k of a task writes the same examples
with other words for its lexical roles; checkers read records back through the record's
lexicon; splits read roles, so the same split is rebuilt under every lexicon."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gengap.checking import record_problem
from gengap.generators import batch_to_jsonl, get_task, task_names
from gengap.generators.lexicons import FOREIGN, KEY, MAX_LEXICON, lexicon_of, role_view, words_of
from gengap.generators.seeding import block_rng
from gengap.generators.tasks import _cogs_grammar as cogs_grammar
from gengap.generators.traces import split_target
from gengap.splits import SplitError, split
from gengap.splits.api import generate_records
from gengap.suite import SuiteError, parse_suite
from tests.conftest import corruptions

ROOT = Path(__file__).resolve().parents[1]
LEXICAL = ("cfq_like", "cogs", "cogs_like", "fact_compare", "fact_lookup", "fact_reverse", "fact_two_hop", "letter_analogy", "pcfg_set", "scan")
TRACED = ("scan", "cogs_like")  # tasks with a trace format: traced records are drawn too
MOST = {name: 3 if name.startswith("fact_") else 200 for name in LEXICAL}  # a facts lexicon costs ~0.2 s to build


def spec(name: str):  # type: ignore[no-untyped-def]
    return get_task(name).lexicon_spec


def without_lexicon(record: dict) -> dict:
    """The record with meta.lexicon dropped (read as if it were of lexicon 0)."""
    meta = {key: value for key, value in record.get("meta", {}).items() if key != KEY}
    return {**{key: value for key, value in record.items() if key != "meta"}, **({"meta": meta} if meta else {})}


def records(name: str, k: int, n: int = 8, seed: int = 0, **values: object) -> list[dict]:
    task = get_task(name)
    return generate_records(name, task.make_params({**values, KEY: k}), n, seed)


def test_the_lexical_tasks_are_those_with_a_lexicon_parameter() -> None:
    with_knob = {name for name in task_names() if KEY in get_task(name).params_type.names()}
    assert with_knob == set(LEXICAL)
    assert all(getattr(get_task(name), "lexicon_spec", None) is not None for name in LEXICAL)


def test_the_wiring_leaves_what_a_task_keeps_from_task() -> None:
    """Methods a lexical task keeps from Task stay Task's (the harnesses' one-answer fast path reads
    that; a suite's ``pool: all`` reads whether enumerate is); its own ones read records through
    the lexicon."""
    from gengap.generators import Task

    for name in LEXICAL:
        cls = type(get_task(name))
        own = ("check_answer",) if name == "cfq_like" else ()  # cfq_like's answer check compares normal forms
        assert all(getattr(cls, method) is getattr(Task, method) for method in ("check", "check_parts", "check_answer", "step_verdicts") if method not in own)
        assert (cls.enumerate is Task.enumerate) == (name in ("cfq_like", "cogs", "cogs_like", "pcfg_set", "letter_analogy"))
        assert cls.solve is not Task.solve and cls.generate.__wrapped__ is not None  # type: ignore[attr-defined]
    with pytest.raises(SuiteError, match="task cogs cannot enumerate all its examples"):
        parse_suite("name: x\nversion: 1.0.0\nseed: 1\nlicense: mit\nentries:\n  - {task: cogs, split: iid, params: {lexicon: 2}, pool: all}\n")


@settings(max_examples=40, deadline=None)
@given(data=st.data(), name=st.sampled_from(LEXICAL), level=st.integers(1, 5), seed=st.integers(0, 2**20), traced=st.booleans())
def test_a_lexicon_writes_the_lexicon_0_examples_and_every_check_follows_it(data: st.DataObject, name: str, level: int, seed: int, traced: bool) -> None:
    task = get_task(name)
    k = data.draw(st.integers(1, MOST[name]), label="lexicon")
    extra = {"trace": "least_to_most"} if traced and name in TRACED else {}
    base = task.level(level).replace(**extra)
    twins = generate_records(name, base, 6, seed)
    mine = generate_records(name, base.replace(lexicon=k), 6, seed)
    lexicon = lexicon_of(spec(name), k)
    for record, twin in zip(mine, twins):
        assert record["meta"][KEY] == k and KEY not in (twin.get("meta") or {})
        # the same example written with lexicon k's words: input and target token by token, the rest kept
        assert record["input"] == lexicon.write(twin["input"]) and record["target"] == lexicon.write(twin["target"])
        assert record["difficulty"] == twin["difficulty"] and record.get("structure") == twin.get("structure")
        assert role_view(spec(name), record)["input"] == twin["input"]
        # every check of gengap check passes (answer, trace, structure, features), and the atoms are the twin's
        assert record_problem(record) is None, record
        assert task.atoms(record) == task.atoms(twin)
        if task.derive(record) is not None:
            assert task.derive(record) == record["structure"]
        # wrong answers fail: corruptions, the twin's answer (lexicon 0's words) where it differs,
        # and what a lexicon-0 checker would make of the input, where it reads it
        for wrong in corruptions(record["target"]):
            assert not task.check(record, wrong)
        if twin["target"] != record["target"]:
            assert not task.check(record, twin["target"])
        try:
            misread = task.solve(without_lexicon(record))
        except (ValueError, KeyError, IndexError, TypeError):
            misread = None
        if misread is not None and misread.split() != record["target"].split() and not extra:
            assert not task.check(record, misread)
        if extra:
            trace, _ = split_target(record["target"])
            assert all(task.step_verdicts(record, trace, "least_to_most"))


@pytest.mark.parametrize("name", LEXICAL)
def test_lexicon_0_is_the_records_without_the_parameter(name: str) -> None:
    task = get_task(name)
    plain, zero = task.default_params(), task.make_params({KEY: 0})
    assert zero.to_dict() == plain.to_dict() and KEY not in plain.to_dict()
    assert zero.canonical() == plain.canonical() == task.make_params({KEY: 9}).canonical()  # the same draws
    assert batch_to_jsonl(task.generate(block_rng(1, name, zero, 0), 30, zero), name) == batch_to_jsonl(
        task.generate(block_rng(1, name, plain, 0), 30, plain), name
    )


@pytest.mark.parametrize("name", LEXICAL)
def test_two_lexicons_differ_and_one_lexicon_gives_the_same_bytes(name: str) -> None:
    assert words_of(spec(name), 1) != words_of(spec(name), 2)
    first, second, again = records(name, 1, 30), records(name, 2, 30), records(name, 1, 30)
    assert [r["input"] for r in first] != [r["input"] for r in second]
    assert first == again
    assert words_of(spec(name), 0) == {cls: {role: role for role in roles} for cls, roles in words_of(spec(name), 0).items()}


def test_lexicons_do_not_depend_on_the_hash_seed() -> None:
    code = (
        "import json; from gengap.generators import get_task; from gengap.generators.lexicons import words_of;"
        "print(json.dumps({n: words_of(get_task(n).lexicon_spec, 7) for n in ('scan', 'cogs', 'letter_analogy')}, sort_keys=True))"
    )
    outputs = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
        outputs.add(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout)
    assert len(outputs) == 1
    assert json.loads(outputs.pop())["scan"] == words_of(spec("scan"), 7)


@pytest.mark.parametrize("name", ["scan", "cogs", "cogs_like", "pcfg_set", "fact_compare", "letter_analogy"])
def test_word_maps_are_one_to_one_and_never_take_another_token(name: str) -> None:
    """A lexicon maps role forms one to one onto words of the same class, and no word is a token
    the task writes besides its role forms (so reading a record back is never ambiguous)."""
    lexicon0 = lexicon_of(spec(name), 0)
    others = {t for r in records(name, 0, 300) for t in (r["input"] + " " + r["target"]).split()} - lexicon0.role_forms
    assert others  # every task writes function tokens (actions, arrows, punctuation, ...)
    for k in (1, 2, 3):
        lexicon = lexicon_of(spec(name), k)
        assert len(set(lexicon.forward.values())) == len(lexicon.forward)
        assert set(lexicon.forward) == lexicon0.role_forms
        assert all(lexicon.backward[word] == role for role, word in lexicon.forward.items())
        assert not others & set(lexicon.backward)
        for cls, chosen in words_of(spec(name), k).items():
            assert len(set(chosen.values())) == len(chosen)


def test_scan_classes_keep_their_roles_and_draw_unfamiliar_words() -> None:
    """SCAN: a lexicon permutes each class of command words with a few made-up ones; a word
    keeps its class (a primitive word stays a primitive), and the actions stay the roles'."""
    from gengap.generators.tasks.scan import UNFAMILIAR

    seen: Counter[str] = Counter()
    for k in range(1, 60):
        for cls, chosen in words_of(spec("scan"), k).items():
            assert set(chosen.values()) <= set(chosen) | set(UNFAMILIAR[cls])
            seen.update(word for role, word in chosen.items() if word != role)
    assert {"dax", "jump", "look"} <= set(seen)  # made-up and own words both play other roles
    jump_played_by = {words_of(spec("scan"), k)["primitive"]["jump"] for k in range(1, 60)}
    assert len(jump_played_by) > 4


def test_a_role_form_that_is_no_word_of_the_lexicon_is_refused() -> None:
    k = next(k for k in range(1, 100) if "jump" not in words_of(spec("scan"), k)["primitive"].values())
    record = records("scan", k, 1)[0]
    word = words_of(spec("scan"), k)["primitive"]
    tokens = record["input"].split()
    first = next(i for i, t in enumerate(tokens) if t in word.values())
    forged = {**record, "input": " ".join(tokens[:first] + ["jump"] + tokens[first + 1 :])}
    assert not get_task("scan").check(forged, record["target"])
    assert "wrong" in (record_problem(forged) or "") or "id" in (record_problem(forged) or "")
    lexicon = lexicon_of(spec("scan"), k)
    assert lexicon.read("jump twice", strict=False).split()[0] == FOREIGN
    with pytest.raises(ValueError, match="no word of scan lexicon"):
        lexicon.read("jump twice")


def test_a_malformed_meta_lexicon_is_one_line_and_fails_every_check() -> None:
    record = records("scan", 3, 1)[0]
    for bad in (-1, MAX_LEXICON + 1, "3", 2.0, True):
        forged = {**record, "meta": {KEY: bad}}
        assert "meta.lexicon" in (get_task("scan").meta_problem(forged) or "")
        assert not get_task("scan").check(forged, record["target"])
        assert "meta.lexicon" in (record_problem(forged) or "")
    stray = {**generate_records("parity_check", get_task("parity_check").default_params(), 1, 0)[0], "meta": {KEY: 1}}
    assert get_task("parity_check").meta_problem(stray) == "meta.lexicon is set, but parity_check has no lexicons (gengap.generators.lexicons)"
    # a lexicon-k record read as lexicon 0 fails: its words are not SCAN's
    made_up = next(r for r in records("scan", 3, 40) if set(r["input"].split()) - set(lexicon_of(spec("scan"), 0).role_forms))
    assert not get_task("scan").check(without_lexicon(made_up), made_up["target"])


# -- splits: the same split under every lexicon ------------------------------------------------


def read_back(name: str, part: list[dict]) -> list[tuple[str, str]]:
    return [(role_view(spec(name), r)["input"], role_view(spec(name), r)["target"]) for r in part]


@pytest.fixture(scope="module")
def scan_pools() -> dict[int, list[dict]]:
    task = get_task("scan")
    return {k: list(task.enumerate(task.make_params({"max_actions": 4, KEY: k})).records("scan")) for k in (0, 1, 2, 5, 11)}


@pytest.mark.parametrize("k", [1, 2, 5, 11])
def test_scan_addprim_jump_holds_out_the_word_playing_jumps_role(scan_pools: dict[int, list[dict]], k: int) -> None:
    word = words_of(spec("scan"), k)["primitive"]["jump"]
    options = {"atom": "jump", "primitive_repeats": 3, "validation_fraction": 0}
    held = split(scan_pools[k], "holdout", {**options, "primitive": word})
    assert held.test and all(word in r["input"].split() for r in held.test)
    assert Counter(r["input"] for r in held.train if word in r["input"].split()) == {word: 3}
    assert all(r["target"].split() == ["I_JUMP"] for r in held.train if r["input"] == word)
    plain = split(scan_pools[0], "holdout", {**options, "primitive": "jump"})
    for part in ("train", "validation", "test"):
        assert read_back("scan", getattr(held, part)) == read_back("scan", getattr(plain, part))


STRATEGIES = [
    ("scan", {"max_actions": 4}, "iid", {"test_fraction": 0.3}),
    ("scan", {"max_actions": 4}, "mcd", {"train_size": 120, "test_size": 40, "steps": 300}),
    ("scan", {"max_actions": 4}, "holdout", {"atom": "jump+twice|D -> turn left"}),
    ("pcfg_set", {"max_functions": 3, "alphabet_size": 10}, "length", {"train_max": 8, "test_min": 10}),
    ("cogs_like", {}, "holdout", {"atom": "hedgehog"}),
    ("letter_analogy", {"max_depth": 2}, "holdout", {"atom": "T -> reverse T"}),
    ("fact_two_hop", {"n_entities": 30}, "facts", {"by": "bridge"}),
    ("cogs", {"gen_share": 0.5}, "category", {"category": "pp_recursion"}),
]


@pytest.mark.parametrize("case", STRATEGIES, ids=[f"{c[0]}-{c[2]}" for c in STRATEGIES])
@settings(max_examples=3, deadline=None)
@given(k=st.integers(1, 3), seed=st.integers(0, 1000))
def test_every_strategy_splits_a_lexicons_pool_as_lexicon_0s(case: tuple, k: int, seed: int) -> None:
    name, values, strategy, options = case
    parts = {}
    for index in (0, k):
        pool = records(name, index, 400, seed, **values)
        parts[index] = split(pool, strategy, options, seed)
    for part in ("train", "validation", "test"):
        assert read_back(name, getattr(parts[k], part)) == read_back(name, getattr(parts[0], part))


def test_cogs_categories_follow_the_role_of_the_held_out_word() -> None:
    """subj_to_obj_common holds out hedgehog's role: under lexicon k the word playing it."""
    cls = next(c.name for c in get_task("cogs").lexicon_spec.classes() if ("hedgehog", "hedgehog") in c.roles)
    players = set()
    for k in (1, 2, 3, 4, 5, 6):
        word = words_of(spec("cogs"), k)[cls]["hedgehog"]
        players.add(word)
        for record in records("cogs", k, 30, 0, gen_share=1.0, category="subj_to_obj_common"):
            assert get_task("cogs").category(record) == "subj_to_obj_common"
            assert word in record["input"].split() and word in record["target"].split()
    assert len(players - {"hedgehog"}) >= 4
    assert cogs_grammar.EXPOSURE["subj_to_obj_common"].split()[1] == "hedgehog"


# -- suites: a sweep of lexicons --------------------------------------------------------------

SUITE = """\
name: lex
version: 1.0.0
seed: 5
license: cc-by-4.0
entries:
  - {{task: scan, split: addprim_jump, strategy: holdout, params: {{max_actions: 4{lexicon}}}, pool: all, options: {{atom: jump, primitive_repeats: 5}}}}
"""


def test_a_lexicon_sweep_expands_to_one_config_per_lexicon_with_the_unswept_seed() -> None:
    suite = parse_suite(SUITE.format(lexicon=", lexicon: [0, 2, 17]"), "<lex>")
    entries = suite["entries"]
    assert [e["name"] for e in entries] == ["scan-addprim_jump_lex0000", "scan-addprim_jump_lex0002", "scan-addprim_jump_lex0017"]
    assert {e["seed_of"] for e in entries} == {"scan-addprim_jump"}
    assert [e["params"].get(KEY) for e in entries] == [None, 2, 17]  # lexicon 0 is the default: not recorded
    # the bare primitive is an input: written in each lexicon; the atom names the role
    assert [e["options"]["primitive"] for e in entries] == ["", words_of(spec("scan"), 2)["primitive"]["jump"], words_of(spec("scan"), 17)["primitive"]["jump"]]
    assert {e["options"]["atom"] for e in entries} == {"jump"}


@pytest.mark.parametrize(
    ("lexicon", "message"),
    [
        (", lexicon: []", "a sweep of lexicons is a non-empty list of integers in [0, 1,000,000]"),
        (", lexicon: [1, -1]", "a sweep of lexicons is a non-empty list of integers in [0, 1,000,000]"),
        (", lexicon: [1, 1.5]", "a sweep of lexicons is a non-empty list"),
        (", lexicon: [2, 2]", "lexicons must differ"),
        (", lexicon: -3", "parameter lexicon=-3 is out of range [0, 1000000]"),
        (", lexicon: x", "parameter lexicon must be an integer, got 'x'"),
    ],
)
def test_bad_lexicon_sweeps_are_one_line_errors(lexicon: str, message: str) -> None:
    with pytest.raises(SuiteError) as err:
        parse_suite(SUITE.format(lexicon=lexicon), "<lex>")
    assert message in str(err.value) and "\n" not in str(err.value) and "line 6" in str(err.value)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("{task: scan, split: mcd, params: {max_actions: 4, lexicon: [1, 2]}, pool: all, options: {compound_divergence: [0.2, 0.4]}}",
         "sweep one option at a time, not lexicon and compound_divergence"),
        ("{task: scan, split: easy, strategy: difficulty, level_max: 2, params: {lexicon: 3}, sizes: {train: 10, test: 10}}",
         "a level split draws its sides from the task's levels, which take no lexicon"),
    ],
)
def test_entries_that_cannot_take_a_lexicon_are_refused(entry: str, message: str) -> None:
    text = "name: lex\nversion: 1.0.0\nseed: 5\nlicense: cc-by-4.0\nentries:\n  - " + entry + "\n"
    with pytest.raises(SuiteError, match=message.replace("[", r"\[").replace("(", r"\(")):
        parse_suite(text, "<lex>")


def test_a_lexicon_sweep_builds_the_unswept_split_in_each_lexicon(tmp_path: Path) -> None:
    from gengap.release import write_release

    text = SUITE.format(lexicon=", lexicon: [0, 4]") + SUITE.format(lexicon="").split("entries:\n", 1)[1]
    write_release(parse_suite(text, "<lex>"), tmp_path / "release", cards=False)
    data = tmp_path / "release" / "data"

    def part(config: str, name: str) -> list[dict]:
        return [json.loads(line) for line in (data / config / f"{name}.jsonl").read_text().splitlines()]

    for name in ("train", "validation", "test"):
        assert (data / "scan-addprim_jump_lex0000" / f"{name}.jsonl").read_bytes() == (data / "scan-addprim_jump" / f"{name}.jsonl").read_bytes()
        assert read_back("scan", part("scan-addprim_jump_lex0004", name)) == read_back("scan", part("scan-addprim_jump", name))
    word = words_of(spec("scan"), 4)["primitive"]["jump"]
    assert all(word in r["input"].split() for r in part("scan-addprim_jump_lex0004", "test"))
    assert all(r["meta"] == {KEY: 4} for r in part("scan-addprim_jump_lex0004", "train"))


# -- the command line ---------------------------------------------------------------------------


def gengap(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gengap", *args], capture_output=True, text=True, input=stdin, cwd=ROOT)


def test_generate_and_check_take_a_lexicon_and_list_shows_it() -> None:
    made = gengap("generate", "cogs_like", "--n", "20", "--param", "lexicon=3", "--param", "trace=least_to_most")
    assert made.returncode == 0
    lines = made.stdout.splitlines()
    assert all(json.loads(line)["meta"] == {"trace": "least_to_most", KEY: 3} for line in lines)
    checked = gengap("check", "-", stdin=made.stdout)
    assert checked.returncode == 0 and "20 passed" in checked.stdout
    forged = [json.loads(line) for line in lines]
    forged[0]["meta"][KEY] = 4  # read with another lexicon: not its computation
    assert gengap("check", "-", stdin="\n".join(json.dumps(r) for r in forged) + "\n").returncode != 0
    listed = {task["name"]: task for task in json.loads(gengap("list", "--json").stdout)}
    for name in LEXICAL:
        row = next(p for p in listed[name]["parameters"] if p["name"] == KEY)
        assert row["default"] == 0 and row["range"] == [0, MAX_LEXICON] and row["type"] == "int"


@pytest.mark.parametrize(
    ("value", "message"),
    [("-1", "scan: parameter lexicon=-1 is out of range [0, 1000000]"), ("2000000", "scan: parameter lexicon=2000000 is out of range [0, 1000000]"),
     ("1.5", "scan: parameter lexicon='1.5' is not a valid int"), ("x", "scan: parameter lexicon='x' is not a valid int")],
)
def test_bad_lexicons_on_the_command_line_are_one_line_errors(value: str, message: str) -> None:
    result = gengap("generate", "scan", "--n", "2", "--param", f"lexicon={value}")
    assert result.returncode == 2 and result.stdout == "" and result.stderr == f"gengap: error: {message}\n"


def test_gengap_lexicon_prints_the_words_of_each_role() -> None:
    shown = gengap("lexicon", "scan", "6")
    assert shown.returncode == 0
    rows = [line.split("\t") for line in shown.stdout.splitlines()]
    assert {(cls, role): word for cls, role, word in rows} == {(c, r): w for c, roles in words_of(spec("scan"), 6).items() for r, w in roles.items()}
    assert json.loads(gengap("lexicon", "cogs", "2", "--json").stdout) == words_of(spec("cogs"), 2)
    for args, message in ((("parity_check", "1"), "parity_check has no lexical roles"), (("scan", "-2"), "lexicon -2 is out of range"),
                          (("scna", "1"), "unknown task 'scna'")):  # fmt: skip
        result = gengap("lexicon", *args)
        assert result.returncode == 2 and result.stderr.startswith("gengap: error: ") and message in result.stderr
        assert result.stderr.count("\n") == 1


@pytest.mark.parametrize("lexicon", [1, 2, 7])
def test_a_category_split_writes_its_exposure_examples_in_the_pool_lexicon(lexicon: int) -> None:
    """COGS's exposure examples (a training sentence per held-out word) go into train written in the
    pool's lexicon: each is its lexicon-0 sentence rewritten, carries meta.lexicon, passes the
    checker, and is the sentence lexicon 0 exposes, read back; the split equals lexicon 0's read back."""
    task = get_task("cogs")
    params = task.make_params({"gen_share": 0.5})
    plain = generate_records("cogs", params, 300, 4)
    written = generate_records("cogs", params.replace(lexicon=lexicon), 300, 4)
    words = lexicon_of(task.lexicon_spec, lexicon)
    zero, k = (split(pool, "category", {"category": "all"}, seed=3) for pool in (plain, written))
    exposed_zero, exposed_k = zero.report["exposure"], k.report["exposure"]
    assert exposed_k == [words.write(text) for text in exposed_zero] and exposed_k != exposed_zero
    pinned = [r for r in k.train if r["input"] in set(exposed_k)]
    assert pinned and all(r["meta"]["lexicon"] == lexicon and task.check(r, r["target"]) for r in pinned)
    for part in ("train", "validation", "test"):
        assert [words.read(r["input"]) for r in getattr(k, part)] == [r["input"] for r in getattr(zero, part)]
    with pytest.raises(SplitError, match="records of one lexicon"):
        split(plain + written, "category", {"category": "all"}, seed=3)
