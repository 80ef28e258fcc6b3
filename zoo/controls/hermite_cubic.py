"""Hermite cubic spline with backward differences (torchcde; the torchcde example
that paper (c) points to, docs/sources.md#jac-torchcde-example).

On [t_k, t_{k+1}] the cubic matches x_k and x_{k+1}, with slope (x_k − x_{k−1})/(t_k − t_{k−1})
at t_k and (x_{k+1} − x_k)/(t_{k+1} − t_k) at t_{k+1} (the first piece uses its own slope at both
ends). The path is C¹, passes through every observation, and on [t_0, t_k] depends only on
x_0..x_k, so it can be built online, unlike the natural cubic spline. Missing values (NaN) are
first filled per channel by linear interpolation in time (leading/trailing NaNs take the
first/last observed value, an all-NaN channel becomes 0), as torchcde does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

from ..components import ControlConfig

if TYPE_CHECKING:
    import torch
    import torchcde


class HermiteCubicConfig(ControlConfig):
    """Hermite cubic spline with backward-difference slopes (C¹, online), X(t) and dX/dt."""

    kind: Literal["hermite_cubic"] = "hermite_cubic"
    provides: ClassVar[frozenset[str]] = frozenset({"evaluate", "derivative"})

    def prepare(self, times: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        import torchcde

        return torchcde.hermite_cubic_coefficients_with_backward_differences(values, t=times)

    def path(self, times: torch.Tensor, coeffs: torch.Tensor) -> torchcde.CubicSpline:
        import torchcde

        return torchcde.CubicSpline(coeffs, t=times)
