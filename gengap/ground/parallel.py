"""Render a BlockPlan to JSONL with a pool of worker processes, in block order.

Blocks are independent (see gengap.generators.blocks), so the bytes do not depend on the number
of workers. With several workers the bytes never travel through the pool's pipe (pickling and
piping every byte cost more CPU than generating them). Into a regular file (forked workers),
each worker writes its block itself at the block's offset (os.pwrite): a block's offset is
published, in shared memory, by the worker of the block before it as soon as that block is
rendered, so blocks are written in parallel and the parent copies nothing. Otherwise (a pipe,
a terminal, no fork) each block goes from its worker to a file in a private temporary
directory, and the parent copies the files into the output in block order with the kernel's
copy (os.sendfile) and deletes each as it goes. At most 2 x workers blocks are in
flight, which bounds memory and spool space; the workers end with the map, on error, on
interrupt, and when the parent dies (gengap.workers); the directory is removed in every case
but a kill of the parent, and the next spooling run removes those its dead owners left (the
directory's name carries the owner's pid).
"""

from __future__ import annotations

import errno
import functools
import multiprocessing
import os
import shutil
import stat
import tempfile
from typing import Any, BinaryIO, Iterator

import numpy as np

from gengap.ground.errors import UsageError
from gengap.generators import BlockPlan, batch_to_jsonl
from gengap.ground.repeats import input_keys
from gengap.ground.staging import process_alive
from gengap.ground.workers import ordered_map


Rendered = tuple[bytes, np.ndarray]
SPOOL_PREFIX = "gengap-blocks-"
_NO_SENDFILE = {errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EBADF}  # the output does not take sendfile


def render_block(plan: BlockPlan, block: int) -> Rendered:
    """JSONL bytes of one block of the plan, and the 64-bit keys of its records' inputs
    (gengap.repeats.input_keys, for the count of repeated inputs)."""
    batch = plan.generate_block(block)
    return batch_to_jsonl(batch, plan.task), input_keys(batch.inputs)


class SpoolError(UsageError):
    """A worker's block could not be written to the spool in the temporary directory (a full TMPDIR)."""


def spool_error(err: OSError) -> SpoolError:
    """The one-line error of a failed spool write: it names the temporary directory, not the output."""
    return SpoolError(
        f"cannot write the workers' spool in the temporary directory {tempfile.gettempdir()!r}: {err.strerror or err} "
        "(set TMPDIR to a directory with room, or give --workers 1); nothing was left behind"
    )


def _spool_block(plan: BlockPlan, spool: str, block: int) -> np.ndarray:
    """render_block, its bytes written to spool/<block>; returns the input keys (SpoolError when
    the spool cannot be written)."""
    data, keys = render_block(plan, block)
    try:
        with open(_spool_path(spool, block), "wb") as handle:
            handle.write(data)
    except OSError as err:
        raise spool_error(err) from None
    return keys


def _spool_path(spool: str, block: int) -> str:
    return os.path.join(spool, f"{block}.jsonl")


def write_blocks(plan: BlockPlan, workers: int, handle: BinaryIO) -> Iterator[tuple[int, np.ndarray]]:
    """Write every block of the plan to handle, in order; after each, yield (block, input keys).

    One worker (or one block) renders in this process; more render in worker processes that
    spool to a temporary directory (see the module doc). The bytes are the same either way."""
    if workers <= 1 or plan.num_blocks <= 1:
        for block in range(plan.num_blocks):
            data, keys = render_block(plan, block)
            handle.write(data)
            yield block, keys
        return
    fd = _regular_file(handle)
    if fd is not None and "fork" in multiprocessing.get_all_start_methods():
        yield from _write_in_place(plan, workers, handle, fd)
        return
    remove_stale_spools()
    try:
        spool = tempfile.mkdtemp(prefix=f"{SPOOL_PREFIX}{os.getpid()}-")
    except OSError as err:
        raise spool_error(err) from None
    try:
        keys_of = ordered_map(functools.partial(_spool_block, plan, spool), range(plan.num_blocks), workers)
        try:
            for block, keys in enumerate(keys_of):
                path = _spool_path(spool, block)
                with open(path, "rb") as source:
                    _copy(source, handle)
                os.unlink(path)
                yield block, keys
        finally:
            keys_of.close()  # ends the workers before the directory goes
    finally:
        shutil.rmtree(spool, ignore_errors=True)


