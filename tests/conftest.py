"""Shared fixtures: a tiny valid spec and helpers to write specs."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
import yaml


# A shell that starts the suite in the background (`cmd &` without job control) leaves SIGINT
# ignored, and so would every process a test starts: the tests of Ctrl-C need Python's default.
signal.signal(signal.SIGINT, signal.default_int_handler)


REPO = Path(__file__).resolve().parents[1]


def _data_mirror() -> Path:
    """``$ZOO_DATA_MIRROR`` (the variable zoo itself reads, zoo/data/fetch.py), else the
    repository's sibling ``../shared/data``."""
    env = os.environ.get("ZOO_DATA_MIRROR")
    return Path(env).expanduser() if env else REPO.parent / "shared" / "data"


#: Where the tests look for the local mirror of the real datasets, fixed when the suite starts
#: (tests that point ``ZOO_DATA_MIRROR`` at a temporary folder do so later). Tests needing it
#: take the ``data_mirror`` fixture, or call ``in_mirror``/``without_mirror`` at module level.
DATA_MIRROR = _data_mirror()
_HOW = (f"ZOO_DATA_MIRROR={DATA_MIRROR}" if os.environ.get("ZOO_DATA_MIRROR") else
        f"set ZOO_DATA_MIRROR to the mirror's folder, or place it at {DATA_MIRROR}")


def _absent(*parts: str | os.PathLike) -> str | None:
    path = DATA_MIRROR.joinpath(*parts)
    return None if path.exists() else f"{path} is not in the local data mirror ({_HOW})"


def without_mirror(*parts: str | os.PathLike) -> pytest.MarkDecorator:
    """A ``skipif`` mark for tests that read ``DATA_MIRROR / parts`` (module ``pytestmark`` or
    decorator), with the path looked for and how to provide it as the reason."""
    reason = _absent(*parts)
    return pytest.mark.skipif(reason is not None, reason=reason or "")


def in_mirror(*parts: str | os.PathLike) -> Path:
    """``DATA_MIRROR / parts``; the calling test is skipped, saying why, when it is absent."""
    reason = _absent(*parts)
    if reason is not None:
        pytest.skip(reason)
    return DATA_MIRROR.joinpath(*parts)


@pytest.fixture(scope="session")
def data_mirror() -> Path:
    """The local data mirror's folder (``DATA_MIRROR``); skips the test when there is none."""
    return in_mirror()


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


def store_runs(uri: str):
    """The client of ``uri`` and every run in it (opened under the store's lock: a process
    under test may be creating the store)."""
    from zoo.tracking.mlflow_run import open_client

    client = open_client(uri)
    return client, client.search_runs([e.experiment_id for e in client.search_experiments()])


def wait_for_first_epoch(uri: str, proc) -> str:
    """The id of the first run in ``uri`` to store an epoch, while ``proc`` (the zoo process
    writing it) is alive; Ray's local instance can take a while to start."""
    deadline = time.time() + 120
    while time.time() < deadline:
        assert proc.poll() is None, proc.communicate()
        try:
            client, runs = store_runs(uri)
            for run in runs:
                if client.get_metric_history(run.info.run_id, "train/loss"):
                    return run.info.run_id
        except Exception:  # the store or the runs do not exist yet
            pass
        time.sleep(0.1)
    raise AssertionError("no epoch stored in time")
