"""The LTC repository's baselines (CT-RNN, N-ODE, CT-GRU, LSTM) and the unrolled solvers."""

import math

import pytest
import torch
from ltc_harness import make_model, tiny_batch

from zoo.solvers.unfold import LTCFusedConfig, UnfoldConfig, rk4_step
from zoo.spec.validate import compatibility


pytestmark = pytest.mark.usefixtures("float64")


BASELINES = [({"kind": "ctrnn"}, {"kind": "unfold"}),
             ({"kind": "ctrnn", "global_feedback": False, "clip": 0.5}, {"kind": "unfold"}),
             ({"kind": "node"}, {"kind": "unfold", "method": "rk4"}),
             ({"kind": "node", "clip": 10.0}, {"kind": "unfold", "method": "rk4"}),
             ({"kind": "ctgru"}, {"kind": "unfold"}),
             ({"kind": "ctgru", "decay": "paper"}, {"kind": "unfold"}),
             ({"kind": "lstm"}, {"kind": "unfold"}),
             ({"kind": "ltc"}, {"kind": "unfold", "method": "rk4"})]


@pytest.mark.parametrize("field,solver", BASELINES, ids=lambda d: str(d))
@pytest.mark.parametrize("per_step", [True, False])
def test_forward_backward(field, solver, per_step):
    model = make_model(field, solver, per_step=per_step, length=3)
    batch = tiny_batch(model, length=3)
    out = model(batch)
    assert out.shape == ((2, 3, 3) if per_step else (2, 3))
    assert model.body.features == 32
    model.spec.model.readout.loss(out, batch.y).backward()
    grads = [p.grad for p in model.body.parameters()]
    assert grads and all(g is not None and torch.isfinite(g).all() for g in grads)
    assert any(g.abs().sum() > 0 for g in grads)


def test_ctrnn_step_is_six_euler_steps():
    model = make_model({"kind": "ctrnn", "units": 4}, {"kind": "unfold"})
    cell = model.body.cell
    x, h = torch.randn(2, 3), torch.randn(2, 4)
    w, b = cell.step.weight.detach(), cell.step.bias.detach()
    expected = h.clone()
    for _ in range(6):
        expected = expected + 0.1 * (-expected / 1.0
                                     + torch.tanh(torch.cat([x, expected], -1) @ w.T + b))
    torch.testing.assert_close(cell(x, h, torch.tensor(1.0)), expected)


def test_node_step_is_six_classic_rk4_steps():
    model = make_model({"kind": "node", "units": 4}, {"kind": "unfold", "method": "rk4"})
    cell = model.body.cell
    x, h = torch.randn(2, 3), torch.randn(2, 4)
    w, b = cell.step.weight.detach(), cell.step.bias.detach()

    def f(y):
        return torch.tanh(torch.cat([x, y], -1) @ w.T + b)

    expected = h.clone()
    for _ in range(6):
        k1 = 0.1 * f(expected)
        k2 = 0.1 * f(expected + 0.5 * k1)
        k3 = 0.1 * f(expected + 0.5 * k2)
        k4 = 0.1 * f(expected + k3)
        expected = expected + (k1 + 2 * k2 + 2 * k3 + k4) / 6
    torch.testing.assert_close(cell(x, h, torch.tensor(1.0)), expected)


def test_classic_rk4_is_exact_on_a_cubic():
    # dy/dt = 3t² written autonomously with state (t, y): classic RK4 integrates it exactly
    step = rk4_step(lambda s: torch.stack([torch.ones_like(s[0]), 3 * s[0] ** 2]),
                    torch.tensor([0.5, 0.0]), 0.7)
    torch.testing.assert_close(step, torch.tensor([1.2, 1.2 ** 3 - 0.5 ** 3]))


def test_clip_bounds_the_state_after_every_step():
    model = make_model({"kind": "node", "units": 4, "clip": 0.05},
                       {"kind": "unfold", "method": "rk4"})
    out = model.body.cell(10 * torch.randn(2, 3), torch.zeros(2, 4), torch.tensor(1.0))
    assert out.abs().max() <= 0.05


