"""Build a release directory from a suite: data files, manifest, checksums, cards, plots.

Layout (see README): data/<config>/{train,validation,test}.jsonl, manifest.json,
SHA256SUMS, README.md (dataset card), croissant.json, CITATION.cff, plots/*.png.

Every record is checked by its task's checker before anything is written (check_rendered).
Every config is built from its own seed (stream ``config`` of gengap.generators.seeding: suite
seed and config name), so
configs can be built in any order or in parallel (``workers``) with identical bytes. The
release is written to a temporary directory beside the target and renamed into place when
complete; a failure leaves nothing behind. The fingerprint is sha256 over the sorted
"<sha256>  <path>" lines of the data files.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import platform
import re
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from gengap.data_cards import card_files
from gengap.generators import BlockPlan, dumps_record, get_task
from gengap.generators.batch import Record
from gengap.generators.extras import install_hint
from gengap.generators.digests import data_fingerprint
from gengap.generators.jsonl import json_text
from gengap.generators.plugins import provenance
from gengap.generators.registry import task_module
from gengap.data_cards.common import plot_paths
from gengap.generators.seeding import config_seed, subsample_rng
from gengap.splits.validation import TV_WARNING, tv_lengths, tv_warnings
from gengap import __version__
from gengap.releases.checking import record_problem
from gengap.releases.multitask import entry_tasks, finish_multitask_split, is_multitask, manifest_task_fields, multitask_pool
from gengap.ground.files import atomic_directory
from gengap.releases.fingerprints import CARD_FILES
from gengap.ground.ownership import Product
from gengap.ground.shortfalls import add_warnings, shortfall_warnings
from gengap.releases.suite import shared_pool
from gengap.ground.workers import ordered_map
from gengap.splits import SplitResult, build_report, generate_records, sample_length_split, sample_level_split, split
from gengap.splits.atoms import CompoundDefinition
from gengap.splits.cues import apply_cue
from gengap.splits.novelty import annotate
from gengap.splits.precision import rounded

PARTS = ("train", "validation", "test")
CONFIG_NAME = re.compile(r"[a-z][a-z0-9_]*-[a-z0-9_]+")  # <task>-<split> (gengap.suite)
SHA256_HEX = re.compile(r"[0-9a-f]{64}")
# Manifest fields that describe the machine that built a release, not its content:
# `gengap verify --regenerate` sets them aside (reports them as notes).
ENVIRONMENT_FIELDS = ("gengap_version", "numpy_version", "python_version")


class ReleaseError(ValueError):
    """A release cannot be built (bad entry at build time, missing optional dependency)."""


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fingerprint(data_files: dict[str, dict[str, Any]]) -> str:
    """sha256 over the sorted '<sha256>  <path>' lines of the data files (gengap.generators.digests.data_fingerprint)."""
    return data_fingerprint(data_files)


def release_files(manifest: Any) -> list[str] | None:
    """Every file a release holds, as its manifest tells them: the data files it lists, the
    manifest, SHA256SUMS, the card files and the plots of its configs; None when manifest is
    not a gengap release manifest (its fingerprint must be that of the data files it lists,
    each at data/<config>/<part>.jsonl of a config it lists)."""
    if not isinstance(manifest, dict) or not isinstance(manifest.get("gengap_version"), str):
        return None
    data_files = manifest["data_files"]
    if not isinstance(data_files, dict) or manifest.get("fingerprint") != fingerprint(data_files):
        return None
    names = {config["name"] for config in manifest["configs"]}
    layout = {f"data/{name}/{part}.jsonl" for name in names if isinstance(name, str) and CONFIG_NAME.fullmatch(name) for part in PARTS}
    if not set(data_files) <= layout:
        return None
    plots = [path for config in manifest["configs"] for _, path in plot_paths(config)]
    return [*data_files, "manifest.json", "SHA256SUMS", *CARD_FILES, *plots]


def release_hashes(manifest: Any, read: Callable[[str], bytes | None]) -> dict[str, str] | None:
    """The sha256 of every file of a release that its manifest and SHA256SUMS vouch for: the
    data files (the manifest's hashes), and, when SHA256SUMS (read(name) gives a file's bytes)
    is exactly the lines gengap writes for files of release_files and agrees with the
    manifest, every file it lists and SHA256SUMS itself (another SHA256SUMS vouches for
    nothing, itself included). None when manifest is not a release manifest. --force replaces
    only a directory these hashes account for (gengap.ownership)."""
    files = release_files(manifest)
    if files is None:
        return None
    hashes = {path: info["sha256"] for path, info in manifest["data_files"].items()}
    listed = _checksums(read("SHA256SUMS"), set(files))
    if listed is None or any(listed.get(path, digest) != digest for path, digest in hashes.items()):
        return hashes
    return {**hashes, **listed, "SHA256SUMS": sha256_bytes(read("SHA256SUMS") or b"")}


def _checksums(sums: bytes | None, files: set[str]) -> dict[str, str] | None:
    """The '<sha256>  <path>' lines of a SHA256SUMS as gengap writes them (sorted by path, each
    path one of files); None for any other content."""
    if sums is None:
        return None
    try:
        text = sums.decode("utf-8")
    except UnicodeDecodeError:
        return None
    listed: dict[str, str] = {}
    last = ""
    for line in text.splitlines():
        digest, sep, name = line.partition("  ")
        if not sep or not SHA256_HEX.fullmatch(digest) or name not in files or name == "SHA256SUMS" or name <= last:
            return None
        listed[name], last = digest, name
    return listed if "".join(f"{digest}  {name}\n" for name, digest in listed.items()) == text else None


RELEASE = Product("release", "manifest.json", release_hashes)


def subsample(result: SplitResult, sizes: dict[str, int], seed: int) -> SplitResult:
    """Cap each part at sizes[part] by a seeded random subset that keeps the pool order."""
    rng = subsample_rng(seed)
    parts = {}
    for name in PARTS:
        rows = result.parts()[name]
        cap = sizes.get(name)
        if cap is not None and len(rows) > cap:
            keep = np.sort(rng.choice(len(rows), size=cap, replace=False))
            rows = [rows[i] for i in keep.tolist()]
        parts[name] = rows
    options = result.report.get("options", {})
    parts = annotate(parts, bool(options.get("abstract_lexical")), CompoundDefinition.of(options))
    old = result.report
    report = build_report(old["strategy"], old["options"], old["seed"], parts)
    for key, value in old.items():
        report.setdefault(key, value)
    report["capped_to"] = {k: v for k, v in sizes.items()}
    if isinstance(old.get("validation"), dict):  # the shape figures of the parts as released, not as split
        tv = tv_lengths(parts["train"], parts["validation"])
        report["validation"] = {**old["validation"], "tv_lengths": tv}
        kept = [w for w in report.get("warnings", []) if not w.startswith(TV_WARNING)]
        report["warnings"] = kept + tv_warnings(tv, old["validation"].get("exhausted") or [])
    return SplitResult(parts["train"], parts["validation"], parts["test"], report)


def entry_seed(entry: dict[str, Any], suite_seed: int) -> int:
    """The seed of a resolved entry: its config's (stream ``config``), or for a config of an
    exposure sweep the unswept config's (``seed_of``), so the sweep's configs share pool and split."""
    return config_seed(suite_seed, entry.get("seed_of", entry["name"]))


def shared_pool_stream(task: str, label: str) -> str:
    """The seed stream of a shared pool (``pool: {n: N, shared: LABEL}``): ``pool:<task>:<label>``,
    which no config name (``<task>-<split>``, identifiers) can be."""
    return f"pool:{task}:{label}"


def pool_seed(entry: dict[str, Any], suite_seed: int) -> int:
    """The seed of a one-task entry's generated pool: the entry's seed, or for a shared pool the
    seed of its label (shared_pool_stream), so that every entry naming the label draws the same
    records; each entry still splits and subsamples them with its own seed (entry_seed)."""
    shared = shared_pool(entry)
    if shared is None:
        return entry_seed(entry, suite_seed)
    return config_seed(suite_seed, shared_pool_stream(entry["task"], shared))


def pool_plan(entry: dict[str, Any], suite_seed: int) -> BlockPlan | None:
    """The block plan of an entry's generated pool (``pool: {n: N}``); None for other entries."""
    if entry["kind"] != "pool" or entry["pool"] == "all":
        return None  # multi-task entries too: their pool is generated whole (gengap.multitask)
    task = get_task(entry["task"])
    return BlockPlan(task.name, task.make_params(entry["params"]), entry["pool"]["n"], pool_seed(entry, suite_seed))


