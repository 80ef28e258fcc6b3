"""ODE-RNN in Kidger et al.'s version (docs/sources.md#ode-rnn)."""

from __future__ import annotations

import pytest
import torch
from field_harness import (adjoint_and_direct_gradients, assert_gradients_close, assert_trains,
                           make_model, tiny_batch)
from torch import nn

from zoo.model import count_parameters


@pytest.mark.parametrize("channels, hidden, hidden_hidden, layers, n_out, expected", [
    # GRUCell 3·(u·h + h² + 2h) + MLP + head (h → out), on the 21 path channels
    (21, 128, 64, 4, 10, 57_984 + 29_056 + 1_290),  # Speech sizes: 88,330
    (4, 32, 32, 3, 20, 3_648 + 4_224 + 660),  # UEA sizes, CharacterTrajectories: 8,532
])
def test_parameter_counts_of_kidgers_sizes(channels, hidden, hidden_hidden, layers, n_out,
                                           expected):
    field = {"kind": "ode_rnn", "hidden": hidden, "hidden_hidden": hidden_hidden,
             "layers": layers}
    assert count_parameters(make_model(field, channels=channels, n_out=n_out)) == expected


def test_ode_is_a_tanh_mlp():
    model = make_model({"kind": "ode_rnn", "hidden": 5, "hidden_hidden": 6, "layers": 3},
                       channels=3)
    kinds = [type(m) for m in model.body.vector_field.net]
    assert kinds == [nn.Linear, nn.Tanh, nn.Linear, nn.Tanh, nn.Linear, nn.Tanh, nn.Linear]


def test_evolves_between_and_jumps_at_every_grid_point():
    """Euler with one step per gap: h ← GRUCell(x_0, 0); then h ← h + Δt·MLP(h),
    h ← GRUCell(x_i, h) for each later grid time; features = h at the final index."""
    model = make_model({"kind": "ode_rnn", "hidden": 4, "hidden_hidden": 5, "layers": 2},
                       channels=3, method="euler").double()
    batch = tiny_batch(model)
    path = model.control.path(batch.times, batch.coeffs)
    body = model.body
    h = torch.zeros(len(batch.y), 4, dtype=torch.float64)
    states = []
    for i, t in enumerate(batch.times):
        if i:
            h = h + (t - batch.times[i - 1]) * body.vector_field.net(h)
        h = body.cell(path.evaluate(t), h)
        states.append(h)
    expected = torch.stack(states)[batch.final_index, torch.arange(len(batch.y))]
    torch.testing.assert_close(body(path, batch), expected)


def test_default_rk4_takes_one_step_per_gap():
    model = make_model({"kind": "ode_rnn", "hidden": 4, "hidden_hidden": 4}, channels=3).double()
    batch = tiny_batch(model, length=6)
    model(batch)
    assert model.integrator.nfe == 4 * 5


@pytest.mark.parametrize("initial, static, per_step", [("zeros", 0, False), ("static", 2, False),
                                                       ("zeros", 0, True)])
def test_forward_and_backward(initial, static, per_step):
    model = make_model({"kind": "ode_rnn", "hidden": 4, "hidden_hidden": 4}, channels=3,
                       static=static, initial=initial, per_step=per_step).double()
    assert_trains(model, tiny_batch(model))


def test_adjoint_gradients_match_direct():
    """rk4 with step 0.025 on [0, 4], float64: agreement to 2e-6 of each tensor's largest entry."""
    direct, adjoint = adjoint_and_direct_gradients(
        {"kind": "ode_rnn", "hidden": 5, "hidden_hidden": 5})
    assert_gradients_close(direct, adjoint, rtol=2e-6)


def test_raw_steps_jump_only_where_observed():
    """With raw observations, a step where nothing was observed only evolves the ODE."""
    from zoo.controls.raw_steps import RawStepsConfig

    model = make_model({"kind": "ode_rnn", "hidden": 4, "hidden_hidden": 5, "layers": 2},
                       channels=3, method="euler", control=RawStepsConfig()).double()
    batch = tiny_batch(model)
    times = batch.times
    values = torch.randn(len(batch.y), len(times), 3, dtype=torch.float64)
    values[0, 2] = float("nan")  # series 0: nothing observed at step 2
    batch.coeffs = model.control.prepare(times, values)
    body = model.body
    path = model.control.path(times, batch.coeffs)
    h = torch.zeros(len(batch.y), 4, dtype=torch.float64)
    filled = path.values
    for i, t in enumerate(times):
        if i:
            h = h + (t - times[i - 1]) * body.vector_field.net(h)
        jumped = body.cell(filled[:, i], h)
        h = torch.where(torch.tensor([i != 2, True, True])[:, None], jumped, h)
    batch.final_index = torch.full_like(batch.final_index, len(times) - 1)
    torch.testing.assert_close(body(path, batch), h)
