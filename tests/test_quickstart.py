"""The README's main job: the quickstart trains to a clearly above-chance test accuracy."""

from __future__ import annotations

import re

import pytest

from conftest import REPO
from zoo.cli.main import main


@pytest.mark.slow
def test_quickstart_beats_chance(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(REPO / "specs" / "quickstart.yaml"), "--no-progress"]) == 0
    out = capsys.readouterr().out
    accuracy = float(re.search(r"test/accuracy ([0-9.]+)", out).group(1))
    assert accuracy > 0.8  # 4 balanced classes: chance is 0.25
    assert "mlflow ui --backend-store-uri sqlite:///" in out
