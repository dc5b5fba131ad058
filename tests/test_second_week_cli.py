"""Issue 56 ("The second week"), the command line: shipped suites by name and `release --list`
(item 6), start and end lines of a short `train` off a terminal (7), the abacus pairing warning
(8), discoverability (9: preset values in --help, plurals, did-you-mean in suite files, every
independent name problem of an entry, a --stream typo refused before torch), the lm-eval run
line (11) and the recipes' installs (12)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gengap.cli import build_parser, main
from gengap.suite import SuiteError, find_suite, parse_suite, shipped_suites

ROOT = Path(__file__).resolve().parent.parent


def refused(capsys: pytest.CaptureFixture[str], fragment: str, *argv: str) -> str:
    """`gengap ARGV` exits 2 with one line on stderr holding fragment; that line."""
    capsys.readouterr()
    assert main(list(argv)) == 2
    err = capsys.readouterr().err
    assert err.startswith("gengap: error: ") and err.count("\n") == 1 and fragment in err, err
    return err


# -- item 6: shipped suites by name ----------------------------------------------------------


def test_a_shipped_suite_is_found_by_its_name_as_sweeps_are(tmp_path: Path) -> None:
    assert {"cfq-like", "gengap-core", "grokking"} <= set(shipped_suites())
    assert Path(find_suite("cfq-like")).read_bytes() == (ROOT / "gengap" / "suites" / "cfq-like.yaml").read_bytes()
    assert find_suite("my.yaml") == "my.yaml" and find_suite("a/b") == "a/b"  # a file name stays a file name
    with pytest.raises(SuiteError, match=r"^cfq-lik is neither a suite file nor a shipped suite \(did you mean cfq-like\? shipped: "):
        find_suite("cfq-lik")


def test_release_builds_a_shipped_suite_by_name_and_lists_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["release", "grokking", "--out", str(tmp_path / "g")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("released grokking 1.0.0: 3 configs, ") and (tmp_path / "g" / "manifest.json").is_file()
    assert main(["release", "--list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in listed] == shipped_suites()
    assert any(line.split()[:4] == ["cfq-like", "3.0.0", "4", "configs"] for line in listed)
    assert any("(the default)" in line for line in listed if line.startswith("gengap-core "))
    refused(capsys, "--list takes no SUITE", "release", "grokking", "--list")
    refused(capsys, "nope is neither a suite file nor a shipped suite", "release", "nope", "--out", str(tmp_path / "n"))
    assert not (tmp_path / "n").exists()


# -- item 9: plurals, did-you-mean, problems per entry ------------------------------------------

ONE = """\
name: one
version: 1.0.0
seed: 1
license: cc-by-4.0
entries:
  - {task: parity_check, split: length, train_range: [1, 4], test_range: [5, 6], sizes: {train: 20, validation: 5, test: 5}}
"""


def test_one_config_is_one_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "one.yaml").write_text(ONE)
    assert main(["release", str(tmp_path / "one.yaml"), "--out", str(tmp_path / "r")]) == 0
    assert "released one 1.0.0: 1 config, 30 records, fingerprint " in capsys.readouterr().out
    assert main(["export", str(tmp_path / "r"), "--to", "chat", "--out", str(tmp_path / "chat")]) == 0
    assert re.search(r"exported one: 1 config, \d+ rows as chat", capsys.readouterr().out)
    line = json.loads((tmp_path / "r" / "data" / "parity_check-length" / "test.jsonl").read_text().splitlines()[0])
    (tmp_path / "single.jsonl").write_text(json.dumps(line) + "\n")
    assert main(["check", str(tmp_path / "single.jsonl")]) == 0
    assert capsys.readouterr().out.startswith("checked 1 record: 1 passed, 0 failed")


BROKEN = """\
name: x
version: 1.0.0
seed: 1
license: cc-by-4.0
entries:
  - {task: parity_chek, split: lenght, train_range: [1, 5], test_range: [6, 8], sizes: {train: 20, validation: 5, test: 5}}
  - {task: parity_check, split: length, train_rang: [1, 5], test_range: [6, 8], sizes: {train: 20, tst: 5}}
  - {task: revers_string, split: x, strategy: lenght, pool: {n: 30}, colour: blue}
