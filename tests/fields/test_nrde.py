"""Neural RDE of the EigenWorms baseline (docs/sources.md#nrde, #fwp-diff-nrde-field)."""

from __future__ import annotations

import pytest
import torch
from field_harness import (adjoint_and_direct_gradients, assert_gradients_close, assert_trains,
                           make_model, tiny_batch)
from torch.nn import functional as F

from zoo.model import count_parameters
from zoo.series import Batch


class PiecewisePath:
    """A log-signature-like path: piece i on [i, i+1), grid 0..L, raw first observation."""

    def __init__(self, coeffs: torch.Tensor, raw_channels: int):
        self.first_observation = coeffs[:, 0, :raw_channels]
        self.pieces = coeffs[:, 1:]
        self.grid_points = torch.arange(self.pieces.shape[1] + 1, dtype=coeffs.dtype)
        self.interval = self.grid_points[[0, -1]]

    def evaluate(self, t: torch.Tensor) -> torch.Tensor:
        return self.pieces[:, t.floor().long().clamp(0, self.pieces.shape[1] - 1)]

    def map_index(self, index: torch.Tensor) -> torch.Tensor:
        return index + 1  # window j ends at grid point j + 1


class DepthTwoStandIn:
    """Stands in for the ``logsig`` control: depth-2 log-signatures have u(u+1)/2 channels;
    coefficients are (B, 1 + L, D) with row 0 the raw first observation padded to D."""

    provides = frozenset({"evaluate"})

    def channels(self, u: int) -> int:
        return u * (u + 1) // 2

    def path(self, times: torch.Tensor, coeffs: torch.Tensor) -> PiecewisePath:
        return PiecewisePath(coeffs, next(u for u in range(1, 99) if self.channels(u) ==
                                          coeffs.shape[-1]))


@pytest.mark.parametrize("share, expected", [(True, 64_933), (False, 64_933 + 4_160)])
def test_eigenworms_parameter_count(share, expected):
    """hidden 32, hh 64, 3 layers, depth 2 on 7 channels (28), initial_dim 7, 5 classes: the
    paper's 65 K needs the shared hidden layer."""
    field = {"kind": "nrde", "hidden": 32, "hidden_hidden": 64, "layers": 3,
             "share_hidden_weights": share}
    model = make_model(field, channels=7, n_out=5, control=DepthTwoStandIn())
    assert count_parameters(model) == expected
    assert model.body.vector_field.linear_out.out_features == 32 * 28
    assert model.body.initial.net.in_features == 7


@pytest.mark.parametrize("tanh_position", ["before_out", "final"])
def test_field_structure(tanh_position):
    """Linear, 2 × [ReLU, shared Linear], then tanh before (code) or after the last linear."""
    field = {"kind": "nrde", "hidden": 4, "hidden_hidden": 6, "layers": 3,
             "tanh_position": tanh_position}
    f = make_model(field, channels=3).body.vector_field
    assert f.linears[0] is f.linears[1]
    h = torch.randn(2, 4)
    z = F.linear(h, f.linear_in.weight, f.linear_in.bias)
    shared = f.linears[0]
    for _ in range(2):
        z = F.linear(torch.relu(z), shared.weight, shared.bias)
    if tanh_position == "before_out":
        expected = F.linear(torch.tanh(z), f.linear_out.weight, f.linear_out.bias)
    else:
        expected = torch.tanh(F.linear(z, f.linear_out.weight, f.linear_out.bias))
    torch.testing.assert_close(f(h), expected.view(2, 4, 3))


def depth_two_batch(size: int = 3, pieces: int = 4, raw: int = 3) -> Batch:
    gen = torch.Generator().manual_seed(0)
    coeffs = torch.randn(size, 1 + pieces, raw * (raw + 1) // 2, generator=gen,
                         dtype=torch.float64)
    return Batch(torch.arange(pieces + 1, dtype=torch.float64), coeffs,
                 torch.zeros(size, dtype=torch.long), torch.tensor([3, 1, 2]))


def test_driven_by_the_log_signature_pieces():
    """Euler with step 1 on the grid 0..L: h ← h + F(h)·logsig_i from h(0) = Linear(x0)."""
    model = make_model({"kind": "nrde", "hidden": 4, "hidden_hidden": 5}, channels=3,
                       control=DepthTwoStandIn(), method="euler", step_size=1.0).double()
    batch = depth_two_batch()
    path = model.control.path(batch.times, batch.coeffs)
    body = model.body
    h = body.initial.net(batch.coeffs[:, 0, :3])
    states = [h]
    for i in range(path.pieces.shape[1]):
        h = h + (body.vector_field(h) @ path.pieces[:, i, :, None]).squeeze(-1)
        states.append(h)
    expected = torch.stack(states)[batch.final_index + 1, torch.arange(3)]
    torch.testing.assert_close(body(path, batch), expected)


def test_forward_and_backward_on_log_signature_pieces():
    model = make_model({"kind": "nrde", "hidden": 4, "hidden_hidden": 5}, channels=3,
                       control=DepthTwoStandIn()).double()
    assert_trains(model, depth_two_batch())


@pytest.mark.parametrize("initial, per_step", [("first_observation", False), ("zeros", False),
                                               ("first_observation", True)])
def test_forward_and_backward_on_a_spline(initial, per_step):
    model = make_model({"kind": "nrde", "hidden": 4, "hidden_hidden": 5, "layers": 2},
                       channels=3, initial=initial, per_step=per_step).double()
    assert_trains(model, tiny_batch(model))


def test_adjoint_gradients_match_direct():
    """rk4 with step 0.025 on [0, 4], float64: agreement to 2e-6 of each tensor's largest entry."""
    direct, adjoint = adjoint_and_direct_gradients(
        {"kind": "nrde", "hidden": 5, "hidden_hidden": 5})
    assert_gradients_close(direct, adjoint, rtol=2e-6)


def test_validation_needs_the_logsig_control(write_spec):
    from zoo.errors import SpecError
    from zoo.spec.validate import load_spec

    spec = {"data": {"kind": "irregular_sines"},
            "model": {"control": {"kind": "logsig", "depth": 2, "step": 2},
                      "field": {"kind": "nrde", "hidden": 4, "hidden_hidden": 4},
                      "solver": {"kind": "torchdiffeq", "method": "rk4"},
                      "readout": {"kind": "classify"}}}
    assert load_spec(write_spec(spec))[0].model.field.kind == "nrde"
    with pytest.raises(SpecError, match="model.control.kind: field 'nrde' is driven by "
                                        "log-signature windows"):
        load_spec(write_spec(spec), ["model.control={kind: natural_cubic}"])
