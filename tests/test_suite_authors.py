"""The suite example of docs/releases.md shows description and authors, and its people are cited as people."""

from __future__ import annotations

import json
from pathlib import Path

from gengap.data_cards.citation import cff_author
from gengap.data_cards.common import bibtex
from gengap.data_cards.croissant import _creator
from gengap.suite import load_suite

ROOT = Path(__file__).resolve().parent.parent


def readme_suite() -> str:
    section = (ROOT / "docs" / "releases.md").read_text(encoding="utf-8").split("\n## Suites and what a release holds\n", 1)[1]
    return section.split("```yaml\n", 1)[1].split("```", 1)[0]


def test_the_readme_suite_example_has_a_description_and_authors_cited_right(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(readme_suite(), encoding="utf-8")
    suite = load_suite(tmp_path / "suite.yaml")
    assert suite["description"].startswith("Parity with a length split")
    ada, lab = suite["authors"]
    entry = bibtex({**suite, "fingerprint": "0" * 64})
    assert "author  = {Lovelace, Ada and {Example Lab}}" in entry
    assert cff_author(ada) == {"given-names": "Ada", "family-names": "Lovelace", "affiliation": "Example University",
                               "orcid": "https://orcid.org/0000-0002-1825-0097"}
    assert cff_author(lab) == {"name": "Example Lab"}
    assert _creator(ada)["@type"] == "sc:Person" and _creator(lab)["@type"] == "sc:Organization"


def test_the_suite_schema_documents_authors_and_description() -> None:
    properties = json.loads((ROOT / "gengap" / "schemas" / "suite.schema.json").read_text())["properties"]
    assert "abstract of CITATION.cff" in properties["description"]["description"]
    assert "{given-names, family-names}" in properties["authors"]["description"]
    fields = properties["authors"]["items"]["properties"]
    assert all(field.get("description") for field in fields.values())


def test_a_lone_surrogate_in_a_description_or_an_author_is_one_line(tmp_path: Path) -> None:
    """Issue 38, item 15: "\\ud800" in a suite's description or author name was a UnicodeEncodeError
    traceback when the cards were written; the YAML reader now refuses it, naming the line."""
    from tests.output_helpers import gengap, one_line_error
    from tests.test_output_discipline import TINY

    for field, line in (("description", 'description: "Parity \\ud800 with a length split"'),
                        ("author", 'authors: [{name: "Example \\ud800 Lab"}]')):
        (tmp_path / "suite.yaml").write_text(TINY.replace("license: mit\n", f"license: mit\n{line}\n"), encoding="utf-8")
        result = gengap("release", str(tmp_path / "suite.yaml"), "--out", str(tmp_path / "release"))
        one_line_error(result, "suite.yaml line 5: a string holds a lone UTF-16 surrogate")
        assert not (tmp_path / "release").exists(), field
