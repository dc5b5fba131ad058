"""The near-duplicate audit of a release or a split directory (``gengap audit``).

Exact overlap (a test input that train holds) is 0 in every split gengap makes; this counts the
test records that are *near* a train record, per config: within token edit distance k of some
train input, or with n-gram Jaccard similarity >= t (gengap.splits.near_duplicates, exact), with
examples. Inputs are compared as their task reads them (no shortcut cue, no task marker), and
within one task (a multi-task config's tasks each against their own train records) when both
records carry that task label; a record without a ``task`` field, or with a label the other
side lacks, is compared with every record of the other side (:func:`compared_groups`). The
train side is the train part; validation is not compared.

A release is read through its manifest (each data file checked against it: the report names the
release's fingerprint); a split directory is any directory with ``train.jsonl`` and
``test.jsonl`` whose lines are JSON objects with an ``input`` string: gengap's records, or plain
records of your own (``task`` optional). The report's bytes depend only on the data and the
options.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from gengap.generators.batch import Record
from gengap.generators.markers import bare_input
from gengap.releases.release_view import ReleaseReadError, input_records, read_manifest, read_part
from gengap.splits.near_duplicates import NearOptions, edit_neighbors, encode, jaccard_neighbors
from gengap.splits.precision import rounded

FORMAT = "gengap-near-duplicates/1"
SPLIT_PARTS = ("train", "test")


class AuditError(ValueError):
    """A directory cannot be audited (one line: why)."""


def audit_directory(path: str | Path, options: NearOptions, configs: Sequence[str] = ()) -> dict[str, Any]:
    """The audit report of a release (manifest.json) or a split directory (train.jsonl and
    test.jsonl); configs: the release configs to audit (default all)."""
    root = Path(path)
    if not root.is_dir():
        raise AuditError(f"{root} is not a directory")
    if os.path.lexists(root / "manifest.json"):
        try:
            manifest = read_manifest(root)
            names = [str(c["name"]) for c in manifest["configs"]]
            unknown = [name for name in configs if name not in names]
            if unknown:
                raise AuditError(f"{root} has no config {unknown[0]!r}; it has: {', '.join(names)}")
            rows = [audit_config(name, read_part(root, manifest, name, "train"), read_part(root, manifest, name, "test"), options)
                    for name in (list(configs) or names)]
        except ReleaseReadError as err:
            raise AuditError(str(err)) from None
        source = {"kind": "release", "path": str(root), "name": manifest.get("name"), "fingerprint": f"sha256:{manifest['fingerprint']}"}
    else:
        if configs:
            raise AuditError(f"--config names a config of a release; {root} is a split directory (no manifest.json)")
        parts = {part: _split_part(root, part) for part in SPLIT_PARTS}
        rows = [audit_config(root.name or str(root), parts["train"], parts["test"], options)]
        source = {"kind": "split directory", "path": str(root)}
    total_test = sum(row["test"] for row in rows)
    total_near = sum(row["near"] for row in rows)
    return rounded({
        "format": FORMAT,
        "source": source,
        "options": options.to_dict(),
        "configs": rows,
        "total": {"test": total_test, "near": total_near, "near_share": total_near / total_test if total_test else 0.0},
    })


def _split_part(root: Path, part: str) -> list[Record]:
    """The records of train.jsonl or test.jsonl of a split directory (objects with an input string)."""
    path = root / f"{part}.jsonl"
    if not path.is_file() or path.is_symlink():
        raise AuditError(f"{root} is neither a release (manifest.json) nor a split directory: it has no regular file {part}.jsonl")
    return input_records(str(path), error=AuditError)


def complete_lengths(train: Sequence[tuple[int, ...]], tokens: int) -> list[int]:
    """The input lengths l at which train holds every one of the tokens**l possible inputs."""
    counts: dict[int, int] = {}
    for sequence in set(train):
        counts[len(sequence)] = counts.get(len(sequence), 0) + 1
    return sorted(length for length, count in counts.items()
                  if length > 0 and tokens > 0 and length * math.log(tokens) <= math.log(count) + 1e-9 and tokens ** length <= count)


def distinct_grams(sequences: Sequence[tuple[int, ...]], n: int, tokens: int) -> np.ndarray:
    """How many distinct n-grams each sequence holds (0 for one shorter than n); token ids < tokens."""
    counts = np.zeros(len(sequences), dtype=np.int64)
    by_length: dict[int, list[int]] = {}
    for index, sequence in enumerate(sequences):
        if len(sequence) >= n:
            by_length.setdefault(len(sequence), []).append(index)
    for length, rows in by_length.items():
        tokens_of = np.array([sequences[i] for i in rows], dtype=np.int64)
        codes = sum(tokens_of[:, j: length - n + 1 + j] * tokens ** (n - 1 - j) for j in range(n))
        codes.sort(axis=1)
        counts[rows] = 1 + (np.diff(codes, axis=1) != 0).sum(axis=1)
    return counts


def forced(train: Sequence[tuple[int, ...]], test: Sequence[tuple[int, ...]], tokens: int, options: NearOptions) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Which test inputs are near a train input by necessity, whatever was copied: (within the edit
    distance k: train holds every input of some length within k of the test input's, so deleting
    or inserting tokens reaches one; reaching the Jaccard threshold t: the input and some train
    input each hold at least (1 + t) / 2 of the tokens**n possible n-grams, so their overlap is
    at least t of their union; computed only where those are few, at most twice the longest
    input's length), the complete train lengths)."""
    k, t, n = options.edit_distance, options.jaccard, options.ngram
    lengths = complete_lengths(train, tokens)
    near_lengths = {length + d for length in lengths for d in range(-k, k + 1)}
    by_edit = np.array([len(s) in near_lengths for s in test], dtype=bool)
    by_jaccard = np.zeros(len(test), dtype=bool)
    longest = max((len(s) for s in (*train, *test)), default=0)
    if t < 1 and test and train and tokens ** n <= 2 * longest:
        need = (1 + t) / 2 * tokens ** n
        distinct = sorted(set(train), key=len, reverse=True)  # the longest first: one that reaches need is enough
        if any((distinct_grams(distinct[i: i + 1000], n, tokens) >= need).any() for i in range(0, len(distinct), 1000)):
            by_jaccard = distinct_grams(test, n, tokens) >= need
    return by_edit, by_jaccard, lengths


