"""Synthetic datasets generated in code: shapes, balance, determinism, learnability."""

from __future__ import annotations

import torch

from zoo import registry


def test_spirals_shapes_and_direction():
    bundle = registry.get("datasets", "spirals")(n_train=64, length=50).load()
    assert bundle.train.values.shape == (64, 50, 3)
    torch.testing.assert_close(bundle.train.values[0, :, 0], torch.linspace(0, 1, 50))
    x, y = bundle.train.values[..., 1], bundle.train.values[..., 2]
    # signed area swept (x dy − y dx): positive anticlockwise (label 1), negative clockwise
    area = (x[:, :-1] * y.diff(dim=1) - y[:, :-1] * x.diff(dim=1)).sum(1)
    assert torch.equal((area > 0).long(), bundle.train.y)
    again = registry.get("datasets", "spirals")(n_train=64, length=50).load()
    assert torch.equal(again.train.values, bundle.train.values)


def test_irregular_sines_missing_points_and_classes():
    bundle = registry.get("datasets", "irregular_sines")(n_train=400, missing=0.3).load()
    missing = torch.isnan(bundle.train.values[..., 1]).double().mean().item()
    assert 0.25 < missing < 0.32  # 30 % of interior points dropped, never the end points
    assert not torch.isnan(bundle.train.values[:, [0, -1]]).any()
    counts = torch.bincount(bundle.train.y, minlength=4)
    assert counts.min() > 70
