"""The README's Python API section runs as written: its code blocks, in order, in one empty directory.

The one thing the blocks take as given is a Hugging Face causal LM saved as ``SmolLM2-135M``
in that directory (the harness block evaluates it): the test saves a tiny random one there
(tests/harness_models.py), as a reader would download one.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
MODEL = "SmolLM2-135M"


def api_blocks(text: str) -> list[str]:
    """The ```python blocks of the README's "## Python API" section, in order."""
    section = text.split("\n## Python API\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```python\n(.*?)^```$", section, flags=re.S | re.M)


def test_the_section_has_its_blocks() -> None:
    blocks = api_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) == 5 and "get_task" in blocks[0] and "train_and_evaluate" in blocks[-1]


@pytest.mark.slow
def test_the_python_api_blocks_run_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.harness_models import tiny_model

    blocks = api_blocks(README.read_text(encoding="utf-8"))
    monkeypatch.chdir(tmp_path)
    tiny_model(tmp_path / MODEL, ["I_JUMP I_WALK I_RUN I_LOOK I_TURN_LEFT jump walk run look left twice thrice and after"])
    for index, block in enumerate(blocks, start=1):
        assert MODEL not in block or index == 4, "only the harness block reads the model"
        try:
            exec(compile(block, f"README.md Python API block {index}", "exec"), {"__name__": f"readme_block_{index}"})
        except Exception as err:  # name the block in the failure
            raise AssertionError(f"Python API block {index} fails: {type(err).__name__}: {err}") from err
    assert sorted(os.listdir(tmp_path / "out" / "data")) == ["addition-length", "scan-length"]
    assert (tmp_path / "runs" / "rev-stack" / "results.json").is_file()
