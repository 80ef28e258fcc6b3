"""The fast continuous adjoint (zoo/fast/solve/adjoint.py) gives torchdiffeq's ``odeint_adjoint``
gradients on the generic path: every fast-path family, every fixed-grid method, output times
on and off the grid, per-sample and per-step reads, both output-time sets."""

from __future__ import annotations

import pytest
import torch
import torchdiffeq

from fast_harness import METHODS, assert_fast_equals_generic, make_model

from zoo.backprop.adjoint import AdjointConfig
from zoo.build_context import Integrator
from zoo.controls.natural_cubic import NaturalCubicConfig
from zoo.fast.solve import adjoint
from zoo.fast.solve.adjoint import FieldSteps, adjoint_solve
from zoo.solvers.torchdiffeq_solver import TorchdiffeqConfig

FWP_RULES = [{"rule": "hebb"}, {"rule": "oja"}, {"rule": "delta"},
             {"rule": "delta", "delta": "post"}]
SMALL = {"kind": "fwp", "d_model": 8, "heads": 2, "d_ff": 8}
FIELDS = {
    "ncde": {"kind": "ncde", "hidden": 5, "hidden_hidden": 6, "layers": 2},
    "matrix-ncde": {"kind": "matrix_ncde", "hidden": 5},
    "gru-ode": {"kind": "gru_ode", "hidden": 5},
    "jacobian": {"kind": "jacobian", "hidden": 6},
    "nrde": {"kind": "nrde", "hidden": 5, "hidden_hidden": 6, "layers": 3},
}


@pytest.mark.parametrize("form", ["ode", "cde"])
@pytest.mark.parametrize("rule", FWP_RULES, ids=lambda r: "-".join(r.values()))
def test_fwp_adjoint_equals_torchdiffeq(rule, form):
    assert_fast_equals_generic({**SMALL, **rule, "form": form}, "rk4", backprop="adjoint")


@pytest.mark.parametrize("method", METHODS[:2])
@pytest.mark.parametrize("rule", FWP_RULES[::2], ids=lambda r: "-".join(r.values()))
def test_fwp_adjoint_other_methods(rule, method):
    assert_fast_equals_generic({**SMALL, **rule, "form": "cde"}, method, backprop="adjoint")


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", FIELDS)
def test_solved_body_adjoint_equals_torchdiffeq(name, method):
    assert_fast_equals_generic(FIELDS[name], method, backprop="adjoint")


@pytest.mark.parametrize("rule", FWP_RULES[::3], ids=lambda r: "-".join(r.values()))
@pytest.mark.slow
def test_per_step_grid_outputs_and_float32(rule):
    field = {**SMALL, **rule, "form": "cde"}
    assert_fast_equals_generic(field, "rk4", backprop="adjoint", per_step=True)
    assert_fast_equals_generic(field, "rk4", backprop={"kind": "adjoint", "outputs": "grid"})
    assert_fast_equals_generic(field, "rk4", backprop="adjoint", dtype=torch.float32)
    assert_fast_equals_generic(FIELDS["ncde"], "rk4", backprop="adjoint", dtype=torch.float32)


@pytest.mark.slow
def test_blocks_do_not_change_the_numbers(monkeypatch):
    """Stage inputs are evaluated a block of steps at a time (flat memory), fewer steps for
    larger batches; block edges inside a segment give the same gradients."""
    monkeypatch.setattr(adjoint, "BLOCK_STEPS", 2)
    assert_fast_equals_generic({**SMALL, "rule": "delta", "form": "cde"}, "rk4",
                               backprop="adjoint", step_size=0.3)
    assert_fast_equals_generic(FIELDS["ncde"], "midpoint", backprop="adjoint", step_size=0.3)
    monkeypatch.setattr(adjoint, "BLOCK_SAMPLE_STEPS", 4)  # the harness' 4 series: 1 step
    assert_fast_equals_generic({**SMALL, "rule": "hebb", "form": "ode"}, "rk4",
                               backprop="adjoint", step_size=0.3)


