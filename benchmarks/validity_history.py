"""Each claim's verdict in every committed edition of the validity page (the page's edition history).

    python benchmarks/validity_history.py          # -> benchmarks/validity_axes/history.json

Reads every version of docs/validity.json in git history that names its edition (4 on; editions
1-3 used other claim keys and formats), keeps the last version of each edition, and records per
claim key its verdict and whether its set-up (arms' seeds, settings, configs, or its rule) differs
from the previous edition that judged it. The file is committed with the specs, before the runs of
the edition that renders it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "validity_axes" / "history.json"


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True).stdout


def editions() -> dict[int, dict[str, Any]]:
    """edition -> the last committed document of that edition (oldest commit first, later ones win)."""
    out: dict[int, dict[str, Any]] = {}
    for commit in reversed(git("log", "--format=%H", "--", "docs/validity.json").split()):
        try:
            document = json.loads(git("show", f"{commit}:docs/validity.json"))
        except (subprocess.CalledProcessError, ValueError):
            continue
        edition = document.get("edition") if isinstance(document, dict) else None
        if isinstance(edition, int) and isinstance(document.get("claims"), list):
            out[edition] = document
    return out


def setup_of(claim: dict[str, Any]) -> str:
    arms = [[a.get("config"), a.get("seeds"), a.get("settings")] for a in claim.get("arms", [])]
    return json.dumps([claim.get("rule"), arms], sort_keys=True)


def history() -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    last: dict[str, str] = {}
    for edition, document in sorted(editions().items()):
        for claim in document["claims"]:
            key, setup = claim["key"], setup_of(claim)
            out.setdefault(key, []).append({"edition": edition, "verdict": claim["verdict"], "setup_changed": key in last and last[key] != setup})
            last[key] = setup
    return out


def main() -> None:
    OUT.write_text(json.dumps(history(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