def compared_groups(test: Sequence[Record], train: Sequence[Record]) -> list[tuple[str, list[int], list[int]]]:
    """(task label, test rows, train rows it is compared with) per test task label: the train
    records of the same label and the unlabeled ones; every train record for an unlabeled test
    record or a label no train record has (a test part of plain records, or relabeled, against
    gengap's train part is still compared: its labels never hide a copy)."""
    label = lambda r: str(r.get("task", ""))  # noqa: E731
    train_labels = {label(r) for r in train}
    groups = []
    for task in sorted({label(r) for r in test}):
        test_rows = [i for i, r in enumerate(test) if label(r) == task]
        if task and task in train_labels:
            train_rows = [i for i, r in enumerate(train) if label(r) in (task, "")]
        else:
            train_rows = list(range(len(train)))
        groups.append((task, test_rows, train_rows))
    return groups


def audit_config(name: str, train: Sequence[Record], test: Sequence[Record], options: NearOptions) -> dict[str, Any]:
    """One config's row: test and train records, exact, within-edit, within-Jaccard and near
    counts (near: either), ``necessarily_near`` (those near by necessity, :func:`forced`, per
    criterion, and each task's complete train lengths), and the first ``options.examples`` near
    test records."""
    k, t = options.edit_distance, options.jaccard
    forced_edit = np.zeros(len(test), dtype=bool)
    forced_jaccard = np.zeros(len(test), dtype=bool)
    complete: dict[str, dict[str, Any]] = {}
    distance = np.full(len(test), k + 1, dtype=np.int64)
    similarity = np.zeros(len(test))
    by_edit = np.full(len(test), -1, dtype=np.int64)
    by_jaccard = np.full(len(test), -1, dtype=np.int64)
    for task, test_list, train_list in compared_groups(test, train):
        test_rows, train_rows = np.array(test_list, dtype=np.int64), np.array(train_list, dtype=np.int64)
        vocabulary: dict[str, int] = {}
        train_tokens = encode((bare_input(train[i]["input"]) for i in train_rows.tolist()), vocabulary)
        test_tokens = encode((bare_input(test[i]["input"]) for i in test_rows.tolist()), vocabulary)
        found, who = edit_neighbors(train_tokens, test_tokens, k)
        distance[test_rows], by_edit[test_rows] = found, np.where(who >= 0, train_rows[who], -1) if len(train_rows) else -1
        found, who = jaccard_neighbors(train_tokens, test_tokens, options.ngram, t)
        similarity[test_rows], by_jaccard[test_rows] = found, np.where(who >= 0, train_rows[who], -1) if len(train_rows) else -1
        by_length, by_grams, lengths = forced(train_tokens, test_tokens, len(vocabulary), options)
        forced_edit[test_rows], forced_jaccard[test_rows] = by_length, by_grams
        if lengths:
            complete[task] = {"tokens": len(vocabulary), "lengths": lengths}
    within_edit, within_jaccard = distance <= k, by_jaccard >= 0
    near = within_edit | within_jaccard
    examples = []
    for i in np.flatnonzero(near)[: options.examples].tolist():
        other = int(by_edit[i]) if within_edit[i] else int(by_jaccard[i])
        examples.append({
            "test_line": i + 1,
            "test": test[i]["input"],
            "train_line": other + 1,
            "train": train[other]["input"],
            "edit_distance": int(distance[i]) if within_edit[i] else None,
            "jaccard": float(similarity[i]) if within_jaccard[i] else None,
        })
    return {
        "config": name,
        "train": len(train),
        "test": len(test),
        "exact": int((distance == 0).sum()),
        "within_edit_distance": int(within_edit.sum()),
        "within_jaccard": int(within_jaccard.sum()),
        "near": int(near.sum()),
        "near_share": float(near.mean()) if len(test) else 0.0,
        "necessarily_near": {
            "edit_distance": int((forced_edit & within_edit).sum()),
            "jaccard": int((forced_jaccard & within_jaccard).sum()),
            "near": int(((forced_edit & within_edit) | (forced_jaccard & within_jaccard)).sum()),
            "complete_train_lengths": complete,
        },
        "examples": examples,
    }


