import math

import torch

from zoo.controls.raw_steps import RawStepsConfig, forward_fill

NAN = math.nan


def test_forward_fill_last_observed_and_leading_zero():
    values = torch.tensor([[[NAN, 1.0, NAN],
                            [2.0, NAN, NAN],
                            [NAN, 3.0, NAN],
                            [NAN, NAN, NAN],
                            [5.0, NAN, NAN]]])
    expected = torch.tensor([[[0.0, 1.0, 0.0],
                              [2.0, 1.0, 0.0],
                              [2.0, 3.0, 0.0],
                              [2.0, 3.0, 0.0],
                              [5.0, 3.0, 0.0]]])
    assert torch.equal(forward_fill(values), expected)


def test_observed_values_are_kept_exactly():
    values = torch.randn(3, 6, 2)
    assert torch.equal(forward_fill(values), values)


def test_path_offers_steps_on_the_shared_grid():
    control = RawStepsConfig()
    assert control.provides == frozenset({"steps"})
    times = torch.tensor([0.0, 0.5, 2.0])
    values = torch.tensor([[[1.0], [NAN], [3.0]], [[NAN], [2.0], [NAN]]])
    path = control.path(times, control.prepare(times, values))
    assert torch.equal(path.values, torch.tensor([[[1.0], [1.0], [3.0]], [[0.0], [2.0], [2.0]]]))
    assert torch.equal(path.times, times)
    assert torch.equal(path.grid_points, times)
    assert path.interval.tolist() == [0.0, 2.0]
    assert control.channels(5) == 5
