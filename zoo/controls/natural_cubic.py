"""Natural cubic spline control (Kidger et al. 2020), X(t) and dX/dt.

Coefficients (a, b, 2c, 3d) per piece come from the tridiagonal solve for knot derivatives with
natural boundary conditions. For query time t the piece is (number of knots strictly below t) - 1,
clamped to [0, L-2]; X(t) = a + r(b + r(c + r d)). Missing values (NaN) are handled per channel:
the spline runs through the non-NaN points after a fill of the ends chosen by ``nan_fill``, and
an all-NaN channel becomes the constant 0 path (zero coefficients).

* ``runs`` (default): every NaN before the first observation takes the first observed value and
  every NaN after the last observation takes the last observed value; the filled entries are
  knots too, so the path passes through that value at every grid time of the run.
  torchcde's ``natural_cubic_coeffs``.
* ``ends``: only x[0] (if NaN) takes the first observed value and only x[-1] (if NaN) the last
  one; the spline passes through these two points and the observations, so a leading or
  trailing NaN run is spanned by a single cubic piece. This is the FWP and NCDE authors' code:
  ``_natural_cubic_spline_coeffs_with_missing_values_scalar`` (lines 78-153; the fill at lines
  105-114, the all-NaN case at lines 92-99) of ``speech_and_physionet/controldiffeq/interpolate.py``
  in IDSIA/neuraldiffeq-fwp, identical to ``controldiffeq/interpolate.py`` in
  patrick-kidger/NeuralCDE, called from ``natural_cubic_spline_coeffs`` (line 159).
  torchcde's ``natural_cubic_spline_coeffs`` (its ``_version=0``).

Both read the same when no channel starts or ends with a NaN run longer than one entry; a channel
observed once is the constant path at that value in both. torchcde computes series with NaNs one
scalar series at a time in Python; :mod:`.spline_nan` gives its coefficients (to rounding) for
all series at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field

from ..components import ControlConfig

if TYPE_CHECKING:
    import torch
    import torchcde


class NaturalCubicConfig(ControlConfig):
    """Natural cubic spline through the observations (NaN-aware), X(t) and dX/dt."""

    kind: Literal["natural_cubic"] = "natural_cubic"
    nan_fill: Literal["runs", "ends"] = Field(
        "runs", description="Leading/trailing NaNs of a channel. runs: the whole leading run takes "
        "the first observed value and the whole trailing run the last one (torchcde's "
        "natural_cubic_coeffs). ends: only the first and last entries are filled, and the spline "
        "runs through them and the observations (the FWP/NCDE authors' code; torchcde's "
        "natural_cubic_spline_coeffs).")
    provides: ClassVar[frozenset[str]] = frozenset({"evaluate", "derivative"})

    def prepare(self, times: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        import torch
        import torchcde

        from .spline_nan import natural_cubic_coeffs_nan

        if torch.isnan(values).any():  # torchcde's coefficients, all series at once
            return natural_cubic_coeffs_nan(values, times, self.nan_fill)
        return torchcde.natural_cubic_coeffs(values, t=times)

    def path(self, times: torch.Tensor, coeffs: torch.Tensor) -> torchcde.CubicSpline:
        import torchcde

        return torchcde.CubicSpline(coeffs, t=times)
