"""Exports of a release for the tools where pretrained models are evaluated and trained.

``export_release(release, out, to=FORMAT, shots=K, seed=S, system=False, answer_format="line",
configs=None)`` writes one of three layouts into ``out`` (a new or empty directory), one folder
per config, and a ``gengap-export.json`` that records the release (name, version, fingerprint), the settings
and every file with its row count and its sha256 (``sha256``; the marker itself sealed by
``marker_sha256``: what lets ``--force`` replace the directory, gengap.ownership). Records keep their ID vs OOD structure everywhere: the
validation part is the in-distribution side (``id``), the test part the out-of-distribution
side (``ood``). Chat and verl prompts come from :class:`gengap.harnesses.prompts.Prompter` (per record's
own task in a multi-task config: gengap.harnesses.prompts.TaskPrompters; k-shot
examples drawn from the config's train part, seeded per record, and the answer format asked
for); lm-eval's few-shot examples are drawn by lm-eval, from the train part only (below).

- ``chat``: ``<config>/{train,validation,test}.jsonl``, one row per record in TRL's
  conversational prompt/completion form: ``prompt`` (the messages up to the query) and
  ``completion`` (``[{"role": "assistant", "content": <reply>}]``, the reply in the answer
  format), so GRPO reads ``prompt`` and SFT trains on the completion's tokens only; plus the
  columns ``id task config split side index input target meta answer_format`` (meta as JSON text).
- ``verl``: ``<config>/{train,validation,test}.parquet`` with the columns verl's RL trainer
  reads: ``data_source`` (``gengap/<config>/<side>``, so verl's validation metrics come per
  config and side), ``prompt`` (chat messages), ``ability`` (the task's family),
  ``reward_model`` ``{style: "rule", ground_truth: target}`` and ``extra_info`` ``{split, side,
  index, id, config, task, input, meta, answer_format}``; plus ``reward.py``, the custom reward
  function (``compute_score``, :mod:`gengap.harnesses.rewards`). Needs pyarrow.
- ``lm-eval``: an lm-evaluation-harness task directory. Per config: ``train.jsonl``,
  ``validation.jsonl``, ``test.jsonl`` (documents: the record's columns, ``description`` and
  ``query``), the tasks ``<config>_id`` (test_split validation) and ``<config>_ood`` (test_split
  test), both generate_until on a text prompt (stop at a newline, exact match by gengap's
  extraction and the task's checker through ``utils.py``; a config of a task that executes its
  answers, cfq_like, also reports ``execution_accuracy``), and the group ``<config>`` of the
  two (no aggregate: ID and OOD stay apart). The instruction is the task's ``description``,
  ``doc_to_text`` is the query alone and ``fewshot_split: train``: few-shot examples are
  lm-eval's own (``--num_fewshot K``, ``--fewshot_as_multiturn``), drawn from the train part
  only, never from a validation or test record; ``shots=K`` sets the tasks' default
  ``num_fewshot: K`` (so lm-eval reports K shots), and a config without train records gets
  ``num_fewshot: 0``, which lm-eval keeps whatever ``--num_fewshot`` says. In a multi-task
  config the shots of a query come from the train records of the query's own task only
  (:func:`gengap.harnesses.lmeval.own_task_sampler`, lm-eval's ``fewshot_config.sampler``), as
  the chat and verl exports draw them; a task with no train records (held out for test) gets
  none, whatever ``--num_fewshot`` says (lm-eval still reports the number asked for). lm-eval
  hands a sampler the query only when ``fewshot_split`` names the evaluated split, so those
  tasks name it; the sampler never draws from it. Every evaluated part also gets a
  chain-of-thought task, ``<config>_id_cot`` / ``<config>_ood_cot`` (the group
  ``<config>_cot``): the instruction asks for reasoning, then the answer between
  ``<answer>`` tags (the ``tags`` answer format); generation stops at ``</answer>`` with
  ``max_gen_toks`` COT_TOKENS beyond the plain task's; shots show ``<answer>target</answer>``
  after their query; scoring reads the answer in the (unclosed) tags as gengap's extraction
  does. The validation and
  test documents are written in gengap's evaluation order
  (:func:`gengap.harnesses.releases.evaluation_order`), so ``lm_eval --limit N`` and ``gengap eval
  --limit N`` evaluate the same records. Release-wide: every ID task carries the tag
  ``<release>_id_tasks`` and every OOD task ``<release>_ood_tasks``; the groups
  ``<release>_id`` and ``<release>_ood`` hold those tags with the mean exact match over their
  tasks (each config counts once), and the group ``<release>`` holds both; the chain-of-thought tasks likewise carry
  ``<release>_id_cot_tasks`` / ``<release>_ood_cot_tasks``, aggregated by ``<release>_cot_id`` and
  ``<release>_cot_ood``, held by ``<release>_cot`` (not part of ``<release>``). Run it with
  ``lm_eval --include_path OUT --tasks NAME``. Chat settings (``system``, ``answer_format``)
  do not apply to it.

- ``prm``: ``<config>/{train,validation,test}.jsonl``, process labels of a traced config in
  TRL's stepwise-supervision form (``prompt``, ``completions``, ``labels``; gengap.harnesses.prm),
  ``corruption`` choosing the share of each trace's steps made wrong.

``pause`` (:class:`gengap.harnesses.prompts.Pause`) puts a line of filler tokens after every
query's input, in every format (chat, verl, lm-eval and prm prompts alike). Empty parts are
left out (and listed under ``skipped`` in ``gengap-export.json``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from gengap.generators import get_task
from gengap.generators.digests import tree_sha256s
from gengap.generators.extras import install_hint
from gengap.generators.jsonl import sealed_json_text
from gengap.harnesses.errors import HarnessError
from gengap.harnesses.extraction import ANSWER_FORMATS
from gengap.harnesses.formats import EXPORT_MARKER, FORMATS, VERL_VERSION
from gengap.harnesses.lmeval import EXECUTION_METRIC
from gengap.generators.process_labels import Corruption
from gengap.harnesses.prm import write_prm_config
from gengap.harnesses.prompts import ANSWER_PREFIX, MAX_SHOTS, NO_PAUSE, AnyPrompter, Pause, config_prompter, reply
from gengap.harnesses.releases import PARTS, SIDES, Release, ReleaseConfig, evaluation_order, open_release
from gengap.harnesses.scoring import executable

EXPORT_FORMAT = "gengap-export/1"
_CONFIG_NAME = re.compile(r"[a-z][a-z0-9_]*-[a-z0-9_]+")  # <task>-<split>: a release's config names
GEN_SLACK = 32  # tokens allowed beyond the longest target's character count (lm-eval max_gen_toks)
COT_TOKENS = 1024  # a chain-of-thought task's max_gen_toks beyond the plain task's: room for the reasoning
COT_FORMAT = "tags"  # the answer format a chain-of-thought task asks for (its generation stops at COT_STOP)
COT_STOP = "</answer>"

Record = dict[str, Any]


def _meta_text(record: Mapping[str, Any]) -> str:
    meta = record.get("meta")
    return json.dumps(meta, sort_keys=True, separators=(",", ":")) if isinstance(meta, Mapping) and meta else "{}"


def row_fields(record: Mapping[str, Any], config: str, part: str, index: int, answer_format: str | None = None) -> dict[str, Any]:
    """The columns every exported row carries besides its prompt (and the answer format its prompt asks for, if given)."""
    fields = {
        "id": str(record.get("id", "")),
        "task": str(record["task"]),
        "config": config,
        "split": part,
        "side": SIDES[part],
        "index": index,
        "input": record["input"],
        "target": record["target"],
        "meta": _meta_text(record),
    }
    if answer_format is not None:
        fields["answer_format"] = answer_format
    return fields


def _jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> int:
    count = 0
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
            count += 1
    return count


# -- chat --------------------------------------------------------------------------------------


def chat_row(record: Mapping[str, Any], prompter: AnyPrompter, config: str, part: str, index: int) -> dict[str, Any]:
    """One row of the chat export: TRL's conversational prompt/completion form and the record's columns."""
    return {
        "prompt": prompter.chat(record),
        "completion": prompter.completion(record),
        **row_fields(record, config, part, index, prompter.answer_format),
    }


def _chat_config(rc: ReleaseConfig, prompter: AnyPrompter, folder: Path, release: str) -> dict[str, int]:
    rows: dict[str, int] = {}
    for part in PARTS:
        records = rc.parts[part]
        if records:
            rows[f"{part}.jsonl"] = _jsonl(folder / f"{part}.jsonl", (chat_row(r, prompter, rc.name, part, i) for i, r in enumerate(records)))
    return rows


# -- verl --------------------------------------------------------------------------------------


REWARD_MODULE = '''"""verl custom reward function for this gengap export (written by `gengap export --to verl`).

