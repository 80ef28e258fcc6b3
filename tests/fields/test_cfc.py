"""The CfC field and the ncps wirings against the ncps package (docs/fields/cfc.md): wirings
equal for the same seed; CfC (every mode, plain and wired) and the wired LTC give ncps's states,
outputs and gradients in float64 from the same weights; the same torch seed gives ncps's initial
weights; parameter counts; validation; one ``zoo run``."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from ltc_harness import make_model, ncps_parameter_names, tiny_batch
from pydantic import ValidationError

from zoo.fields.cfc.cell import make_cell
from zoo.fields.cfc.config import CfCConfig
from zoo.fields.ltc.config import LTCConfig
from zoo.fields.ltc.recurrent_body import RecurrentBody, elapsed_times
from zoo.fields.wiring import AutoNCPWiring, FullyConnectedWiring, NCPWiring

ncps_torch = pytest.importorskip("ncps.torch")
wirings = pytest.importorskip("ncps.wirings")

pytestmark = pytest.mark.usefixtures("float64")

INPUTS, B, T = 3, 4, 7

#: (our wiring option, units, the ncps wiring it stands for)
WIRINGS = {
    "fully_connected": ({"kind": "fully_connected"}, 6, lambda: wirings.FullyConnected(6)),
    "fully_connected_sparse": (
        {"kind": "fully_connected", "output_dim": 2, "self_connections": False, "seed": 5}, 6,
        lambda: wirings.FullyConnected(6, output_dim=2, erev_init_seed=5,
                                       self_connections=False)),
    "ncp": ({"kind": "ncp", "inter_neurons": 5, "command_neurons": 4, "motor_neurons": 2,
             "sensory_fanout": 2, "inter_fanout": 2, "recurrent_command_synapses": 3,
             "motor_fanin": 2, "seed": 7}, 11,
            lambda: wirings.NCP(5, 4, 2, 2, 2, 3, 2, seed=7)),
    "ncp_fallbacks": ({"kind": "ncp", "inter_neurons": 2, "command_neurons": 6,
                       "motor_neurons": 3, "sensory_fanout": 1, "inter_fanout": 1,
                       "recurrent_command_synapses": 0, "motor_fanin": 1}, 11,
                      lambda: wirings.NCP(2, 6, 3, 1, 1, 0, 1)),
    "auto_ncp": ({"kind": "auto_ncp", "output_size": 3}, 12, lambda: wirings.AutoNCP(12, 3)),
    "auto_ncp_sparse": ({"kind": "auto_ncp", "output_size": 2, "sparsity_level": 0.8,
                         "seed": 99}, 16, lambda: wirings.AutoNCP(16, 2, 0.8, seed=99)),
}
CFC_WIRINGS = ["fully_connected", "ncp", "auto_ncp", "auto_ncp_sparse"]


def our_wiring(name: str, inputs: int = INPUTS):
    option, units, _ = WIRINGS[name]
    config = LTCConfig(cell="ncps", units=units, wiring=option)
    return config.wiring.build(inputs, units)


@pytest.mark.parametrize("name", list(WIRINGS))
@pytest.mark.parametrize("inputs", [1, 3, 8])
def test_wirings_equal_ncps(name, inputs):
    ours = our_wiring(name, inputs)
    theirs = WIRINGS[name][2]()
    theirs.build(inputs)
    np.testing.assert_array_equal(ours.adjacency, theirs.adjacency_matrix)
    np.testing.assert_array_equal(ours.sensory, theirs.sensory_adjacency_matrix)
    assert ours.units == theirs.units and ours.outputs == theirs.output_dim
    assert [list(layer) for layer in ours.layers] == [
        list(theirs.get_neurons_of_layer(k)) for k in range(theirs.num_layers)]


def test_fully_connected_wiring_is_the_ltc_cells_polarities():
    from zoo.fields.ltc.cell_ncps import wiring_polarities

    ours = FullyConnectedWiring(seed=31).build(4, 7)
    erev, sensory = wiring_polarities(4, 7, seed=31)
    assert np.array_equal(ours.adjacency, erev.numpy()) and np.array_equal(ours.sensory,
                                                                           sensory.numpy())


# --- CfC --------------------------------------------------------------------------------------

#: (our options, the ncps CfC keyword arguments)
PLAIN = {
    "default": ({}, {}),
    "no_gate": ({"mode": "no_gate"}, {"mode": "no_gate"}),
    "minimal": ({"mode": "minimal"}, {"mode": "pure"}),
    "deep_silu": ({"backbone_layers": 3, "backbone_units": 9, "activation": "silu",
                   "backbone_dropout": 0.3},
                  {"backbone_layers": 3, "backbone_units": 9, "activation": "silu",
                   "backbone_dropout": 0.3}),
    "no_backbone_gelu_minimal": ({"backbone_layers": 0, "mode": "minimal", "activation": "gelu"},
                                 {"backbone_layers": 0, "mode": "pure", "activation": "gelu"}),
    "two_layers_tanh": ({"backbone_layers": 2, "activation": "tanh"},
                        {"backbone_layers": 2, "activation": "tanh"}),
    "mixed_no_gate": ({"mixed_memory": True, "mode": "no_gate", "activation": "relu"},
                      {"mixed_memory": True, "mode": "no_gate", "activation": "relu"}),
}
MODES = {"default": "default", "no_gate": "no_gate", "minimal": "pure"}


def ncps_name(ours: str) -> str:
    """Our parameter name -> ncps's (``CfC``: ``rnn_cell``, ``lstm``; wired layers ``layer_k``)."""
    return (ours.replace("update.layers.", "rnn_cell.layer_").replace("update.", "rnn_cell.")
            .replace("memory.", "lstm."))


