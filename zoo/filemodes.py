"""The modes files get when a plain ``open()`` creates them: ``0o666`` (``0o777`` for executables
and shared libraries) less the process's umask.

Atomic writes go through :func:`tempfile.mkstemp`, which creates its file ``0o600``; a cache
shared by a team must be readable by all of it, so such a file gets :func:`normal_mode` before
it is renamed into place.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

_lock = threading.Lock()


def umask() -> int:
    """The process's umask (read from ``/proc`` where it can, else set and restored at once)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    with _lock:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def normal_mode(executable: bool = False) -> int:
    """``0o666`` (``0o777`` if ``executable``) less the umask: 0o644 / 0o755 under umask 022."""
    return (0o777 if executable else 0o666) & ~umask()


def give_normal_mode(path: str | os.PathLike, executable: bool = False) -> None:
    """``chmod`` ``path`` (a temporary file to be renamed into place) to :func:`normal_mode`."""
    os.chmod(path, normal_mode(executable))
