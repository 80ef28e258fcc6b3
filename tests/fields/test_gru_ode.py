"""GRU-ODE as run by Kidger et al. (docs/sources.md#gru-ode)."""

from __future__ import annotations

import pytest
import torch
from field_harness import (adjoint_and_direct_gradients, assert_gradients_close, assert_trains,
                           make_model, tiny_batch)

from zoo.fields.gru_ode import GRUODEFunc
from zoo.model import count_parameters


@pytest.mark.parametrize("channels, static, hidden, n_out, expected", [
    # 3·u·h (W, no bias) + 3·(h² + h) (U) + head (u + h → out)
    (21, 0, 160, 10, 10_080 + 77_280 + 1_820),  # Speech: 89,180 (NCDE: 88,940)
    # + static network 7→256→187; 194,541 (NCDE: 193,541)
    (69, 7, 187, 1, 2_048 + 48_059 + 38_709 + 105_468 + 257),  # Sepsis with intensity
])
def test_parameter_counts_of_kidgers_sizes(channels, static, hidden, n_out, expected):
    """Kidger sized the GRU-ODE to match the NCDE's parameter count on each task."""
    model = make_model({"kind": "gru_ode", "hidden": hidden}, channels=channels, static=static,
                       n_out=n_out, initial="static" if static else "zeros")
    assert count_parameters(model) == expected
    assert model.body.features == channels + hidden


def test_field_is_the_gru_ode_driven_by_time():
    """d[x̃, h]/dt = [dX/dt, (1 − z)(g − h)·dX₀/dt] with h clamped to [−1, 1] first."""
    model = make_model({"kind": "gru_ode", "hidden": 4}, channels=3).double()
    batch = tiny_batch(model)
    path = model.control.path(batch.times, batch.coeffs)
    cell = model.body.vector_field
    t = torch.tensor(1.3, dtype=torch.float64)
    x, h = torch.randn(3, 3, dtype=torch.float64), 3 * torch.randn(3, 4, dtype=torch.float64)
    dx = path.derivative(t)
    hc = h.clamp(-1, 1)
    r = torch.sigmoid(x @ cell.w_r.weight.T + cell.u_r(hc))
    z = torch.sigmoid(x @ cell.w_z.weight.T + cell.u_z(hc))
    g = torch.tanh(x @ cell.w_h.weight.T + cell.u_h(r * hc))
    expected = torch.cat([dx, (1 - z) * (g - hc) * dx[:, :1]], -1)
    actual = GRUODEFunc(cell, path, 3)(t, torch.cat([x, h], -1))
    torch.testing.assert_close(actual, expected)
    torch.testing.assert_close(dx[:, 0], torch.ones(3, dtype=torch.float64))  # time channel


def test_path_block_integrates_to_the_increment():
    """With z(t0) = 0 the first u features are X(t_final) − X(t0) (rk4 integrates the cubic
    spline's quadratic derivative exactly)."""
    model = make_model({"kind": "gru_ode", "hidden": 4}, channels=3).double()
    batch = tiny_batch(model)
    path = model.control.path(batch.times, batch.coeffs)
    features = model.body(path, batch)
    ends = torch.stack([path.evaluate(batch.times[i])[b] for b, i in enumerate(batch.final_index)])
    torch.testing.assert_close(features[:, :3], ends - path.evaluate(batch.times[0]))


def test_static_initial_state_starts_the_path_block_at_zero():
    model = make_model({"kind": "gru_ode", "hidden": 4}, channels=3, static=2,
                       initial="static").double()
    batch = tiny_batch(model)
    z0 = model.body.z0(model.control.path(batch.times, batch.coeffs), batch)
    assert not z0[:, :3].any()
    torch.testing.assert_close(z0[:, 3:], model.body.initial.net(batch.static))


@pytest.mark.parametrize("initial, static, per_step", [("zeros", 0, False), ("static", 2, False),
                                                       ("zeros", 0, True)])
def test_forward_and_backward(initial, static, per_step):
    model = make_model({"kind": "gru_ode", "hidden": 4}, channels=3, static=static,
                       initial=initial, per_step=per_step).double()
    assert_trains(model, tiny_batch(model))


def test_adjoint_gradients_match_direct():
    """rk4 with step 0.025 on [0, 4], float64: agreement to 2e-6 of each tensor's largest entry."""
    direct, adjoint = adjoint_and_direct_gradients({"kind": "gru_ode", "hidden": 5})
    assert_gradients_close(direct, adjoint, rtol=2e-6)


@pytest.mark.parametrize("data, refused", [
    ({"kind": "irregular_sines", "length": 9}, False),
    ({"kind": "character_trajectories", "drop": 0.3}, False),
    ({"kind": "character_trajectories"}, True),  # paper (c)'s three pen channels
    ({"kind": "gesture"}, True),  # the LTC suite's datasets have no time channel
    ({"kind": "circle"}, True),
])
def test_validation_needs_a_dataset_whose_channel_0_is_time(write_spec, data, refused):
    from zoo.errors import SpecError
    from zoo.spec.validate import load_spec

    spec = {"data": data, "model": {
        "control": {"kind": "natural_cubic"}, "field": {"kind": "gru_ode", "hidden": 8},
        "solver": {"kind": "torchdiffeq", "method": "rk4"}, "readout": {"kind": "classify"}},
        "train": {"epochs": 1, "batch_size": 16}}
    if not refused:
        assert load_spec(write_spec(spec))[0].model.field.kind == "gru_ode"
        return
    with pytest.raises(SpecError) as info:
        load_spec(write_spec(spec))
    assert [p for p in info.value.problems if p.endswith(
        f"data.kind: field 'gru_ode' moves h by dX₀/dt, the rate of channel 0, which must be "
        f"time, and dataset '{data['kind']}' has no time channel (it is on speech_commands, "
        f"physionet_sepsis, uea, eigenworms and own data)")]
