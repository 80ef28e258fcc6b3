"""ODE-RFWP field (paper (a) §3.3, docs/sources.md#fwp-rfwp): discrete FWP step formula,
forward/backward."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from torch.nn import functional as F

from zoo.build_context import DataShape
from zoo.controls.raw_steps import RawStepsConfig
from zoo.model import ZooModel
from zoo.series import TaskInfo
from zoo.spec.schema import spec_model


def StepsStandIn(values, times):
    """The ``steps`` path of the ``raw_steps`` control for raw ``values`` (B, T, C) on ``times``."""
    control = RawStepsConfig()
    return control.path(times, control.prepare(times, values))


def make_model(field, u=3, n=2):
    spec = spec_model().model_validate({
        "data": {"kind": "irregular_sines"},
        "model": {"control": {"kind": "natural_cubic"}, "field": {"kind": "ode_rfwp", **field},
                  "solver": {"kind": "torchdiffeq", "method": "rk4"},
                  "readout": {"kind": "classify"}}})
    return ZooModel(spec, DataShape(u, 0, 4, TaskInfo("multiclass", n)))


def lin(layer, x):
    return x @ layer.weight.T + layer.bias


@pytest.mark.parametrize(("rule", "delta"), [("hebb", "post"), ("delta", "post"),
                                             ("delta", "pre")])
def test_discrete_step_matches_formula(rule, delta):
    torch.manual_seed(0)
    model = make_model({"rule": rule, "delta": delta, "d_model": 8, "heads": 2, "d_ff": 6})
    cell = model.body.cell
    x, u, W = torch.randn(2, 3), torch.randn(2, 8), torch.randn(2, 2, 4, 4)
    got_u, got_W = cell(x, u, W)

    slow = cell.slow
    e = F.layer_norm(lin(slow.input_proj, x), (8,), slow.input_layer_norm.weight,
                     slow.input_layer_norm.bias)
    latent = torch.tanh(u) if rule == "hebb" else u
    out = lin(slow.out, lin(cell.merge, torch.cat([e, latent], -1))).reshape(2, 2, 9)
    k, v, beta = torch.softmax(out[..., :4], -1), out[..., 4:8], torch.sigmoid(out[..., 8:])
    if rule == "hebb":
        v = torch.tanh(v)
    else:
        Wk = torch.einsum("bhij,bhj->bhi", W, k)
        v = torch.tanh(v - Wk) if delta == "post" else torch.tanh(v) - Wk
    W_new = W + torch.einsum("bhi,bhj->bhij", beta * v, k)
    torch.testing.assert_close(got_W, W_new)

    ro = cell.readout
    q = torch.softmax(lin(ro.fast_query.query_net, e).reshape(2, 2, 4), -1)
    y = lin(ro.out_proj, torch.einsum("bhij,bhj->bhi", W_new, q).reshape(2, 8))
    ff = ro.ff_block
    hidden = torch.relu(lin(ff.net[0], F.layer_norm(y, (8,), ff.layer_norm.weight,
                                                    ff.layer_norm.bias)))
    torch.testing.assert_close(got_u, y + lin(ff.net[2], hidden))


def test_latent_evolves_between_observations_only():
    torch.manual_seed(0)
    model = make_model({"d_model": 8, "heads": 2, "d_ff": 8})
    body = model.body
    values = torch.randn(2, 3, 3)
    values[1, 1] = float("nan")  # sample 1 unobserved at t = 1
    path = StepsStandIn(values, torch.tensor([0.0, 0.5, 1.5]))
    batch = SimpleNamespace(final_index=torch.tensor([2, 2]), static=None)
    feats = body(path, batch)
    assert feats.shape == (2, 8) and body.features == 8
    # by hand: step at t0, ODE to t1, (skipped) step, ODE to t2, step
    with torch.no_grad():
        u = torch.zeros(1, 8)
        W = torch.zeros(1, 2, 4, 4)
        u, W = body.cell(values[1:, 0], u, W)
        u = body.integrate(body.vector_field, u, torch.tensor([0.0, 0.5]))[-1]
        u = body.integrate(body.vector_field, u, torch.tensor([0.5, 1.5]))[-1]
        u, W = body.cell(values[1:, 2], u, W)
    torch.testing.assert_close(feats[1:].detach(), u)


def test_forward_backward():
    torch.manual_seed(0)
    model = make_model({"rule": "oja", "d_model": 8, "heads": 2})
    path = StepsStandIn(torch.randn(3, 4, 3), torch.tensor([0.0, 1.0, 1.5, 3.0]))
    batch = SimpleNamespace(final_index=torch.tensor([3, 2, 1]), static=None)
    model.head(model.body(path, batch)).square().sum().backward()
    grads = [p.grad for p in model.parameters()]
    assert all(g is not None and torch.isfinite(g).all() for g in grads)
    assert all(p.grad.abs().sum() > 0 for p in model.body.vector_field.parameters())
