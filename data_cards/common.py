"""Shared helpers of the renderers: manifest checks, record reading, licenses, citation text.

Everything here is a pure function of its arguments (and of the files it is asked to
read), so the renderers built on it give the same bytes for the same release.
"""

from __future__ import annotations

import json
import re
from itertools import islice
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

PARTS = ("train", "validation", "test")

MANIFEST_KEYS = (
    "name",
    "pretty_name",
    "version",
    "description",
    "license",
    "authors",
    "homepage",
    "seed",
    "gengap_version",
    "numpy_version",
    "created",
    "configs",
    "data_files",
    "fingerprint",
)
CONFIG_KEYS = (
    "name",
    "task",
    "family",
    "task_description",
    "split",
    "generation",
    "seed",
    "files",
    "features",
    "main_feature",
    "report",
)
SAFE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")

# Hugging Face license id -> (SPDX id, canonical URL). Ids not listed here are passed through
# to the card and Croissant as given, and left out of CITATION.cff (whose schema only
# accepts SPDX ids).
LICENSES: dict[str, tuple[str, str]] = {
    "apache-2.0": ("Apache-2.0", "https://www.apache.org/licenses/LICENSE-2.0"),
    "mit": ("MIT", "https://opensource.org/licenses/MIT"),
    "bsd-2-clause": ("BSD-2-Clause", "https://opensource.org/licenses/BSD-2-Clause"),
    "bsd-3-clause": ("BSD-3-Clause", "https://opensource.org/licenses/BSD-3-Clause"),
    "cc0-1.0": ("CC0-1.0", "https://creativecommons.org/publicdomain/zero/1.0/"),
    "cc-by-4.0": ("CC-BY-4.0", "https://creativecommons.org/licenses/by/4.0/"),
    "cc-by-sa-4.0": ("CC-BY-SA-4.0", "https://creativecommons.org/licenses/by-sa/4.0/"),
    "cc-by-nc-4.0": ("CC-BY-NC-4.0", "https://creativecommons.org/licenses/by-nc/4.0/"),
    "cc-by-nc-sa-4.0": ("CC-BY-NC-SA-4.0", "https://creativecommons.org/licenses/by-nc-sa/4.0/"),
    "cc-by-nd-4.0": ("CC-BY-ND-4.0", "https://creativecommons.org/licenses/by-nd/4.0/"),
    "odc-by": ("ODC-By-1.0", "https://opendatacommons.org/licenses/by/1-0/"),
    "odbl": ("ODbL-1.0", "https://opendatacommons.org/licenses/odbl/1-0/"),
    "pddl": ("PDDL-1.0", "https://opendatacommons.org/licenses/pddl/1-0/"),
    "unlicense": ("Unlicense", "https://unlicense.org/"),
}
_BY_SPDX = {spdx.lower(): hf for hf, (spdx, _) in LICENSES.items()}


class ManifestError(ValueError):
    """The manifest does not follow the release contract."""


def check_manifest(manifest: Mapping[str, Any]) -> None:
    """Raise ManifestError unless the keys the renderers read are present and well formed."""
    missing = [key for key in MANIFEST_KEYS if key not in manifest]
    if missing:
        raise ManifestError(f"manifest lacks {', '.join(missing)}")
    if not SAFE_NAME.fullmatch(str(manifest["name"])):
        raise ManifestError(f"manifest name {manifest['name']!r} is not a safe identifier")
    if not DATE.fullmatch(str(manifest["created"])):
        raise ManifestError(f"manifest created {manifest['created']!r} is not a YYYY-MM-DD date")
    if not manifest["configs"]:
        raise ManifestError("manifest has no configs")
    seen: set[str] = set()
    for config in manifest["configs"]:
        lacking = [key for key in CONFIG_KEYS if key not in config]
        if lacking:
            raise ManifestError(f"config {config.get('name')!r} lacks {', '.join(lacking)}")
        name = str(config["name"])
        if not SAFE_NAME.fullmatch(name):
            raise ManifestError(f"config name {name!r} is not a safe identifier")
        if name in seen:
            raise ManifestError(f"config name {name!r} occurs twice")
        seen.add(name)
        for part, info in config["files"].items():
            if part not in PARTS:
                raise ManifestError(f"config {name!r}: unknown part {part!r}")
            for key in ("path", "sha256", "bytes", "rows"):
                if key not in info:
                    raise ManifestError(f"config {name!r}: files.{part} lacks {key}")


