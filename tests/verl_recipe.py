"""Stand in for verl's ``main_ppo``: check its overrides with verl's own config and reward loader (run where verl is).

verl pins its own versions of torch, transformers and ray, so it gets an environment of its own
(like cffconvert in .ci/run): ``python -m venv .venv-verl && .venv-verl/bin/pip install
torch==2.13.0 && .venv-verl/bin/pip install verl==0.9.1 'transformers<5.11'``. From the
repository root::

    PYTHONPATH=. .venv-verl/bin/python -m tests.verl_recipe OVERRIDE ...

takes the Hydra overrides ``python -m verl.trainer.main_ppo OVERRIDE ...`` would take (those
examples/verl_grpo/run.sh passes: tests/test_verl_recipe.py runs that script with this module in
main_ppo's place) and, with verl's own code:

1. composes verl's ``ppo_trainer`` config with them and runs ``validate_config`` the way
   ``main_ppo`` does before it starts any worker (the micro-batch settings are checked here);
2. loads the reward function with verl's ``get_custom_reward_fn`` (the loader of
   ``reward.custom_reward_function``) and calls it the way verl's reward manager does
   (keyword arguments ``data_source``, ``solution_str``, ``ground_truth``, ``extra_info``) on
   every row of the Parquet files of the export that holds ``reward.py``, with a right and a
   wrong answer;
3. does it again with ``+reward.custom_reward_function.reward_kwargs.partial_credit=true``;
   and with ``reward.custom_reward_function.name=compute_execution_score`` (execution accuracy);
4. counter-checks: the overrides without their micro-batch settings fail validation, and
   the top-level ``custom_reward_function.path`` key leaves verl without a custom reward.

It prints one JSON line (verl's version, the overrides, rows scored, failures) and exits 1 on
a failure. It needs no GPU: nothing here starts Ray or a model.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MICRO_BATCH = ("ppo_micro_batch_size_per_gpu", "log_prob_micro_batch_size_per_gpu")


def command_overrides(path: Path) -> list[str]:
    """The Hydra overrides of the ``-m verl.trainer.main_ppo`` command written in a file (a script, the README), as
    the shell splits them before expanding variables (``"$DATA/reward.py"`` stays ``$DATA/reward.py``), less the
    script's own arguments (``"$@"``)."""
    text = path.read_text(encoding="utf-8")
    match = re.search(r"-m verl\.trainer\.main_ppo((?:[^\n]*\\\n)*[^\n]*)", text)
    if match is None:
        raise SystemExit(f"{path}: no `-m verl.trainer.main_ppo` command")
    return [o for o in shlex.split(match.group(1).replace("\\\n", " ")) if o != "$@"]


def compose(overrides: list[str]):
    import verl
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(Path(verl.__file__).parent / "trainer" / "config"), version_base=None):
        return hydra_compose(config_name="ppo_trainer", overrides=overrides)


def validate(config) -> None:
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config

    validate_config(config=config, use_reference_policy=need_reference_policy(config), use_critic=need_critic(config))


def rows(export: Path) -> list[dict]:
    import pyarrow.parquet as pq

    found = []
    for path in sorted(export.glob("*/*.parquet")):
        found += pq.read_table(path).to_pylist()
    return found


def score_rows(reward, table: list[dict]) -> list[tuple[object, object]]:
    """(score of the right answer, score of a wrong one) per row, called as verl's reward manager calls it."""
    scores = []
    for row in table:
        truth = row["reward_model"]["ground_truth"]
        info = dict(row["extra_info"], num_turns=None, rollout_reward_scores={})  # what the reward manager adds
        right = reward(data_source=row["data_source"], solution_str=f"Let me see.\nAnswer: {truth}", ground_truth=truth, extra_info=dict(info))
        wrong = reward(data_source=row["data_source"], solution_str=f"Answer: {truth} {truth.split()[0]}", ground_truth=truth, extra_info=dict(info))
        scores.append((right, wrong))
    return scores


def export_of(overrides: list[str]) -> Path:
    """The export directory: the folder of the reward file the overrides name."""
    paths = [o.split("=", 1)[1] for o in overrides if o.split("=", 1)[0] == "reward.custom_reward_function.path"]
    if not paths:
        raise SystemExit("the overrides name no reward.custom_reward_function.path")
    return Path(paths[-1]).resolve().parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="check main_ppo's overrides with verl's own config and reward loader")
    parser.add_argument("overrides", nargs="*", help="the Hydra overrides main_ppo would take")
    overrides = parser.parse_args(argv).overrides
    import verl
    from verl.trainer.ppo.reward import get_custom_reward_fn

    failures: list[str] = []
    config = compose(overrides)
    validate(config)  # raises as main_ppo would
    table = rows(export_of(overrides))
    reward = get_custom_reward_fn(config)
    if reward is None:
        failures.append("verl loads no custom reward from the overrides' keys")
    else:
        scores = score_rows(reward, table)
        if not all(right == 1.0 and wrong == 0.0 for right, wrong in scores):
            failures.append(f"reward scores {scores[:5]}...")
    partial = get_custom_reward_fn(compose(overrides + ["+reward.custom_reward_function.reward_kwargs.partial_credit=true"]))
    if partial is None or not all(
        isinstance(right, dict) and right["score"] == 1.0 and isinstance(wrong, dict) and 0.0 < wrong["score"] < 1.0 and wrong["acc"] == 0.0
        for right, wrong in score_rows(partial, table[:20])
    ):
        failures.append("reward_kwargs.partial_credit did not give partial credit")
    execution = get_custom_reward_fn(compose(overrides + ["reward.custom_reward_function.name=compute_execution_score"]))
    if execution is None or not all(right == 1.0 and wrong == 0.0 for right, wrong in score_rows(execution, table[:20])):
        failures.append("reward.custom_reward_function.name=compute_execution_score did not score execution accuracy")
    try:
        validate(compose([o for o in overrides if not o.split("=")[0].endswith(MICRO_BATCH)]))
        failures.append("the command validates without its micro-batch settings: the counter-check proves nothing")
    except Exception as err:  # noqa: BLE001  (verl raises ValueError, AssertionError or Hydra's InstantiationException)
        if "micro_batch" not in str(err):
            failures.append(f"without its micro-batch settings the command fails for another reason: {err}")
    legacy = [o.replace("reward.custom_reward_function.", "custom_reward_function.") for o in overrides]
    if get_custom_reward_fn(compose(legacy)) is not None:
        failures.append("verl now reads the top-level custom_reward_function keys: revisit the recipe")
    print(json.dumps({"verl": verl.__version__, "overrides": overrides, "rows": len(table), "failures": failures}))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