Use it with verl's main_ppo (checked with verl {version}):
    reward.custom_reward_function.path=<this file> reward.custom_reward_function.name=compute_score
(main_ppo ignores the top-level custom_reward_function.* keys.) Optional settings, passed to
compute_score as keyword arguments:
    +reward.custom_reward_function.reward_kwargs.partial_credit=true
    +reward.custom_reward_function.reward_kwargs.format_weight=0.1
For execution accuracy instead (a task that executes its answers, such as cfq_like's queries run on
the record's knowledge base; any other task's answers are checked as compute_score checks them):
    reward.custom_reward_function.name=compute_execution_score
It needs gengap installed where verl runs: the answer is extracted and checked by the task's own
checker (gengap.harnesses.rewards.compute_score, compute_execution_score).
"""

from gengap.harnesses.rewards import compute_execution_score, compute_score  # noqa: F401
'''.format(version=VERL_VERSION)


def verl_reward_overrides(reward_path: str | Path) -> str:
    """The Hydra overrides with which verl's main_ppo (VERL_VERSION) loads the export's reward.py."""
    return f"reward.custom_reward_function.path={reward_path} reward.custom_reward_function.name=compute_score"


def verl_schema() -> Any:
    import pyarrow as pa

    message = pa.struct([("role", pa.string()), ("content", pa.string())])
    return pa.schema([
        ("data_source", pa.string()),
        ("prompt", pa.list_(message)),
        ("ability", pa.string()),
        ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
        ("extra_info", pa.struct([
            ("split", pa.string()), ("side", pa.string()), ("index", pa.int64()), ("id", pa.string()),
            ("config", pa.string()), ("task", pa.string()), ("input", pa.string()), ("meta", pa.string()),
            ("answer_format", pa.string()),
        ])),
    ])


VERL_INFO = ("split", "side", "index", "id", "config", "task", "input", "meta", "answer_format")


def verl_row(record: Mapping[str, Any], prompter: AnyPrompter, config: str, part: str, index: int, ability: str) -> dict[str, Any]:
    fields = row_fields(record, config, part, index, prompter.answer_format)
    return {
        "data_source": f"gengap/{config}/{fields['side']}",
        "prompt": prompter.chat(record),
        "ability": ability,
        "reward_model": {"style": "rule", "ground_truth": record["target"]},
        "extra_info": {key: fields[key] for key in VERL_INFO},
    }


def _verl_config(rc: ReleaseConfig, prompter: AnyPrompter, folder: Path, release: str) -> dict[str, int]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows: dict[str, int] = {}
    for part in PARTS:
        records = rc.parts[part]
        if records:
            rows_of = [verl_row(r, prompter, rc.name, part, i, get_task(str(r["task"])).family) for i, r in enumerate(records)]
            table = pa.Table.from_pylist(rows_of, schema=verl_schema())
            pq.write_table(table, folder / f"{part}.parquet")
            rows[f"{part}.parquet"] = table.num_rows
    return rows


# -- lm-eval -----------------------------------------------------------------------------------

LM_EVAL_UTILS = '''"""lm-evaluation-harness hooks of one config of a gengap export (written by `gengap export --to lm-eval`).

