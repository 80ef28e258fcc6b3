"""The LTC fused-solver unfolds of a whole sequence, with a hand-written backward.

On CPU the same computation runs as a compiled loop (:mod:`.compiled`) where its kernel
builds; this module's torch-operation form runs elsewhere (CUDA, other dtypes, no compiler).

Each input step t runs ``unfolds`` updates of paper (b) Eq. 3 with the sensory terms fixed:

    s = σ(σ_ij v_i − σ_ij μ_ij),   num_j = Σ_i s_ij (W⁺E)_ij,   den_j = Σ_i s_ij W⁺_ij,
    v ← (c_num + (cm/h) v + num) / (c_den + den),

c_num = gl·vleak + Σ a^s E^s and c_den = cm/h + gl + Σ a^s + ε (:mod:`.cells`). Autograd would
record about twenty small operations per unfold; the backward here runs the chain rule of one
unfold directly, from the stored v, s and denominator (the forward writes each unfold's s
straight into its slot of the store): with v̄ the gradient of
the unfold's output v′ and D = c_den + den,

    n̄ = v̄ / D,  d̄ = −n̄ v′,  s̄_ij = n̄_j (W⁺E)_ij + d̄_j W⁺_ij,  ā = s̄ s (1 − s),
    v̄ ← n̄ (cm/h) + Σ_j ā_ij σ_ij,

and accumulates the parameters' gradients (Σ s n̄, Σ s d̄, Σ ā v, Σ ā) per sample, summed over
the batch once at the end. Every (B, N, N) intermediate goes into a work tensor that all unfolds
reuse: a fresh one per operation, written cold, costs two to five times the operation itself
at these sizes (1 MB at batch 256).
"""

from __future__ import annotations

import torch
from torch.autograd.function import once_differentiable

from ...kernels.compiled import Form, use_compiled
from .compiled import compiled_unfolds


def fused_unfolds(c_num: torch.Tensor, c_den: torch.Tensor, cm_h: torch.Tensor,
                  sigma: torch.Tensor, offset: torch.Tensor, w_erev: torch.Tensor,
                  w: torch.Tensor, unfolds: int, form: Form = "auto") -> torch.Tensor:
    """States after every input step (T, B, N) from v = 0; c_num, c_den (T, B, N), cm_h (T, N),
    the recurrent σ, offset = −σμ, W⁺E and W⁺ (N, N). ``form``: the compiled loop
    (:mod:`.compiled`), the torch operations here, or ``auto`` (compiled where available)."""
    args = (c_num, c_den, cm_h, sigma, offset, w_erev, w)
    if use_compiled(form, "ltc_synapses", *args):
        return compiled_unfolds(*args, unfolds)
    return _FusedUnfolds.apply(*args, unfolds)


class _FusedUnfolds(torch.autograd.Function):
    @staticmethod
    def forward(ctx, c_num, c_den, cm_h, sigma, offset, w_erev, w, unfolds):
        v = c_num.new_zeros(c_num.shape[1:])
        inputs, denominators, states = [], [], []
        synapses = v.new_empty((len(c_num) * unfolds, *v.shape, v.shape[-1]))
        product, = _work(v, 1)
        for t in range(len(c_num)):
            for u in range(unfolds):
                s = _synapses(v, sigma, offset, synapses[t * unfolds + u])
                den = c_den[t] + torch.mul(s, w, out=product).sum(-2)
                inputs.append(v)
                denominators.append(den)
                v = (torch.addcmul(c_num[t], cm_h[t], v)
                     + torch.mul(s, w_erev, out=product).sum(-2)) / den
            states.append(v)
        states = torch.stack(states)
        ctx.unfolds = unfolds
        ctx.save_for_backward(cm_h, sigma, w_erev, w, torch.stack(inputs),
                              torch.stack(denominators), states, synapses)
        return states

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_states):
        cm_h, sigma, w_erev, w, inputs, denominators, states, synapses = ctx.saved_tensors
        v_bar = torch.zeros_like(grad_states[0])
        # per-sample sums, reduced over the batch once at the end: one in-place op per unfold
        g_sigma, g_offset, g_w_erev, g_w = (grad_states.new_zeros((len(v_bar), *sigma.shape))
                                            for _ in range(4))  # all (B, N, N)
        g_num, g_den = torch.empty_like(grad_states), torch.empty_like(grad_states)
        g_cm_h = torch.empty_like(grad_states)
        a_bar, work = _work(v_bar, 2)
        k = len(inputs)
        for t in range(len(grad_states) - 1, -1, -1):
            v_bar = v_bar + grad_states[t]
            num_bar, den_bar, cm_h_bar = (torch.zeros_like(v_bar) for _ in range(3))
            for u in range(ctx.unfolds):
                k -= 1
                v, out, s = inputs[k], (states[t] if u == 0 else inputs[k + 1]), synapses[k]
                n_bar = v_bar / denominators[k]
                m = n_bar * out  # d̄ = −m
                num_bar += n_bar
                den_bar -= m
                cm_h_bar.addcmul_(n_bar, v)
                n_bar, m = n_bar.unsqueeze(-2), m.unsqueeze(-2)
                g_w_erev.addcmul_(s, n_bar)
                g_w.addcmul_(s, m, value=-1)
                torch.mul(n_bar, w_erev, out=a_bar).addcmul_(m, w, value=-1)  # s̄
                a_bar.mul_(torch.addcmul(s, s, s, value=-1, out=work))  # ā = s̄ s (1 − s)
                g_offset += a_bar
                g_sigma.addcmul_(a_bar, v.unsqueeze(-1))
                v_bar = torch.addcmul(torch.mul(a_bar, sigma, out=work).sum(-1),
                                      n_bar.squeeze(-2), cm_h[t])
            g_num[t], g_den[t], g_cm_h[t] = num_bar, den_bar, cm_h_bar
        return (g_num, g_den, g_cm_h.sum(1), g_sigma.sum(0), g_offset.sum(0), g_w_erev.sum(0),
                g_w.sum(0), None)


def _synapses(v: torch.Tensor, sigma: torch.Tensor, offset: torch.Tensor, out: torch.Tensor
              ) -> torch.Tensor:
    """s = σ(σ_ij v_i − σ_ij μ_ij) into ``out`` (B, N, N)."""
    return torch.sigmoid(torch.addcmul(offset, v.unsqueeze(-1), sigma, out=out), out=out)


def _work(v: torch.Tensor, count: int) -> list[torch.Tensor]:
    """``count`` (B, N, N) work tensors for states v (B, N)."""
    return [v.new_empty(v.shape + v.shape[-1:]) for _ in range(count)]
