"""Keep a long-lived engine process's private memory near what it holds, not what it once
held.

A query builds temporary columns of tens of megabytes and frees them. glibc's malloc serves
blocks above a threshold with their own mappings, given back to the system when freed, but
it raises that threshold (up to 32 MiB) each time such a block is freed; from then on the
blocks come from the heap, and a heap fragmented by the cached frames between them keeps
the freed space. Measured on a worker that answered daily, hourly and minute questions on
NQ, ES and CL: 223 MiB of private memory (not counting the mapped data) with the adaptive
threshold, 83 MiB with a fixed 4 MiB one (bench/memory.py; docs/benchmarks.md).

Arrow allocates with the system's malloc too (``ARROW_POOL``), not its default mimalloc,
which reserves a 1 GiB arena on its first allocation and keeps it: the ceiling
(``RLIMIT_DATA``) counts reserved writable address space as used, and a worker that had
once converted a Parquet file to its Arrow copy (23 MB more resident) refused an ES join
of 2.1 GB under the default 3 GB ceiling, which a fresh worker answered.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import resource
import sys

log = logging.getLogger(__name__)

#: The environment variable that picks Arrow's allocator, read once when pyarrow loads
#: (``barb/__init__.py`` sets it before any Barb module loads pandas), and the one Barb uses.
ARROW_POOL_VARIABLE = "ARROW_DEFAULT_MEMORY_POOL"
ARROW_POOL = "system"

# mallopt parameters (glibc's malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
# Blocks from 4 MiB up (a column of 520k float64 values, more than a year of minute bars) get
# their own mapping; smaller ones stay in the heap, where reusing them costs no page faults.
MMAP_THRESHOLD = 4 << 20
TRIM_THRESHOLD = 4 << 20


def return_freed_memory() -> bool:
    """Fix malloc's thresholds for this process so that freed large blocks go back to the
    system. For worker processes, at start; a no-op (False) where the C library is not
    glibc."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):
        log.info("malloc thresholds left as they are: no glibc mallopt")
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    # mallopt returns 1 on success; setting the threshold explicitly also stops its adaptation.
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )


def trim_freed_memory() -> bool:
    """Give the system back the memory this process freed but malloc keeps (glibc's
    ``malloc_trim``): blocks below the mmap threshold are freed into the heap, and a heap
    keeps the pages of freed blocks between live ones. A CSV read batch by batch frees many
    such blocks (``barb.data.formats``); the bot, which checks uploads in its own process,
    kept them for as long as it ran. False (a no-op) where the C library is not glibc."""
    name = ctypes.util.find_library("c")
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError, TypeError):
        return False
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return bool(trim(0))


def set_memory_ceiling(limit_bytes: int | None) -> None:
    """Cap this process's private memory at ``limit_bytes`` (None or 0: no cap); children
    forked from here inherit it.

    ``RLIMIT_DATA`` (Linux 4.7+) counts the heap and every private writable mapping (the
    large arrays malloc maps), not the read-only mappings of the data files, which ``RLIMIT_AS``
    would count too (an ES and NQ minute join maps 1.1 GB of them). An allocation past the
    cap fails with MemoryError, which the engine turns into ``barb.errors.out_of_memory``,
    instead of the whole machine running out and the kernel killing the bot.

    It also counts address space an allocator reserves without using it: Arrow's allocator
    is malloc in Barb's processes for that reason (``ARROW_POOL``); this says so in the log
    when pyarrow was loaded with another one.
    """
    limit = limit_bytes or resource.RLIM_INFINITY
    pool = arrow_pool()
    if limit_bytes and pool not in (None, ARROW_POOL):
        log.warning(
            "pyarrow allocates with %s, which reserves memory it does not use: the memory "
            "ceiling counts it; load Barb before pyarrow, or set %s=%s",
            pool,
            ARROW_POOL_VARIABLE,
            ARROW_POOL,
        )
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY and (limit == resource.RLIM_INFINITY or limit > hard):
        limit = hard  # an unprivileged process cannot raise its hard limit
    resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))


def memory_ceiling() -> int | None:
    """This process's memory cap in bytes (``set_memory_ceiling``), None when it has none."""
    soft, _ = resource.getrlimit(resource.RLIMIT_DATA)
    return None if soft == resource.RLIM_INFINITY else soft


def arrow_pool() -> str | None:
    """The allocator behind pyarrow's default memory pool ("system", "mimalloc",
    "jemalloc"), None while pyarrow is not loaded (asking does not load it)."""
    pyarrow = sys.modules.get("pyarrow")
    return None if pyarrow is None else pyarrow.default_memory_pool().backend_name
