"""Building tiny models of one field family and comparing their gradients (shared by the
field tests)."""

from __future__ import annotations

from typing import Any

import torch

from zoo.build_context import DataShape
from zoo.model import ZooModel
from zoo.series import Batch, TaskInfo
from zoo.spec.schema import spec_model


def make_spec(field: dict, *, method: str = "rk4", step_size: float | None = None,
              backprop: str | dict = "direct", initial: str = "auto") -> Any:
    solver: dict = {"kind": "torchdiffeq", "method": method}
    if step_size is not None:
        solver["step_size"] = step_size
    return spec_model().model_validate({
        "data": {"kind": "irregular_sines"},
        "model": {"control": {"kind": "natural_cubic"}, "field": field, "solver": solver,
                  "backprop": backprop if isinstance(backprop, dict) else {"kind": backprop},
                  "initial": {"kind": initial},
                  "readout": {"kind": "classify"}},
    })


def make_model(field: dict, *, channels: int, n_out: int = 4, static: int = 0,
               length: int = 5, per_step: bool = False, control: Any = None,
               **spec_options) -> ZooModel:
    """A model for data of this shape; ``control`` replaces the natural cubic control (a
    stand-in object with ``provides``, ``channels`` and ``path``)."""
    shape = DataShape(input_channels=channels, static_channels=static, seq_len=length,
                      task=TaskInfo("multiclass", n_out, per_step=per_step))
    spec = make_spec(field, **spec_options)
    if control is not None:
        spec = spec.model_copy(update={"model": spec.model.model_copy(update={"control": control})})
    return ZooModel(spec, shape)


def tiny_batch(model: ZooModel, *, size: int = 3, length: int = 5, seed: int = 0,
               dtype: torch.dtype = torch.float64) -> Batch:
    """Random series with time in channel 0 on the grid 0, 1, …, and varied final indices."""
    gen = torch.Generator().manual_seed(seed)
    shape = model.shape
    times = torch.arange(length, dtype=dtype)
    values = torch.randn(size, length, shape.input_channels, generator=gen, dtype=dtype)
    values[..., 0] = times
    static = (torch.randn(size, shape.static_channels, generator=gen, dtype=dtype)
              if shape.static_channels else None)
    final_index = torch.arange(size) % length
    final_index[0] = length - 1
    y = torch.randint(0, shape.task.n_outputs, (size,), generator=gen)
    return Batch(times, model.control.prepare(times, values), y, final_index, static)


def parameter_gradients(model: ZooModel, batch: Batch) -> dict[str, torch.Tensor]:
    model.zero_grad()
    loss = model.spec.model.readout.loss(model(batch), batch.y)
    loss.backward()
    return {name: p.grad.clone() for name, p in model.named_parameters()}


def adjoint_and_direct_gradients(field: dict, *, channels: int = 3, step_size: float = 0.025,
                                 **options) -> tuple[dict, dict]:
    """Gradients of the loss of one float64 model (rk4 on the grid 0..4) through the solver
    steps and by the continuous adjoint."""
    torch.manual_seed(0)
    direct = make_model(field, channels=channels, step_size=step_size, **options).double()
    adjoint = make_model(field, channels=channels, step_size=step_size, backprop="adjoint",
                         **options).double()
    adjoint.load_state_dict(direct.state_dict())
    batch = tiny_batch(direct)
    return parameter_gradients(direct, batch), parameter_gradients(adjoint, batch)


def assert_gradients_close(first: dict, second: dict, rtol: float) -> None:
    """Per parameter tensor: max |difference| ≤ rtol · max |first|."""
    assert first.keys() == second.keys()
    for name in first:
        error = (first[name] - second[name]).abs().max()
        assert error <= rtol * first[name].abs().max(), (name, error)


def assert_trains(model: ZooModel, batch: Batch) -> None:
    """Forward gives finite outputs of the right shape; every parameter gets a finite gradient."""
    out = model(batch)
    task = model.shape.task
    expected = (len(batch.y), batch.times.shape[0], task.n_outputs) if task.per_step \
        else (len(batch.y), task.n_outputs)
    assert out.shape == expected
    assert torch.isfinite(out).all()
    out.square().sum().backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all(), name
