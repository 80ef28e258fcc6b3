"""Ctrl-C and SIGTERM end a run cleanly, never in the middle of a write to the store.

A ``KeyboardInterrupt`` raised inside an SQLAlchemy commit leaves the SQLite store locked and
turns the interrupt into an unrelated store error. Inside :func:`interrupts_deferred` SIGINT and
SIGTERM are recorded instead, and delivered to their usual handlers once the block has finished.
Inside :func:`sigterm_interrupts` SIGTERM (a scheduler's stop) raises :class:`Terminated`, a
``KeyboardInterrupt``, so that it ends a run as Ctrl-C does.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_SIGNALS = (signal.SIGTERM, signal.SIGINT)  # the order of re-delivery when both arrived


class Terminated(KeyboardInterrupt):
    """SIGTERM received inside :func:`sigterm_interrupts`."""


def exit_code(interrupt: KeyboardInterrupt) -> int:
    """The shell's code for a process ended by the signal: 143 (SIGTERM) or 130 (SIGINT)."""
    return 128 + (signal.SIGTERM if isinstance(interrupt, Terminated) else signal.SIGINT)


def _main_thread() -> bool:  # signal handlers can only be installed from the main thread
    return threading.current_thread() is threading.main_thread()


def _restore(signum: int, handler) -> None:
    signal.signal(signum, handler if handler is not None else signal.SIG_DFL)


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Run the block to completion, then deliver any SIGINT or SIGTERM that arrived during it."""
    if not _main_thread():
        yield
        return
    received: set[int] = set()
    previous = {s: signal.signal(s, lambda signum, _frame: received.add(signum))
                for s in _SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            _restore(signum, handler)
    for signum in _SIGNALS:
        if signum in received:
            signal.raise_signal(signum)  # the restored handler acts: raises, or ends the process


def _terminate(_signum, _frame) -> None:
    raise Terminated


@contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """Inside the block SIGTERM raises :class:`Terminated` instead of ending the process."""
    if not _main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        _restore(signal.SIGTERM, previous)
