"""The folded LayerNorm's 1/σ (zoo/kernels/norm_scale.py): compiled = torch form, value and
gradients (Q's, and X's through the torch form), over block edges, blocks that span samples
(an adjoint step's few stage columns each) and thread splits."""

from __future__ import annotations

import pytest
import torch
from kernel_harness import run

from zoo.kernels.compiled import kernel
from zoo.kernels.norm_scale import norm_scale

pytestmark = pytest.mark.skipif(kernel("norm_scale") is None,
                                reason="no C++ compiler: the compiled scale cannot be built")


def inputs(dtype, gen, samples=3, K=7, columns=37):
    A = torch.randn(K + 2, K, dtype=torch.float64, generator=gen)
    return [A.T @ A, torch.randn(samples, K, columns, dtype=dtype, generator=gen)]


@pytest.mark.parametrize(("samples", "columns"), [(3, 37), (3, 128), (3, 300), (100, 4), (45, 3)])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
def test_compiled_equals_the_torch_form(dtype, threads, samples, columns, torch_threads):
    torch_threads(threads)
    gen = torch.Generator().manual_seed(columns)
    Q, X = inputs(dtype, gen, samples, columns=columns)
    grad = torch.randn(samples, columns, dtype=torch.float64, generator=gen)
    compiled, torch_form = (run(lambda Q, X, form: norm_scale(Q, X, 1e-5, form=form), form,
                                [Q, X], grad) for form in ("compiled", "torch"))
    for mine, reference in zip(compiled, torch_form):  # s, Q̄, X̄ (float64 sums: 1e-12 of the
        scale = reference.abs().max()                   # largest, whatever X's dtype)
        torch.testing.assert_close(mine, reference, rtol=0, atol=1e-12 * float(scale))


def test_gradients_match_finite_differences():
    gen = torch.Generator().manual_seed(1)
    Q, X = inputs(torch.float64, gen, samples=2, K=3, columns=5)
    # not symmetric (the form reads both halves), still positive definite
    Q = Q + 0.1 * torch.randn(3, 3, dtype=torch.float64, generator=gen)
    assert torch.autograd.gradcheck(lambda Q, X: norm_scale(Q, X, 1e-5, form="compiled"),
                                    [Q.requires_grad_(), X.requires_grad_()])
