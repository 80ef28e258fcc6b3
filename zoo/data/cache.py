"""Cache of preprocessed tensors, keyed by everything that determines them.

The key is a JSON-able dict (dataset kind, preprocessing options, sha256 of the source files,
the dataset module's code version tag); its hash names the file
``$ZOO_DATA_HOME/processed/<hash>.pt``. The file stores the key too, and is reused only when
the stored key is equal, so a change of any option or source never serves a stale result. Writes
go to a temporary file renamed into place, with the modes a plain ``open()`` gives (0644 under
umask 022, so a shared cache is readable by all its users); an unreadable file is rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..filemodes import give_normal_mode
from .fetch import data_home

if TYPE_CHECKING:
    import torch


def _canonical(key: dict) -> str:
    return json.dumps(key, sort_keys=True, default=str)


def cache_path(key: dict, home=None) -> Path:
    """Where the tensors for ``key`` are stored."""
    digest = hashlib.sha256(_canonical(key).encode()).hexdigest()[:32]
    return data_home(home) / "processed" / f"{digest}.pt"


def _read(path: Path, key: dict) -> dict[str, torch.Tensor] | None:
    import torch

    try:
        stored = torch.load(path, map_location="cpu", weights_only=True)
    except Exception:  # missing, truncated or foreign file: (re)build it
        return None
    if not isinstance(stored, dict) or stored.get("key") != _canonical(key):
        return None
    return stored["tensors"]


def cached(key: dict, build: Callable[[], dict[str, torch.Tensor]], home=None
           ) -> dict[str, torch.Tensor]:
    """The tensors for ``key``: read from the cache, else ``build()`` them and store them."""
    import torch

    path = cache_path(key, home)
    found = _read(path, key)
    if found is not None:
        return found
    tensors = build()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.stem, suffix=".tmp")
    os.close(fd)
    try:
        torch.save({"key": _canonical(key), "tensors": tensors}, tmp)
        give_normal_mode(tmp)  # mkstemp's 0600 would hide a shared cache from the team
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return tensors
