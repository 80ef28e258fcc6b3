"""SIGTERM and SIGINT to a sweep: handled by its executor while its jobs run, so that every run
in progress ends as a ``zoo run`` does (marked KILLED, with how to resume it)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

SIGNALS = (signal.SIGTERM, signal.SIGINT)


@contextmanager
def handled(handler: Callable[[int, object], None]) -> Iterator[None]:
    """``handler`` for SIGTERM and SIGINT inside the block (in the main thread, where Python
    delivers signals; elsewhere nothing changes), the previous handlers restored after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, handler) for s in SIGNALS}
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old if old is not None else signal.SIG_DFL)
