"""Validation that used to come too late or say too little: each problem is one located message
at ``zoo validate`` time (exit 2, no traceback), never an error hours into a run.

Watched metric names, size bounds and the parameter estimate, seed range, booleans in number
options, YAML merge keys, tuple lengths, non-ASCII look-alike letters, ``extends:`` in the JSON
schema and kind swaps, and fields that need no solver. The broken files of tests/corpus/ run
the same cases through the command.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import yaml
from test_validate import SPEC

from zoo import registry
from zoo.cli.main import main
from zoo.errors import SpecError
from zoo.spec.validate import estimate_parameters, load_spec
from zoo.suggest import did_you_mean

REPO = Path(__file__).resolve().parents[2]

# the lines after SPEC are 13, 14, ...

LSTM = """\
data: {kind: irregular_sines, length: 12}
model:
  control: {kind: raw_steps}
  field: {kind: lstm, units: 8}
  readout: {kind: classify}
"""


def problems(path, overrides=None) -> list[str]:
    with pytest.raises(SpecError) as info:
        load_spec(path, overrides)
    return info.value.problems


def cli(path, capsys, *overrides: str) -> str:
    """``zoo validate PATH``: exit code 2, no traceback; returns what it printed to stderr."""
    args = ["validate", str(path)] + [a for o in overrides for a in ("-o", o)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip()
    return err.strip()


def only(path, capsys, *overrides: str) -> str:
    """The one problem of ``path``, the same from the library and from the command."""
    [msg] = problems(path, list(overrides))
    assert cli(path, capsys, *overrides) == msg
    return msg


# -- 1. watched metric names -----------------------------------------------------------------

def test_select_names_a_metric_the_readout_reports(write_spec, capsys):
    path = write_spec(SPEC + "  select: val/acuracy\n")
    assert only(path, capsys) == (
        f"{path}:13:11: train.select: 'val/acuracy' is not a metric the run records (did you "
        f"mean 'val/accuracy'?); readout 'classify' reports loss, accuracy, f1_macro, recorded "
        f"as val/<metric>; every epoch records train/loss, time/epoch_seconds, solver/nfe, lr")
    path = write_spec(SPEC + "  select: test/accuracy\n")
    assert only(path, capsys) == (
        f"{path}:13:11: train.select: 'test/accuracy' is measured once, after training, so it "
        f"cannot be watched (did you mean 'val/accuracy'?)")


def test_stopping_and_schedule_monitors_are_checked(write_spec, capsys):
    path = write_spec(SPEC + "  stopping:\n    monitors:\n      - {metric: val/loss, mode: min}\n"
                             "      - {metric: val/f1, mode: max}\n    patience: 3\n"
                             "  schedule: {kind: plateau, monitor: val/los}\n")
    msgs = problems(path)
    assert msgs == [
        f"{path}:16:18: train.stopping.monitors.1.metric: 'val/f1' is not a metric the run "
        f"records (did you mean 'val/f1_macro'?); readout 'classify' reports loss, accuracy, "
        f"f1_macro, recorded as val/<metric>; every epoch records train/loss, "
        f"time/epoch_seconds, solver/nfe, lr",
        f"{path}:18:38: train.schedule.monitor: 'val/los' is not a metric the run records (did "
        f"you mean 'val/loss'?); readout 'classify' reports loss, accuracy, f1_macro, recorded "
        f"as val/<metric>; every epoch records train/loss, time/epoch_seconds, solver/nfe, lr"]
    assert cli(path, capsys) == "\n".join(msgs)
    path = write_spec(SPEC + "  stopping: {monitor: val/acc, patience: 2}\n")
    assert only(path, capsys).startswith(
        f"{path}:13:23: train.stopping.monitor: 'val/acc' is not a metric the run records (did "
        f"you mean 'val/accuracy'?)")


def test_metrics_the_run_records_pass(write_spec):
    ok = [
        SPEC + "  select: val/f1\n",  # with f1_positive, classify reports f1
        SPEC + "  select: train/loss\n",
        SPEC + "  evaluate_train: true\n  weight_penalty: 0.01\n"
               "  schedule: {kind: plateau, monitor: train_eval/objective}\n"
               "  stopping: {monitors: [{metric: train_eval/accuracy}, {metric: val/f1_macro}],"
               " patience: 3}\n",
        SPEC.replace("irregular_sines\n  length: 12", "circle")
            .replace("kind: classify", "kind: regress") + "  select: val/mae\n",
    ]
    ok[0] = ok[0].replace("{kind: classify}", "{kind: classify, f1_positive: 1}")
    for text in ok:
        load_spec(write_spec(text))
    [msg] = problems(write_spec(SPEC.replace("irregular_sines\n  length: 12", "circle")
                                .replace("kind: classify", "kind: regress")
                                + "  select: val/accuracy\n"))
    assert "readout 'regress' reports loss, mse, mae" in msg


@pytest.mark.parametrize("kind,outputs,target", [
    ("classify", torch.randn(6, 3), torch.tensor([0, 1, 2, 0, 1, 2])),
    ("binary", torch.randn(6, 1), torch.tensor([0., 1., 0., 1., 1., 0.])),
    ("regress", torch.randn(6, 2), torch.randn(6, 2)),
])
def test_declared_metric_names_are_what_metrics_reports(kind, outputs, target):
    cls = registry.loadable("readouts")[kind]
    for readout in [cls()] + ([cls(f1_positive=1)] if kind == "classify" else []):
        assert set(readout.metrics(outputs, target)) == set(readout.reported_metrics())
        assert set(readout.reported_metrics()) <= set(cls.metric_names)
        assert cls.default_metric[0] in readout.reported_metrics()


# -- 2. sizes --------------------------------------------------------------------------------

def test_absurd_sizes_are_refused_with_the_limit(write_spec, capsys):
    path = write_spec(SPEC.replace("hidden: 8", "hidden: 1000000000000"))
    assert only(path, capsys) == (
        f"{path}:8:13: model.field.hidden: 1000000000000 is more than 65536, the largest width "
        f"zoo accepts (a model that size does not fit in memory)")
    path = write_spec(SPEC.replace("epochs: 2", "epochs: 100000000000\n  batch_size: 10000000000"))
    msgs = problems(path)
    assert msgs == [
        f"{path}:12:11: train.epochs: 100000000000 is more than 1000000, the largest number of "
        f"epochs zoo accepts (a run that long would never finish)",
        f"{path}:13:15: train.batch_size: 10000000000 is more than 1048576, the largest batch "
        f"size zoo accepts (a batch that large does not fit in memory)"]
    assert cli(path, capsys) == "\n".join(msgs)
    path = write_spec(SPEC.replace("hidden: 8", "hidden: 8\n    layers: 5000"))
    assert only(path, capsys).startswith(f"{path}:9:13: model.field.layers: 5000 is more than 1024")


def test_infinite_and_nan_numbers_are_refused(write_spec, capsys):
    """An infinite step or learning rate validated, then failed in training (IndexError) or
    finished with NaN metrics."""
    path = write_spec(SPEC.replace("method: rk4}", "method: rk4, step_size: .inf}").replace(
        "epochs: 2", "epochs: 2\n  optimizer: {lr: .nan}"))
    assert problems(path) == [
        f"{path}:9:55: model.solver.step_size: Input should be a finite number",
        f"{path}:13:19: train.optimizer.lr: Input should be a finite number"]


def test_parameter_count_is_estimated_before_building(write_spec, capsys):
    path = write_spec(SPEC.replace("hidden: 8", "hidden: 60000\n    hidden_hidden: 60000"))
    assert only(path, capsys) == (
        f"{path}:7:5: model.field: the model would have about 14,400,600,004 parameters "
        f"(estimated for one input channel: 54 GiB of float32 weights, several times that to "
        f"train), more than the limit of 1,073,741,824; make it smaller")
    spec, _ = load_spec(write_spec(SPEC))
    assert estimate_parameters(spec) == 2716  # small models pass, counted without memory


# -- 3. seeds --------------------------------------------------------------------------------

def test_seed_is_bounded_to_what_torch_accepts(write_spec, capsys):
    path = write_spec(SPEC + "seed: 100000000000000000000\n")
    assert only(path, capsys) == (
        f"{path}:13:7: seed: seed 100000000000000000000 is out of range: torch accepts seeds "
        f"from -9223372036854775808 to 18446744073709551615 (-2**63 to 2**64 - 1)")
    path = write_spec(SPEC + "  seeds: [1, 18446744073709551616]\n")
    assert only(path, capsys).startswith(
        f"{path}:13:14: train.seeds.1: seed 18446744073709551616 is out of range")
    for seed in (2**64 - 1, -(2**63)):
        spec, _ = load_spec(write_spec(SPEC + f"seed: {seed}\n"))
        torch.Generator().manual_seed(spec.seed)  # the bounds are torch's


def test_numpy_seeds_are_bounded_to_what_numpy_accepts(write_spec, capsys):
    """The seeds handed to NumPy's generators (an own-data ratio split's, the ncps LTC cell's
    polarities, a wiring's): 0 to 2**32 - 1 at validation, not a crash when the data loads or
    the model is built."""
    import numpy as np

    table = ("data:\n  kind: table\n  path: series.csv\n  id: id\n  task: classify\n"
             "  label: y\n  split: {seed: -1}\n")
    path = write_spec(table + LSTM.split("\n", 1)[1])
    assert only(path, capsys) == (
        f"{path}:7:17: data.split.seed: seed -1 is out of range: NumPy accepts seeds from 0 to "
        f"4294967295 (2**32 - 1)")
    ltc = LSTM.replace("{kind: lstm, units: 8}", "{kind: ltc, cell: ncps, units: 8, erev_seed: X}")
    ltc += "  solver: {kind: ltc_fused}\n"
    path = write_spec(ltc.replace("X", str(2**32)))
    assert only(path, capsys) == (
        f"{path}:4:55: model.field.erev_seed: seed 4294967296 is out of range: NumPy accepts "
        f"seeds from 0 to 4294967295 (2**32 - 1)")
    for seed in (0, 2**32 - 1):
        spec, _ = load_spec(write_spec(ltc.replace("X", str(seed))))
        np.random.RandomState(spec.model.field.erev_seed)  # the bounds are NumPy's
        np.random.default_rng(spec.model.field.erev_seed)
    path = write_spec(SPEC + "search: {seed: -5, space: {train.optimizer.lr: {low: 0.001, "
                             "high: 0.01}}}\n")  # Optuna's samplers seed NumPy
    assert only(path, capsys) == (
        f"{path}:13:16: search.seed: seed -5 is out of range: NumPy accepts seeds from 0 to "
        f"4294967295 (2**32 - 1)")


def test_sgd_refuses_adams_options_it_would_ignore(write_spec, capsys):
    sgd = LSTM + "train:\n  optimizer: {kind: sgd, lr: 0.1, betas: [0.5, 0.9], eps: 0.1}\n"
    path = write_spec(sgd)
    assert only(path, capsys) == (
        f"{path}:7:14: train.optimizer: sgd takes lr, lr_batch_scaling and weight_decay, not "
        f"betas or eps (Adam's and AdamW's)")
    resolved = sgd.replace("betas: [0.5, 0.9], eps: 0.1", "betas: [0.9, 0.999], eps: 1.0e-8")
    spec, _ = load_spec(write_spec(resolved))  # the defaults, as a run's resolved spec has them
    assert spec.train.optimizer.kind == "sgd"


def test_run_seed_option_is_bounded_too(write_spec, capsys):
    path = write_spec(SPEC)
    with pytest.raises(SystemExit) as exit_:
        main(["run", str(path), "--seed", str(2**64)])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "Traceback" not in err
    assert "argument --seed: seed 18446744073709551616 is out of range" in err


def test_sweep_seeds_are_bounded_too():
    from zoo.errors import InputError
    from zoo.sweep.plan import parse_seeds

    assert parse_seeds("18446744073709551614-18446744073709551615") == [2**64 - 2, 2**64 - 1]
    with pytest.raises(InputError, match="seed 18446744073709551616 is out of range"):
        parse_seeds("18446744073709551616")
    with pytest.raises(InputError, match="more than 10000 seeds"):
        parse_seeds("1-100000000")  # refused at once, not listed seed by seed


# -- 4. booleans -----------------------------------------------------------------------------

def test_number_options_refuse_yaml_booleans(write_spec, capsys):
    path = write_spec(SPEC.replace("epochs: 2", "epochs: yes"))
    assert only(path, capsys) == (
        f"{path}:12:11: train.epochs: expects an integer, got the boolean true (YAML reads "
        f"yes/no, on/off and true/false as booleans)")
    path = write_spec(SPEC + "  optimizer: {lr: on}\n  seeds: [1, on]\n")
    assert problems(path) == [
        f"{path}:13:19: train.optimizer.lr: expects a number, got the boolean true (YAML reads "
        f"yes/no, on/off and true/false as booleans)",
        f"{path}:14:14: train.seeds.1: expects an integer, got the boolean true (YAML reads "
        f"yes/no, on/off and true/false as booleans)"]
    path = write_spec(SPEC.replace("epochs: 2", "epochs: no"))  # 0 would fail the bound
    assert only(path, capsys) == (
        f"{path}:12:11: train.epochs: expects a number, got the boolean false (YAML reads "
        f"yes/no, on/off and true/false as booleans)")
    assert only(write_spec(SPEC), capsys, "train.epochs=true") == (
        "override '-o train.epochs=true': train.epochs: expects an integer, got the boolean "
        "true (YAML reads yes/no, on/off and true/false as booleans)")
    spec, _ = load_spec(write_spec(SPEC + "  drop_last: yes\n"))  # boolean options still do
    assert spec.train.drop_last is True


# -- 5. YAML merge keys ----------------------------------------------------------------------

MERGED = SPEC + """\
  evaluate_train: true
  stopping:
    monitors:
      - &watch {metric: train_eval/loss, mode: min, min_delta: 1.0e-4}
      - {<<: *watch, metric: train_eval/accuracy, mode: max}
    patience: 3
