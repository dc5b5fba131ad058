"""The Hugging Face dataset card (README.md) of a release.

YAML front matter (pretty_name, license, language, size_categories, task_categories,
tags, ``configs``, the first marked ``default: true`` so that ``load_dataset(folder)`` without a
config name loads it, and ``dataset_info``) followed by a datasheet (Gebru et al.,
"Datasheets for Datasets"): motivation, composition, collection process, preprocessing,
uses, distribution, maintenance; then the split reports with plots, example records, a
BibTeX entry for the release and those of the works its configs reproduce
(gengap.data_cards.references). Options equal to "unset" sentinels are left out
(common.shown_options); the collection process is a table of each config's settings.

Features declared in ``dataset_info``: id, task, input, target (string), difficulty (a
struct of int64 fields, one per name in config["features"]). ``meta`` (an object whose
keys depend on the task) and ``structure`` (a derivation tree: nested lists mixing
strings and lists, which Arrow cannot type) are declared with the ``json`` dtype
(datasets >= 4.7), and only for configs whose records carry them; ``novelty`` (validation
and test records only; null in train) is a struct of two int64; other top-level keys
are declared ``json`` too. Declaring the features makes ``datasets`` check the split
sizes against ``num_examples`` when it loads a config. ``num_bytes`` is the size of the
JSONL file (the hub's own figure is the Arrow size, which a renderer cannot know).
"""

from __future__ import annotations

import json
from itertools import islice
from pathlib import Path
from typing import Any, Mapping

import yaml

from gengap.data_cards.common import (
    ManifestError,
    authors_display,
    bibtex,
    check_manifest,
    format_value,
    key_values,
    shown_options,
    config_parts,
    config_tasks,
    format_float,
    format_range,
    hf_license,
    iter_records,
    plot_paths,
    read_records,
    size_category,
    total_rows,
)
from gengap.data_cards.references import BIBTEX, release_references

STRING_COLUMNS = ("id", "task", "input", "target")
JSON_COLUMNS = ("meta", "structure")
NOVELTY_FIELDS = ("unseen_compounds", "unseen_atoms")
KEY_SCAN_ROWS = 1000  # records per file read to find which optional columns a config has
EXAMPLES_PER_PART = 2
FIELD_LIMIT = 200  # characters of a string shown in an example before it is cut
RECORD_FIELDS = (
    ("id", "string", "task name + first 16 hex digits of sha256(input + newline + target)"),
    ("task", "string", "task name"),
    ("input", "string", "space-separated input tokens"),
    ("target", "string", "space-separated target tokens"),
    (
        "difficulty",
        "object of integers",
        "features measured on the example: input_length, output_length (tokens) and task-specific ones",
    ),
    ("meta", "object (some tasks)", "settings needed to read the input, e.g. a modulus"),
    ("structure", "nested lists (compositional tasks)", "derivation tree: [rule, child, ...], leaves are words"),
    (
        "novelty",
        "object of integers (validation and test)",
        "unseen_compounds / unseen_atoms: distinct compounds / atoms of the record that never occur in the train part",
    ),
)
FIXED_TAGS = ("synthetic", "generalization", "out-of-distribution", "benchmark", "procedurally-generated", "gengap")


def _slug(text: str) -> str:
    return str(text).replace("_", "-").lower()


def loadable_parts(config: Mapping[str, Any]) -> list[str]:
    """Parts with at least one record: `datasets` refuses to load a declared split with no data."""
    parts = [part for part in config_parts(config) if int(config["files"][part]["rows"]) > 0]
    if not parts:
        raise ManifestError(f"config {config['name']!r} has no records")
    return parts


def record_columns(config: Mapping[str, Any], release_dir: Path) -> list[str]:
    """Top-level record keys of a config: the fixed ones, then meta/structure and any others seen."""
    seen: set[str] = set()
    for part in config_parts(config):
        path = release_dir / config["files"][part]["path"]
        for record in islice(iter_records(path), KEY_SCAN_ROWS):
            seen.update(record)
    fixed = [*STRING_COLUMNS, "difficulty"]
    optional = [c for c in JSON_COLUMNS if c in seen]
    others = sorted(seen - set(fixed) - set(JSON_COLUMNS))
    return fixed + optional + others


