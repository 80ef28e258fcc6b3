"""LTC and baseline fast paths (batched input terms, hoisted constants) = the per-step cell loop."""

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


#: (field, solver) of the LTC repository's baselines, with their options that change the loop
BASELINES = [({"kind": "ctrnn"}, {"kind": "unfold"}),
             ({"kind": "ctrnn", "global_feedback": False, "clip": 0.5}, {"kind": "unfold"}),
             ({"kind": "ctrnn", "tau": 2.0, "clip": 0.5}, {"kind": "unfold", "method": "rk4"}),
             ({"kind": "node", "clip": 0.5}, {"kind": "unfold", "method": "rk4"}),
             ({"kind": "node"}, {"kind": "unfold", "method": "euler", "unfolds": 3,
                                 "step_size": 0.4}),
             ({"kind": "lstm"}, {"kind": "unfold"}),
             ({"kind": "ctgru"}, {"kind": "unfold"}),
             ({"kind": "ctgru", "decay": "paper", "clip": 0.5}, {"kind": "unfold"})]
#: the CfC layer's modes and options that change its loop
CFC = [({"kind": "cfc", "units": 5, "backbone_units": 6, **options}, {"kind": "unfold"})
       for options in ({}, {"mode": "no_gate"}, {"mode": "minimal"},
                       {"backbone_layers": 2, "activation": "silu"},
                       {"use_elapsed": True, "time_scale": 0.5})]
LTC = [({"kind": "ltc", **cell}, solver) for cell in CELLS for solver in SOLVERS
       if not (cell.get("use_elapsed") and solver["kind"] == "unfold")]  # refused by zoo validate


def case_id(case) -> str:
    field, solver = case
    return "-".join(map(str, [*field.values(), *solver.values()]))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
@pytest.mark.parametrize("case", LTC + BASELINES + CFC, ids=case_id)
def test_fast_equals_generic(case, dtype):
    assert_ltc_fast_equals_generic(case, dtype)


def assert_ltc_fast_equals_generic(case, dtype: torch.dtype, device: str = "cpu") -> None:
    field, solver = case
    torch.manual_seed(0)
    fast = make_model(field, solver).to(device, dtype)
    generic = make_model(field, solver).to(device, dtype)
    generic.load_state_dict(fast.state_dict())
    generic.body.implementation_used, generic.body.fast_path = "generic (requested)", None
    assert fast.body.implementation_used == "fast"
    batch = tiny_batch(fast, times=torch.tensor([0.0, 0.5, 1.5, 2.0])).to(device, dtype)
    rtol = RTOL64 if dtype == torch.float64 else RTOL32
    assert_close(fast(batch), generic(batch), rtol, "output")
    g_fast, g_generic = gradients(fast, batch), gradients(generic, batch)
    for name in g_generic:
        assert_close(g_fast[name], g_generic[name], rtol, name)


@pytest.mark.parametrize("allowed", [False, True])
def test_lstm_kernel_follows_the_matmul_float32_precision(monkeypatch, allowed):
    """cuDNN's LSTM may use TensorFloat-32 by default, the generic cell's matrix products do not:
    the fused kernel runs under the matrix products' setting, and the global one is restored."""
    seen, lstm = [], torch.lstm

    def spy(*args):
        seen.append(torch.backends.cudnn.allow_tf32)
        return lstm(*args)

    monkeypatch.setattr(torch, "lstm", spy)
    flags = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = allowed, not allowed
    try:
        model = make_model({"kind": "lstm"}, {"kind": "unfold"})
        model(tiny_batch(model, times=torch.tensor([0.0, 0.5, 1.5])))
        assert seen == [allowed]
        assert torch.backends.cudnn.allow_tf32 is (not allowed)
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = flags


def test_every_recurrent_field_has_a_fast_path():
    for field, solver in BASELINES + [({"kind": "ltc"}, {"kind": "ltc_fused"})]:
        assert make_model(field, solver).body.implementation_used == "fast"


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
def test_fast_equals_generic_with_compiled_kernels_off(monkeypatch, dtype):
    """The torch forms the fast path runs where the compiled loops cannot (CUDA, no compiler)."""
    monkeypatch.setenv("ZOO_COMPILED_KERNELS", "0")
    for case in [({"kind": "ltc", **cell}, {"kind": "ltc_fused"}) for cell in CELLS] + BASELINES:
        test_fast_equals_generic(case, dtype)


@pytest.mark.parametrize("options, reason", [
    ({"mixed_memory": True}, "mixed memory"),
    ({"wiring": {"kind": "auto_ncp", "output_size": 2}}, "wired CfC"),
    ({"backbone_layers": 0}, "no backbone layer")])
def test_cfc_variants_without_a_fast_path_say_why(options, reason):
    model = make_model({"kind": "cfc", "units": 8, **options}, {"kind": "unfold"})
    assert model.body.implementation_used == f"generic ({reason})"
    assert model.body.fast_path is None


@pytest.mark.parametrize("case, loop", [(BASELINES[0], "UnfoldRNN"), (BASELINES[2], "UnfoldRNN"),
                                        (BASELINES[3], "UnfoldRNN"), (BASELINES[6], "CTGRULoop"),
                                        (BASELINES[7], "CTGRULoop")],
                         ids=lambda value: case_id(value) if isinstance(value, tuple) else value)
def test_ctrnn_node_and_ctgru_run_the_compiled_loop_on_cpu(case, loop):
    """Where a compiler is present, the CT-RNN with global feedback, the N-ODE and the CT-GRU run
    their whole sequence as one compiled call (the equality above then tests the compiled loop)."""
    from zoo.kernels.compiled import kernel

    if kernel("unfold_rnn") is None:
        pytest.skip("no C++ compiler: the torch form runs")
    model = make_model(*case)
    batch = tiny_batch(model, times=torch.tensor([0.0, 0.5, 1.5, 2.0]))
    assert any(type(node).__name__ == f"_{loop}Backward" for node in _graph(model(batch).grad_fn))


def _graph(fn, seen=None):
    """Every node of an autograd graph."""
    seen = set() if seen is None else seen
    if fn is None or fn in seen:
        return seen
    seen.add(fn)
    for child, _ in fn.next_functions:
        _graph(child, seen)
    return seen


@pytest.mark.parametrize("case", [BASELINES[0], BASELINES[6], LTC[0]], ids=case_id)
def test_the_loops_flush_denormals_only_while_they_run(case):
    """The compiled CT-RNN/N-ODE, CT-GRU and LTC loops flush denormals (zoo/kernels/src/
    denormals.h: Intel CPUs compute them several times slower) and leave the calling thread's
    floating-point mode as it was: torch's own operations still produce denormals after them."""
    half = torch.tensor([1e-38], dtype=torch.float32) * 0.5
    assert half.item() != 0  # a denormal
    model = make_model(*case).float()
    batch = tiny_batch(model, times=torch.tensor([0.0, 0.5, 1.5, 2.0]))
    model(batch).sum().backward()
    assert (torch.tensor([1e-38], dtype=torch.float32) * 0.5).item() == half.item()
