"""The fingerprint a paper cites, as written in a release's card, CITATION.cff and croissant.json.

Every ``sha256:<64 hex>`` in those files must be the manifest's fingerprint, and the
structured places must hold it: CITATION.cff's ``identifiers`` and croissant.json's
``identifier``. A release built without cards (Python API, ``cards=False``) has none of
the three files; a file missing from SHA256SUMS is then not looked for.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

from gengap.data_cards import CARD_FILES
from gengap.generators.reading import MAX_JSON_BYTES, ReadError, json_value, read_text, yaml_document

_MENTION = re.compile(r"sha256:([0-9a-f]{64})")


def _cff_identifiers(text: str) -> list[str]:
    document, _ = yaml_document(text, "CITATION.cff")
    identifiers = document.get("identifiers", []) if isinstance(document, dict) else []
    return [str(i.get("value", "")) for i in identifiers if isinstance(i, dict)]


def _croissant_identifiers(text: str) -> list[str]:
    document = json_value(text, "croissant.json")
    return [str(document.get("identifier", ""))] if isinstance(document, dict) else []


STRUCTURED: dict[str, Callable[[str], list[str]]] = {
    "CITATION.cff": _cff_identifiers,
    "croissant.json": _croissant_identifiers,
}


def fingerprint_problems(root: Path, fingerprint: str, listed: set[str]) -> list[str]:
    """Why the card files of the release at root do not all carry fingerprint (empty: they do).

    Only files in `listed` (the names in SHA256SUMS) are read; a listed file that is
    missing is reported elsewhere.
    """
    problems: list[str] = []
    for name in CARD_FILES:
        path = root / name
        if name not in listed or not path.is_file():
            continue
        try:
            text = read_text(path, name, MAX_JSON_BYTES)
        except ReadError as err:
            problems.append(f"{name}: cannot read it ({err})")
            continue
        mentions = set(_MENTION.findall(text))
        if not mentions:
            problems.append(f"{name} does not state the release fingerprint")
        for other in sorted(mentions - {fingerprint}):
            problems.append(f"{name} states fingerprint sha256:{other}, but manifest.json has sha256:{fingerprint}")
        reader = STRUCTURED.get(name)
        if reader is not None:
            try:
                values: list[Any] = reader(text)
            except ReadError as err:
                problems.append(f"{name} cannot be parsed: {err}")
                continue
            if f"sha256:{fingerprint}" not in values:
                problems.append(f"{name} does not give sha256:{fingerprint} as its identifier")
    return problems
