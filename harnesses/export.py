"""Exports of a release for the tools where pretrained models are evaluated and trained.

``export_release(release, out, to=FORMAT, shots=K, seed=S, system=False, configs=None)`` writes
one of three layouts into ``out`` (a new or empty directory), one folder per config, and an
``gengap-export.json`` that records the release (name, version, fingerprint), the settings
and every file with its row count. Records keep their ID vs OOD structure everywhere: the
validation part is the in-distribution side (``id``), the test part the out-of-distribution
side (``ood``). Prompts come from :class:`harnesses.prompts.Prompter` (k-shot examples drawn
from the config's train part, seeded per record).

- ``chat``: ``<config>/{train,validation,test}.jsonl``, one conversation per record in the
  format of TRL's SFTTrainer: ``{"messages": [... user, assistant "Answer: <target>"]}`` plus
  the columns ``id task config split side input target meta`` (meta as JSON text).
- ``verl``: ``<config>/{train,validation,test}.parquet`` with the columns verl's RL trainer
  reads: ``data_source`` (``gengap/<config>/<side>``, so verl's validation metrics come per
  config and side), ``prompt`` (chat messages), ``ability`` (the task's family),
  ``reward_model`` ``{style: "rule", ground_truth: target}`` and ``extra_info`` ``{split, side,
  index, id, config, task, input, meta}``; plus ``reward.py``, the custom reward function
  (``compute_score``, :mod:`harnesses.rewards`). Needs pyarrow.
- ``lm-eval``: an lm-evaluation-harness task directory: per config ``<config>_id`` and
  ``<config>_ood`` (generate_until on the text prompt, stop at a newline, exact match by
  gengap's extraction and the task's checker through ``utils.py``), the group ``<config>``
  of the two, and a group named after the release holding every config group. Run it with
  ``lm_eval --include_path OUT --tasks NAME``.

Empty parts are left out (and listed under ``skipped`` in ``gengap-export.json``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from generators import get_task
from harnesses.errors import HarnessError
from harnesses.prompts import Prompter
from harnesses.releases import PARTS, SIDES, Release, ReleaseConfig, open_release

FORMATS = ("chat", "verl", "lm-eval")
EXPORT_MARKER = "gengap-export.json"
EXPORT_FORMAT = "gengap-export/1"
GEN_SLACK = 32  # tokens allowed beyond the longest target's character count (lm-eval max_gen_toks)

Record = dict[str, Any]


def _meta_text(record: Mapping[str, Any]) -> str:
    meta = record.get("meta")
    return json.dumps(meta, sort_keys=True, separators=(",", ":")) if isinstance(meta, Mapping) and meta else "{}"


def row_fields(record: Mapping[str, Any], config: str, part: str, index: int) -> dict[str, Any]:
    """The columns every exported row carries besides its prompt."""
    return {
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


def _jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> int:
    count = 0
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
            count += 1
    return count


# -- chat --------------------------------------------------------------------------------------


def _chat_config(rc: ReleaseConfig, prompter: Prompter, folder: Path) -> dict[str, int]:
    rows: dict[str, int] = {}
    for part in PARTS:
        records = rc.parts[part]
        if records:
            rows[f"{part}.jsonl"] = _jsonl(
                folder / f"{part}.jsonl",
                ({"messages": prompter.sft(r), **row_fields(r, rc.name, part, i)} for i, r in enumerate(records)),
            )
    return rows


# -- verl --------------------------------------------------------------------------------------

REWARD_MODULE = '''"""verl custom reward function for this gengap export (written by `gengap export --to verl`).

Use it with
    custom_reward_function.path=<this file> custom_reward_function.name=compute_score
It needs gengap installed where verl runs: the answer is extracted and checked by the task's own
checker (harnesses.rewards.compute_score).
"""

from harnesses.rewards import compute_score  # noqa: F401
'''


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
        ])),
    ])


def verl_row(record: Mapping[str, Any], prompter: Prompter, config: str, part: str, index: int, ability: str) -> dict[str, Any]:
    fields = row_fields(record, config, part, index)
    return {
        "data_source": f"gengap/{config}/{fields['side']}",
        "prompt": prompter.chat(record),
        "ability": ability,
        "reward_model": {"style": "rule", "ground_truth": record["target"]},
        "extra_info": {key: fields[key] for key in ("split", "side", "index", "id", "config", "task", "input", "meta")},
    }


def _verl_config(rc: ReleaseConfig, prompter: Prompter, folder: Path) -> dict[str, int]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    ability = get_task(rc.task).family
    rows: dict[str, int] = {}
    for part in PARTS:
        records = rc.parts[part]
        if records:
            table = pa.Table.from_pylist([verl_row(r, prompter, rc.name, part, i, ability) for i, r in enumerate(records)], schema=verl_schema())
            pq.write_table(table, folder / f"{part}.parquet")
            rows[f"{part}.parquet"] = table.num_rows
    return rows


# -- lm-eval -----------------------------------------------------------------------------------

LM_EVAL_UTILS = '''"""lm-evaluation-harness hooks of one config of a gengap export (written by `gengap export --to lm-eval`).

