"""Evaluation of a model on one split: outputs over all batches, then the readout's metrics."""

from __future__ import annotations

import torch

from ..model import ZooModel
from ..series import PreparedSplit


@torch.no_grad()
def evaluate(model: ZooModel, split: PreparedSplit, batch_size: int, device, dtype,
             shuffle_drop_last: bool = False, generator: torch.Generator | None = None
             ) -> dict[str, float]:
    """Metrics on ``split``; ``shuffle_drop_last`` evaluates on shuffled full batches only."""
    was_training = model.training
    model.eval()
    outputs, targets = [], []
    for batch in split.batches(batch_size, shuffle=shuffle_drop_last,
                               drop_last=shuffle_drop_last, generator=generator):
        batch = batch.to(device, dtype)
        outputs.append(model(batch))
        targets.append(batch.y)
    model.train(was_training)
    readout = model.spec.model.readout
    return readout.metrics(torch.cat(outputs), torch.cat(targets))
