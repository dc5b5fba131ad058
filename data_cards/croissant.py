"""Croissant 1.0 metadata (JSON-LD) of a release, with the Responsible AI (RAI) vocabulary.

- ``distribution``: one ``cr:FileObject`` per data file (relative contentUrl, sha256,
  size), and per config one ``cr:FileSet`` (includes ``data/<config>/*.jsonl``, relative
  to the folder of croissant.json) that the record sets read: mlcroissant cannot read a
  file set contained in plain (non-archive) file objects.
- ``recordSet``: a ``splits`` record set (dataType ``cr:Split``: train, validation, test
  mapped to cr:TrainingSplit, cr:ValidationSplit, cr:TestSplit), then one record set per
  config whose fields (id, task, input, target as sc:Text, the difficulty features as
  sc:Integer) are extracted from the JSONL columns of the config's file set; its
  ``split`` field is taken from the file path by a regex and references ``splits/name``.
  ``meta`` and ``structure`` are not declared (free-form JSON; see manifest.json).
- dataset level: name, description, license (URL), url, version, datePublished, creator,
  keywords, citeAs (the BibTeX of the card), conformsTo Croissant 1.0 and RAI 1.0, and
  the rai:* fields.

The @context is the one of the Croissant 1.0 example datasets (mlcommons/croissant,
datasets/1.0/*/metadata.json), which mlcroissant checks against: the spec's appendix
lists a subset of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from gengap.data_cards.common import (
    config_tasks,
    bibtex,
    check_manifest,
    config_parts,
    license_url,
    total_rows,
)

CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
CONFORMS_TO = ["http://mlcommons.org/croissant/1.0", "http://mlcommons.org/croissant/RAI/1.0"]
SPLIT_URLS = {"train": "cr:TrainingSplit", "validation": "cr:ValidationSplit", "test": "cr:TestSplit"}
JSONL = "application/jsonlines"
# The split of a record from its file path. mlcroissant also applies the regex to the
# joined splits/name value ("train"), hence the optional extension.
SPLIT_REGEX = "^(?:.*/)?(train|validation|test)(?:\\.jsonl)?$"
TEXT_FIELDS = (
    ("id", "Record id: task name and the first 16 hex digits of sha256(input, target)."),
    ("task", "Name of the task that generated the record."),
    ("input", "Input tokens, separated by single spaces."),
    ("target", "Target tokens, separated by single spaces."),
)


def _creator(author: Mapping[str, Any]) -> dict[str, Any]:
    if "name" in author:
        return {"@type": "sc:Organization", "name": str(author["name"])}
    person: dict[str, Any] = {"@type": "sc:Person"}
    given = author.get("given-names")
    family = " ".join(str(p) for p in (author.get("name-particle"), author.get("family-names")) if p)
    person["name"] = " ".join(p for p in (str(given or ""), family) if p)
    if given:
        person["givenName"] = str(given)
    if family:
        person["familyName"] = family
    if author.get("orcid"):
        person["sameAs"] = str(author["orcid"])
    if author.get("email"):
        person["email"] = str(author["email"])
    return person


def _file_set_id(config: Mapping[str, Any]) -> str:
    return f"{config['name']}-files"


def _distribution(manifest: Mapping[str, Any]) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = []
    for config in manifest["configs"]:
        for part in config_parts(config):
            info = config["files"][part]
            objects.append(
                {
                    "@type": "cr:FileObject",
                    "@id": info["path"],
                    "name": info["path"],
                    "description": f"{part} part of config {config['name']} ({info['rows']} records).",
                    "contentUrl": info["path"],
                    "contentSize": f"{info['bytes']} B",
                    "encodingFormat": JSONL,
                    "sha256": info["sha256"],
                }
            )
    for config in manifest["configs"]:
        objects.append(
            {
                "@type": "cr:FileSet",
                "@id": _file_set_id(config),
                "name": _file_set_id(config),
                "description": f"The JSONL files of config {config['name']}.",
                "encodingFormat": JSONL,
                "includes": f"data/{config['name']}/*.jsonl",
            }
        )
    return objects


def _splits_record_set() -> dict[str, Any]:
    return {
        "@type": "cr:RecordSet",
        "@id": "splits",
        "name": "splits",
        "description": "The parts of every config: train, validation (in-distribution) and test (out-of-distribution).",
        "dataType": "cr:Split",
        "key": {"@id": "splits/name"},
        "field": [
            {"@type": "cr:Field", "@id": "splits/name", "name": "splits/name", "dataType": "sc:Text"},
            {"@type": "cr:Field", "@id": "splits/url", "name": "splits/url", "dataType": "sc:URL"},
        ],
        "data": [{"splits/name": name, "splits/url": url} for name, url in SPLIT_URLS.items()],
    }


def _field(record_set: str, name: str, description: str, data_type: str, source: dict[str, Any]) -> dict[str, Any]:
    return {
        "@type": "cr:Field",
        "@id": f"{record_set}/{name}",
        "name": f"{record_set}/{name}",
        "description": description,
        "dataType": data_type,
        "source": source,
    }


def _config_record_set(config: Mapping[str, Any]) -> dict[str, Any]:
    name = str(config["name"])
    file_set = {"@id": _file_set_id(config)}
    fields = [
        _field(name, column, text, "sc:Text", {"fileSet": file_set, "extract": {"column": column}})
        for column, text in TEXT_FIELDS
    ]
    for feature in config["features"]:
        fields.append(
            _field(
                name,
                str(feature),
                f"Difficulty feature {feature} measured on the record (integer).",
                "sc:Integer",
                {"fileSet": file_set, "extract": {"column": "difficulty"}, "transform": {"jsonPath": str(feature)}},
            )
        )
    split = _field(
        name,
        "split",
        "Part of the record: train, validation or test, from its file name.",
        "sc:Text",
        {
            "fileSet": file_set,
            "extract": {"fileProperty": "fullpath"},
            "transform": {"regex": SPLIT_REGEX},
        },
    )
    split["references"] = {"field": {"@id": "splits/name"}}
    fields.append(split)
    return {
        "@type": "cr:RecordSet",
        "@id": name,
        "name": name,
        "description": (
            "; ".join(f"{t['task']} ({t['family']}): {t['task_description']}" for t in config_tasks(config))
            + f"; split strategy {config['split']['strategy']}."
        ),
        "field": fields,
    }


def _rai(manifest: Mapping[str, Any]) -> dict[str, Any]:
    tasks = sorted({t["task"] for c in manifest["configs"] for t in config_tasks(c)})
    strategies = sorted({str(c["split"]["strategy"]) for c in manifest["configs"]})
    return {
        "rai:dataCollection": (
            f"Generated by gengap {manifest['gengap_version']} (numpy {manifest['numpy_version']}) from suite seed "
            f"{manifest['seed']}: each config draws a pool of examples of its task from a seeded random generator "
            "(seed derived from the suite seed and the config name) and splits it with its split strategy. "
            "Generator parameters, seeds and split reports are in manifest.json."
        ),
        "rai:dataCollectionType": ["Synthetic"],
        "rai:dataCollectionRawData": "None: every record is generated; no existing data source is used.",
        "rai:dataCollectionTimeframe": [str(manifest["created"])],
        "rai:dataPreprocessingProtocol": [
            "None: records are written as generated. Splitting removes test records whose input occurs on the "
            "train side and carves the in-distribution validation part out of the train side."
        ],
        "rai:dataAnnotationProtocol": (
            "No human annotation: targets are computed by the generator and can be re-checked by gengap's "
            "independent checkers (gengap check, gengap verify)."
        ),
        "rai:dataLimitations": [
            "Synthetic token sequences, not natural language: results do not transfer to linguistic or "
            "real-world competence.",
            "Each config covers the parameter ranges and split named in its generation settings only; sizes were "
            f"chosen for controlled experiments. Split strategies used: {', '.join(strategies)}.",
        ],
        "rai:dataBiases": [
            "Inputs follow the sampling distributions of the generators (e.g. uniform symbols, sampled lengths), "
            "not any natural distribution; the test part is deliberately shifted from train (by length, level or "
            "composition) to measure out-of-distribution generalization."
        ],
        "rai:personalSensitiveInformation": ["None: the records contain no information about people."],
        "rai:dataUseCases": [
            "Training and evaluating sequence models on the train part, model selection on validation "
            "(in-distribution), and measuring out-of-distribution generalization on test.",
            f"Tasks: {', '.join(tasks)}.",
        ],
        "rai:dataSocialImpact": (
            "Low: abstract synthetic tasks with no people, opinions or real-world entities; intended for research "
            "on generalization of machine learning models."
        ),
        "rai:dataReleaseMaintenancePlan": [
            "Released versions are never changed in place; corrections are new versions with their own version "
            "number and fingerprint. A release can be rebuilt from manifest.json and checked with "
            "`gengap verify DIR --regenerate`."
        ],
    }


def render_croissant(manifest: dict, release_dir: Path) -> dict:
    """The Croissant JSON-LD of the release in release_dir (files are referenced by relative path)."""
    check_manifest(manifest)
    homepage = str(manifest.get("homepage") or "")
    configs = manifest["configs"]
    description = (
        f"{str(manifest['description']).strip()} {len(configs)} configs (a task with a split strategy), "
        f"{total_rows(manifest)} records; each has train, validation (in-distribution) and test "
        f"(out-of-distribution) parts. Fingerprint sha256:{manifest['fingerprint']}."
    )
    keywords = ["synthetic", "generalization", "out-of-distribution", "benchmark", "gengap"]
    keywords += sorted({t["family"] for c in configs for t in config_tasks(c)} | {t["task"] for c in configs for t in config_tasks(c)})
    document: dict[str, Any] = {
        "@context": dict(CONTEXT),
        "@type": "sc:Dataset",
        "name": str(manifest["name"]),
        "alternateName": str(manifest["pretty_name"]),
        "description": description,
        "conformsTo": list(CONFORMS_TO),
        "license": license_url(str(manifest["license"])),
    }
    if homepage:
        document["url"] = homepage
    document.update(
        {
            "version": str(manifest["version"]),
            "datePublished": str(manifest["created"]),
            "creator": [_creator(a) for a in manifest["authors"]],
            "keywords": keywords,
            "inLanguage": "en",
            "isLiveDataset": False,
            "citeAs": bibtex(manifest),
            "identifier": f"sha256:{manifest['fingerprint']}",
        }
    )
    document.update(_rai(manifest))
    document["distribution"] = _distribution(manifest)
    document["recordSet"] = [_splits_record_set()] + [_config_record_set(c) for c in configs]
    return document