def config_tasks(config: Mapping[str, Any]) -> list[dict[str, str]]:
    """The tasks of a config as {task, family, task_description}: a multi-task config's
    ``tasks`` list (gengap.multitask), else its one task."""
    if isinstance(config.get("tasks"), list):
        return [{key: str(item[key]) for key in ("task", "family", "task_description")} for item in config["tasks"]]
    return [{key: str(config[key]) for key in ("task", "family", "task_description")}]


def config_parts(config: Mapping[str, Any]) -> list[str]:
    """The parts a config has files for, in train, validation, test order."""
    return [part for part in PARTS if part in config["files"]]


def total_rows(manifest: Mapping[str, Any]) -> int:
    return sum(int(info["rows"]) for info in manifest["data_files"].values())


def read_records(path: Path, limit: int | None = None) -> list[dict[str, Any]]:
    """The first `limit` records (all when None) of a JSONL file."""
    return list(islice(iter_records(path), limit))


def iter_records(path: Path) -> Iterator[dict[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def hf_license(license_id: str) -> str:
    """The Hugging Face hub id of a license given as a hub id or an SPDX id."""
    key = license_id.strip().lower()
    if key in LICENSES:
        return key
    return _BY_SPDX.get(key, license_id.strip())


def spdx_license(license_id: str) -> str | None:
    """The SPDX id of a license, None when it is not one this module knows."""
    entry = LICENSES.get(hf_license(license_id))
    return entry[0] if entry else None


def license_url(license_id: str) -> str:
    """The canonical URL of a license (the id itself when unknown)."""
    entry = LICENSES.get(hf_license(license_id))
    return entry[1] if entry else license_id


def release_year(manifest: Mapping[str, Any]) -> str:
    return str(manifest["created"])[:4]


def author_display(author: Mapping[str, Any]) -> str:
    """'Given Family' for a person, the name for an entity."""
    if "name" in author:
        return str(author["name"])
    parts = [
        author.get("given-names"),
        author.get("name-particle"),
        author.get("family-names"),
        author.get("name-suffix"),
    ]
    return " ".join(str(p) for p in parts if p)


def authors_display(manifest: Mapping[str, Any]) -> str:
    names = [author_display(a) for a in manifest["authors"]]
    return ", ".join(names) if names else "unknown"


_BIBTEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def bibtex_escape(text: str) -> str:
    return "".join(_BIBTEX_SPECIAL.get(ch, ch) for ch in text)


def _bibtex_author(author: Mapping[str, Any]) -> str:
    if "name" in author:  # an entity: braces keep BibTeX from splitting it into first/last
        return "{" + bibtex_escape(str(author["name"])) + "}"
    family = " ".join(str(p) for p in (author.get("name-particle"), author.get("family-names")) if p)
    given = str(author.get("given-names", ""))
    suffix = author.get("name-suffix")
    pieces = [bibtex_escape(family)]
    if suffix:
        pieces.append(bibtex_escape(str(suffix)))
    if given:
        pieces.append(bibtex_escape(given))
    return ", ".join(pieces)


def bibtex_key(manifest: Mapping[str, Any]) -> str:
    raw = f"{manifest['name']}_{manifest['version']}"
    return re.sub(r"[^A-Za-z0-9]+", "_", raw).strip("_")


def bibtex(manifest: Mapping[str, Any]) -> str:
    """A @misc BibTeX entry for the release (ends with a newline)."""
    fields: list[tuple[str, str]] = [
        ("title", "{" + bibtex_escape(str(manifest["pretty_name"])) + "}"),
        ("author", " and ".join(_bibtex_author(a) for a in manifest["authors"]) or "{unknown}"),
        ("year", release_year(manifest)),
        ("version", bibtex_escape(str(manifest["version"]))),
        ("note", f"Release fingerprint sha256:{manifest['fingerprint']}"),
    ]
    homepage = str(manifest.get("homepage") or "")
    if homepage:
        fields.append(("howpublished", "\\url{" + homepage + "}"))
        fields.append(("url", homepage))
    width = max(len(name) for name, _ in fields)
    body = ",\n".join(f"  {name.ljust(width)} = {{{value}}}" for name, value in fields)
    return f"@misc{{{bibtex_key(manifest)},\n{body}\n}}\n"


def size_category(n: int) -> str:
    """The Hugging Face size_categories value of a dataset with n rows."""
    bounds = [
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
        (10_000_000, "1M<n<10M"),
        (100_000_000, "10M<n<100M"),
        (1_000_000_000, "100M<n<1B"),
        (10_000_000_000, "1B<n<10B"),
        (100_000_000_000, "10B<n<100B"),
        (1_000_000_000_000, "100B<n<1T"),
    ]
    for bound, label in bounds:
        if n < bound:
            return label
    return "n>1T"


def repository_url(homepage: str) -> str | None:
    """The homepage when it is a code repository (GitHub, GitLab, Codeberg, Bitbucket)."""
    if re.match(r"https?://(www\.)?(github\.com|gitlab\.com|codeberg\.org|bitbucket\.org)/[^/]+/[^/]+/?$", homepage):
        return homepage
    return None


def plot_paths(config: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(feature, relative path) of the plots of a config: input_length, then main_feature."""
    features = ["input_length"]
    main = str(config.get("main_feature") or "input_length")
    if main != "input_length":
        features.append(main)
    return [(feature, f"plots/{config['name']}-{feature}.png") for feature in features]


def format_float(value: Any, digits: int = 4) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return f"{float(value):.{digits}f}"


def format_range(value: Sequence[Any] | None) -> str:
    if not value:
        return "n/a"
    lo, hi = value[0], value[1]
    return str(lo) if lo == hi else f"{lo}–{hi}"


UNBOUNDED = 10**9  # the strategies' "no bound" sentinels are +-10**9


def _entry_options(manifest: Mapping[str, Any], config_name: str) -> set[str] | None:
    """Option names the suite config sets for a config (None when the manifest does not say)."""
    suite = manifest.get("suite")
    if not isinstance(suite, Mapping) or not isinstance(suite.get("config"), Mapping):
        return None
    resolved = suite.get("entries") or []
    raw = suite["config"].get("entries") or []
    for entry, given in zip(resolved, raw):
        if isinstance(entry, Mapping) and entry.get("name") == config_name and isinstance(given, Mapping):
            return set((given.get("options") or {}).keys())
    return None


def shown_options(config: Mapping[str, Any], manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The split options worth printing: none holding an "unset" sentinel.

    Dropped: empty strings, the +-10**9 "unbounded" values, and false flags and integers
    <= 0 that the suite did not set (0 or -1 stand for "derived" or "none": train_size, level_max,
    test_min, primitive_repeats, ...). manifest.json keeps every option.
    """
    options = dict(config["split"].get("options") or config["report"].get("options") or {})
    given = _entry_options(manifest, str(config["name"])) or set()
    shown = {}
    for key, value in sorted(options.items()):
        if value == "" or value is None:
            continue
        if value is False and key not in given:
            continue
        if isinstance(value, int) and not isinstance(value, bool):
            if abs(value) >= UNBOUNDED or (value <= 0 and key not in given):
                continue
        shown[key] = value
    return shown


def format_value(value: Any) -> str:
    """A parameter or option value for a card: floats to 4 significant digits, lists as a-b ranges."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        if len(value) == 2 and all(isinstance(v, int) for v in value):
            return f"{value[0]}–{value[1]}"
        return ", ".join(format_value(v) for v in value)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {format_value(v)}" for k, v in value.items()) + "}"
    return str(value)


def key_values(values: Mapping[str, Any]) -> str:
    return ", ".join(f"{key}={format_value(value)}" for key, value in values.items())
