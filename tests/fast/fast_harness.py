"""Fast path vs generic path on the same weights and batch (shared by the fast-path tests)."""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fields"))
from field_harness import make_model, tiny_batch  # noqa: E402

METHODS = ("euler", "midpoint", "rk4")
#: float64: the fast paths are exact reformulations, so only rounding differs
RTOL64 = 1e-8
#: float32: sums are taken in a different order (e.g. a batched contraction over all stages
#: instead of step-by-step additions), so each step may differ by a few ulps (ε ≈ 1.2e-7) and
#: these differences add up over the ≤ 25 steps of these tests and through the backward pass;
#: 1e-4 of the largest magnitude is about 100× above what is observed and far below any change
#: of the model (a wrong stage time or coefficient gives errors of order 1e-2).
RTOL32 = 1e-4


def gradients(model, batch) -> dict[str, torch.Tensor]:
    model.zero_grad()
    model(batch).sin().sum().backward()
    return {n: torch.zeros_like(p) if p.grad is None else p.grad.clone()
            for n, p in model.named_parameters()}


def assert_close(fast: torch.Tensor, generic: torch.Tensor, rtol: float, name: str) -> None:
    error = (fast - generic).abs().max()
    assert error <= rtol * generic.abs().max().clamp(min=1e-30), (name, float(error))


def assert_fast_equals_generic(field: dict, method: str, *, per_step: bool = False,
                               dtype: torch.dtype = torch.float64, step_size: float = 0.4,
                               channels: int = 3, initial: str = "auto",
                               device: str = "cpu", backprop: str | dict = "direct") -> None:
    """Outputs, parameter gradients and NFE (forward, and forward + backward) of the fast path
    equal the generic path's for a batch with per-sample final indices (``step_size`` 0.4 on
    the grid 0..5 also exercises torchdiffeq's interpolation of output times between grid
    points and, with the adjoint, backward segments that do not start on the forward grid)."""
    torch.manual_seed(0)
    options = dict(channels=channels, method=method, step_size=step_size, per_step=per_step,
                   initial=initial, backprop=backprop)
    fast = make_model(field, **options).to(device, dtype)
    generic = make_model({**field}, **options).to(device, dtype)
    generic.body.implementation_used, generic.body.fast_path = "generic (requested)", None
    generic.load_state_dict(fast.state_dict())
    assert fast.body.implementation_used == "fast"
    batch = tiny_batch(fast, size=4, length=6, dtype=dtype).to(device)
    rtol = RTOL64 if dtype == torch.float64 else RTOL32
    assert_close(fast(batch), generic(batch), rtol, "output")
    assert fast.integrator.nfe == generic.integrator.nfe
    g_fast, g_generic = gradients(fast, batch), gradients(generic, batch)
    assert fast.integrator.nfe == generic.integrator.nfe
    for name in g_generic:
        assert_close(g_fast[name], g_generic[name], rtol, name)