def pool_block(plan: BlockPlan, block: int) -> list[Record]:
    """The records of one block of a pool plan (the pool is its blocks in order)."""
    return list(plan.generate_block(block).records(plan.task))


def build_entry(entry: dict[str, Any], suite_seed: int, pool: list[Record] | None = None) -> SplitResult:
    """The split of one resolved suite entry (see gengap.suite); its report warns when a part
    has fewer records than the entry's sizes ask for, or validation is empty. pool: the
    entry's generated pool, if already generated (the blocks of pool_plan, in order)."""
    result = _split_entry(entry, suite_seed, pool)
    if "cue" in entry:  # shortcut cues on the finished parts (gengap.splits.cues)
        result = apply_cue(result, entry["cue"], config_seed(suite_seed, entry["name"]))
    add_warnings(result.report, shortfall_warnings(result.report, entry.get("sizes")))
    return result


def _split_entry(entry: dict[str, Any], suite_seed: int, pool: list[Record] | None = None) -> SplitResult:
    seed = entry_seed(entry, suite_seed)
    if is_multitask(entry):
        return _split_multitask(entry, seed)
    task = get_task(entry["task"])
    if entry["kind"] == "sampled_length":
        return sample_length_split(
            task.name, tuple(entry["train_range"]), tuple(entry["test_range"]), entry["sizes"], seed, entry["base_params"],
            entry.get("options"),
        )
    if entry["kind"] == "sampled_level":
        return sample_level_split(task.name, entry["level_max"], entry["sizes"], seed, entry["test_levels"], entry.get("options"))
    params = task.make_params(entry["params"])
    if entry["pool"] == "all":
        batch = task.enumerate(params)
        if batch is None:
            raise ReleaseError(f"{entry['name']}: task {task.name} cannot enumerate its examples")
        records: list[Record] = list(batch.records(task.name))
    elif pool is not None:
        records = pool
    else:
        records = generate_records(task.name, params, entry["pool"]["n"], pool_seed(entry, suite_seed))
    result = split(records, entry["strategy"], entry["options"], seed)
    if entry.get("sizes"):
        result = subsample(result, entry["sizes"], seed)
    return result


