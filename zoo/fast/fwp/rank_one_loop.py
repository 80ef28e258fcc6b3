"""The post-delta / Oja step loop as one autograd function with a hand-written backward.

Per step n from W_n (h × h per sample and head, stored (h, h, M) with M = H·B innermost) and the
stage writes p_s (probe), t_s (target), β_s (rate) of its S stages (:mod:`.stages`):

    x_s = t_s − W_n p_s − Σ_{j<s} m_js r_j,   r_s = β_s φ(x_s),
    W_{n+1} = W_n + Σ_s r_s ⊗ (c_s p_s)

with the coupling m_js = a_sj h_n ⟨p_j, p_s⟩ (formed in the step, from its probes already in
cache) and the step weights c_s = h b_s (times a sample's end-time weight). The backward runs
the steps in reverse from Ḡ = ∂L/∂W_{n+1}:

    r̄_s = Ḡ c_s p_s (+ −m_sk x̄_k from later stages k),   x̄_s = φ'(x_s)ᵀ (β_s r̄_s),
    β̄_s = ⟨r̄_s, φ(x_s)⟩,   t̄_s = x̄_s,   m̄_js = −⟨x̄_s, r_j⟩,
    p̄_s = c_s Ḡᵀ r_s − W_nᵀ x̄_s + Σ_j a h m̄ p_j (both ends of each coupling),
    W̄_n = Ḡ − Σ_s x̄_s ⊗ p_s,

about 35 tensor operations per step where autograd records about 80, and the stage gradients go
straight into the distinct-stage tensors (overlapping steps share their common stage) instead of
through a backward of the per-step windows. φ(x_s) and ⟨p_j, p_s⟩ are kept from the forward
pass; r_s is β_s φ(x_s) again.
"""

from __future__ import annotations

import torch
from torch.autograd.function import once_differentiable

from ...fields.fwp.rules import Rule
from .stages import activate_backward


