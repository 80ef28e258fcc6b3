"""Explicit Runge–Kutta tableaux of torchdiffeq's fixed-grid methods, and the lean stepping loop.

torchdiffeq's ``rk4`` is the 3/8 rule (``rk4_alt_step_func``): stage times t0, t0 + h/3,
t0 + 2h/3, t1 with k2 at y0 + h k1/3, k3 at y0 + h (k2 − k1/3), k4 at y0 + h (k1 − k2 + k3) and
y1 = y0 + h (k1 + 3 k2 + 3 k3 + k4)/8. ``midpoint``: k2 at y0 + h k1/2, y1 = y0 + h k2.
``euler``: y1 = y0 + h k1.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Tableau:
    """Stage nodes c, lower-triangular coefficients a (row s: a_s0 … a_s,s−1) and weights b."""

    c: tuple[float, ...]
    a: tuple[tuple[float, ...], ...]
    b: tuple[float, ...]

    @property
    def stages(self) -> int:
        return len(self.c)


TABLEAUX = {
    "euler": Tableau((0.0,), ((),), (1.0,)),
    "midpoint": Tableau((0.0, 0.5), ((), (0.5,)), (0.0, 1.0)),
    "rk4": Tableau((0.0, 1 / 3, 2 / 3, 1.0), ((), (1 / 3,), (-1 / 3, 1.0), (1.0, -1.0, 1.0)),
                   (0.125, 0.375, 0.375, 0.125)),
}

#: f(step n, stage s, state) -> derivative
StageField = Callable[[int, int, torch.Tensor], torch.Tensor]


def combine(coefficients: tuple[float, ...], ks: list[torch.Tensor]) -> torch.Tensor | None:
    """Σ_j coefficients[j] · ks[j] over the non-zero coefficients (None if all are zero)."""
    total = None
    for a, k in zip(coefficients, ks):
        if a:
            term = k if a == 1.0 else a * k
            total = term if total is None else total + term
    return total


def integrate(tableau: Tableau, f: StageField, y0: torch.Tensor,
              dt: torch.Tensor) -> list[torch.Tensor]:
    """States y_0 … y_N at the grid points: y_{n+1} = y_n + h_n Σ_s b_s k_s with
    k_s = f(n, s, y_n + h_n Σ_{j<s} a_sj k_j); ``dt`` (N,) holds the step sizes h_n."""
    ys = [y0]
    for n, h in enumerate(dt.unbind(0)):
        y, ks = ys[-1], []
        for s, row in enumerate(tableau.a):
            shift = combine(row, ks)
            ks.append(f(n, s, y if shift is None else y + h * shift))
        ys.append(y + h * combine(tableau.b, ks))
    return ys
