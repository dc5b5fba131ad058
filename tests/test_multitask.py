"""Multi-task configs (gengap.multitask) and the task_holdout strategy (gengap.splits.tasks).

Properties: held-out tasks never reach train or validation; every record passes its own
task's checker; the same bytes across runs and worker counts; a release with a multi-task
config verifies and regenerates bit for bit; a tiny baseline reports per-task accuracy;
harness exports prompt each record by its own task.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gengap.generators import get_task
from gengap.audit import audit_records
from gengap.checking import record_problem
from gengap.cli import main
from gengap.suite import SuiteError, parse_suite
from gengap.verify import regenerate_and_compare, verify_release
from gengap.splits import SplitError, split
from gengap.splits.tasks import PoolTask, generate_task_pool
from tests.conftest import random_params

# small binary-string tasks of three families (regular, context_free, context_sensitive)
TASKS = ("parity_check", "even_pairs", "cycle_navigation", "reverse_string", "duplicate_string", "odds_first")

SUITE = """\
name: multitask-test
version: 0.1.0
seed: 11
license: mit
created: "2026-12-02"
entries:
  - split: unseen_tasks
    tasks:
      - {task: parity_check, params: {max_length: 10}}
      - {task: even_pairs, level: 2}
      - {task: reverse_string, params: {max_length: 8}, n: 60}
    pool: {n: 80}
    strategy: task_holdout
    options: {test_tasks: [reverse_string]}
    sizes: {train: 120, validation: 15, test: 50}
  - split: mixed
    tasks:
      - {task: parity_check, params: {max_length: 6}}
      - {task: duplicate_string, params: {max_length: 6}}
    pool: {n: 60}
    strategy: iid
  - task: parity_check
    split: length
    train_range: [1, 5]
    test_range: [6, 8]
    sizes: {train: 30, test: 10}
