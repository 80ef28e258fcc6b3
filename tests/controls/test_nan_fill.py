"""Natural cubic control, both NaN fills, against scipy's natural cubic spline.

Reference per channel: an all-NaN channel is the 0 path; otherwise the fill rule is applied
(``runs``: whole leading/trailing NaN runs take the first/last observed value; ``ends``: only
x[0] and x[-1]) and scipy.interpolate.CubicSpline(bc_type="natural") is fitted through the
non-NaN points. X(t) and dX/dt are compared at many times, between knots included.
"""

from pathlib import Path

import numpy as np
import pytest
import torch
import torchcde
from pydantic import ValidationError
from scipy.interpolate import CubicSpline

from zoo.controls.natural_cubic import NaturalCubicConfig
from zoo.controls.spline_nan import natural_cubic_coeffs_nan
from zoo.spec.validate import load_spec

NAN = float("nan")
TIMES = torch.tensor([0.0, 0.3, 1.0, 1.2, 2.5, 3.0, 3.1, 4.6, 5.0], dtype=torch.float64)
QUERY = torch.linspace(0.0, 5.0, 301, dtype=torch.float64)
PATTERNS = {  # observed (True) / NaN (False) per time
    "leading_run": [False, False, False, True, True, True, True, True, True],
    "trailing_run": [True, True, True, True, True, False, False, False, False],
    "interior_gaps": [True, False, False, True, True, False, True, False, True],
    "both_runs_and_gap": [False, False, True, False, True, True, False, False, False],
    "all_nan": [False] * 9,
    "single_interior": [False, False, False, False, True, False, False, False, False],
    "single_first": [True] + [False] * 8,
    "no_nan": [True] * 9,
}


def reference(times: np.ndarray, x: np.ndarray, nan_fill: str):
    """X and dX/dt at QUERY of one channel, fill rule then scipy's natural cubic spline."""
    q = QUERY.numpy()
    obs = np.flatnonzero(~np.isnan(x))
    if obs.size == 0:
        return np.zeros_like(q), np.zeros_like(q)
    x = x.copy()
    if nan_fill == "runs":
        x[:obs[0]], x[obs[-1] + 1:] = x[obs[0]], x[obs[-1]]
    else:
        x[0] = x[0] if not np.isnan(x[0]) else x[obs[0]]
        x[-1] = x[-1] if not np.isnan(x[-1]) else x[obs[-1]]
    keep = ~np.isnan(x)
    spline = CubicSpline(times[keep], x[keep], bc_type="natural")
    return spline(q), spline(q, 1)


def data():
    """(2, 9, C) float64: series 0 has one pattern per channel, series 1 the reversed order."""
    gen = torch.Generator().manual_seed(0)
    values = torch.randn(2, len(TIMES), len(PATTERNS), generator=gen, dtype=torch.float64)
    masks = torch.tensor(list(PATTERNS.values())).T  # (9, C)
    values[0][~masks] = NAN
    values[1][~masks.flip(-1)] = NAN
    return values


def build(nan_fill: str, values: torch.Tensor):
    cfg = NaturalCubicConfig(nan_fill=nan_fill)
    return cfg.path(TIMES, cfg.prepare(TIMES, values))


@pytest.mark.parametrize("nan_fill", ["runs", "ends"])
def test_matches_independent_spline(nan_fill):
    values = data()
    path = build(nan_fill, values)
    x = torch.stack([path.evaluate(t) for t in QUERY], dim=1)       # (2, Q, C)
    dx = torch.stack([path.derivative(t) for t in QUERY], dim=1)
    for n in range(values.shape[0]):
        for c in range(values.shape[-1]):
            ref_x, ref_dx = reference(TIMES.numpy(), values[n, :, c].numpy(), nan_fill)
            np.testing.assert_allclose(x[n, :, c].numpy(), ref_x, rtol=0, atol=1e-10)
            np.testing.assert_allclose(dx[n, :, c].numpy(), ref_dx, rtol=0, atol=1e-10)


