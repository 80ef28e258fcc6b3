"""Lean adaptive solve: torchdiffeq's ``dopri5``, step for step, on a body's stage split.

dy/dt = field(y, *inputs(t)) with ``inputs`` the state-independent part (control values,
derivatives, …). Adaptive stage times are known only when a step starts, so each step evaluates
the inputs at its five new stage times in one call, then the field at its six stages. The
accepted and rejected steps, the numbers and the NFE count are those of torchdiffeq 0.2.5
(``_impl/rk_common.py``: ``RKAdaptiveStepsizeODESolver._adaptive_step``, ``_runge_kutta_step``,
``_interp_fit``; ``_impl/dopri5.py``; ``_impl/misc.py``: ``_select_initial_step``,
``_compute_error_ratio``, ``_optimal_step_size``; ``_impl/interp.py``), without its per-call
wrappers (tuple, perturbation and counting wrappers, the (…, 7) stage tensor and its unchecked
assignments). Its tableau, interpolation and step-size helpers are imported, not copied;
the first step size is its ``_select_initial_step`` line for line (:func:`first_step`), which
also tells when that size's gradient is zero.

Times are float64 (``torch.promote_types(float64, y.dtype)``); a step from t_n of size h casts
t_n, h and t_{n+1} = t_n + h to the state's dtype D for the stages. With the Dormand–Prince
tableau (c, a, b, b̂) and k_1 = f(t_n, y_n) (FSAL: the last stage of the previous accepted step,
or f(t_0, y_0)):

    k_s = f(t_n + c_s h, y_n + h Σ_{j<s} a_sj k_j),  s = 2 … 7,  c_6 = c_7 = 1 evaluated at the
          float of D just below t_{n+1} (``Perturb.PREV``),
    y_{n+1} = y_n + h Σ_j b_j k_j  (the 7th stage's state: b = a_7·),
    e = h Σ_j (b_j − b̂_j) k_j,   r = RMS(e / (atol + rtol max(|y_n|, |y_{n+1}|))),

accepted iff r ≤ 1; either way the next size is h · min(10, max(0.9 r^(−1/5), 0.2)) (the lower
bound 1 instead of 0.2 when r < 1; 10 h when r = 0). The first size (Hairer, Nørsett & Wanner,
Solving ODEs I, II.4): with s = atol + rtol |y_0|, d_0 = RMS(y_0/s), d_1 = RMS(f_0/s),
h_0 = 0.01 d_0/d_1 (10⁻⁶ if d_0 or d_1 < 10⁻⁵),
d_2 = RMS((f(t_0 + h_0, y_0 + h_0 f_0) − f_0)/s)/h_0, h_1 = (0.01/max(d_1, d_2))^(1/5),
h = min(100 h_0, h_1). So NFE = 2 + 6 · (steps tried, accepted or rejected). The output at
t_n ≤ t ≤ t_{n+1} is the quartic through y_n, y_{n+1} and y_mid = y_n + h Σ_j m_j k_j
(``DPS_C_MID``) with slopes k_1, k_7 at x = (t − t_n)/h (also at t = t_{n+1}), from the step
that first reaches t. torchdiffeq's ``max_num_steps`` counts the steps tried per output
interval and ends the solve with an AssertionError; so does this solve.

Each sum Σ_j w_j k_j adds its terms in the order of torchdiffeq's ``torch.sum(k * w, dim=-1)``
over the stage axis, found once per dtype and device (:func:`sum_order`; where no candidate
order matches, the stacked ``torch.sum`` itself), so the states are torchdiffeq's bit for bit
wherever the field and the inputs are.

Backprop ``direct``: autograd through all of it, as through torchdiffeq. The step-size control
runs under ``no_grad`` there, so of the sizes only the first, h = min(100 h_0, h_1), depends on
the parameters (through f_0 and f(t_0 + h_0, ·)); if that step is accepted, every later
t_n = t_0 + h + … carries its gradient, and so do the stage times (through the control) and the
interpolation's x. Where that gradient is zero by construction (h_0 the constant 10⁻⁶ and
100 h_0 < h_1, as for y_0 = 0) the size is detached: the gradients are the same and the times
carry no graph. The error estimate carries no gradient and is formed without a graph.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch
from torchdiffeq._impl.dopri5 import _DORMAND_PRINCE_SHAMPINE_TABLEAU, DPS_C_MID
from torchdiffeq._impl.interp import _interp_evaluate, _interp_fit
from torchdiffeq._impl.misc import _nextafter, _optimal_step_size, _rms_norm

from .lean import StageInputs

#: adaptive torchdiffeq methods with a lean solve
ADAPTIVE = ("dopri5",)
#: dy/dt from the state and one stage's inputs (each (B, ·))
StageField = Callable[..., torch.Tensor]

#: torchdiffeq's defaults (``RKAdaptiveStepsizeODESolver.__init__``) and dopri5's order
SAFETY, IFACTOR, DFACTOR, ORDER = 0.9, 10.0, 0.2, 5
#: torchdiffeq's default ``max_num_steps``
MAX_NUM_STEPS = 2 ** 31 - 1
#: stage s = 2 … 7 reads the inputs at new stage time STAGE_TIME[s − 2] (c_6 = c_7 = 1)
STAGE_TIME = (0, 1, 2, 3, 4, 4)
#: candidate orders of ATen's sum over an innermost axis of n ≤ 7 terms, each a left fold over
#: the terms j < n: its scalar loop (four partial sums; terms 5 … 7 go into the first) and its
#: vector loop with four lanes (the tail first, then the lanes)
SUM_ORDERS = ((0, 4, 5, 6, 1, 2, 3), (4, 5, 6, 0, 1, 2, 3))


@functools.cache
def sum_order(dtype: torch.dtype, device: torch.device) -> tuple[int, ...] | None:
    """The order of :data:`SUM_ORDERS` in which ``torch.sum(x, -1)`` adds x (…, n), n = 2 … 7,
    in this dtype on this device, bit for bit; None if neither is."""
    gen = torch.Generator().manual_seed(0)
    probes = []
    for n in range(2, 8):
        x = torch.randn(4096, n, generator=gen, dtype=torch.float64)
        x = x * 10 ** (6 * torch.rand(4096, n, generator=gen, dtype=torch.float64))
        x = x.to(device, dtype)
        probes.append((x, x.sum(-1)))
    for order in SUM_ORDERS:
        if all(bool((_fold([x[:, j] for j in order if j < x.shape[1]]) == total).all())
               for x, total in probes):
            return order
    return None


def _fold(terms: list[torch.Tensor]) -> torch.Tensor:
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    return total


class _Tableau:
    """Dormand–Prince coefficients in the state's dtype (as torchdiffeq converts them), with
    each sum's non-zero terms in :func:`sum_order` (None: sum the stacked terms)."""

    def __init__(self, dtype: torch.dtype, device: torch.device):
        tableau = _DORMAND_PRINCE_SHAMPINE_TABLEAU
        self.c = tableau.alpha.to(device, dtype)[:4]  # the nodes below 1
        self.a = [row.to(device, dtype) for row in tableau.beta]
        self.error = tableau.c_error.to(device, dtype)
        self.mid = DPS_C_MID.to(device, dtype)
        order = sum_order(dtype, device)
        self.a_terms = [_terms(order, row) for row in tableau.beta]
        self.error_terms, self.mid_terms = _terms(order, tableau.c_error), _terms(order, DPS_C_MID)


def _terms(order: tuple[int, ...] | None, weights: torch.Tensor) -> tuple[int, ...] | None:
    """The positions of the non-zero weights in ``order`` (adding an exact zero changes
    nothing)."""
    if order is None:
        return None
    return tuple(j for j in order if j < len(weights) and weights[j] != 0)


def _weighted_sum(ks: list[torch.Tensor], weights: torch.Tensor,
                  terms: tuple[int, ...] | None) -> torch.Tensor:
    """Σ_j weights[j] ks[j] as torchdiffeq's ``torch.sum(k * weights, dim=-1)``."""
    if terms is None:
        return torch.sum(torch.stack(ks[:len(weights)], -1) * weights, -1)
    w = weights.unbind()
    total = ks[terms[0]] * w[terms[0]]
    for j in terms[1:]:
        total = total + ks[j] * w[j]
    return total


def first_step(f: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], t0: torch.Tensor,
               y0: torch.Tensor, f0: torch.Tensor, rtol: torch.Tensor, atol: torch.Tensor
               ) -> torch.Tensor:
    """torchdiffeq's ``_select_initial_step`` for dopri5 (order 4 there), line for line, which
    evaluates f once; detached where its gradient is zero by construction."""
    dtype, device = y0.dtype, y0.device
    scale = atol + torch.abs(y0) * rtol
    d0 = _rms_norm(y0 / scale).abs()
    d1 = _rms_norm(f0 / scale).abs()
    if d0 < 1e-5 or d1 < 1e-5:
        h0 = torch.tensor(1e-6, dtype=dtype, device=device)
    else:
        h0 = 0.01 * d0 / d1
    h0 = h0.abs()
    f1 = f(t0 + h0, y0 + h0 * f0)
    d2 = torch.abs(_rms_norm((f1 - f0) / scale) / h0)
    if d1 <= 1e-15 and d2 <= 1e-15:
        h1 = torch.max(torch.tensor(1e-6, dtype=dtype, device=device), h0 * 1e-3)
    else:
        h1 = (0.01 / max(d1, d2)) ** (1. / float(ORDER))
    h1 = h1.abs()
    step = torch.min(100 * h0, h1).to(t0.dtype)
    return step.detach() if not h0.requires_grad and 100 * h0 < h1 else step


