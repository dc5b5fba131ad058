"""Release builds on Ray: every config, and every block of a large generated pool, is one Ray task.

``render_on_ray`` is a renderer for :func:`gengap.release.write_release`: it runs the same
functions the local process pool runs (``release.render`` per entry, ``release.pool_block``
per block of a ``pool: {n: N}`` entry with several blocks, whose records are then split by
the entry's task in block order), so a release built on Ray is byte-identical to a local
build (same SHA256SUMS, same fingerprint). Results are yielded in suite order.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

from gengap.generators import BlockPlan
from gengap.releases import release


def _render_with_blocks(entry: dict[str, Any], suite_seed: int, *blocks: list[Any]) -> release.Rendered:
    """release.render with the entry's pool assembled from its blocks (in order)."""
    pool = [record for block in blocks for record in block]
    return release.render(entry, suite_seed, pool)


def _block(plan: BlockPlan, block: int) -> list[Any]:
    return release.pool_block(plan, block)


def render_on_ray(entries: list[dict[str, Any]], suite_seed: int, workers: int, address: str | None = None) -> Iterator[release.Rendered]:
    """Every entry rendered by Ray tasks, in suite order: on the cluster at address, or on a
    local runtime with `workers` CPUs (started here, shut down at the end)."""
    from gengap.baselines.sweep_ray import ray_runtime

    with ray_runtime(address, None if address else workers) as ray:
        render = ray.remote(release.render)
        render_blocks = ray.remote(_render_with_blocks)
        block = ray.remote(_block)
        refs = []
        for entry in entries:
            plan = release.pool_plan(entry, suite_seed)
            if plan is not None and plan.num_blocks > 1:
                blocks = [block.remote(plan, index) for index in range(plan.num_blocks)]
                refs.append(render_blocks.remote(entry, suite_seed, *blocks))
            else:
                refs.append(render.remote(entry, suite_seed))
        done = 0
        try:
            for ref in refs:
                yield ray.get(ref)
                done += 1
        finally:
            for ref in refs[done:]:  # stopped early (an error, an interrupt): end what still runs
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)
