"""Discretise-then-optimise: backpropagate through the solver's own operations."""

from __future__ import annotations

from typing import Literal

from ..components import BackpropConfig


class DirectConfig(BackpropConfig):
    """Backpropagation through the solver steps (exact gradient of the discretisation)."""

    kind: Literal["direct"] = "direct"

    def odeint(self, func, y0, t, **solver_kwargs):
        import torchdiffeq

        return torchdiffeq.odeint(func, y0, t, **solver_kwargs)