def cfc_pair(options: dict, theirs, units: int = 5, seed: int = 0, use_elapsed: bool = False):
    """Our CfC body and ncps's CfC, each built after ``torch.manual_seed(seed)``; both float64 in
    eval mode (dropout off)."""
    torch.manual_seed(seed)
    theirs = theirs()
    torch.manual_seed(seed)
    config = CfCConfig(units=units, use_elapsed=use_elapsed, **options)
    body = RecurrentBody(make_cell(config, INPUTS), per_step=True)
    return body.double().eval(), theirs.double().eval()


def trainable(module) -> dict[str, torch.Tensor]:
    return {n: p for n, p in module.named_parameters() if p.requires_grad}


def run_both(body, theirs, use_elapsed: bool, seed: int = 1):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(B, T, INPUTS, generator=gen)
    times = torch.cumsum(0.1 + 2 * torch.rand(T, generator=gen), 0)
    ours = body(SimpleNamespace(values=x, times=times), None)
    # one time grid per batch: ncps gets the elapsed times as (1, T) so that each step's timespan
    # is one scalar (its CfC mis-broadcasts batched (B, T) timespans)
    timespans = elapsed_times(times)[None] if use_elapsed else None
    out, _ = theirs(x, timespans=timespans)
    weights = torch.randn(out.shape, generator=gen)
    for o in (ours, out):
        (o * weights).sum().backward()
    return ours, out


