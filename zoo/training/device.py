"""The torch device a spec's ``device:`` (or ``--device``) names."""

from __future__ import annotations

import torch

from ..errors import InputError


def resolve_device(name: str) -> torch.device:
    """``auto`` is CUDA where available, else the CPU; ``cuda`` without one is an error."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise InputError("device 'cuda' requested but no CUDA device is available "
                         "(use --device cpu or auto)")
    return torch.device(name)
