"""Shared fixtures: a tiny valid spec and helpers to write specs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"

TINY_SPEC = {
    "data": {"kind": "irregular_sines", "n_train": 48, "n_val": 16, "n_test": 16, "length": 12},
    "model": {
        "control": {"kind": "natural_cubic"},
        "field": {"kind": "ncde", "hidden": 8, "hidden_hidden": 8, "layers": 1},
        "solver": {"kind": "torchdiffeq", "method": "rk4", "step_size": 1.0},
        "readout": {"kind": "classify"},
    },
    "train": {"epochs": 2, "batch_size": 16, "optimizer": {"lr": 0.01}},
}


@pytest.fixture
def write_spec(tmp_path):
    """Write a spec (dict or text) to ``tmp_path/name`` and return its path."""

    def write(content, name: str = "spec.yaml") -> Path:
        path = tmp_path / name
        path.write_text(content if isinstance(content, str) else
                        yaml.safe_dump(content, sort_keys=False))
        return path

    return write


@pytest.fixture
def tiny_spec():
    import copy

    return copy.deepcopy(TINY_SPEC)


@pytest.fixture(scope="module")
def float64():
    """Run a whole module with float64 as torch's default dtype (`usefixtures("float64")`)."""
    import torch

    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(previous)


@pytest.fixture
def torch_threads():
    """``torch_threads(n)`` sets torch's intra-op threads for the test; restored after it."""
    import torch

    before = torch.get_num_threads()
    yield torch.set_num_threads
    torch.set_num_threads(before)
