"""Binary and regression readouts: heads, losses and metrics on hand-checkable numbers."""

import math

import pytest
import torch
from sklearn.metrics import average_precision_score, roc_auc_score

from zoo import registry
from zoo.readouts.binary import BinaryConfig
from zoo.readouts.regress import RegressConfig
from zoo.series import TaskInfo


def test_registered():
    assert registry.get("readouts", "binary") is BinaryConfig
    assert registry.get("readouts", "regress") is RegressConfig
    assert BinaryConfig.tasks == ("binary",) and BinaryConfig.default_metric == ("auc", "max")
    assert RegressConfig.tasks == ("regression",)
    assert RegressConfig.default_metric == ("mse", "min")


def test_every_metric_improves_in_its_direction():
    """The direction a checkpoint is selected by, and a search's default: error metrics and
    losses down, scores up, under any prefix."""
    from zoo.readouts.classify import ClassifyConfig

    regress, binary, classify = RegressConfig(), BinaryConfig(), ClassifyConfig()
    for metric in ("val/mse", "val/mae", "train_eval/mae", "val/loss", "val/objective"):
        assert regress.mode_of(metric) == "min", metric
    for metric in ("val/auc", "val/accuracy", "train_eval/average_precision"):
        assert binary.mode_of(metric) == "max", metric
    assert binary.mode_of("val/loss") == binary.mode_of("val/objective") == "min"
    assert classify.mode_of("val/f1_macro") == classify.mode_of("val/f1") == "max"
    assert classify.mode_of("val/nll_loss") == "min"  # an undeclared loss, as a plugin's


def test_binary_head_and_weighted_loss():
    head = BinaryConfig().build(8, TaskInfo("binary", 1))
    assert head(torch.zeros(4, 8)).shape == (4, 1)
    logits = torch.tensor([[2.0], [-1.0], [0.5]])
    labels = torch.tensor([1, 0, 0])
    sp = torch.nn.functional.softplus  # -log σ(z) = softplus(-z), -log(1 - σ(z)) = softplus(z)
    plain = (sp(torch.tensor(-2.0)) + sp(torch.tensor(-1.0)) + sp(torch.tensor(0.5))) / 3
    weighted = (10 * sp(torch.tensor(-2.0)) + sp(torch.tensor(-1.0)) + sp(torch.tensor(0.5))) / 3
    torch.testing.assert_close(BinaryConfig().loss(logits, labels), plain)
    torch.testing.assert_close(BinaryConfig(pos_weight=10).loss(logits, labels), weighted)


def test_binary_metrics():
    logits = torch.tensor([3.0, -2.0, 0.5, -0.1, 1.0, -3.0]).unsqueeze(-1)
    labels = torch.tensor([1, 0, 0, 1, 1, 0])
    m = BinaryConfig(pos_weight=10).metrics(logits, labels)
    assert set(m) == {"loss", "accuracy", "auc", "average_precision"}
    assert m["accuracy"] == pytest.approx(4 / 6)  # 0.5 (label 0) and -0.1 (label 1) are wrong
    # positives 3, 1, -0.1 against negatives 0.5, -2, -3: 8 of 9 pairs ordered correctly
    assert m["auc"] == pytest.approx(8 / 9)
    assert m["auc"] == pytest.approx(roc_auc_score(labels, logits[:, 0]))
    assert m["average_precision"] == pytest.approx(average_precision_score(labels, logits[:, 0]))
    assert m["loss"] == pytest.approx(BinaryConfig(pos_weight=10).loss(logits, labels).item())


def test_binary_per_step_and_single_class():
    logits = torch.tensor([[[1.0], [-1.0], [2.0]], [[-2.0], [0.3], [-0.4]]])  # (B, T, 1)
    labels = torch.tensor([[1, 0, 1], [0, 1, 1]])
    m = BinaryConfig().metrics(logits, labels)
    assert m["accuracy"] == pytest.approx(5 / 6)
    assert m["auc"] == pytest.approx(roc_auc_score(labels.reshape(-1), logits.reshape(-1)))
    only_negatives = BinaryConfig().metrics(logits, torch.zeros(2, 3, dtype=torch.long))
    assert math.isnan(only_negatives["auc"]) and math.isnan(only_negatives["average_precision"])


def test_regress_head_loss_and_metrics():
    head = RegressConfig().build(5, TaskInfo("regression", 3))
    assert head(torch.zeros(2, 5)).shape == (2, 3)
    out = torch.tensor([[1.0, 2.0], [0.0, -1.0]])
    target = torch.tensor([[0.0, 2.0], [2.0, -1.0]])
    cfg = RegressConfig()
    torch.testing.assert_close(cfg.loss(out, target), torch.tensor(5 / 4))
    assert cfg.metrics(out, target) == pytest.approx({"loss": 1.25, "mse": 1.25, "mae": 0.75})


def test_regress_per_step_and_single_target():
    head = RegressConfig().build(4, TaskInfo("regression", 1, per_step=True))
    features = torch.randn(2, 7, 4)
    assert head(features).shape == (2, 7, 1)
    out = torch.tensor([[[1.0], [2.0], [3.0]]])  # (B, T, 1)
    target = torch.tensor([[1.0, 0.0, 6.0]])     # (B, T): the size-1 target axis left out
    m = RegressConfig().metrics(out, target)
    assert m == pytest.approx({"loss": 13 / 3, "mse": 13 / 3, "mae": 5 / 3})
    torch.testing.assert_close(RegressConfig().loss(out, target.unsqueeze(-1)),
                               torch.tensor(13 / 3))
