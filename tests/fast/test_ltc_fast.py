"""LTC fast path (batched sensory sums, hoisted constants) = the per-step cell loop."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from fast_harness import RTOL32, RTOL64, assert_close, gradients

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fields"))
from ltc_harness import make_model, tiny_batch  # noqa: E402

CELLS = [{"cell": "tf"}, {"cell": "ncps"}, {"cell": "ncps", "use_elapsed": True}]
SOLVERS = [{"kind": "ltc_fused"}, {"kind": "unfold", "method": "euler"},
           {"kind": "unfold", "method": "rk4"}]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
@pytest.mark.parametrize("solver", SOLVERS, ids=lambda s: s.get("method", s["kind"]))
@pytest.mark.parametrize("cell", CELLS, ids=lambda c: "-".join(map(str, c.values())))
def test_fast_equals_generic(cell, solver, dtype):
    torch.manual_seed(0)
    fast = make_model({"kind": "ltc", **cell}, solver).to(dtype)
    generic = make_model({"kind": "ltc", **cell}, solver).to(dtype)
    generic.load_state_dict(fast.state_dict())
    generic.body.implementation_used = "generic (requested)"
    assert fast.body.implementation_used == "fast"
    batch = tiny_batch(fast, times=torch.tensor([0.0, 0.5, 1.5, 2.0]))
    batch = type(batch)(batch.times.to(dtype), batch.coeffs.to(dtype), batch.y,
                        batch.final_index)
    rtol = RTOL64 if dtype == torch.float64 else RTOL32
    assert_close(fast(batch), generic(batch), rtol, "output")
    g_fast, g_generic = gradients(fast, batch), gradients(generic, batch)
    for name in g_generic:
        assert_close(g_fast[name], g_generic[name], rtol, name)


def test_baselines_and_generic_request():
    solver = {"kind": "unfold"}
    assert make_model({"kind": "ctrnn"}, solver).body.implementation_used \
        == "generic (no fast path)"
    spec_generic = make_model({"kind": "ltc"}, {"kind": "ltc_fused"})
    assert spec_generic.body.implementation_used == "fast"
