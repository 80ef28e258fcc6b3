"""The MLflow UI hand-off in a real browser (headless Chromium): docs/ui_check.py trains a tiny
run on a CSV, starts the UI with the command ``zoo run`` printed, opens the run page it printed
and the experiment's Models tab."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "docs"))
from ui_check import browser  # noqa: E402


@pytest.mark.skipif(browser() is None, reason="needs chromium (Debian: apt install chromium)")
@pytest.mark.slow
def test_run_page_shows_the_run_its_selected_epoch_and_its_logged_model(tmp_path):
    done = subprocess.run([sys.executable, str(REPO / "docs" / "ui_check.py"), str(tmp_path)],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    assert "/#/experiments/" in done.stdout and "/runs/" in done.stdout
    text = (tmp_path / "run_page.txt").read_text()
    assert "ui-check-seed0" in text and "zoo.best_epoch" in text and "test/accuracy" in text
    assert "Model registry" in text and "Agent versions" not in text  # not the GenAI workflow
    models = (tmp_path / "models_page.txt").read_text()
    assert "model Ready" in models and "ui-check-seed0" in models
    assert (tmp_path / "run_page.png").read_bytes()[:4] == b"\x89PNG"
