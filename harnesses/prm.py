"""The ``prm`` export: process labels of a traced config, in TRL's stepwise-supervision form.

One row per traced record (``<config>/{train,validation,test}.jsonl``), the columns TRL documents
for stepwise supervision (the PRMTrainer's dataset type): ``prompt`` (the text prompt of
:class:`gengap.harnesses.prompts.Prompter`, which states the trace format and shows a worked
example from train), ``completions`` (the steps of the record's trace, each its tokens joined by
spaces, then the final step ``=> <answer>``) and ``labels`` (one bool per completion: the
checker's verdict, gengap.generators.process_labels), with ``corruption`` as set
(:class:`gengap.generators.process_labels.Corruption`: a share of each trace's steps made wrong,
from the ``process`` stream of the seed and the record id); plus the columns every export row
carries (``id task config split side index input target meta``) and ``corrupted`` (the indices
of the steps made wrong). A config whose records have no trace is refused with a one-line error.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from gengap.generators.process_labels import Corruption, ProcessLabelError, label_steps
from gengap.generators.traces import SEPARATOR
from gengap.harnesses.errors import HarnessError
from gengap.harnesses.prompts import AnyPrompter
from gengap.harnesses.releases import PARTS, ReleaseConfig

PRM_COLUMNS = ("prompt", "completions", "labels")  # TRL's stepwise supervision


def prm_row(record: Mapping[str, Any], prompter: AnyPrompter, corruption: Corruption, fields: Mapping[str, Any]) -> dict[str, Any]:
    """One row: the prompt, the (corrupted) steps and their labels, then the record's columns."""
    try:
        labelled = label_steps(record, corruption)
    except ProcessLabelError as err:
        raise HarnessError(f"{fields['config']}: {err}") from None
    completions = [" ".join(step) for step in labelled.steps] + [" ".join([SEPARATOR, *labelled.answer])]
    return {
        "prompt": prompter.text(record),
        "completions": completions,
        "labels": [*labelled.labels, labelled.answer_label],
        **fields,
        "corrupted": list(labelled.corrupted),
    }


def write_prm_config(rc: ReleaseConfig, prompter: AnyPrompter, folder: Path, corruption: Corruption, row_fields: Any) -> dict[str, int]:
    """The prm files of one config (row_fields: the export's record columns, gengap.harnesses.export.row_fields)."""
    rows: dict[str, int] = {}
    for part in PARTS:
        records = rc.parts[part]
        if not records:
            continue
        with (folder / f"{part}.jsonl").open("w", encoding="utf-8") as handle:
            for index, record in enumerate(records):
                row = prm_row(record, prompter, corruption, row_fields(record, rc.name, part, index))
                handle.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
        rows[f"{part}.jsonl"] = len(records)
    return rows
