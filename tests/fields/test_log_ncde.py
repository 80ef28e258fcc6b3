"""Log neural CDE (docs/fields/log_ncde.md, docs/sources.md#lncde): Lie brackets, the log-ODE
step, depth 1 as the CDE on window increments, gradients, the Lip(2) penalty, a tiny run."""

from __future__ import annotations

import pysiglib
import pytest
import torch
from field_harness import assert_gradients_close, make_model, parameter_gradients

from zoo.cli.main import main
from zoo.controls.linear import LinearConfig
from zoo.controls.logsig import LogSigConfig
from zoo.errors import SpecError
from zoo.fields.log_ncde import LogNCDEField, lie_brackets
from zoo.model import count_parameters
from zoo.series import Batch
from zoo.spec.sections import TrainSpec
from zoo.spec.validate import load_spec
from zoo.training.recipe import weight_penalty

SMALL = {"kind": "log_ncde", "hidden": 4, "hidden_hidden": 5, "layers": 2, "init_scale": 1.0}


def field64(channels: int = 3, hidden: int = 4) -> LogNCDEField:
    torch.manual_seed(0)
    return LogNCDEField(channels, hidden, width=5, layers=2, init_scale=1.0).double()


def explicit_bracket(field: LogNCDEField, h: torch.Tensor, j: int, k: int) -> torch.Tensor:
    """[f_j, f_k](h) = (J f_k) f_j − (J f_j) f_k from the full Jacobian of one state h (h,)."""
    jac = torch.autograd.functional.jacobian(field, h)  # (C, h, h): d f_c / d h
    f = field(h)
    return jac[k] @ f[j] - jac[j] @ f[k]


def log_ode_rhs(field: LogNCDEField, h: torch.Tensor, piece: torch.Tensor) -> torch.Tensor:
    """f(h)·λ¹ + Σ_{j<k} [f_j, f_k](h) λ²_jk for one state (h,), by explicit Jacobians."""
    c = field.channels
    out = field(h).T @ piece[:c]
    for p, (j, k) in enumerate(pysiglib.lyndon_words_of_length(c, 2)):
        out = out + explicit_bracket(field, h, j, k) * piece[c + p]
    return out


def test_lie_brackets_match_explicit_jacobians():
    field = field64()
    h = torch.randn(2, 4, dtype=torch.float64)
    first, second = torch.triu_indices(3, 3, 1)
    brackets = lie_brackets(field, h, field(h), first, second)
    assert brackets.shape == (3, 2, 4)
    for b in range(2):
        for p, (j, k) in enumerate(zip(first.tolist(), second.tolist())):
            torch.testing.assert_close(brackets[p, b], explicit_bracket(field, h[b], j, k))
    swapped = lie_brackets(field, h, field(h), second, first)
    torch.testing.assert_close(swapped, -brackets)  # antisymmetric


def test_bracket_pairs_follow_the_controls_lyndon_words():
    """Depth-2 channels of the logsig control: increments, then the Lévy areas of the words
    jk, j < k, in pysiglib's order; the body pairs the brackets the same way."""
    model = make_model(SMALL, channels=4, control=LogSigConfig(depth=2, step=2))
    pairs = list(zip(model.body.first.tolist(), model.body.second.tolist()))
    assert pairs == pysiglib.lyndon_words_of_length(4, 2)
    x = torch.randn(1, 3, 2, dtype=torch.float64)
    dx = x.diff(dim=1)[0]
    levy = 0.5 * (dx[0, 0] * dx[1, 1] - dx[0, 1] * dx[1, 0])
    logsig = LogSigConfig(depth=2, step=2).prepare(torch.arange(3.0), x)[0, 1]
    torch.testing.assert_close(logsig, torch.stack([*(x[0, -1] - x[0, 0]), levy]))


def windows_batch(model, length: int = 5, final=(4, 4, 2)) -> Batch:
    gen = torch.Generator().manual_seed(1)
    times = torch.arange(length, dtype=torch.float64)
    values = torch.randn(3, length, model.shape.input_channels, generator=gen,
                         dtype=torch.float64)
    return Batch(times, model.control.prepare(times, values), torch.zeros(3, dtype=torch.long),
                 torch.tensor(final))


