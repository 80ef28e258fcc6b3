"""The `zoo` command: exit codes, one-line errors without traceback, schema, list."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from zoo.cli.main import main


def test_validate_exit_codes(write_spec, tiny_spec, capsys):
    good = write_spec(tiny_spec, "good.yaml")
    assert main(["validate", str(good)]) == 0
    assert f"{good}: ok" in capsys.readouterr().out
    tiny_spec["model"]["field"]["rule"] = "delt"
    bad = write_spec(tiny_spec, "bad.yaml")
    assert main(["validate", str(good), str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:" in err and "model.field.rule: unknown key 'rule'" in err
    assert main(["validate", "missing.yaml"]) == 2
    assert "missing.yaml: spec file not found" in capsys.readouterr().err


def test_design_journey_typo_in_rule(write_spec, capsys):
    """`model.field.rule: 'delt' is not one of hebb, oja, delta (did you mean 'delta'?)`."""
    spec = write_spec(
        "data: {kind: irregular_sines}\nmodel:\n  control: {kind: natural_cubic}\n"
        "  field:\n    kind: fwp\n    rule: delt\n  solver: {kind: torchdiffeq}\n"
        "  readout: {kind: classify}\n")
    assert main(["validate", str(spec)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"{spec}:6:11: model.field.rule: 'delt' is not one of hebb, oja, delta "
                   f"(did you mean 'delta'?)")


@pytest.mark.slow
def test_run_bad_input_is_one_line_without_traceback(write_spec, tiny_spec, tmp_path):
    tiny_spec["train"]["epochs"] = "x"
    spec = write_spec(tiny_spec)
    out = subprocess.run([sys.executable, "-m", "zoo", "run", str(spec)], capture_output=True,
                         text=True, cwd=tmp_path, timeout=120)
    assert out.returncode == 2
    assert "train.epochs" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "mlruns.db").exists()  # nothing written for a rejected spec
    debug = subprocess.run([sys.executable, "-m", "zoo", "--debug", "run", str(spec)],
                           capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert debug.returncode != 0 and "Traceback" in debug.stderr


@pytest.mark.parametrize("command", ["run", "sweep", "search", "validate"])
def test_a_bad_spec_is_reported_before_torch_and_mlflow_load(command, write_spec, tiny_spec):
    """A typo costs the spec's validation (a second or two), not torch's and MLflow's imports."""
    tiny_spec["train"]["epochs"] = "x"
    spec = write_spec(tiny_spec)
    probe = (f"import sys; from zoo.cli.main import main; code = main({[command, str(spec)]!r}); "
             f"print(code, sorted(m for m in ('torch', 'mlflow') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.split("\n")[-2] == "2 []", out.stdout + out.stderr
    assert "train.epochs" in out.stderr


@pytest.mark.parametrize("command", ["sweep", "search"])
@pytest.mark.parametrize("options,message", [
    (["--address", "127.0.0.1:1"], "--address needs --executor ray"),
    (["--workers", "0"], "--workers must be at least 1")])
def test_executor_options_that_contradict_are_one_message(command, options, message, write_spec,
                                                          tiny_spec, tmp_path, monkeypatch,
                                                          capsys):
    monkeypatch.chdir(tmp_path)
    spec = write_spec({**tiny_spec, "search": {"space": {"train.optimizer.lr": {
        "low": 0.001, "high": 0.01}}}})
    assert main([command, str(spec), *options]) == 2
    assert capsys.readouterr().err.strip() == f"error: {message}"
    assert sorted(p.name for p in tmp_path.iterdir()) == [spec.name]  # nothing written


@pytest.mark.parametrize("command, unit", [("sweep", "run"), ("search", "trial")])
@pytest.mark.parametrize("option, value, message", [
    ("cpus", "-1", "not a number above 0: '-1'"), ("cpus", "0", "not a number above 0: '0'"),
    ("gpus", "-0.5", "not a number of at least 0: '-0.5'"),
    ("gpus", "inf", "not a number of at least 0: 'inf'")])
def test_ray_resources_are_checked_before_ray_starts(command, unit, option, value, message,
                                                     write_spec, tiny_spec, capsys):
    spec = write_spec(tiny_spec)
    with pytest.raises(SystemExit) as exit_:
        main([command, str(spec), "--executor", "ray", f"--{option}-per-{unit}", value])
    assert exit_.value.code == 2
    assert f"argument --{option}-per-{unit}: {message}" in capsys.readouterr().err


def test_schema_contains_every_installed_component(tmp_path, capsys):
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    text = json.dumps(schema)
    for name in ("NCDEConfig", "NaturalCubicConfig", "TorchdiffeqConfig", "ClassifyConfig",
                 "IrregularSinesConfig", "AdjointConfig"):
        assert name in text
    target = tmp_path / "zoo.schema.json"
    assert main(["schema", "--output", str(target)]) == 0
    assert json.loads(target.read_text())["title"] == "nde-zoo spec"


def test_unwritable_output_dirs(write_spec, tiny_spec, capsys):
    """/proc refuses new files even for root: nothing is written, one clear message."""
    assert main(["schema", "--output", "/proc/zoo.schema.json"]) == 2
    assert "/proc is not a writable folder" in capsys.readouterr().err
    spec = write_spec(tiny_spec)
    assert main(["run", str(spec), "--tracking-uri", "sqlite:////proc/mlruns.db"]) == 2
    assert "/proc is not writable" in capsys.readouterr().err


def test_schema_missing_output_dir(tmp_path, capsys):
    assert main(["schema", "--output", str(tmp_path / "no" / "s.json")]) == 2
    assert "is not a writable folder" in capsys.readouterr().err


def test_list_shows_groups_and_origin(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for group in ("datasets:", "controls:", "fields:", "solvers:", "backprop:", "readouts:"):
        assert group in out
    assert "[nde-zoo]" in out
    assert main(["list", "nope"]) == 2
    assert "unknown component group 'nope'" in capsys.readouterr().err


def test_no_command_prints_help(capsys):
    assert main([]) == 2
    assert "usage: zoo" in capsys.readouterr().err


def test_schema_output_is_a_file_with_a_plain_files_mode(tmp_path, capsys):
    os.umask(umask := os.umask(0o022))  # read the process's umask, leave it as it was
    assert main(["schema", "--output", str(tmp_path)]) == 2  # a folder: nothing left behind
    assert f"--output {tmp_path}: is a folder; name a file" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    assert main(["schema", "--output", str(tmp_path / "s.json")]) == 0
    assert (tmp_path / "s.json").stat().st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's 0600
