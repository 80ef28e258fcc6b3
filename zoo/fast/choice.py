"""Which implementation a field body runs: its fast path, or the generic torchdiffeq path.

``model.implementation: fast`` (the default) selects the fast path where the body has one and
the solve allows it: backprop ``direct`` (the fast paths backpropagate through their own steps,
by autograd or a hand-written reverse pass) and,
for ODE solves, a torchdiffeq fixed-grid method with a tableau in :mod:`.tableau`. Backprop
``adjoint`` falls back to the generic path with a warning. The body records the outcome in its
``implementation_used`` attribute: ``"fast"`` or ``"generic (<reason>)"``.
"""

from __future__ import annotations

import warnings

from .tableau import TABLEAUX


def implementation(ctx, needs_fixed_grid: bool = True) -> str:
    """``"fast"`` or ``"generic (<reason>)"`` for a body built with ``ctx``."""
    model = ctx.spec.model
    if model.implementation == "generic":
        return "generic (requested)"
    if model.backprop.kind != "direct":
        warnings.warn(f"model.backprop '{model.backprop.kind}': the fast paths backpropagate "
                      "through their own steps (backprop 'direct') only; running the generic "
                      "path", stacklevel=3)
        return f"generic ({model.backprop.kind})"
    if needs_fixed_grid:
        method = getattr(getattr(model.solver, "method", None), "value", None)
        if model.solver.kind != "torchdiffeq" or method not in TABLEAUX:
            return f"generic (solver {method or model.solver.kind})"
    return "fast"
