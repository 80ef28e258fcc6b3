"""Rectilinear interpolation (torchcde; Morrill et al. 2021, "Neural CDEs for online prediction").

Between observations k and k+1 the path first moves along the time channel from t_k to t_{k+1}
with the other channels held at x_k, then moves the other channels from x_k to x_{k+1} with time
held at t_{k+1}. So X(s) never depends on observations later than the current time: the causal
control. Missing values are forward-filled (the last observation is held); leading NaNs take the
first observed value (torchcde warns, as this one step is not causal).

The path lives on its own parameter grid 0, 1, …, 2T−2 (torchcde's convention): observation k
sits at grid index 2k, which :meth:`.paths.RectilinearPath.map_index` gives to the field
bodies. The time channel must be observed at the first step; trailing NaNs in it (padding) are
forward-filled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field, NonNegativeInt

from ..components import ControlConfig
from ..errors import InputError

if TYPE_CHECKING:
    import torch

    from .paths import RectilinearPath


class RectilinearConfig(ControlConfig):
    """Rectilinear (causal, time-then-value) interpolation along a time channel."""

    kind: Literal["rectilinear"] = "rectilinear"
    time_channel: NonNegativeInt = Field(
        0, description="index of the input channel that holds the observation times")
    provides: ClassVar[frozenset[str]] = frozenset({"evaluate", "derivative"})

    def prepare(self, times: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        import torchcde

        c = self.time_channel
        if c >= values.shape[-1]:
            raise InputError(f"model.control.time_channel: {c} is out of range: the data has "
                             f"{values.shape[-1]} channels")
        values = values.clone()
        values[..., c] = torchcde.misc.forward_fill(values[..., c:c + 1])[..., 0]
        if values[..., c].isnan().any():
            raise InputError(f"model.control.time_channel: channel {c} is not observed at the "
                             f"first step of some series, so it cannot be the time channel")
        return torchcde.linear_interpolation_coeffs(values, rectilinear=c)

    def path(self, times: torch.Tensor, coeffs: torch.Tensor) -> RectilinearPath:
        from .paths import RectilinearPath

        return RectilinearPath(coeffs)
