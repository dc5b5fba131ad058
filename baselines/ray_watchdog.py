"""A watchdog that ends a local Ray runtime with the process that started it, even on SIGKILL.

Ray's own reaper kills the raylet and GCS at once when the driver dies, but the raylet's
agents (the dashboard agent and the runtime-env agent, children of the raylet in sessions of
their own) then wait 60 s on a call to the dead GCS before they exit, and workers a few
seconds. ``watch_local_runtime(raylet_pid)`` starts a small process, in a session of its own
(so that neither Ray's reaper nor a terminal's Ctrl-C ends it first), that reads a pipe from
the driver: when the pipe closes without a word (the driver died), it SIGKILLs for a few
seconds every process of this user whose environment names that raylet
(``RAY_RAYLET_PID=<pid>``: the agents and workers of this runtime, nothing else) and the
raylet itself. ``stop()`` after ``ray.shutdown()`` tells it to leave without killing. Linux
only (it reads /proc); elsewhere nothing is started.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

GRACE_SECONDS = 3.0  # the watchdog keeps killing this long after the driver died (workers still starting)

WATCHDOG = r"""
import os, signal, sys, time
raylet, grace = int(sys.argv[1]), float(sys.argv[2])
signal.signal(signal.SIGINT, signal.SIG_IGN)
word = sys.stdin.buffer.read()
if word.startswith(b"stop"):
    sys.exit(0)
mark = b"RAY_RAYLET_PID=%d\0" % raylet
uid = os.getuid()
def ours(pid):
    if pid == raylet:
        return True
    try:
        if os.stat(f"/proc/{pid}").st_uid != uid:
            return False
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return mark in handle.read() + b"\0"
    except OSError:
        return False
end = time.monotonic() + grace
while time.monotonic() < end:
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid() and ours(int(name)):
            try:
                os.kill(int(name), signal.SIGKILL)
            except OSError:
                pass
    time.sleep(0.2)
"""


@dataclass
class Watchdog:
    """The watchdog process of a local runtime (None on systems without /proc)."""

    process: subprocess.Popen[bytes] | None

    def stop(self) -> None:
        """The runtime was shut down: let the watchdog go without killing anything."""
        if self.process is None or self.process.stdin is None:
            return
        try:
            self.process.stdin.write(b"stop")
            self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def watch_local_runtime(raylet_pid: int) -> Watchdog:
    """Start the watchdog of the local runtime whose raylet is raylet_pid (see the module doc)."""
    if not sys.platform.startswith("linux") or not Path("/proc/self/environ").exists():
        return Watchdog(None)
    process = subprocess.Popen(
        [sys.executable, "-c", WATCHDOG, str(raylet_pid), str(GRACE_SECONDS)],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True,
    )
    return Watchdog(process)
