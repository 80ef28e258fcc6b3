"""CT-FWP field (paper (a), docs/sources.md#paper-a): parameter counts, closed forms, update
terms, gradients."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
import torchcde
from torch.nn import functional as F

from zoo.build_context import DataShape
from zoo.fields.fwp.config import FWPConfig
from zoo.fields.fwp.vector_field import LearningRuleField
from zoo.model import ZooModel, count_parameters
from zoo.series import TaskInfo
from zoo.spec.schema import spec_model


def make_model(field, u=3, n=4, static=0, initial="auto", backprop="direct", step=0.5,
               seq_len=4):
    spec = spec_model().model_validate({
        "data": {"kind": "irregular_sines"},
        "model": {"control": {"kind": "natural_cubic"}, "field": {"kind": "fwp", **field},
                  "solver": {"kind": "torchdiffeq", "method": "rk4", "step_size": step},
                  "backprop": {"kind": backprop}, "initial": {"kind": initial},
                  "readout": {"kind": "classify"}}})
    return ZooModel(spec, DataShape(u, static, seq_len, TaskInfo("multiclass", n)))


def spline_path(b=2, t=4, u=3, seed=0, dtype=torch.float32):
    gen = torch.Generator().manual_seed(seed)
    times = torch.arange(t, dtype=dtype)
    x = torch.randn(b, t, u, generator=gen, dtype=dtype)
    return torchcde.CubicSpline(torchcde.natural_cubic_coeffs(x, times), times)


def batch_for(b=2, t=4, static=None):
    return SimpleNamespace(final_index=torch.full((b,), t - 1), static=static)


# --- (1) parameter counts: docs/sources.md#fwp-table3 derived totals, head Linear(d → n_out)
# included

SPEECH = dict(u=21, n=10)
SEPSIS_OI = dict(u=69, n=1, static=7, initial="static")
SEPSIS_NO_OI = dict(u=35, n=1, static=5, initial="static")
COUNTS = [
    ({"form": "cde", "rule": "delta", "d_model": 80, "heads": 4, "d_ff": 320}, SPEECH, 77_774),
    ({"form": "cde", "rule": "hebb", "d_model": 128, "heads": 32, "d_ff": 512}, SPEECH, 195_626),
    ({"form": "cde", "rule": "oja", "d_model": 128, "heads": 32, "d_ff": 512}, SPEECH, 195_626),
    ({"form": "ode", "rule": "hebb", "d_model": 128, "heads": 32, "d_ff": 512}, SPEECH, 209_322),
    ({"form": "ode", "rule": "oja", "d_model": 128, "heads": 32, "d_ff": 512}, SPEECH, 209_322),
    ({"form": "ode", "rule": "delta", "d_model": 160, "heads": 16, "d_ff": 80}, SPEECH, 140_746),
    ({"form": "ode", "rule": "hebb", "d_model": 160, "heads": 32, "d_ff": 64}, SEPSIS_OI, 244_609),
    ({"form": "ode", "rule": "oja", "d_model": 160, "heads": 32, "d_ff": 64}, SEPSIS_OI, 244_609),
    ({"form": "ode", "rule": "delta", "d_model": 128, "heads": 16, "d_ff": 64}, SEPSIS_OI, 175_201),
    ({"form": "cde", "rule": "hebb", "d_model": 32, "heads": 8, "d_ff": 256}, SEPSIS_OI, 47_537),
    ({"form": "cde", "rule": "oja", "d_model": 80, "heads": 16, "d_ff": 64}, SEPSIS_OI, 95_601),
    ({"form": "cde", "rule": "delta", "d_model": 80, "heads": 16, "d_ff": 64}, SEPSIS_OI, 95_601),
    ({"form": "ode", "rule": "hebb", "d_model": 32, "heads": 8, "d_ff": 64}, SEPSIS_NO_OI, 31_185),
    ({"form": "ode", "rule": "oja", "d_model": 160, "heads": 32, "d_ff": 64}, SEPSIS_NO_OI,
     233_217),
    ({"form": "ode", "rule": "delta", "d_model": 80, "heads": 16, "d_ff": 64}, SEPSIS_NO_OI,
     90_529),
    ({"form": "cde", "rule": "hebb", "d_model": 160, "heads": 32, "d_ff": 64}, SEPSIS_NO_OI,
     213_217),
    ({"form": "cde", "rule": "oja", "d_model": 160, "heads": 32, "d_ff": 64}, SEPSIS_NO_OI,
     213_217),
    ({"form": "cde", "rule": "delta", "d_model": 160, "heads": 32, "d_ff": 64,
      "v_layernorm": True}, SEPSIS_NO_OI, 239_297),
    # EigenWorms, log-signature depth 1 (7 path channels from 7 raw channels), n_out 5
    ({"form": "ode", "rule": "hebb", "d_model": 160, "heads": 16, "d_ff": 128},
     dict(u=7, n=5, initial="first_observation"), 149_645),
    ({"form": "ode", "rule": "oja", "d_model": 128, "heads": 16, "d_ff": 64},
     dict(u=7, n=5, initial="first_observation"), 86_925),
    ({"form": "ode", "rule": "delta", "d_model": 128, "heads": 16, "d_ff": 64, "delta": "post"},
     dict(u=7, n=5, initial="first_observation"), 86_925),
]


@pytest.mark.parametrize(("field", "data", "expected"), COUNTS)
def test_parameter_count_matches_authors_models(field, data, expected):
    assert count_parameters(make_model(field, **data)) == expected


@pytest.mark.parametrize(("field", "expected"), [
    ({"rule": "hebb", "d_model": 160, "heads": 16, "d_ff": 128}, 153_173),
    ({"rule": "oja", "d_model": 160, "heads": 16, "d_ff": 128}, 153_173),
    ({"rule": "delta", "d_model": 128, "heads": 16, "d_ff": 64, "delta": "post"}, 89_781),
])
def test_parameter_count_eigenworms_depth2(field, expected):
    # depth-2 log-signature control: 7 raw channels -> 28 path channels; head Linear(d -> 5)
    spec = spec_model().model_validate({
        "data": {"kind": "irregular_sines"},
        "model": {"control": {"kind": "logsig", "depth": 2}, "field": {"form": "ode", **field,
                  "kind": "fwp"}, "initial": {"kind": "first_observation"},
                  "solver": {"kind": "torchdiffeq"}, "readout": {"kind": "classify"}}})
    model = ZooModel(spec, DataShape(7, 0, 10, TaskInfo("multiclass", 5)))
    assert count_parameters(model) == expected


# --- (2) closed form ----------------------------------------------------------------------------

def test_hebb_ode_constant_control_closed_form():
    model = make_model({"form": "ode", "rule": "hebb", "d_model": 8, "heads": 2}, step=0.25)
    times = torch.arange(5.0)
    x = torch.randn(2, 1, 3).expand(2, 5, 3)
    path = torchcde.CubicSpline(torchcde.natural_cubic_coeffs(x, times), times)
    update = model.body.vector_field.forward(x[:, 0]).flatten(1)
    with torch.no_grad():
        ws = model.body.solve(path, batch_for(t=5))
    # W(t0) = update (first_update); dW/dt = update; so W(T) = (1 + T) update
    torch.testing.assert_close(ws[-1], (1 + 4.0) * update, rtol=1e-5, atol=1e-6)


# --- (3) vector fields against docs/sources.md#fwp-ode-fields and #fwp-cde-fields ---------------

def ln_linear(slow, x):
    """LayerNorm(Linear_in(x)) with the module's own weights."""
    z = x @ slow.input_proj.weight.T + slow.input_proj.bias
    d = z.shape[-1]
    return F.layer_norm(z, (d,), slow.input_layer_norm.weight, slow.input_layer_norm.bias)


