"""An inter-process lock for opening a local SQLite store and creating its experiments.

MLflow creates a new SQLite store's schema (an alembic migration) without a lock, so processes
that open the same new store at once, as ``zoo sweep`` workers do, break each other's
migration; those that also create the same experiment collide on its name. Holding an
exclusive ``flock`` on ``<db>.lock`` beside the store around both serialises them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no lock; concurrent first use of a new store may fail there
    fcntl = None


@contextmanager
def store_lock(db: Path | None) -> Iterator[None]:
    """Hold the lock of the SQLite store ``db``; nothing for ``None`` (not SQLite), on platforms
    without ``fcntl``, or where the lock file cannot be created (a read-only folder)."""
    if db is None or fcntl is None:
        yield
        return
    try:
        handle = open(f"{db}.lock", "a")
    except OSError:
        yield
        return
    with handle:  # closing the file releases the lock
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