_CHAIN: tuple[Any, Any] | None = None  # (offsets, condition) of the running _write_in_place, inherited by its forked workers


def _regular_file(handle: BinaryIO) -> int | None:
    """The file descriptor of handle when it is a regular file, else None."""
    try:
        fd = handle.fileno()
        return fd if stat.S_ISREG(os.fstat(fd).st_mode) else None
    except (AttributeError, OSError, ValueError):
        return None


def _write_in_place(plan: BlockPlan, workers: int, handle: BinaryIO, fd: int) -> Iterator[tuple[int, np.ndarray]]:
    """write_blocks into a regular file: forked workers pwrite each block at its offset (see the module doc)."""
    global _CHAIN
    handle.flush()
    start = handle.tell()
    context = multiprocessing.get_context("fork")
    offsets = context.RawArray("q", plan.num_blocks + 1)  # offsets[b]: where block b starts, -1 until known
    offsets[:] = [-1] * (plan.num_blocks + 1)
    offsets[0] = start
    _CHAIN = (offsets, context.Condition())
    try:
        keys_of = ordered_map(functools.partial(_pwrite_block, plan, fd), range(plan.num_blocks), workers)
        try:
            for block, keys in enumerate(keys_of):
                yield block, keys
        finally:
            keys_of.close()
    finally:
        _CHAIN = None
    handle.seek(offsets[plan.num_blocks])


def _pwrite_block(plan: BlockPlan, fd: int, block: int) -> np.ndarray:
    """In a forked worker: render the block, wait for its offset, publish the next block's, write it there."""
    data, keys = render_block(plan, block)
    assert _CHAIN is not None, "_pwrite_block runs in a worker forked by _write_in_place"
    offsets, ready = _CHAIN
    with ready:
        ready.wait_for(lambda: offsets[block] >= 0)
        offset = offsets[block]
        offsets[block + 1] = offset + len(data)
        ready.notify_all()
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, offset)
        view, offset = view[written:], offset + written
    return keys


def remove_stale_spools(root: str | None = None) -> None:
    """Remove the spool directories under root (default: the temporary directory) whose owning
    process is gone; a live owner's, and anything not named like a spool, stay."""
    root = root or tempfile.gettempdir()
    try:
        names = os.listdir(root)
    except OSError:
        return
    for name in names:
        owner = name[len(SPOOL_PREFIX):].split("-", 1)[0] if name.startswith(SPOOL_PREFIX) else ""
        if owner.isdigit() and not process_alive(int(owner)):
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)


def _copy(source: BinaryIO, handle: BinaryIO) -> None:
    """All of source (a regular file) appended to handle: os.sendfile where the output takes it."""
    size = os.fstat(source.fileno()).st_size
    try:
        target = handle.fileno()
    except (AttributeError, OSError):
        target = None
    if target is not None and hasattr(os, "sendfile"):
        handle.flush()
        sent = 0
        try:
            while sent < size:
                count = os.sendfile(target, source.fileno(), sent, size - sent)
                if count == 0:
                    break
                sent += count
        except OSError as err:
            if sent or err.errno not in _NO_SENDFILE:
                raise
        if handle.seekable():
            handle.seek(0, os.SEEK_END)  # the buffered writer's idea of its position follows the fd's
        if sent == size:
            return
        source.seek(sent)
    shutil.copyfileobj(source, handle, 1 << 20)