def _split_multitask(entry: dict[str, Any], seed: int) -> SplitResult:
    """The split of a multi-task entry: its pool (gengap.multitask) split by its strategy, capped by its sizes."""
    result = split(multitask_pool(entry, seed), entry["strategy"], entry["options"], seed)
    result = subsample(result, entry["sizes"], seed) if entry.get("sizes") else result
    return finish_multitask_split(result, entry)  # task markers, or the warning about inputs the tasks share


def render_entry(entry: dict[str, Any], suite_seed: int, pool: list[Record] | None = None) -> tuple[dict[str, bytes], dict[str, Any]]:
    """JSONL bytes of each part and the split report of one entry (pool: see build_entry);
    every written record has been checked (check_rendered)."""
    result = build_entry(entry, suite_seed, pool)
    data = {part: "".join(dumps_record(r) + "\n" for r in rows).encode() for part, rows in result.parts().items()}
    check_rendered(entry, data)
    return data, result.report


def check_rendered(entry: dict[str, Any], data: dict[str, bytes]) -> None:
    """ReleaseError unless every line of every part is a valid record of the entry's task that
    its task's checker accepts (gengap.checking.record_problem: schema, id, lengths, meta,
    target, derivation, difficulty features), read back from the bytes to be written."""
    tasks = entry_tasks(entry)
    for part, blob in data.items():
        for number, line in enumerate(blob.splitlines(), start=1):
            record = json.loads(line)
            problem = record_problem(record)
            if problem is None and record["task"] not in tasks:
                problem = f"task {record['task']!r} is not the config's task {'+'.join(tasks)!r}"
            if problem is not None:
                raise ReleaseError(f"{entry['name']}: {part}.jsonl line {number}: {problem} (nothing was written)")


