"""Raw steps: the observations themselves, for discrete-update (recurrent) models.

Recurrent cells such as the LTC repository's models read one observation per step rather than a
continuous path. Missing values (NaN) are filled per channel with the last observed value
(forward fill); values before a channel's first observation, and channels never observed, become
0. The path keeps ``values`` (B, T, C) on the shared grid ``times`` (T,), whose differences are
the elapsed times between steps, and ``observed`` (B, T): whether anything was observed at a
step (models that update only at observations, e.g. ODE-RNN, read it); ``interval`` and
``grid_points`` are given for uniformity with the interpolating controls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

from ..components import ControlConfig

if TYPE_CHECKING:
    import torch


def forward_fill(values: torch.Tensor) -> torch.Tensor:
    """NaN → last observed value along the time axis (dim −2); leading NaN → 0."""
    import torch

    t = values.shape[-2]
    observed = ~torch.isnan(values)
    steps = torch.arange(t, device=values.device).view(t, 1).expand_as(values)
    last = torch.where(observed, steps, torch.full_like(steps, -1)).cummax(dim=-2).values
    filled = values.gather(-2, last.clamp(min=0))
    return torch.where(last >= 0, filled, torch.zeros_like(filled))


@dataclass
class StepsPath:
    """A batch of raw observations on a shared time grid, and where anything was observed."""

    values: torch.Tensor
    times: torch.Tensor
    observed: torch.Tensor

    @property
    def interval(self) -> torch.Tensor:
        return self.times[[0, -1]]

    @property
    def grid_points(self) -> torch.Tensor:
        return self.times


class RawStepsConfig(ControlConfig):
    """The observations as they are (NaN forward-filled), one per step, for recurrent cells."""

    kind: Literal["raw_steps"] = "raw_steps"
    provides: ClassVar[frozenset[str]] = frozenset({"steps"})

    def prepare(self, times: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        """Filled values with the observation mask as one extra channel: (N, T, C + 1)."""
        import torch

        observed = (~torch.isnan(values)).any(-1, keepdim=True).to(values.dtype)
        return torch.cat([forward_fill(values), observed], -1)

    def path(self, times: torch.Tensor, coeffs: torch.Tensor) -> StepsPath:
        return StepsPath(coeffs[..., :-1], times, coeffs[..., -1] > 0.5)
