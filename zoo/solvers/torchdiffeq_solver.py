"""Every method of the installed torchdiffeq, with its step size and tolerances.

Note: torchdiffeq's ``rk4`` is the 3/8-rule variant of classic RK4 (Kutta 1901), which is what
the FWP and NCDE authors integrated with.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field, model_validator

from ..components import SolverConfig
from ..errors import InputError
from ..limits import MAX_SOLVER_STEPS

if TYPE_CHECKING:
    import torch

#: torchdiffeq's ``SOLVERS`` less ``scipy_solver``, written out so that validation needs no torch
#: (tests/cli/test_light_commands.py checks them against the installed torchdiffeq)
METHODS = ("dopri8", "dopri5", "bosh3", "fehlberg2", "adaptive_heun", "euler", "midpoint",
           "heun2", "heun3", "rk4", "explicit_adams", "implicit_adams", "fixed_adams")
FIXED_GRID = ("euler", "midpoint", "rk4", "heun2", "heun3", "explicit_adams", "implicit_adams",
              "fixed_adams")
Method = Enum("Method", {m: m for m in METHODS}, type=str)


class TorchdiffeqConfig(SolverConfig):
    """A torchdiffeq ODE solver (fixed-grid or adaptive)."""

    kind: Literal["torchdiffeq"] = "torchdiffeq"
    method: Method = Field(Method("rk4"), description="any torchdiffeq method")
    step_size: float | None = Field(
        None, gt=0, description="fixed-grid step (default: the smallest gap of the time grid)")
    rtol: float = Field(1e-7, gt=0)
    atol: float = Field(1e-9, gt=0)
    max_steps: int | None = Field(None, gt=0, description="adaptive solvers: abort after this")

    supports_adjoint: ClassVar[bool] = True

    @model_validator(mode="after")
    def _step_only_fixed(self) -> TorchdiffeqConfig:
        if self.step_size is not None and self.method.value not in FIXED_GRID:
            raise ValueError(f"step_size applies to fixed-grid methods "
                             f"({', '.join(FIXED_GRID)}), not '{self.method.value}'")
        return self

    def odeint_kwargs(self, t: torch.Tensor) -> dict[str, Any]:
        method = self.method.value
        options: dict[str, Any] = {}
        if method in FIXED_GRID:
            step = self.step_size
            if step is None:
                import torch

                step = float(torch.diff(t).min()) if len(t) > 1 else 1.0
            span = float(t[-1] - t[0]) if len(t) > 1 else 0.0  # one read of the grid's ends
            if (steps := span / step) > MAX_SOLVER_STEPS:
                given = f"step_size {step:g}" if self.step_size else \
                    f"step {step:g} (the smallest gap of the times; no step_size given)"
                raise InputError(f"model.solver: the times span {span:g} with "
                                 f"{given}: {steps:.3g} fixed steps per solve, more than "
                                 f"{MAX_SOLVER_STEPS:,}; rescale the times (hours, not "
                                 f"seconds) or give a larger step_size")
            options["step_size"] = step
        elif self.max_steps is not None:
            options["max_num_steps"] = self.max_steps
        return {"method": method, "options": options, "rtol": self.rtol, "atol": self.atol}
