"""A tiny model trains a few steps on real mirrored data and its loss decreases."""

from __future__ import annotations

import pytest
import torch

from zoo.build_context import DataShape
from zoo.model import ZooModel
from zoo.series import PreparedSplit
from zoo.spec.schema import spec_model
from zoo.training.recipe import make_optimizer

from conftest import DATA_MIRROR as MIRROR, without_mirror

pytestmark = without_mirror("ltc")


@pytest.mark.parametrize("data, field, solver, readout", [
    ({"kind": "cheetah"}, {"kind": "ltc", "units": 8}, {"kind": "ltc_fused"},
     {"kind": "regress"}),
    ({"kind": "gesture"}, {"kind": "ctrnn", "units": 8}, {"kind": "unfold"},
     {"kind": "classify"}),
])
@pytest.mark.slow
def test_loss_decreases_on_real_data(data, field, solver, readout, tmp_path, monkeypatch):
    monkeypatch.setenv("ZOO_DATA_HOME", str(tmp_path))
    monkeypatch.setenv("ZOO_DATA_MIRROR", str(MIRROR))
    spec = spec_model().model_validate({
        "data": data, "model": {"control": {"kind": "raw_steps"}, "field": field,
                                "solver": solver, "readout": readout}})
    bundle = spec.data.load()
    torch.manual_seed(0)
    model = ZooModel(spec, DataShape(bundle.input_channels, 0, bundle.train.values.shape[1],
                                     bundle.task))
    train = bundle.train.subset(slice(0, 64))
    split = PreparedSplit(train, spec.model.control.prepare(train.times, train.values))
    batch = next(split.batches(64))
    optimizer = make_optimizer(model, spec.train.model_copy(update={"optimizer": spec.train.
                               optimizer.model_copy(update={"lr": 0.01})}))
    losses = []
    for _ in range(25):
        optimizer.zero_grad()
        loss = spec.model.readout.loss(model(batch), batch.y)
        loss.backward()
        optimizer.step()
        model.constrain()
        losses.append(loss.item())
    assert losses[-1] < 0.9 * losses[0]
