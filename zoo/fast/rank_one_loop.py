"""The post-delta / Oja step loop as one autograd function with a hand-written backward.

Per step n from W_n (h × h per sample and head, stored (h, h, M) with M = B·H innermost) and the
stage writes p_s (probe), t_s (target), β_s (rate) of its S stages (:mod:`.fwp_stages`):

    x_s = t_s − W_n p_s − Σ_{j<s} m_js r_j,   r_s = β_s φ(x_s),   W_{n+1} = W_n + Σ_s r_s ⊗ (c_s p_s)

with the coupling m_js = a_sj h_n ⟨p_j, p_s⟩ (formed in the step, from its probes already in
cache) and the step weights c_s = h b_s (times a sample's end-time weight). The backward runs
the steps in reverse from Ḡ = ∂L/∂W_{n+1}:

    r̄_s = Ḡ c_s p_s (+ −m_sk x̄_k from later stages k),   x̄_s = φ'(x_s)ᵀ (β_s r̄_s),
    β̄_s = ⟨r̄_s, φ(x_s)⟩,   t̄_s = x̄_s,   m̄_js = −⟨x̄_s, r_j⟩,
    p̄_s = c_s Ḡᵀ r_s − W_nᵀ x̄_s + Σ_j a h m̄ p_j (both ends of each coupling),
    W̄_n = Ḡ − Σ_s x̄_s ⊗ p_s,

about 35 tensor operations per step where autograd records about 80, and the stage gradients go
straight into the distinct-stage tensors (overlapping steps share their common stage) instead of
through a backward of the per-step windows. φ(x_s) and m_js are kept from the forward pass; r_s
is β_s φ(x_s) again.
"""

from __future__ import annotations

import torch
from torch.autograd.function import once_differentiable

from ..fields.fwp.rules import Rule


def rank_one_loop(rule: Rule, w0: torch.Tensor, probes: torch.Tensor, targets: torch.Tensor,
                  rates: torch.Tensor, stride: int, pairs: tuple[tuple[int, int], ...],
                  coefficients: torch.Tensor, scale: torch.Tensor, all_states: bool
                  ) -> torch.Tensor:
    """W_N (h, h, M), or every W_n (N+1, h, h, M) when ``all_states``, from W_0 = ``w0``.

    ``probes``, ``targets`` (U, h, M) and ``rates`` (U, 1, M) are the distinct-stage writes; step
    n's stage s is the distinct stage n·``stride`` + s. ``pairs`` (j, s) are the stage couplings
    with their a_sj h_n in ``coefficients`` (Q, N) (:func:`.fwp_stages.coupling_coefficients`),
    ``scale`` (N, S, 1) or (N, S, M) holds the step weights c_s (neither has a gradient)."""
    return _RankOneLoop.apply(w0, probes, targets, rates, coefficients, scale, rule, stride,
                              pairs, all_states)


def _incoming(pairs: tuple[tuple[int, int], ...], stages: int) -> list[list[tuple[int, int]]]:
    """Per stage s, the (position in ``pairs``, j) of its couplings m_js."""
    return [[(q, j) for q, (j, t) in enumerate(pairs) if t == s] for s in range(stages)]