def heads_of(z, heads):
    return z.reshape(z.shape[0], heads, -1)


def reference_term(cfg, update, x, dx, W):
    """dW/dt per docs/sources.md#fwp-ode-fields / #fwp-cde-fields, written out independently;
    W is (B, H, h, h) = v ⊗ k."""
    H, h = cfg.heads, cfg.d_model // cfg.heads
    Wv = lambda w, k: torch.einsum("bhij,bhj->bhi", w, k)  # noqa: E731  W k
    WTv = lambda w, v: torch.einsum("bhij,bhi->bhj", w, v)  # noqa: E731  Wᵀ v
    outer = lambda a, b: torch.einsum("bhi,bhj->bhij", a, b)  # noqa: E731
    slow = update.slow
    if cfg.form == "ode":
        out = heads_of(ln_linear(slow, x) @ slow.out.weight.T + slow.out.bias, H)
        k, v, beta = out[..., :h], out[..., h:2 * h], out[..., 2 * h:]
        raw_hebb = False
    else:
        keys_from, values_from = {"cde": ("x", "dx") if cfg.rule != "delta" else ("dx", "x"),
                                  "cde_xprime_keys": ("dx", "x"),
                                  "cde_dx_only": ("dx", "dx")}[cfg.form]
        src = {"x": x, "dx": dx}
        out = heads_of(ln_linear(slow, src[keys_from]) @ slow.out.weight.T + slow.out.bias, H)
        k, beta = out[..., :h], out[..., h:]
        vnet = update.values
        vz = src[values_from] @ vnet.proj.weight.T + vnet.proj.bias
        if cfg.v_layernorm:
            ln, lin = vnet.post
            vz = F.layer_norm(vz, (cfg.d_model,), ln.weight, ln.bias) @ lin.weight.T + lin.bias
        v = heads_of(vz, H)
        raw_hebb = cfg.form != "cde_dx_only" and cfg.hebb_cde_values == "raw_beta"
    if cfg.rule == "hebb":
        if raw_hebb:
            return outer(beta * v, torch.softmax(k, -1))
        return outer(torch.sigmoid(beta) * torch.tanh(v), torch.softmax(k, -1))
    if cfg.rule == "oja":
        v = torch.tanh(v)
        return outer(v, torch.sigmoid(beta) * torch.softmax(k - WTv(W, v), -1))
    k = torch.softmax(k, -1)
    if cfg.delta == "pre":
        v = torch.tanh(v) - Wv(W, k)
    else:
        v = torch.tanh(v - Wv(W, k))
    return outer(torch.sigmoid(beta) * v, k)


