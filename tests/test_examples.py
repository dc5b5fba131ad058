"""The recipes of examples/, run as shipped, and the Recipes of docs/harnesses.md, which list them.

Fast: every file of examples/ is named in the Recipes; each recipe states the version
it was tested with, which is the version pyproject pins (and the page says so); every command
the Recipes show runs an example file with settings it takes (a script's flags parse with its
own parser; a shell recipe reads every variable set). Slow: the files themselves run, in
subprocesses, on a tiny local Llama (tests/harness_models.py): examples/trl_grpo.py and
examples/trl_sft.py with trl 1.16.0, examples/lm_eval/run.sh with lm-eval 0.4.13, both from
the dev extra. examples/verl_grpo/run.sh is run by tests/test_verl_recipe.py, in verl's own
environment.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from gengap.harnesses.export import VERL_VERSION

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
OFFLINE = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}


def pinned(extra: str) -> str:
    """'<package> <version>' of the one pin of a pyproject extra (``trl==1.16.0`` -> ``trl 1.16.0``)."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    (spec,) = extras[extra]
    name, version = spec.split("==")
    return f"{name.split('[')[0]} {version}"


RECIPES = {  # recipe -> the version of the consumer it was tested with
    "examples/trl_grpo.py": pinned("trl"),
    "examples/trl_sft.py": pinned("trl"),
    "examples/lm_eval/run.sh": pinned("lm-eval"),
    "examples/verl_grpo/run.sh": f"verl {VERL_VERSION}",
}


def recipes_section() -> str:
    text = (ROOT / "docs" / "harnesses.md").read_text(encoding="utf-8")
    start = text.index("\n## Recipes (examples/)\n")
    end = re.search(r"\n##+ ", text[start + 1:])
    return text[start: start + 1 + end.start()] if end else text[start:]


def readme_commands() -> list[list[str]]:
    """The commands of the Recipes' bash blocks (continuations joined, comments dropped), split as the shell splits them."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", recipes_section(), flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words:
                commands.append(words)
    return commands


def example_files() -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for p in EXAMPLES.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def test_every_example_file_is_in_the_docs_recipes() -> None:
    section = recipes_section()
    assert set(RECIPES) <= set(example_files())
    for name in example_files():
        assert name in section, name


def test_each_recipe_states_the_version_it_was_tested_with() -> None:
    section = recipes_section()
    for name, version in RECIPES.items():
        head = "\n".join((ROOT / name).read_text().splitlines()[:4])
        assert f"Tested with {version}" in head, (name, version)
        assert version in section, version


def script_parser(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # the scripts import their heavy packages in main(), not at the top
    return module.parser()


def test_the_docs_recipe_commands_run_the_example_files_with_settings_they_take() -> None:
    ran: set[str] = set()
    for words in readme_commands():
        assigned = []
        while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):
            assigned.append(words.pop(0).split("=")[0])
        if words[0] == "bash":
            script = words[1]
            text = (ROOT / script).read_text()
            for variable in assigned:
                assert "${" + variable in text, (script, variable)
        elif words[0] == "python" and words[1].startswith("examples/"):
            assert not assigned
            script = words[1]
            script_parser(ROOT / script).parse_args(words[2:])  # exits on a flag the script does not take
        else:
            continue
        ran.add(script)
    assert ran == set(RECIPES)


# -- the recipes, run as shipped --------------------------------------------------------------------


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny Llama that answers `` 1`` after "Answer:" and after a chat template's newline."""
    import itertools

    from gengap.generators import RecordStream, get_task
    from gengap.harnesses import Prompter
    from tests.harness_models import answering_model

    texts = []
    for task in ("parity_check", "addition"):
        prompter = Prompter(task)
        for record in itertools.islice(RecordStream.fixed(task, get_task(task).level(2), seed=0).records(), 100):
            texts.append(prompter.text(record) + " " + record["target"])
    return answering_model(tmp_path_factory.mktemp("model") / "answers-one", texts)


