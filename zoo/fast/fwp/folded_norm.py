"""Linear → LayerNorm → Linear evaluated in input space (the FWP fast paths' slow net).

The slow net maps a u-channel input through z = A x + a (d wide), LayerNorm and an output
layer (W_o, b_o). With x̄ = (x, 1), the centring C = I − 11ᵀ/d and Ā = C [A a] (d × (u+1)),
LayerNorm(z) = γ ⊙ Ā x̄ / σ + β_ln with σ² = |Ā x̄|²/d + ε, so the whole map is exactly

    W_o LayerNorm(A x + a) + b_o = F (x̄ / σ) + c,    F = W_o diag(γ) Ā,  c = W_o β_ln + b_o,
    σ² = x̄ᵀ Q x̄ + ε,  Q = Āᵀ Ā / d:

one product of width u + 1 instead of the d-wide embedding and the d-wide output layer, and no
pass over a d-wide tensor. With Speech's u = 21 and d = 80 … 160 this is several times less
memory traffic, forward and backward. The quadratic form is evaluated in float64 (an
(R, u+1) tensor), so σ is at least as accurate as LayerNorm's own statistics; the generic
path keeps the authors' order of operations.
"""

from __future__ import annotations

import torch
from torch import nn

from ...kernels.norm_scale import norm_scale
from .layouts import Layout


def foldable(inner: nn.Module, width: int) -> bool:
    """Whether folding saves work: ``inner`` is a Linear narrower than the embedding."""
    return isinstance(inner, nn.Linear) and inner.in_features < width


def folded_layer_norm(x: torch.Tensor, inner: nn.Linear, norm: nn.LayerNorm,
                      outer_weight: torch.Tensor, outer_bias: torch.Tensor,
                      layout: Layout = "stage_last"
                      ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(x̄ / σ, F, c): ``outer`` ∘ ``norm`` ∘ ``inner`` at x (…, N, u) is the linear map
    x̄/σ ↦ F x̄/σ + c, left to the caller so it can choose the output layout. x̄/σ is a
    (…, N, u+1) view of the memory that ``layout``'s products read (:func:`.layouts.in_layout`;
    ``lanes``: x (B, N, u)): x̄, which needs no gradient, is laid out first and then scaled, so
    the gradient in 1/σ sums contiguous rows."""
    x_bar, rstd, weight, bias = folded_factors(x, inner, norm, outer_weight, outer_bias)
    if layout == "lanes":
        x_bar = x_bar.permute(2, 1, 0).contiguous()  # (N, u+1, B)
        return (x_bar * rstd.T.contiguous()[:, None]).permute(2, 0, 1), weight, bias
    return (x_bar * rstd[..., None, :]).mT, weight, bias


def folded_factors(x: torch.Tensor, inner: nn.Linear, norm: nn.LayerNorm,
                   outer_weight: torch.Tensor, outer_bias: torch.Tensor
                   ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(x̄, 1/σ, F, c) of :func:`folded_layer_norm`, x̄ (…, u+1, N) and 1/σ (…, N) apart (a
    kernel that takes them so needs no gradient of x̄/σ, :mod:`zoo.fast.fwp.layer_read`). The
    quadratic form runs in x̄'s layout (:func:`norm_scale`)."""
    centred = torch.cat([inner.weight, inner.bias[:, None]], 1).double()
    centred = centred - centred.mean(0)  # Ā = C [A a]
    gram = centred.T @ centred / centred.shape[0]  # Q
    x_bar = torch.cat([x.mT, x.new_ones(*x.shape[:-2], 1, x.shape[-2])], -2)  # (…, u+1, N)
    rstd = norm_scale(gram, x_bar.reshape(-1, *x_bar.shape[-2:]), norm.eps)
    rstd = rstd.to(x.dtype).view(*x_bar.shape[:-2], -1)
    weight = (outer_weight * norm.weight) @ centred.to(x.dtype)
    return x_bar, rstd, weight, torch.addmv(outer_bias, outer_weight, norm.bias)