RULE_CASES = [
    {"form": f, "rule": r, **extra}
    for f in ("ode", "cde", "cde_xprime_keys", "cde_dx_only")
    for r, extra in (("hebb", {}), ("oja", {}), ("delta", {"delta": "pre"}),
                     ("delta", {"delta": "post"}))
] + [
    {"form": "cde", "rule": "hebb", "hebb_cde_values": "sigmoid_tanh"},
    {"form": "cde_xprime_keys", "rule": "hebb", "hebb_cde_values": "sigmoid_tanh"},
    {"form": "cde", "rule": "oja", "v_layernorm": True},
    {"form": "cde", "rule": "delta", "v_layernorm": True},
]


class ConstantPath:
    """A stand-in path with fixed X(t) and dX/dt(t)."""

    def __init__(self, x, dx):
        self.x, self.dx = x, dx

    def evaluate(self, t):
        return self.x

    def derivative(self, t):
        return self.dx


@pytest.mark.parametrize("field", RULE_CASES, ids=lambda f: "-".join(map(str, f.values())))
def test_vector_field_matches_facts_formula(field):
    torch.manual_seed(0)
    cfg = FWPConfig(d_model=12, heads=3, **field)
    model = make_model(cfg.model_dump(exclude={"kind"}, exclude_unset=True), u=5)
    update = model.body.vector_field
    x, dx = torch.randn(2, 5), torch.randn(2, 5)
    W = 0.5 * torch.randn(2, 3, 4, 4)
    got = LearningRuleField(update, ConstantPath(x, dx))(torch.tensor(0.0), W.flatten(1))
    expected = reference_term(cfg, update, x, dx, W)
    torch.testing.assert_close(got, expected.reshape(2, -1), rtol=1e-5, atol=1e-6)
    # W = None (the first update, docs/sources.md#fwp-initial-state) drops the W-dependent
    # correction
    first = LearningRuleField(update, ConstantPath(x, dx))(torch.tensor(0.0), 0 * W.flatten(1))
    expected0 = reference_term(cfg, update, x, dx, torch.zeros_like(W))
    torch.testing.assert_close(first, expected0.reshape(2, -1), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("field", "transpose", "query_from"), [
    ({"form": "cde", "rule": "hebb"}, True, "x"),                            # code: Wᵀ q
    ({"form": "cde", "rule": "oja", "transpose_readout": False}, False, "x"),  # paper Eq. 25
    ({"form": "cde", "rule": "delta"}, False, "dx"),
    ({"form": "cde_xprime_keys", "rule": "hebb"}, False, "dx"),              # hebb_cde_v2
    ({"form": "cde_xprime_keys", "rule": "hebb", "transpose_readout": True}, True, "dx"),  # v3
    ({"form": "ode", "rule": "delta"}, False, "x"),
])
def test_readout_query_and_retrieval(field, transpose, query_from):
    torch.manual_seed(1)
    model = make_model({"d_model": 12, "heads": 3, **field}, u=5)
    body = model.body
    x, dx = torch.randn(2, 5), torch.randn(2, 5)
    W = torch.randn(2, 3, 4, 4)
    got = body.read(ConstantPath(x, dx), torch.tensor(3.0), W)
    readout = body.readout
    qnet = readout.fast_query.query_net
    e = ln_linear(body.vector_field.slow, x if query_from == "x" else dx)
    q = torch.softmax(heads_of(e @ qnet.weight.T + qnet.bias, 3), -1)
    Wr = W.transpose(-1, -2) if transpose else W
    y = torch.einsum("bhij,bhj->bhi", Wr, q).reshape(2, 12)
    y = y @ readout.out_proj.weight.T + readout.out_proj.bias
    ff = readout.ff_block
    lin1, _, lin2 = ff.net
    hidden = torch.relu(F.layer_norm(y, (12,), ff.layer_norm.weight, ff.layer_norm.bias)
                        @ lin1.weight.T + lin1.bias)
    torch.testing.assert_close(got, y + hidden @ lin2.weight.T + lin2.bias)


