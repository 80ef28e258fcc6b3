"""CT-GRU baseline (Mozer et al. 2017) as in the LTC repository
(``ctrnn_model.py:197-267``, ``CTGRU``; docs/sources.md#ltc-baselines).

Each unit keeps M traces ĥ (N × M state) with time scales τ_k = 10^{k/2}, k = 0..M−1; h = Σ_k ĥ_k.
Per input step, from [I, h]: retrieval weights r = softmax_k(−(ln τ^r − ln τ_k)²) with
ln τ^r = Dense(I, h); q = tanh(Dense(I, Σ_k r_k ĥ_k)); storage weights s likewise from
ln τ^s = Dense(I, h); ĥ ← ((1 − s) ĥ + s q) ⊙ d_k. Output h.

Decay d_k (the code and the paper differ; the code is the default): ``code`` uses
d_k = exp(−1/ln τ_k), as the repository computes it (so d_0 = 0: the fastest trace is erased
every step); ``paper`` uses Mozer's d_k = exp(−Δt/τ_k) with the elapsed time Δt. The update is
discrete: the solver section does not enter.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from ..small_softmax import small_softmax
from ...dense import glorot_linear
from .recurrent_body import RecurrentCell


class CTGRUCell(RecurrentCell):

    def __init__(self, inputs: int, units: int, scales: int, decay: str, clip: float | None):
        super().__init__(units, (units, scales))
        self.decay, self.clip = decay, clip
        self.register_buffer("ln_tau", torch.arange(scales) * (math.log(10.0) / 2))
        self.tau_r = glorot_linear(inputs + units, units * scales)
        self.tau_s = glorot_linear(inputs + units, units * scales)
        self.detect = glorot_linear(inputs + units, units)

    def _weights(self, ln_tau: torch.Tensor, fast: bool) -> torch.Tensor:
        """softmax_k(−(ln τ − ln τ_k)²) from the layer output ln τ (B, N·M)."""
        return small_softmax(-(ln_tau.view(-1, *self.state_shape) - self.ln_tau) ** 2, fast)

    def decay_factors(self, elapsed: torch.Tensor) -> torch.Tensor:
        if self.decay == "code":
            return torch.exp(-1.0 / self.ln_tau)
        return torch.exp(-elapsed / torch.exp(self.ln_tau))

    def forward(self, x: torch.Tensor, h_hat: torch.Tensor, elapsed: torch.Tensor) -> torch.Tensor:
        fused = torch.cat([x, h_hat.sum(-1)], -1)
        return self.update(h_hat, self.tau_r(fused), self.tau_s(fused),
                           lambda read: self.detect(torch.cat([x, read], -1)), elapsed)

    def update(self, h_hat: torch.Tensor, ln_tau_r: torch.Tensor, ln_tau_s: torch.Tensor,
               detect: Callable[[torch.Tensor], torch.Tensor], elapsed: torch.Tensor,
               fast: bool = False) -> torch.Tensor:
        """The new traces from the layer outputs ln τ^r, ln τ^s and the detector's
        pre-activation as a function of the retrieved Σ_k r_k ĥ_k (``fast``: the softmax
        kernel of :func:`small_softmax`)."""
        r = self._weights(ln_tau_r, fast)
        q = torch.tanh(detect((r * h_hat).sum(-1))).unsqueeze(-1)
        s = self._weights(ln_tau_s, fast)
        h_hat = ((1 - s) * h_hat + s * q) * self.decay_factors(elapsed)
        return h_hat if self.clip is None else h_hat.clamp(-self.clip, self.clip)

    def output(self, state: torch.Tensor) -> torch.Tensor:
        return state.sum(-1)