class _RankOneLoop(torch.autograd.Function):
    @staticmethod
    def forward(ctx, w0, probes, targets, rates, coefficients, scale, rule, stride, pairs,
                all_states):
        steps, stages = scale.shape[:2]
        incoming = _incoming(pairs, stages)
        states = w0.new_empty((steps + 1, *w0.shape))
        acts = w0.new_empty((steps, stages, *probes.shape[1:]))
        mix = w0.new_empty((len(pairs), steps, 1, w0.shape[-1]))
        states[0] = w0
        read, scaled = _buffers(w0, stages, 2)
        for n in range(steps):
            W, window = states[n], slice(n * stride, n * stride + stages)
            p, rate = probes[window], rates[window]
            for q, (j, s) in enumerate(pairs):
                torch.sum(p[j] * p[s], 0, keepdim=True, out=mix[q, n]).mul_(coefficients[q, n])
            x = torch.sub(targets[window], _times(W, p, read), out=read)  # (S, h, M)
            rs = []
            for s in range(stages):
                xs = x[s]
                for q, j in incoming[s]:
                    xs = torch.addcmul(xs, mix[q, n], rs[j], value=-1)
                rule.activate(xs, 0, out=acts[n, s])
                rs.append(rate[s] * acts[n, s])
            _add_outer(states[n + 1].copy_(W), rs, torch.mul(scale[n].unsqueeze(1), p, out=scaled))
        ctx.rule, ctx.stride, ctx.all_states = rule, stride, all_states
        ctx.pairs, ctx.incoming = pairs, incoming
        ctx.save_for_backward(states, acts, probes, rates, mix, coefficients, scale)
        return states if all_states else states[-1]

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        states, acts, probes, rates, mix, coefficients, scale = ctx.saved_tensors
        rule, stride, incoming = ctx.rule, ctx.stride, ctx.incoming
        steps, stages = scale.shape[:2]
        d_probes, d_targets, d_rates = (_window_sums(x, steps * stride)
                                        for x in (probes, probes, rates))
        d_mix = mix.new_empty(mix.shape[:1] + mix.shape[2:])  # (Q, 1, M): one step's
        # the incoming gradient may arrive in any layout (the caller's permutes): G must be
        # (h, h, M) with M innermost like the states, or every product below runs strided
        G = (torch.zeros_like(states[0]) if ctx.all_states
             else grad.clone(memory_format=torch.contiguous_format))
        r, cp, d_r, d_right, d_x, work = _buffers(G, stages, 6)
        for n in range(steps - 1, -1, -1):
            if ctx.all_states:
                G += grad[n + 1]
            W, window = states[n], slice(n * stride, n * stride + stages)
            p, rate, a, c = probes[window], rates[window], acts[n], scale[n].unsqueeze(1)
            torch.mul(rate, a, out=r)
            _times(G, torch.mul(c, p, out=cp), d_r)  # Ḡ c_s p_s, (S, h, M)
            _times(G, r, d_right, transpose=True)  # Ḡᵀ r_s
            for s in range(stages - 1, -1, -1):
                d_x[s] = rule.activate_backward(a[s], rate[s] * d_r[s], 0)
                for q, j in incoming[s]:
                    torch.sum(d_x[s] * r[j], 0, keepdim=True, out=d_mix[q]).mul_(
                        -coefficients[q, n])  # m̄_js a h: the gradient of ⟨p_j, p_s⟩
                    d_r[j].addcmul_(mix[q, n], d_x[s], value=-1)
            _add_window(d_rates, n * stride, stride,
                        torch.mul(d_r, a, out=work).sum_to_size(rate.shape))
            _add_window(d_targets, n * stride, stride, d_x)
            d_p = d_right.mul_(c).sub_(_times(W, d_x, work, transpose=True))
            for q, (j, s) in enumerate(ctx.pairs):
                d_p[j].addcmul_(d_mix[q], p[s])
                d_p[s].addcmul_(d_mix[q], p[j])
            _add_window(d_probes, n * stride, stride, d_p)
            _add_outer(G, d_x, p, -1)
        if ctx.all_states:
            G += grad[0]
        return G, d_probes, d_targets, d_rates, None, None, None, None, None, None


def _window_sums(like: torch.Tensor, written: int) -> torch.Tensor:
    """A gradient of the distinct stages for :func:`_add_window`: uninitialised but for the
    rows from ``written`` (N·stride) on, which only the last step adds to."""
    total = torch.empty_like(like)
    total[written:] = 0
    return total


def _add_window(total: torch.Tensor, start: int, stride: int, value: torch.Tensor) -> None:
    """total[start : start + S] += value for a step's S stages, the steps run last to first:
    the rows from start + stride on are the next step's first (written already) and the rows
    before are written here first, so no zero fill of the whole tensor is needed (S ≤ 2·stride
    for every tableau: consecutive steps share at most their boundary stage)."""
    total[start:start + stride] = value[:stride]
    total[start + stride:start + len(value)] += value[stride:]


def _buffers(like: torch.Tensor, stages: int, count: int) -> list[torch.Tensor]:
    """``count`` (S, h, M) work tensors that every step reuses: a fresh one per step would cost
    a page-faulting allocation each time (these are a few hundred kB)."""
    return [like.new_empty((stages, *like.shape[1:])) for _ in range(count)]


def _times(A: torch.Tensor, v: torch.Tensor, out: torch.Tensor, transpose: bool = False
           ) -> torch.Tensor:
    """A v_s (Aᵀ v_s when ``transpose``) into ``out``, for A (h, h, M) and vectors v (S, h, M):
    one multiply-add per column, cheaper here than a broadcast product and its sum."""
    columns = A.unbind(0 if transpose else 1)
    torch.mul(columns[0], v[:, :1], out=out)
    for k in range(1, len(columns)):
        out.addcmul_(columns[k], v[:, k:k + 1])
    return out


def _add_outer(A: torch.Tensor, u, v: torch.Tensor, alpha: float = 1) -> torch.Tensor:
    """A += alpha Σ_s u_s ⊗ v_s in place, for A (h, h, M) and vectors u, v (S of (h, M))."""
    for us, vs in zip(u, v):
        A.addcmul_(us.unsqueeze(1), vs.unsqueeze(0), value=alpha)
    return A