# --- (4) forward + backward through every form ---------------------------------------------------

FORWARD_CASES = [
    ({"form": f, "rule": r}, "auto")
    for f in ("ode", "cde", "cde_xprime_keys", "cde_dx_only") for r in ("hebb", "oja", "delta")
] + [
    ({"form": "ode", "rule": "delta", "layers": 2, "delta": "post"}, "first_observation"),
    ({"form": "ode", "rule": "hebb", "layers": 2}, "static"),
    ({"form": "cde", "rule": "delta", "v_layernorm": True}, "static"),
    ({"form": "cde", "rule": "oja"}, "zeros"),
]


@pytest.mark.parametrize(("field", "initial"), FORWARD_CASES)
def test_forward_backward(field, initial):
    torch.manual_seed(0)
    model = make_model({"d_model": 8, "heads": 2, "d_ff": 8, **field}, static=2, initial=initial)
    static = torch.randn(2, 2)
    out = model.head(model.body(spline_path(), batch_for(static=static)))
    assert out.shape == (2, 4) and model.body.features == 8
    out.square().sum().backward()
    grads = [p.grad for p in model.body.vector_field.parameters()]
    assert all(g is not None and torch.isfinite(g).all() for g in grads)
    assert any(g.abs().sum() > 0 for g in grads)


def test_two_layer_state_and_hidden_signal():
    model = make_model({"form": "ode", "rule": "delta", "layers": 2, "d_model": 8, "heads": 2})
    update = model.body.vector_field
    x = torch.randn(2, 3)
    w0 = update(x)  # W(t0) = [first update of layer 1, 0]
    assert w0.shape == (2, 4, 4, 4) and torch.equal(w0[:, 2:], torch.zeros(2, 2, 4, 4))
    W = torch.randn(2, 4, 4, 4)
    d = update(x, W)
    torch.testing.assert_close(d[:, :2], update.layer1(x, W[:, :2]))
    torch.testing.assert_close(d[:, 2:], update.layer2(update.hidden(x, W[:, :2]), W[:, 2:]))


# --- (5) continuous adjoint vs backprop through the solver ---------------------------------------

@pytest.mark.parametrize(("field", "step"), [
    ({"form": "ode", "rule": "oja"}, 0.25),
    ({"form": "cde", "rule": "hebb"}, 0.25),
    ({"form": "cde_xprime_keys", "rule": "hebb"}, 0.25),
    ({"form": "cde_dx_only", "rule": "delta", "delta": "post"}, 0.25),
    ({"form": "ode", "rule": "delta", "layers": 2}, 0.125),
])
def test_adjoint_matches_direct_gradients(field, step):
    torch.manual_seed(0)
    grads = []
    path = spline_path(t=3, dtype=torch.float64)
    for backprop in ("direct", "adjoint"):
        torch.manual_seed(0)
        model = make_model({"d_model": 4, "heads": 2, "d_ff": 4, **field}, backprop=backprop,
                           step=step).double()
        model.head(model.body(path, batch_for(t=3))).sum().backward()
        grads.append(torch.cat([p.grad.flatten() for p in model.parameters()
                                if p.grad is not None]))
    # the two differ by the rk4 discretisation error of the backward solve only
    torch.testing.assert_close(grads[1], grads[0], rtol=1e-4, atol=1e-5)


# --- options ------------------------------------------------------------------------------------

def test_requires_follow_form():
    assert FWPConfig(form="ode").requires == {"evaluate"}
    assert FWPConfig(form="cde_dx_only").requires == {"evaluate", "derivative"}


@pytest.mark.parametrize("bad", [
    {"d_model": 10, "heads": 4},
    {"form": "cde", "layers": 2},
    {"form": "ode", "v_layernorm": True},
    {"rule": "delta", "hebb_cde_values": "sigmoid_tanh"},
])
def test_inconsistent_options_rejected(bad):
    with pytest.raises(ValueError):
        FWPConfig(**bad)


def test_default_hebb_values_accepted_everywhere():
    """A resolved spec writes the default ``raw_beta`` for every rule and form."""
    for rule in ("hebb", "oja", "delta"):
        assert FWPConfig(rule=rule, form="ode", hebb_cde_values="raw_beta").rule == rule