Documents are read from the JSONL files beside this file; answers are scored by gengap's answer
extraction and the task's own checker (harnesses.lmeval), so gengap must be installed where
lm_eval runs.
"""

from pathlib import Path

from harnesses.lmeval import load_docs as _load_docs
from harnesses.lmeval import process_results  # noqa: F401


def load_docs(**kwargs):
    return _load_docs(Path(__file__).resolve().parent)
'''

LM_EVAL_TASK = """task: {task}
custom_dataset: !function utils.load_docs
test_split: {split}
output_type: generate_until
doc_to_text: prompt
doc_to_target: target
generation_kwargs:
  until: ["\\n"]
  do_sample: false
  max_gen_toks: {max_gen_toks}
process_results: !function utils.process_results
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
metadata:
  version: 1.0
"""


def _yaml_list(names: Sequence[str]) -> str:
    return "[" + ", ".join(json.dumps(name) for name in names) + "]"


def lm_eval_doc(record: Mapping[str, Any], prompter: Prompter, config: str, part: str, index: int) -> dict[str, Any]:
    return {
        **row_fields(record, config, part, index),
        "prompt": prompter.text(record),
        "difficulty": json.dumps(record.get("difficulty") or {}, sort_keys=True, separators=(",", ":")),
        "novelty": json.dumps(record["novelty"], sort_keys=True, separators=(",", ":")) if isinstance(record.get("novelty"), Mapping) else "",
    }


def lm_eval_task_names(config: str) -> dict[str, str]:
    """The lm-eval task of each evaluated part of a config: validation -> <config>_id, test -> <config>_ood."""
    return {"validation": f"{config}_id", "test": f"{config}_ood"}


def _lm_eval_config(rc: ReleaseConfig, prompter: Prompter, folder: Path) -> dict[str, int]:
    rows: dict[str, int] = {}
    tasks: list[str] = []
    for part, name in lm_eval_task_names(rc.name).items():
        records = rc.parts[part]
        if not records:
            continue
        rows[f"{part}.jsonl"] = _jsonl(folder / f"{part}.jsonl", (lm_eval_doc(r, prompter, rc.name, part, i) for i, r in enumerate(records)))
        longest = max(len(r["target"]) for r in records)
        (folder / f"{name}.yaml").write_text(LM_EVAL_TASK.format(task=name, split=part, max_gen_toks=longest + GEN_SLACK), encoding="utf-8")
        tasks.append(name)
    (folder / "utils.py").write_text(LM_EVAL_UTILS, encoding="utf-8")
    if tasks:
        (folder / f"{rc.name}.yaml").write_text(_group_yaml(rc.name, tasks), encoding="utf-8")
    return rows


def _group_yaml(name: str, members: Sequence[str]) -> str:
    """An lm-eval group of members, without an aggregate (ID and OOD stay apart)."""
    return f"group: {json.dumps(name)}\ntask: {_yaml_list(members)}\nmetadata:\n  version: 1.0\n"


# -- the whole export --------------------------------------------------------------------------

WRITERS: dict[str, Callable[[ReleaseConfig, Prompter, Path], dict[str, int]]] = {
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
    for entry in manifest["configs"]:
        config = str(entry["name"])
        names += [config, *map(str, entry["files"])]
        if to == "lm-eval":
            tasks = [str(task) for task in entry["tasks"]]
            names += [f"{config}/utils.py", *(f"{config}/{task}.yaml" for task in tasks)]
            names += [f"{config}/{config}.yaml"] if tasks else []
    if to == "verl":
        names.append("reward.py")
    if to == "lm-eval":
        names.append(f"{manifest['release']['name']}.yaml")
    return names


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
    configs: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Write the export of a release (see the module doc) into out; returns what gengap-export.json holds."""
    if to not in WRITERS:
        raise HarnessError(f"unknown export format {to!r}; choose one of {', '.join(FORMATS)}")
    if shots < 0:
        raise HarnessError(f"shots must be non-negative, got {shots}")
    if to == "verl":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise HarnessError("--to verl writes Parquet and needs pyarrow (pip install 'gengap[harness]')") from None
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
        prompter = Prompter(rc.task, rc.params, rc.train, k=shots, seed=seed, system=system)
        folder = out_path / name
        folder.mkdir()
        rows = WRITERS[to](rc, prompter, folder)
        skipped += [f"{name}/{part}" for part in PARTS if not rc.parts[part] and (to != "lm-eval" or part != "train")]
        entries.append({
            "name": name,
            "task": rc.task,
            "files": {f"{name}/{file}": count for file, count in rows.items()},
            **({"tasks": [t for p, t in lm_eval_task_names(name).items() if rc.parts[p]], "group": name} if to == "lm-eval" else {}),
        })
    if to == "verl":
        (out_path / "reward.py").write_text(REWARD_MODULE, encoding="utf-8")
    if to == "lm-eval":
        groups = [entry["name"] for entry in entries if entry["tasks"]]
        (out_path / f"{source.name}.yaml").write_text(_group_yaml(source.name, groups), encoding="utf-8")
    manifest = {
        "format": EXPORT_FORMAT,
        "to": to,
        "release": {
            "name": source.name,
            "version": source.manifest.get("version"),
            "fingerprint": source.fingerprint,
            "path": str(source.root),
        },
        "settings": {"shots": shots, "seed": seed, "system": system},
        "configs": entries,
        "skipped": skipped,
    }
    if to == "lm-eval":
        manifest["group"] = source.name
    (out_path / EXPORT_MARKER).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest
