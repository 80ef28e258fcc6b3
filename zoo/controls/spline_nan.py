"""Natural cubic spline coefficients of series with missing values, for all series at once.

torchcde computes them one scalar series at a time in Python when any value is NaN (hours for
PhysioNet Sepsis); this module gives the same coefficients with batched tensor operations. Per
scalar series x (length L, NaN where unobserved) on the grid t:

1. fill the ends: ``ends`` sets x[0] and x[-1] (if NaN) to the first and last observation
   (torchcde's ``natural_cubic_spline_coeffs``); ``runs`` fills the whole leading and trailing
   NaN runs (``natural_cubic_coeffs``); a series with no observation gives zero coefficients;
2. the knots are the n non-NaN points (τ_k, x_k): the natural spline's knot derivatives D solve
   the tridiagonal system r_{k-1} D_{k-1} + 2(r_{k-1} + r_k) D_k + r_k D_{k+1}
   = 3(Δx_{k-1} r_{k-1}² + Δx_k r_k²), r_k = 1/(τ_{k+1} − τ_k), r_{-1} = r_{n-1} = 0;
3. each grid interval [t_i, t_{i+1}) lies in the knot interval k = (knots at or before i) − 1,
   whose cubic is re-expanded around t_i: with o = τ_k − t_i and the knot piece's (a, b, 2c, 3d),
   a' = a + o((2c/2 − 3d·o/3)·o − b), b' = b + (3d·o − 2c)·o, 2c' = 2c − 2·3d·o, 3d' = 3d.
Returns torchcde's layout: (..., L − 1, 4C) = [a, b, 2c, 3d] along the channels.
"""

from __future__ import annotations

from typing import Literal

import torch


def _fill_ends(x: torch.Tensor, observed: torch.Tensor, fill: Literal["runs", "ends"]
               ) -> torch.Tensor:
    """``x`` (M, L) with its leading/trailing NaNs filled as ``fill`` says (rows observed once
    at least)."""
    length = x.shape[-1]
    index = torch.arange(length, device=x.device).expand_as(x)
    first = torch.where(observed, index, length).amin(-1, keepdim=True)
    last = torch.where(observed, index, -1).amax(-1, keepdim=True)
    first_value = x.gather(-1, first.clamp(max=length - 1))
    last_value = x.gather(-1, last.clamp(min=0))
    if fill == "runs":
        lead, trail = index < first, index > last
    else:
        lead = (index == 0) & (first > 0)
        trail = (index == length - 1) & (last < length - 1)
    return torch.where(lead, first_value, torch.where(trail, last_value, x))


def _thomas(lower: torch.Tensor, diag: torch.Tensor, upper: torch.Tensor,
            rhs: torch.Tensor) -> torch.Tensor:
    """Solve the batched tridiagonal systems (M, L): ``lower[i]`` couples i to i−1, ``upper[i]``
    i to i+1 (swept along L with the rows contiguous)."""
    lower, diag, upper, rhs = (v.t().contiguous() for v in (lower, diag, upper, rhs))
    length = diag.shape[0]
    c, d = torch.empty_like(diag), torch.empty_like(rhs)
    c[0], d[0] = upper[0] / diag[0], rhs[0] / diag[0]
    for i in range(1, length):
        denom = diag[i] - lower[i] * c[i - 1]
        c[i] = upper[i] / denom
        d[i] = (rhs[i] - lower[i] * d[i - 1]) / denom
    for i in range(length - 2, -1, -1):
        d[i] -= c[i] * d[i + 1]
    return d.t()


def _scalar_coeffs(t: torch.Tensor, x: torch.Tensor, fill: Literal["runs", "ends"]
                   ) -> tuple[torch.Tensor, ...]:
    """a, b, 2c, 3d (each (M, L − 1)) of the scalar series ``x`` (M, L) on ``t`` (L,)."""
    rows, length = x.shape
    empty = torch.isnan(x).all(-1)
    x = _fill_ends(torch.where(empty[:, None], torch.zeros_like(x), x), ~torch.isnan(x), fill)
    knot = ~torch.isnan(x)
    n = knot.sum(-1, keepdim=True)
    order = torch.argsort((~knot).to(torch.int8), dim=-1, stable=True)  # knots first, in order
    tau = t.expand(rows, length).gather(-1, order)
    xk = x.gather(-1, order)
    slot = torch.arange(length, device=x.device).expand(rows, length)
    real = slot[:, :-1] < n - 1  # the knot intervals that exist
    h = torch.where(real, tau.diff(dim=-1), torch.ones_like(tau[:, 1:]))
    r = torch.where(real, h.reciprocal(), torch.zeros_like(h))
    dx = torch.where(real, xk.diff(dim=-1), torch.zeros_like(h))
    zero = torch.zeros_like(x[:, :1])
    r_before, r_after = torch.cat([zero, r], -1), torch.cat([r, zero], -1)
    diag = 2 * (r_before + r_after)
    diag = torch.where(slot < n, diag, torch.ones_like(diag))  # padding: D = 0, decoupled
    scaled = dx * r * r
    rhs = 3 * (torch.cat([zero, scaled], -1) + torch.cat([scaled, zero], -1))
    deriv = _thomas(r_before, diag, r_after, rhs)
    a_k, b_k = xk[:, :-1], deriv[:, :-1]
    two_c_k = (6 * dx * r - 4 * deriv[:, :-1] - 2 * deriv[:, 1:]) * r
    three_d_k = (-6 * dx * r + 3 * (deriv[:, :-1] + deriv[:, 1:])) * r * r
    piece = (knot[:, :-1].cumsum(-1) - 1).clamp(min=0)  # knot interval of each grid interval
    a_k, b_k, two_c_k, three_d_k = (v.gather(-1, piece) for v in (a_k, b_k, two_c_k, three_d_k))
    offset = tau.gather(-1, piece) - t[:-1]
    a = a_k + ((0.5 * two_c_k - three_d_k * offset / 3) * offset - b_k) * offset
    b = b_k + (three_d_k * offset - two_c_k) * offset
    two_c = two_c_k - 2 * three_d_k * offset
    out = [a, b, two_c, three_d_k]
    return tuple(torch.where(empty[:, None], torch.zeros_like(v), v) for v in out)


ROWS_PER_CHUNK = 1 << 16
"""Scalar series computed together: the intermediates of one chunk take ~30 × its size (about
0.6 GB at length 72), not 30 × the dataset (15 GB for PhysioNet Sepsis with OI)."""


def natural_cubic_coeffs_nan(values: torch.Tensor, times: torch.Tensor,
                             fill: Literal["runs", "ends"],
                             rows_per_chunk: int = ROWS_PER_CHUNK) -> torch.Tensor:
    """Coefficients of ``values`` (..., L, C) with NaNs, in torchcde's layout (..., L − 1, 4C).

    The series are independent: they are computed ``rows_per_chunk`` scalar series at a time
    into one output, with the same result as all at once.
    """
    *batch, length, channels = values.shape
    series = values.reshape(-1, length, channels)
    out = values.new_empty(series.shape[0], length - 1, 4 * channels)
    step = max(1, rows_per_chunk // channels)
    t = times.to(values.dtype)
    for start in range(0, series.shape[0], step):
        chunk = series[start:start + step]
        scalars = chunk.transpose(-1, -2).reshape(-1, length)
        parts = _scalar_coeffs(t, scalars, fill)
        out[start:start + step] = torch.cat(
            [p.reshape(-1, channels, length - 1).transpose(-1, -2) for p in parts], dim=-1)
    return out.reshape(*batch, length - 1, 4 * channels)