def assert_same(body, theirs, use_elapsed=False):
    mine, ref = trainable(body.cell), trainable(theirs)
    assert {ncps_name(n) for n in mine} == set(ref)
    ours, out = run_both(body, theirs, use_elapsed)
    torch.testing.assert_close(ours, out, rtol=1e-10, atol=1e-10)
    for name, p in mine.items():
        torch.testing.assert_close(p.grad, ref[ncps_name(name)].grad, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", list(PLAIN))
def test_cfc_equals_ncps_cfc(name):
    ours, kwargs = PLAIN[name]
    body, theirs = cfc_pair(ours, lambda: ncps_torch.CfC(INPUTS, 5, **kwargs))
    for n, p in trainable(body.cell).items():  # built in ncps's order: the same initial weights
        assert torch.equal(p, dict(theirs.named_parameters())[ncps_name(n)]), n
    assert_same(body, theirs)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("wiring", CFC_WIRINGS)
def test_wired_cfc_equals_ncps_wired_cfc(mode, wiring):
    option, units, ncps_wiring = WIRINGS[wiring]
    body, theirs = cfc_pair({"mode": mode, "wiring": option},
                            lambda: ncps_torch.CfC(INPUTS, ncps_wiring(), mode=MODES[mode]),
                            units=units)
    assert body.features == theirs.rnn_cell.layer_sizes[-1]
    assert_same(body, theirs)


@pytest.mark.parametrize("options,kwargs", [
    ({}, {}), ({"mode": "minimal", "mixed_memory": True}, {"mode": "pure", "mixed_memory": True}),
    ({"wiring": WIRINGS["auto_ncp"][0]}, None)], ids=["default", "minimal_mixed", "wired"])
def test_elapsed_times_are_ncps_timespans(options, kwargs):
    units = 12 if kwargs is None else 5
    make = ((lambda: ncps_torch.CfC(INPUTS, WIRINGS["auto_ncp"][2]())) if kwargs is None
            else (lambda: ncps_torch.CfC(INPUTS, units, **kwargs)))
    body, theirs = cfc_pair(options, make, units=units, use_elapsed=True)
    assert_same(body, theirs, use_elapsed=True)


def test_time_scale_multiplies_the_elapsed_time():
    config = CfCConfig(units=4, use_elapsed=True, time_scale=2.5)
    cell = make_cell(config, INPUTS).double()
    x, h = torch.randn(2, INPUTS), torch.randn(2, 4)
    torch.testing.assert_close(cell(x, h, torch.tensor(0.4)), cell.update(x, h, 1.0))
    plain = make_cell(CfCConfig(units=4), INPUTS).double()
    plain.load_state_dict(cell.state_dict())
    torch.testing.assert_close(plain(x, h, torch.tensor(0.4)), plain.update(x, h, 1.0))


def parameter_count(module) -> int:
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


@pytest.mark.parametrize("units,options,theirs", [
    (64, {}, lambda: ncps_torch.CfC(20, 64)),
    (32, {"mode": "minimal", "backbone_layers": 2, "backbone_units": 48},
     lambda: ncps_torch.CfC(20, 32, mode="pure", backbone_layers=2, backbone_units=48)),
    (16, {"mixed_memory": True, "mode": "no_gate"},
     lambda: ncps_torch.CfC(20, 16, mixed_memory=True, mode="no_gate")),
    (28, {"wiring": {"kind": "auto_ncp", "output_size": 4}},
     lambda: ncps_torch.CfC(20, wirings.AutoNCP(28, 4))),
], ids=["default", "minimal", "mixed", "auto_ncp"])
def test_parameter_counts_equal_ncps(units, options, theirs):
    ours = make_cell(CfCConfig(units=units, **options), 20)
    assert parameter_count(ours) == parameter_count(theirs())


def test_cfc_body_in_a_model_reads_steps_and_reports_its_fast_path():
    model = make_model({"kind": "cfc", "units": 6, "backbone_units": 8}, {"kind": "unfold"},
                       per_step=False).double()
    assert model.body.implementation_used == "fast"
    assert model.body.features == 6
    batch = tiny_batch(model)
    path = model.control.path(batch.times, batch.coeffs)
    h = torch.zeros(2, 6, dtype=torch.float64)
    for k in range(4):
        h = model.body.cell(batch.coeffs[:, k, :-1], h, torch.tensor(1.0))  # last: observed mask
    torch.testing.assert_close(model.body(path, batch), h)
    model.spec.model.readout.loss(model(batch), batch.y).backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all()
               for p in model.body.parameters())


