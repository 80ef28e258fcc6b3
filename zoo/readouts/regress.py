"""Regression: Linear(features → targets), mean squared error; MSE and MAE metrics.

The LTC forecasting tasks (traffic, power, half-cheetah;
docs/sources.md#ltc-protocol) train on the squared
error and select on validation MSE. Works per series (outputs (B, K), targets (B, K) or (B,))
or per step (outputs (B, T, K), targets (B, T, K) or (B, T)); K = ``task.n_outputs``. NaN
targets (no value there) count in neither the loss nor the metrics.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

from ..components import ReadoutConfig

if TYPE_CHECKING:
    import torch
    from torch import nn

    from ..series import TaskInfo


def _aligned(outputs: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Targets given without their last (size-1) axis get it back."""
    return target.unsqueeze(-1) if target.dim() < outputs.dim() else target


class RegressConfig(ReadoutConfig):
    """Linear head with mean-squared-error loss; MSE and MAE metrics."""

    kind: Literal["regress"] = "regress"

    tasks: ClassVar[tuple[str, ...]] = ("regression",)
    default_metric: ClassVar[tuple[str, str]] = ("mse", "min")
    metric_names: ClassVar[tuple[str, ...]] = ("loss", "mse", "mae")
    minimised: ClassVar[frozenset[str]] = ReadoutConfig.minimised | {"mse", "mae"}

    def build(self, features: int, task: TaskInfo) -> nn.Module:
        return self.linear(features, task.n_outputs)

    def loss(self, outputs: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        import torch
        from torch.nn import functional as F

        target = _aligned(outputs, target).to(outputs.dtype)
        seen = ~torch.isnan(target)
        if bool(seen.all()):
            return F.mse_loss(outputs, target)
        error = torch.where(seen, outputs - target.nan_to_num(), 0)
        return error.square().sum() / seen.sum().clamp(min=1)

    def metrics(self, outputs: torch.Tensor, target: torch.Tensor) -> dict[str, float]:
        import torch
        from torch.nn import functional as F

        target = _aligned(outputs, target).to(outputs.dtype)
        seen = ~torch.isnan(target)
        outputs, target = (outputs, target) if bool(seen.all()) else (outputs[seen], target[seen])
        mse = F.mse_loss(outputs, target).item()
        return {"loss": mse, "mse": mse, "mae": F.l1_loss(outputs, target).item()}
