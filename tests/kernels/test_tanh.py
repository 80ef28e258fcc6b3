"""The fast paths' tanh (zoo/kernels/src/tanh.cpp) against float64 tanh: error, special values,
layouts, threads, gradient, and where it leaves the work to torch.tanh; tanh(A)·d against its
torch form."""

from __future__ import annotations

import pytest
import torch

from zoo.kernels.compiled import kernel
from zoo.kernels.tanh import tanh, tanh_times_backward, tanh_times_into

pytestmark = pytest.mark.skipif(kernel("tanh") is None,
                                reason="no C++ compiler: the compiled tanh cannot be built")


def test_error_within_two_ulp_across_the_range():
    """Both branches and the switch at |x| = 0.625; PyTorch's own tanh is held to the same bound."""
    x = torch.cat([torch.linspace(-12, 12, 200_001), torch.linspace(0.62, 0.63, 10_001),
                   torch.logspace(-30, 1, 10_001), -torch.logspace(-30, 1, 10_001)])
    exact = torch.tanh(x.double())
    for y in (tanh(x), torch.tanh(x)):
        assert ((y.double() - exact).abs() / exact.abs().clamp(min=1e-300)).max() < 2.4e-7


def test_special_values():
    x = torch.tensor([0.0, 1e-38, 88.0, -88.0, 1e30, float("inf"), -float("inf")])
    assert tanh(x).tolist() == x.clamp(-1, 1).tolist()  # tanh x = x in float32 below 1e-38
    assert torch.isnan(tanh(torch.tensor([float("nan")]))).all()


@pytest.mark.parametrize("threads", [1, 2])
def test_layouts_threads_and_gradient(threads, torch_threads):
    """A transposed view is read as it lies (the result has its strides); 300,000 elements are
    split between the threads."""
    torch.manual_seed(0)
    torch_threads(threads)
    base = 3 * torch.randn(300, 20, 50)
    x = base.transpose(0, 2).requires_grad_()
    y = tanh(x)
    assert type(y.grad_fn).__name__ == "_TanhBackward" and y.stride() == x.stride()
    torch.testing.assert_close(y, torch.tanh(x), rtol=3e-7, atol=0)
    grad = torch.randn(y.shape)
    y.backward(grad)
    torch.testing.assert_close(x.grad, grad * (1 - torch.tanh(x.detach()) ** 2))


def test_torch_runs_where_the_kernel_does_not():
    expanded = torch.randn(4, 1, 3).expand(4, 5, 3).requires_grad_()
    double = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    for x in (expanded, double):
        y = tanh(x)
        assert type(y.grad_fn).__name__ == "TanhBackward0"
        torch.testing.assert_close(y, torch.tanh(x), rtol=0, atol=0)


@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("batch, h, c", [(5, 7, 3), (130, 90, 21)])
def test_tanh_times_equals_its_torch_form(batch, h, c, threads, with_bias, torch_threads):
    """tanh(a + e)·d (with and without the shared bias e), the tanh it keeps and both
    gradients, compiled against the torch form."""
    torch.manual_seed(h)
    a, drive = 2 * torch.randn(batch, h, c), torch.randn(batch, c)
    bias = torch.randn(h, c) if with_bias else None
    grad = torch.randn(batch, h)
    results = {}
    torch_threads(threads)
    for form in ("compiled", "torch"):
        t = torch.empty_like(a)
        y = tanh_times_into(a, drive, t, form=form, bias=bias)
        results[form] = [y, t, *tanh_times_backward(t, drive, grad, form=form)]
    pre = a.double() if bias is None else a.double() + bias.double()
    expected = (torch.tanh(pre) * drive.double().unsqueeze(1)).sum(-1)
    torch.testing.assert_close(results["torch"][0].double(), expected, rtol=1e-5, atol=1e-5)
    # 1 − t² near |t| = 1 turns the tanh's last-ulp difference into 1e-6 absolute in ā
    for compiled, torch_form in zip(results["compiled"], results["torch"]):
        assert (compiled - torch_form).abs().max() <= 1e-5 * torch_form.abs().max()