def test_cfc_spec_needs_no_solver():
    from zoo.spec.schema import spec_model

    spec = spec_model().model_validate({
        "data": {"kind": "irregular_sines"},
        "model": {"control": {"kind": "raw_steps"}, "field": {"kind": "cfc"},
                  "readout": {"kind": "classify"}}})
    assert spec.model.solver.kind == "unfold"


@pytest.mark.parametrize("options,message", [
    ({"wiring": {"kind": "auto_ncp", "output_size": 3}, "backbone_units": 64},
     "backbone_units do not apply with a wiring"),
    ({"wiring": {"kind": "fully_connected", "output_dim": 2}}, "do not apply to a CfC"),
    ({"time_scale": 2.0}, "time_scale applies with use_elapsed"),
    ({"units": 10, "wiring": WIRINGS["ncp"][0]}, "has 11 neurons"),
    ({"units": 5, "wiring": {"kind": "auto_ncp", "output_size": 3}}, "less than units − 2"),
    ({"wiring": {**WIRINGS["ncp"][0], "motor_fanin": 5}}, "motor_fanin 5 is more than"),
    ({"wiring": {"kind": "fully_connected", "seed": -1}},
     "seed -1 is out of range: NumPy accepts seeds from 0 to 4294967295"),
])
def test_cfc_options_are_checked(options, message):
    with pytest.raises(ValidationError, match=message):
        CfCConfig(**options)


@pytest.mark.parametrize("make", [lambda **kw: LTCConfig(cell="ncps", **kw), CfCConfig],
                         ids=["ltc", "cfc"])
def test_an_ncp_wiring_brings_its_neuron_count(make):
    """Without ``units`` the wiring's count is the config's, so that its resolved form (every
    field written, as a run's spec.yaml keeps it) validates again to the same config."""
    config = make(wiring=WIRINGS["ncp"][0])
    assert config.units == 11
    assert type(config)(**config.model_dump(mode="json")) == config


# --- the wired LTC ----------------------------------------------------------------------------

def ltc_pair(wiring: str, constraint: str, seed: int = 3):
    from zoo.solvers.unfold import LTCFusedConfig

    option, units, ncps_wiring = WIRINGS[wiring]
    config = LTCConfig(cell="ncps", units=units, wiring=option, constraint=constraint,
                       use_elapsed=True)
    ctx = SimpleNamespace(input_channels=INPUTS,
                          spec=SimpleNamespace(model=SimpleNamespace(solver=LTCFusedConfig())))
    torch.manual_seed(seed)
    theirs = ncps_torch.LTC(INPUTS, ncps_wiring(),
                            implicit_param_constraints=constraint == "softplus").double()
    body = RecurrentBody(config.make_cell(ctx), per_step=True).double()
    cell = body.cell
    names = ncps_parameter_names()
    params = dict(cell.named_parameters())
    with torch.no_grad():
        assert torch.equal(params["recurrent.erev"], theirs.rnn_cell.erev)  # from the wiring
        assert torch.equal(params["sensory.erev"], theirs.rnn_cell.sensory_erev)
        for ours, their in names.items():
            if "erev" not in ours:  # move away from the init, the same for both
                p = getattr(theirs.rnn_cell, their)
                p.add_(0.3 * torch.randn(p.shape))
                params[ours].copy_(p)
    return body, theirs, names


@pytest.mark.parametrize("constraint", ["softplus", "clip"])
@pytest.mark.parametrize("wiring", ["fully_connected_sparse", "ncp", "ncp_fallbacks", "auto_ncp"])
def test_wired_ltc_equals_ncps_ltc(wiring, constraint):
    body, theirs, names = ltc_pair(wiring, constraint)
    if constraint == "clip":
        body.cell.constrain()
        theirs.rnn_cell.apply_weight_constraints()
    assert body.features == theirs.motor_size
    ours, out = run_both(body, theirs, use_elapsed=True)
    # ncps's per-motor-neuron output affine map is the identity at init (the readout subsumes it)
    torch.testing.assert_close(ours, out, rtol=1e-10, atol=1e-10)
    for name, p in body.cell.named_parameters():
        torch.testing.assert_close(p.grad, getattr(theirs.rnn_cell, names[name]).grad,
                                   rtol=1e-10, atol=1e-10)
    ltc_parameters = parameter_count(theirs) - 2 * theirs.motor_size  # less output_w, output_b
    assert parameter_count(body) == ltc_parameters