def features_yaml(config: Mapping[str, Any], release_dir: Path) -> list[dict[str, Any]]:
    """The `features` list of a config's dataset_info (see the module doc)."""
    features: list[dict[str, Any]] = []
    for column in record_columns(config, release_dir):
        if column in STRING_COLUMNS:
            features.append({"name": column, "dtype": "string"})
        elif column == "difficulty":
            fields = [{"name": str(name), "dtype": "int64"} for name in config["features"]]
            features.append({"name": "difficulty", "struct": fields})
        elif column == "novelty":
            features.append({"name": "novelty", "struct": [{"name": name, "dtype": "int64"} for name in NOVELTY_FIELDS]})
        else:
            features.append({"name": column, "dtype": "json"})
    return features


def _task_lines(config: Mapping[str, Any]) -> list[str]:
    """What a config's section says of its task; a multi-task config lists its tasks and,
    for a task_holdout split, which are trained on and which held out for test."""
    items = config_tasks(config)
    if len(items) == 1 and "tasks" not in config:
        return [f"{config['task']} ({config['family']}): {config['task_description']}"]
    report = config["report"]
    lines = [f"Several tasks pooled in one config ({len(items)}):", ""]
    lines += [f"- {code(t['task'])} ({t['family']}): {t['task_description']}" for t in items]
    if report.get("test_tasks"):
        lines += ["", f"Train tasks: {', '.join(map(code, report.get('train_tasks') or []))}; "
                      f"held-out test tasks: {', '.join(map(code, report['test_tasks']))}."]
    per_task = {p: (report.get("parts", {}).get(p) or {}).get("tasks") or {} for p in ("train", "validation", "test")}
    lines += ["", table(["task", "train", "validation", "test"],
                        [[t["task"], *(f"{int(per_task[p].get(t['task'], 0)):,}" for p in ("train", "validation", "test"))] for t in items]).rstrip("\n")]
    return lines


def front_matter(manifest: Mapping[str, Any], release_dir: Path) -> dict[str, Any]:
    configs = manifest["configs"]
    families = sorted({_slug(t["family"]) for c in configs for t in config_tasks(c)})
    strategies = sorted({_slug(c["split"]["strategy"]) + "-split" for c in configs})
    tags = list(FIXED_TAGS) + [t for t in families + strategies if t not in FIXED_TAGS]
    config_list = []
    info_list = []
    for index, config in enumerate(configs):
        parts = loadable_parts(config)
        config_list.append(
            {
                "config_name": config["name"],
                **({"default": True} if index == 0 else {}),  # load_dataset(folder) without a config name loads the first
                "data_files": [{"split": part, "path": config["files"][part]["path"]} for part in parts],
            }
        )
        splits = [
            {
                "name": part,
                "num_bytes": int(config["files"][part]["bytes"]),
                "num_examples": int(config["files"][part]["rows"]),
            }
            for part in parts
        ]
        size = sum(s["num_bytes"] for s in splits)
        info_list.append(
            {
                "config_name": config["name"],
                "features": features_yaml(config, release_dir),
                "splits": splits,
                "download_size": size,
                "dataset_size": size,
            }
        )
    return {
        "pretty_name": str(manifest["pretty_name"]),
        "license": hf_license(str(manifest["license"])),
        "language": ["en"],
        "multilinguality": ["monolingual"],
        "annotations_creators": ["machine-generated"],
        "language_creators": ["machine-generated"],
        "source_datasets": ["original"],
        "size_categories": [size_category(total_rows(manifest))],
        "task_categories": ["text-generation"],
        "tags": tags,
        "configs": config_list,
        "dataset_info": info_list,
    }


# --- Markdown helpers -------------------------------------------------------------------


def cell(value: Any) -> str:
    """Text safe inside a Markdown table cell."""
    return str(value).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def fenced(text: str, language: str = "") -> str:
    """A fenced code block whose fence is longer than any backtick run in text."""
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip(chr(10))}\n{fence}\n"


def code(text: Any) -> str:
    """Inline code that survives backticks in text."""
    text = str(text)
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _cut(text: str, limit: int = FIELD_LIMIT) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… (+{len(text) - limit} characters)"


