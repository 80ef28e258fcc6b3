"""Natural cubic spline control (Kidger et al. 2020, the FWP and NCDE authors' interpolation).

Coefficients (a, b, 2c, 3d) per piece come from the tridiagonal solve for knot derivatives with
natural boundary conditions. Missing values (NaN) are handled per channel as the authors did:
leading/trailing NaNs take the first/last observed value, the spline runs through the observed
points only, and an all-NaN channel becomes the constant 0 path. For query time t the piece is
(number of knots strictly below t) - 1, clamped to [0, L-2]; X(t) = a + r(b + r(c + r d)).
torchcde implements exactly this, so it is used as is.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import torch
import torchcde

from ..components import ControlConfig


class NaturalCubicConfig(ControlConfig):
    """Natural cubic spline through the observations (NaN-aware), X(t) and dX/dt."""

    kind: Literal["natural_cubic"] = "natural_cubic"
    provides: ClassVar[frozenset[str]] = frozenset({"evaluate", "derivative"})

    def prepare(self, times: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        return torchcde.natural_cubic_coeffs(values, t=times)

    def path(self, times: torch.Tensor, coeffs: torch.Tensor) -> torchcde.CubicSpline:
        return torchcde.CubicSpline(coeffs, t=times)