def test_no_nan_modes_equal():
    values = torch.randn(3, len(TIMES), 2, generator=torch.Generator().manual_seed(1),
                         dtype=torch.float64)
    runs = NaturalCubicConfig(nan_fill="runs").prepare(TIMES, values)
    ends = NaturalCubicConfig(nan_fill="ends").prepare(TIMES, values)
    torch.testing.assert_close(runs, ends, rtol=0, atol=0)


def test_modes_differ_on_leading_run():
    values = data()[:1, :, :1]  # the leading run of length 3
    runs, ends = build("runs", values), build("ends", values)
    inside = QUERY[QUERY < TIMES[3]]
    gap = max((runs.evaluate(t) - ends.evaluate(t)).abs().max().item() for t in inside)
    assert gap > 1e-2
    for t in TIMES[:3]:  # runs has knots at the first observed value there, ends does not
        torch.testing.assert_close(runs.evaluate(t), values[:, 3], rtol=0, atol=1e-12)
    assert (ends.evaluate(TIMES[1]) - values[:, 3]).abs().item() > 1e-2


def test_default_and_validation():
    assert NaturalCubicConfig().nan_fill == "runs"
    with pytest.raises(ValidationError):
        NaturalCubicConfig(nan_fill="ffill")


def test_fwp_ncde_reproductions_fill_ends():
    folder = Path(__file__).resolve().parents[2] / "specs" / "irie2022"
    specs = sorted(p for p in folder.rglob("*.yaml") if "_base" not in p.parts)
    cubic = [s for s in (load_spec(p)[0] for p in specs) if s.model.control.kind == "natural_cubic"]
    assert cubic and all(s.model.control.nan_fill == "ends" for s in cubic)


@pytest.mark.parametrize("nan_fill, reference", [
    ("ends", torchcde.natural_cubic_spline_coeffs), ("runs", torchcde.natural_cubic_coeffs)])
def test_batched_coefficients_equal_torchcdes_scalar_loop(nan_fill, reference):
    """The batched computation gives torchcde's per-scalar-series coefficients, on irregular
    times, for every NaN pattern: none, sparse, dense, leading and trailing runs, a single
    observation, no observation."""
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(12, 17, 6, dtype=torch.float64, generator=gen)
    x[torch.rand(12, 17, 6, generator=gen) < torch.linspace(0.0, 0.9, 6)] = float("nan")
    x[0, :, 0] = float("nan")
    x[1, :, 1], x[1, 5, 1] = float("nan"), 2.0
    x[2, :4, 2], x[2, -3:, 2] = float("nan"), float("nan")
    t = torch.sort(torch.rand(17, dtype=torch.float64, generator=gen) * 10).values
    ours = NaturalCubicConfig(nan_fill=nan_fill).prepare(t, x)
    torch.testing.assert_close(ours, reference(x, t=t), rtol=1e-10, atol=1e-10)


def test_chunked_coefficients_equal_all_at_once():
    """Computing a few series at a time (bounded memory) gives exactly the all-at-once result,
    also for an unbatched (L, C) input."""
    gen = torch.Generator().manual_seed(2)
    x = torch.randn(3, 5, 11, 4, generator=gen)
    x[torch.rand(x.shape, generator=gen) < 0.6] = float("nan")
    t = torch.arange(11.0)
    whole = natural_cubic_coeffs_nan(x, t, "ends", rows_per_chunk=10**9)
    for rows in (1, 4, 9):  # one series per chunk; uneven chunks
        chunked = natural_cubic_coeffs_nan(x, t, "ends", rows_per_chunk=rows)
        torch.testing.assert_close(chunked, whole, rtol=0, atol=0)
    torch.testing.assert_close(natural_cubic_coeffs_nan(x[1, 2], t, "ends", rows_per_chunk=4),
                               whole[1, 2], rtol=0, atol=0)
