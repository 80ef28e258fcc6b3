"""The fast paths' autograd functions with hand-written backward passes: values against plain
loops, gradients against finite differences (float64)."""

from __future__ import annotations

import pytest
import torch

from zoo.fast.solved import final_tanh
from zoo.kernels.compiled import kernel
from zoo.fast.solve.lean import field_stepper
from zoo.fast.ltc.fused import fused_unfolds
from zoo.fast.fwp.rank_one_loop import _Times, rank_one_loop
from zoo.fast.solve.tableau import TABLEAUX
from zoo.fields.fwp.rules import Delta, Oja
from zoo.fields.ncde import FinalTanh
from zoo.fast.fwp.stage_products import stage_products
from zoo.fast.fwp.delta_sweep import sweep


def _random(*shape: int, scale: float = 1.0) -> torch.Tensor:
    return (scale * torch.randn(*shape, dtype=torch.float64)).requires_grad_()


@pytest.mark.parametrize("form", ["torch", "compiled"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("S, stride", [(2, 2), (3, 2)], ids=["disjoint", "shared-stage"])
def test_sweep_matches_its_recurrence_and_gradients(reverse, S, stride, form):
    if form == "compiled" and kernel("sweep") is None:
        pytest.skip("no C++ compiler: the compiled sweep cannot be built")
    torch.manual_seed(0)
    h, M, B = 3, 5, 4
    columns = _random((M - 1) * stride + S, h, B, scale=0.3)
    x0, P, b = _random(h, B), _random(M, S, S, B), _random(M, S, B)
    x, f = sweep(x0, columns, stride, P, b, reverse=reverse, form=form)
    expected, fs = x0, [None] * M
    for i in (reversed(range(M)) if reverse else range(M)):
        K = columns[i * stride:i * stride + S]
        e = torch.einsum("shb,hb->sb", K, expected) - b[i]
        fs[i] = torch.einsum("stb,tb->sb", P[i], e)
        expected = expected - torch.einsum("shb,sb->hb", K, fs[i])
    torch.testing.assert_close(x, expected)
    torch.testing.assert_close(f, torch.stack(fs))
    assert torch.autograd.gradcheck(
        lambda x0, columns, P, b: sweep(x0, columns, stride, P, b, reverse=reverse, form=form),
        (x0, columns, P, b))


def test_stage_products_match_the_windows_and_gradients():
    torch.manual_seed(0)
    steps, stride, pairs = 4, 3, ((0, 1), (0, 3), (2, 3))
    k = _random((steps - 1) * stride + 4, 3, 5)
    expected = torch.stack([torch.stack([(k[n * stride + j] * k[n * stride + s]).sum(0, True)
                                         for n in range(steps)]) for j, s in pairs])
    torch.testing.assert_close(stage_products(k, stride, steps, pairs), expected)
    assert torch.autograd.gradcheck(lambda k: stage_products(k, stride, steps, pairs), (k,))


def test_fused_ltc_unfolds_match_the_update_and_gradients():
    torch.manual_seed(0)
    T, B, N, unfolds = 3, 2, 4, 2
    c_num, sigma, offset, w_erev = _random(T, B, N), _random(N, N), _random(N, N), _random(N, N)
    c_den = (1 + torch.rand(T, B, N, dtype=torch.float64)).requires_grad_()
    cm_h = (0.5 + torch.rand(T, N, dtype=torch.float64)).requires_grad_()
    w = torch.rand(N, N, dtype=torch.float64).requires_grad_()
    args = (c_num, c_den, cm_h, sigma, offset, w_erev, w)
    v, expected = torch.zeros(B, N, dtype=torch.float64), []
    for t in range(T):
        for _ in range(unfolds):
            s = torch.sigmoid(sigma * v.unsqueeze(-1) + offset)
            v = (c_num[t] + cm_h[t] * v + (s * w_erev).sum(-2)) / (c_den[t] + (s * w).sum(-2))
        expected.append(v)
    # the torch form (the compiled loop is held to it in test_ltc_compiled.py)
    torch.testing.assert_close(fused_unfolds(*args, unfolds, form="torch"), torch.stack(expected))
    assert torch.autograd.gradcheck(lambda *a: fused_unfolds(*a, unfolds, form="torch"), args)


@pytest.mark.parametrize("rule", [Oja(), Delta(post=True)], ids=["oja", "post-delta"])
@pytest.mark.parametrize("all_states", [False, True])
def test_rank_one_loop_matches_its_recurrence_and_gradients(rule, all_states):
    torch.manual_seed(0)
    h, M, steps, stride, pairs = 3, 2, 3, 2, ((0, 1), (0, 2), (1, 2))
    stages = 3
    units = steps * stride + 1
    w0, probes, targets = _random(h, h, M), _random(units, h, M), _random(units, h, M)
    rates = torch.rand(units, 1, M, dtype=torch.float64).requires_grad_()
    coefficients = torch.rand(len(pairs), steps, dtype=torch.float64)  # a_sj h_n
    scale = torch.rand(steps, stages, M, dtype=torch.float64)
    args = (w0, probes, targets, rates)

    def loop(w0, probes, targets, rates):
        return rank_one_loop(rule, w0, probes, targets, rates, stride, pairs, coefficients,
                             scale, all_states)

    W, expected = w0, [w0]
    for n in range(steps):
        rs = []
        for s in range(stages):
            u = n * stride + s
            x = targets[u] - torch.einsum("ijm,jm->im", W, probes[u])
            for q, (j, t) in enumerate(pairs):
                if t == s:
                    m = coefficients[q, n] * (probes[n * stride + j] * probes[u]).sum(0)
                    x = x - m * rs[j]
            rs.append(rates[u] * rule.activate(x, 0))
        W = W + sum(torch.einsum("im,jm->ijm", r, scale[n, s] * probes[n * stride + s])
                    for s, r in enumerate(rs))
        expected.append(W)
    torch.testing.assert_close(loop(*args), torch.stack(expected) if all_states else W)
    assert torch.autograd.gradcheck(loop, args)


@pytest.mark.parametrize("M", [2, 4096], ids=["broadcast-product", "per-column"])
@pytest.mark.parametrize("transpose", [False, True])
def test_loop_reads_equal_a_plain_contraction_in_both_forms(M, transpose):
    """The loop's A v_s picks its form by size (:class:`_Times`); both give A v_s (Aᵀ v_s)."""
    torch.manual_seed(0)
    h, S = 3, 4
    A, v = torch.randn(h, h, M, dtype=torch.float64), torch.randn(S, h, M, dtype=torch.float64)
    times = _Times(A, S)
    assert (times.product is None) == (M == 4096)
    expected = torch.einsum("jim,sjm->sim" if transpose else "ijm,sjm->sim", A, v)
    torch.testing.assert_close(times(A, v, torch.empty_like(v), transpose), expected)


@pytest.mark.parametrize("method", list(TABLEAUX))
def test_final_tanh_solve_matches_autograd_and_its_gradients(method, monkeypatch):
    """The NCDE's reverse pass (blocks of two steps' weight gradients, the last one short)
    against the same steps under autograd, and against finite differences, for the state, the
    control's stage derivatives and every weight."""
    monkeypatch.setattr(final_tanh, "BLOCK_ROWS", 2 * len(TABLEAUX[method].c) * 2)
    torch.manual_seed(0)
    B, h, C, steps = 2, 3, 2, 5
    field = FinalTanh(C, h, 4, layers=3).double()
    tableau = TABLEAUX[method]
    index = torch.arange(steps * tableau.stages).view(steps, tableau.stages) % 7
    dt = torch.tensor([0.3, 0.2, 0.4, 0.1, 0.3], dtype=torch.float64)
    y0, dx = _random(B, h), _random(B, 7, C)
    linears = [field.linear_in, *field.linears, field.linear_out]
    solve = final_tanh.final_tanh_stepper(linears, C)
    plain = field_stepper(lambda z, d: (field(z) * d.unsqueeze(-2)).sum(-1))
    ys = torch.stack(solve(tableau, dt, index, y0, (dx,)))
    expected = torch.stack(plain(tableau, dt, index, y0, (dx,)))
    torch.testing.assert_close(ys, expected)
    weights = torch.randn_like(ys)
    params = [p for linear in linears for p in linear.parameters()]
    grads = torch.autograd.grad((ys * weights).sum(), [y0, dx, *params])
    expected_grads = torch.autograd.grad((expected * weights).sum(), [y0, dx, *params])
    for got, want in zip(grads, expected_grads):
        torch.testing.assert_close(got, want)
    assert torch.autograd.gradcheck(
        lambda y, d: torch.stack(solve(tableau, dt, index, y, (d,))), (y0, dx))
