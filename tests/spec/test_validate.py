"""Spec validation: every problem is reported as FILE:LINE:COL: dotted.path: message."""

from __future__ import annotations

import pytest

from zoo.errors import InputError, SpecError
from zoo.spec.validate import load_spec

SPEC = """\
data:
  kind: irregular_sines
  length: 12
model:
  control: {kind: natural_cubic}
  field:
    kind: ncde
    hidden: 8
  solver: {kind: torchdiffeq, method: rk4}
  readout: {kind: classify}
train:
  epochs: 2
"""


def problems(path, overrides=None) -> list[str]:
    with pytest.raises(SpecError) as info:
        load_spec(path, overrides)
    return info.value.problems


def test_valid_spec_loads_with_defaults(write_spec):
    spec, _ = load_spec(write_spec(SPEC))
    assert spec.name == "spec"
    assert spec.model.field.hidden == 8
    assert spec.model.backprop.kind == "direct"
    assert spec.train.optimizer.lr == 1e-3


def test_misspelt_key_points_at_key_with_suggestion(write_spec):
    path = write_spec(SPEC.replace("    hidden: 8", "    hiden: 8"))
    [msg] = problems(path)
    assert msg.startswith(f"{path}:8:5: model.field.hiden: unknown key 'hiden'")
    assert "did you mean 'hidden'?" in msg
    assert "valid keys: hidden, hidden_hidden, layers" in msg


def test_unknown_component_lists_choices_and_suggests(write_spec):
    path = write_spec(SPEC.replace("kind: ncde", "kind: ncdee"))
    [msg] = problems(path)
    assert msg.startswith(f"{path}:7:11: model.field.kind: 'ncdee' is not one of ")
    assert "ncde" in msg and "(did you mean 'ncde'?)" in msg


def test_wrong_literal_value_suggests(write_spec):
    path = write_spec(SPEC.replace("method: rk4", "method: rk5"))
    [msg] = problems(path)
    assert msg.startswith(f"{path}:9:39: model.solver.method: 'rk5' is not one of ")
    assert "dopri5" in msg and "did you mean" in msg


def test_wrong_type_points_at_value(write_spec):
    path = write_spec(SPEC.replace("epochs: 2", "epochs: many"))
    [msg] = problems(path)
    assert msg.startswith(f"{path}:12:11: train.epochs: ")
    assert "integer" in msg


def test_missing_section(write_spec):
    path = write_spec(SPEC.replace("  readout: {kind: classify}\n", ""))
    [msg] = problems(path)
    assert msg == f"{path}:5:3: model.readout: required key is missing"


def test_several_problems_reported_together(write_spec):
    path = write_spec(SPEC.replace("hidden: 8", "hidden: -1").replace("epochs: 2", "epoch: 2"))
    msgs = problems(path)
    assert len(msgs) == 2
    assert any("model.field.hidden" in m for m in msgs)
    assert any("train.epoch: unknown key 'epoch' (did you mean 'epochs'?)" in m for m in msgs)


def test_yaml_syntax_error_has_line_and_column(write_spec):
    path = write_spec(SPEC.replace("  length: 12", "  length: [12"))
    [msg] = problems(path)
    assert msg.startswith(f"{path}:4:1: YAML syntax error") or msg.startswith(f"{path}:4:")


def test_missing_file():
    with pytest.raises(InputError, match="nope.yaml: spec file not found"):
        load_spec("nope.yaml")


def test_override_applies_and_bad_override_is_located(write_spec):
    path = write_spec(SPEC)
    spec, _ = load_spec(path, ["model.field.hidden=16", "train.optimizer.lr=0.1"])
    assert spec.model.field.hidden == 16 and spec.train.optimizer.lr == 0.1
    [msg] = problems(path, ["train.epochs=abc"])
    assert msg.startswith("override '-o train.epochs=abc': train.epochs: ")
    with pytest.raises(InputError, match="expected dotted.key=value"):
        load_spec(path, ["train.epochs"])
    with pytest.raises(InputError, match="'train.epochs' is not a mapping"):
        load_spec(path, ["train.epochs.x=1"])