"""


def small_pool(names: list[str], seed: int, rng: random.Random, n: int = 40) -> list[dict]:
    components = []
    for name in names:
        task = get_task(name)
        params = random_params(task, rng, cap=8)
        components.append(PoolTask(name, params, n))
    return generate_task_pool(components, seed)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**31), st.integers(2, 4), st.data())
def test_held_out_tasks_never_reach_train_and_every_record_passes_its_checker(seed: int, count: int, data: st.DataObject) -> None:
    rng = random.Random(seed)
    names = rng.sample(TASKS, count)
    held = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=count - 1, unique=True))
    result = split(small_pool(names, seed, rng), "task_holdout", {"test_tasks": "|".join(held)}, seed)
    assert all(r["task"] not in held for r in result.train + result.validation)
    assert {r["task"] for r in result.test} <= set(held)
    for record in result.train + result.validation + result.test:
        assert record_problem(record) is None
    report = result.report
    assert set(report["test_tasks"]) == set(held) and set(report["train_tasks"]) == set(names) - set(held)
    for part, rows in result.parts().items():
        counted = {task: sum(1 for r in rows if r["task"] == task) for task in names}
        assert report["parts"][part]["tasks"] == {t: c for t, c in sorted(counted.items()) if c}
    assert report["overlap"] == 0


def test_test_families_hold_out_every_task_of_the_family() -> None:
    rng = random.Random(0)
    pool = small_pool(["parity_check", "even_pairs", "reverse_string"], 3, rng)
    result = split(pool, "task_holdout", {"test_families": "regular"}, 3)
    assert {r["task"] for r in result.test} == {"parity_check", "even_pairs"}
    assert {r["task"] for r in result.train + result.validation} == {"reverse_string"}
    assert result.report["families"]["reverse_string"] == "context_free"


def test_overlap_is_the_same_input_of_the_same_task() -> None:
    """A test record whose input occurs in train under another task stays in test."""
    short = [PoolTask(name, get_task(name).make_params({"max_length": 4}), 60) for name in ("parity_check", "reverse_string")]
    result = split(generate_task_pool(short, 5), "task_holdout", {"test_tasks": "reverse_string"}, 5)
    train_inputs = {r["input"] for r in result.train + result.validation}
    assert any(r["input"] in train_inputs for r in result.test)  # shared inputs, other task: not an overlap
    assert result.report["overlap"] == 0 and result.report["removed_overlap"] == 0


@pytest.mark.parametrize(
    ("strategy", "options", "message"),
    [
        ("task_holdout", {}, "^task_holdout needs exactly one of the options test_tasks and test_families$"),
        ("task_holdout", {"test_tasks": "scan"}, r"^test task 'scan' is not in the pool \(its tasks: parity_check, reverse_string\)$"),
        ("task_holdout", {"test_families": "compositional"}, "^test family 'compositional' is not in the pool"),
        ("task_holdout", {"test_tasks": "parity_check|reverse_string"}, "^task_holdout would hold out every task of the pool"),
        ("gotu", {"frozen": "0"}, "^gotu splits need a pool of one task, got 2"),
        ("category", {"category": "all"}, "^category splits need a pool of one task, got 2"),
    ],
)
def test_refusals_are_one_line(strategy: str, options: dict, message: str) -> None:
    pool = small_pool(["parity_check", "reverse_string"], 2, random.Random(2), n=20)
    with pytest.raises(SplitError, match=message):
        split(pool, strategy, options, 0)


@pytest.mark.parametrize("strategy", ["iid", "length", "holdout", "mcd"])
def test_other_strategies_split_a_pool_of_several_tasks(strategy: str) -> None:
    options = {"length": {"train_max": 4}, "holdout": {"atom": "1+0"}, "mcd": {"steps": 50}}.get(strategy, {})
    pool = small_pool(["parity_check", "reverse_string"], 4, random.Random(4), n=30)
    result = split(pool, strategy, options, 0)
    assert result.report["overlap"] == 0
    assert sum(result.report["sizes"].values()) > 0


def test_a_multi_task_entry_resolves_to_one_config_listing_its_tasks() -> None:
    suite = parse_suite(SUITE, "<test>")
    names = [e["name"] for e in suite["entries"]]
    assert names == ["multi-unseen_tasks", "multi-mixed", "parity_check-length"]
    entry = suite["entries"][0]
    assert [t["task"] for t in entry["tasks"]] == ["parity_check", "even_pairs", "reverse_string"]
    assert [t["n"] for t in entry["tasks"]] == [80, 80, 60]
    assert entry["options"]["test_tasks"] == "reverse_string"
    assert "task" not in entry and suite["entries"][2]["task"] == "parity_check"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("{split: s, task: parity_check, tasks: [{task: parity_check}, {task: even_pairs}], pool: {n: 5}}", r"^<t> line 6: entries\[0\]: give exactly one of task and tasks$"),
        ("{split: s, pool: {n: 5}, strategy: iid}", r"^<t> line 6: entries\[0\]: give exactly one of task and tasks$"),
        ("{split: s, tasks: [{task: parity_check}, {task: parity_check}], pool: {n: 5}, strategy: iid}", r"^<t> line 6: entries\[0\]\.tasks\[1\]\.task: task parity_check appears twice in tasks$"),
        ("{split: s, tasks: [{task: parity_check}, {task: nope}], pool: {n: 5}, strategy: iid}", r"entries\[0\]\.tasks\[1\]\.task: unknown task"),
        ("{split: s, tasks: [{task: parity_check}, {task: even_pairs}], strategy: iid}", "needs a pool"),
        ("{split: s, tasks: [{task: parity_check}, {task: even_pairs}], level_max: 3, sizes: {train: 5, test: 5}, strategy: difficulty}", "sampled splits need one task"),
        ("{split: s, tasks: [{task: parity_check, params: {max_length: 0}}, {task: even_pairs}], pool: {n: 5}, strategy: iid}", r"entries\[0\]\.tasks\[0\]\.params"),
        ("{split: s, tasks: [{task: parity_check}, {task: even_pairs}], pool: {n: 5}, strategy: task_holdout, options: {test_tasks: [x], nope: 1}}", r"entries\[0\]\.options: task_holdout: unknown option 'nope'"),
    ],
)
def test_bad_multi_task_entries_are_one_line_errors(entry: str, message: str) -> None:
    text = f"name: t\nversion: 0.1.0\nseed: 1\nlicense: mit\nentries:\n  - {entry}\n"
    with pytest.raises(SuiteError, match=message) as caught:
        parse_suite(text, "<t>")
    assert "\n" not in str(caught.value)


@pytest.fixture(scope="module")
def releases(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("multitask")
    suite = folder / "suite.yaml"
    suite.write_text(SUITE)
    one, two = folder / "one", folder / "two"
    assert main(["release", str(suite), "--out", str(one), "--workers", "1"]) == 0
    assert main(["release", str(suite), "--out", str(two), "--workers", "2"]) == 0
    return one, two


def test_release_bytes_do_not_depend_on_workers_or_runs(releases: tuple[Path, Path]) -> None:
    one, two = releases
    files = sorted(p.relative_to(one) for p in (one / "data").rglob("*.jsonl"))
    assert len(files) == 9
    for name in files:
        assert (one / name).read_bytes() == (two / name).read_bytes()
    again = parse_suite(SUITE, "<again>")["entries"][0]
    from gengap.release import render_entry

    data, _ = render_entry(again, 11)
    for part, blob in data.items():
        assert (one / "data" / "multi-unseen_tasks" / f"{part}.jsonl").read_bytes() == blob


def test_manifest_and_cards_list_the_tasks(releases: tuple[Path, Path]) -> None:
    root = releases[0]
    manifest = json.loads((root / "manifest.json").read_text())
    config = manifest["configs"][0]
    assert config["task"] == "parity_check+even_pairs+reverse_string"
    assert [t["task"] for t in config["tasks"]] == ["parity_check", "even_pairs", "reverse_string"]
    assert config["report"]["train_tasks"] == ["parity_check", "even_pairs"] and config["report"]["test_tasks"] == ["reverse_string"]
    assert config["report"]["parts"]["test"]["tasks"] == {"reverse_string": 50}
    assert "task" not in manifest["configs"][2] or manifest["configs"][2]["task"] == "parity_check"
    card = (root / "README.md").read_text()
    assert "held-out test tasks: `reverse_string`" in card
    assert "| even_pairs | regular |" in card  # the task table lists each pooled task
    croissant = json.loads((root / "croissant.json").read_text())
    assert {"parity_check", "even_pairs", "reverse_string", "duplicate_string"} <= set(croissant["keywords"])
    assert "CITATION.cff" in {p.name for p in root.iterdir()} and "reverse_string" in (root / "CITATION.cff").read_text()


def test_a_release_with_multi_task_configs_verifies_and_regenerates(releases: tuple[Path, Path]) -> None:
    root = releases[0]
    report = verify_release(root)
    assert report.ok, report.problems
    assert report.records == sum(json.loads((root / "manifest.json").read_text())["data_files"][p]["rows"] for p in json.loads((root / "manifest.json").read_text())["data_files"])
    rebuilt = regenerate_and_compare(root)
    assert rebuilt.ok, (rebuilt.problems, rebuilt.changed)


def test_audit_rejects_a_record_of_a_task_outside_the_config(releases: tuple[Path, Path], tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "copy"
    shutil.copytree(releases[0], root)
    manifest = json.loads((root / "manifest.json").read_text())
    path = root / "data" / "multi-unseen_tasks" / "test.jsonl"
    lines = path.read_text().splitlines()
    foreign = (root / "data" / "multi-mixed" / "train.jsonl").read_text().splitlines()
    stray = next(line for line in foreign if json.loads(line)["task"] == "duplicate_string")
    path.write_text("\n".join([stray, *lines[1:]]) + "\n")
    audit = audit_records(root, manifest, set(manifest["data_files"]))
    assert any("task 'duplicate_string' is not the config's task 'parity_check+even_pairs+reverse_string'" in p for p in audit.problems)


def test_tiny_baseline_reports_accuracy_per_task(releases: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    out = tmp_path / "run"
    argv = ["train", str(releases[0]), "--config", "multi-unseen_tasks", "--preset", "tiny", "--steps", "2", "--eval-every", "2",
            "--seeds", "0", "--eval-limit", "20", "--d-model", "16", "--heads", "2", "--layers", "1", "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "task parity_check: ID" in printed and "task reverse_string: OOD" in printed
    results = json.loads((out / "results.json").read_text())
    by_task = results["per_seed"][0]["by_task"]
    assert set(by_task["id"]) == {"parity_check", "even_pairs"} and set(by_task["ood"]) == {"reverse_string"}
    assert set(results["aggregate"]["by_task"]["ood"]) == {"reverse_string"}
    assert main(["report", str(out)]) == 0
    report = capsys.readouterr().out
    assert "## Exact match by task" in report and "| multi-unseen_tasks | rope | tiny | reverse_string | – |" in report


def test_exports_prompt_each_record_by_its_own_task(releases: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "chat"
    assert main(["export", str(releases[0]), "--to", "chat", "--config", "multi-unseen_tasks", "--shots", "2", "--out", str(out)]) == 0
    rows = [json.loads(line) for part in ("train", "test") for line in (out / "multi-unseen_tasks" / f"{part}.jsonl").read_text().splitlines()]
    for row in rows:
        prompt = row["prompt"][0]["content"]
        if row["task"] == "reverse_string":  # held out: its own instruction, no shots (none of its records are in train)
            assert "reverse order" in prompt and len(row["prompt"]) == 1
        else:
            assert "reverse order" not in prompt and len(row["prompt"]) == 5


@pytest.mark.slow
def test_gengap_eval_prompts_each_task_and_reports_it(releases: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("transformers")
    from tests.harness_models import tiny_model

    model = tiny_model(tmp_path / "model", ["Input: 0 1 1\nAnswer: 1", "Answer the input's symbols in reverse order."])
    run = tmp_path / "eval"
    argv = ["eval", str(model), "--release", str(releases[0]), "--config", "multi-unseen_tasks", "--shots", "1", "--limit", "4",
            "--max-new-tokens", "2", "--out", str(run)]
    assert main(argv) == 0
    assert "task reverse_string: OOD" in capsys.readouterr().out
    results = json.loads((run / "results.json").read_text())
    assert results["task"] == "parity_check+even_pairs+reverse_string"
    assert set(results["per_seed"][0]["by_task"]["ood"]) == {"reverse_string"}
    generations = [json.loads(line) for line in (run / "generations.jsonl").read_text().splitlines()]
    ood = [g for g in generations if g["side"] == "ood"]
    assert ood and all("reverse order" in g["prompt"] and g["prompt"].count("Input: ") == 1 for g in ood)  # held out: zero-shot
    assert all(g["prompt"].count("Input: ") == 2 for g in generations if g["side"] == "id")  # one shot of its own task


def test_the_record_limit_counts_every_task_of_a_config() -> None:
    from gengap.limits import RecordLimit
    from gengap.suite import SuiteLimitError

    with pytest.raises(SuiteLimitError, match=r"line 12: entries\[0\]\.pool\.n: its 3 tasks hold 220 records together; the limit is 200 records per config"):
        parse_suite(SUITE, "<t>", RecordLimit(max_records=200, explicit=True))
    parse_suite(SUITE, "<t>", RecordLimit(max_records=220, explicit=True))


def test_split_cli_on_a_multi_task_pool(releases: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pool = tmp_path / "pool.jsonl"
    folder = releases[0] / "data" / "multi-unseen_tasks"
    pool.write_text("".join((folder / f"{part}.jsonl").read_text() for part in ("train", "validation", "test")))
    assert main(["split", str(pool), "--strategy", "task_holdout", "--option", "test_families=context_free", "--out", str(tmp_path / "s")]) == 0
    report = json.loads((tmp_path / "s" / "report.json").read_text())
    assert report["test_tasks"] == ["reverse_string"] and report["overlap"] == 0
    assert main(["split", str(pool), "--strategy", "gotu", "--option", "frozen=0", "--out", str(tmp_path / "g")]) != 0
    assert "gotu splits need a pool of one task" in capsys.readouterr().err and not (tmp_path / "g").exists()


@pytest.mark.slow
def test_a_multi_task_config_loads_with_datasets_and_its_croissant_validates(releases: tuple[Path, Path], tmp_path: Path) -> None:
    import subprocess
    import sys

    datasets = pytest.importorskip("datasets")
    loaded = datasets.load_dataset(str(releases[0]), "multi-unseen_tasks", cache_dir=str(tmp_path / "cache"))
    assert set(loaded["train"]["task"]) == {"parity_check", "even_pairs"} and set(loaded["test"]["task"]) == {"reverse_string"}
    validator = Path(sys.executable).with_name("mlcroissant")
    if not validator.exists():
        pytest.skip("mlcroissant is not installed")
    done = subprocess.run([str(validator), "validate", "--jsonld", str(releases[0] / "croissant.json")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


# -- task markers and the warning about shared inputs -------------------------------------------

MARKED_SUITE = """\
name: marker-test
version: 0.1.0
seed: 4
license: mit
created: "2026-12-02"
entries:
  - split: binary
    {marker}tasks:
      - {{task: parity_check, params: {{max_length: 6}}}}
      - {{task: reverse_string, params: {{max_length: 6}}}}
      - {{task: duplicate_string, params: {{max_length: 6}}}}
    pool: {{n: 50}}
    strategy: task_holdout
    options: {{test_tasks: [duplicate_string]}}
  - split: apart
    tasks:
      - {{task: parity_check, params: {{max_length: 6}}}}
      - {{task: addition, params: {{max_digits_a: 2, max_digits_b: 2}}}}
    pool: {{n: 40}}
    strategy: iid
