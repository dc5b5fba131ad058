"""Keep freed heap memory in the process for the next block, where the C library allows it.

Generating renders block after block of the same size: each block's arrays and bytes are
freed, then allocated again. glibc's defaults hand large freed chunks back to the kernel
(munmap, or trimming the heap's top) and then fault the same amount of fresh zeroed pages in
for the next block; in forked workers that cost three times the page faults of one process
and most of the second core (benchmarks/generation.py --cli-compare). ``keep_freed_memory``
sets glibc's malloc to keep up to ``TRIM_BYTES`` of free memory at the top of the heap, grow it
by ``TOP_PAD_BYTES`` at a time, and serve chunks below ``MMAP_BYTES`` from the heap. It changes
how memory is reused, never what is computed. The command line calls it before it generates
(worker processes inherit it); the Python API leaves the process's allocator alone. On other C
libraries it does nothing.
"""

from __future__ import annotations

import sys

M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3  # glibc's malloc.h
TRIM_BYTES = 256 << 20
TOP_PAD_BYTES = 64 << 20
MMAP_BYTES = 64 << 20


def keep_freed_memory() -> bool:
    """Set glibc's malloc as the module doc says; whether it took the settings (False on
    other platforms and C libraries)."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False  # not glibc (musl has no mallopt)
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    settings = ((M_MMAP_THRESHOLD, MMAP_BYTES), (M_TRIM_THRESHOLD, TRIM_BYTES), (M_TOP_PAD, TOP_PAD_BYTES))
    return all(mallopt(option, value) == 1 for option, value in settings)