def shorten_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """A record for display: long strings cut; meta and structure cut as compact JSON text."""
    shown: dict[str, Any] = {}
    for key, value in record.items():
        if isinstance(value, str):
            shown[key] = _cut(value)
        elif key == "difficulty" and isinstance(value, dict):
            shown[key] = value
        else:
            compact = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
            shown[key] = value if len(compact) <= FIELD_LIMIT else _cut(compact)
    return shown


# --- sections ---------------------------------------------------------------------------


def _header(manifest: Mapping[str, Any]) -> str:
    configs = manifest["configs"]
    homepage = str(manifest.get("homepage") or "")
    lines = [
        f"# {manifest['pretty_name']}",
        "",
        str(manifest["description"]).strip(),
        "",
        f"- **Name:** {code(manifest['name'])}, version {code(manifest['version'])}, released {manifest['created']}",
        f"- **Authors:** {authors_display(manifest)}",
        f"- **License:** {hf_license(str(manifest['license']))}",
        f"- **Fingerprint:** {code('sha256:' + str(manifest['fingerprint']))}",
        f"- **Size:** {len(configs)} configs, {total_rows(manifest):,} records",
    ]
    if homepage:
        lines.append(f"- **Homepage:** {homepage}")
    first = configs[0]["name"]
    parts = ", ".join(loadable_parts(configs[0]))
    lines += [
        "",
        "Load one config (a task with one split strategy) with the `datasets` library, from a local",
        f"copy of this folder or from the hub (without a config name: {code(first)}, the default):",
        "",
        fenced(
            "from datasets import load_dataset\n\n"
            f'ds = load_dataset("path/to/this/folder", "{first}")  # a DatasetDict: {parts}',
            "python",
        ).rstrip("\n"),
    ]
    return "\n".join(lines) + "\n"


def _motivation(manifest: Mapping[str, Any]) -> str:
    return f"""## Motivation

**For what purpose was the dataset created?** To measure the gap between in-distribution and
out-of-distribution generalization of sequence models on tasks whose correct answer is known
exactly. Each config pairs a procedurally generated task with a split strategy that holds out
a region of the input space for test (longer inputs, harder levels, unseen combinations of
known parts, ...). The validation part is carved out of the train side, so it is
in-distribution: the difference between validation and test accuracy is the generalization
gap the benchmark is about.

**Who created the dataset?** {authors_display(manifest)}, with gengap
{manifest["gengap_version"]}, a generator of synthetic generalization benchmarks.

**Funding.** Not stated in the release.
"""


def _composition(manifest: Mapping[str, Any]) -> str:
    configs = manifest["configs"]
    rows = []
    for config in configs:
        report = config["report"]
        parts = report.get("parts", {})
        lengths = " / ".join(
            format_range(parts.get(p, {}).get("ranges", {}).get("input_length"))
            for p in ("train", "validation", "test")
        )
        rows.append(
            [
                code(config["name"]),
                config["task"],
                config["family"],
                config["split"]["strategy"],
                *(f"{int(config['files'].get(p, {}).get('rows', 0)):,}" for p in ("train", "validation", "test")),
                lengths,
                format_float(report.get("atom_divergence")),
                format_float(report.get("compound_divergence")),
                report.get("overlap", "n/a"),
            ]
        )
    summary = table(
        [
            "config",
            "task",
            "family",
            "split",
            "train",
            "validation",
            "test",
            "input length (train / val / test)",
            "atom div.",
            "compound div.",
            "overlap",
        ],
        rows,
    )
    tasks: dict[str, tuple[str, str]] = {}
    for config in configs:
        for item in config_tasks(config):
            tasks.setdefault(item["task"], (item["family"], item["task_description"]))
    task_table = table(["task", "family", "input -> target"], [[t, f, d] for t, (f, d) in sorted(tasks.items())])
    fields = table(["field", "type", "content"], [list(row) for row in RECORD_FIELDS])
    empty = [
        f"{code(c['name'])} {part}" for c in configs for part in config_parts(c) if int(c["files"][part]["rows"]) == 0
    ]
    empty_note = (
        f"Parts with no records are not declared as splits in the card's metadata: {', '.join(empty)}.\n"
        if empty
        else ""
    )
    warned = [(c["name"], w) for c in configs for w in c["report"].get("warnings") or []]
    warnings_note = (
        "**Warnings.** The split reports of some configs warn about their data (a part smaller than\n"
        "asked for, duplicates, test examples removed for overlap, ...):\n\n"
        + "".join(f"- {code(name)}: {w}\n" for name, w in warned)
        + "\n"
        if warned
        else ""
    )
    return f"""## Composition

**What do the instances represent?** Each record is one example of a synthetic task: an
input token sequence and the target the task defines for it. Tokens are separated by single
spaces and contain no whitespace. Records are JSON objects, one per line:

{fields}
**How many instances are there?** {total_rows(manifest):,} records in {len(configs)} configs. Each config
has a train, a validation (in-distribution, carved out of the train side) and a test
(out-of-distribution) part:

{summary}
{empty_note}{warnings_note}Divergences compare train and test: atom divergence (unseen or rarer atoms) and compound
divergence (unseen combinations), after Keysers et al. (2020); 0 means the same
distribution, 1 disjoint. Overlap counts test inputs that also occur in train or validation
(removed by construction).

**Tasks:**

{task_table}
**Is any information missing? Are there errors or noise?** No. Every target is computed by
the generator and can be re-checked by an independent checker (`gengap check FILE.jsonl`).
Inputs may repeat within a part (counted in the split reports below); no test input occurs in
train or validation.

**Does the dataset contain confidential, offensive or personal data?** No: the records are
strings of task tokens generated from random numbers; no person is represented.
"""