def test_one_heun_step_per_window_by_hand():
    """heun2, step 1, depth 2, two windows: window i on (i, i+1], window 0 at 0, so
    h1 = h0 + (G₀(h0) + G₀(h0 + G₀(h0)))/2 and h2 = h1 + (G₀(h1) + G₁(h1 + G₀(h1)))/2."""
    model = make_model(SMALL, channels=3, control=LogSigConfig(depth=2, step=2),
                       method="heun2", step_size=1.0).double()
    batch = windows_batch(model)
    path = model.control.path(batch.times, batch.coeffs)
    body, field = model.body, model.body.vector_field
    expected = []
    for b in range(3):
        h = body.initial.net(batch.coeffs[b, 0, :3])
        pieces = batch.coeffs[b, 1:]
        states = [h]
        for i in range(2):
            k1 = log_ode_rhs(field, h, pieces[max(i - 1, 0)])
            k2 = log_ode_rhs(field, h + k1, pieces[i])
            h = h + (k1 + k2) / 2
            states.append(h)
        expected.append(states[int(path.map_index(batch.final_index[b]).clamp(max=2))])
    torch.testing.assert_close(body(path, batch), torch.stack(expected))


@pytest.mark.parametrize("method, step", [("heun2", 1.0), ("rk4", 0.5), ("euler", 0.25)])
def test_depth_one_is_the_cde_on_window_increments(method, step):
    """Depth 1, windows of 2 steps: the CDE dh = f(h) dX on the linear path through every
    second observation, on the time grid 0, 1, 2, …: the same numbers."""
    windows = make_model(SMALL, channels=3, control=LogSigConfig(depth=1, step=2),
                         method=method, step_size=step).double()
    linear = make_model(SMALL, channels=3, control=LinearConfig(), method=method,
                        step_size=step).double()
    linear.load_state_dict(windows.state_dict())
    batch = windows_batch(windows, length=9, final=(8, 4, 2))
    gen = torch.Generator().manual_seed(1)
    values = torch.randn(3, 9, 3, generator=gen, dtype=torch.float64)[:, ::2]
    times = torch.arange(5, dtype=torch.float64)
    knots = Batch(times, linear.control.prepare(times, values), batch.y, torch.tensor([4, 2, 1]))
    torch.testing.assert_close(windows(batch), linear(knots), rtol=1e-12, atol=1e-12)


def test_parameter_count_and_no_parameters_for_the_brackets():
    """The code's EigenWorms sizes (hidden 128, vf_width 32, vf_depth 2) on 6 channels plus
    time, 5 classes: MLP 128→32→32→7·128, Linear(7→128), readout Linear(128→5). The Lie
    brackets add no parameters: depth 1 and 2 have the same count."""
    field = {"kind": "log_ncde", "hidden": 128, "hidden_hidden": 32, "layers": 2}
    mlp = (128 * 32 + 32) + (32 * 32 + 32) + (32 * 7 * 128 + 7 * 128)
    for depth in (1, 2):
        model = make_model(field, channels=7, n_out=5, control=LogSigConfig(depth=depth, step=12))
        assert count_parameters(model.body.vector_field) == mlp == 34_752
        assert count_parameters(model) == mlp + (7 * 128 + 128) + (128 * 5 + 5) == 36_421


def test_initialisation_divided_by_init_scale():
    torch.manual_seed(3)
    plain = LogNCDEField(3, 4, 5, 2, init_scale=1.0)
    torch.manual_seed(3)
    scaled = LogNCDEField(3, 4, 5, 2, init_scale=1000.0)
    for a, b in zip(plain.parameters(), scaled.parameters()):
        torch.testing.assert_close(a / 1000, b)


def test_field_is_tanh_of_a_silu_mlp_reshaped_to_columns():
    field = field64()
    h = torch.randn(2, 4, dtype=torch.float64)
    z = h
    for linear in field.linears[:-1]:
        z = torch.nn.functional.silu(linear(z))
    out = torch.tanh(field.linears[-1](z))  # (2, 3·4): channel-major, as the code's reshape
    torch.testing.assert_close(field(h), out.view(2, 3, 4))


def test_gradcheck_through_the_solve():
    """Gradients of the features w.r.t. every parameter and the log-signature pieces, float64."""
    field = {**SMALL, "hidden": 2, "hidden_hidden": 3, "layers": 1}
    model = make_model(field, channels=2, control=LogSigConfig(depth=2, step=2),
                       method="heun2", step_size=0.5).double()
    batch = windows_batch(model, final=(4, 2, 4))
    names = [n for n, _ in model.named_parameters()]

    def features(coeffs, *params):
        state = dict(zip(names, params))
        path = model.control.path(batch.times, coeffs)
        return torch.func.functional_call(model.body, {n.removeprefix("body."): p
                                                       for n, p in state.items()
                                                       if n.startswith("body.")},
                                          (path, batch))

    inputs = (batch.coeffs.clone().requires_grad_(),
              *(p.detach().clone().requires_grad_() for p in model.parameters()))
    assert torch.autograd.gradcheck(features, inputs, eps=1e-6, atol=1e-6)


