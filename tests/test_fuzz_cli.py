"""Fuzzing the commands that read files: random bytes, random JSON and YAML, and valid records,
releases and suites with random parts changed go to check, split, divergence, verify and
release. Whatever the input: exit 0, 1 or 2; on exit 2 exactly one line ``gengap: error: ...``;
never a traceback; nothing left behind but the command's output on success.

The commands run in this process through gengap.cli.main (an exception escaping it fails the
test, with the example that raised it); test_hostile_input.py runs the cases the fuzzing was
built around through real subprocesses. The default run draws a few examples per command
(FUZZ_EXAMPLES); the slow-marked variants draw 500 (GENGAP_FUZZ_EXAMPLES=N for another number).
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import math
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gengap.generators import batch_to_jsonl, get_task, record_id, task_names
from gengap.cli import main
from gengap.release import write_checksums
from tests.test_output_discipline import TINY

FUZZ_EXAMPLES = 12
SLOW_EXAMPLES = int(os.environ.get("GENGAP_FUZZ_EXAMPLES", "500"))
FUZZ = settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
FUZZ_SLOW = settings(max_examples=SLOW_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))


def _seed_records() -> list[dict[str, Any]]:
    """One valid record of every task at levels 1 and 3 (the material the mutations start from)."""
    out = []
    for name in task_names():
        task = get_task(name)
        for level in (1, 3):
            batch = task.generate(np.random.default_rng(level), 2, task.level(level))
            out += [json.loads(line) for line in batch_to_jsonl(batch, name).splitlines()]
    return out


SEEDS = _seed_records()

NASTY = st.sampled_from(
    [
        "\ud800", "\udfff", "a\ud83dz", "", " ", "\x00", "\u2028", "1 0", "jump twice", "-",
        10**40, -(10**40), 2**63, -1, 0, 1.5, float("nan"), float("inf"), -float("inf"), 1e308, True, None,
    ]
)
LEAVES = NASTY | st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12)
JSON_VALUES = st.recursive(
    LEAVES, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8) | st.sampled_from(["task", "input", "target", "id", "difficulty", "structure", "meta"]), inner, max_size=4), max_leaves=12
)


@st.composite
def mutated(draw: st.DrawFn, base: Any) -> Any:
    """base with one to three random places replaced, removed or added (valid elsewhere, so the
    change reaches past the first checks)."""
    value = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        holder: Any = None
        key: Any = None
        node = value
        while isinstance(node, (dict, list)) and node and draw(st.booleans()):
            holder, key = node, draw(st.sampled_from(sorted(node) if isinstance(node, dict) else range(len(node))))
            node = node[key]
        action = draw(st.sampled_from(["replace", "remove", "add"]))
        if holder is None:
            if isinstance(value, dict):
                value[draw(st.text(max_size=6))] = draw(JSON_VALUES)
            continue
        if action == "replace":
            holder[key] = draw(JSON_VALUES)
        elif action == "remove":
            del holder[key]
        elif isinstance(node, dict):
            node[draw(st.sampled_from(["task", "input", "x", "files", "test", "name", "pool", "options"]))] = draw(JSON_VALUES)
        elif isinstance(node, list):
            node.append(draw(JSON_VALUES))
    return value


@st.composite
def consistent(draw: st.DrawFn, base: dict[str, Any]) -> dict[str, Any]:
    """A valid record with its input, target, meta, structure or one difficulty feature
    changed, and its id and token lengths recomputed: it passes the schema and the id check,
    so the change reaches the task's checker, measures and derivations."""
    record = copy.deepcopy(base)
    key = draw(st.sampled_from(["input", "target", "meta", "structure", "difficulty"]))
    if key in ("input", "target"):
        tokens = record[key].split()
        if draw(st.booleans()):
            record[key] = " ".join(draw(st.lists(st.sampled_from(tokens + ["(", ")", "x", "-", "9", "0", "and", "twice"]), min_size=1, max_size=40)))
        else:
            record[key] = " ".join(draw(st.lists(st.text(min_size=1, max_size=4).filter(lambda t: t.strip() == t and t.split() == [t]), min_size=1, max_size=6)))
    elif key == "meta":
        meta = dict(record.get("meta") or {})
        name = draw(st.sampled_from(sorted(meta) or ["p"]))
        meta[name] = draw(JSON_VALUES | st.sampled_from([10**30 + 57, 0, -7, 2, "", [], {}]))
        record["meta"] = meta
    elif key == "structure":
        record["structure"] = draw(mutated(record["structure"]) if "structure" in record else JSON_VALUES)
    else:
        name = draw(st.sampled_from(sorted(record["difficulty"])))
        record["difficulty"][name] = draw(st.integers() | st.sampled_from([10**40, -1, 0]))
    record["id"] = record_id(record["task"], record["input"], record["target"])
    record["difficulty"]["input_length"] = len(record["input"].split())
    record["difficulty"]["output_length"] = len(record["target"].split())
    return record


