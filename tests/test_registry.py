"""Entry-point registry: discovery, broken plugins, duplicate names, `zoo list`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from zoo import registry
from zoo.errors import PluginError

ZOO = [sys.executable, "-m", "zoo"]


def fake_distribution(site: Path, name: str, group: str, entries: dict[str, str]) -> None:
    """Write a minimal installed distribution (dist-info) declaring entry points."""
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    lines = "\n".join(f"{k} = {v}" for k, v in entries.items())
    (info / "entry_points.txt").write_text(f"[{group}]\n{lines}\n")


def zoo(*args: str, pythonpath: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run([*ZOO, *args], capture_output=True, text=True, env=env, timeout=120)


def test_builtins_are_registered_through_entry_points():
    fields = registry.entries("fields")
    assert fields["ncde"].distribution == "nde-zoo"
    assert registry.get("fields", "ncde").__name__ == "NCDEConfig"
    assert registry.entries("solvers")["torchdiffeq"].value.endswith(":TorchdiffeqConfig")


def test_unknown_name_and_group_are_clear():
    with pytest.raises(PluginError, match=r"no fields component named 'ncdf' \(did you mean"):
        registry.get("fields", "ncdf")
    with pytest.raises(PluginError, match="unknown component group 'field' "):
        registry.entries("field")


def test_broken_plugin_is_reported_and_others_work(tmp_path):
    fake_distribution(tmp_path, "broken-plugin", "zoo.fields",
                      {"broken_field": "no_such_module:Config"})
    out = zoo("list", "fields", pythonpath=tmp_path)
    assert out.returncode == 0, out.stderr
    assert re.search(r"broken_field +\[broken-plugin\]  BROKEN: ModuleNotFoundError", out.stdout)
    assert "ncde" in out.stdout
    spec = tmp_path / "s.yaml"
    spec.write_text("data: {kind: irregular_sines}\nmodel:\n  control: {kind: natural_cubic}\n"
                    "  field: {kind: broken_field}\n  solver: {kind: torchdiffeq}\n"
                    "  readout: {kind: classify}\n")
    out = zoo("validate", str(spec), pythonpath=tmp_path)
    assert out.returncode == 2
    assert (f"{spec}:4:17: model.field.kind: plugin 'broken_field' from distribution "
            f"'broken-plugin' failed to load: ModuleNotFoundError") in out.stderr
    assert "Traceback" not in out.stderr


def test_a_plugin_that_exits_at_import_is_broken_not_fatal(tmp_path):
    """sys.exit() in a plugin's module used to end every command silently with its code."""
    fake_distribution(tmp_path, "exiting-plugin", "zoo.fields", {"leaves": "leaving:Config"})
    (tmp_path / "leaving.py").write_text("raise SystemExit(3)\n")
    out = zoo("list", "fields", pythonpath=tmp_path)
    assert out.returncode == 0, out.stderr
    assert re.search(r"leaves +\[exiting-plugin\]  BROKEN: SystemExit: 3", out.stdout)
    assert "ncde" in out.stdout


def test_plugin_claiming_a_builtin_name_is_ignored_with_a_warning(tmp_path):
    fake_distribution(tmp_path, "rival-plugin", "zoo.fields",
                      {"ncde": "zoo.fields.config:NCDEConfig"})
    out = zoo("list", "fields", pythonpath=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "'ncde' is built into 'nde-zoo' and also claimed by 'rival-plugin'" in out.stderr
    assert re.search(r"ncde +\[nde-zoo\]", out.stdout)


def test_two_plugins_claiming_one_name_is_an_error_for_that_name(tmp_path):
    fake_distribution(tmp_path, "plug-a", "zoo.fields", {"twin": "a:Config"})
    fake_distribution(tmp_path, "plug-b", "zoo.fields", {"twin": "b:Config"})
    out = zoo("list", "fields", pythonpath=tmp_path)
    assert out.returncode == 0, out.stderr
    assert re.search(r"twin .*BROKEN: 'twin' is claimed by two distributions", out.stdout)
    assert "ncde" in out.stdout


def test_entry_whose_kind_does_not_match_is_broken(tmp_path):
    fake_distribution(tmp_path, "mismatch-plugin", "zoo.fields",
                      {"other": "zoo.fields.config:NCDEConfig"})
    out = zoo("list", "fields", pythonpath=tmp_path)
    assert re.search(r"other +\[mismatch-plugin\]  BROKEN: TypeError", out.stdout)


def test_a_plugin_validator_or_check_that_raises_is_named(tmp_path):
    """A config validator raising what pydantic does not collect (a KeyError), or a check()
    raising, used to end as `error: KeyError: 'x'`, exit 1, naming no plugin."""
    fake_distribution(tmp_path, "faulty-plugin", "zoo.datasets",
                      {"faulty_validator": "faulty:Validates", "faulty_check": "faulty:Checks"})
    (tmp_path / "faulty.py").write_text(
        "from typing import Literal\n"
        "from pydantic import field_validator\n"
        "from zoo.datasets.irregular_sines import IrregularSinesConfig\n\n"
        "class Validates(IrregularSinesConfig):\n"
        "    kind: Literal['faulty_validator'] = 'faulty_validator'\n\n"
        "    @field_validator('n_train')\n"
        "    @classmethod\n"
        "    def _size(cls, value):\n"
        "        return {}['x']\n\n"
        "class Checks(IrregularSinesConfig):\n"
        "    kind: Literal['faulty_check'] = 'faulty_check'\n\n"
        "    def check(self, spec):\n"
        "        raise RuntimeError('boom')\n")
    for kind, problem in [("faulty_validator", "its validator raised KeyError: 'x'"),
                          ("faulty_check", "check() raised RuntimeError: boom")]:
        spec = tmp_path / f"{kind}.yaml"
        spec.write_text(f"data: {{kind: {kind}, n_train: 32}}\nmodel:\n"
                        "  control: {kind: natural_cubic}\n  field: {kind: ncde}\n"
                        "  solver: {kind: torchdiffeq}\n  readout: {kind: classify}\n")
        out = zoo("validate", str(spec), pythonpath=tmp_path)
        assert out.returncode == 2, out.stderr
        assert (f"error: {spec}:1:7: data: datasets component '{kind}' from distribution "
                f"'faulty-plugin': {problem}") in out.stderr
        assert "Traceback" not in out.stderr