"""


def test_a_suite_names_every_independent_problem_of_an_entry_with_the_closest_names() -> None:
    with pytest.raises(SuiteError) as caught:
        parse_suite(BROKEN, "s.yaml")
    message = str(caught.value)
    assert message.startswith("s.yaml: 7 problems: ") and "\n" not in message
    for problem in [
        "line 6: entries[0].task: unknown task 'parity_chek' (did you mean parity_check?",
        "line 6: entries[0].split: split 'lenght' is not a strategy name: add a strategy key (did you mean length?)",
        "line 7: entries[1].train_rang: unknown key 'train_rang' (did you mean train_range?)",
        "line 7: entries[1].sizes.tst: unknown key 'tst' (did you mean test?)",
        "line 8: entries[2].colour: unknown key 'colour'",  # refused by the schema: its names are still read
        "line 8: entries[2].task: unknown task 'revers_string' (did you mean reverse_string?",
        "line 8: entries[2].strategy: 'lenght' is not one of ['iid', 'length', ",  # the schema's
        "'local_holdout'] (did you mean length?)",
    ]:
        assert problem in message, (problem, message)
    with pytest.raises(SuiteError, match=r"split 'my_split' is not a strategy name: add a strategy key \(strategies: category, "):
        parse_suite(ONE.replace("split: length", "split: my_split"), "s.yaml")


# -- item 9: --lr and --batch-size name the presets' values ------------------------------------


def test_the_help_of_lr_and_batch_size_names_the_presets_values() -> None:
    from gengap.baselines.settings import PRESETS, RECURRENT_PRESETS

    train = next(a for a in build_parser()._actions if hasattr(a, "choices") and isinstance(a.choices, dict))
    helps = {action.dest: action.help for action in train.choices["train"]._actions}
    for field in ("lr", "batch_size"):
        for name, preset in PRESETS.items():
            assert f"{name} {getattr(preset, field):g}" in helps[field], helps[field]
    assert f"rnn, lstm, stack_rnn, tape_rnn: tiny 0.003, small 0.001, base {RECURRENT_PRESETS['base'].lr:g}" in helps["lr"]
    assert "looped" not in helps["lr"] and "rnn" not in helps["batch_size"]  # only where they differ
    text = (ROOT / "docs" / "baselines.md").read_text(encoding="utf-8")
    assert "batch sizes are tiny 64, small 128, base 128 and their learning rates tiny 3e-3,\n  small 1e-3, base 5e-4" in text


# -- items 7, 8, 9: train ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sw") / "release"
    suite = ONE.replace("name: one", "name: sw") + (
        "  - {task: addition, split: length, train_range: [1, 2], test_range: [3, 3], sizes: {train: 30, validation: 5, test: 5}}\n"
        "  - {task: addition, split: le, strategy: length, params: {format: little_endian}, train_range: [1, 2], test_range: [3, 3], "
        "sizes: {train: 30, validation: 5, test: 5}}\n"
        "  - {task: scan, split: simple, strategy: iid, pool: {n: 60}}\n")
    (root.parent / "sw.yaml").write_text(suite)
    assert main(["release", str(root.parent / "sw.yaml"), "--out", str(root)]) == 0
    return root


TINY = ["--preset", "tiny", "--layers", "1", "--d-model", "16", "--heads", "2", "--steps", "2", "--eval-every", "2", "--eval-examples", "4"]


def test_a_short_train_says_when_each_seed_starts_and_ends_off_a_terminal(release: Path, tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    capsys.readouterr()
    assert main(["train", str(release), "--config", "parity_check-length", *TINY, "--seeds", "0,1", "--out", str(tmp_path / "run")]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("gengap: train")]
    assert len(lines) == 4, lines  # the default interval (30 s) never ticks here
    for seed, (start, end) in enumerate(zip(lines[::2], lines[1::2])):
        assert re.fullmatch(rf"gengap: train parity_check-length rope seed {seed}: step 0/2 \(0 s\)", start), start
        assert re.fullmatch(rf"gengap: train parity_check-length rope seed {seed}: step 2/2, loss \S+, ID \d\.\d{{3}}, OOD \d\.\d{{3}} \(step 2\) \(\d+ s\)", end), end


def test_bookended_prints_nothing_on_a_terminal() -> None:
    from contextlib import nullcontext

    from gengap.baselines.train_progress import bookended

    class Terminal:
        written = ""

        def isatty(self) -> bool:
            return True

        def write(self, text: str) -> None:
            self.written += text

        def flush(self) -> None:
            pass

    stream = Terminal()
    with bookended(lambda describe: nullcontext(), stream)(lambda: "train x rope seed 0: step 0/2"):
        pass
    assert stream.written == ""


@pytest.mark.parametrize("config, warned", [
    ("addition-length", "--pos abacus on addition records written in format plain (40 of 40 records): abacus places count from the first digit written"),
    ("scan-simple", "--pos abacus on records without one-digit tokens: no token gets a place, so abacus is nope here"),
    ("addition-le", None),
    ("parity_check-length", None),
])
def test_abacus_warns_when_its_documented_pairing_is_not_met(release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             config: str, warned: str | None) -> None:
    pytest.importorskip("torch")
    capsys.readouterr()
    assert main(["train", str(release), "--config", config, "--pos", "abacus", *TINY, "--out", str(tmp_path / "run")]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("gengap: warning: --pos abacus")]
    if warned is None:
        assert warnings == []
    else:
        assert len(warnings) == 1 and warned in warnings[0] and "docs/baselines.md#positional-encodings-for-length-generalization" in warnings[0]
    assert "#positional-encodings-for-length-generalization" in "".join(
        "#" + line.lstrip("# ").lower().replace(" ", "-") for line in (ROOT / "docs" / "baselines.md").read_text().splitlines() if line.startswith("## "))


def test_a_stream_typo_is_refused_before_torch_is_imported(release: Path, tmp_path: Path) -> None:
    code = ("import sys; from gengap.cli import main; code = main(sys.argv[1:]); "
            "assert 'torch' not in sys.modules, 'torch was imported'; sys.exit(code)")
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, "train", str(release), "--config", "parity_check-length", "--stream", "parity_chek",
                           "--out", str(tmp_path / "run")], capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert done.returncode == 2, done.stderr
    assert done.stderr == "gengap: error: unknown task 'parity_chek' (did you mean parity_check? `gengap list` shows every task)\n"
    assert time.perf_counter() - started < 30 and not (tmp_path / "run").exists()
    done = subprocess.run([sys.executable, "-c", code, "train", str(release), "--config", "parity_check-length", "--stream", "no-mix.yaml",
                           "--out", str(tmp_path / "run")], capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.startswith("gengap: error: ") and done.stderr.count("\n") == 1, done.stderr


# -- items 11, 12: harness recipes ----------------------------------------------------------------


def test_the_lm_eval_run_line_says_which_variant_fits_which_model(release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["export", str(release), "--to", "lm-eval", "--out", str(tmp_path / "lm"), "--config", "parity_check-length"]) == 0
    run = [line for line in capsys.readouterr().out.splitlines() if line.startswith("run: lm_eval ")]
    assert len(run) == 1 and "--tasks sw " in run[0]
    assert "a base model that answers at once" in run[0] and "reasons first or writes <think> tags" in run[0] and "--tasks sw_cot" in run[0]
    header = (ROOT / "examples" / "lm_eval" / "run.sh").read_text()
    assert "for a base model that answers at once" in header and "for an instruct or reasoning model that reasons first" in header


RECIPE_INSTALLS = {  # each recipe's header names the install that runs it, with every extra its steps need
    "examples/export.sh": "pip install -e '.[release,harness]'",  # the release's plots (matplotlib), Parquet for verl
    "examples/lm_eval/run.sh": "pip install -e '.[lm-eval,release]'",
    "examples/verl_grpo/run.sh": ".venv-verl/bin/pip install -e '.[release,harness]'",
    "examples/trl_grpo.py": "pip install -e '.[train,trl]'",
    "examples/trl_sft.py": "pip install -e '.[train,trl]'",  # its release's plots: matplotlib comes with train
}


@pytest.mark.parametrize("recipe", sorted(RECIPE_INSTALLS))
def test_every_recipe_header_names_the_install_that_runs_it(recipe: str) -> None:
    head = "\n".join((ROOT / recipe).read_text().splitlines()[:30])
    assert RECIPE_INSTALLS[recipe] in head, recipe
    assert "matplotlib" in (ROOT / "pyproject.toml").read_text().split("train = [", 1)[1].split("]", 1)[0]


def test_the_verl_recipe_names_the_gengap_its_data_step_runs() -> None:
    header = (ROOT / "examples" / "verl_grpo" / "run.sh").read_text()
    assert "GENGAP=.venv-verl/bin/gengap bash examples/verl_grpo/run.sh" in header
    docs = (ROOT / "docs" / "harnesses.md").read_text()
    assert ".venv-verl/bin/pip install -e '.[release,harness]'" in docs and "GENGAP=.venv-verl/bin/gengap" in docs


def test_the_shell_recipes_stop_in_one_line_without_a_gengap_command(tmp_path: Path) -> None:
    done = subprocess.run(["bash", str(ROOT / "examples" / "export.sh"), str(tmp_path / "out"), "lm-eval", "lm-tasks"],
                          capture_output=True, text=True, env={**os.environ, "GENGAP": "no-such-gengap"})
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "no command no-such-gengap: install gengap with its release extra (pip install -e '.[release,harness]'" in done.stderr
    assert not (tmp_path / "out").exists()


# -- item 3: the default preset on a CPU ---------------------------------------------------------


def test_a_cpu_run_without_a_preset_says_what_it_trains_and_how_long() -> None:
    """No --preset on a CPU: one note naming the default preset, its steps and the CPU-sized one;
    nothing once a preset is chosen, on resume (the run's own settings) or on a GPU."""
    pytest.importorskip("torch")
    from gengap.baselines.cli import default_preset_notice
    from gengap.baselines.settings import PRESETS

    note = default_preset_notice({"device": "cpu"}, resume=False)
    assert note is not None and "'small'" in note and f"{PRESETS['small'].steps:,} steps a seed" in note and "--preset tiny" in note
    assert "about an hour" in note
    capped = default_preset_notice({"device": "cpu", "steps": 50}, resume=False)
    assert capped is not None and "steps a seed" not in capped and "--preset tiny" in capped  # no hour for a run it caps
    assert default_preset_notice({"device": "cpu", "preset": "small"}, resume=False) is None
    assert default_preset_notice({"device": "cpu"}, resume=True) is None


def test_train_prints_the_default_preset_note_once_and_only_without_a_preset(release: Path, tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    small_but_quick = ["--layers", "1", "--d-model", "16", "--heads", "2", "--steps", "2", "--eval-every", "2", "--eval-examples", "4",
                       "--device", "cpu"]
    capsys.readouterr()
    assert main(["train", str(release), "--config", "parity_check-length", *small_but_quick, "--out", str(tmp_path / "a")]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("gengap: note: no --preset given")]
    assert len(notes) == 1, notes
    assert json.loads((tmp_path / "a" / "results.json").read_text())["preset"] == "small"  # the default is unchanged, only stated
    assert main(["train", str(release), "--config", "parity_check-length", *small_but_quick, "--preset", "small", "--out", str(tmp_path / "b")]) == 0
    assert "no --preset given" not in capsys.readouterr().err


# -- item 2: one output folder per suite ----------------------------------------------------------


def test_a_suite_other_than_the_default_builds_into_its_own_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Without --out, a suite file builds into ./release-NAME-VERSION: a ./release that holds the
    default release (here: any release) is neither met nor replaced."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "one.yaml").write_text(ONE)
    assert main(["release", "one.yaml", "--out", "release"]) == 0  # stands for the default release
    before = sorted(p.name for p in (tmp_path / "release").iterdir())
    capsys.readouterr()
    assert main(["release", "one.yaml"]) == 0
    suite = parse_suite(ONE, "<one>")
    out = tmp_path / f"release-{suite['name']}-{suite['version']}"
    assert (out / "manifest.json").is_file() and f"-> release-{suite['name']}-{suite['version']}" in capsys.readouterr().out
    assert sorted(p.name for p in (tmp_path / "release").iterdir()) == before


def test_the_default_out_of_the_embedded_suite_is_still_release() -> None:
    from gengap.cli import default_release_out

    assert default_release_out({"name": "gengap-core", "version": "1.0.0"}, embedded=True) == "release"
    assert default_release_out({"name": "cfq-like", "version": "2.0.0"}, embedded=False) == "release-cfq-like-2.0.0"


# -- item 5: a shipped suite's warnings are in its card, not on the console ------------------------


def test_a_shipped_suites_warnings_are_counted_not_printed_unless_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped suites' warnings are their authors' (recorded in the card, explained in the docs): a
    user who builds one gets their count; --show-warnings prints them; a suite file's are always printed."""
    import gengap.suite

    assert all(gengap.suite.is_shipped_suite(find_suite(name)) for name in shipped_suites())
    assert not gengap.suite.is_shipped_suite(str(ROOT / "examples" / "suite.yaml"))
    suite = tmp_path / "warns.yaml"
    suite.write_text(ONE)  # 5 validation records: the below-100 warning at least
    capsys.readouterr()
    assert main(["release", str(suite), "--out", str(tmp_path / "own")]) == 0
    own = capsys.readouterr()
    manifest = json.loads((tmp_path / "own" / "manifest.json").read_text())
    warned = [w for c in manifest["configs"] for w in c["report"].get("warnings") or []]
    assert warned and len([line for line in own.err.splitlines() if line.startswith("gengap: warning:")]) == len(warned)
    monkeypatch.setattr(gengap.suite, "is_shipped_suite", lambda path: Path(path) == suite)  # as if gengap shipped it
    assert main(["release", str(suite), "--out", str(tmp_path / "a")]) == 0
    quiet = capsys.readouterr()
    assert "gengap: warning:" not in quiet.err
    assert f"{len(warned):,} warning" in quiet.out and "--show-warnings prints them" in quiet.out
    card = (tmp_path / "a" / "README.md").read_text()
    assert all(w in card for w in warned)
    assert main(["release", str(suite), "--out", str(tmp_path / "b"), "--show-warnings"]) == 0
    loud = capsys.readouterr()
    assert len([line for line in loud.err.splitlines() if line.startswith("gengap: warning:")]) == len(warned)
