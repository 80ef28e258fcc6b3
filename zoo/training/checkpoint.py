"""Checkpoints: ``last`` (everything needed to resume) and ``best`` (weights + spec + shape +
what prediction needs of the data).

A best checkpoint rebuilds an identical model with :func:`load_model`, without the dataset.
"""

from __future__ import annotations

import io
import os
import pickle
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import yaml

from ..build_context import DataShape
from ..components import stored_task
from ..errors import InputError
from ..model import ZooModel
from ..series import TaskInfo
from ..located_yaml import parse_text
from ..spec.validate import validate_source


def spec_to_yaml(spec: Any) -> str:
    return yaml.safe_dump(spec.model_dump(mode="json"), sort_keys=False)


def spec_from_yaml(text: str, origin: str = "<checkpoint spec>") -> Any:
    return validate_source(parse_text(text, origin))


def atomic_save(obj: Any, path: Path) -> None:
    """torch.save into ``path`` via a temporary file in the same folder and os.replace."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            torch.save(obj, fh)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


#: what a best checkpoint keeps of ``bundle.info`` to read new data as the training data was
DATA_KEYS = ("channels", "normalisation", "grid", "time_origin", "classes")


def best_payload(model: ZooModel, state_dict: dict, info: dict | None = None) -> dict:
    """Weights, the resolved spec, the data shape and task (class names included) and, under
    ``data``, what prediction needs of the dataset's ``info``: channel names, the training
    split's normalisation statistics, the time grid (own data)."""
    shape = model.shape
    data = {k: info[k] for k in DATA_KEYS if info and k in info}
    if "grid" in data:
        data["grid"] = torch.as_tensor(data["grid"], dtype=torch.float64)
    return {"spec": spec_to_yaml(model.spec), "model": state_dict,
            "shape": {"input_channels": shape.input_channels,
                      "static_channels": shape.static_channels, "seq_len": shape.seq_len,
                      "task": vars(shape.task)},
            "data": data}


@dataclass
class Checkpoint:
    """A best checkpoint read back; ``data`` is empty for checkpoints of older zoo versions."""

    spec: Any
    shape: DataShape
    weights: dict
    data: dict = field(default_factory=dict)

    def build(self, device: torch.device | str = "cpu", dtype: torch.dtype | None = None
              ) -> ZooModel:
        """The model with its weights, in ``dtype`` (default: the spec's ``train.dtype``);
        the process's random state is left as it was."""
        with torch.random.fork_rng(devices=[]):
            model = ZooModel(self.spec, self.shape)
        model.to(device, dtype or getattr(torch, self.spec.train.dtype))
        model.load_state_dict(self.weights)
        return model.eval()


def read_checkpoint(path: str | Path) -> Checkpoint:
    """Read a best checkpoint; its spec validates without the training data (the stored task
    answers for the data files)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: checkpoint file not found")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=False)
        if isinstance(payload, dict) and "shape" not in payload and "optimizer" in payload:
            raise InputError(f"{path}: a training state for resuming a run (last.pt), not a "
                             f"best checkpoint: use the run's checkpoints/best.pt")
        raw = dict(payload["shape"])
        task = dict(raw.pop("task"))
        task["class_names"] = tuple(task.get("class_names", ()))
        shape = DataShape(task=TaskInfo(**task), **raw)
        weights = payload["model"]
        text = payload["spec"]
    except (OSError, KeyError, TypeError, ValueError, RuntimeError, EOFError,
            pickle.UnpicklingError, io.UnsupportedOperation) as exc:
        raise InputError(f"{path}: not a readable zoo checkpoint ({exc})") from None
    with stored_task(shape.task):
        spec = spec_from_yaml(text, f"{path}:spec")
    return Checkpoint(spec, shape, weights, dict(payload.get("data") or {}))


def load_model(path: str | Path) -> ZooModel:
    """Rebuild the model stored in a best checkpoint and load its weights."""
    ckpt = read_checkpoint(path)
    model = ZooModel(ckpt.spec, ckpt.shape)
    model.load_state_dict(ckpt.weights)
    return model
