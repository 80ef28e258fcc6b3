"""A X[g] + b 1ᵀ with one shared A (zoo/fast/shared_product.py): compiled = torch form, values
and gradients, over the tile edges of the kernel; gradients against finite differences."""

from __future__ import annotations

import itertools

import pytest
import torch

from zoo.fast.compiled import kernel
from zoo.fast.shared_product import shared_product

pytestmark = pytest.mark.skipif(kernel("shared_product") is None,
                                reason="no C++ compiler: the compiled product cannot be built")
RTOL = {torch.float64: 1e-12, torch.float32: 2e-6}
#: rows of A below, at and past a 6-row tile; n below, at and past one and four vectors
SHAPES = list(itertools.product([1, 5, 13], [1, 22], [1, 15, 16, 17, 70, 130]))


def run(form: str, A, bias, X, grad):
    inputs = [t.clone().requires_grad_() for t in (A, bias, X)]
    y = shared_product(*inputs, form=form)
    y.backward(grad)
    return [y.detach()] + [t.grad for t in inputs]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
def test_compiled_equals_the_torch_form(dtype, threads, torch_threads):
    torch_threads(threads)
    gen = torch.Generator().manual_seed(0)
    for M, K, N in SHAPES:
        # A and the bias as the slow net passes them: strided views of larger weights
        A = torch.randn(M, 2 * K, dtype=dtype, generator=gen)[:, ::2]
        bias = torch.randn(M, 3, dtype=dtype, generator=gen)[:, 1]
        X = torch.randn(3, K, N, dtype=dtype, generator=gen)
        grad = torch.randn(3, M, N, dtype=dtype, generator=gen)
        # each result's scale: the same sums over the terms' magnitudes
        scales = run("torch", A.abs(), bias.abs(), X.abs(), grad.abs())
        for compiled, torch_form, scale in zip(run("compiled", A, bias, X, grad),
                                               run("torch", A, bias, X, grad), scales):
            assert compiled.shape == torch_form.shape
            error = (compiled - torch_form).abs().max()
            assert error <= RTOL[dtype] * scale.max(), (M, K, N, float(error))


def test_input_gradient_only_when_asked():
    A = torch.randn(7, 4, requires_grad=True)
    y = shared_product(A, torch.zeros(7, requires_grad=True), torch.randn(2, 4, 33),
                       form="compiled")
    (dA,) = torch.autograd.grad(y.sum(), (A,))
    assert dA.shape == (7, 4)


def test_gradients_match_finite_differences():
    gen = torch.Generator().manual_seed(0)
    inputs = [torch.randn(*shape, dtype=torch.float64, generator=gen, requires_grad=True)
              for shape in ((7, 3), (7,), (2, 3, 19))]
    assert torch.autograd.gradcheck(lambda *x: shared_product(*x, form="compiled"), inputs)