def test_adjoint_gradients_match_direct():
    """rk4 with step 0.025 over two depth-2 windows, float64: the continuous adjoint's parameter
    gradients agree with backprop through the steps to 2e-4 of each tensor's largest entry.
    The drive jumps at the window ends, where a stage reads the window before, so the two
    discretisations differ by O(step²) (seen: 1.4e-3, 3.7e-4, 9.4e-5 at steps 0.1, 0.05,
    0.025); steps that straddle the window ends (0.07) differ by O(step)."""
    control = LogSigConfig(depth=2, step=2)
    torch.manual_seed(0)
    direct = make_model(SMALL, channels=3, control=control, step_size=0.025).double()
    adjoint = make_model(SMALL, channels=3, control=control, step_size=0.025,
                         backprop="adjoint").double()
    adjoint.load_state_dict(direct.state_dict())
    batch = windows_batch(direct)
    assert_gradients_close(parameter_gradients(direct, batch),
                           parameter_gradients(adjoint, batch), rtol=2e-4)


def test_penalty_is_the_codes_lip2_term_added_to_the_loss():
    """λ Σ_layers (mean_r ‖W_r‖₂ + ‖b‖₂) over the MLP, on top of train.weight_penalty."""
    model = make_model({**SMALL, "penalty": 0.01}, channels=3,
                       control=LogSigConfig(depth=2, step=2))
    layers = model.body.vector_field.linears
    lip2 = sum(torch.stack([row.norm() for row in lin.weight]).mean() + lin.bias.norm()
               for lin in layers)
    torch.testing.assert_close(weight_penalty(model, TrainSpec()), 0.01 * lip2)
    both = weight_penalty(model, TrainSpec(weight_penalty=0.5))
    torch.testing.assert_close(both, 0.01 * lip2 + 0.5 * sum(p.norm() for p in
                                                              model.parameters()))
    unpenalised = make_model(SMALL, channels=3, control=LogSigConfig(depth=2, step=2))
    assert weight_penalty(unpenalised, TrainSpec()) == 0.0


def test_per_step_features_read_each_observations_window():
    """Per-step tasks: the state where each observation's first window ends; the last
    observation's is the final state."""
    model = make_model(SMALL, channels=3, control=LogSigConfig(depth=2, step=2),
                       per_step=True, method="heun2").double()
    batch = windows_batch(model, final=(4, 4, 4))
    path = model.control.path(batch.times, batch.coeffs)
    steps = model.body(path, batch)
    assert steps.shape == (3, 5, 4)
    model.body.per_step = False
    torch.testing.assert_close(steps[:, -1], model.body(path, batch))
    torch.testing.assert_close(steps[:, 1], steps[:, 2])  # both read the end of window 0


TINY = {
    "data": {"kind": "irregular_sines", "n_train": 32, "n_val": 16, "n_test": 16, "length": 9},
    "model": {
        "control": {"kind": "logsig", "depth": 2, "step": 2},
        "field": {"kind": "log_ncde", "hidden": 6, "hidden_hidden": 6, "layers": 2,
                  "penalty": 1.0e-3},
        "solver": {"kind": "torchdiffeq", "method": "heun2", "step_size": 1.0},
        "readout": {"kind": "classify"},
    },
    "train": {"epochs": 2, "batch_size": 16, "optimizer": {"lr": 0.01}},
}


def test_validation_needs_the_logsig_control_of_depth_1_or_2(write_spec):
    spec, _ = load_spec(write_spec(TINY))
    assert spec.model.field.kind == "log_ncde"
    for override, where in [("model.control.depth=3", "model.control.depth"),
                            ("model.control={kind: linear}", "model.control.kind")]:
        with pytest.raises(SpecError) as info:
            load_spec(write_spec(TINY), [override])
        assert where in str(info.value)


def test_zoo_run_end_to_end(write_spec, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code = main(["run", str(write_spec(TINY)), "--no-progress"])
    assert code == 0, capsys.readouterr().err
