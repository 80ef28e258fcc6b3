"""Log-signature windows as a piecewise-constant control: the log-ODE method of neural RDEs
(Morrill et al. 2021; docs/sources.md#nrde,
#eigenworms-data and #fwp-eigenworms-model).

Windows: with ``step`` s and ``window`` w points (default w = s + 1, so neighbouring windows
share their end points), window i covers observations [i·s, i·s + w − 1] for i = 0, 1, … while
a whole window fits; a last partial window is dropped (EigenWorms: T = 17,984, s = 4 → 4,495
windows). NaNs are forward-filled, leftovers set to 0, before the windows are cut. Each window's
depth-N log-signature (words basis, :mod:`.logsig_backend`) is one piece of the control.

Path (FWP ``eigenworms/ncdes/rdeint.py:45-83``; docs/sources.md#fwp-eigenworms-model): with L
windows, piece i is used for t ∈ [i, i+1) (bisect on the knots 0..L−1) and the last piece also
on [L−1, L+1], because the authors integrate over [0, L+1]. ``evaluate`` and ``derivative`` both
return the piece (dh/dt = F(h)·logsig_i), the grid is 0, 1, …, L+1 and ``first_observation`` is
the first (filled) raw observation, the initial value x0 of the neural RDE. The coefficients of
a series are one tensor (1 + L, D): row 0 is x0 padded with zeros to D (D ≥ C), rows 1.. are the
log-signatures.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field, PositiveInt

from ..components import ControlConfig
from ..errors import InputError
from .logsig_backend import Backend, check_backend, logsignature, logsignature_channels

if TYPE_CHECKING:
    import torch

    from .paths import LogSignaturePath


class LogSigConfig(ControlConfig):
    """Log-signatures of sliding windows as a piecewise-constant control (neural RDE)."""

    kind: Literal["logsig"] = "logsig"
    depth: PositiveInt = Field(2, description="log-signature truncation depth")
    step: PositiveInt = Field(4, description="window stride, in observations")
    window: int | None = Field(
        None, ge=2, description="observations per window; default step + 1 (shared end points)")
    basis: Literal["words"] = Field(
        "words", description="log-signature basis (Lyndon-word coefficients, signatory's default)")
    backend: Backend = Field("pysiglib", description="library that computes the log-signatures")
    provides: ClassVar[frozenset[str]] = frozenset({"evaluate", "derivative"})

    @property
    def window_points(self) -> int:
        return self.window or self.step + 1

    def check(self, spec) -> list[tuple[str, str]]:
        try:
            check_backend(self.backend)
        except InputError as exc:
            return [("model.control.backend", exc.message)]
        return []

    def channels(self, input_channels: int) -> int:
        return logsignature_channels(input_channels, self.depth)

    def prepare(self, times: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        import torch
        import torchcde
        from torch.nn import functional as F

        x = torchcde.misc.forward_fill(values)
        x = x.masked_fill(x.isnan(), 0.0)
        n, length, c = x.shape
        w = self.window_points
        if length < w:
            raise InputError(f"model.control.window: series have {length} observations, fewer "
                             f"than one window of {w}")
        windows = x.unfold(1, w, self.step).transpose(-1, -2)  # (N, L, w, C)
        pieces = windows.shape[1]
        logsig = logsignature(windows.reshape(n * pieces, w, c), self.depth, self.backend)
        logsig = logsig.view(n, pieces, -1)
        x0 = F.pad(x[:, :1], (0, logsig.shape[-1] - c))
        return torch.cat([x0, logsig], dim=1)

    def path(self, times: torch.Tensor, coeffs: torch.Tensor) -> LogSignaturePath:
        from .paths import LogSignaturePath

        d = coeffs.shape[-1]
        c = next(u for u in range(1, d + 1) if self.channels(u) == d)
        return LogSignaturePath(coeffs[:, 0, :c], coeffs[:, 1:], self.step, self.window_points)
