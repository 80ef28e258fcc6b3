"""Fast path of the CfC (a plain layer: no wiring, no mixed memory, at least one backbone layer).

The backbone's first layer reads [I, h]: its input part W_I I + b is computed for all T steps
in one call (:func:`.baselines.split_layer`), the loop adds W_h h; the heads (f₁, f₂, t_a, t_b)
are one product of z with their stacked weights instead of four. The closed form itself is the
layer's own (:meth:`~zoo.fields.cfc.update.CfCUpdate.closed_form`).
"""

from __future__ import annotations

import torch
from torch.nn import functional as F

from ...fields.cfc.cell import CfCCell
from ...fields.cfc.wired import WiredCfC
from .baselines import run, split_layer


def limit(cell: CfCCell) -> str | None:
    """Why ``cell`` runs the generic path, or None when the fast path serves it."""
    if cell.memory is not None:
        return "mixed memory"
    if isinstance(cell.update, WiredCfC):
        return "wired CfC"
    if not len(cell.update.backbone):
        return "no backbone layer"
    return None


def cfc_sequence(cell: CfCCell, x: torch.Tensor, elapsed: torch.Tensor) -> torch.Tensor:
    """Outputs after every step (T, B, out) of the CfC layer ``cell.update``."""
    update = cell.update
    inputs, w_h = split_layer(update.backbone[0], x)
    rest = update.backbone[1:]
    heads = update.heads()
    weight = torch.cat([head.weight for head in heads])
    bias = torch.cat([head.bias for head in heads])

    def step(k, h, dt):
        z = rest(torch.addmm(inputs[k], h, w_h))
        t = cell.time_scale * dt if cell.use_elapsed else 1.0
        return update.closed_form(list(F.linear(z, weight, bias).chunk(len(heads), -1)), t)

    return cell.output(run(step, x.new_zeros(x.shape[0], cell.units), elapsed))
