"""The LTC cells: the TF fused update (docs/sources.md#ltc-tf-cell), Theorems 1–2, ncps
equivalence, constraints."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from ltc_harness import make_model, ncps_parameter_names, tiny_batch

from zoo.fields.ltc.cell_ncps import NCPSLTCCell, wiring_polarities
from zoo.fields.ltc.cell_tf import TF_CLIPS, TFLTCCell
from zoo.solvers.unfold import LTCFusedConfig, UnfoldConfig


pytestmark = pytest.mark.usefixtures("float64")


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _params(cell):
    return {n: p.detach().numpy().astype(np.float64) for n, p in cell.named_parameters()}


def reference_tf_step(cell, x, v, solver):
    """The TF cell (LTC ``ltc_model.py:147-169``) written out neuron by neuron: affine input,
    sensory sums once, 6 unfolds."""
    p = _params(cell)
    inp = x * p["input_w"] + p["input_b"]
    batch, n = v.shape
    v = v.copy()
    for b in range(batch):
        ns, ds = np.zeros(n), np.zeros(n)
        for j in range(n):
            for i in range(len(inp[b])):
                a = p["sensory.w"][i, j] * _sigmoid(
                    p["sensory.sigma"][i, j] * (inp[b, i] - p["sensory.mu"][i, j]))
                ns[j] += a * p["sensory.erev"][i, j]
                ds[j] += a
        for _ in range(solver.unfolds):
            old = v[b].copy()

            def sums(u):
                num, den = np.zeros(n), np.zeros(n)
                for j in range(n):
                    for i in range(n):
                        a = p["recurrent.w"][i, j] * _sigmoid(
                            p["recurrent.sigma"][i, j] * (u[i] - p["recurrent.mu"][i, j]))
                        num[j] += a * p["recurrent.erev"][i, j]
                        den[j] += a
                return num, den

            if isinstance(solver, LTCFusedConfig):
                num, den = sums(old)
                v[b] = ((p["cm"] * old + p["gleak"] * p["vleak"] + num + ns)
                        / (p["cm"] + p["gleak"] + den + ds))
            else:
                def f(u, ns=ns, ds=ds):
                    num, den = sums(u)
                    return (p["gleak"] * (p["vleak"] - u) + num - u * den + ns - u * ds) / p["cm"]
                h = solver.step_size
                if solver.method == "euler":
                    v[b] = old + h * f(old)
                else:
                    k1 = h * f(old)
                    k2 = h * f(old + k1 / 2)
                    k3 = h * f(old + k2 / 2)
                    k4 = h * f(old + k3)
                    v[b] = old + (k1 + 2 * k2 + 2 * k3 + k4) / 6
    return v


def perturbed_tf_cell(inputs, units, solver, seed=0):
    torch.manual_seed(seed)
    cell = TFLTCCell(inputs, units, solver)
    with torch.no_grad():  # move the constant-init parameters away from their defaults
        cell.cm.uniform_(0.3, 0.9)
        cell.gleak.uniform_(0.5, 1.5)
        cell.input_w.uniform_(0.5, 1.5)
        cell.input_b.uniform_(-0.5, 0.5)
    return cell


@pytest.mark.parametrize("solver", [LTCFusedConfig(), UnfoldConfig(method="euler"),
                                    UnfoldConfig(method="rk4")], ids=["fused", "ltc_ex", "ltc_rk"])
def test_tf_cell_step_equals_section_5_2(solver):
    cell = perturbed_tf_cell(3, 4, solver)
    x, v = torch.randn(2, 3), 0.3 * torch.randn(2, 4)
    got = cell(x, v, torch.tensor(1.0)).detach().numpy()
    np.testing.assert_allclose(got, reference_tf_step(cell, x.numpy(), v.numpy(), solver),
                               rtol=1e-12, atol=1e-12)


def test_tf_cell_init_follows_section_5_2():
    torch.manual_seed(1)
    cell = TFLTCCell(5, 16, LTCFusedConfig())
    assert torch.all(cell.cm == 0.5) and torch.all(cell.gleak == 1.0)
    assert torch.all(cell.input_w == 1.0) and torch.all(cell.input_b == 0.0)
    for syn in (cell.recurrent, cell.sensory):
        assert syn.w.min() >= 0.01 and syn.w.max() <= 1.0
        assert syn.mu.min() >= 0.3 and syn.mu.max() <= 0.8
        assert syn.sigma.min() >= 3 and syn.sigma.max() <= 8
        assert set(syn.erev.unique().tolist()) == {-1.0, 1.0}
    assert cell.vleak.abs().max() <= 0.2
    assert sum(p.numel() for p in cell.parameters()) == 2 * 5 + 4 * 5 * 16 + 4 * 16 * 16 + 3 * 16


def random_cell(kind, seed, scale):
    gen = torch.Generator().manual_seed(seed)
    cell = (TFLTCCell(3, 5, LTCFusedConfig()) if kind == "tf"
            else NCPSLTCCell(3, 5, LTCFusedConfig(unfolds=3)))
    with torch.no_grad():
        for p in cell.parameters():
            p.copy_(scale * torch.randn(p.shape, generator=gen))
        if kind == "tf":  # respect the TF cell's constraints
            cell.constrain()
    return cell, gen


def reversal_bounds(cell):
    """Per neuron: min/max over (0, vleak_j, E_ij, E^s_ij) (Theorem 2, A = E and vleak)."""
    a = torch.cat([cell.recurrent.erev, cell.sensory.erev, cell.vleak[None]], 0)
    return torch.clamp(a.min(0).values, max=0), torch.clamp(a.max(0).values, min=0)


@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(["tf", "ncps"]), seed=st.integers(0, 2**31 - 1),
       scale=st.floats(0.01, 20.0), input_scale=st.floats(0.0, 100.0),
       length=st.integers(1, 6))
def test_states_stay_within_reversal_potentials(kind, seed, scale, input_scale, length):
    cell, gen = random_cell(kind, seed, scale)
    lo, hi = reversal_bounds(cell)
    v = torch.zeros(4, 5)
    with torch.no_grad():
        for _ in range(length):
            v = cell(input_scale * torch.randn(4, 3, generator=gen), v, torch.tensor(1.0))
            assert torch.all(v >= lo - 1e-9) and torch.all(v <= hi + 1e-9)


@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(["tf", "ncps"]), seed=st.integers(0, 2**31 - 1),
       scale=st.floats(0.01, 20.0))
def test_system_time_constant_bounds(kind, seed, scale):
    """Theorem 1: τ_sys = cm/(gl + Σa + Σa^s) lies in [cm/(gl + W_tot), cm/gl]."""
    cell, gen = random_cell(kind, seed, scale)
    pos = cell.positive
    with torch.no_grad():
        x, v = scale * torch.randn(4, 3, generator=gen), scale * torch.randn(4, 5, generator=gen)
        conductance = (cell.recurrent.conductance(v, pos).sum(-2)
                       + cell.sensory.conductance(x, pos).sum(-2))
        cm, gl = pos(cell.cm), pos(cell.gleak)
        w_total = pos(cell.recurrent.w).sum(0) + pos(cell.sensory.w).sum(0)
        tau_sys = cm / (gl + conductance)
        assert torch.all(tau_sys <= cm / gl * (1 + 1e-12))
        assert torch.all(tau_sys >= cm / (gl + w_total) * (1 - 1e-12))


@pytest.fixture
def ncps_pair():
    ncps_torch = pytest.importorskip("ncps.torch")
    from ncps.wirings import FullyConnected

    def make(constraint):
        torch.manual_seed(3)
        theirs = ncps_torch.LTCCell(FullyConnected(6), in_features=3,
                                    implicit_param_constraints=constraint == "softplus")
        mine = NCPSLTCCell(3, 6, LTCFusedConfig(), constraint=constraint, use_elapsed=True)
        names = ncps_parameter_names()
        params = dict(mine.named_parameters())
        with torch.no_grad():
            for ours, their in names.items():
                if their not in ("erev", "sensory_erev"):  # polarities are compared, not copied
                    params[ours].copy_(theirs._params[their].double()
                                       + 0.3 * torch.randn(params[ours].shape))
                    theirs._params[their].copy_(params[ours])
        return mine, theirs.double()
    return make


@pytest.mark.parametrize("constraint", ["softplus", "clip"])
def test_ncps_cell_matches_ncps_ltccell(ncps_pair, constraint):
    mine, theirs = ncps_pair(constraint)
    assert torch.equal(mine.recurrent.erev, theirs._params["erev"].double())
    assert torch.equal(mine.sensory.erev, theirs._params["sensory_erev"].double())
    if constraint == "clip":
        mine.constrain()
        theirs.apply_weight_constraints()
    gen = torch.Generator().manual_seed(0)
    v_mine = v_theirs = torch.zeros(4, 6)
    # ncps's LTC wrapper mis-broadcasts batched timespans (B,), so the cell is driven with one
    # scalar elapsed time per step, as the shared time grid of a batch gives.
    for dt in (1.0, 0.5, 2.5, 0.1):
        x = torch.randn(4, 3, generator=gen)
        v_mine = mine(x, v_mine, torch.tensor(dt))
        out, v_theirs = theirs(x, v_theirs, dt)
        torch.testing.assert_close(v_mine, v_theirs, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(out, v_theirs)  # identity output map at init


def test_wiring_polarities_are_ncps_fully_connected():
    from ncps.wirings import FullyConnected
    wiring = FullyConnected(7)
    wiring.build(4)
    erev, sensory = wiring_polarities(4, 7)
    assert torch.equal(erev, torch.tensor(wiring.erev_initializer(), dtype=erev.dtype))
    assert torch.equal(sensory, torch.tensor(wiring.sensory_erev_initializer(), dtype=erev.dtype))


def test_tf_constrain_clips_exactly_the_section_5_2_parameters():
    cell = TFLTCCell(2, 3, LTCFusedConfig())
    with torch.no_grad():
        for i, p in enumerate(cell.parameters()):
            p.copy_(torch.where(torch.rand(p.shape) < 0.5, -5.0, 5000.0) + i)
    before = {n: p.detach().clone() for n, p in cell.named_parameters()}
    cell.constrain()
    for name, p in cell.named_parameters():
        if name in TF_CLIPS:
            lo, hi = TF_CLIPS[name]
            assert torch.equal(p, before[name].clamp(lo, hi)), name
        else:
            assert torch.equal(p, before[name]), name
    assert set(TF_CLIPS) == {"cm", "gleak", "recurrent.w", "sensory.w"}
    assert TF_CLIPS["cm"] == (1e-6, 1000.0) and TF_CLIPS["gleak"] == (1e-5, 1000.0)


def test_body_constrain_reaches_the_cell_and_ncps_softplus_is_untouched():
    model = make_model({"kind": "ltc"}, {"kind": "ltc_fused"})
    with torch.no_grad():
        model.body.cell.cm.fill_(-1.0)
    model.constrain()
    assert torch.all(model.body.cell.cm == 1e-6)
    model = make_model({"kind": "ltc", "cell": "ncps"}, {"kind": "ltc_fused"})
    with torch.no_grad():
        model.body.cell.cm.fill_(-1.0)
    model.constrain()
    assert torch.all(model.body.cell.cm == -1.0)


@pytest.mark.parametrize("field", [{"kind": "ltc"}, {"kind": "ltc", "cell": "ncps"}])
@pytest.mark.parametrize("per_step", [True, False])
def test_ltc_body_runs_the_cell_over_steps(field, per_step):
    model = make_model(field, {"kind": "ltc_fused"}, per_step=per_step).double()
    batch = tiny_batch(model)
    feats = model.body(model.control.path(batch.times, batch.coeffs), batch)
    v = torch.zeros(2, 32)
    states = []
    for k in range(4):
        v = model.body.cell(batch.coeffs[:, k, :-1], v, torch.tensor(1.0))  # last: observed mask
        states.append(v)
    expected = torch.stack(states, 1) if per_step else states[-1]
    torch.testing.assert_close(feats, expected)
    model.spec.model.readout.loss(model(batch), batch.y).backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all()
               for p in model.body.parameters())


def test_ncps_elapsed_time_scales_the_fused_step():
    model = make_model({"kind": "ltc", "cell": "ncps", "use_elapsed": True},
                       {"kind": "ltc_fused", "unfolds": 4})
    cell = model.body.cell
    assert cell.fused_step(torch.tensor(2.0)) == 0.5
    with pytest.raises(ValueError, match="apply to cell 'ncps' only"):
        make_model({"kind": "ltc", "use_elapsed": True}, {"kind": "ltc_fused"})


def test_validation_refuses_elapsed_times_without_the_fused_step(write_spec):
    from zoo.errors import SpecError
    from zoo.spec.validate import load_spec

    spec = {"data": {"kind": "irregular_sines"},
            "model": {"control": {"kind": "raw_steps"},
                      "field": {"kind": "ltc", "cell": "ncps", "units": 4, "use_elapsed": True},
                      "solver": {"kind": "ltc_fused"}, "readout": {"kind": "classify"}}}
    assert load_spec(write_spec(spec))[0].model.field.use_elapsed
    with pytest.raises(SpecError, match="model.field.use_elapsed: the elapsed times scale the "
                                        "fused step only"):
        load_spec(write_spec(spec), ["model.solver={kind: unfold}"])
