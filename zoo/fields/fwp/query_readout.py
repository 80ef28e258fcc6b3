"""Reading the fast weights out (paper (a) Eq. 19-20, 25, 31; docs/sources.md#fwp-readout).

q = softmax per head(Linear_q(e)), where e = LayerNorm(Linear_in(c)) is the slow net's own
embedding of the query input c; y = W q per head (Wᵀ q where the form reads the transposed
memory); heads are concatenated, then ``out_proj`` Linear(d → d) and the feed-forward block.
The task head Linear(d → n_out) is the readout component, not part of this module.
"""

from __future__ import annotations

import torch
from torch import nn

from .fast_weight import merge_heads, retrieve, split_heads
from .feedforward import FeedForward


class FastQuery(nn.Module):
    """y = W · softmax(Linear_q(e)) per head, heads concatenated (..., d)."""

    def __init__(self, d: int, heads: int):
        super().__init__()
        self.heads = heads
        self.query_net = nn.Linear(d, d)

    def query(self, embedded: torch.Tensor) -> torch.Tensor:
        return torch.softmax(split_heads(self.query_net(embedded), self.heads), -1)

    def forward(self, W: torch.Tensor, embedded: torch.Tensor, transpose: bool = False):
        return merge_heads(retrieve(W, self.query(embedded), transpose))


class QueryReadout(nn.Module):
    """FastQuery -> out_proj -> feed-forward block: features of size d."""

    def __init__(self, d: int, heads: int, d_ff: int):
        super().__init__()
        self.fast_query = FastQuery(d, heads)
        self.out_proj = nn.Linear(d, d)
        self.ff_block = FeedForward(d, d_ff)

    def forward(self, W: torch.Tensor, embedded: torch.Tensor, transpose: bool = False):
        return self.features(retrieve(W, self.fast_query.query(embedded), transpose))

    def features(self, read: torch.Tensor) -> torch.Tensor:
        """out_proj and the FF block on the per-head reads (..., H, h)."""
        return self.ff_block(self.out_proj(merge_heads(read)))