def _main_feature(features: list[str], split_feature: str | None, task_feature: str) -> str:
    """The difficulty feature to plot besides input length: the split's, else the task's level feature."""
    for candidate in (split_feature, task_feature):
        if candidate and candidate in features and candidate != "output_length":
            return candidate
    extra = [f for f in features if f not in ("input_length", "output_length")]
    return extra[0] if extra else "input_length"


def build_manifest_entry(entry: dict[str, Any], suite_seed: int, data: dict[str, bytes], report: dict[str, Any]) -> dict[str, Any]:
    files = {}
    for part in PARTS:
        files[part] = {
            "path": f"data/{entry['name']}/{part}.jsonl",
            "sha256": sha256_bytes(data[part]),
            "bytes": len(data[part]),
            "rows": data[part].count(b"\n"),
        }
    features: list[str] = []
    for part in PARTS:
        for name in report["parts"][part]["ranges"]:
            if name not in features:
                features.append(name)
    generation = {k: v for k, v in entry.items() if k not in ("name", "task", "split", "strategy")}
    task_fields = manifest_task_fields(entry)
    level_feature = get_task(entry_tasks(entry)[0]).level_feature
    return {
        "name": entry["name"],
        **{key: task_fields[key] for key in ("task", "family", "task_description")},
        **({"tasks": task_fields["tasks"]} if "tasks" in task_fields else {}),
        "split": {"name": entry["split"], "strategy": entry["strategy"], "options": report.get("options", {})},
        "generation": generation,
        "seed": entry_seed(entry, suite_seed),
        **({"pool_seed": pool_seed(entry, suite_seed)} if shared_pool(entry) is not None else {}),
        "files": files,
        "features": features,
        "main_feature": _main_feature(features, (entry.get("options") or {}).get("feature"), level_feature),
        "report": report,
    }


Rendered = tuple[dict[str, Any], dict[str, bytes], dict[str, Any]]  # entry, JSONL bytes per part, report
# renders every entry of a suite, in suite order: (entries, suite seed, workers) -> results
Renderer = Callable[[list[dict[str, Any]], int, int], Iterator[Rendered]]


def render(entry: dict[str, Any], suite_seed: int, pool: list[Record] | None = None) -> Rendered:
    """render_entry's result with its entry (what a renderer yields)."""
    data, report = render_entry(entry, suite_seed) if pool is None else render_entry(entry, suite_seed, pool)
    return entry, data, report


def render_in_processes(entries: list[dict[str, Any]], suite_seed: int, workers: int) -> Iterator[Rendered]:
    """The default renderer: every entry in `workers` local processes (gengap.workers)."""
    workers = workers if len(entries) > 1 else 1
    return ordered_map(functools.partial(render, suite_seed=suite_seed), entries, workers)


def _render_all(suite: dict[str, Any], workers: int, on_done: Callable[[str], None], renderer: Renderer) -> Iterator[Rendered]:
    """Every entry rendered by renderer, in suite order."""
    with contextlib.closing(renderer(suite["entries"], suite["seed"], workers)) as results:
        for entry, data, report in results:
            on_done(entry["name"])
            yield entry, data, report


