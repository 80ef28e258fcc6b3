"""Multi-class classification: Linear(features → classes), cross-entropy, accuracy.

Works per series (features (B, F), labels (B,)) or per step (features (B, T, F), labels (B, T));
steps labelled ``IGNORE_LABEL`` (no label there) count in neither the loss nor the metrics.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field

from ..components import ReadoutConfig
from ..series import IGNORE_LABEL

if TYPE_CHECKING:
    import torch
    from torch import nn

    from ..series import TaskInfo


def f1_macro(pred: torch.Tensor, target: torch.Tensor, n_classes: int) -> float:
    """Macro-averaged F1 over classes that occur in ``target`` or ``pred``."""
    scores = []
    for c in range(n_classes):
        tp = ((pred == c) & (target == c)).sum().item()
        fp = ((pred == c) & (target != c)).sum().item()
        fn = ((pred != c) & (target == c)).sum().item()
        if tp + fp + fn:
            scores.append(2 * tp / (2 * tp + fp + fn))
    return sum(scores) / len(scores) if scores else 0.0


class ClassifyConfig(ReadoutConfig):
    """Linear head with (optionally class-weighted) cross-entropy; accuracy and F1 metrics."""

    kind: Literal["classify"] = "classify"
    class_weights: list[float] | None = Field(None, description="cross-entropy weight per class")
    weight_reduction: Literal["weighted", "mean"] = Field(
        "weighted", description="with class_weights: divide the weighted loss by the sum of the "
                                "weights (torch) or by the number of labels (the LTC scripts)")
    f1_positive: int | None = Field(
        None, description="also report binary F1 of this class (the LTC ozone metric)")

    tasks: ClassVar[tuple[str, ...]] = ("multiclass",)
    default_metric: ClassVar[tuple[str, str]] = ("accuracy", "max")
    metric_names: ClassVar[tuple[str, ...]] = ("loss", "accuracy", "f1_macro", "f1")

    def reported_metrics(self) -> tuple[str, ...]:
        """``f1`` (of class ``f1_positive``) when that is set, else ``f1_macro``."""
        return ("loss", "accuracy", "f1" if self.f1_positive is not None else "f1_macro")

    def check(self, spec) -> list[tuple[str, str]]:
        n = spec.data.task().n_outputs
        if self.class_weights is not None and len(self.class_weights) != n:
            return [("model.readout.class_weights",
                     f"has {len(self.class_weights)} weights but the dataset has {n} classes")]
        return []

    def build(self, features: int, task: TaskInfo) -> nn.Module:
        return self.linear(features, task.n_outputs)

    def loss(self, outputs: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        import torch
        from torch.nn import functional as F

        logits, labels = _labelled(outputs.reshape(-1, outputs.shape[-1]), target.reshape(-1))
        if not len(labels):
            return outputs.sum() * 0
        if self.class_weights is None:
            return F.cross_entropy(logits, labels)
        weight = torch.tensor(self.class_weights, dtype=outputs.dtype, device=outputs.device)
        if self.weight_reduction == "weighted":
            return F.cross_entropy(logits, labels, weight=weight)
        return (F.cross_entropy(logits, labels, reduction="none") * weight[labels]).mean()

    def metrics(self, outputs: torch.Tensor, target: torch.Tensor) -> dict[str, float]:
        outputs, target = _labelled(outputs.reshape(-1, outputs.shape[-1]), target.reshape(-1))
        pred = outputs.argmax(-1)
        out = {"loss": self.loss(outputs, target).item(),
               "accuracy": (pred == target).double().mean().item()}
        if self.f1_positive is not None:
            pos = self.f1_positive
            tp = ((pred == pos) & (target == pos)).sum().item()
            denom = (pred == pos).sum().item() + (target == pos).sum().item()
            out["f1"] = 2 * tp / denom if denom else 0.0
        else:
            out["f1_macro"] = f1_macro(pred, target, outputs.shape[-1])
        return out


def _labelled(logits: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The rows that carry a label (all of them unless some are ``IGNORE_LABEL``)."""
    keep = labels != IGNORE_LABEL
    return (logits, labels) if bool(keep.all()) else (logits[keep], labels[keep])