Documents are read from the JSONL files beside this file; answers are scored by gengap's answer
extraction and the task's own checker (gengap.harnesses.lmeval), so gengap must be installed where
lm_eval runs.
"""

from pathlib import Path

from gengap.harnesses.lmeval import load_docs as _load_docs
from gengap.harnesses.lmeval import process_results  # noqa: F401


HERE = Path(__file__).resolve().parent


def load_docs(**kwargs):
    return _load_docs(HERE)
'''

LM_EVAL_SAMPLER = '''

# A multi-task config: each query's shots come from the train documents of its own task.
from gengap.harnesses.lmeval import own_task_sampler  # noqa: E402

OwnTaskSampler = own_task_sampler(HERE)
'''

LM_EVAL_TASK = """task: {task}
tag: [{tag}]
custom_dataset: !function utils.load_docs
test_split: {split}
{fewshot}{num_fewshot}description: {fields[description]}
doc_to_text: {fields[query]}
doc_to_target: {fields[target]}
target_delimiter: {delimiter}
fewshot_delimiter: "\\n\\n"
output_type: generate_until
generation_kwargs:
  until: [{until}]
  do_sample: false
  max_gen_toks: {max_gen_toks}
process_results: !function utils.process_results
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
{execution}metadata:
  version: 2.0