def _spline_problem():
    """A field on a natural cubic spline with steps of 0.3 (y0, parameters, the stage inputs,
    the field, and the same as a torchdiffeq module)."""
    torch.manual_seed(0)
    times = torch.arange(13, dtype=torch.float64) * 0.7
    control = NaturalCubicConfig()
    path = control.path(times, control.prepare(times, torch.randn(4, 13, 3,
                                                                     dtype=torch.float64)))
    lin_u, lin_y = torch.nn.Linear(3, 5).double(), torch.nn.Linear(5, 5).double()
    params = (*lin_u.parameters(), *lin_y.parameters())

    def inputs(t):
        return (lin_u(path.derivative(t)),)

    def field(y, u):
        return torch.tanh(lin_y(y)) * u

    class Func(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.u, self.y = lin_u, lin_y

        def forward(self, t, y):
            return field(y, *inputs(t))

    y0 = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
    return y0, params, inputs, field, Func()


def _integrator() -> Integrator:
    return Integrator(TorchdiffeqConfig(method="rk4", step_size=0.3), AdjointConfig())


def test_segments_off_the_forward_grid():
    """Output times 0.7 apart with steps of 0.3: every backward segment starts off the forward
    grid, as torchdiffeq's does (its grid runs from t_i in negated time)."""
    y0, params, inputs, field, func = _spline_problem()
    t = torch.arange(13, dtype=torch.float64)[[0, 4, 9, 12]] * 0.7
    weights = torch.randn(4, 4, 5, dtype=torch.float64)
    integrator = _integrator()
    ours = adjoint_solve(integrator, t, y0, inputs, FieldSteps(field), params)
    ours_grads = torch.autograd.grad((ours * weights).sum(), (y0, *params))
    theirs = torchdiffeq.odeint_adjoint(func, y0, t, method="rk4",
                                        options={"step_size": 0.3}, adjoint_params=params)
    theirs_grads = torch.autograd.grad((theirs * weights).sum(), (y0, *params))
    torch.testing.assert_close(ours, theirs, rtol=1e-12, atol=1e-12)
    for a, b in zip(ours_grads, theirs_grads):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)
    assert integrator.nfe == 4 * (28 + 7 + 12 + 10)  # forward 28 steps; 3 backward segments


def test_one_output_time_per_sample():
    """With ``rows`` each sample's state at its own output time comes back (B, ...), without
    the (T, B, ...) stack, and the gradients are torchdiffeq's for that read: samples read at
    t_0, two sharing a time, one at the end, and none at the middle time."""
    y0, params, inputs, field, func = _spline_problem()
    t = torch.arange(13, dtype=torch.float64)[[0, 4, 9, 12]] * 0.7
    rows = torch.tensor([3, 0, 1, 1])
    weights = torch.randn(4, 5, dtype=torch.float64)
    ours = adjoint_solve(_integrator(), t, y0, inputs, FieldSteps(field), params, rows=rows)
    ours_grads = torch.autograd.grad((ours * weights).sum(), (y0, *params))
    theirs = torchdiffeq.odeint_adjoint(func, y0, t, method="rk4", options={"step_size": 0.3},
                                        adjoint_params=params)[rows, torch.arange(4)]
    theirs_grads = torch.autograd.grad((theirs * weights).sum(), (y0, *params))
    assert ours.shape == (4, 5)
    torch.testing.assert_close(ours, theirs, rtol=1e-12, atol=1e-12)
    for a, b in zip(ours_grads, theirs_grads):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


def test_unsupported_adjoint_options_fall_back_with_one_line():
    with pytest.warns(UserWarning, match="adjoint_method 'euler'.*generic path"):
        model = make_model(FIELDS["ncde"], channels=3,
                           backprop={"kind": "adjoint", "adjoint_method": "euler"})
    assert model.body.implementation_used == "generic (adjoint_method euler)"
    with pytest.warns(UserWarning, match="model.solver 'heun3'.*generic path"):
        model = make_model(FIELDS["ncde"], channels=3, method="heun3", backprop="adjoint")
    assert model.body.implementation_used == "generic (solver heun3)"
