"""The random state a checkpoint keeps: restored, the next draws are those the uninterrupted run
would make, on the CPU and on each GPU."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from zoo.training.seed import rng_state, seed_everything, set_rng_state

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA device"))]


@pytest.mark.parametrize("device", DEVICES)
def test_restored_state_repeats_the_next_draws(device):
    seed_everything(7)
    torch.rand(3, device=device)  # the generators in use, as in a run
    state = rng_state()
    assert ("cuda" in state) == (device == "cuda")

    def draws():
        return (random.random(), np.random.rand(), torch.rand(4).tolist(),
                torch.rand(4, device=device).tolist())

    first = draws()
    seed_everything(8)  # a new process seeds, then restores the checkpoint's state
    set_rng_state(state)
    assert draws() == first
