"""Fast paths of the FWP bodies (paper a): the fast weights, or only their read, without the
generic solve (:mod:`.paths`), or the continuous adjoint with the rules' steps by hand. The
two-layer model (App. C.1), whose second layer reads the first inside the field, so that the
rank-one forms do not hold, runs the lean solve and adjoint on its own split (:mod:`.two_layer`)."""

from __future__ import annotations

from functools import partial

import torch

from ...fields.fwp.body import FWPBody
from ...fields.fwp.fast_weight import flatten
from ...fields.fwp.multilayer import TwoLayerUpdate
from ...fields.trajectory import output_index
from ..choice import implementation
from ..solve.adjoint import FastAdjoint, FieldSteps
from ..solve.lean import field_stepper, lean_solve
from .paths import fast_adjoint, fast_read, fast_weights
from .two_layer import stage_field, stage_inputs


class FWPFastPath:
    """``FWPBody.forward`` by :func:`.paths.fast_read` (per-step tasks:
    :func:`.paths.fast_weights`), or, with backprop ``adjoint``, the generic read of the solve
    of :func:`.paths.fast_adjoint`."""

    def forward(self, body: FWPBody, path, batch) -> torch.Tensor:
        update, integrate = body.vector_field, body.integrate
        if integrate.backprop.kind == "adjoint":
            return body.generic(path, batch, fast_adjoint(update, path, integrate))
        w0 = body.initial(update, path, batch)
        if body.per_step:
            return body.read_every_step(path, fast_weights(update, w0, path, integrate))
        q = body.readout.fast_query.query(update.query_input(path, path.interval[-1]))
        return body.readout.features(fast_read(update, w0, path, integrate,
                                               output_index(path, batch), q, body.transpose))


class TwoLayerFastPath:
    """``FWPBody.forward`` of the two-layer model: the field's W-independent inputs at a
    block's stage times in one call, then :func:`.two_layer.stage_field` in the steps (under
    autograd, or the fast adjoint's vector-Jacobian products)."""

    def forward(self, body: FWPBody, path, batch) -> torch.Tensor:
        update, integrate = body.vector_field, body.integrate
        inputs, field = partial(stage_inputs, update, path), partial(stage_field, update)
        if integrate.backprop.kind == "adjoint":
            return body.generic(path, batch, FastAdjoint(integrate, inputs, FieldSteps(field),
                                                         update.parameters()))
        w0 = flatten(body.initial(update, path, batch))
        return body.read_states(path, lean_solve(integrate, path.grid_points, w0, inputs,
                                                 field_stepper(field), body.rows(path, batch)))


def offer(body: FWPBody, ctx) -> FWPFastPath | TwoLayerFastPath | str:
    """The fast path for ``body``, or why it runs the generic path."""
    used = implementation(ctx, fast_adjoint=True)
    if used != "fast":
        return used
    return TwoLayerFastPath() if isinstance(body.vector_field, TwoLayerUpdate) else FWPFastPath()
