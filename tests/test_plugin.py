"""The example third-party plugin installs separately and works from YAML."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from conftest import REPO


@pytest.mark.slow
def test_install_list_and_run_example_plugin(tmp_path):
    target = tmp_path / "site"
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--target", str(target), str(REPO / "plugins" / "zoo-example-plugin")],
        capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stderr
    env = dict(os.environ, PYTHONPATH=str(target))
    zoo = [sys.executable, "-m", "zoo"]
    listed = subprocess.run([*zoo, "list"], capture_output=True, text=True, env=env, timeout=120)
    assert re.search(r"linear_cde +\[zoo-example-plugin\]  Linear CDE", listed.stdout)
    assert "ramps" in listed.stdout and "[zoo-example-plugin]" in listed.stdout
    schema = subprocess.run([*zoo, "schema"], capture_output=True, text=True, env=env,
                            timeout=120)
    assert "LinearCDEConfig" in schema.stdout and "RampsConfig" in schema.stdout
    run = subprocess.run(
        [*zoo, "run", str(REPO / "plugins" / "zoo-example-plugin" / "example.yaml"),
         "--no-progress", "--tracking-uri", f"sqlite:///{tmp_path / 'mlruns.db'}",
         "-o", "train.epochs=3"],
        capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    accuracy = float(run.stdout.split("test/accuracy ")[1].split(",")[0])
    assert accuracy > 0.8  # rising vs falling ramps is easy
