"""Tests of data_cards: dataset card, Croissant, CITATION.cff and plots of a release.

The release is the small fake one of tests/data_cards_fixture.py. External validators
run for real (never skipped): `datasets.load_dataset` on the card, `mlcroissant validate`
(the executable next to sys.executable) and `cffconvert --validate` from its own virtual
environment (GENGAP_CFFCONVERT, else one created once under the temp directory).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from gengap import data_cards
from gengap.data_cards import ManifestError, render_card, render_citation, render_croissant, render_plots, write_cards
from gengap.data_cards.common import bibtex, bibtex_escape, size_category
from tests.data_cards_fixture import build_release

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
CFF_ENV = "GENGAP_CFFCONVERT"
CFF_DEFAULT = Path(tempfile.gettempdir()) / "gengap-cffconvert-venv"


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    """The fixture release with its cards written (shared: tests must not modify it)."""
    manifest, release_dir = build_release(tmp_path_factory.mktemp("release"))
    write_cards(manifest, release_dir)
    return manifest, release_dir


@pytest.fixture()
def fresh(tmp_path: Path) -> tuple[dict[str, Any], Path]:
    """A release of the test's own, without cards."""
    return build_release(tmp_path)


def front_matter(card: str) -> dict[str, Any]:
    assert card.startswith("---\n")
    end = card.index("\n---\n", 4)
    return yaml.safe_load(card[4:end])


def line_count(path: Path) -> int:
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def file_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# --- dataset card -------------------------------------------------------------------------


def test_front_matter_structure(release: tuple[dict[str, Any], Path]) -> None:
    manifest, release_dir = release
    meta = front_matter((release_dir / "README.md").read_text(encoding="utf-8"))
    assert meta["pretty_name"] == manifest["pretty_name"]
    assert meta["license"] == "cc-by-4.0"
    assert meta["language"] == ["en"]
    assert meta["size_categories"] == ["n<1K"]
    assert meta["task_categories"] == ["text-generation"]
    assert {"synthetic", "generalization", "regular", "compositional", "length-split", "mcd-split"} <= set(meta["tags"])
    assert [c["config_name"] for c in meta["configs"]] == [c["name"] for c in manifest["configs"]]
    assert [c["config_name"] for c in meta["dataset_info"]] == [c["name"] for c in manifest["configs"]]
    for config, declared, info in zip(manifest["configs"], meta["configs"], meta["dataset_info"]):
        parts = [p for p in ("train", "validation", "test") if config["files"][p]["rows"] > 0]
        assert [f["split"] for f in declared["data_files"]] == parts
        for entry in declared["data_files"]:
            assert entry["path"] == f"data/{config['name']}/{entry['split']}.jsonl"
            assert (release_dir / entry["path"]).is_file()
        splits = {s["name"]: s for s in info["splits"]}
        assert list(splits) == parts
        for part in parts:
            path = release_dir / config["files"][part]["path"]
            assert splits[part]["num_examples"] == line_count(path) == config["files"][part]["rows"]
            assert splits[part]["num_bytes"] == path.stat().st_size
        features = {f["name"]: f for f in info["features"]}
        assert [features[n]["dtype"] for n in ("id", "task", "input", "target")] == ["string"] * 4
        assert [(f["name"], f["dtype"]) for f in features["difficulty"]["struct"]] == [
            (n, "int64") for n in config["features"]
        ]
        has_structure = config["name"] == "toy_scan-mcd"
        assert ("meta" in features) == has_structure and ("structure" in features) == has_structure
        if has_structure:
            assert features["meta"]["dtype"] == features["structure"]["dtype"] == "json"


def test_empty_part_is_not_declared(release: tuple[dict[str, Any], Path]) -> None:
    manifest, release_dir = release
    config = next(c for c in manifest["configs"] if c["name"] == "toy_scan-mcd")
    assert config["files"]["validation"]["rows"] == 0
    meta = front_matter((release_dir / "README.md").read_text(encoding="utf-8"))
    declared = next(c for c in meta["configs"] if c["config_name"] == "toy_scan-mcd")
    assert [f["split"] for f in declared["data_files"]] == ["train", "test"]


@pytest.mark.parametrize(
    "n, label",
    [
        (0, "n<1K"),
        (999, "n<1K"),
        (1000, "1K<n<10K"),
        (9999, "1K<n<10K"),
        (10_000, "10K<n<100K"),
        (999_999, "100K<n<1M"),
        (1_000_000, "1M<n<10M"),
        (10**7, "10M<n<100M"),
        (10**12, "n>1T"),
    ],
)
def test_size_category(n: int, label: str) -> None:
    assert size_category(n) == label


