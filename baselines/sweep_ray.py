"""The Ray engine of baseline sweeps: every run is one Ray task (the only module of baselines that imports Ray).

``run_on_ray(runs, resources, retries)`` submits :func:`gengap.baselines.sweep.execute` once per run
with the run's resources (``num_gpus`` may be a fraction, so that several small runs share
one GPU) and yields outcomes as runs finish. A run whose task raises, or whose worker process
dies (killed, out of memory, a lost node), is retried ``retries`` times by Ray; since a run
resumes from its checkpoints, a retry continues where the lost attempt last checkpointed. A
run that still fails is a failed outcome carrying the error; the other runs go on.

``ray_runtime(address, num_cpus)`` connects to a running cluster (address, e.g.
``ray://head:10001`` or ``auto``; an address of a host and port that accepts no connection
within CONNECT_SECONDS is one line, not minutes of Ray retrying) or starts a local runtime on this machine, and shuts down
what it started; a local runtime ends with the driver even when the driver is killed
(gengap.baselines.ray_watchdog).
"""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from gengap.baselines.errors import BaselineError
from gengap.baselines.ray_watchdog import watch_local_runtime
from gengap.generators.extras import install_hint
from gengap.baselines.sweep import Outcome, RunSpec, execute

CONNECT_SECONDS = 10.0  # how long a cluster address may take to accept a connection before the sweep gives up


@dataclass(frozen=True)
class Resources:
    """What one run reserves: GPUs (fractions allowed) and CPUs."""

    gpus: float = 0.0
    cpus: float = 1.0


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise BaselineError(f"this needs Ray: {install_hint('ray')}") from None
    return ray


@contextlib.contextmanager
def ray_runtime(address: str | None = None, num_cpus: int | None = None) -> Iterator[Any]:
    """The ray module, initialised: connected to address, or a local runtime (num_cpus CPUs)."""
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    options: dict[str, Any] = {"log_to_driver": False, "configure_logging": False}
    if address is not None:
        check_reachable(address)  # ray.init would retry an unreachable address silently for minutes
        options["address"] = address
    else:
        options.update(num_cpus=num_cpus, include_dashboard=False)
    previous = signal.getsignal(signal.SIGTERM)
    try:
        ray.init(**options)
    except (ConnectionError, RuntimeError, ValueError) as err:
        where = f"the Ray cluster at {address}" if address else "a local Ray runtime"
        raise BaselineError(f"cannot start or reach {where}: {str(err).splitlines()[0] if str(err) else type(err).__name__}") from None
    finally:
        if previous is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, previous)  # ray.init put its own (sys.exit) in place of gengap's: SIGTERM as SIGINT
    watchdog = watch_local_runtime(raylet) if address is None and (raylet := _raylet_pid(ray)) is not None else None
    try:
        yield ray
    finally:
        ray.shutdown()
        if watchdog is not None:
            watchdog.stop()


def check_reachable(address: str, timeout: float = CONNECT_SECONDS) -> None:
    """BaselineError, within timeout seconds, when nothing accepts a TCP connection at the
    host and port of a cluster address (``HOST:PORT`` or ``ray://HOST:PORT``); ``auto`` and
    other addresses without a port are left to Ray."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit() or not host:
        return
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except (OSError, OverflowError, ValueError) as err:
        reason = getattr(err, "strerror", None) or str(err) or type(err).__name__
        raise BaselineError(f"cannot reach the Ray cluster at {address}: {reason} (is it running, and is that its address?)") from None


def _raylet_pid(ray: Any) -> int | None:
    """The process id of the raylet of the local runtime this process started (None if unknown)."""
    try:
        node = ray._private.worker._global_node
        return int(node.all_processes[ray._private.ray_constants.PROCESS_TYPE_RAYLET][0].process.pid)
    except (AttributeError, KeyError, IndexError, TypeError, ValueError):
        return None


def error_text(err: BaseException) -> str:
    """One line for a failed task: the exception inside a RayTaskError, else the error itself."""
    cause = getattr(err, "cause", None)
    inner = cause if isinstance(cause, BaseException) else err
    lines = [line for line in str(inner).splitlines() if line.strip()]
    return f"{type(inner).__name__}: {lines[-1] if lines else ''}".rstrip(": ")


def check_resources(ray: Any, resources: Resources) -> None:
    """BaselineError when no live node of the cluster has the GPUs and CPUs one run reserves
    (Ray would wait for such a node forever)."""
    nodes = [node.get("Resources", {}) for node in ray.nodes() if node.get("Alive")]
    for key, wanted in (("GPU", resources.gpus), ("CPU", resources.cpus)):
        most = max((float(node.get(key, 0)) for node in nodes), default=0.0)
        if wanted > most:
            raise BaselineError(f"resources: a run reserves {wanted:g} {key}s, but no node of the Ray cluster has more than {most:g}")


def run_on_ray(runs: Sequence[RunSpec], resources: Resources, retries: int) -> Iterator[Outcome]:
    """Outcomes of runs, in the order they finish, each run one Ray task (ray must be initialised;
    BaselineError before any is submitted when no node can take one)."""
    ray = import_ray()
    check_resources(ray, resources)
    task = ray.remote(num_cpus=resources.cpus, num_gpus=resources.gpus, max_retries=retries, retry_exceptions=True)(execute)
    pending = {task.remote(spec): (spec, time.perf_counter()) for spec in runs}
    try:
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            spec, started = pending.pop(ready[0])
            try:
                yield ray.get(ready[0])
            except Exception as err:  # retries exhausted: a task error or a lost worker
                yield Outcome(spec.name, "failed", error_text(err), time.perf_counter() - started)
    finally:
        for ref in pending:  # interrupted: stop what is still running
            ray.cancel(ref, force=True)
