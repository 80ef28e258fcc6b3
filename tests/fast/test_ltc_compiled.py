"""The compiled LTC loops (zoo/kernels/src/ltc_synapses.cpp) = the torch forms: values and every
gradient, float64 and float32, one or two threads, sizes that are not a multiple of the vector
width, saturated sigmoids; gradients against finite differences."""

from __future__ import annotations

import pytest
import torch

from zoo.kernels.compiled import kernel
from zoo.fast.ltc.cells import synapse_sums
from zoo.fast.ltc.fused import fused_unfolds

pytestmark = pytest.mark.skipif(kernel("ltc_synapses") is None,
                                reason="no C++ compiler: the compiled loops cannot be built")

#: float32: both forms run the same operations per element, summed in another order
RTOL = {torch.float64: 1e-12, torch.float32: 2e-6}


def _parameters(pre: int, post: int, dtype: torch.dtype, scale: float = 1.0):
    sigma = scale * (3 + 5 * torch.rand(pre, post, dtype=dtype))
    offset = -sigma * (0.3 + 0.5 * torch.rand(pre, post, dtype=dtype))
    w = torch.rand(pre, post, dtype=dtype)
    return [sigma, offset, w * torch.randn(pre, post, dtype=dtype).sign(), w]


def _unfold_inputs(steps: int, batch: int, n: int, dtype: torch.dtype, scale: float = 1.0):
    c_num = torch.randn(steps, batch, n, dtype=dtype)
    c_den = 1 + torch.rand(steps, batch, n, dtype=dtype)
    cm_h = 0.5 + torch.rand(steps, n, dtype=dtype)
    return [c_num, c_den, cm_h, *_parameters(n, n, dtype, scale)]


def _values_and_gradients(function, inputs, form):
    inputs = [x.clone().requires_grad_() for x in inputs]
    outputs = function(*inputs, form)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    weights = [torch.randn(o.shape, dtype=o.dtype, generator=torch.Generator().manual_seed(i))
               for i, o in enumerate(outputs)]
    sum((o * w).sum() for o, w in zip(outputs, weights)).backward()
    return [o.detach() for o in outputs] + [x.grad for x in inputs]


def _assert_forms_agree(function, inputs, dtype):
    compiled = _values_and_gradients(function, inputs, "compiled")
    torch_form = _values_and_gradients(function, inputs, "torch")
    for index, (a, b) in enumerate(zip(compiled, torch_form)):
        error = (a - b).abs().max()
        assert error <= RTOL[dtype] * b.abs().max(), (index, float(error))


def unfolds(*args):
    *tensors, form = args
    return fused_unfolds(*tensors, 3, form=form)


def sums(*args):
    *tensors, form = args
    return synapse_sums(*tensors, form=form)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
@pytest.mark.parametrize("n", [5, 19, 32])
def test_compiled_unfolds_equal_the_torch_form(n, dtype, threads, torch_threads):
    torch.manual_seed(n)
    torch_threads(threads)
    _assert_forms_agree(unfolds, _unfold_inputs(4, 7, n, dtype), dtype)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
@pytest.mark.parametrize("pre, post", [(3, 19), (21, 8)])
def test_compiled_synapse_sums_equal_the_torch_form(pre, post, dtype, threads, torch_threads):
    torch.manual_seed(pre)
    torch_threads(threads)
    v = torch.randn(5, 6, pre, dtype=dtype)
    _assert_forms_agree(sums, [v, *_parameters(pre, post, dtype)], dtype)


def test_saturated_sigmoids_stay_finite_and_equal():
    """σ·v of ±hundreds: exp(−|x|) is clamped below at e^−87 (float32), far under any
    gradient."""
    torch.manual_seed(0)
    inputs = _unfold_inputs(3, 4, 6, torch.float32, scale=40.0)
    inputs[0] = 10 * inputs[0]
    compiled = _values_and_gradients(unfolds, inputs, "compiled")
    assert all(torch.isfinite(x).all() for x in compiled)
    _assert_forms_agree(unfolds, inputs, torch.float32)


def test_compiled_gradients_match_finite_differences():
    torch.manual_seed(0)
    inputs = [x.requires_grad_() for x in _unfold_inputs(3, 2, 4, torch.float64)]
    assert torch.autograd.gradcheck(lambda *a: fused_unfolds(*a, 2, form="compiled"), inputs)
    v = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)
    params = [p.requires_grad_() for p in _parameters(4, 3, torch.float64)]
    assert torch.autograd.gradcheck(lambda *a: synapse_sums(*a, form="compiled"), [v, *params])


def test_auto_runs_compiled_on_cpu():
    torch.manual_seed(0)
    inputs = [x.requires_grad_() for x in _unfold_inputs(2, 3, 4, torch.float32)]
    assert type(fused_unfolds(*inputs, 2).grad_fn).__name__ == "_UnfoldsBackward"
    v = torch.randn(2, 3, 4, requires_grad=True)
    num, _ = synapse_sums(v, *_parameters(4, 3, torch.float32))
    assert type(num.grad_fn).__name__ == "_SynapseSumsBackward"
