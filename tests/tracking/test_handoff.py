"""The hand-off to MLflow after `zoo run`: the printed UI command runs as printed, the run's
URL, the selected epoch and the test metrics at its step, the run's description, and the
warning for a store whose artifacts are not beside it."""

from __future__ import annotations

import copy
import io
import os
import re
import shlex
import shutil
import socket
import subprocess
import time
from contextlib import redirect_stderr, redirect_stdout

import pytest
import requests
import yaml

from conftest import TINY_SPEC
from zoo.cli.main import main
from zoo.tracking.mlflow_run import EXPERIMENT_KIND, open_client, run_url


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def zoo_run(args, capsys):
    code = main(["run", *args, "--no-progress"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out, out.err


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """One tiny run (shared by the module) in ``FOLDER/mlruns.db``:
    (stdout, stderr, client, run, store uri, FOLDER)."""
    folder = tmp_path_factory.mktemp("handoff")
    spec = copy.deepcopy(TINY_SPEC)
    spec["name"] = "tiny-handoff"
    spec["train"]["epochs"] = 3
    path = folder / "tiny.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = main(["run", str(path), "--no-progress"])
    finally:
        os.chdir(cwd)
    assert code == 0, err.getvalue()
    uri = f"sqlite:///{folder / 'mlruns.db'}"
    client = open_client(uri)
    [exp] = [e for e in client.search_experiments() if e.name != "Default"]
    [run] = client.search_runs([exp.experiment_id])
    return out.getvalue(), err.getvalue(), client, run, uri, folder


def printed_command(out: str) -> list[str]:
    line = re.search(r"^browse it with: (.+)$", out, re.M).group(1)
    return shlex.split(line)


@pytest.mark.slow
def test_printed_ui_command_runs_as_printed(finished, tmp_path):
    """Started as printed (on a free port), from another folder and with no venv on PATH,
    it serves the UI."""
    out, _, _, run, uri, _ = finished
    args = printed_command(out)
    assert os.path.isabs(args[0]) and args[args.index("--backend-store-uri") + 1] == uri
    assert args[args.index("--port") + 1] == "5000"
    port = free_port()
    args[args.index("--port") + 1] = str(port)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = "/usr/bin:/bin"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = subprocess.Popen(args, cwd=elsewhere, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline, page = time.time() + 180, None
        while time.time() < deadline and page is None:
            assert proc.poll() is None, proc.communicate()[1][-2000:]
            try:
                page = requests.get(f"http://127.0.0.1:{port}/", timeout=2)
            except requests.RequestException:
                time.sleep(0.5)
        assert page is not None and page.ok and "<html" in page.text.lower()
        api = f"http://127.0.0.1:{port}/ajax-api/2.0/mlflow/runs/get"
        got = requests.get(api, params={"run_id": run.info.run_id}, timeout=30)
        assert got.ok and got.json()["run"]["info"]["run_id"] == run.info.run_id
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_run_url_and_experiment_kind(finished):
    out, _, client, run, _, _ = finished
    exp_id, run_id = run.info.experiment_id, run.info.run_id
    url = f"http://127.0.0.1:5000/#/experiments/{exp_id}/runs/{run_id}" \
        "?workflowType=machine_learning"
    assert f"run page: {url}" in out.splitlines()
    # the experiment opens on its runs list, not MLflow 3's GenAI traces page
    key, kind = EXPERIMENT_KIND
    assert client.get_experiment(exp_id).tags[key] == kind
    assert run_url("http://host:5000/", "7", "abc") == \
        "http://host:5000/#/experiments/7/runs/abc?workflowType=machine_learning"
    assert run_url("sqlite:////x.db", "7") == \
        "http://127.0.0.1:5000/#/experiments/7/runs?workflowType=machine_learning"


def test_best_epoch_and_test_metrics_at_its_step(finished):
    out, _, client, run, _, _ = finished
    run_id = run.info.run_id
    best = int(re.search(r"best epoch (\d+)", out).group(1))
    assert run.data.tags["zoo.best_epoch"] == str(best)
    assert run.data.metrics["best_epoch"] == best
    val = client.get_metric_history(run_id, "val/accuracy")
    assert max(val, key=lambda m: (m.value, -m.step)).step == best  # the selected epoch
    for key in ("test/accuracy", "test/loss", "best_epoch"):
        [metric] = client.get_metric_history(run_id, key)
        assert metric.step == best, key
    assert sorted(m.step for m in client.get_metric_history(run_id, "train/loss")) == [1, 2, 3]


def test_run_description(finished):
    _, _, _, run, uri, _ = finished
    note = run.data.tags["mlflow.note.content"]
    assert note.startswith("**tiny-handoff**")
    assert "data: `irregular_sines`" in note and "field `ncde`" in note
    assert "solver: `torchdiffeq` (method rk4" in note
    assert f"zoo run --resume {run.info.run_id} --tracking-uri {uri}" not in note  # finished
    assert "Test metrics of the best epoch" in note
    assert f"`test/accuracy` {run.data.metrics['test/accuracy']:.4f}" in note


def test_copied_store_warns(finished, write_spec, tiny_spec, tmp_path, monkeypatch, capsys):
    """A store copied without its artifacts folder still points at the original one: warned."""
    _, err, _, _, _, original = finished
    monkeypatch.chdir(tmp_path)
    assert "WARNING" not in err
    moved = tmp_path / "copy"
    moved.mkdir()
    shutil.copy(original / "mlruns.db", moved / "mlruns.db")
    tiny_spec["name"] = "tiny-handoff"
    tiny_spec["train"]["epochs"] = 1
    _, err = zoo_run([str(write_spec(tiny_spec, "again.yaml")), "--tracking-uri",
                      f"sqlite:///{moved / 'mlruns.db'}"], capsys)
    assert f"not to {moved / 'mlartifacts'} beside the store" in err
    assert str(original / "mlartifacts") in err


def test_the_ui_command_names_a_relative_store_by_its_absolute_path(tmp_path, monkeypatch):
    from zoo.tracking.mlflow_run import ui_command

    monkeypatch.chdir(tmp_path)
    args = shlex.split(ui_command("sqlite:///runs/m.db"))
    assert args[args.index("--backend-store-uri") + 1] == f"sqlite:///{tmp_path}/runs/m.db"
