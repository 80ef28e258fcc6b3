"""Log-signature window control: windows, log-signatures by hand, the piecewise-constant path."""

import importlib.util
from itertools import combinations

import pysiglib
import pytest
import torch

from zoo import registry
from zoo.controls.logsig import LogSigConfig
from zoo.errors import InputError

NAN = float("nan")


def series(n=2, length=13, channels=3, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return torch.arange(float(length)), torch.randn(n, length, channels, generator=gen,
                                                     dtype=torch.float64)


def levy_areas(window):
    """½∫(x_i dx_j − x_j dx_i) relative to the start, i < j, of a piecewise-linear window (P, C)."""
    rel, inc = window[:-1] - window[0], window[1:] - window[:-1]
    return torch.stack([0.5 * (rel[:, i] * inc[:, j] - rel[:, j] * inc[:, i]).sum()
                        for i, j in combinations(range(window.shape[1]), 2)])


def test_registered_and_channels():
    assert registry.get("controls", "logsig") is LogSigConfig
    assert LogSigConfig.provides == {"evaluate", "derivative"}
    assert LogSigConfig(depth=1).channels(7) == 7
    assert LogSigConfig(depth=2).channels(7) == 28  # EigenWorms: 7 + 21 Lévy areas
    assert LogSigConfig(depth=3).channels(2) == 5   # Lyndon words 0, 1, 01, 001, 011


def test_depth_one_is_window_increments():
    times, x = series()
    cfg = LogSigConfig(depth=1, step=4)
    path = cfg.path(times, cfg.prepare(times, x))
    # windows [0, 4], [4, 8], [8, 12]: step + 1 points, shared end points
    expected = torch.stack([x[:, 4] - x[:, 0], x[:, 8] - x[:, 4], x[:, 12] - x[:, 8]], dim=1)
    for i in range(3):
        torch.testing.assert_close(path.evaluate(i + 0.5), expected[:, i])


def test_depth_two_adds_levy_areas():
    times, x = series(length=11)
    cfg = LogSigConfig(depth=2, step=3, window=5)  # windows [0, 4], [3, 7], [6, 10]
    path = cfg.path(times, cfg.prepare(times, x))
    assert path.pieces == 3
    for i, start in enumerate((0, 3, 6)):
        for b in range(x.shape[0]):
            w = x[b, start:start + 5]
            expected = torch.cat([w[-1] - w[0], levy_areas(w)])
            torch.testing.assert_close(path.evaluate(float(i))[b], expected)


def test_eigenworms_window_count_and_grid():
    length = 17_984
    times, x = series(n=1, length=length, channels=1)
    cfg = LogSigConfig(depth=1, step=4)
    coeffs = cfg.prepare(times, x)
    assert coeffs.shape == (1, 1 + 4_495, 1)
    path = cfg.path(times, coeffs)
    assert path.pieces == 4_495
    assert torch.equal(path.grid_points, torch.arange(4_497, dtype=torch.float64))
    assert path.interval.tolist() == [0.0, 4_496.0]
    torch.testing.assert_close(path.evaluate(4_494.0)[0], x[0, 17_980] - x[0, 17_976])
    # the full-length series ends at the last grid point; observation 99 is read by window 24
    # ([96, 100]), which ends at grid point 25
    assert path.map_index(torch.tensor([length - 1, 99, 100, 101, 4, 0])).tolist() == \
        [4_496, 25, 25, 26, 1, 1]


def test_piecewise_constant_path():
    times, x = series(length=17)  # 4 windows
    cfg = LogSigConfig(depth=2)
    path = cfg.path(times, cfg.prepare(times, x))
    pieces = cfg.prepare(times, x)[:, 1:]
    assert pieces.shape == (2, 4, 6)
    for t, i in [(0.0, 0), (0.99, 0), (1.0, 1), (2.5, 2), (3.0, 3), (4.0, 3), (4.9, 3), (5.0, 3)]:
        assert torch.equal(path.evaluate(torch.tensor(t)), pieces[:, i])
        assert torch.equal(path.derivative(t), pieces[:, i])
    assert torch.equal(path.first_observation, x[:, 0])
    assert path.interval.tolist() == [0.0, 5.0]


def test_missing_values_forward_filled_then_zero():
    times, x = series(n=1, length=9, channels=2)
    x[0, 3, 0] = x[0, 4, 0] = NAN    # filled with x[0, 2, 0]
    x[0, :2, 1] = NAN                # nothing to fill from: 0
    filled = x.clone()
    filled[0, 3:5, 0] = x[0, 2, 0]
    filled[0, :2, 1] = 0.0
    cfg = LogSigConfig(depth=2, step=4)
    coeffs = cfg.prepare(times, x)
    assert not coeffs.isnan().any()
    assert torch.equal(coeffs, cfg.prepare(times, filled))
    torch.testing.assert_close(cfg.path(times, coeffs).first_observation, torch.tensor(
        [[x[0, 0, 0], 0.0]], dtype=torch.float64))


def test_too_short_series_is_a_clear_error():
    times, x = series(length=4)
    with pytest.raises(InputError, match="fewer than one window of 5"):
        LogSigConfig(step=4).prepare(times, x)


def test_words_basis_is_lyndon_word_coefficients_of_the_tensor_log():
    """signatory's default "words" mode: the tensor logarithm read at the Lyndon words."""
    times, x = series(length=5, channels=3)
    cfg = LogSigConfig(depth=3, step=4)
    ours = cfg.path(times, cfg.prepare(times, x)).evaluate(0.0)
    expanded = pysiglib.log_sig(x.contiguous(), 3, method=0)
    index = [pysiglib.word_to_idx(w, 3) for w in pysiglib.lyndon_words(3, 3)]
    torch.testing.assert_close(ours, expanded[:, index])


@pytest.mark.skipif(importlib.util.find_spec("signatory") is None, reason="needs signatory")
def test_signatory_backend_matches_pysiglib():
    times, x = series(length=21)
    for depth in (1, 2, 3):
        ours = LogSigConfig(depth=depth).prepare(times, x)
        theirs = LogSigConfig(depth=depth, backend="signatory").prepare(times, x)
        torch.testing.assert_close(ours, theirs)


@pytest.mark.skipif(importlib.util.find_spec("signatory") is not None, reason="signatory present")
def test_missing_signatory_backend_is_reported():
    cfg = LogSigConfig(backend="signatory")
    [(where, message)] = cfg.check(spec=None)
    assert where == "model.control.backend" and "not installed" in message
    times, x = series()
    with pytest.raises(InputError, match="backend: pysiglib"):
        cfg.prepare(times, x)
