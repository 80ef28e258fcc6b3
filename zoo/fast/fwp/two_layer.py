"""The two-layer model's split for the lean solve (paper (a) App. C.1, Eq. 33-35;
:mod:`zoo.fields.fwp.multilayer`).

Its second layer reads the first inside the field, x(t, 1) = FF_mid(W1 q(t)), so the rank-one
forms of the one-layer paths do not hold. What does not read W, layer 1's key, value and rate
and the query q(t) of its read, is evaluated at all stage times in one call
(:func:`stage_inputs`); the steps evaluate only the rest (:func:`stage_field`). Each read W p
there is a broadcast multiply-and-sum over the key axis, where torch's batched product runs
B·H tiny matrix-vector products (EigenWorms: 2,896 of 8 × 8 at batch 181).
"""

from __future__ import annotations

import torch

from ...fields.fwp.fast_weight import as_matrices, flatten, merge_heads
from ...fields.fwp.multilayer import TwoLayerUpdate
from ...fields.fwp.rules import Write
from ...kernels.spline_stages import value


def broadcast_read(W: torch.Tensor, p: torch.Tensor, transpose: bool = False) -> torch.Tensor:
    """W p (Wᵀ p when ``transpose``) per head, (..., H, h), as a multiply-and-sum."""
    if transpose:
        return (W * p.unsqueeze(-1)).sum(-2)
    return (W * p.unsqueeze(-2)).sum(-1)


def stage_inputs(update: TwoLayerUpdate, path, times: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """The W-independent inputs at the stage times (M,), each (B, M, H, ·): layer 1's key,
    value and rate, and the query q(t) of its read."""
    layer1 = update.layer1
    embedded = layer1.slow.embed(value(path, times))
    w = layer1.rule.write(*layer1.slow.split(embedded))
    return w.key, w.value, w.rate, update.mid_query.query(embedded)


def stage_field(update: TwoLayerUpdate, W: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                rate: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
    """dW/dt (flat, B, 2·H·h·h) from W and one stage's :func:`stage_inputs` (each (B, ·)):
    layer 1's term, and layer 2's at x(t, 1) = FF_mid(W1 q(t))."""
    W1, W2 = as_matrices(W, update.heads).split(update.layer_heads, -3)
    hidden = update.mid_ff_block(merge_heads(broadcast_read(W1, query)))
    layer2 = update.layer2
    return flatten(torch.cat([
        update.layer1.rule.term(Write(key, value, rate), W1, broadcast_read),
        layer2.rule.term(layer2.write(hidden), W2, broadcast_read)], -3))
