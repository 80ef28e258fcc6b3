"""The FWP learning rules' steps for the fast continuous adjoint (:mod:`.adjoint`), by hand.

Every term is rank one, f(W) = r ⊗ p with r = β φ(t − W p) (no read for Hebb; Oja runs on Wᵀ,
see :mod:`.stages`), so neither a stage state nor a stage adjoint is ever formed. With the
adjoint A (the cotangent of W) and e = φ'(x)ᵀ(β ⊙ A p), the adjoint's field is
(∂f/∂W)ᵀ A = −e ⊗ p, also rank one. On a backward step of size h (τ grid):

    Y_s p_s = W_n p_s − h Σ_j a_sj ⟨p_j, p_s⟩ r_j,   A_s p_s = A_n p_s − h Σ_j a_sj ⟨p_j, p_s⟩ e_j,
    x_s = t_s − Y_s p_s,   r_s = β_s φ(x_s),   e_s = φ'(x_s)ᵀ (β_s ⊙ A_s p_s),
    W_{n+1} = W_n − Σ_s c_s r_s ⊗ p_s,   A_{n+1} = A_n − Σ_s c_s e_s ⊗ p_s   (c_s = h b_s),

and the stage writes' cotangents (c_s times the vector-Jacobian product of f with A_s):

    t̄_s = c_s e_s,   β̄_s = c_s ⟨φ(x_s), A_s p_s⟩,   p̄_s = c_s (A_sᵀ r_s − Y_sᵀ e_s),
    A_sᵀ r_s = A_nᵀ r_s − h Σ_j a_sj ⟨e_j, r_s⟩ p_j,
    Y_sᵀ e_s = W_nᵀ e_s − h Σ_j a_sj ⟨r_j, e_s⟩ p_j.

The forward steps are Y_s p_s = W_n p_s + h Σ_j a_sj ⟨p_j, p_s⟩ r_j,
W_{n+1} = W_n + Σ c_s r_s ⊗ p_s.
For Hebb, A is constant on a segment and a block's stages are read in one product. Matrices
are stored with the samples and heads innermost, (h, h, H·B) (:func:`.stages.to_lanes`),
read and updated by :mod:`.lanes_matrix`; the writes come as (U, c, H·B).
"""

from __future__ import annotations

import math

import torch

from ...fields.fwp.rules import Rule, Write
from ..solve.adjoint import AdjointSteps, stage_weights
from .stages import activate_backward
from .lanes_matrix import rank_update, read


