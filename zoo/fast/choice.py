"""Which implementation a field body runs: its fast path, or the generic torchdiffeq path.

``model.implementation: fast`` (the default) selects the fast path where the body has one and
the solve allows it: for ODE solves a torchdiffeq fixed-grid method with a tableau in
:mod:`.solve.tableau`, and a backprop mode the body's fast path serves: ``direct`` (the fast paths
backpropagate through their own steps, by autograd or a hand-written reverse pass) or, for
bodies built with ``fast_adjoint``, ``adjoint`` with the backward pass on the forward method
(:mod:`.solve.adjoint`). Bodies built with ``adaptive`` also run the adaptive methods of
:data:`.solve.adaptive.ADAPTIVE` (``dopri5``) fast, with backprop ``direct`` only: the same
accepted and rejected steps and numbers as torchdiffeq's (:mod:`.solve.adaptive`). Any other
combination falls back to the generic path with a one-line warning that names the part and the
reason; the gradient method is never changed. :func:`zoo.fast.attach` records the outcome in the
body's ``implementation_used``: ``"fast"`` or ``"generic (<reason>)"``.
"""

from __future__ import annotations

import warnings

from .solve.adaptive import ADAPTIVE
from .solve.tableau import TABLEAUX


def implementation(ctx, needs_fixed_grid: bool = True, fast_adjoint: bool = False,
                   adaptive: bool = False) -> str:
    """``"fast"`` or ``"generic (<reason>)"`` for a body built with ``ctx``."""
    model = ctx.spec.model
    if model.implementation == "generic":
        return "generic (requested)"
    method = getattr(getattr(model.solver, "method", None), "value", None)
    backprop = model.backprop
    if backprop.kind == "adjoint" and not fast_adjoint:
        return _fallback("adjoint", "model.backprop 'adjoint': this field's fast path "
                         "backpropagates through its own steps only")
    if backprop.kind == "adjoint" and backprop.adjoint_method not in (None, method):
        return _fallback(f"adjoint_method {backprop.adjoint_method}",
                         f"model.backprop.adjoint_method '{backprop.adjoint_method}': the fast "
                         "adjoint steps back with the forward method only")
    if backprop.kind not in ("direct", "adjoint"):
        return _fallback(backprop.kind, f"model.backprop '{backprop.kind}': the fast paths "
                         "serve 'direct' and 'adjoint' only")
    if adaptive and model.solver.kind == "torchdiffeq" and method in ADAPTIVE:
        if backprop.kind != "direct":
            return _fallback(f"{backprop.kind} with {method}",
                             f"model.backprop '{backprop.kind}' with solver '{method}': the lean "
                             "adaptive solve backpropagates through its own steps only")
        return "fast"
    if needs_fixed_grid and (model.solver.kind != "torchdiffeq" or method not in TABLEAUX):
        return _fallback(f"solver {method or model.solver.kind}",
                         f"model.solver '{method or model.solver.kind}': the fast paths step "
                         f"with {', '.join((*TABLEAUX, *(ADAPTIVE if adaptive else ())))} "
                         "only")
    return "fast"


def _fallback(reason: str, message: str) -> str:
    warnings.warn(f"{message}; running the generic path", stacklevel=4)
    return f"generic ({reason})"
