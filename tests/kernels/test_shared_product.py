"""A X[g] + b 1ᵀ with one shared A (zoo/kernels/shared_product.py): compiled = torch form, values
and gradients, over the tile edges of the kernel; gradients against finite differences."""

from __future__ import annotations

import itertools

import pytest
import torch
from kernel_harness import assert_forms_agree

from zoo.kernels.compiled import kernel
from zoo.kernels.shared_product import shared_product

pytestmark = pytest.mark.skipif(kernel("shared_product") is None,
                                reason="no C++ compiler: the compiled product cannot be built")
#: rows of A below, at and past a 6-row tile; n below, at and past one and four vectors
SHAPES = list(itertools.product([1, 5, 13], [1, 22], [1, 15, 16, 17, 70, 130]))


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
        assert_forms_agree(shared_product, (A, bias, X),
                           torch.randn(3, M, N, dtype=dtype, generator=gen))


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


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
def test_without_bias(dtype):
    gen = torch.Generator().manual_seed(2)
    A = torch.randn(13, 22, dtype=dtype, generator=gen)
    X = torch.randn(3, 22, 70, dtype=dtype, generator=gen)
    assert_forms_agree(lambda A, X, form: shared_product(A, None, X, form=form), (A, X),
                       torch.randn(3, 13, 70, dtype=dtype, generator=gen))
