"""Binary classification: Linear(features → 1) logit, BCE-with-logits, AUC
(docs/sources.md#sepsis).

The sepsis recipe of Kidger et al. / paper (a): ``BCEWithLogitsLoss(pos_weight=10)``; metrics
sklearn ``roc_auc_score`` and ``average_precision_score`` of the logits, accuracy at logit > 0.
Works per series (outputs (B, 1), labels (B,)) or per step (outputs (B, T, 1), labels (B, T)).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field, PositiveFloat

from ..components import ReadoutConfig

if TYPE_CHECKING:
    import torch
    from torch import nn

    from ..series import TaskInfo


class BinaryConfig(ReadoutConfig):
    """One logit with (optionally positive-weighted) BCE; AUC, average precision, accuracy."""

    kind: Literal["binary"] = "binary"
    pos_weight: PositiveFloat = Field(
        1.0, description="weight of the positive class in the loss (sepsis: 10)")

    tasks: ClassVar[tuple[str, ...]] = ("binary",)
    default_metric: ClassVar[tuple[str, str]] = ("auc", "max")
    metric_names: ClassVar[tuple[str, ...]] = ("loss", "accuracy", "auc", "average_precision")

    def build(self, features: int, task: TaskInfo) -> nn.Module:
        return self.linear(features, 1)

    def loss(self, outputs: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        import torch
        from torch.nn import functional as F

        logits = outputs.reshape(-1)
        pos_weight = torch.tensor(self.pos_weight, dtype=logits.dtype, device=logits.device)
        return F.binary_cross_entropy_with_logits(
            logits, target.reshape(-1).to(logits.dtype), pos_weight=pos_weight)

    def metrics(self, outputs: torch.Tensor, target: torch.Tensor) -> dict[str, float]:
        from sklearn.metrics import average_precision_score, roc_auc_score

        logits = outputs.detach().reshape(-1).double().cpu()
        labels = target.reshape(-1).cpu()
        out = {"loss": self.loss(logits, labels).item(),
               "accuracy": ((logits > 0) == (labels > 0.5)).double().mean().item()}
        both_classes = labels.unique().numel() == 2
        out["auc"] = roc_auc_score(labels, logits) if both_classes else float("nan")
        out["average_precision"] = (average_precision_score(labels, logits) if both_classes
                                    else float("nan"))
        return out