def rank_one_loop(rule: Rule, w0: torch.Tensor, probes: torch.Tensor, targets: torch.Tensor,
                  rates: torch.Tensor, stride: int, pairs: tuple[tuple[int, int], ...],
                  coefficients: torch.Tensor, scale: torch.Tensor, all_states: bool
                  ) -> torch.Tensor:
    """W_N (h, h, M), or every W_n (N+1, h, h, M) when ``all_states``, from W_0 = ``w0``.

    ``probes``, ``targets`` (U, h, M) and ``rates`` (U, 1, M) are the distinct-stage writes; step
    n's stage s is the distinct stage n·``stride`` + s. ``pairs`` (j, s) are the stage couplings
    with their a_sj h_n in ``coefficients`` (Q, N) (:func:`.stages.coupling_coefficients`),
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
        coefficients = coefficients.T.tolist()  # per step, a_sj h_n of every pair
        states = w0.new_empty((steps + 1, *w0.shape))
        acts = w0.new_empty((steps, stages, *probes.shape[1:]))
        gram = w0.new_empty((steps, len(pairs), 1, w0.shape[-1]))  # ⟨p_j, p_s⟩ of every pair
        states[0] = w0
        times = _Times(w0, stages)
        read, scaled = _buffers(w0, stages, 2)
        for n in range(steps):
            W, window = states[n], slice(n * stride, n * stride + stages)
            p, rate, g, act = probes[window], rates[window].unbind(0), gram[n].unbind(0), acts[n]
            ps = p.unbind(0)
            for (j, s), g_js in zip(pairs, g):  # a_sj h_n enters as the factor below
                torch.sum(ps[j] * ps[s], 0, keepdim=True, out=g_js)
            x = torch.sub(targets[window], times(W, p, read), out=read).unbind(0)  # S of (h, M)
            rs, a_h = [], coefficients[n]
            for s, (x_s, act_s) in enumerate(zip(x, act.unbind(0))):
                for q, j in incoming[s]:
                    x_s = torch.addcmul(x_s, g[q], rs[j], value=-a_h[q])  # − m_js r_j
                rule.activate(x_s, 0, out=act_s)
                rs.append(rate[s] * act_s)
            _add_outer(W, rs, torch.mul(scale[n].unsqueeze(1), p, out=scaled), out=states[n + 1])
        ctx.rule, ctx.stride, ctx.all_states = rule, stride, all_states
        ctx.pairs, ctx.incoming, ctx.coefficients = pairs, incoming, coefficients
        ctx.save_for_backward(states, acts, probes, rates, gram, scale)
        return states if all_states else states[-1]

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        states, acts, probes, rates, gram, scale = ctx.saved_tensors
        rule, stride, incoming = ctx.rule, ctx.stride, ctx.incoming
        steps, stages = scale.shape[:2]
        d_probes, d_targets, d_rates = (_window_sums(x, steps * stride)
                                        for x in (probes, probes, rates))
        d_gram = gram.new_empty(gram.shape[1:]).unbind(0)  # Q of (1, M): one step's
        # the incoming gradient may arrive in any layout (the caller's permutes): G must be
        # (h, h, M) with M innermost like the states, or every product below runs strided
        G = (torch.zeros_like(states[0]) if ctx.all_states
             else grad.clone(memory_format=torch.contiguous_format))
        times = _Times(G, stages)
        r, cp, d_r, d_right, d_x, work = _buffers(G, stages, 6)
        rs, d_rs, d_xs = r.unbind(0), d_r.unbind(0), d_x.unbind(0)
        for n in range(steps - 1, -1, -1):
            if ctx.all_states:
                G += grad[n + 1]
            W, window = states[n], slice(n * stride, n * stride + stages)
            p, rate, a, c = probes[window], rates[window], acts[n], scale[n].unsqueeze(1)
            ps, rate_s, a_s, g = p.unbind(0), rate.unbind(0), a.unbind(0), gram[n].unbind(0)
            a_h = ctx.coefficients[n]
            torch.mul(rate, a, out=r)
            times(G, torch.mul(c, p, out=cp), d_r)  # Ḡ c_s p_s, (S, h, M)
            times(G, r, d_right, transpose=True)  # Ḡᵀ r_s
            for s in range(stages - 1, -1, -1):
                d_xs[s].copy_(activate_backward(rule, a_s[s], rate_s[s] * d_rs[s], 0))
                for q, j in incoming[s]:  # −m̄_js; times −a_sj h_n: the gradient of ⟨p_j, p_s⟩
                    torch.sum(d_xs[s] * rs[j], 0, keepdim=True, out=d_gram[q])
                    d_rs[j].addcmul_(g[q], d_xs[s], value=-a_h[q])
            _add_window(d_rates, n * stride, stride,
                        torch.mul(d_r, a, out=work).sum_to_size(rate.shape))
            _add_window(d_targets, n * stride, stride, d_x)
            d_p = d_right.mul_(c).sub_(times(W, d_x, work, transpose=True))
            d_ps = d_p.unbind(0)
            for (j, s), d_g, a_h_q in zip(ctx.pairs, d_gram, a_h):
                d_ps[j].addcmul_(d_g, ps[s], value=-a_h_q)
                d_ps[s].addcmul_(d_g, ps[j], value=-a_h_q)
            _add_window(d_probes, n * stride, stride, d_p)
            _add_outer(G, d_xs, ps, -1)
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


class _Times:
    """A v_s (Aᵀ v_s when ``transpose``) into ``out``, for A (h, h, M) and vectors v (S, h, M).
    Where S·h·M is small (up to 2¹⁴, e.g. EigenWorms: 4·8·256) the cost is per operation, and
    the broadcast product (S, h, h, M) and its sum, two operations, are 2-3× quicker; otherwise
    (Speech Oja: 4·4·4096) one multiply-add per column is 1.5× quicker than that product."""

    def __init__(self, like: torch.Tensor, stages: int):
        h, M = like.shape[1:]
        small = stages * h * M <= 2 ** 14
        self.product = like.new_empty((stages, h, h, M)) if small else None

    def __call__(self, A: torch.Tensor, v: torch.Tensor, out: torch.Tensor,
                 transpose: bool = False) -> torch.Tensor:
        if self.product is not None:
            torch.mul(A, v.unsqueeze(2 if transpose else 1), out=self.product)
            return torch.sum(self.product, 1 if transpose else 2, out=out)
        columns = A.unbind(0 if transpose else 1)
        torch.mul(columns[0], v[:, :1], out=out)
        for k in range(1, len(columns)):
            out.addcmul_(columns[k], v[:, k:k + 1])
        return out


def _add_outer(A: torch.Tensor, u, v: torch.Tensor, alpha: float = 1,
               out: torch.Tensor | None = None) -> torch.Tensor:
    """``out`` = A + alpha Σ_s u_s ⊗ v_s (in place in A without ``out``), for A (h, h, M) and
    vectors u, v (S of (h, M))."""
    out, source = (A, A) if out is None else (out, A)
    for us, vs in zip(u, v):
        torch.addcmul(source, us.unsqueeze(1), vs.unsqueeze(0), value=alpha, out=out)
        source = out
    return out
