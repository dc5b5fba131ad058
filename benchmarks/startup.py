"""Start-up cost of the command line: CPU time of short gengap commands beside ``import numpy``.

    python benchmarks/startup.py              # best of 7 runs of each command
    python benchmarks/startup.py --runs 11

Each command runs as a child process; its CPU time (user + system, from the children's
resource usage) is taken, not the wall time, so other load on the machine counts less. The
commands run in rounds, one run of each per round, so that background load affects all
alike; each figure is the best over the rounds, and the ratio is to ``python -c "import
numpy"`` of the same rounds (the issue's target: at most 2x). ``gengap`` is the console
script beside this interpreter, else ``python -m gengap``. The children may write bytecode
(PYTHONDONTWRITEBYTECODE is dropped from their environment) and a first, untimed round
writes it, as an installed package has it. Not run in CI.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
from arguments import positive_int

BASELINE = "python -c 'import numpy'"
GENGAP_COMMANDS = (("generate", "parity_check", "--n", "1"), ("--help",), ("list",))


def gengap_command() -> list[str]:
    """The gengap console script beside sys.executable, else ``python -m gengap``."""
    script = os.path.join(os.path.dirname(sys.executable), "gengap")
    if os.path.exists(script):
        return [script]
    found = shutil.which("gengap")
    return [found] if found else [sys.executable, "-m", "gengap"]


def cpu_seconds(command: list[str]) -> float:
    """User + system CPU time of running command to completion (its output discarded)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=positive_int, default=7, help="rounds (default 7)")
    args = parser.parse_args()
    gengap = gengap_command()
    commands = {BASELINE: [sys.executable, "-c", "import numpy"]}
    commands.update({"gengap " + " ".join(argv): gengap + list(argv) for argv in GENGAP_COMMANDS})
    for command in commands.values():  # untimed: bytecode written
        cpu_seconds(command)
    best = dict.fromkeys(commands, float("inf"))
    for _ in range(args.runs):
        for name, command in commands.items():
            best[name] = min(best[name], cpu_seconds(command))
    width = max(map(len, commands))
    for name in commands:
        print(f"{name:{width}s}  {best[name]:6.3f} s CPU  {best[name] / best[BASELINE]:5.2f}x")


if __name__ == "__main__":
    main()
