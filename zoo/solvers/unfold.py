"""Unrolled fixed-step solvers of the LTC paper's recurrent cells (docs/sources.md#ltc-tf-cell
and #ltc-baselines).

The LTC repository integrates each cell's ODE *inside* the recurrent step: between two input
samples the state is advanced ``unfolds`` times, and training backpropagates through those steps
(BPTT, paper (b) §3; docs/sources.md#ltc-equations). These solvers are therefore not torchdiffeq
solvers: the field's cell runs them itself, and the continuous adjoint does not apply.

* ``ltc_fused``: the LTC fused semi-implicit Euler update (paper Eq. 3), only for the ``ltc`` field.
* ``unfold``: explicit Euler (CT-RNN, ``ltc_ex``) or *classic* RK4 (N-ODE, ``ltc_rk``) with a fixed
  step (default 6 × 0.1). Note that classic RK4 (weights 1, 2, 2, 1) is not torchdiffeq's ``rk4``,
  which is the 3/8 rule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field, PositiveInt

from ..components import SolverConfig

if TYPE_CHECKING:
    import torch

    Derivative = Callable[[torch.Tensor], torch.Tensor]


def euler_step(f: Derivative, y: torch.Tensor, h: float) -> torch.Tensor:
    """y + h f(y)."""
    return y + h * f(y)


def rk4_step(f: Derivative, y: torch.Tensor, h: float) -> torch.Tensor:
    """Classic fourth-order Runge–Kutta step (the LTC repo's ``_ode_step_runge_kutta``)."""
    k1 = h * f(y)
    k2 = h * f(y + 0.5 * k1)
    k3 = h * f(y + 0.5 * k2)
    k4 = h * f(y + k3)
    return y + (k1 + 2 * k2 + 2 * k3 + k4) / 6.0


STEPS = {"euler": euler_step, "rk4": rk4_step}


class UnrolledSolver(SolverConfig):
    """Base of the solvers that a recurrent cell unrolls itself (BPTT only)."""

    unfolds: PositiveInt = Field(6, description="solver steps per input step")

    supports_adjoint: ClassVar[bool] = False

    def odeint_kwargs(self, t: torch.Tensor) -> dict[str, Any]:
        raise TypeError(f"solver '{self.kind}' is unrolled inside a recurrent cell (fields ltc, "
                        "ctrnn, node, ...); it cannot drive an ODE solve through ctx.integrate")


class LTCFusedConfig(UnrolledSolver):
    """LTC fused semi-implicit Euler solver (paper Eq. 3), ``unfolds`` updates per input step."""

    kind: Literal["ltc_fused"] = "ltc_fused"


class UnfoldConfig(UnrolledSolver):
    """Explicit Euler or classic RK4 unrolled in the cell: ``unfolds`` steps of ``step_size``."""

    kind: Literal["unfold"] = "unfold"
    method: Literal["euler", "rk4"] = Field("euler", description="euler (CT-RNN, ltc_ex) or "
                                            "classic rk4 (N-ODE, ltc_rk)")
    step_size: float = Field(0.1, gt=0, description="step h of every unfold")

    def advance(self, f: Derivative, y: torch.Tensor,
                project: Callable[[torch.Tensor], torch.Tensor] | None = None) -> torch.Tensor:
        """``unfolds`` steps of dy/dt = f(y); ``project`` (e.g. clipping) after every step."""
        step = STEPS[self.method]
        for _ in range(self.unfolds):
            y = step(f, y, self.step_size)
            if project is not None:
                y = project(y)
        return y
