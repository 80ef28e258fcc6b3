"""(X(t), X′(t)) in one pass (zoo/kernels/spline_stages.py), compiled or gathered once: bit for bit
torchcde's calls."""

from __future__ import annotations

import pytest
import torch
import torchcde

from zoo.kernels.compiled import kernel
from zoo.kernels.spline_stages import value, value_and_derivative


HERMITE = torchcde.hermite_cubic_coefficients_with_backward_differences


@pytest.mark.parametrize("form", [
    pytest.param("compiled", marks=pytest.mark.skipif(kernel("spline_stages") is None,
                                                      reason="no C++ compiler")), "torch"])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
@pytest.mark.parametrize("coefficients", [torchcde.natural_cubic_coeffs, HERMITE])
def test_equals_torchcde_bit_for_bit(coefficients, dtype, form, torch_threads):
    torch_threads(2)
    gen = torch.Generator().manual_seed(0)
    times = torch.tensor([0.0, 0.7, 1.5, 3.0, 3.2, 5.0], dtype=dtype)
    values = torch.randn(3, 6, 4, generator=gen, dtype=dtype)
    path = torchcde.CubicSpline(coefficients(values, t=times), t=times)
    # stage times inside, on the knots and outside the observations; one scalar time
    for t in (torch.linspace(-0.5, 5.5, 23, dtype=dtype), times, torch.tensor(2.2, dtype=dtype)):
        for stage_last in (False, True):
            x, dx = value_and_derivative(path, t, stage_last, form=form)
            assert torch.equal(x, path.evaluate(t)) and torch.equal(dx, path.derivative(t))
            assert torch.equal(value(path, t, stage_last, form=form), x)
            if form == "compiled" and t.dim() == 1:
                assert x.mT.is_contiguous() == stage_last == dx.mT.is_contiguous()


def test_other_controls_use_their_own_calls():
    path = torchcde.LinearInterpolation(torchcde.linear_interpolation_coeffs(torch.randn(2, 5, 3)))
    t = torch.linspace(0, 4, 9)
    x, dx = value_and_derivative(path, t)
    assert torch.equal(x, path.evaluate(t)) and torch.equal(dx, path.derivative(t))
    assert torch.equal(value(path, t), x)