def test_ctgru_step_and_time_scales():
    model = make_model({"kind": "ctgru", "units": 2}, {"kind": "unfold"})
    cell = model.body.cell
    ln_tau = torch.tensor([math.log(10 ** (k / 2)) for k in range(8)])
    torch.testing.assert_close(cell.ln_tau, ln_tau)
    x, h_hat = torch.randn(1, 3), torch.randn(1, 2, 8)
    fused = torch.cat([x, h_hat.sum(-1)], -1)
    r = torch.softmax(-(cell.tau_r(fused).view(1, 2, 8) - ln_tau) ** 2, -1)
    q = torch.tanh(cell.detect(torch.cat([x, (r * h_hat).sum(-1)], -1)))[..., None]
    s = torch.softmax(-(cell.tau_s(fused).view(1, 2, 8) - ln_tau) ** 2, -1)
    new = ((1 - s) * h_hat + s * q) * torch.exp(-1 / ln_tau)
    torch.testing.assert_close(cell(x, h_hat, torch.tensor(1.0)), new)
    assert torch.all(new[..., 0] == 0)  # the repository's decay erases the fastest trace
    torch.testing.assert_close(cell.output(new), new.sum(-1))
    cell.decay = "paper"
    torch.testing.assert_close(cell.decay_factors(torch.tensor(0.5)),
                               torch.exp(-0.5 / torch.tensor([10 ** (k / 2) for k in range(8)])))


def test_lstm_equals_torch_lstm_with_forget_bias():
    model = make_model({"kind": "lstm", "units": 4}, {"kind": "unfold"})
    cell = model.body.cell
    ref = torch.nn.LSTMCell(3, 4)
    w, b = cell.gates.weight.detach(), cell.gates.bias.detach()
    i, j, f, o = w.chunk(4, 0)
    bi, bj, bf, bo = b.chunk(4)
    with torch.no_grad():  # torch orders gates i, f, g, o; TF orders i, j, f, o
        wt = torch.cat([i, f, j, o], 0)
        ref.weight_ih.copy_(wt[:, :3])
        ref.weight_hh.copy_(wt[:, 3:])
        ref.bias_ih.copy_(torch.cat([bi, bf + 1.0, bj, bo]))
        ref.bias_hh.zero_()
    x, h, c = torch.randn(2, 3), torch.randn(2, 4), torch.randn(2, 4)
    new = cell(x, torch.stack([h, c], -2), torch.tensor(1.0))
    h_ref, c_ref = ref(x, (h, c))
    torch.testing.assert_close(new[:, 0], h_ref)
    torch.testing.assert_close(new[:, 1], c_ref)
    torch.testing.assert_close(cell.output(new), h_ref)


def test_baseline_dense_layers_have_tf_default_init():
    model = make_model({"kind": "node", "units": 32}, {"kind": "unfold", "method": "rk4"})
    layer = model.body.cell.step
    assert torch.all(layer.bias == 0)
    assert layer.weight.abs().max() <= math.sqrt(6 / (35 + 32))


@pytest.mark.parametrize("solver", [LTCFusedConfig(), UnfoldConfig()])
def test_unrolled_solvers_refuse_odeint_and_adjoint(solver):
    assert not solver.supports_adjoint
    with pytest.raises(TypeError, match="unrolled inside a recurrent cell"):
        solver.odeint_kwargs(torch.arange(3.0))


def test_validation_of_solver_and_backprop_choices():
    from zoo.spec.schema import spec_model

    def problems(field, solver, backprop="direct"):
        spec = spec_model().model_validate({
            "data": {"kind": "irregular_sines"},
            "model": {"control": {"kind": "raw_steps"}, "field": field, "solver": solver,
                      "backprop": {"kind": backprop}, "readout": {"kind": "classify"}}})
        return [path for path, _ in compatibility(spec)]

    assert problems({"kind": "ltc"}, {"kind": "ltc_fused"}) == []
    assert problems({"kind": "node"}, {"kind": "unfold", "method": "rk4"}) == []
    assert problems({"kind": "ctrnn"}, {"kind": "ltc_fused"}) == ["model.solver.kind"]
    assert problems({"kind": "ltc"}, {"kind": "ltc_fused"}, "adjoint") == ["model.backprop.kind"]