def _json_bytes(value: Any) -> bytes:
    """JSON text of any value the strategies make (NaN and infinities as Python writes them)."""
    return json.dumps(value).encode()


JSONL_LINES = st.one_of(
    st.binary(max_size=200),
    JSON_VALUES.map(_json_bytes),
    st.sampled_from(SEEDS).flatmap(mutated).map(_json_bytes),
    st.sampled_from(SEEDS).flatmap(consistent).map(_json_bytes),
    st.sampled_from(SEEDS).flatmap(consistent).map(_json_bytes),
    st.sampled_from(SEEDS).map(_json_bytes),
    st.sampled_from([b"[" * 5000 + b"]" * 5000, b'{"a": ' + b"9" * 5000 + b"}", b'{"input": "\\ud800"}', b"NaN", b"[1e999]"]),
)
JSONL_FILES = st.lists(JSONL_LINES, min_size=1, max_size=6).map(lambda lines: b"\n".join(lines) + b"\n") | st.binary(max_size=400)


def run_main(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def assert_clean_outcome(code: int, err: str, folder: Path, expected: set[str], output: str | None) -> None:
    """Exit 0, 1 or 2; on exit 2 exactly one error line; no traceback; only the inputs (and, on
    success, the output) in folder."""
    assert code in (0, 1, 2), (code, err)
    assert "Traceback" not in err
    if code == 2:
        assert err.startswith("gengap: error: ") and err.count("\n") == 1, err
    else:
        assert "gengap: error:" not in err, err
    left = set(os.listdir(folder))
    allowed = expected | ({output} if output and code == 0 else set())
    assert left <= allowed and expected <= left, (left, allowed)


@contextlib.contextmanager
def scratch() -> Any:
    folder = Path(tempfile.mkdtemp(prefix="gengap-fuzz-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# -- check, split, divergence -----------------------------------------------------------------

COMMANDS: dict[str, Callable[[Path], tuple[list[str], str | None]]] = {
    "check": lambda f: (["check", str(f)], None),
    "split-iid": lambda f: (["split", str(f), "--strategy", "iid", "--out", str(f.parent / "out")], "out"),
    "split-length": lambda f: (
        ["split", str(f), "--strategy", "length", "--option", "train_max=3", "--option", "test_min=4", "--out", str(f.parent / "out")],
        "out",
    ),
    "split-holdout": lambda f: (["split", str(f), "--strategy", "holdout", "--option", "atom=jump", "--out", str(f.parent / "out")], "out"),
    "divergence": lambda f: (["divergence", str(f), str(f)], None),
}


def _records_property(command: str, data: bytes) -> None:
    with scratch() as folder:
        path = folder / "pool.jsonl"
        path.write_bytes(data)
        args, output = COMMANDS[command](path)
        code, _, err = run_main(args)
        assert_clean_outcome(code, err, folder, {"pool.jsonl"}, output)


@pytest.mark.parametrize("command", sorted(COMMANDS))
@FUZZ
@given(data=JSONL_FILES)
def test_fuzz_record_readers(command: str, data: bytes) -> None:
    _records_property(command, data)


def _free_form_structure_tasks() -> list[str]:
    """Tasks whose records carry a structure their input does not determine (derive gives None)."""
    return sorted({r["task"] for r in SEEDS if "structure" in r and get_task(r["task"]).derive(r) is None})


NOT_TREES: list[Any] = [5, [[1]], ["rule", 3], [], {"rule": 1}, ["rule", ""], [""], None]


@pytest.mark.parametrize("name", _free_form_structure_tasks())
@pytest.mark.parametrize("command", ["split-holdout", "divergence"])
def test_free_form_structure_that_is_not_a_tree_is_one_line(name: str, command: str) -> None:
    """A record whose free-form structure is not a tree is refused with one line naming it
    (the slow fuzz once found a traceback here)."""
    good = next(r for r in SEEDS if r["task"] == name)
    for bad in NOT_TREES:
        code, err = _run_on_pool(command, [{**good, "structure": bad}, good])
        assert code == 2 and "line 1" in err and ("structure" in err or "schema" in err), (bad, err)


def _run_on_pool(command: str, records: list[dict[str, Any]]) -> tuple[int, str]:
    """(exit code, stderr) of a COMMANDS entry on a pool of these records (a clean outcome asserted)."""
    with scratch() as folder:
        path = folder / "pool.jsonl"
        path.write_text("".join(json.dumps(record) + "\n" for record in records))
        args, output = COMMANDS[command](path)
        code, _, err = run_main(args)
        assert_clean_outcome(code, err, folder, {"pool.jsonl"}, output)
    return code, err


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(COMMANDS))
@FUZZ_SLOW
@given(data=JSONL_FILES)
def test_fuzz_record_readers_at_length(command: str, data: bytes) -> None:
    _records_property(command, data)


# -- verify ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz-release")
    (root / "tiny.yaml").write_text(TINY)
    code, _, err = run_main(["release", str(root / "tiny.yaml"), "--out", str(root / "release"), "--workers", "1"])
    assert code == 0, err
    return root / "release"


MANIFEST_FILE = "manifest.json"
DATA_FILE = "data/parity_check-length/train.jsonl"


def _forgery(release: Path) -> st.SearchStrategy[tuple[str, bytes]]:
    """(path in the release, new bytes): the manifest mutated or replaced, or a data file replaced."""
    manifest = json.loads((release / MANIFEST_FILE).read_text())
    return st.one_of(
        mutated(manifest).map(lambda m: (MANIFEST_FILE, _json_bytes(m))),
        st.one_of(JSON_VALUES.map(_json_bytes), st.binary(max_size=300)).map(lambda b: (MANIFEST_FILE, b)),
        JSONL_FILES.map(lambda b: (DATA_FILE, b)),
    )


def _verify_property(release: Path, forgery: tuple[str, bytes], resum: bool) -> None:
    with scratch() as folder:
        copy_ = folder / "release"
        shutil.copytree(release, copy_)
        name, data = forgery
        (copy_ / name).write_bytes(data)
        if resum:
            write_checksums(copy_)
        before = sorted(p.relative_to(copy_).as_posix() for p in copy_.rglob("*"))
        code, out, err = run_main(["verify", str(copy_)])
        assert_clean_outcome(code, err, folder, {"release"}, None)
        assert code == 1 or resum, (code, out, err)  # a changed file against SHA256SUMS always fails
        assert sorted(p.relative_to(copy_).as_posix() for p in copy_.rglob("*")) == before


@FUZZ
@given(data=st.data(), resum=st.booleans())
def test_fuzz_verify(tiny_release: Path, data: st.DataObject, resum: bool) -> None:
    forgery = data.draw(_forgery(tiny_release))
    original = (tiny_release / forgery[0]).read_bytes()
    if forgery[1] == original:
        return
    _verify_property(tiny_release, forgery, resum)


@pytest.mark.slow
@FUZZ_SLOW
@given(data=st.data(), resum=st.booleans())
def test_fuzz_verify_at_length(tiny_release: Path, data: st.DataObject, resum: bool) -> None:
    forgery = data.draw(_forgery(tiny_release))
    if forgery[1] == (tiny_release / forgery[0]).read_bytes():
        return
    _verify_property(tiny_release, forgery, resum)


# -- release ----------------------------------------------------------------------------------

TINY_SUITE = yaml.safe_load(TINY.replace('created: "2026-01-01"', "created: '2026-01-01'"))
SMALL_SUITE = dict(TINY_SUITE, entries=[TINY_SUITE["entries"][0]])

SUITE_TEXTS = st.one_of(
    st.binary(max_size=300),
    JSON_VALUES.map(lambda v: yaml.safe_dump(v).encode()),
    mutated(SMALL_SUITE).map(lambda v: yaml.safe_dump(v, allow_unicode=False).encode()),
    st.sampled_from(
        [
            TINY.replace('"2026-01-01"', "2026-13-45").encode(),
            TINY.replace('"2026-01-01"', "2026-02-30").encode(),
            TINY.replace("sizes: {train: 30", "options: {x: .nan}, sizes: {train: 30").encode(),
            TINY.replace("seed: 1", "seed: " + "9" * 5000).encode(),
            TINY.replace("seed: 1", "seed: .inf").encode(),
            b"a: [" * 200,
            b"a: &a [*a]\n",
        ]
    ),
)


def _release_property(text: bytes) -> None:
    with scratch() as folder:
        (folder / "suite.yaml").write_bytes(text)
        code, _, err = run_main(["release", str(folder / "suite.yaml"), "--out", str(folder / "out"), "--workers", "1"])
        if code == 0:
            assert main(["verify", str(folder / "out")]) == 0
        lines = [line for line in err.splitlines() if not line.startswith(("gengap: [", "gengap: warning:"))]
        assert_clean_outcome(code, "".join(f"{line}\n" for line in lines), folder, {"suite.yaml"}, "out")


@FUZZ
@given(text=SUITE_TEXTS)
def test_fuzz_release(text: bytes) -> None:
    _release_property(text)


@pytest.mark.slow
@FUZZ_SLOW
@given(text=SUITE_TEXTS)
def test_fuzz_release_at_length(text: bytes) -> None:
    _release_property(text)


@pytest.mark.parametrize("name", _free_form_structure_tasks())
@pytest.mark.parametrize("command", ["split-holdout", "divergence"])
def test_free_form_records_without_structure_split_by_tokens(name: str, command: str) -> None:
    """A record of a task without derivations that carries no structure is split by its input's
    tokens, like a task without atoms (the slow fuzz once found a traceback here)."""
    good = next(r for r in SEEDS if r["task"] == name)
    bare = {k: v for k, v in good.items() if k != "structure"}
    code, err = _run_on_pool(command, [bare, good])
    assert code in (0, 2), err
    assert get_task(name).atoms(bare) is None and get_task(name).compounds(bare) is None
    assert get_task(name).atoms(good)


# -- numbers and the work a record asks for (issue 38, items 7 and 8) ---------------------------------

NON_FINITE = st.sampled_from(["nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e400", "-1e400"])
HUGE = st.sampled_from(["1" + "0" * 30, "-" + "9" * 25, str(2**63), str(-(2**63) - 1)])
NUMBER_TEXTS = NON_FINITE | HUGE | st.floats(allow_nan=True, allow_infinity=True).map(repr) | st.integers().map(str)


def _numeric_knobs(params_type: type) -> list[str]:
    import dataclasses

    return [f.name for f in dataclasses.fields(params_type) if f.type in ("int", "float", int, float)]


TASK_KNOBS = sorted((name, knob) for name in task_names() for knob in _numeric_knobs(get_task(name).params_type))


def _split_knobs() -> list[tuple[str, str]]:
    from gengap.splits import STRATEGIES

    return sorted((name, knob) for name, strategy in STRATEGIES.items() for knob in _numeric_knobs(strategy.options_type))


SPLIT_KNOBS = _split_knobs()


def _numeric_property(kind: str, pair: tuple[str, str], text: str) -> None:
    """Any number text for any numeric parameter, option or cue rate: exit 0 or one line (exit 2),
    and a non-finite one is always refused, naming the knob, with nothing written."""
    with scratch() as folder:
        if kind == "parameter":
            task, knob = pair
            args = ["generate", task, "--n", "2", "--param", f"{knob}={text}", "--out", str(folder / "out.jsonl")]
            output = "out.jsonl"
            expected: set[str] = set()
        else:
            (folder / "pool.jsonl").write_text("".join(json.dumps(r) + "\n" for r in SEEDS if r["task"] == "parity_check"))
            strategy, knob = pair if kind == "option" else ("iid", "")
            extra = ["--option", f"{knob}={text}"] if kind == "option" else ["--cue", f"train={text},test=0.5"]
            args = ["split", str(folder / "pool.jsonl"), "--strategy", strategy, *extra, "--out", str(folder / "out")]
            output, expected = "out", {"pool.jsonl"}
        code, _, err = run_main(args)
        if kind == "parameter" and code == 0 and (folder / "out.jsonl").exists():  # a finite, in-range value: the output is checked records
            assert main(["check", str(folder / "out.jsonl")]) == 0
        assert_clean_outcome(code, err, folder, expected, output)
        try:
            finite = math.isfinite(float(text))
        except (ValueError, OverflowError):
            finite = True  # not a number at all: refused as such
        if not finite:
            assert code == 2 and (knob in err or "rate" in err) and ("finite" in err or "not a valid" in err), err


NUMERIC_CASES = st.one_of(
    st.tuples(st.just("parameter"), st.sampled_from(TASK_KNOBS), NUMBER_TEXTS),
    st.tuples(st.just("option"), st.sampled_from(SPLIT_KNOBS), NUMBER_TEXTS),
    st.tuples(st.just("cue"), st.just(("iid", "")), NUMBER_TEXTS),
)


@FUZZ
@given(case=NUMERIC_CASES)
def test_fuzz_numbers_of_parameters_options_and_cues(case: tuple[str, tuple[str, str], str]) -> None:
    _numeric_property(*case)


@pytest.mark.slow
@FUZZ_SLOW
@given(case=NUMERIC_CASES)
def test_fuzz_numbers_of_parameters_options_and_cues_at_length(case: tuple[str, tuple[str, str], str]) -> None:
    _numeric_property(*case)


def test_every_numeric_knob_refuses_nan_in_the_default_tier() -> None:
    """The default tier draws a few cases only: every knob of every task and strategy gets nan once here."""
    for task, knob in TASK_KNOBS:
        _numeric_property("parameter", (task, knob), "nan")
    for pair in SPLIT_KNOBS:
        _numeric_property("option", pair, "inf")


OVERSIZED_META = st.sampled_from([10**6, 10**18, 2**63, -(2**63), 99, -1, 0, 1.5, float("inf"), True, "4", [4], None])


@st.composite
def oversized_meta(draw: st.DrawFn) -> dict[str, Any]:
    """A valid record of a task whose checker reads meta, one meta field replaced by an oversized
    or ill-typed value (the records of search tasks first: grid_program, letter_analogy)."""
    base = draw(st.sampled_from([r for r in SEEDS if get_task(r["task"]).meta_keys]))
    record = copy.deepcopy(base)
    key = draw(st.sampled_from(list(get_task(record["task"]).meta_keys)))
    record["meta"][key] = draw(OVERSIZED_META)
    return record


def _meta_property(record: dict[str, Any]) -> None:
    """check of the record ends at once, exit 0 or 1, and the checker and every reward path agree."""
    import time

    from gengap.harnesses.rewards import compute_score

    task = get_task(record["task"])
    with scratch() as folder:
        (folder / "records.jsonl").write_text(json.dumps(record) + "\n")
        started = time.perf_counter()
        code, _, err = run_main(["check", str(folder / "records.jsonl")])
        info = {"task": record["task"], "input": record["input"], "meta": record["meta"]}
        reward = compute_score("gengap/x", "Answer: " + record["target"] + " x", record["target"], info)
        assert time.perf_counter() - started < 20, "a record asked for unbounded work"
        assert_clean_outcome(code, err, folder, {"records.jsonl"}, None)
        problem = task.meta_problem(record)
        if problem is not None:  # the record's own problem, or the reader's (JSON has no infinity)
            assert code == 1 and (problem in err or "is not a number JSON allows" in err), err
            assert reward == 0.0 and not task.check(record, record["target"])


@FUZZ
@given(record=oversized_meta())
def test_fuzz_oversized_meta(record: dict[str, Any]) -> None:
    _meta_property(record)


@pytest.mark.slow
@FUZZ_SLOW
@given(record=oversized_meta())
def test_fuzz_oversized_meta_at_length(record: dict[str, Any]) -> None:
    _meta_property(record)


@pytest.mark.parametrize("name", sorted({r["task"] for r in SEEDS if get_task(r["task"]).meta_keys}))
def test_every_meta_field_refuses_an_oversized_value_in_the_default_tier(name: str) -> None:
    record = next(r for r in SEEDS if r["task"] == name)
    for key in get_task(name).meta_keys:
        for value in (10**18, float("inf")):
            changed = copy.deepcopy(record)
            changed["meta"][key] = value
            _meta_property(changed)


@given(values=st.dictionaries(st.sampled_from(sorted(__import__("gengap.baselines.numbers", fromlist=["RANGES"]).RANGES)), st.floats(allow_nan=True, allow_infinity=True) | st.integers(), min_size=1, max_size=3))
@FUZZ
def test_fuzz_training_numbers(values: dict[str, Any]) -> None:
    """Training settings keep to the same rule (gengap.baselines.numbers): a non-finite value is refused by name."""
    from gengap.baselines.errors import BaselineError
    from gengap.baselines.numbers import RANGES, check_numbers

    try:
        check_numbers(values)
    except BaselineError as err:
        assert any(name in str(err) for name in values)
    else:
        assert all(RANGES[name].holds(value) for name, value in values.items())
