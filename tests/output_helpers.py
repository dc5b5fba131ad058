"""Helpers of the output-discipline regression tests: gengap in a subprocess (optionally with
links planted at its staging names, a faked pid, a faked free space or a slowed-down build),
and a byte-exact picture of a directory tree to prove that nothing else changed."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

# gengap.cli.main(spec["argv"]) after the changes spec asks for:
# - plant: {role: path}: a symbolic link to path appears at the first staging name of each role
#   that gengap draws for each destination, in spec["dir"], the moment the name is drawn;
# - dead_pid: staging names carry this pid instead of gengap's (a pid that looks dead);
# - free_bytes: the file system reports this much free space;
# - slow: every release entry and generate block takes this many seconds longer.
RUNNER = """\
import json, os, sys, time
spec = json.loads(sys.argv[1])
import gengap.files
draw = gengap.files.staging_name
if spec.get("dead_pid"):
    def draw(target_name, role="staging", _draw=draw):
        return _draw(target_name, role).replace(f"-{os.getpid()}-", f"-{spec['dead_pid']}-")
if spec.get("plant"):
    planted = set()
    def draw(target_name, role="staging", _draw=draw):
        name = _draw(target_name, role)
        if (target_name, role) not in planted:
            planted.add((target_name, role))
            os.symlink(spec["plant"][role], os.path.join(spec["dir"], name))
        return name
gengap.files.staging_name = draw
if spec.get("free_bytes") is not None:
    import shutil
    usage = shutil.disk_usage
    shutil.disk_usage = lambda path: usage(path)._replace(free=spec["free_bytes"])
if spec.get("tmpdir"):
    import tempfile
    tempfile.tempdir = spec["tmpdir"]
if spec.get("slow"):
    import gengap.parallel, gengap.release
    entry, block = gengap.release.render_entry, gengap.parallel.render_block
    def slow_entry(*args, **kwargs):
        time.sleep(spec["slow"])
        return entry(*args, **kwargs)
    def slow_block(*args, **kwargs):
        time.sleep(spec["slow"])
        return block(*args, **kwargs)
    gengap.release.render_entry, gengap.parallel.render_block = slow_entry, slow_block
from gengap.cli import main
raise SystemExit(main(spec["argv"]))
"""


def _environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra or {})
    return env


def gengap(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """gengap ARGS in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "gengap.cli", *args], capture_output=True, text=True, timeout=timeout, cwd=cwd, env=_environment(env)
    )


def gengap_with(spec: dict[str, Any], *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """gengap ARGS in a subprocess, changed as RUNNER describes."""
    return subprocess.run(
        [sys.executable, "-c", RUNNER, json.dumps({**spec, "argv": list(args)})],
        capture_output=True, text=True, timeout=timeout, env=_environment(),
    )


def _default_sigint() -> None:
    """In the child: Ctrl-C handled as by a foreground command, even when the tests run with
    SIGINT ignored (a background job of a non-interactive shell inherits SIG_IGN, and Python
    then never raises KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_gengap_with(spec: dict[str, Any], *args: str) -> subprocess.Popen[str]:
    """gengap ARGS started in a subprocess, changed as RUNNER describes."""
    return subprocess.Popen(
        [sys.executable, "-c", RUNNER, json.dumps({**spec, "argv": list(args)})],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_environment(), preexec_fn=_default_sigint,
    )


def one_line_error(result: subprocess.CompletedProcess[str], fragment: str) -> None:
    """Exit 2 and exactly one line on stderr, `gengap: error: ...` holding fragment."""
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stderr.startswith("gengap: error: ") and result.stderr.count("\n") == 1, result.stderr
    assert fragment in result.stderr, result.stderr


def tree(root: Path) -> dict[str, tuple[Any, ...]]:
    """Every entry under root (not following links): files with their bytes, links with their
    targets, directories."""
    found: dict[str, tuple[Any, ...]] = {}
    for folder, folders, files in os.walk(root):
        for name in folders + files:
            path = Path(folder) / name
            info = os.lstat(path)
            relative = path.relative_to(root).as_posix()
            if stat.S_ISLNK(info.st_mode):
                found[relative] = ("link", os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                found[relative] = ("directory",)
            else:
                found[relative] = ("file", path.read_bytes())
    return found