class RankOneSteps(AdjointSteps):
    """:class:`.adjoint.AdjointSteps` of a learning rule; inputs (key, value, rate), each
    (U, c, H·B), the rule's write at the distinct stage times. States and adjoints stay in the
    lanes layout (h, h, H·B) (Oja: Wᵀ) throughout the solve."""

    def __init__(self, rule: Rule, heads: int):
        self.rule, self.heads = rule, heads

    def enter(self, y: torch.Tensor) -> torch.Tensor:
        """Flat states (B, H·h·h) -> (h, h, H·B) by a 2-D transpose, which torch copies in
        cache-sized blocks, then rows of B: twice as quick as one 4-D permutation, whose every
        read strides by H·h·h."""
        h = math.isqrt(y.shape[1] // self.heads)
        by_sample = y.T.contiguous().view(self.heads, h, h, -1)  # [k, i, j, b] = W_bk[i, j]
        order = (2, 1, 0, 3) if self.rule.transposed else (1, 2, 0, 3)
        return by_sample.permute(order).reshape(h, h, -1)

    def leave(self, W: torch.Tensor, samples: torch.Tensor | None = None) -> torch.Tensor:
        """(h, h, H·B) -> flat states (B, H·h·h), the inverse of :meth:`enter`, or those of
        ``samples`` alone (S, H·h·h)."""
        h = W.shape[0]
        W = W.view(h, h, self.heads, -1)
        if samples is not None:
            W = W.index_select(3, samples)
        order = (2, 1, 0, 3) if self.rule.transposed else (2, 0, 1, 3)
        return W.permute(order).reshape(-1, W.shape[3]).T.contiguous()

    def add(self, W: torch.Tensor, samples: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        h = W.shape[0]
        values = self.enter(values).view(h, h, self.heads, -1)
        return W.view(h, h, self.heads, -1).index_add(3, samples, values).view(W.shape)

    def _writes(self, inputs) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        w = Write(*inputs)
        return self.rule.probe(w), self.rule.target(w), w.rate

    def forward(self, block, index, y0, inputs, keep):
        P, T, beta = self._writes(inputs)
        tableau, position = block.tableau, index.tolist()
        pairs = _Pairs(tableau, P)
        reads = self.rule.reads_state
        W, states = y0, [y0] + [None] * block.steps
        for n, h in enumerate(block.dt.to(y0.dtype).tolist()):
            u = position[n]
            Pn = P[u]
            base, gram = (read(W, Pn), pairs.gram(Pn)) if reads else (None, None)
            rs: list[torch.Tensor] = []
            for s in range(tableau.stages):
                x = T[u[s]]
                if reads:
                    x = x - base[s]
                    for q, j, a in pairs.into[s]:
                        x = torch.addcmul(x, gram[q], rs[j], value=-h * a)
                rs.append(beta[u[s]] * self.rule.activate(x, 0))
            W = rank_update(W, torch.stack(rs), Pn, [h * b for b in tableau.b])
            if n + 1 in keep or n + 1 == block.steps:
                states[n + 1] = W
        return states

    def backward(self, block, index, y, a, inputs, params):
        P, T, beta = self._writes(inputs)
        dt = block.dt.to(y.dtype)
        if not self.rule.reads_state:
            return y, a, self._state_free_backward(block.tableau, P, T, beta, dt, index, a), []
        p_bar, t_bar, b_bar = (torch.zeros_like(x) for x in (P, T, beta))
        tableau, position = block.tableau, index.tolist()
        pairs = _Pairs(tableau, P)
        W, A = y, a
        for n, h in enumerate(dt.tolist()):
            u = position[n]
            rows = index[n].to(P.device)
            Pn = P[u]
            w_reads, a_reads, gram = read(W, Pn), read(A, Pn), pairs.gram(Pn)
            rs, es, phis, aps = [], [], [], []
            for s in range(tableau.stages):
                x, ap = T[u[s]] - w_reads[s], a_reads[s]
                for q, j, coefficient in pairs.into[s]:
                    x = torch.addcmul(x, gram[q], rs[j], value=h * coefficient)
                    ap = torch.addcmul(ap, gram[q], es[j], value=-h * coefficient)
                phi = self.rule.activate(x, 0)
                rs.append(beta[u[s]] * phi)
                es.append(activate_backward(self.rule, phi, beta[u[s]] * ap, 0))
                phis.append(phi)
                aps.append(ap)
            R, E = torch.stack(rs), torch.stack(es)
            c = _weights(tableau.b, h, W)
            t_bar.index_add_(0, rows, c * E)
            b_bar.index_add_(0, rows, c * (torch.stack(phis) * torch.stack(aps)).sum(1, True))
            # p̄_s = c_s (A_nᵀ r_s − W_nᵀ e_s − h Σ_j a_sj (⟨e_j, r_s⟩ − ⟨r_j, e_s⟩) p_j)
            p_terms = read(A, R, True) - read(W, E, True)
            if pairs.count:
                j, s = pairs.first, pairs.second
                mix = (h * pairs.a) * (E[j] * R[s] - R[j] * E[s]).sum(1, keepdim=True)
                p_terms.index_add_(0, s, mix * Pn[j], alpha=-1)
            p_bar.index_add_(0, rows, c * p_terms)
            W = rank_update(W, R, Pn, [-h * b for b in tableau.b])
            A = rank_update(A, E, Pn, [-h * b for b in tableau.b])
        return W, A, self._input_bars(p_bar, t_bar, b_bar), []

    def _state_free_backward(self, tableau, P, T, beta, dt, index, a) -> list[torch.Tensor]:
        """A constant (y is not needed): every stage's cotangents from one read of A, weighted
        by its Σ h b_s."""
        c = stage_weights(tableau, dt, index, P.shape[0]).sum(0)
        ap = read(a, P)
        phi = self.rule.activate(T, 1)
        r = beta * phi
        c = c.view(-1, 1, 1)
        t_bar = c * activate_backward(self.rule, phi, beta * ap, 1)
        b_bar = c * (phi * ap).sum(1, keepdim=True)
        p_bar = c * read(a, r, True)
        return self._input_bars(p_bar, t_bar, b_bar)

    def _input_bars(self, p_bar, t_bar, b_bar) -> list[torch.Tensor]:
        """(key, value, rate) cotangents from the probe's, target's and rate's."""
        key, value = (t_bar, p_bar) if self.rule.transposed else (p_bar, t_bar)
        return [key, value, b_bar]


class _Pairs:
    """The stage pairs (j, s) of a tableau with a_sj ≠ 0: the couplings of a step's stages."""

    def __init__(self, tableau, like: torch.Tensor):
        device = like.device
        pairs = [(j, s, a) for s, row in enumerate(tableau.a) for j, a in enumerate(row) if a]
        self.count = len(pairs)
        #: per stage s, (pair number q, j, a_sj) of its couplings
        self.into = [[(q, j, a) for q, (j, t, a) in enumerate(pairs) if t == s]
                     for s in range(tableau.stages)]
        self.first = torch.tensor([j for j, _, _ in pairs], dtype=torch.long, device=device)
        self.second = torch.tensor([s for _, s, _ in pairs], dtype=torch.long, device=device)
        self.a = like.new_tensor([a for _, _, a in pairs])[:, None, None]

    def gram(self, P: torch.Tensor) -> torch.Tensor:
        """⟨p_j, p_s⟩ per lane for each pair, (Q, 1, M)."""
        return (P[self.first] * P[self.second]).sum(1, keepdim=True)


def _weights(b: tuple[float, ...], h: float, like: torch.Tensor) -> torch.Tensor:
    """c_s = h b_s as (S, 1, 1)."""
    return like.new_tensor([h * x for x in b])[:, None, None]
