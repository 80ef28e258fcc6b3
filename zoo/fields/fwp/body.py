"""The FWP field body: W(t0), solve the learning-rule ODE, read the fast weights out.

Solves on ``path.grid_points``, takes each sample's W at its final index (facts §1.6.1), builds
the query at the global last time ``path.interval[-1]`` (the authors' code does so even for
shorter series, facts §1.6 note) and returns the d-dim features after out_proj and the FF
block. Per-step tasks read W(t_i) with the query at t_i for every grid time.
"""

from __future__ import annotations

import torch
from torch import nn

from ..initial import final_states
from .fast_weight import as_matrices, flatten
from .vector_field import LearningRuleField


class FWPBody(nn.Module):
    def __init__(self, update: nn.Module, initial: nn.Module, readout: nn.Module, integrate,
                 features: int, transpose: bool, per_step: bool = False):
        super().__init__()
        self.vector_field = update
        self.initial = initial
        self.readout = readout
        self.integrate = integrate
        self.features = features
        self.transpose = transpose
        self.per_step = per_step

    def solve(self, path, batch) -> torch.Tensor:
        """Flat fast weights at every grid point: (T, B, heads·h·h)."""
        w0 = self.initial(self.vector_field, path, batch)
        return self.integrate(LearningRuleField(self.vector_field, path), flatten(w0),
                              path.grid_points)

    def read(self, path, t: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
        W, embedded = self.vector_field.readout_input(path, t, W)
        return self.readout(W, embedded, self.transpose)

    def forward(self, path, batch) -> torch.Tensor:
        ys = self.solve(path, batch)
        heads = self.vector_field.heads
        if self.per_step:
            return torch.stack([self.read(path, t, as_matrices(y, heads))
                                for t, y in zip(path.grid_points, ys)], 1)
        W = as_matrices(final_states(ys, path, batch), heads)
        return self.read(path, path.interval[-1], W)
