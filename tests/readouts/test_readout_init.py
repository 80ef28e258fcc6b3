"""The output layer's initial weights (``model.readout.init``)."""

from __future__ import annotations

import math

import pytest
import torch

from zoo.readouts.classify import ClassifyConfig
from zoo.readouts.regress import RegressConfig
from zoo.series import TaskInfo


def test_default_is_torch_linear():
    torch.manual_seed(0)
    head = RegressConfig().build(32, TaskInfo("regression", 17, per_step=True))
    assert head.bias.abs().max() > 0  # nn.Linear draws its bias too
    assert head.weight.abs().max() <= 1 / math.sqrt(32)


def test_glorot_uniform_is_tf_dense():
    torch.manual_seed(0)
    head = ClassifyConfig(init="glorot_uniform").build(32, TaskInfo("multiclass", 5))
    limit = math.sqrt(6 / (32 + 5))
    assert torch.all(head.bias == 0) and head.weight.abs().max() <= limit
    assert head.weight.std().item() == pytest.approx(limit / math.sqrt(3), rel=0.15)


def test_truncated_normal_is_tf_keras_default():
    torch.manual_seed(0)
    head = RegressConfig(init="truncated_normal").build(400, TaskInfo("regression", 50))
    w = head.weight
    assert torch.all(head.bias == 0) and w.abs().max() <= 0.1
    # N(0, 0.05²) cut at ±2σ has std 0.05 · 0.8796
    assert w.std().item() == pytest.approx(0.05 * 0.8796, rel=0.03)