def table(report: dict[str, Any]) -> list[str]:
    """The report as text lines: one row per config, then its examples."""
    options = report["options"]
    k, t, n = options["edit_distance"], options["jaccard"], options["ngram"]
    width = max([len("config"), *(len(row["config"]) for row in report["configs"])])
    head = f"{'config':<{width}}  {'train':>8}  {'test':>7}  {'exact':>6}  {f'edit<={k}':>8}  {f'{n}-gram J>={t:g}':>13}  near (share)"
    lines = [head]
    for row in report["configs"]:
        lines.append(
            f"{row['config']:<{width}}  {row['train']:>8,}  {row['test']:>7,}  {row['exact']:>6,}  {row['within_edit_distance']:>8,}  "
            f"{row['within_jaccard']:>13,}  {row['near']:,} ({row['near_share']:.3f})"
        )
    for row in report["configs"]:
        lines += necessity_notes(row, options)
    for row in report["configs"]:
        for example in row["examples"]:
            measure = [f"edit distance {example['edit_distance']}" if example["edit_distance"] is not None else "",
                       f"Jaccard {example['jaccard']:.3f}" if example["jaccard"] is not None else ""]
            lines.append(f"  {row['config']} test line {example['test_line']}: {example['test'][:60]!r} ~ train line "
                         f"{example['train_line']}: {example['train'][:60]!r} ({', '.join(m for m in measure if m)})")
    return lines


def _lengths_text(lengths: Sequence[int]) -> str:
    """1..5, 7 for [1, 2, 3, 4, 5, 7]."""
    runs: list[list[int]] = []
    for length in lengths:
        if runs and length == runs[-1][-1] + 1:
            runs[-1].append(length)
        else:
            runs.append([length])
    return ", ".join(f"{run[0]}..{run[-1]}" if len(run) > 2 else ", ".join(map(str, run)) for run in runs)


def necessity_notes(row: dict[str, Any], options: dict[str, Any]) -> list[str]:
    """Lines saying which near test records of a config are near by necessity (short inputs over
    few tokens), with what to read instead; none when none are."""
    forced = row.get("necessarily_near") or {}
    if not forced.get("near"):
        return []
    k, t, n = options["edit_distance"], options["jaccard"], options["ngram"]
    lines = [f"  {row['config']}: {forced['near']:,} of its {row['near']:,} near test records are near by necessity, not by copying:"]
    if forced.get("edit_distance"):
        complete = "; ".join(f"{task or 'its inputs'}: every input of {facts['tokens']} tokens at length {_lengths_text(facts['lengths'])}"
                             for task, facts in forced["complete_train_lengths"].items())
        lines.append(f"    {forced['edit_distance']:,} within edit distance {k}: train holds {complete}, and an input within {k} "
                     f"tokens of such a length is that close to one of them (short inputs over few tokens are necessarily near: "
                     f"read the longer test lengths, or a smaller --edit-distance)")
    if forced.get("jaccard"):
        lines.append(f"    {forced['jaccard']:,} at Jaccard >= {t:g}: over so few tokens, each of these inputs holds {(1 + t) / 2:.0%} or more "
                     f"of the possible {n}-grams, as some train input does, so their Jaccard is >= {t:g} whatever was copied "
                     f"(use a larger --ngram, whose possible N-grams outnumber an input's)")
    return lines
