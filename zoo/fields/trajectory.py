"""What a body reads off a path and a solved trajectory: the initial observation, the state at
each series' final observation or at every observation, and a solve that asks only for the
times it needs."""

from __future__ import annotations

import torch


def first_observation(path) -> torch.Tensor:
    """X(t0): the path's ``first_observation`` if it keeps one (log-signature windows), else
    its value at the start of its interval."""
    x0 = getattr(path, "first_observation", None)
    return x0 if x0 is not None else path.evaluate(path.interval[0])


def step_states(states: torch.Tensor, path, batch) -> torch.Tensor:
    """States at every observation time, (B, T, ...), from solver output (T', B, ...) on
    ``path.grid_points`` (for per-step tasks)."""
    if hasattr(path, "map_index"):
        steps = torch.arange(batch.times.shape[0], device=states.device)
        states = states[path.map_index(steps)]
    return states.transpose(0, 1)


def output_index(path, batch) -> torch.Tensor:
    """Each sample's index into ``path.grid_points`` at its last observation (B,); paths on
    their own grid map indices with ``map_index``."""
    index = batch.final_index
    return path.map_index(index) if hasattr(path, "map_index") else index


def solve_at(integrate, func, y0: torch.Tensor, path, rows: torch.Tensor | None = None
             ) -> torch.Tensor:
    """Solve on ``path.grid_points``: the state at grid index ``rows[b]`` per sample (B, ...),
    or at every grid point (T, B, ...) when ``rows`` is None. For per-sample reads only the
    start and the needed grid times are requested (fixed steps still come from the whole grid,
    so the forward solution is the same), unless the integrator wants dense outputs (the
    continuous adjoint with ``outputs: grid``); the adjoint's gradients depend on that set
    (:class:`zoo.backprop.adjoint.AdjointConfig`). An integrator with ``selects_rows`` returns
    the per-sample states itself (:class:`zoo.fast.solve.adjoint.FastAdjoint`)."""
    grid = path.grid_points
    if rows is None or integrate.dense_outputs:
        states = integrate(func, y0, grid)
        return states if rows is None else states[rows, torch.arange(rows.shape[0],
                                                                      device=rows.device)]
    needed, position = torch.unique(torch.cat([rows.new_zeros(1), rows]), return_inverse=True)
    if integrate.selects_rows:
        return integrate(func, y0, grid[needed], grid=grid, rows=position[1:])
    states = integrate(func, y0, grid[needed], grid=grid)
    return states[position[1:], torch.arange(rows.shape[0], device=rows.device)]


def final_states(states: torch.Tensor, path, batch) -> torch.Tensor:
    """Each sample's state at its last observation, from solver output (T, B, ...) on
    ``path.grid_points``."""
    return states[output_index(path, batch), torch.arange(states.shape[1], device=states.device)]
