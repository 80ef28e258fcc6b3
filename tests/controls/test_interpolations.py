"""Hermite cubic, linear and rectilinear controls: torchcde's own paths, through the data."""

import pytest
import torch
import torchcde

from zoo import registry
from zoo.controls.hermite_cubic import HermiteCubicConfig
from zoo.controls.linear import LinearConfig
from zoo.controls.rectilinear import RectilinearConfig
from zoo.errors import InputError

NAN = float("nan")


@pytest.fixture
def data():
    gen = torch.Generator().manual_seed(0)
    times = torch.tensor([0.0, 0.5, 1.5, 2.0, 3.5, 4.0], dtype=torch.float64)
    values = torch.randn(3, 6, 2, generator=gen, dtype=torch.float64)
    return times, values


def build(cfg, times, values):
    return cfg.path(times, cfg.prepare(times, values))


@pytest.mark.parametrize("name, cls", [("hermite_cubic", HermiteCubicConfig),
                                       ("linear", LinearConfig),
                                       ("rectilinear", RectilinearConfig)])
def test_registered(name, cls):
    assert registry.get("controls", name) is cls
    assert cls().kind == name and cls.provides == {"evaluate", "derivative"}


@pytest.mark.parametrize("cfg, reference", [
    (HermiteCubicConfig(), lambda t, x: torchcde.CubicSpline(
        torchcde.hermite_cubic_coefficients_with_backward_differences(x, t=t), t=t)),
    (LinearConfig(), lambda t, x: torchcde.LinearInterpolation(
        torchcde.linear_interpolation_coeffs(x, t=t), t=t)),
])
def test_matches_torchcde_and_interpolates(cfg, reference, data):
    times, values = data
    path, ref = build(cfg, times, values), reference(times, values)
    assert torch.equal(path.grid_points, times)
    for t in torch.linspace(0, 4, 23, dtype=torch.float64):
        torch.testing.assert_close(path.evaluate(t), ref.evaluate(t), rtol=0, atol=0)
        torch.testing.assert_close(path.derivative(t), ref.derivative(t), rtol=0, atol=0)
    for k, t in enumerate(times):
        torch.testing.assert_close(path.evaluate(t), values[:, k])


def test_hermite_slopes_are_backward_differences(data):
    times, values = data
    path = build(HermiteCubicConfig(), times, values)
    slopes = (values[:, 1:] - values[:, :-1]) / (times[1:] - times[:-1]).unsqueeze(-1)
    torch.testing.assert_close(path.derivative(times[0]), slopes[:, 0])
    for k in range(1, len(times) - 1):
        # piece k starts at t_k with the slope of the interval before it
        torch.testing.assert_close(path.derivative(times[k]), slopes[:, k - 1])
        # and ends at t_{k+1} with the slope of its own interval (C¹ at the knots)
        end = times[k + 1] - 1e-9
        torch.testing.assert_close(path.derivative(end), slopes[:, k], atol=1e-6, rtol=0)


def test_linear_derivative_is_the_slope(data):
    times, values = data
    path = build(LinearConfig(), times, values)
    mid = (times[2] + times[3]) / 2
    torch.testing.assert_close(path.derivative(mid),
                               (values[:, 3] - values[:, 2]) / (times[3] - times[2]))
    torch.testing.assert_close(path.evaluate(mid), (values[:, 2] + values[:, 3]) / 2)


@pytest.mark.parametrize("cfg", [HermiteCubicConfig(), LinearConfig()])
def test_missing_values_are_filled_linearly(cfg):
    times = torch.arange(5.0, dtype=torch.float64)
    values = torch.tensor([[[NAN, 0.0], [1.0, NAN], [NAN, NAN], [3.0, 4.0], [NAN, NAN]]],
                          dtype=torch.float64)
    path = build(cfg, times, values)
    assert not path.evaluate(2.5).isnan().any()
    filled = torch.tensor([[1.0, 1.0, 2.0, 3.0, 3.0], [0.0, 4 / 3, 8 / 3, 4.0, 4.0]],
                          dtype=torch.float64).T
    for k, t in enumerate(times):
        torch.testing.assert_close(path.evaluate(t)[0], filled[k])
    # a channel that is never observed is the constant 0 path
    empty = build(cfg, times, torch.full((1, 5, 1), NAN, dtype=torch.float64))
    assert torch.equal(empty.evaluate(1.3), torch.zeros(1, 1, dtype=torch.float64))


def test_rectilinear_matches_torchcde_and_moves_time_first(data):
    times, values = data
    values = torch.cat([times.expand(3, -1).unsqueeze(-1), values], dim=-1)  # time channel 0
    path = build(RectilinearConfig(), times, values)
    ref = torchcde.LinearInterpolation(torchcde.linear_interpolation_coeffs(values, rectilinear=0))
    assert torch.equal(path.grid_points, torch.arange(11, dtype=torch.float64))
    for s in torch.linspace(0, 10, 41, dtype=torch.float64):
        assert torch.equal(path.evaluate(s), ref.evaluate(s))
        assert torch.equal(path.derivative(s), ref.derivative(s))
    for k in range(len(times)):
        torch.testing.assert_close(path.evaluate(2 * k), values[:, k])
    for k in range(len(times) - 1):  # half-way knot: new time, old values
        torch.testing.assert_close(path.evaluate(2 * k + 1),
                                   torch.cat([values[:, k + 1, :1], values[:, k, 1:]], -1))
    assert torch.equal(path.map_index(torch.tensor([0, 5, 2])), torch.tensor([0, 10, 4]))


def test_rectilinear_time_channel_option_and_missing_values():
    times = torch.arange(4.0)
    # time in channel 1; channel 0 unobserved at step 2 (held), time padded with NaN at the end
    values = torch.tensor([[[1.0, 0.0], [2.0, 1.0], [NAN, 2.0], [NAN, NAN]]])
    path = build(RectilinearConfig(time_channel=1), times, values)
    expected = torch.tensor([[1.0, 0.0], [2.0, 1.0], [2.0, 2.0], [2.0, 2.0]])
    for k in range(4):
        torch.testing.assert_close(path.evaluate(2 * k)[0], expected[k])
    with pytest.raises(InputError, match="out of range"):
        RectilinearConfig(time_channel=2).prepare(times, values)
    with pytest.raises(InputError, match="not observed at the first step"):
        RectilinearConfig(time_channel=0).prepare(times, values.flip(1))