def _sides(generation: Mapping[str, Any], pool_seed: int | None = None) -> str:
    """How a config's records were drawn: its two sampled sides, or its pool (a shared pool: its
    label and seed)."""
    kind = generation.get("kind")
    if kind == "sampled_length":
        return (
            f"train side: size {format_value(generation.get('train_range'))}; "
            f"test side: size {format_value(generation.get('test_range'))}"
        )
    if kind == "sampled_level":
        return (
            f"train side: levels 1–{generation.get('level_max')}; "
            f"test side: levels {format_value(generation.get('test_levels'))}"
        )
    pool = generation.get("pool")
    if pool == "all":
        return "pool: every example (enumerated)"
    if isinstance(pool, Mapping):
        shared = f", the shared pool {code(str(pool['shared']))} (pool seed {pool_seed})" if "shared" in pool else ""
        return f"pool: {int(pool.get('n', 0)):,} generated examples{shared}"
    return "n/a"


def _parameters(generation: Mapping[str, Any]) -> str:
    """The task parameters a config was generated with (sampled sides: the overrides of the defaults)."""
    if generation.get("kind") in ("sampled_length", "sampled_level"):
        overrides = generation.get("base_params") or {}
        return key_values(overrides) if overrides else "defaults"
    return key_values(generation.get("params") or {}) or "defaults"


def _sizes(generation: Mapping[str, Any]) -> str:
    sizes = generation.get("sizes") or {}
    if not sizes:
        return "all the split gives"
    text = ", ".join(f"{part} {int(n):,}" for part, n in sizes.items())
    return text if generation.get("kind") in ("sampled_length", "sampled_level") else f"at most {text}"


def _collection(manifest: Mapping[str, Any]) -> str:
    rows = [
        [code(c["name"]), c["seed"], _sides(c["generation"], c.get("pool_seed")), _parameters(c["generation"]), _sizes(c["generation"])]
        for c in manifest["configs"]
    ]
    settings = table(["config", "derived seed", "records drawn from", "task parameters", "sizes"], rows)
    shared = any("pool_seed" in c for c in manifest["configs"])
    pools = (" The configs of a shared pool split the same generated records, drawn from the pool's seed\n"
             "(the suite seed hashed with the pool's task and label), each with its own derived seed.") if shared else ""
    return f"""## Collection process

**How was the data acquired?** Generated, not collected: gengap {manifest["gengap_version"]} with
numpy {manifest["numpy_version"]} draws every example from a seeded random generator (suite seed
{manifest["seed"]}; each config's seed is derived by hashing the suite seed with the config
name) and splits the generated pool with the config's split strategy. The same seed and
parameters give the same bytes on any machine and with any number of workers. No human was
involved and no existing data was used. Built on {manifest["created"]}.{pools}

The generator settings of each config ("size" is the task's size knob, e.g. input length;
`manifest.json` has every setting in full):

{settings}"""


def _preprocessing(manifest: Mapping[str, Any]) -> str:
    return """## Preprocessing, cleaning, labeling

None: the data is synthetic and the targets are computed, not annotated. The only processing
is the split itself: test records whose input also occurs on the train side are removed, and
the validation part is made of whole groups of records sharing an input, so validation and
train never share an input either.
"""


