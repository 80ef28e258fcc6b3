"""The process allocator for training on Linux (glibc): keep freed blocks for reuse.

PyTorch's CPU tensors come from ``malloc``. glibc serves a block above its mmap threshold
(128 kB at start) with fresh pages from the system and gives them back on ``free``, and it
returns freed memory at the top of its heap above the trim threshold: a large intermediate that
every training step allocates anew is then page-faulted in anew every time, which costs a few
times the arithmetic on it (on the machine of docs/performance.md a fresh 1 MB result cost 2-5×
the operation, a fresh 39 MB product 7× a reused one). The mmap threshold cannot be raised
above 32 MiB, so mmap is switched off (``M_MMAP_MAX`` 0) and every block comes from the heap,
and the trim threshold is raised: freed blocks are then reused, at the price of a resident size
that stays at its peak. ``ZOO_SYSTEM_MALLOC=1`` keeps the
system's settings; other platforms are left alone.
"""

from __future__ import annotations

import ctypes
import os
import sys

#: glibc's ``mallopt`` parameters and the values set
M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4
TRIM_THRESHOLD = 1 << 30


def keep_freed_blocks() -> str:
    """Switch glibc's mmap off and raise its trim threshold (for the whole process; calling it
    again changes nothing); the setting in words (for the run's ``zoo.allocator`` tag)."""
    if os.environ.get("ZOO_SYSTEM_MALLOC") == "1":
        return "system (ZOO_SYSTEM_MALLOC=1)"
    if not sys.platform.startswith("linux"):
        return "system"
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):  # not glibc (e.g. musl)
        return "system"
    if mallopt(M_MMAP_MAX, 0) and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD):
        return "glibc, freed blocks kept"
    return "system"
