"""Fast paths of the solved bodies (papers a, c: NCDE, matrix NCDE, Jacobian NCDE, GRU-ODE,
NRDE): the body's state-independent stage inputs at every stage time in one call, then only the
state-dependent part of the field in the steps (:mod:`zoo.fast.solve.lean`); with backprop
``adjoint`` the continuous adjoint on the same split (:mod:`zoo.fast.solve.adjoint`); with an
adaptive method the lean ``dopri5`` (:mod:`zoo.fast.solve.adaptive`). The NCDE's FinalTanh field
steps with a hand-written reverse pass (:mod:`.final_tanh`), and so does the GRU-ODE in the
adjoint (:mod:`.gru_ode`)."""

from __future__ import annotations

from functools import partial

import torch

from ...fields.cde_body import CDEBody
from ...fields.gru_ode import GRUODE
from ...fields.solved_body import SolvedBody
from ..choice import implementation
from ..solve.adaptive import ADAPTIVE, AdaptiveSolve
from ..solve.adjoint import AdjointSteps, FastAdjoint, FieldSteps
from ..solve.lean import Stepper, field_stepper, lean_features
from .final_tanh import FinalTanhSteps, final_tanh_stepper
from .gru_ode import GRUODESteps


class SolvedFastPath:
    """``SolvedBody.forward`` on the body's split into :meth:`~SolvedBody.stage_inputs` and
    :meth:`~SolvedBody.stage_field`."""

    def __init__(self, adaptive: bool):
        self.adaptive = adaptive

    def forward(self, body: SolvedBody, path, batch) -> torch.Tensor:
        z0, integrate = body.z0(path, batch), body.integrate
        inputs = partial(body.stage_inputs, path)
        if integrate.backprop.kind == "adjoint":
            solve = FastAdjoint(integrate, inputs, adjoint_steps(body),
                                body.vector_field.parameters())
        elif self.adaptive:
            solve = AdaptiveSolve(integrate, inputs, body.stage_field)
        else:
            return lean_features(integrate, path, batch, z0, inputs, stepper(body),
                                 body.per_step)
        return body.solved_features(solve, None, z0, path, batch)


def stepper(body: SolvedBody) -> Stepper:
    """The lean steps: the FinalTanh layers' by hand for a CDE body, else the body's
    ``stage_field`` under autograd."""
    if isinstance(body, CDEBody):
        return final_tanh_stepper(_linears(body), body.vector_field.channels)
    return field_stepper(body.stage_field)


def adjoint_steps(body: SolvedBody) -> AdjointSteps:
    """The fast adjoint's steps: by hand for a CDE body as in :func:`stepper` and for the
    GRU-ODE, else the body's ``stage_field`` under autograd."""
    if isinstance(body, CDEBody):
        return FinalTanhSteps(_linears(body), body.vector_field.channels)
    if isinstance(body, GRUODE):
        return GRUODESteps(body.vector_field, body.channels)
    return FieldSteps(body.stage_field)


def _linears(body: CDEBody) -> list[torch.nn.Linear]:
    field = body.vector_field
    return [field.linear_in, *field.linears, field.linear_out]


def offer(body: SolvedBody, ctx) -> SolvedFastPath | str | None:
    """The fast path for ``body``, or why it runs the generic path (None: it has none)."""
    if not body.has_fast_path:
        return None
    used = implementation(ctx, fast_adjoint=True, adaptive=body.has_adaptive_fast_path)
    if used != "fast":
        return used
    method = getattr(getattr(ctx.spec.model.solver, "method", None), "value", None)
    return SolvedFastPath(ctx.spec.model.solver.kind == "torchdiffeq" and method in ADAPTIVE)
