"""Per-head slow-net outputs that are a linear map of the stage inputs, kept unformed (the Hebb
fast path).

With raw values (the authors' Hebb-CDE code,
docs/sources.md#fwp-diff-hebb-cde-values) v_u = W_h z_u + b_h per head h, so a
read needs no value at any stage: the query folds into the layer and the stage weights into the
inputs,

    ⟨v_u, q⟩ = (q W_h) z_u + ⟨q, b_h⟩,     Σ_u w_u v_u = W_h (Σ_u w_u z_u) + b_h Σ_u w_u,

products of width ``in`` (Speech: 21) per stage instead of the H·c-wide layer (128) and its
gradient. The Hebb-CDE keys and learning rates are such layers too, of the stage inputs scaled
per stage (z_u s_u, the folded LayerNorm's x̄_u/σ_u, :mod:`zoo.fast.fwp.folded_norm`), which
:func:`zoo.fast.fwp.layer_read.layer_read` reads with the values (their query folded in,
:meth:`StageLinear.query_folded`) without forming any of them.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .layouts import head_linear


@dataclass
class StageLinear:
    """v = (z s) Wᵀ + b per head for stage inputs z (B, U, in) and optional per-stage scales
    s (B, U); weight (H·c, in), bias (H·c,)."""

    weight: torch.Tensor
    bias: torch.Tensor
    z: torch.Tensor
    heads: int
    scale: torch.Tensor | None = None

    @property
    def inputs(self) -> torch.Tensor:
        """The scaled stage inputs z s (B, U, in)."""
        return self.z if self.scale is None else self.z * self.scale[..., None]

    def tensor(self) -> torch.Tensor:
        """The values (B, U, H, c), stage-last (:func:`head_linear`)."""
        return head_linear(self.weight, self.bias, self.inputs, self.heads, "stage_last")

    def query_folded(self, q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(q W_h (B, H, in), ⟨q, b_h⟩ (B, H)): ⟨v_u, q⟩ as a layer of the stage inputs."""
        weight, bias = self._per_head()
        return torch.einsum("bhc,hci->bhi", q, weight), torch.einsum("bhc,hc->bh", q, bias)

    def weighted_sum(self, w: torch.Tensor) -> torch.Tensor:
        """Σ_u w_u v_u per sample and head for weights w (B, H, U): (B, H, c)."""
        weight, bias = self._per_head()
        inputs = torch.bmm(w, self.inputs)
        return torch.einsum("bhi,hci->bhc", inputs, weight) + w.sum(-1)[..., None] * bias

    def _per_head(self) -> tuple[torch.Tensor, torch.Tensor]:
        return (self.weight.unflatten(0, (self.heads, -1)),
                self.bias.unflatten(0, (self.heads, -1)))
