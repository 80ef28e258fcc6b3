"""Tiny recurrent models on raw steps (shared by the LTC field tests)."""

from __future__ import annotations

import torch

from zoo.build_context import DataShape
from zoo.model import ZooModel
from zoo.series import Batch, TaskInfo
from zoo.spec.schema import spec_model


def make_model(field: dict, solver: dict, *, channels: int = 3, per_step: bool = True,
               control: str = "raw_steps", length: int = 4) -> ZooModel:
    spec = spec_model().model_validate({
        "data": {"kind": "irregular_sines"},
        "model": {"control": {"kind": control}, "field": field, "solver": solver,
                  "readout": {"kind": "classify"}},
    })
    shape = DataShape(input_channels=channels, static_channels=0, seq_len=length,
                      task=TaskInfo("multiclass", 3, per_step=per_step))
    return ZooModel(spec, shape)


def tiny_batch(model: ZooModel, *, size: int = 2, length: int = 4, seed: int = 0,
               times: torch.Tensor | None = None) -> Batch:
    gen = torch.Generator().manual_seed(seed)
    times = torch.arange(float(length)) if times is None else times
    values = torch.randn(size, length, model.shape.input_channels, generator=gen)
    per_step = model.shape.task.per_step
    y = torch.randint(0, 3, (size, length) if per_step else (size,), generator=gen)
    return Batch(times, model.control.prepare(times, values), y,
                 torch.full((size,), length - 1, dtype=torch.long))


def ncps_parameter_names() -> dict[str, str]:
    """Our ncps-cell parameter names -> ncps's ``LTCCell`` attribute names."""
    names = {"gleak": "gleak", "vleak": "vleak", "cm": "cm", "input_w": "input_w",
             "input_b": "input_b"}
    for ours, their in [("recurrent", ""), ("sensory", "sensory_")]:
        for p in ("w", "mu", "sigma", "erev"):
            names[f"{ours}.{p}"] = their + p
    return names
