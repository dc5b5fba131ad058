"""A watchdog that ends a local Ray runtime with the process that started it, even on SIGKILL.

Ray's own reaper kills the raylet and GCS at once when the driver dies, but the raylet's
agents (the dashboard agent and the runtime-env agent, children of the raylet in sessions of
their own) then wait 60 s on a call to the dead GCS before they exit, and workers a few
seconds. ``watch_local_runtime(raylet_pid)`` starts a small process, in a session of its own
(so that neither Ray's reaper nor a terminal's Ctrl-C ends it first), that reads a pipe from
the driver. While the driver lives it notes, twice a second, every descendant of the raylet
(by parent process and start time: the agents, whose environment need not name the raylet,
and the workers); when the pipe closes without a word (the driver died), it SIGKILLs for a
few seconds the raylet, every process it noted that is still the same process (its start
time unchanged, so a reused pid is spared), and every process of this user whose environment
names that raylet (``RAY_RAYLET_PID=<pid>``: workers started meanwhile), nothing else.
``stop()`` after ``ray.shutdown()`` tells it to leave without killing. Linux only (it reads
/proc); elsewhere nothing is started.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

GRACE_SECONDS = 3.0  # the watchdog keeps killing this long after the driver died (workers still starting)
LOOK_SECONDS = 0.5  # while the driver lives, the watchdog notes the raylet's descendants this often

WATCHDOG = r"""
import os, select, signal, sys, time
raylet, grace, every = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
signal.signal(signal.SIGINT, signal.SIG_IGN)
mark = b"RAY_RAYLET_PID=%d\0" % raylet
uid = os.getuid()
def stat_of(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        return int(fields[1]), int(fields[19])
    except (OSError, IndexError, ValueError):
        return None
def descendants():
    table = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            info = stat_of(int(name))
            if info is not None:
                table[int(name)] = info
    found, frontier = {}, {raylet}
    while frontier:
        frontier = {pid for pid, (parent, _) in table.items() if parent in frontier and pid not in found}
        found.update((pid, table[pid][1]) for pid in frontier)
    return found
known = {}
said = b""
while True:
    known.update(descendants())
    ready, _, _ = select.select([sys.stdin.buffer], [], [], every)
    if ready:
        chunk = os.read(sys.stdin.fileno(), 64)
        if not chunk:
            break
        said += chunk
if said.startswith(b"stop"):
    sys.exit(0)
def ours(pid):
    if pid == raylet:
        return True
    if pid in known and (stat_of(pid) or (0, None))[1] == known[pid]:
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
        [sys.executable, "-c", WATCHDOG, str(raylet_pid), str(GRACE_SECONDS), str(LOOK_SECONDS)],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True,
    )
    return Watchdog(process)
