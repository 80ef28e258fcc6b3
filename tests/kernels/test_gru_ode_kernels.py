"""The GRU-ODE's elementwise kernels (zoo/kernels/src/gru_ode.cpp) against their torch forms:
every output, rows of wider tensors where the steps pass them, float32 and float64, one and
two threads, the clamp's edges."""

from __future__ import annotations

import pytest
import torch

from zoo.kernels import gru_ode
from zoo.kernels.compiled import kernel

pytestmark = pytest.mark.skipif(kernel("gru_ode") is None,
                                reason="no C++ compiler: the GRU-ODE kernels cannot be built")

B, H, U = 37, 11, 4


def _inputs(dtype):
    torch.manual_seed(0)
    y = 2 * torch.randn(B, U + H, dtype=dtype)
    y[0, U:U + 4] = torch.tensor([-1.0, 1.0, 1.5, -1.5], dtype=dtype)  # the clamp's edges
    return {"p_rz": 3 * torch.randn(B, 2 * H, dtype=dtype),
            "xw": 3 * torch.randn(B, 3 * H, dtype=dtype), "h": y[:, U:].clamp(-1, 1),
            "p_g": 3 * torch.randn(B, H, dtype=dtype), "d0": torch.randn(B, dtype=dtype),
            "a": torch.randn(B, U + H, dtype=dtype), "y": y, "q": torch.randn(B, H, dtype=dtype),
            "p": torch.randn(B, 3 * H, dtype=dtype), "h_bar": torch.randn(B, H, dtype=dtype)}


def _run(form, dtype):
    """Every kernel once, from the same inputs, in the steps' order; what each wrote."""
    v = {name: t.clone() for name, t in _inputs(dtype).items()}
    rh, k = torch.empty_like(v["h"]), torch.zeros_like(v["y"])
    gru_ode.gates(v["p_rz"], v["xw"], v["h"], rh, form=form)
    gru_ode.field(v["p_g"], v["xw"], v["p_rz"], v["h"], v["d0"], k[:, U:], form=form)
    forward_g = v["p_g"].clone()
    p, h_bar = torch.zeros_like(v["p"]), torch.empty_like(v["h"])
    g = _inputs(dtype)["p_g"]
    gru_ode.field(g, v["xw"], v["p_rz"], v["h"], v["d0"], k[:, U:], v["a"][:, U:], p, h_bar,
                  form=form)
    gru_ode.reset(v["q"], v["p_rz"], v["h"], p, h_bar, form=form)
    y_bar = torch.zeros_like(v["y"])
    scaled = p.clone()
    gru_ode.finish(h_bar, v["y"][:, U:], y_bar[:, U:], scaled, 0.375, form=form)
    return dict(rz=v["p_rz"], rh=rh, g=forward_g, k=k, p=p, h_bar=h_bar, y_bar=y_bar,
                scaled=scaled, backward_g=g)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_kernels_equal_their_torch_forms(dtype, threads, torch_threads):
    torch_threads(threads)
    compiled, plain = _run("compiled", dtype), _run("torch", dtype)
    tol = {"rtol": 2e-6, "atol": 2e-6} if dtype == torch.float32 else {"rtol": 1e-13, "atol": 1e-14}
    for name in plain:
        torch.testing.assert_close(compiled[name], plain[name], **tol, msg=name)
    assert (compiled["k"][:, :U] == 0).all() and (compiled["y_bar"][:, :U] == 0).all()
    edges = compiled["y_bar"][0, U:U + 4]
    assert (edges[:2] != 0).all() and (edges[2:] == 0).all()  # gradient at ±1, none beyond
    torch.testing.assert_close(compiled["scaled"], 0.375 * compiled["p"])
