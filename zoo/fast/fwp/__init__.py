"""Fast paths of the FWP bodies (paper a): the fast weights, or only their read, without the
generic solve (:mod:`.paths`), or the continuous adjoint with the rules' steps by hand."""

from __future__ import annotations

import torch

from ...fields.fwp.body import FWPBody
from ...fields.fwp.multilayer import TwoLayerUpdate
from ...fields.trajectory import output_index
from ..choice import implementation
from .paths import fast_adjoint, fast_read, fast_weights


class FWPFastPath:
    """``FWPBody.forward`` by :func:`.paths.fast_read` (per-step tasks:
    :func:`.paths.fast_weights`), or, with backprop ``adjoint``, the generic read of the solve
    of :func:`.paths.fast_adjoint`."""

    def forward(self, body: FWPBody, path, batch) -> torch.Tensor:
        update, integrate = body.vector_field, body.integrate
        if integrate.backprop.kind == "adjoint":
            return body.generic(path, batch, fast_adjoint(update, path, integrate,
                                                          len(batch.final_index)))
        w0 = body.initial(update, path, batch)
        if body.per_step:
            return body.read_every_step(path, fast_weights(update, w0, path, integrate))
        q = body.readout.fast_query.query(update.query_input(path, path.interval[-1]))
        return body.readout.features(fast_read(update, w0, path, integrate,
                                               output_index(path, batch), q, body.transpose))


def offer(body: FWPBody, ctx) -> FWPFastPath | str:
    """The fast path for ``body``, or why it runs the generic path."""
    if isinstance(body.vector_field, TwoLayerUpdate):
        return "generic (two-layer model)"
    used = implementation(ctx, fast_adjoint=True)
    return FWPFastPath() if used == "fast" else used