def test_card_body(release: tuple[dict[str, Any], Path]) -> None:
    manifest, release_dir = release
    card = (release_dir / "README.md").read_text(encoding="utf-8")
    for heading in (
        "## Motivation",
        "## Composition",
        "## Collection process",
        "## Preprocessing",
        "## Uses",
        "## Distribution",
        "## Maintenance",
        "## Split reports",
        "## Examples",
        "## Citation",
    ):
        assert f"\n{heading}" in card
    assert f"sha256:{manifest['fingerprint']}" in card
    assert "gengap verify DIR" in card and "gengap verify DIR --regenerate" in card
    assert "numpy 2.4.6" in card and "gengap 0.1.0" in card
    for config in manifest["configs"]:
        assert f"### {config['name']}" in card
        assert f"| `{config['name']}` | {config['seed']} |" in card  # the collection table
        for part in ("train", "test"):
            first = file_records(release_dir / config["files"][part]["path"])[0]
            assert first["id"] in card
    # plots are referenced, and exactly those that exist
    assert "![parity_check-length: input_length, train vs test](plots/parity_check-length-input_length.png)" in card
    assert "(plots/parity_check-length-ones.png)" in card
    assert "(plots/toy_scan-mcd-input_length.png)" in card
    assert card.count(".png)") == 3
    # a "|" in a task description does not break its table row
    assert "SCAN-like commands \\| actions (toy)" in card
    assert "@misc{gengap_test_1_0_0," in card
    assert "https://github.com/gengap/gengap" in card


def test_card_without_plots_references_none(fresh: tuple[dict[str, Any], Path]) -> None:
    manifest, release_dir = fresh
    assert ".png" not in render_card(manifest, release_dir)


def test_long_fields_are_cut(fresh: tuple[dict[str, Any], Path]) -> None:
    manifest, release_dir = fresh
    config = manifest["configs"][0]
    path = release_dir / config["files"]["train"]["path"]
    records = file_records(path)
    long_input = " ".join(["1"] * 400)  # 799 characters
    records[0]["input"] = long_input
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    card = render_card(manifest, release_dir)
    assert f'"{long_input[:200]}… (+599 characters)"' in card
    assert long_input not in card