def write_release(
    suite: dict[str, Any],
    out: str | Path,
    workers: int = 1,
    force: bool = False,
    on_done: Callable[[str], None] = lambda name: None,
    cards: bool = True,
    inputs: Iterable[str | Path] = (),
    renderer: Renderer = render_in_processes,
    list_cards: bool | None = None,
) -> dict[str, Any]:
    """Build the release of a resolved suite into out; returns the manifest.

    cards: render the card files (dataset card, Croissant, CITATION.cff, plots); the
    manifest's ``card_files`` lists them (gengap.data_cards.card_files), or is empty without cards.
    list_cards (default: cards) lists them without rendering them (`verify --regenerate`
    renders them later from its aligned manifest).

    renderer builds the entries' bytes (default: local processes; gengap.release_ray: Ray
    tasks); the bytes do not depend on it.

    The output discipline of gengap.files applies: out must be absent or empty, or with
    force a release (gengap.ownership: its manifest accounts for every file) that contains none of `inputs`; concurrent
    writers of out fail; out appears complete or not at all.
    """
    with atomic_directory(out, force, inputs, RELEASE) as staging, contextlib.closing(
        _render_all(suite, workers, on_done, renderer)
    ) as rendered:
        configs = []
        data_files: dict[str, dict[str, Any]] = {}
        for entry, data, report in rendered:
            manifest_entry = build_manifest_entry(entry, suite["seed"], data, report)
            for part in PARTS:
                info = manifest_entry["files"][part]
                path = staging / info["path"]
                for folder in reversed(path.relative_to(staging).parents[:-1]):  # never staging itself or above
                    (staging / folder).mkdir(exist_ok=True)
                path.write_bytes(data[part])
                data_files[info["path"]] = {k: info[k] for k in ("sha256", "bytes", "rows")}
            configs.append(manifest_entry)
        manifest = {
            "name": suite["name"],
            "pretty_name": suite["pretty_name"],
            "version": suite["version"],
            "description": suite["description"],
            "license": suite["license"],
            "authors": suite["authors"],
            "homepage": suite["homepage"],
            "seed": suite["seed"],
            "gengap_version": __version__,
            "numpy_version": np.__version__,
            "python_version": platform.python_version(),
            "created": suite["created"],
            **release_plugins(suite),
            "suite": suite,
            "configs": configs,
            "data_files": data_files,
            "card_files": card_files(configs) if (cards if list_cards is None else list_cards) else [],
            "fingerprint": fingerprint(data_files),
        }
        # floats portable across platforms (gengap.splits.precision); the suite stays as written, to be rebuilt
        manifest = {key: value if key == "suite" else rounded(value) for key, value in manifest.items()}
        (staging / "manifest.json").write_text(manifest_text(manifest), encoding="utf-8")
        if cards:
            write_cards(manifest, staging)
        write_checksums(staging)
    return manifest


def release_plugins(suite: dict[str, Any]) -> dict[str, Any]:
    """``{"plugins": [...]}``: the plugins providing the suite's tasks (module, distribution,
    version, tasks; gengap.generators.plugins.provenance), or {} when every task is built in (so the
    manifest of such a release has no ``plugins`` key)."""
    tasks = list(dict.fromkeys(task for entry in suite["entries"] for task in entry_tasks(entry)))
    found = provenance({task: task_module(task) for task in tasks}, tasks)
    return {"plugins": [plugin.to_dict() for plugin in found]} if found else {}


def manifest_text(manifest: dict[str, Any]) -> str:
    """manifest.json's bytes (as text) for a manifest."""
    return json_text(manifest)


def write_cards(manifest: dict[str, Any], directory: Path) -> list[str]:
    """Dataset card, Croissant, CITATION.cff and plots (data_cards; needs matplotlib)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ReleaseError(f"plots need matplotlib: {install_hint('release')}") from None
    from gengap.data_cards import write_cards as render

    return render(manifest, directory)


def checksum_lines(directory: Path) -> str:
    """'<sha256>  <path>' for every file under directory except SHA256SUMS, sorted by path."""
    files = sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file())
    return "".join(
        f"{sha256_bytes((directory / name).read_bytes())}  {name}\n" for name in files if name != "SHA256SUMS"
    )


def write_checksums(directory: Path) -> None:
    (directory / "SHA256SUMS").write_text(checksum_lines(directory), encoding="utf-8")