def run_recipe(command: list[str], cwd: Path, **env: str) -> dict:
    """Run a recipe (a subprocess, offline); the JSON summary on its last line of output, or {} when it prints none."""
    done = subprocess.run(command, capture_output=True, text=True, cwd=cwd, env={**OFFLINE, **env}, timeout=1500)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    last = (done.stdout.strip().splitlines() or [""])[-1]
    return json.loads(last) if last.startswith("{") else {}


@pytest.mark.slow
def test_trl_grpo_recipe_trains_a_few_steps_on_a_stream(model: Path, tmp_path: Path) -> None:
    out = tmp_path / "grpo"
    summary = run_recipe([sys.executable, str(EXAMPLES / "trl_grpo.py"), "--model", str(model), "--out", str(out)], tmp_path)
    assert summary["steps"] == 2 and summary["records_per_step"] == 2  # 4 completions / 2 generations
    assert len(summary["rewards"]) == 2 and all(0.0 <= r <= 1.1 for r in summary["rewards"])
    assert (out / "config.json").exists()


@pytest.mark.slow
def test_trl_grpo_recipe_trains_on_a_mixture_file_excluding_a_release_config(model: Path, tmp_path: Path) -> None:
    from gengap.release import write_release
    from gengap.suite import load_suite

    write_release(load_suite(EXAMPLES / "suite.yaml"), tmp_path / "release")
    (tmp_path / "mix.yaml").write_text("components: [{task: parity_check, curriculum: 'step:start=1,end=3,every=1'}, {task: addition, level: 1}]\n")
    command = [sys.executable, str(EXAMPLES / "trl_grpo.py"), "--model", str(model), "--stream", "mix.yaml", "--release", "release",
               "--config", "addition-iid", "--answer-format", "line", "--out", "grpo-mix"]
    summary = run_recipe(command, tmp_path)
    assert summary["steps"] == 2 and len(summary["rewards"]) == 2
    assert (tmp_path / "grpo-mix" / "config.json").exists()


@pytest.mark.slow
def test_trl_sft_recipe_builds_exports_and_trains_on_the_completions(model: Path, tmp_path: Path) -> None:
    out = tmp_path / "sft"
    summary = run_recipe([sys.executable, str(EXAMPLES / "trl_sft.py"), "--model", str(model), "--out", str(out)], tmp_path)
    assert summary["steps"] == 2 and summary["completion_only_loss"] and summary["training_loss"] > 0
    assert summary["train_file"] == str(out / "chat-data" / "addition-iid" / "train.jsonl")
    assert (out / "release" / "manifest.json").exists() and (out / "config.json").exists()


@pytest.mark.slow
def test_lm_eval_recipe_runs_end_to_end_with_few_shot_examples(model: Path, tmp_path: Path) -> None:
    out = tmp_path / "lm"
    run_recipe(["bash", str(EXAMPLES / "lm_eval" / "run.sh"), "--limit", "8"], tmp_path, MODEL=str(model), MODEL_ARGS=",dtype=float32", OUT=str(out))
    (results_file,) = (out / "lm-out").rglob("results_*.json")
    report = json.loads(results_file.read_text())
    for config in ("parity_check-length", "addition-iid"):
        for side, part in (("id", "validation"), ("ood", "test")):
            task = f"{config}_{side}"
            docs = [json.loads(line) for line in (out / "lm-tasks" / config / f"{part}.jsonl").read_text().splitlines()[:8]]
            share = sum(doc["target"] == "1" for doc in docs) / len(docs)  # the model answers 1; --limit 8: the first 8 documents
            assert report["results"][task]["exact_match,none"] == pytest.approx(share), task
            assert report["n-shot"][task] == 3  # the recipe's --num_fewshot
    assert {"gengap-examples_id", "gengap-examples_ood"} <= set(report["results"])
