"""The FWP field body: W(t0), solve the learning-rule ODE, read the fast weights out.

Solves on ``path.grid_points``, takes each sample's W at its final index
(docs/sources.md#fwp-readout), builds the query at the global last time ``path.interval[-1]``
(the authors' code does so even for shorter series) and returns the d-dim features after
out_proj and the FF block. Per-step tasks read W(t_i) with the query at t_i for every grid time.
The fast path (:mod:`zoo.fast.fwp`) computes W, or only its read, without the generic solve.
"""

from __future__ import annotations

import torch

from ..body import Body
from ..trajectory import output_index, solve_at
from .fast_weight import as_matrices, flatten
from .vector_field import LearningRuleField


class FWPBody(Body):
    def __init__(self, update, initial, readout, integrate, features: int, transpose: bool,
                 per_step: bool = False):
        super().__init__()
        self.vector_field = update
        self.initial = initial
        self.readout = readout
        self.integrate = integrate
        self.features = features
        self.transpose = transpose
        self.per_step = per_step

    def solve(self, path, batch, rows: torch.Tensor | None = None, solve=None) -> torch.Tensor:
        """Flat fast weights (heads·h·h) at grid index rows[b] per sample, or at every grid
        point (T, B, ·) when ``rows`` is None; by ``solve`` (default the spec's integrator on
        the learning-rule field)."""
        w0 = self.initial(self.vector_field, path, batch)
        func = None if solve else LearningRuleField(self.vector_field, path)
        return solve_at(solve or self.integrate, func, flatten(w0), path, rows)

    def read(self, path, t: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
        W, embedded = self.vector_field.readout_input(path, t, W)
        return self.readout(W, embedded, self.transpose)

    def read_every_step(self, path, Ws: torch.Tensor) -> torch.Tensor:
        """The features at every grid time (B, T, d) from W there (T, B, H, h, h)."""
        return torch.stack([self.read(path, t, W) for t, W in zip(path.grid_points, Ws)], 1)

    def generic(self, path, batch, solve=None) -> torch.Tensor:
        """The features through :meth:`solve` (by ``solve``, default the spec's integrator)."""
        return self.read_states(path, self.solve(path, batch, self.rows(path, batch), solve))

    def rows(self, path, batch) -> torch.Tensor | None:
        """The grid index each sample is read at; None: every grid time (per-step tasks)."""
        return None if self.per_step else output_index(path, batch)

    def read_states(self, path, W: torch.Tensor) -> torch.Tensor:
        """The features from flat fast weights at :meth:`rows`: (T, B, ·) per step, else
        (B, ·), each sample's read with the query at the global last time."""
        W = as_matrices(W, self.vector_field.heads)
        if self.per_step:
            return self.read_every_step(path, W)
        return self.read(path, path.interval[-1], W)