def test_wired_ltc_runs_generic_and_a_fully_connected_wiring_keeps_the_fast_path():
    wired = make_model({"kind": "ltc", "cell": "ncps", "wiring": WIRINGS["ncp"][0]},
                       {"kind": "ltc_fused"})
    assert wired.body.implementation_used.startswith("generic")
    assert wired.body.features == 2
    out = wired(tiny_batch(wired))
    assert out.shape == (2, 4, 3) and torch.isfinite(out).all()
    full = make_model({"kind": "ltc", "cell": "ncps", "units": 6,
                       "wiring": {"kind": "fully_connected", "seed": 5}}, {"kind": "ltc_fused"})
    assert full.body.implementation_used == "fast"
    plain = make_model({"kind": "ltc", "cell": "ncps", "units": 6, "erev_seed": 5},
                       {"kind": "ltc_fused"})
    assert torch.equal(full.body.cell.recurrent.erev, plain.body.cell.recurrent.erev)


@pytest.mark.parametrize("field,message", [
    ({"kind": "ltc", "wiring": {"kind": "auto_ncp", "output_size": 3}},
     "apply to cell 'ncps' only"),
    ({"kind": "ltc", "cell": "ncps", "erev_seed": 3, "wiring": {"kind": "fully_connected"}},
     "erev_seed does not apply with a wiring"),
])
def test_ltc_wiring_options_are_checked(field, message):
    with pytest.raises(ValidationError, match=message):
        LTCConfig(**{k: v for k, v in field.items() if k != "kind"})


def test_auto_ncp_sizes_are_ncps():
    theirs = wirings.AutoNCP(40, 7, sparsity_level=0.3, seed=1)
    ours = AutoNCPWiring(output_size=7, sparsity_level=0.3, seed=1).ncp(40)
    assert isinstance(ours, NCPWiring)
    assert (ours.inter_neurons, ours.command_neurons, ours.motor_neurons, ours.sensory_fanout,
            ours.inter_fanout, ours.recurrent_command_synapses, ours.motor_fanin) == (
        theirs._num_inter_neurons, theirs._num_command_neurons, theirs._num_motor_neurons,
        theirs._sensory_fanout, theirs._inter_fanout, theirs._recurrent_command_synapses,
        theirs._motor_fanin)


# --- from YAML --------------------------------------------------------------------------------

CFC_SPEC = {
    "data": {"kind": "irregular_sines", "n_train": 32, "n_val": 8, "n_test": 8, "length": 10},
    "model": {"control": {"kind": "raw_steps"},
              "field": {"kind": "cfc", "units": 8, "wiring": {"kind": "auto_ncp",
                                                              "output_size": 3, "seed": 12345}},
              "readout": {"kind": "classify"}},
    "train": {"epochs": 1, "batch_size": 16, "optimizer": {"lr": 0.01}},
}


def test_a_cfc_spec_validates_without_torch(write_spec):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
    from test_light_commands import heavy_imports

    assert heavy_imports("validate", str(write_spec(CFC_SPEC))) == []


@pytest.mark.slow
def test_zoo_run_trains_a_tiny_cfc(write_spec, tmp_path, monkeypatch, capsys):
    from zoo.cli.main import main

    monkeypatch.chdir(tmp_path)
    code = main(["run", str(write_spec(CFC_SPEC)), "--no-progress"])
    out = capsys.readouterr()
    assert code == 0, out.err
    # 204 parameters of ncps's CfC(3, AutoNCP(8, 3)) for the 3 channels, 16 of the readout
    assert "(220 parameters, generic (wired CfC) path, " in out.out + out.err
    assert "finished (best epoch 1): test/loss" in out.out
