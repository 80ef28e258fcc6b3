"""Piecewise-linear interpolation of the observations (torchcde).

X(t) joins consecutive observations by straight lines; dX/dt is constant on each interval and
jumps at every observation time, so it suits a fixed-step solver whose steps land on the
observation times. Missing values (NaN) are filled per channel by linear
interpolation in time (leading/trailing NaNs take the first/last observed value, an all-NaN
channel becomes 0), as torchcde does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

from ..components import ControlConfig

if TYPE_CHECKING:
    import torch
    import torchcde


class LinearConfig(ControlConfig):
    """Piecewise-linear interpolation (NaN-aware), X(t) and its piecewise-constant dX/dt."""

    kind: Literal["linear"] = "linear"
    provides: ClassVar[frozenset[str]] = frozenset({"evaluate", "derivative"})

    def prepare(self, times: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        import torchcde

        return torchcde.linear_interpolation_coeffs(values, t=times)

    def path(self, times: torch.Tensor, coeffs: torch.Tensor) -> torchcde.LinearInterpolation:
        import torchcde

        return torchcde.LinearInterpolation(coeffs, t=times)
