"""Hold back Ctrl-C while a run persists an epoch, so the store never sees half a write.

A ``KeyboardInterrupt`` raised inside an SQLAlchemy commit leaves the SQLite store locked and
turns the interrupt into an unrelated store error. Inside :func:`interrupts_deferred` SIGINT is
recorded instead, and raised as ``KeyboardInterrupt`` once the block has finished.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Run the block to completion, then deliver any SIGINT that arrived during it."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be installed from the main thread
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, _frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)
    if received:
        raise KeyboardInterrupt