"""


def test_merge_keys_are_supported(write_spec, capsys):
    spec, src = load_spec(write_spec(MERGED))
    first, second = spec.train.stopping.monitors
    assert (second.metric, second.mode, second.min_delta) == ("train_eval/accuracy", "max", 1e-4)
    assert src.where(("train", "stopping", "monitors", 1, "min_delta")).line == 16  # the anchor
    assert src.where(("train", "stopping", "monitors", 1, "mode")).line == 17  # its own key
    many = write_spec(SPEC.replace("  field:\n    kind: ncde\n    hidden: 8\n",
                                   "  field: {<<: [{hidden: 8}, {hidden: 16, layers: 2}], "
                                   "kind: ncde}\n"))
    spec, _ = load_spec(many)  # the first listed mapping wins, as YAML says
    assert (spec.model.field.hidden, spec.model.field.layers) == (8, 2)
    path = write_spec(MERGED.replace("min_delta: 1.0e-4", "min_delta: lots"))
    msgs = problems(path)  # located at the anchor, for both entries that use it
    assert msgs == [f"{path}:16:64: train.stopping.monitors.{i}.min_delta: Input should be a "
                    f"valid number, unable to parse string as a number" for i in (0, 1)]
    path = write_spec(MERGED.replace("<<: *watch", "<<: 0.001"))
    assert only(path, capsys) == (
        f"{path}:17:14: train.stopping.monitors.1: the merge key '<<' takes a mapping "
        f"(<<: *anchor) or a list of mappings (<<: [*a, *b]), not the value '0.001'")
    path = write_spec(SPEC + "  seeds: &s [1, *s]\n")
    assert only(path, capsys) == (
        f"{path}:13:10: train.seeds.1: an alias refers to the collection that contains it (a "
        f"recursive anchor); write the values out instead")
    path = write_spec(MERGED.replace("mode: max}", "mode: max, mode: min}"))
    assert only(path, capsys) == \
        f"{path}:17:62: train.stopping.monitors.1.mode: duplicate key 'mode'"


# -- 6. tuple lengths ------------------------------------------------------------------------

def test_betas_of_the_wrong_length_say_how_many(write_spec, capsys):
    path = write_spec(SPEC + "  optimizer: {betas: [0.9]}\n")
    assert only(path, capsys) == \
        f"{path}:13:22: train.optimizer.betas: expects 2 values (β1, β2), got 1"
    path = write_spec(SPEC + "  optimizer: {betas: [0.9, 0.99, 0.999]}\n")
    assert only(path, capsys) == \
        f"{path}:13:22: train.optimizer.betas: expects 2 values (β1, β2), got 3"
    spec, _ = load_spec(write_spec(SPEC + "  optimizer: {betas: [0.8, 0.99]}\n"))
    assert spec.train.optimizer.betas == (0.8, 0.99)


# -- 7. non-ASCII look-alikes ----------------------------------------------------------------

def test_cyrillic_lookalike_in_a_key_is_named(write_spec, capsys):
    path = write_spec(SPEC.replace("    hidden: 8", "    l\u0430yers: 2"))  # Cyrillic а
    assert only(path, capsys) == (
        f"{path}:8:5: model.field.l\u0430yers: unknown key 'l\u0430yers' (did you mean 'layers'? "
        f"'l\u0430yers' contains the non-ASCII character '\u0430' (U+0430 CYRILLIC SMALL LETTER "
        f"A)); valid keys: hidden, hidden_hidden, layers")
    path = write_spec(SPEC.replace("kind: ncde", "kind: n\u0441de"))  # Cyrillic с
    assert only(path, capsys).endswith(
        "(did you mean 'ncde'? 'n\u0441de' contains the non-ASCII character '\u0441' (U+0441 "
        "CYRILLIC SMALL LETTER ES))")


def test_lookalike_suggestions():
    # the ASCII twin wins over a closer-looking wrong key
    assert did_you_mean("hidden_hidd\u0435n", ["hidden", "hidden_hidden"]).startswith(
        " (did you mean 'hidden_hidden'?")
    assert did_you_mean("\u0435p\u03bfchs", ["epochs"]) == (
        " (did you mean 'epochs'? '\u0435p\u03bfchs' contains the non-ASCII characters '\u0435' "
        "(U+0435 CYRILLIC SMALL LETTER IE), '\u03bf' (U+03BF GREEK SMALL LETTER OMICRON))")
    assert did_you_mean("epo\u200bchs", ["epochs"]) == (
        " (did you mean 'epochs'? 'epo\u200bchs' contains the non-ASCII character U+200B "
        "ZERO WIDTH SPACE)")
    assert did_you_mean("hiden", ["hidden"]) == " (did you mean 'hidden'?)"  # ASCII: as before


# -- 8. extends: JSON schema and kind swaps --------------------------------------------------

def test_schema_allows_extends_and_checks_partial_specs(capsys):
    jsonschema = pytest.importorskip("jsonschema")
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    spec_def = schema["$defs"]["Spec"]
    assert spec_def["properties"]["extends"]["anyOf"] == [
        {"type": "string"}, {"type": "array", "items": {"type": "string"}, "minItems": 1}]
    validator = jsonschema.Draft202012Validator(schema)
    shipped = [p for p in (REPO / "specs").rglob("*.yaml") if "_base" not in p.parts]
    assert any("extends" in yaml.safe_load(p.read_text()) for p in shipped)
    for path in shipped:  # what an editor with `zoo schema` says of the shipped specs
        errors = [e.message for e in validator.iter_errors(yaml.safe_load(path.read_text()))]
        assert not errors, f"{path}: {errors}"
    assert not list(validator.iter_errors({"extends": "a.yaml", "model": {"field": {"hidden": 4}}}))
    assert list(validator.iter_errors({"extends": "a.yaml", "model": {"field": {"hiden": 4}}}))
    assert list(validator.iter_errors({"extends": 3}))
    assert list(validator.iter_errors({"data": {"kind": "irregular_sines"}}))  # model required
    assert not list(validator.iter_errors(yaml.safe_load(LSTM)))  # no solver needed
    ncde = yaml.safe_load(LSTM.replace("{kind: lstm, units: 8}", "{kind: ncde}"))
    assert [e.message for e in validator.iter_errors(ncde)] == ["'solver' is a required property"]


def test_extends_can_swap_a_component_kind(write_spec, capsys):
    write_spec(SPEC.replace("    hidden: 8", "    hidden: 8\n    layers: 2"), "base.yaml")
    child = write_spec("extends: base.yaml\nmodel:\n  control: {kind: raw_steps}\n"
                       "  field: {kind: lstm, units: 16}\n  solver: {kind: unfold}\n", "swap.yaml")
    spec, _ = load_spec(child)  # the ncde options (hidden, layers) are not inherited
    assert spec.model.field.kind == "lstm" and spec.model.field.units == 16
    same = write_spec("extends: base.yaml\nmodel:\n  field: {kind: ncde, hidden: 4}\n", "same.yaml")
    spec, _ = load_spec(same)  # the same kind merges as before
    assert (spec.model.field.hidden, spec.model.field.layers) == (4, 2)
    stale = write_spec("extends: base.yaml\nmodel:\n  control: {kind: raw_steps}\n"
                       "  field: {kind: lstm, layers: 2}\n", "stale.yaml")
    msgs = problems(stale)  # an old option written in the child is still the child's error
    assert msgs[0].startswith(f"{stale}:4:23: model.field.layers: unknown key 'layers'")
    assert cli(stale, capsys).splitlines()[0] == msgs[0]
    spec, _ = load_spec(write_spec(SPEC), ["model.field={kind: ncde, layers: 2}"])
    assert spec.model.field.hidden == 32  # -o with a mapping replaces (the default hidden)
    doc = (REPO / "docs" / "spec.md").read_text()
    section = doc.split("## Inheritance and overrides")[1].split("\n## ")[0]
    for rule in ("mappings merge key by key", "anything else replaces",
                 "a different `kind` replaces the component", "An\noverride replaces"):
        assert rule in section


# -- 9. fields that need no solver -----------------------------------------------------------

@pytest.mark.parametrize("field", ["lstm", "ctgru"])
def test_fields_without_solver_need_no_solver_block(write_spec, field):
    spec, _ = load_spec(write_spec(LSTM.replace("kind: lstm", f"kind: {field}")))
    cls = registry.loadable("fields")[field]
    assert not cls.needs_solver
    assert spec.model.solver.kind == cls.example_solver["kind"]


def test_missing_or_inherited_solver_says_what_to_do(write_spec, capsys):
    path = write_spec(LSTM.replace("{kind: lstm, units: 8}", "{kind: ncde}")
                      .replace("raw_steps", "natural_cubic"))
    assert only(path, capsys) == (
        f"{path}:3:3: model.solver: required key is missing (field 'ncde' needs one, e.g. "
        f"solver: {{kind: torchdiffeq, method: rk4}}; only cfc, ctgru, lstm need none)")
    path = write_spec(SPEC.replace("{kind: torchdiffeq, method: rk4}", "null"))
    assert only(path, capsys) == (
        f"{path}:9:11: model.solver: is empty (null); it needs a mapping with a kind (field "
        f"'ncde' needs one, e.g. solver: {{kind: torchdiffeq, method: rk4}}; only cfc, ctgru, lstm "
        f"need none)")
    base = write_spec(SPEC, "base.yaml")
    child = write_spec("extends: base.yaml\nmodel:\n  control: {kind: raw_steps}\n"
                       "  field: {kind: lstm}\n", "child.yaml")
    assert only(child, capsys) == (
        f"{base}:9:18: model.solver.kind: field 'lstm' needs no solver: leave model.solver out "
        f"(set it to null to drop an inherited one), not 'torchdiffeq'")
    dropped = write_spec(child.read_text() + "  solver: null\n", "dropped.yaml")
    spec, _ = load_spec(dropped)
    assert spec.model.solver.kind == "unfold"
    spec, _ = load_spec(write_spec(LSTM + "  solver: {kind: unfold, unfolds: 2}\n"))
    assert spec.model.solver.unfolds == 2  # one may still be given
