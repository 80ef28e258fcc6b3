"""Random continuous-time networks of the trajectory-length experiment and the circle input."""

import math

import pytest
import torch

from zoo.build_context import DataShape
from zoo.datasets.circle import CircleConfig
from zoo.fields.ltc.activations import activation, matlab_htanh
from zoo.fields.ltc.random_ctnet import pca_arc_length
from zoo.model import ZooModel
from zoo.series import Batch, TaskInfo
from zoo.spec.schema import spec_model


def circle_model(field: dict, per_step: bool = True) -> tuple[ZooModel, Batch]:
    spec = spec_model().model_validate({
        "data": {"kind": "irregular_sines"},
        "model": {"control": {"kind": "natural_cubic"}, "field": field,
                  "solver": {"kind": "torchdiffeq", "method": "dopri5", "rtol": 1e-2,
                             "atol": 1e-4},
                  "readout": {"kind": "classify"}}})
    model = ZooModel(spec, DataShape(2, 0, 100, TaskInfo("multiclass", 2, per_step=per_step)))
    split = CircleConfig(copies=2).load().train
    coeffs = model.control.prepare(split.times, split.values)
    return model, Batch(split.times, coeffs, split.y, split.final_index)


def test_circle_dataset():
    data = CircleConfig().load()
    times, values = data.train.times, data.train.values
    assert values.shape == (1, 100, 2) and times.shape == (100,)
    assert times[0] == 0 and math.isclose(times[-1].item(), 2 * math.pi, rel_tol=1e-6)
    torch.testing.assert_close(values[0], torch.stack([times.sin(), times.cos()], -1))
    assert data.task.kind == "regression" and data.task.per_step


@pytest.mark.parametrize("model_kind", ["ltc", "ctrnn", "node"])
def test_trajectory_length_and_steps_are_computable(model_kind):
    model, batch = circle_model({"kind": "random_ctnet", "model": model_kind, "width": 10,
                                 "layers": 2, "seed": 3})
    path = model.control.path(batch.times, batch.coeffs)
    result = model.body.trajectory_length(path, layer=1)
    assert result.length.shape == (2,)
    assert torch.isfinite(result.length).all() and torch.all(result.length > 0)
    # identical series: equal up to float32 rounding, which a sum over thousands of solver
    # points accumulates differently in the two batch rows (SIMD lanes)
    torch.testing.assert_close(result.length[0], result.length[1], rtol=1e-4, atol=0)
    assert torch.all((result.explained > 0) & (result.explained <= 1 + 1e-6))
    assert isinstance(result.steps, int) and result.steps > 0
    assert result.nfe == 2 + 6 * result.steps  # dopri5: 6 new stages per attempted step
    features = model.body(path, batch)
    assert features.shape == (2, 100, 20)


def test_random_weights_are_fixed_by_the_seed_and_scaled_as_the_code():
    a, _ = circle_model({"kind": "random_ctnet", "width": 200, "seed": 1})
    b, _ = circle_model({"kind": "random_ctnet", "width": 200, "seed": 1})
    layer = a.body.layers[0]
    assert torch.equal(layer.w_rec, b.body.layers[0].w_rec)
    assert list(a.body.parameters()) == []  # nothing is trained
    assert abs(layer.w_rec.std().item() - 2.0) < 0.05  # MATLAB: weight std = sigma_w
    assert torch.all(layer.tau > 0)
    p, _ = circle_model({"kind": "random_ctnet", "width": 200, "seed": 1, "weight_init": "paper"})
    assert abs(p.body.layers[0].w_rec.std().item() - math.sqrt(2.0 / 200)) < 0.005


def test_layer_equations():
    model, batch = circle_model({"kind": "random_ctnet", "width": 4, "activation": "tanh"})
    layer = model.body.layers[0]
    u, y = torch.randn(3, 2), torch.randn(3, 4)
    f_in = torch.tanh(u @ layer.w_in + layer.b_in)
    f_rec = torch.tanh(y @ layer.w_rec + layer.b_rec)
    expected = -y * (1 / layer.tau + f_in.abs() + f_rec.abs()) + f_in * layer.e_in \
        + f_rec * layer.e_rec
    torch.testing.assert_close(layer(u, y), expected)
    layer.model = "ctrnn"
    torch.testing.assert_close(layer(u, y), -y / layer.tau + f_in)
    layer.model = "node"
    torch.testing.assert_close(layer(u, y), f_in)


def test_matlab_hardtanh_quirk():
    x = torch.tensor([[0.5, 3.0, -2.0], [1.0, 2.0, 5.0], [-1.0, -4.0, -1.5]])
    expected = torch.tensor([[0.5, 3.0, -2.0], [1.0, 1.0, 1.0], [-1.0, -1.0, -1.0]])
    assert torch.equal(matlab_htanh(x), expected)
    assert activation("hardtanh") is matlab_htanh
    assert torch.equal(activation("hardtanh", matlab_quirk=False)(x), x.clamp(-1, 1))


def test_pca_arc_length_of_a_rotated_circle():
    theta = torch.linspace(0, 2 * math.pi, 100, dtype=torch.float64)
    circle = torch.stack([3 * theta.cos(), 3 * theta.sin(), torch.zeros_like(theta)], -1)
    rotation, _ = torch.linalg.qr(torch.randn(3, 3, dtype=torch.float64))
    length, explained = pca_arc_length((circle @ rotation)[None])
    chords = 99 * 2 * 3 * math.sin(math.pi / 99)
    assert math.isclose(length.item(), chords, rel_tol=1e-10)
    assert math.isclose(explained.item(), 1.0, rel_tol=1e-10)