def test_datasets_loads_every_config(
    release: tuple[dict[str, Any], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest, release_dir = release
    datasets = _offline_datasets(monkeypatch)
    for config in manifest["configs"]:
        loaded = datasets.load_dataset(str(release_dir), config["name"], cache_dir=str(tmp_path / "cache"))
        expected = {p: info["rows"] for p, info in config["files"].items() if info["rows"] > 0}
        assert {name: len(part) for name, part in loaded.items()} == expected
        first = file_records(release_dir / config["files"]["test"]["path"])[0]
        row = loaded["test"][0]
        assert row["id"] == first["id"] and row["input"] == first["input"] and row["target"] == first["target"]
        assert row["difficulty"] == first["difficulty"]
        if "structure" in first:
            assert row["structure"] == first["structure"] and row["meta"] == first["meta"]


def test_datasets_loads_the_first_config_without_a_config_name(
    release: tuple[dict[str, Any], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The card marks the first config default: a release of several configs loads without a name."""
    manifest, release_dir = release
    assert len(manifest["configs"]) > 1
    meta = front_matter((release_dir / "README.md").read_text(encoding="utf-8"))
    assert [c.get("default", False) for c in meta["configs"]] == [True] + [False] * (len(meta["configs"]) - 1)
    datasets = _offline_datasets(monkeypatch)
    loaded = datasets.load_dataset(str(release_dir), cache_dir=str(tmp_path / "cache"))
    first = manifest["configs"][0]
    assert {name: len(part) for name, part in loaded.items()} == {p: info["rows"] for p, info in first["files"].items() if info["rows"] > 0}
    assert loaded["train"][0]["id"] == file_records(release_dir / first["files"]["train"]["path"])[0]["id"]


def test_datasets_checks_declared_counts(
    release: tuple[dict[str, Any], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The declared num_examples are verified by datasets: a wrong count fails to load."""
    manifest, release_dir = release
    datasets = _offline_datasets(monkeypatch)
    copy_dir = tmp_path / "copy"
    for config in manifest["configs"][:1]:
        for info in config["files"].values():
            (copy_dir / info["path"]).parent.mkdir(parents=True, exist_ok=True)
            (copy_dir / info["path"]).write_bytes((release_dir / info["path"]).read_bytes())
    card = (release_dir / "README.md").read_text(encoding="utf-8")
    wrong = card.replace("num_examples: 40\n", "num_examples: 41\n", 1)
    assert wrong != card
    (copy_dir / "README.md").write_text(wrong, encoding="utf-8")
    with pytest.raises(Exception, match="(?i)split"):
        datasets.load_dataset(str(copy_dir), manifest["configs"][0]["name"], cache_dir=str(tmp_path / "cache"))


def _offline_datasets(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import datasets
    import datasets.config

    for name in ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE"):
        if hasattr(datasets.config, name):
            monkeypatch.setattr(datasets.config, name, True)
    datasets.disable_progress_bars()
    return datasets


# --- Croissant ----------------------------------------------------------------------------


def test_croissant_structure(release: tuple[dict[str, Any], Path]) -> None:
    manifest, release_dir = release
    doc = json.loads((release_dir / "croissant.json").read_text(encoding="utf-8"))
    context = doc["@context"]
    assert context["@language"] == "en" and context["@vocab"] == "https://schema.org/"
    assert (
        context["cr"] == "http://mlcommons.org/croissant/" and context["rai"] == "http://mlcommons.org/croissant/RAI/"
    )
    assert doc["@type"] == "sc:Dataset"
    assert "http://mlcommons.org/croissant/1.0" in doc["conformsTo"]
    assert doc["license"] == "https://creativecommons.org/licenses/by/4.0/"
    assert doc["datePublished"] == manifest["created"] and doc["version"] == manifest["version"]
    assert doc["citeAs"] == bibtex(manifest)
    assert doc["url"] == manifest["homepage"]
    for key in (
        "rai:dataCollection",
        "rai:dataCollectionType",
        "rai:dataLimitations",
        "rai:dataBiases",
        "rai:personalSensitiveInformation",
        "rai:dataUseCases",
    ):
        assert doc[key]
    assert doc["rai:dataCollectionType"] == ["Synthetic"]
    objects = {o["@id"]: o for o in doc["distribution"] if o["@type"] == "cr:FileObject"}
    assert set(objects) == set(manifest["data_files"])
    for path, info in manifest["data_files"].items():
        data = (release_dir / path).read_bytes()
        assert objects[path]["sha256"] == info["sha256"] == hashlib.sha256(data).hexdigest()
        assert objects[path]["contentUrl"] == path and objects[path]["encodingFormat"] == "application/jsonlines"
    record_sets = {r["@id"]: r for r in doc["recordSet"]}
    assert record_sets["splits"]["dataType"] == "cr:Split"
    for config in manifest["configs"]:
        fields = {f["@id"]: f for f in record_sets[config["name"]]["field"]}
        for column in ("id", "task", "input", "target"):
            assert fields[f"{config['name']}/{column}"]["source"]["extract"] == {"column": column}
        assert fields[f"{config['name']}/split"]["references"] == {"field": {"@id": "splits/name"}}


def test_mlcroissant_validates(release: tuple[dict[str, Any], Path]) -> None:
    _, release_dir = release
    result = _mlcroissant_validate(release_dir / "croissant.json")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mlcroissant_validates_without_homepage(fresh: tuple[dict[str, Any], Path]) -> None:
    manifest, release_dir = fresh
    manifest = dict(manifest, homepage="", license="other")
    doc = render_croissant(manifest, release_dir)
    assert "url" not in doc and doc["license"] == "other"
    path = release_dir / "croissant.json"
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    result = _mlcroissant_validate(path)
    assert result.returncode == 0, result.stdout + result.stderr


def _mlcroissant_validate(path: Path) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "mlcroissant"
    assert exe.is_file(), f"mlcroissant is not installed next to {sys.executable} (pip install mlcroissant)"
    return subprocess.run([str(exe), "validate", "--jsonld", str(path)], capture_output=True, text=True, timeout=120)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # rdflib's ConjunctiveGraph, used by mlcroissant
def test_mlcroissant_reads_records(release: tuple[dict[str, Any], Path]) -> None:
    import mlcroissant

    manifest, release_dir = release
    dataset = mlcroissant.Dataset(jsonld=str(release_dir / "croissant.json"))
    for config in manifest["configs"]:
        name = config["name"]
        records = list(dataset.records(record_set=name))
        splits = Counter(_text(r[f"{name}/split"]) for r in records)
        assert splits == {p: info["rows"] for p, info in config["files"].items() if info["rows"] > 0}
        by_id = {_text(r[f"{name}/id"]): r for r in records}
        for part in ("train", "test"):
            for expected in file_records(release_dir / config["files"][part]["path"])[:3]:
                got = by_id[expected["id"]]
                assert _text(got[f"{name}/input"]) == expected["input"]
                assert _text(got[f"{name}/target"]) == expected["target"]
                for feature, value in expected["difficulty"].items():
                    assert int(got[f"{name}/{feature}"]) == value


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


# --- CITATION.cff -------------------------------------------------------------------------


def test_citation_content(release: tuple[dict[str, Any], Path]) -> None:
    manifest, release_dir = release
    cff = yaml.safe_load((release_dir / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "dataset"
    assert cff["title"] == manifest["pretty_name"] and cff["version"] == manifest["version"]
    assert cff["date-released"] == manifest["created"]  # a string, quoted in the file
    assert cff["license"] == "CC-BY-4.0"
    assert cff["authors"] == [{"name": "gengap contributors"}, {"given-names": "Ada", "family-names": "Lovelace"}]
    assert cff["identifiers"] == [
        {"type": "other", "value": f"sha256:{manifest['fingerprint']}", "description": "gengap release fingerprint"}
    ]
    assert manifest["fingerprint"] in cff["abstract"]
    assert cff["url"] == cff["repository-code"] == manifest["homepage"]


def test_citation_without_homepage_or_known_license(fresh: tuple[dict[str, Any], Path]) -> None:
    manifest, _ = fresh
    manifest = dict(manifest, homepage="", license="other", authors=[{"family-names": "Doe", "extra": "dropped"}])
    cff = yaml.safe_load(render_citation(manifest))
    assert "url" not in cff and "repository-code" not in cff and "license" not in cff
    assert cff["authors"] == [{"family-names": "Doe"}]


def test_cffconvert_validates(release: tuple[dict[str, Any], Path], tmp_path: Path) -> None:
    manifest, release_dir = release
    exe = _cffconvert()
    result = subprocess.run(
        [str(exe), "--validate", "-i", str(release_dir / "CITATION.cff")], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    # the validator does reject a bad file (hub license ids are not SPDX ids)
    bad = tmp_path / "CITATION.cff"
    bad.write_text((release_dir / "CITATION.cff").read_text().replace("license: CC-BY-4.0", "license: cc-by-4.0"))
    result = subprocess.run([str(exe), "--validate", "-i", str(bad)], capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    # a person-only, homepage-less citation is valid too
    variant = dict(
        manifest,
        homepage="",
        authors=[{"given-names": "Ada", "family-names": "Lovelace", "orcid": "https://orcid.org/0000-0002-1825-0097"}],
    )
    other = tmp_path / "variant.cff"
    other.write_text(render_citation(variant), encoding="utf-8")
    result = subprocess.run([str(exe), "--validate", "-i", str(other)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def _cffconvert() -> Path:
    """cffconvert from its own virtual environment (it pins an old jsonschema); created once."""
    venv = Path(os.environ.get(CFF_ENV) or CFF_DEFAULT)
    exe = venv / ("Scripts" if os.name == "nt" else "bin") / "cffconvert"
    if not exe.is_file():
        python = venv / ("Scripts" if os.name == "nt" else "bin") / "python"
        if not python.is_file():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "cffconvert"],
            check=True,
            timeout=600,
        )
    assert exe.is_file(), f"cffconvert missing from {venv}"
    return exe


# --- plots, determinism, write_cards ------------------------------------------------------


def test_plots_are_png(release: tuple[dict[str, Any], Path]) -> None:
    _, release_dir = release
    plots = sorted(p.relative_to(release_dir).as_posix() for p in (release_dir / "plots").iterdir())
    assert plots == [
        "plots/parity_check-length-input_length.png",
        "plots/parity_check-length-ones.png",
        "plots/toy_scan-mcd-input_length.png",
    ]
    for rel in plots:
        data = (release_dir / rel).read_bytes()
        assert data[:8] == PNG_MAGIC
        width, height = struct.unpack(">II", data[16:24])
        assert (width, height) == (640, 360)


def test_write_cards_paths_and_determinism(tmp_path: Path) -> None:
    outputs = []
    for name in ("a", "b"):
        manifest, release_dir = build_release(tmp_path / name)
        written = write_cards(manifest, release_dir)
        assert written == [
            "plots/parity_check-length-input_length.png",
            "plots/parity_check-length-ones.png",
            "plots/toy_scan-mcd-input_length.png",
            "README.md",
            "croissant.json",
            "CITATION.cff",
        ]
        outputs.append({rel: (release_dir / rel).read_bytes() for rel in written})
        again = write_cards(manifest, release_dir)
        assert {rel: (release_dir / rel).read_bytes() for rel in again} == outputs[-1]
    assert outputs[0] == outputs[1]
    text = outputs[0]["croissant.json"].decode()
    assert text.endswith("}\n") and json.loads(text)["name"] == "gengap-test"


def test_renderers_do_not_modify_the_manifest(fresh: tuple[dict[str, Any], Path]) -> None:
    manifest, release_dir = fresh
    before = copy.deepcopy(manifest)
    write_cards(manifest, release_dir)
    assert manifest == before


def test_matplotlib_is_imported_lazily() -> None:
    code = "import sys, gengap.data_cards; assert 'matplotlib' not in sys.modules, 'matplotlib imported'"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_render_plots_returns_paths_and_handles_empty_test(fresh: tuple[dict[str, Any], Path]) -> None:
    manifest, release_dir = fresh
    config = manifest["configs"][1]
    (release_dir / config["files"]["test"]["path"]).write_bytes(b"")
    paths = render_plots(manifest, release_dir)
    assert paths[-1] == "plots/toy_scan-mcd-input_length.png"
    assert (release_dir / paths[-1]).read_bytes()[:8] == PNG_MAGIC


# --- manifest checks and citation text ----------------------------------------------------


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda m: m.pop("fingerprint"), "lacks fingerprint"),
        (lambda m: m.update(name="Bad Name"), "safe identifier"),
        (lambda m: m.update(created="30/11/2026"), "YYYY-MM-DD"),
        (lambda m: m.update(configs=[]), "no configs"),
        (lambda m: m["configs"][0].pop("report"), "lacks report"),
        (lambda m: m["configs"].append(copy.deepcopy(m["configs"][0])), "occurs twice"),
        (lambda m: m["configs"][0]["files"]["train"].pop("sha256"), "lacks sha256"),
    ],
)
def test_manifest_errors(fresh: tuple[dict[str, Any], Path], change: Any, message: str) -> None:
    manifest, release_dir = fresh
    manifest = copy.deepcopy(manifest)
    change(manifest)
    for render in (
        lambda: render_card(manifest, release_dir),
        lambda: render_croissant(manifest, release_dir),
        lambda: render_citation(manifest),
    ):
        with pytest.raises(ManifestError, match=message):
            render()


def test_bibtex_entry(fresh: tuple[dict[str, Any], Path]) -> None:
    manifest, _ = fresh
    manifest = dict(
        manifest,
        pretty_name="R&D suite_1 {x}",
        authors=[{"name": "Lab & Co"}, {"given-names": "Jean", "name-particle": "de", "family-names": "La Fontaine"}],
        homepage="",
    )
    entry = bibtex(manifest)
    assert entry.startswith("@misc{gengap_test_1_0_0,\n") and entry.endswith("}\n")
    assert "{R\\&D suite\\_1 \\{x\\}}" in entry
    assert "{{Lab \\& Co} and de La Fontaine, Jean}" in entry
    assert re.search(r"\n  year += \{2026\},\n", entry)
    assert f"sha256:{manifest['fingerprint']}" in entry
    assert "url" not in entry
    unescaped = entry.replace("\\{", "").replace("\\}", "")
    depth = 0
    for ch in unescaped:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0
    assert depth == 0


def test_bibtex_escape() -> None:
    assert (
        bibtex_escape("50% of $x_1$ & #2 ~ ^ \\")
        == "50\\% of \\$x\\_1\\$ \\& \\#2 \\textasciitilde{} \\textasciicircum{} \\textbackslash{}"
    )


def test_public_api() -> None:
    assert set(data_cards.__all__) >= {
        "render_card",
        "render_croissant",
        "render_citation",
        "render_plots",
        "write_cards",
    }
