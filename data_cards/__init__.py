"""Dataset card, Croissant and CITATION rendering for releases.

The release builder (gengap.release) writes the data files and manifest.json, then calls
`write_cards(manifest, release_dir)`, which writes:

- plots/<config>-input_length.png, plots/<config>-<main_feature>.png (render_plots;
  needs matplotlib, the `release` extra, imported only there),
- README.md: the Hugging Face dataset card with a datasheet (render_card),
- croissant.json: Croissant 1.0 + RAI metadata (render_croissant),
- CITATION.cff: CFF 1.2.0 (render_citation).

Every renderer is a pure function of the manifest and the files of the release directory:
the same release gives the same bytes (the only date is manifest["created"]). Which files
those are is known before they are written (card_files), so the manifest lists them and
`gengap verify` can tell a release that lost them.
"""

from __future__ import annotations


from gengap.legacy_names import redirect as _redirect

_redirect(__name__)  # imported as the deprecated top-level name: that name becomes gengap.data_cards

import json
from pathlib import Path
from typing import Any

from gengap.data_cards.card import render_card
from gengap.data_cards.citation import render_citation
from gengap.data_cards.common import ManifestError, plot_paths
from gengap.data_cards.croissant import render_croissant
from gengap.data_cards.plots import render_plots

__all__ = ["CARD_FILES", "ManifestError", "card_files", "render_card", "render_citation", "render_croissant", "render_plots", "write_cards"]

CARD_FILES = ("README.md", "CITATION.cff", "croissant.json")


def card_files(configs: list[dict[str, Any]]) -> list[str]:
    """The relative paths write_cards writes for a manifest with these configs, sorted: the
    card files and every config's plots (gengap.data_cards.common.plot_paths)."""
    return sorted([*CARD_FILES, *(path for config in configs for _, path in plot_paths(config))])


def write_cards(manifest: dict, release_dir: Path) -> list[str]:
    """Write the plots, README.md, croissant.json and CITATION.cff; return their relative paths."""
    release_dir = Path(release_dir)
    written = render_plots(manifest, release_dir)
    texts = {
        "README.md": render_card(manifest, release_dir),
        "croissant.json": json.dumps(
            render_croissant(manifest, release_dir), indent=2, sort_keys=False, ensure_ascii=False
        )
        + "\n",
        "CITATION.cff": render_citation(manifest),
    }
    for name, text in texts.items():
        (release_dir / name).write_bytes(text.encode("utf-8"))
        written.append(name)
    return written
