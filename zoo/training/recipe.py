"""The optimisation recipe of a spec: optimiser groups, gradient scaling, penalty, schedule.

Faithful to the FWP/NCDE authors' code (docs/sources.md#fwp-recipe and
#fwp-eigenworms-recipe): Adam with lr = base_lr · batch/32 when
``lr_batch_scaling``; the readout's gradients multiplied by ``output_grad_scale`` (hooks); the
readout's learning rate multiplied by ``output_lr_scale`` (EigenWorms ``final_layer_scaling``);
loss += c · Σ_p ‖p‖₂ (per-tensor L2 norm, not squared) over the model, the vector field, or the
model without its static-feature initial-state network (the FWP Sepsis code penalises its inner
model only: ``regularise_parameters`` is the model that ``InitialValueNetwork`` wraps,
IDSIA/neuraldiffeq-fwp ``speech_and_physionet/experiments/sepsis.py`` ``new_make_model`` and
``common.py`` ``_add_weight_regularisation``). A field body's optional ``penalty()`` (the
log neural CDE's Lip(2) term) is added to it.
"""

from __future__ import annotations

import torch
from torch import nn

from ..fields.initial_state import StaticNetwork
from ..model import ZooModel


def make_optimizer(model: ZooModel, train) -> torch.optim.Optimizer:
    opt = train.optimizer
    lr = opt.lr * (train.batch_size / 32 if opt.lr_batch_scaling else 1.0)
    head = list(model.head.parameters())
    head_ids = {id(p) for p in head}
    rest = [p for p in model.parameters() if id(p) not in head_ids]
    groups = [{"params": rest, "lr": lr}, {"params": head, "lr": lr * train.output_lr_scale}]
    groups = [g for g in groups if g["params"]]
    if opt.kind == "sgd":
        return torch.optim.SGD(groups, lr=lr, weight_decay=opt.weight_decay)
    cls = torch.optim.Adam if opt.kind == "adam" else torch.optim.AdamW
    return cls(groups, lr=lr, betas=opt.betas, eps=opt.eps, weight_decay=opt.weight_decay)


def scale_output_gradients(model: ZooModel, scale: float) -> None:
    if scale != 1.0:
        for p in model.head.parameters():
            p.register_hook(lambda g, s=scale: g * s)


def penalised_parameters(model: ZooModel, scope: str) -> list[nn.Parameter]:
    """The parameters ``train.penalty_scope`` names."""
    if scope == "field":
        return model.field_parameters()
    if scope == "without_static":
        static = {id(p) for m in model.modules() if isinstance(m, StaticNetwork)
                  for p in m.parameters()}
        return [p for p in model.parameters() if id(p) not in static]
    return list(model.parameters())


def weight_penalty(model: ZooModel, train) -> torch.Tensor | float:
    """c · Σ_p ‖p‖₂ over ``train.penalty_scope``, plus the field body's own ``penalty()``."""
    own = model.penalty()
    if train.weight_penalty == 0:
        return own
    params = penalised_parameters(model, train.penalty_scope)
    return own + train.weight_penalty * sum(p.norm() for p in params)


def make_scheduler(optimizer: torch.optim.Optimizer, train):
    s = train.schedule
    if s.kind == "none":
        return None
    return torch.optim.lr_scheduler.ReduceLROnPlateau(
        optimizer, mode=s.mode, factor=s.factor, patience=s.patience, threshold=s.threshold,
        min_lr=s.min_lr)