def _uses(manifest: Mapping[str, Any]) -> str:
    return """## Uses

**Intended uses.** Measuring in-distribution vs out-of-distribution generalization (length,
difficulty and compositional generalization) of sequence models: train on `train`, select
models on `validation`, report accuracy on `validation` (in-distribution) and `test`
(out-of-distribution) and their gap. The difficulty features allow accuracy to be broken down
by input length, depth, number of operations, etc.

**Out of scope.** The inputs are not natural language: results do not measure linguistic
competence or real-world skills. Do not train or tune on `test`: it is the held-out
distribution. Tasks, splits and sizes were chosen for controlled experiments, not as a
representative sample of any real-world task.
"""


def _distribution(manifest: Mapping[str, Any]) -> str:
    license_id = hf_license(str(manifest["license"]))
    verify = fenced("gengap verify DIR", "bash")
    regenerate = fenced("gengap verify DIR --regenerate", "bash")
    return f"""## Distribution

- **License:** {license_id}.
- **Files:** `data/<config>/{{train,validation,test}}.jsonl` (JSON Lines, UTF-8),
  `manifest.json` (everything this card is made from: suite, generator settings, seeds,
  split reports, file hashes), `SHA256SUMS`, `croissant.json` (Croissant 1.0 metadata with
  Responsible AI fields), `CITATION.cff`, `plots/`.
- **Fingerprint:** `sha256:{manifest["fingerprint"]}`: sha256 over the sorted
  `<sha256>  <path>` lines of the data files; it identifies the data of this release.

**Verify a copy** and print its fingerprint, to compare with the one cited:

{verify}
It checks every file against `SHA256SUMS`, the data hashes and the fingerprint in
`manifest.json`, that this card, `CITATION.cff` and `croissant.json` state that fingerprint,
and every record: its id, its token lengths and its target (re-checked by the task's
independent checker). This proves every record is a correct example of its task; it does
not prove the records are the ones the suite and seeds give. **Regenerate** proves that:
it rebuilds the data from the suite and seeds in `manifest.json` and compares it byte for
byte with the files:

{regenerate}
`sha256sum -c SHA256SUMS` checks only that the files are intact copies, without gengap.
"""


def _maintenance(manifest: Mapping[str, Any]) -> str:
    homepage = str(manifest.get("homepage") or "")
    where = f" at {homepage}" if homepage else ""
    return f"""## Maintenance

Maintained by {authors_display(manifest)}{where}. A released version is never changed in place:
corrections and new tasks or splits are published as new versions with their own version
number and fingerprint. Since the data is a deterministic function of the suite and seed in
`manifest.json`, a release can always be rebuilt and checked against its fingerprint.
"""


def _novelty_lines(report: Mapping[str, Any]) -> list[str]:
    """Per-example novelty of validation and test (records' ``novelty`` field), when the report has it."""
    lines = []
    for part, summary in (report.get("novelty") or {}).items():
        if not summary:
            continue
        histogram = summary.get("unseen_compounds_histogram", {})
        counts = ", ".join(f"{label}: {int(count):,}" for label, count in histogram.items())
        lines.append(
            f"- {part} records with a compound unseen in train: {100 * float(summary['with_unseen_compound']):.1f} % "
            f"(records by unseen compounds, {counts})"
        )
    return lines


def _category_lines(report: Mapping[str, Any]) -> list[str]:
    """Test records per generalization category and the exposure examples (category splits)."""
    counts = report.get("test_categories")
    if not counts:
        return []
    shown = ", ".join(f"{code(name)} {int(n):,}" for name, n in counts.items())
    exposure = "; ".join(code(text) for text in report.get("exposure") or []) or "none"
    return [f"- test records per generalization category: {shown}", f"- exposure examples in train: {exposure}"]


