"""Progress on a terminal and off it: the release bar is redrawn while a config builds, with integer counts."""

from __future__ import annotations

import io
import re
import threading
import time
from pathlib import Path

import pytest

from gengap.cli import main
from gengap.progress import Ticker


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_the_ticker_redraws_on_a_terminal_and_prints_lines_elsewhere() -> None:
    calls: list[float] = []
    with Ticker(lambda: "waiting", stream=Terminal(), interval=0.02, redraw=lambda: calls.append(time.perf_counter())):
        time.sleep(0.3)
    assert len(calls) >= 3  # redrawn while the block runs
    count = len(calls)
    time.sleep(0.1)
    assert len(calls) == count  # and never after it
    lines = io.StringIO()
    with Ticker(lambda: "waiting", stream=lines, interval=0.02, redraw=lambda: calls.append(0.0)):
        time.sleep(0.15)
    assert len(calls) == count and lines.getvalue().startswith("gengap: waiting (")  # not a terminal: lines, no redraw
    with Ticker(lambda: "waiting", stream=Terminal(), interval=0.02) as quiet:  # a terminal and nothing to redraw: no thread
        assert quiet._thread is None


SUITE = """\
name: bar-suite
version: 0.0.1
seed: 3
license: mit
created: "2026-01-01"
entries:
  - {task: parity_check, split: length, train_range: [1, 6], test_range: [7, 9], sizes: {train: 20, validation: 4, test: 6}}
  - {task: reverse_string, split: length, train_range: [1, 6], test_range: [7, 9], sizes: {train: 20, validation: 4, test: 6}}
"""


def test_the_release_bar_names_the_config_being_built_and_moves_while_it_builds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a terminal the bar is redrawn during a long config (its elapsed time moves, it names the
    config being built, not the one before) and counts configs as integers (0/2, not 0.00/2.0)."""
    import gengap.release

    real = gengap.release.write_release
    started = threading.Event()

    def slow_first_config(*args, **kwargs):  # the first config takes a while: the bar must not stand still meanwhile
        started.set()
        time.sleep(1.3)
        return real(*args, **kwargs)

    monkeypatch.setattr(gengap.release, "write_release", slow_first_config)
    monkeypatch.setenv("GENGAP_PROGRESS_SECONDS", "0.05")
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    (tmp_path / "suite.yaml").write_text(SUITE)
    assert main(["release", str(tmp_path / "suite.yaml"), "--out", str(tmp_path / "out"), "--workers", "1"]) == 0
    assert started.is_set()
    frames = [frame for frame in re.split(r"[\r\n]", terminal.getvalue()) if "bar-suite" in frame]
    waiting = [frame for frame in frames if " 0/2 " in frame]
    assert all("building parity_check-length" in frame for frame in waiting[1:]), waiting  # all but tqdm's first draw, before any name
    elapsed = {re.search(r"\[(\d\d:\d\d)", frame).group(1) for frame in waiting}
    assert len(waiting) >= 5 and len(elapsed) >= 2, waiting  # redrawn as the time goes, not drawn once
    assert any(" 2/2 " in frame for frame in frames) and any("building reverse_string-length" in frame for frame in frames)
    assert not any(re.search(r"\d\.\d+/\d", frame) for frame in frames), frames  # integer counts