def test_extends_merges_and_keeps_locations(write_spec):
    write_spec(SPEC, "base.yaml")
    child = write_spec("extends: base.yaml\nmodel:\n  field: {hiden: 4}\n", "child.yaml")
    [msg] = problems(child)
    assert msg.startswith(f"{child}:3:11: model.field.hiden: unknown key")
    ok = write_spec("extends: base.yaml\ntrain:\n  epochs: 7\n", "ok.yaml")
    spec, _ = load_spec(ok)
    assert spec.train.epochs == 7 and spec.model.field.hidden == 8
    bad = write_spec("extends: base.yaml\ntrain: {epochs: 0}\n", "bad.yaml")
    [msg] = problems(bad)
    assert msg.startswith(f"{bad}:2:17: train.epochs")
    base_error = write_spec(SPEC.replace("epochs: 2", "epochs: x"), "base2.yaml")
    child2 = write_spec("extends: base2.yaml\n", "child2.yaml")
    [msg] = problems(child2)
    assert msg.startswith(f"{base_error}:12:11: train.epochs")


def test_extends_missing_file_and_cycle(write_spec):
    path = write_spec("extends: missing.yaml\n", "a.yaml")
    [msg] = problems(path)
    assert "extends: file 'missing.yaml' not found" in msg
    write_spec("extends: c.yaml\n", "b.yaml")
    c = write_spec("extends: b.yaml\n", "c.yaml")
    [msg] = problems(c)
    assert "cycle" in msg


def test_incompatible_combination_names_both_sides(write_spec):
    path = write_spec(SPEC.replace("kind: classify", "kind: classify, class_weights: [1, 2]"))
    [msg] = problems(path)
    assert "model.readout.class_weights: has 2 weights but the dataset has 4 classes" in msg


def test_step_size_rejected_for_adaptive_method(write_spec):
    path = write_spec(SPEC.replace("method: rk4", "method: dopri5, step_size: 1"))
    [msg] = problems(path)
    assert "model.solver: step_size applies to fixed-grid methods" in msg


def test_reproduces_must_name_a_registry_entry(write_spec):
    path = write_spec(SPEC + "reproduces: irie2022/table1/speech/cde-delt\n")
    [msg] = problems(path)
    assert msg.startswith(f"{path}:13:13: reproduces: 'irie2022/table1/speech/cde-delt' is not "
                          f"an entry of the results registry")
    assert "did you mean 'irie2022/table1/speech/cde-delta'?" in msg
    spec, _ = load_spec(write_spec(SPEC + "reproduces: irie2022/table1/speech/cde-delta\n"))
    assert spec.reproduces == "irie2022/table1/speech/cde-delta"


def test_a_variant_reads_the_protocol_of_a_reproduced_entry(write_spec):
    [msg] = problems(write_spec(SPEC + "variant: paper-text\n"))
    assert ":13:10: variant: a variant reads the protocol of a published number; set " \
           "reproduces: too" in msg
    [msg] = problems(write_spec(SPEC + "reproduces: irie2022/table1/speech/cde-delta\n"
                                       "variant: Paper Text\n"))
    assert "variant" in msg and "pattern" in msg
    spec, _ = load_spec(write_spec(SPEC + "reproduces: irie2022/table1/speech/cde-delta\n"
                                          "variant: paper-text\n"))
    assert spec.variant == "paper-text"


def test_cde_field_with_raw_steps_control_says_what_would_work(write_spec):
    path = write_spec(SPEC.replace("kind: natural_cubic", "kind: raw_steps"))
    [msg] = problems(path)
    assert msg.startswith(f"{path}:5:19: model.control.kind: field 'ncde' needs a control that "
                          f"provides derivative, evaluate, but 'raw_steps' provides steps")
    assert "natural_cubic" in msg.split("use one of:")[1]


def test_adjoint_with_unrolled_solver_and_wrong_solver_kind(write_spec):
    ltc = (SPEC.replace("kind: natural_cubic", "kind: raw_steps")
           .replace("    kind: ncde\n    hidden: 8", "    kind: ltc")
           .replace("{kind: torchdiffeq, method: rk4}", "{kind: ltc_fused}"))
    spec, _ = load_spec(write_spec(ltc))
    assert spec.model.field.kind == "ltc"
    adjoint = ltc.replace("  readout:", "  backprop: {kind: adjoint}\n  readout:")
    msgs = problems(write_spec(adjoint))
    assert any("model.backprop.kind: solver 'ltc_fused' cannot run the continuous adjoint; use "
               "backprop kind 'direct'" in m for m in msgs)
    [msg] = problems(write_spec(ltc.replace("{kind: ltc_fused}", "{kind: torchdiffeq}")))
    assert ("model.solver.kind: field 'ltc' is integrated with solver kind ltc_fused or unfold"
            in msg)


def test_heads_must_divide_d_model(write_spec):
    path = write_spec(SPEC.replace("    kind: ncde\n    hidden: 8",
                                   "    kind: fwp\n    d_model: 30\n    heads: 4"))
    [msg] = problems(path)
    assert "model.field" in msg and "heads" in msg
