"""The hooks an lm-evaluation-harness task of a gengap export calls (through the ``utils.py`` the export writes).

- ``load_docs(folder)``: the config's documents as a ``datasets.DatasetDict`` with the splits
  ``train`` (the pool lm-eval draws few-shot examples from: the tasks set ``fewshot_split:
  train``), ``validation`` (ID) and ``test`` (OOD) read from ``folder/{train,validation,test}.jsonl``
  (the YAML names it as ``custom_dataset``, so the export directory can be moved anywhere);
- ``process_results(doc, results)``: ``{"exact_match": 1.0 or 0.0}`` from gengap's answer
  extraction and the task's checker (:func:`gengap.harnesses.scoring.score_output`), so a task with
  several correct answers is scored right (the chain-of-thought tasks too: generation stops at
  ``</answer>``, and an unclosed ``<answer>`` tag is read to the end of the output); for a task
  that executes its answers (cfq_like) also ``"execution_accuracy"``, whether the answer, run
  on the record's knowledge base, gives the record's answers (the tasks of such a config list
  both metrics);
- ``own_task_sampler(folder)``: for a multi-task config, lm-eval's few-shot sampler class (a
  ``ContextSampler``, imported from lm-eval when called) whose shots for a query are drawn, with
  lm-eval's seeded generator, from the ``train`` documents of the query's own task only; a task
  without train documents (held out for test) gets no shots.

A document holds the record (``id``, ``task``, ``input``, ``target``, ``meta`` as JSON text, ...),
its ``description`` (the task's instruction, then a blank line) and its ``query`` (``Input:
<tokens>``, a newline, ``Answer:``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from gengap.harnesses.extraction import extract_answer
from gengap.harnesses.scoring import executable, execution_span, score_output

SPLITS = ("train", "validation", "test")
EXECUTION_METRIC = "execution_accuracy"


def doc_record(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The record of an exported document (meta parsed back from its JSON text)."""
    record = {"id": doc.get("id"), "task": doc["task"], "input": doc["input"], "target": doc["target"]}
    meta = doc.get("meta")
    if isinstance(meta, str) and meta.strip():
        parsed = json.loads(meta)
        if parsed:
            record["meta"] = parsed
    elif isinstance(meta, Mapping) and meta:
        record["meta"] = dict(meta)
    return record


def _first(results: Any) -> str:
    if isinstance(results, str):
        return results
    if isinstance(results, Sequence) and results:
        return _first(results[0])
    return ""


def process_results(doc: Mapping[str, Any], results: Any) -> dict[str, float]:
    """lm-eval's per-document metrics: exact match by gengap's extraction and the task's checker;
    for a task that executes its answers (cfq_like) also ``execution_accuracy``
    (:func:`gengap.harnesses.scoring.execution_span`)."""
    record, output = doc_record(doc), _first(results)
    found = {"exact_match": 1.0 if score_output(record, output).correct else 0.0}
    if executable(str(record["task"])):
        found[EXECUTION_METRIC] = 1.0 if execution_span(record, extract_answer(output)) else 0.0
    return found


def _read_docs(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def own_task_sampler(folder: str | Path) -> type:
    """lm-eval's sampler class for the multi-task config exported in folder (see the module doc).

    lm-eval builds it with the evaluated split's documents and calls ``sample(n, eval_doc=doc)``
    (it passes the query only when ``fewshot_split`` is the evaluated split, which the exported
    tasks of such a config name); it ignores those documents and draws ``min(n, available)``
    train documents of ``eval_doc["task"]``."""
    from lm_eval.api.samplers import ContextSampler

    by_task: dict[str, list[dict[str, Any]]] = {}
    for doc in _read_docs(Path(folder) / "train.jsonl"):
        by_task.setdefault(str(doc["task"]), []).append(doc)

    class OwnTaskSampler(ContextSampler):
        """Shots from the train documents of the query's own task (gengap.harnesses.lmeval.own_task_sampler)."""

        def sample(self, n: int, eval_doc: Mapping[str, Any] | None = None, df: Any = None, **kwargs: Any) -> list[dict[str, Any]]:
            if n <= 0:
                return []
            if eval_doc is None:
                raise ValueError("gengap's own-task sampler needs the query: its task's fewshot_split must be the evaluated split")
            pool = by_task.get(str(eval_doc["task"]), [])
            return self.rnd.sample(pool, min(n, len(pool)))

    return OwnTaskSampler


def load_docs(folder: str | Path, **_: Any) -> Any:
    """The documents of one exported config, as a DatasetDict of its non-empty splits."""
    import datasets

    folder = Path(folder)
    parts = {}
    for split in SPLITS:
        rows = _read_docs(folder / f"{split}.jsonl")
        if rows:
            parts[split] = datasets.Dataset.from_list(rows)
    return datasets.DatasetDict(parts)
