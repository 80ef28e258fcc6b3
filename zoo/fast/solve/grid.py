"""torchdiffeq's fixed grid for one solve: grid points, stage times, output interpolation.

For ``step_size`` h and requested times t_0 < … < t_{T−1}, torchdiffeq steps on the grid
g_i = t_0 + i·h, i = 0 … ⌈(t_{T−1} − t_0)/h⌉, with the last point replaced by t_{T−1} (a solve
towards part of a longer grid requests one more time, :func:`zoo.build_context.fixed_step_reach`,
so that its steps are the longer grid's); the
stages of step n sit at g_n + c_s (g_{n+1} − g_n) (exactly g_n for c = 0 and g_{n+1} for c = 1),
cast to the state's dtype. The output at t_j is the state at the first grid point g_{n+1} ≥ t_j
when they are equal, else the linear interpolation y_n + λ (y_{n+1} − y_n) with
λ = (t_j − g_n)/(g_{n+1} − g_n) (``FixedGridODESolver.integrate``). So
y(t_j) = y_0 + Σ_{n < n_j} Δ_n + λ_j Δ_{n_j}, with Δ_n the increment of step n.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torchdiffeq._impl.solvers import FixedGridODESolver

from ...build_context import fixed_step_reach
from .tableau import TABLEAUX, Tableau


@dataclass
class FixedGrid:
    """The grid of one fixed-step solve towards the output times ``t`` (T,)."""

    points: torch.Tensor
    t: torch.Tensor
    tableau: Tableau
    step: float

    @classmethod
    def plan(cls, integrator, t: torch.Tensor, grid: torch.Tensor | None = None) -> FixedGrid:
        """The grid the integrator's solver would step on towards ``t``, its step size and
        steps set by ``grid`` (default ``t``) as :class:`zoo.build_context.Integrator` sets
        them (:func:`zoo.build_context.fixed_step_reach`); counts its stage evaluations (NFE)."""
        kwargs = integrator.solver.odeint_kwargs(t if grid is None else grid)
        step = kwargs["options"]["step_size"]
        reach = t if grid is None else fixed_step_reach(t, grid, step)
        points = FixedGridODESolver._grid_constructor_from_step_size(step)(None, None, reach)
        grid = cls(points, t, TABLEAUX[kwargs["method"]], step)
        integrator.nfe += grid.steps * grid.tableau.stages
        return grid

    @property
    def steps(self) -> int:
        return len(self.points) - 1

    @property
    def dt(self) -> torch.Tensor:
        """Step sizes (N,) in the time dtype, g_{n+1} − g_n."""
        return self.points[1:] - self.points[:-1]

    def stage_times(self, dtype: torch.dtype) -> torch.Tensor:
        """(N·S,) stage times, step-major, as torchdiffeq computes them."""
        t0, t1, dt = self.points[:-1], self.points[1:], self.dt
        times = [t0 if c == 0 else t1 if c == 1 else t0 + dt * c for c in self.tableau.c]
        return torch.stack(times, 1).flatten().to(dtype)

    def distinct_stages(self, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """Distinct stage times (U,) and each stage's position among them (N, S).

        A last stage at c = 1 sits at g_{n+1}, bit for bit the next step's first stage (c = 0),
        so a state-independent function of time needs only U = N(S − 1) + 1 evaluations
        (rk4: 3N + 1 instead of 4N). Other tableaux have U = N·S.
        """
        times, (n, s) = self.stage_times(dtype), (self.steps, self.tableau.stages)
        index = torch.arange(n * s).view(n, s)
        if s > 1 and self.tableau.c[0] == 0 and self.tableau.c[-1] == 1:
            index = torch.arange(n)[:, None] * (s - 1) + torch.arange(s)
            keep = torch.ones(n, s, dtype=torch.bool)
            keep[:-1, -1] = False
            times = times[keep.flatten()]
        return times, index

    def _locate(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Per output time: (n_j, λ_j) with y(t_j) = y_{n_j} + λ_j Δ_{n_j} (n_0 = −1, λ_0 = 1)."""
        g, t = self.points, self.t
        n = torch.searchsorted(g[1:], t[1:].contiguous())
        exact = g[n + 1] == t[1:]
        lam = torch.where(exact, torch.ones_like(t[1:]), (t[1:] - g[n]) / (g[n + 1] - g[n]))
        return torch.cat([n.new_full((1,), -1), n]), torch.cat([t.new_ones(1), lam])

    def points_read(self) -> list[int]:
        """The grid points whose states :meth:`outputs` reads."""
        n, lam = self._locate()
        return torch.unique(_points(n, bool((lam == 1).all()))).tolist()

    def outputs(self, states: list[torch.Tensor], rows: torch.Tensor | None = None
                ) -> torch.Tensor:
        """States at the output times (T, B, ...) from the states at the grid points (N+1 of
        (B, ...)); with ``rows`` (B,), sample b's state at output time rows[b] only (B, ...),
        from the grid states that are needed, stacked once."""
        if rows is None:
            return torch.stack(self.at_outputs(states))
        n, lam = self._locate()
        n, lam = n[rows], lam[rows]
        batch = torch.arange(len(rows), device=rows.device)
        on_grid = bool((lam == 1).all())
        needed, position = torch.unique(_points(n, on_grid), return_inverse=True)
        stacked = torch.stack([states[i] for i in needed.tolist()])
        upper = stacked[position[:len(n)], batch]
        if on_grid:
            return upper
        lam = lam.to(upper.dtype).view(-1, *(1,) * (upper.dim() - 1))
        return _interpolate(stacked[position[len(n):], batch], upper, lam)

    def at_outputs(self, states: list[torch.Tensor]) -> list[torch.Tensor]:
        """The state at each output time (T of (B, ...)) from the states at the grid points,
        none stacked: where an output time is a grid point, that point's state itself."""
        n, lam = self._locate()
        upper = [states[i] for i in (n + 1).tolist()]
        if bool((lam == 1).all()):
            return upper
        lower = [states[i] for i in n.clamp(min=0).tolist()]
        lam = lam.to(upper[0].dtype)
        return [_interpolate(low, up, weight) for low, up, weight in zip(lower, upper, lam)]

    def increment_weights(self, rows: torch.Tensor) -> torch.Tensor:
        """(R, N) weights w with y(t_{rows[r]}) = y_0 + Σ_n w[r, n] Δ_n."""
        n, lam = self._locate()
        n, lam = n[rows, None], lam[rows, None]
        steps = torch.arange(self.steps, device=n.device)
        return (steps < n).to(lam.dtype) + torch.where(steps == n, lam, lam.new_zeros(()))


def _interpolate(lower: torch.Tensor, upper: torch.Tensor, lam: torch.Tensor) -> torch.Tensor:
    """y_n + λ (y_{n+1} − y_n), exactly y_{n+1} where λ = 1 (as torchdiffeq)."""
    return torch.where(lam == 1, upper, lower + lam * (upper - lower))


def _points(n: torch.Tensor, on_grid: bool) -> torch.Tensor:
    """The grid points that give y(t_j) = y_{n_j} + λ_j Δ_{n_j}: the steps' ends n_j + 1, and
    their starts n_j unless every output time is a grid point (λ = 1)."""
    return n + 1 if on_grid else torch.cat([n + 1, n.clamp(min=0)])
