"""The watchdog of a local Ray runtime (baselines/ray_watchdog.py) without Ray: a stand-in raylet
with a child in a session of its own whose environment does not name the raylet, as Ray's
dashboard and runtime-env agents (issue 38, item 12: they outlived a killed sweep by ~60 s)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gengap.baselines.ray_watchdog import watch_local_runtime

# the stand-in raylet: starts an "agent" in a session of its own, with RAY_RAYLET_PID removed
# from its environment, prints the agent's pid and sleeps
RAYLET = textwrap.dedent(
    """
    import os, subprocess, sys, time
    env = {k: v for k, v in os.environ.items() if k != "RAY_RAYLET_PID"}
    agent = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], env=env, start_new_session=True)
    print(agent.pid, flush=True)
    time.sleep(600)
    """
)


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("ending", ["the driver dies", "the runtime is stopped"])
def test_the_watchdog_ends_the_raylets_agents_with_the_driver_and_nothing_when_stopped(ending: str) -> None:
    raylet = subprocess.Popen([sys.executable, "-c", RAYLET], stdout=subprocess.PIPE, text=True)
    agent = int(raylet.stdout.readline())
    watchdog = watch_local_runtime(raylet.pid)
    try:
        assert watchdog.process is not None
        time.sleep(1.5)  # the watchdog notes the raylet's descendants while the driver lives
        if ending == "the runtime is stopped":
            watchdog.stop()
            time.sleep(1.0)
            assert alive(agent) and alive(raylet.pid)
            return
        watchdog.process.stdin.close()  # what the driver's death does to the pipe
        deadline = time.monotonic() + 5
        while (alive(agent) or raylet.poll() is None) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(agent), "the raylet's agent outlived the driver"
        assert raylet.poll() is not None
    finally:
        for pid in (agent, raylet.pid):
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        raylet.wait()
        if watchdog.process is not None:
            watchdog.process.kill()
            watchdog.process.wait()