def _split_reports(manifest: Mapping[str, Any], release_dir: Path) -> str:
    out = ["## Split reports\n"]
    for config in manifest["configs"]:
        report = config["report"]
        parts = report.get("parts", {})
        features = list(config["features"])
        header = ["part", "rows", "duplicate inputs", *features]
        rows = []
        for part in ("train", "validation", "test"):
            summary = parts.get(part, {})
            ranges = summary.get("ranges", {})
            rows.append(
                [
                    part,
                    f"{int(summary.get('size', 0)):,}",
                    f"{int(summary.get('duplicate_inputs', 0)):,}",
                    *(format_range(ranges.get(f)) for f in features),
                ]
            )
        options = key_values(shown_options(config, manifest)) or "defaults"
        unseen = report.get("unseen_atoms") or []
        unseen_text = str(report.get("unseen_atom_count", len(unseen)))
        if unseen:
            shown = ", ".join(code(a) for a in unseen[:20])
            more = " …" if report.get("unseen_atom_count", len(unseen)) > 20 else ""
            unseen_text += f" ({shown}{more})"
        split = config["split"]
        lines = [
            f"### {config['name']}",
            "",
            *_task_lines(config),
            "",
            f"- split {code(split.get('name', ''))}: strategy {code(split['strategy'])}, options: {options}",
            f"- atom divergence {format_float(report.get('atom_divergence'))}, compound divergence "
            f"{format_float(report.get('compound_divergence'))} (atoms from {report.get('atoms_source', 'n/a')})",
            f"- test inputs also in train: {report.get('overlap', 'n/a')}"
            f" (removed before: {report.get('removed_overlap', 0)});"
            f" pool records in no part: {report.get('unused', 0)}",
            f"- atoms of test unseen in train: {unseen_text}",
            *_category_lines(report),
            *_novelty_lines(report),
            *(f"- **warning:** {w}" for w in report.get("warnings") or []),
            "",
            "Sizes, and ranges of the difficulty features (min–max) per part:",
            "",
            table(header, rows).rstrip("\n"),
            "",
        ]
        images = [
            f"![{config['name']}: {feature}, train vs test]({path})"
            for feature, path in plot_paths(config)
            if (release_dir / path).is_file()
        ]
        if images:
            lines += [" ".join(images), ""]
        out.append("\n".join(lines))
    return "\n".join(out)


def _examples(manifest: Mapping[str, Any], release_dir: Path) -> str:
    out = [
        "## Examples\n",
        f"The first {EXAMPLES_PER_PART} records of train and test of each config (strings longer than",
        f"{FIELD_LIMIT} characters are cut).\n",
    ]
    for config in manifest["configs"]:
        out.append(f"### {config['name']}\n")
        for part in ("train", "test"):
            info = config["files"].get(part)
            records = read_records(release_dir / info["path"], EXAMPLES_PER_PART) if info else []
            out.append(f"{part}:\n")
            if not records:
                out.append("(no records)\n")
                continue
            text = "\n".join(
                json.dumps(shorten_record(r), ensure_ascii=False, separators=(", ", ": ")) for r in records
            )
            out.append(fenced(text, "json"))
    return "\n".join(out)


def _citation(manifest: Mapping[str, Any]) -> str:
    text = "## Citation\n\nCite this release:\n\n" + fenced(bibtex(manifest), "bibtex")
    cited = release_references(manifest)
    if not cited:
        return text
    lines = [
        "",
        "Its configs reproduce or follow these works; please cite them too:",
        "",
        *(f"- {code(key)}: {', '.join(code(name) for name in names)}" for key, names in cited.items()),
        "",
        fenced("\n".join(BIBTEX[key] for key in cited), "bibtex"),
    ]
    return text + "\n".join(lines)


def render_card(manifest: dict, release_dir: Path) -> str:
    """README.md text: the Hugging Face dataset card of the release in release_dir.

    Reads the first records of the data files (for examples and to find optional columns)
    and references plots that exist under release_dir/plots; same inputs, same text.
    """
    check_manifest(manifest)
    release_dir = Path(release_dir)
    meta = yaml.safe_dump(front_matter(manifest, release_dir), sort_keys=False, allow_unicode=True, width=100)
    sections = [
        _header(manifest),
        _motivation(manifest),
        _composition(manifest),
        _collection(manifest),
        _preprocessing(manifest),
        _uses(manifest),
        _distribution(manifest),
        _maintenance(manifest),
        _split_reports(manifest, release_dir),
        _examples(manifest, release_dir),
        _citation(manifest),
    ]
    body = "\n".join(s.rstrip("\n") + "\n" for s in sections)
    return f"---\n{meta}---\n\n{body}"