"""


@pytest.fixture(scope="module")
def marked_releases(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, Path]:
    root = tmp_path_factory.mktemp("markers")
    made = {}
    for marked in (False, True):
        suite = root / f"suite-{marked}.yaml"
        suite.write_text(MARKED_SUITE.format(marker="task_marker: true\n    " if marked else ""))
        made[marked] = root / f"release-{marked}"
        assert main(["release", str(suite), "--out", str(made[marked]), "--workers", "1"]) == 0
    return made


def config_records(release: Path, config: str) -> dict[str, list[dict]]:
    return {part: [json.loads(line) for line in (release / "data" / config / f"{part}.jsonl").read_text().splitlines()]
            for part in ("train", "validation", "test")}


def test_shared_inputs_with_different_targets_warn_unless_marked(marked_releases: dict[bool, Path]) -> None:
    reports = {marked: {c["name"]: c["report"] for c in json.loads((path / "manifest.json").read_text())["configs"]}
               for marked, path in marked_releases.items()}
    unmarked = reports[False]["multi-binary"]["warnings"]
    parts = config_records(marked_releases[False], "multi-binary")
    by_input: dict[str, set[tuple[str, str]]] = {}
    for records in parts.values():
        for r in records:
            by_input.setdefault(r["input"], set()).add((r["task"], r["target"]))
    shared = [text for text, pairs in by_input.items() if len({t for _, t in pairs}) > 1 and len({k for k, _ in pairs}) > 1]
    assert shared and [w for w in unmarked if w.startswith(f"{len(shared):,} inputs have different targets in different tasks")]
    assert any("task_marker: true" in w for w in unmarked)
    assert not any("different targets" in w for w in reports[True]["multi-binary"]["warnings"])  # marked: nothing to tell apart
    assert not any("different targets" in w for w in reports[False]["multi-apart"]["warnings"])  # no input of parity is one of addition
    assert reports[True]["multi-binary"]["task_marker"] == {"token": "task:<task>"}


def test_marked_records_are_their_unmarked_twins_with_the_task_token_and_pass_every_check(marked_releases: dict[bool, Path]) -> None:
    from gengap.generators.markers import without_marker

    plain, marked = (config_records(marked_releases[m], "multi-binary") for m in (False, True))
    for part in plain:
        assert [without_marker(r) for r in marked[part]] == plain[part]  # the same split, records and bytes but for the token
        for record in marked[part]:
            assert record["input"].split()[0] == f"task:{record['task']}"
            assert record["difficulty"]["input_length"] == len(record["input"].split())
            assert record_problem(record) is None
    inputs = [r["input"] for records in marked.values() for r in records]
    assert len({(r["input"]) for records in marked.values() for r in records}) == len(set(inputs))
    held = {r["task"] for r in marked["test"]} - {r["task"] for r in marked["train"]}
    assert held == {"duplicate_string"}
    assert verify_release(marked_releases[True]).ok and regenerate_and_compare(marked_releases[True]).ok


def test_a_marker_naming_another_task_is_refused(marked_releases: dict[bool, Path]) -> None:
    record = config_records(marked_releases[True], "multi-binary")["train"][0]
    other = "reverse_string" if record["task"] != "reverse_string" else "parity_check"
    from gengap.generators import record_id

    text = record["input"].replace(f"task:{record['task']}", f"task:{other}")
    forged = dict(record, input=text, id=record_id(record["task"], text, record["target"]))
    assert "does not name its task" in (record_problem(forged) or "")
    checker = get_task(record["task"])
    assert checker.check(record, record["target"])  # the checker reads the record without its marker


def test_exports_carry_the_marker(marked_releases: dict[bool, Path], tmp_path: Path) -> None:
    assert main(["export", str(marked_releases[True]), "--to", "chat", "--out", str(tmp_path / "chat")]) == 0
    rows = [json.loads(line) for line in (tmp_path / "chat" / "multi-binary" / "test.jsonl").read_text().splitlines()]
    assert rows and all(row["input"].startswith(f"task:{row['task']} ") for row in rows)
    assert all(f"Input: task:{row['task']} " in row["prompt"][-1]["content"] for row in rows)


def test_a_marked_mixture_stream_marks_every_record_and_excludes_a_marked_configs_inputs(marked_releases: dict[bool, Path]) -> None:
    import itertools

    from gengap.generators import Exclusion, Component, TaskMixture
    from gengap.generators.markers import without_marker
    from gengap.generators.mixtures import parse_mixture

    components = tuple(Component.from_settings(task, params=(("max_length", "6"),)) for task in ("parity_check", "reverse_string"))
    plain = list(itertools.islice(TaskMixture(components).stream(0).iterate(), 300))
    marked = list(itertools.islice(TaskMixture(components, task_marker=True).stream(0).iterate(), 300))
    assert [(p, k, level) for p, k, level, _ in marked] == [(p, k, level) for p, k, level, _ in plain]
    assert [without_marker(r) for *_, r in marked] == [r for *_, r in plain]
    assert all(r["input"].startswith(f"task:{r['task']} ") for *_, r in marked)
    exclusion = Exclusion.from_release(marked_releases[True], "multi-binary")  # marked held-out inputs
    held = {r["input"].split(" ", 1)[1] for part in ("validation", "test") for r in config_records(marked_releases[True], "multi-binary")[part]}
    kept = list(itertools.islice(TaskMixture(components, task_marker=True).stream(0, exclusion).records(), 300))
    assert kept and not {r["input"].split(" ", 1)[1] for r in kept} & held
    mixture = parse_mixture("task_marker: true\ncomponents: [{task: parity_check}, {task: reverse_string}]\n", "mix.yaml")
    assert mixture.task_marker and next(mixture.stream(1).records())["input"].startswith("task:")
