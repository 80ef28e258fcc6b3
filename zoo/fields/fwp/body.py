"""The FWP field body: W(t0), solve the learning-rule ODE, read the fast weights out.

Solves on ``path.grid_points``, takes each sample's W at its final index
(docs/sources.md#fwp-readout), builds the query at the global last time ``path.interval[-1]``
(the authors' code does so even for shorter series) and returns the d-dim features after
out_proj and the FF block. Per-step tasks read W(t_i) with the query at t_i for every grid time.
``implementation`` is ``"fast"`` (:func:`zoo.fast.fwp.fast_read`, which reads the final state
without forming it where the rule allows, or :func:`zoo.fast.fwp.fast_weights` for per-step
tasks; with backprop ``adjoint`` the solve of :func:`zoo.fast.fwp.fast_adjoint`) or
``"generic (…)"``.
"""

from __future__ import annotations

import torch
from torch import nn

from ...fast.fwp import fast_adjoint, fast_read, fast_weights
from ..initial import output_index, solve_at
from .fast_weight import as_matrices, flatten
from .vector_field import LearningRuleField


class FWPBody(nn.Module):
    def __init__(self, update: nn.Module, initial: nn.Module, readout: nn.Module, integrate,
                 features: int, transpose: bool, per_step: bool = False,
                 implementation: str = "generic (requested)"):
        super().__init__()
        self.vector_field = update
        self.initial = initial
        self.readout = readout
        self.integrate = integrate
        self.features = features
        self.transpose = transpose
        self.per_step = per_step
        self.implementation_used = implementation

    def solve(self, path, batch, rows: torch.Tensor | None = None) -> torch.Tensor:
        """Flat fast weights (heads·h·h) at grid index rows[b] per sample, or at every grid
        point (T, B, ·) when ``rows`` is None."""
        w0 = self.initial(self.vector_field, path, batch)
        if self.implementation_used == "fast":
            solve, func = fast_adjoint(self.vector_field, path, self.integrate,
                                       len(w0)), None
        else:
            solve, func = self.integrate, LearningRuleField(self.vector_field, path)
        return solve_at(solve, func, flatten(w0), path, rows)

    @property
    def lean(self) -> bool:
        """Whether the fast path backpropagates through its own steps (not the adjoint)."""
        return (self.implementation_used == "fast"
                and self.integrate.backprop.kind != "adjoint")

    def read(self, path, t: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
        W, embedded = self.vector_field.readout_input(path, t, W)
        return self.readout(W, embedded, self.transpose)

    def fast_weights(self, path, batch) -> torch.Tensor:
        """W at every grid point (T, B, H, h, h)."""
        if self.lean:
            w0 = self.initial(self.vector_field, path, batch)
            return fast_weights(self.vector_field, w0, path, self.integrate)
        return as_matrices(self.solve(path, batch), self.vector_field.heads)

    def forward(self, path, batch) -> torch.Tensor:
        if self.per_step:
            return torch.stack([self.read(path, t, W) for t, W in
                                zip(path.grid_points, self.fast_weights(path, batch))], 1)
        rows, t = output_index(path, batch), path.interval[-1]
        if self.lean:
            q = self.readout.fast_query.query(self.vector_field.query_input(path, t))
            w0 = self.initial(self.vector_field, path, batch)
            return self.readout.features(fast_read(self.vector_field, w0, path, self.integrate,
                                                   rows, q, self.transpose))
        W = as_matrices(self.solve(path, batch, rows), self.vector_field.heads)
        return self.read(path, t, W)