class AdaptiveSolve:
    """Stands in for :class:`zoo.build_context.Integrator` in
    :func:`zoo.fields.trajectory.solve_at`: solves with the integrator's adaptive method by
    :func:`dopri5_solve` over a body's stage split (``func`` is ignored; the requested times set
    the steps, ``grid`` nothing, as in torchdiffeq)."""

    def __init__(self, integrator, stage_inputs: StageInputs, field: StageField):
        self.integrator, self.stage_inputs, self.field = integrator, stage_inputs, field
        self.dense_outputs = integrator.dense_outputs

    selects_rows = False

    def __call__(self, func, y0: torch.Tensor, t: torch.Tensor,
                 grid: torch.Tensor | None = None) -> torch.Tensor:
        return dopri5_solve(self.integrator, t, y0, self.stage_inputs, self.field)


def dopri5_solve(integrator, t: torch.Tensor, y0: torch.Tensor, stage_inputs: StageInputs,
                 field: StageField) -> torch.Tensor:
    """y at the increasing times ``t`` (T, *y0.shape) by torchdiffeq's dopri5 with the
    integrator's tolerances and options; adds its evaluations to ``integrator.nfe``."""
    kwargs = integrator.solver.odeint_kwargs(t)
    options = dict(kwargs["options"])
    max_steps = options.pop("max_num_steps", MAX_NUM_STEPS)
    if kwargs["method"] not in ADAPTIVE or options:
        raise ValueError(f"no lean adaptive solve for method {kwargs['method']!r} with options "
                         f"{sorted(options)}")
    if not bool((t[1:] > t[:-1]).all()):
        raise ValueError("the output times of a lean adaptive solve must increase")
    dtype, device = y0.dtype, y0.device
    time_dtype = torch.promote_types(torch.float64, y0.abs().dtype)
    rtol, atol, safety, ifactor, dfactor, zero = (
        torch.as_tensor(x, dtype=time_dtype, device=device)
        for x in (kwargs["rtol"], kwargs["atol"], SAFETY, IFACTOR, DFACTOR, 0.0))
    tab = _Tableau(dtype, device)
    t = t.to(device, time_dtype)

    def f(time: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """One evaluation at one time (the first two of the solve)."""
        integrator.nfe += 1
        return field(y, *(x.select(1, 0) for x in stage_inputs(time.to(dtype).reshape(1))))

    fsal = f(t[0], y0)
    dt = first_step(f, t[0], y0, fsal, rtol, atol)
    y, t1 = y0, t[0]
    step = None  # the last accepted step: t_n, t_{n+1}, h (in D), y_n, y_{n+1}, k_1 … k_7
    coefficients = None  # its interpolating polynomial, once an output time needs it
    outputs = [y0]
    for target in t[1:]:
        tried = 0
        while target > t1:
            if tried >= max_steps:
                raise AssertionError(f"max_num_steps exceeded ({tried}>={max_steps})")
            tried += 1
            if not torch.isfinite(dt):
                dt = zero
            t0, end = t1, t1 + dt
            if not end > t0:
                raise AssertionError(f"underflow in dt {dt.item()}")
            if not torch.isfinite(y).all():
                raise AssertionError(f"non-finite values in state `y`: {y}")
            h, last = dt.to(dtype), end.to(dtype)
            last = (_nextafter(last, last - 1) if last.requires_grad
                    else torch.nextafter(last, last - 1))
            times = torch.cat([t0.to(dtype) + tab.c * h, last.reshape(1)])
            inputs = [x.unbind(1) for x in stage_inputs(times)]
            ks = [fsal]
            for s, (row, terms) in enumerate(zip(tab.a, tab.a_terms)):
                y_end = y + _weighted_sum(ks, row * h, terms)
                ks.append(field(y_end, *(x[STAGE_TIME[s]] for x in inputs)))
            integrator.nfe += len(tab.a)
            with torch.no_grad():
                error = _weighted_sum(ks, h * tab.error, tab.error_terms)
                ratio = _rms_norm(error / (atol + rtol * torch.max(y.abs(), y_end.abs()))).abs()
            if ratio <= 1:
                step, coefficients = (t0, end, h, y, y_end, ks), None
                y, fsal, t1 = y_end, ks[-1], end
            dt = _optimal_step_size(dt, ratio, safety, ifactor, dfactor, ORDER)
        if coefficients is None:
            _, _, h, y_start, y_end, ks = step
            y_mid = y_start + _weighted_sum(ks, h * tab.mid, tab.mid_terms)
            coefficients = _interp_fit(y_start, y_end, y_mid, ks[0], ks[-1], h)
        outputs.append(_interp_evaluate(coefficients, step[0], step[1], target))
    return torch.stack(outputs)
