"""Checkpoints: ``last`` (everything needed to resume) and ``best`` (weights + spec + shape).

A best checkpoint rebuilds an identical model with :func:`load_model`, without the dataset.
"""

from __future__ import annotations

import io
import os
import tempfile
from pathlib import Path
from typing import Any

import torch
import yaml

from ..build_context import DataShape
from ..errors import InputError
from ..model import ZooModel
from ..series import TaskInfo
from ..spec.source import parse_text
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


def best_payload(model: ZooModel, state_dict: dict) -> dict:
    shape = model.shape
    return {"spec": spec_to_yaml(model.spec), "model": state_dict,
            "shape": {"input_channels": shape.input_channels,
                      "static_channels": shape.static_channels, "seq_len": shape.seq_len,
                      "task": vars(shape.task)}}


def load_model(path: str | Path) -> ZooModel:
    """Rebuild the model stored in a best checkpoint and load its weights."""
    try:
        payload = torch.load(path, map_location="cpu", weights_only=False)
        spec = spec_from_yaml(payload["spec"], f"{path}:spec")
        raw = dict(payload["shape"])
        task = raw.pop("task")
        task["class_names"] = tuple(task.get("class_names", ()))
        shape = DataShape(task=TaskInfo(**task), **raw)
    except (OSError, KeyError, RuntimeError, EOFError, io.UnsupportedOperation) as exc:
        raise InputError(f"{path}: not a readable zoo checkpoint ({exc})") from None
    model = ZooModel(spec, shape)
    model.load_state_dict(payload["model"])
    return model
