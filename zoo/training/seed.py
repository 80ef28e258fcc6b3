"""Seeding for reproducible runs (same spec, seed and device give the same numbers), and the
random state a checkpoint keeps so that a resumed run draws what the uninterrupted one would."""

from __future__ import annotations

import os
import random

import numpy as np
import torch


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch (the CPU and every GPU), and ask torch for deterministic
    kernels (a warning where one has none; cuBLAS gets the fixed workspace it needs for that,
    unless ``CUBLAS_WORKSPACE_CONFIG`` is set already)."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=True)


def rng_state() -> dict:
    """The random state of Python, NumPy and torch's CPU generator, and of each GPU's where
    CUDA is in use."""
    state = {"python": random.getstate(), "numpy": np.random.get_state(),
             "torch": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict) -> None:
    """Restore :func:`rng_state`; the GPUs' states where the checkpoint has them for as many
    GPUs as this machine shows (else they stay as seeded)."""
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    cuda = state.get("cuda")
    if cuda is not None and torch.cuda.is_available() and len(cuda) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(cuda)