"""
FEWSHOT_TRAIN = "fewshot_split: train\n"
FEWSHOT_OWN_TASK = (
    "# shots: train.jsonl documents of the query's own task (utils.OwnTaskSampler), never the evaluated split;\n"
    "# lm-eval hands a sampler the query only when fewshot_split names the evaluated split\n"
    "fewshot_split: {split}\nfewshot_config:\n  sampler: !function utils.OwnTaskSampler\n"
)
EXECUTION_METRIC_YAML = f"  - metric: {EXECUTION_METRIC}\n    aggregation: mean\n    higher_is_better: true\n"
PLAIN_FIELDS = {"description": "description", "query": "query", "target": "target"}
COT_FIELDS = {"description": "cot_description", "query": "cot_query", "target": "cot_target"}


def _yaml_list(names: Sequence[str]) -> str:
    return "[" + ", ".join(json.dumps(name) for name in names) + "]"


def lm_eval_doc(record: Mapping[str, Any], prompter: AnyPrompter, config: str, part: str, index: int) -> dict[str, Any]:
    """One lm-eval document: the record's columns, the instruction (``description``, ending in a
    blank line) and the query (``Input: ...`` then ``Answer:``); for the chain-of-thought task,
    the instruction asking for reasoning and the answer in tags (``cot_description``), the query
    alone on its line (``cot_query``) and the reply a shot shows (``cot_target``)."""
    return {
        **row_fields(record, config, part, index),
        "description": prompter.describe(record) + "\n\n",
        "query": f"{prompter.query(record)}\n{ANSWER_PREFIX}",
        "cot_description": prompter.describe(record, answer_format=COT_FORMAT) + "\n\n",
        "cot_query": f"{prompter.query(record)}\n",
        "cot_target": reply(record, COT_FORMAT),
        "difficulty": json.dumps(record.get("difficulty") or {}, sort_keys=True, separators=(",", ":")),
        "novelty": json.dumps(record["novelty"], sort_keys=True, separators=(",", ":")) if isinstance(record.get("novelty"), Mapping) else "",
    }


def lm_eval_task_names(config: str) -> dict[str, str]:
    """The lm-eval task of each evaluated part of a config: validation -> <config>_id, test -> <config>_ood."""
    return {"validation": f"{config}_id", "test": f"{config}_ood"}


def lm_eval_cot_names(config: str) -> dict[str, str]:
    """The chain-of-thought task of each evaluated part: validation -> <config>_id_cot, test -> <config>_ood_cot."""
    return {part: f"{name}_cot" for part, name in lm_eval_task_names(config).items()}


def lm_eval_group_names(release: str) -> dict[str, str]:
    """The release-wide names: the tags and aggregate groups of every ID (validation) and OOD (test)
    task, and of their chain-of-thought variants."""
    return {
        "id_tag": f"{release}_id_tasks", "ood_tag": f"{release}_ood_tasks", "id": f"{release}_id", "ood": f"{release}_ood",
        "cot_id_tag": f"{release}_id_cot_tasks", "cot_ood_tag": f"{release}_ood_cot_tasks",
        "cot_id": f"{release}_cot_id", "cot_ood": f"{release}_cot_ood", "cot": f"{release}_cot",
    }


def shot_pool(rc: ReleaseConfig) -> list[tuple[int, Record]]:
    """(index, record) of the train records lm-eval may draw shots from: every train record whose
    input occurs in neither the validation nor the test part (splits guarantee that is all of
    them; this holds it even for a release written by hand)."""
    held_out = {r["input"] for part in ("validation", "test") for r in rc.parts[part]}
    return [(i, r) for i, r in enumerate(rc.train) if r["input"] not in held_out]


def _lm_eval_config(rc: ReleaseConfig, prompter: AnyPrompter, folder: Path, release: str) -> dict[str, int]:
    rows: dict[str, int] = {}
    tasks: list[str] = []
    cot_tasks: list[str] = []
    names = lm_eval_group_names(release)
    pool = shot_pool(rc)
    own_task = len(rc.task_params()) > 1 and bool(pool)  # a multi-task config: shots of the query's own task (module doc)
    if pool:
        rows["train.jsonl"] = _jsonl(folder / "train.jsonl", (lm_eval_doc(r, prompter, rc.name, "train", i) for i, r in pool))
    # without a train part lm-eval would draw shots from the evaluated split: num_fewshot 0 makes it ignore --num_fewshot
    shots = f"num_fewshot: {prompter.k}\n" if pool and prompter.k else ("num_fewshot: 0\n" if not pool else "")
    cot_names = lm_eval_cot_names(rc.name)
    for part, name in lm_eval_task_names(rc.name).items():
        records = rc.parts[part]
        if not records:
            continue
        order = evaluation_order(records)
        rows[f"{part}.jsonl"] = _jsonl(folder / f"{part}.jsonl", (lm_eval_doc(records[i], prompter, rc.name, part, i) for i in order))
        tokens = max(len(r["target"]) for r in records) + GEN_SLACK
        side = "id" if part == "validation" else "ood"
        common = {"split": part, "fewshot": FEWSHOT_OWN_TASK.format(split=part) if own_task else FEWSHOT_TRAIN, "num_fewshot": shots,
                  "execution": EXECUTION_METRIC_YAML if any(executable(task) for task in rc.task_params()) else ""}
        variants = (
            (name, names[f"{side}_tag"], PLAIN_FIELDS, '" "', '"\\n"', tokens, tasks),
            (cot_names[part], names[f"cot_{side}_tag"], COT_FIELDS, '""', json.dumps(COT_STOP), tokens + COT_TOKENS, cot_tasks),
        )
        for task, tag, fields, delimiter, until, max_gen_toks, made in variants:
            text = LM_EVAL_TASK.format(task=task, tag=json.dumps(tag), fields=fields, delimiter=delimiter, until=until,
                                       max_gen_toks=max_gen_toks, **common)
            (folder / f"{task}.yaml").write_text(text, encoding="utf-8")
            made.append(task)
    (folder / "utils.py").write_text(LM_EVAL_UTILS + (LM_EVAL_SAMPLER if own_task else ""), encoding="utf-8")
    if tasks:
        (folder / f"{rc.name}.yaml").write_text(_group_yaml(rc.name, tasks), encoding="utf-8")
        (folder / f"{rc.name}_cot.yaml").write_text(_group_yaml(f"{rc.name}_cot", cot_tasks), encoding="utf-8")
    return rows


def _group_yaml(name: str, members: Sequence[str], aggregate: bool = False) -> str:
    """An lm-eval group of members; with aggregate, the mean exact match over its members (each counts once)."""
    text = f"group: {json.dumps(name)}\ntask: {_yaml_list(members)}\n"
    if aggregate:
        text += "aggregate_metric_list:\n  - metric: exact_match\n    aggregation: mean\n    weight_by_size: false\n"
    return text + "metadata:\n  version: 2.0\n"


def _release_sides(release: str, entries: Sequence[Mapping[str, Any]], cot: bool) -> list[tuple[str, str]]:
    """(group, tag) of each side some config has a task of: ID, then OOD (their chain-of-thought variants with cot)."""
    names = lm_eval_group_names(release)
    key, suffix, prefix = ("cot_tasks", "_cot", "cot_") if cot else ("tasks", "", "")
    return [
        (names[f"{prefix}{side}"], names[f"{prefix}{side}_tag"])
        for side in ("id", "ood")
        if any(str(task).endswith(f"_{side}{suffix}") for entry in entries for task in entry.get(key) or [])
    ]


def lm_eval_release_groups(release: str, entries: Sequence[Mapping[str, Any]]) -> list[str]:
    """The release-wide groups an export writes: <release>_id and <release>_ood when some config
    has such a task, and <release>; likewise <release>_cot_id, <release>_cot_ood and <release>_cot
    when some config has a chain-of-thought task (an export made before they existed has none)."""
    plain = [group for group, _ in _release_sides(release, entries, cot=False)] + [release]
    cot = [group for group, _ in _release_sides(release, entries, cot=True)]
    return plain + (cot + [lm_eval_group_names(release)["cot"]] if cot else [])


def _lm_eval_release(out: Path, release: str, entries: Sequence[Mapping[str, Any]]) -> None:
    """The release-wide groups: <release>_id and <release>_ood (tags of every ID / OOD task, with
    the mean exact match over configs) and <release> holding both; the same for the
    chain-of-thought tasks, held by <release>_cot."""
    for cot, holder in ((False, release), (True, lm_eval_group_names(release)["cot"])):
        sides = _release_sides(release, entries, cot)
        for group, tag in sides:
            (out / f"{group}.yaml").write_text(_group_yaml(group, [tag], aggregate=True), encoding="utf-8")
        if sides or not cot:
            (out / f"{holder}.yaml").write_text(_group_yaml(holder, [group for group, _ in sides]), encoding="utf-8")


# -- the whole export --------------------------------------------------------------------------

WRITERS: dict[str, Callable[[ReleaseConfig, AnyPrompter, Path, str], dict[str, int]]] = {
    "chat": _chat_config,
    "verl": _verl_config,
    "lm-eval": _lm_eval_config,
}


def export_files(manifest: Any) -> list[str] | None:
    """Every file and config folder an export holds, relative to it, as its gengap-export.json
    (manifest) tells them; None when manifest is not that of an export (--force replaces only
    a directory this list accounts for: gengap.ownership)."""
    if not isinstance(manifest, Mapping) or manifest.get("format") != EXPORT_FORMAT or manifest.get("to") not in FORMATS:
        return None
    to = manifest["to"]
    names = [EXPORT_MARKER]
    extension = "parquet" if to == "verl" else "jsonl"
    for entry in manifest["configs"]:
        config = str(entry["name"])
        layout = {f"{config}/{part}.{extension}" for part in PARTS}
        if not _CONFIG_NAME.fullmatch(config) or not set(map(str, entry["files"])) <= layout:
            return None  # a config folder holds only its parts (at these names) and its harness files
        names += [config, *map(str, entry["files"])]
        if to == "lm-eval":
            tasks = [str(task) for task in entry["tasks"]]
            cot_tasks = [str(task) for task in entry.get("cot_tasks") or []]
            if not set(tasks) <= set(lm_eval_task_names(config).values()) or not set(cot_tasks) <= set(lm_eval_cot_names(config).values()):
                return None
            names += [f"{config}/utils.py", *(f"{config}/{task}.yaml" for task in tasks + cot_tasks)]
            names += [f"{config}/{config}.yaml"] if tasks else []
            names += [f"{config}/{config}_cot.yaml"] if cot_tasks else []
    if to == "verl":
        names.append("reward.py")
    if to == "lm-eval":
        release = str(manifest["release"]["name"])
        names += [f"{group}.yaml" for group in lm_eval_release_groups(release, manifest["configs"])]
    return names


def export_hashes(manifest: Any) -> dict[str, str] | None:
    """The sha256 of every file an export holds (its gengap-export.json's ``sha256``), each a file
    export_files lists; None when manifest is not that of an export or lists another file."""
    listed = export_files(manifest)
    hashes = manifest.get("sha256") if listed is not None else None
    if not isinstance(hashes, Mapping) or not set(hashes) <= set(listed):
        return None
    return {str(name): str(digest) for name, digest in hashes.items()}


def _check_out(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise HarnessError(f"{out} exists and is not an empty directory")


def export_release(
    release: str | Path | Release,
    out: str | Path,
    to: str,
    *,
    shots: int = 0,
    seed: int = 0,
    system: bool = False,
    answer_format: str = "line",
    configs: Sequence[str] | None = None,
    pause: Pause = NO_PAUSE,
    corruption: Corruption | None = None,
) -> dict[str, Any]:
    """Write the export of a release (see the module doc) into out; returns what gengap-export.json holds."""
    if to not in WRITERS and to != "prm":
        raise HarnessError(f"unknown export format {to!r}; choose one of {', '.join(FORMATS)}")
    if not 0 <= shots <= MAX_SHOTS:
        raise HarnessError(f"shots must be in 0..{MAX_SHOTS}, got {shots}")
    if answer_format not in ANSWER_FORMATS:
        raise HarnessError(f"unknown answer format {answer_format!r}; choose one of {', '.join(ANSWER_FORMATS)}")
    if corruption is not None and to != "prm":
        raise HarnessError("corrupted steps (--corrupt-share) are for the prm export (--to prm)")
    if to == "prm" and (answer_format != "line" or system):
        raise HarnessError("prm rows hold text prompts ending in 'Answer:': --answer-format and --system apply to chat and verl exports")
    if to == "lm-eval" and (answer_format != "line" or system):
        raise HarnessError("lm-eval tasks use text prompts ending in 'Answer:': --answer-format and --system apply to chat and verl exports")
    if to == "verl":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise HarnessError(f"--to verl writes Parquet and needs pyarrow ({install_hint('harness')})") from None
    source = release if isinstance(release, Release) else open_release(release)
    chosen = list(dict.fromkeys(configs)) if configs else list(source.configs)
    unknown = [name for name in chosen if name not in source.configs]
    if unknown:
        raise HarnessError(f"{source.root} has no config {unknown[0]!r}; configs: {', '.join(source.configs)}")
    out_path = Path(out)
    _check_out(out_path)
    out_path.mkdir(exist_ok=True)  # never its parents: gengap export writes into a staging directory that exists
    entries: list[dict[str, Any]] = []
    skipped: list[str] = []
    for name in chosen:
        rc = source.load(name)
        clash = pause.clash([record for records in rc.parts.values() for record in records])
        if clash is not None:
            raise HarnessError(f"config {name}: {clash}; choose another --pause-token")
        prompter = config_prompter(rc.task_params(), rc.train, k=shots, seed=seed, system=system, answer_format=answer_format, pause=pause)
        folder = out_path / name
        folder.mkdir()
        if to == "prm":
            rows = write_prm_config(rc, prompter, folder, corruption or Corruption(), row_fields)
        else:
            rows = WRITERS[to](rc, prompter, folder, source.name)
        skipped += [f"{name}/{part}" for part in PARTS if not rc.parts[part]]
        entries.append({
            "name": name,
            "task": rc.task,
            "files": {f"{name}/{file}": count for file, count in rows.items()},
            **({"tasks": [t for p, t in lm_eval_task_names(name).items() if rc.parts[p]], "group": name,
                "cot_tasks": [t for p, t in lm_eval_cot_names(name).items() if rc.parts[p]], "cot_group": f"{name}_cot"}
               if to == "lm-eval" else {}),
        })
    if to == "verl":
        (out_path / "reward.py").write_text(REWARD_MODULE, encoding="utf-8")
    if to == "lm-eval":
        _lm_eval_release(out_path, source.name, entries)
    manifest = {
        "format": EXPORT_FORMAT,
        "to": to,
        "release": {
            "name": source.name,
            "version": source.manifest.get("version"),
            "fingerprint": source.fingerprint,
            "path": str(source.root),
        },
        "settings": {"shots": shots, "seed": seed, "system": system, "answer_format": answer_format,
                     **({"pause": {"count": pause.count, "per_token": pause.per_token, "token": pause.token}} if pause != NO_PAUSE else {}),
                     **({"corruption": vars(corruption or Corruption())} if to == "prm" else {})},
        "configs": entries,
        "skipped": skipped,
    }
    if to == "lm-eval":
        manifest["group"] = source.name
        manifest["groups"] = lm_eval_group_names(source.name)
    manifest["sha256"] = tree_sha256s(out_path)  # what proves the directory gengap's (gengap.ownership)
    (out_path / EXPORT_MARKER).write_text(sealed_json_text(manifest, indent=1), encoding="utf-8")
    return manifest
