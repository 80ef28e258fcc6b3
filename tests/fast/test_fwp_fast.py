"""FWP fast paths (Hebb sum, pre-delta affine steps, post-delta/Oja lean loop) = generic."""

from __future__ import annotations

import pytest
import torch
from fast_harness import METHODS, assert_fast_equals_generic, make_model

from zoo.fast.fwp.layer_read import layer_read

RULES = [{"rule": "hebb"}, {"rule": "delta"}, {"rule": "delta", "delta": "post"},
         {"rule": "oja"}]
SMALL = {"kind": "fwp", "d_model": 8, "heads": 2, "d_ff": 8}


def field(rule: dict, form: str) -> dict:
    return {**SMALL, **rule, "form": form}


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("form", ["ode", "cde"])
@pytest.mark.parametrize("rule", RULES, ids=lambda r: "-".join(r.values()))
def test_fast_equals_generic(rule, form, method):
    assert_fast_equals_generic(field(rule, form), method)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: "-".join(r.values()))
def test_other_cde_forms(rule):
    assert_fast_equals_generic(field(rule, "cde_dx_only"), "rk4")
    assert_fast_equals_generic(field(rule, "cde_xprime_keys"), "midpoint")


@pytest.mark.parametrize("rule", RULES, ids=lambda r: "-".join(r.values()))
def test_value_layernorm_and_wide_inputs(rule):
    """The value path's LayerNorm folded too; inputs as wide as d_model are not folded."""
    assert_fast_equals_generic({**field(rule, "cde"), "v_layernorm": True}, "rk4")
    assert_fast_equals_generic(field(rule, "ode"), "midpoint", channels=8)
    assert_fast_equals_generic(field(rule, "cde"), "midpoint", channels=8)


def test_paper_hebb_values():
    assert_fast_equals_generic(field({"rule": "hebb", "hebb_cde_values": "sigmoid_tanh"}, "cde"),
                               "rk4")


@pytest.mark.parametrize("rule", RULES[::2], ids=lambda r: "-".join(r.values()))
def test_per_step_and_float32(rule):
    assert_fast_equals_generic(field(rule, "cde"), "rk4", per_step=True)
    assert_fast_equals_generic(field(rule, "cde"), "rk4", dtype=torch.float32)


@pytest.mark.parametrize("initial", ["zeros", "first_observation"])
def test_initial_states(initial):
    assert_fast_equals_generic(field({"rule": "delta"}, "ode"), "rk4", initial=initial)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("rule", RULES[1:3], ids=lambda r: "-".join(r.values()))
def test_two_layers(rule, method):
    """The two-layer model (App. C.1) on its lean split: layer 2 reads layer 1 inside the
    field, at the stage states."""
    two_layers = {**field(rule, "ode"), "layers": 2}
    assert_fast_equals_generic(two_layers, method)
    assert_fast_equals_generic(two_layers, method, backprop="adjoint")


def test_two_layers_per_step_and_float32():
    two_layers = {**field({"rule": "delta", "delta": "post"}, "ode"), "layers": 2}
    assert_fast_equals_generic(two_layers, "rk4", per_step=True)
    assert_fast_equals_generic(two_layers, "rk4", backprop="adjoint", dtype=torch.float32)


def test_adaptive_solvers_run_generic():
    with pytest.warns(UserWarning, match="model.solver 'dopri5'.*generic path"):
        model = make_model(SMALL, channels=3, method="dopri5")
    assert model.body.implementation_used == "generic (solver dopri5)"
    assert make_model(SMALL, channels=3, backprop="adjoint",
                      step_size=0.5).body.implementation_used == "fast"


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("rule", RULES[:2], ids=lambda r: "-".join(r.values()))
def test_final_read_without_forming_w(rule, transpose):
    """Hebb and pre-delta read W q (or Wᵀ q) of the final state by vector sweeps."""
    spec = field({**rule, "transpose_readout": transpose}, "cde")
    assert_fast_equals_generic(spec, "rk4")
    assert_fast_equals_generic(spec, "midpoint", dtype=torch.float32)


def test_hebb_cde_reads_its_keys_through_their_layer(monkeypatch):
    """The authors' Hebb-CDE (raw values and rates, Wᵀ q) never forms its keys and rates: its
    read goes through their layer (:func:`zoo.fast.fwp.layer_read.layer_read`)."""
    import zoo.fast.fwp.hebb as fwp_hebb

    calls = []
    monkeypatch.setattr(fwp_hebb, "layer_read",
                        lambda *args: calls.append(args) or layer_read(*args))
    assert_fast_equals_generic(field({"rule": "hebb"}, "cde"), "rk4")
    assert calls


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("rule", RULES[:2], ids=lambda r: "-".join(r.values()))
def test_final_read_with_compiled_kernels_off(monkeypatch, rule, transpose):
    """The torch forms of the products, softmax, Hebb read and pre-delta sweep, which the fast
    paths run where the compiled ones cannot."""
    monkeypatch.setenv("ZOO_COMPILED_KERNELS", "0")
    spec = field({**rule, "transpose_readout": transpose}, "cde")
    assert_fast_equals_generic(spec, "rk4")
    assert_fast_equals_generic(spec, "midpoint", dtype=torch.float32)
