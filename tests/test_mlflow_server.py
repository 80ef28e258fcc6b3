"""A real MLflow server over the store `zoo run` wrote serves the run through its REST API."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest
import requests

from zoo.cli.main import main


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def server(tmp_path):
    db = tmp_path / "mlruns.db"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    yield db, url, lambda: subprocess.Popen(
        [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", f"sqlite:///{db}",
         "--host", "127.0.0.1", "--port", str(port), "--workers", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)


def wait_healthy(url: str, proc: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        assert proc.poll() is None, "mlflow server exited"
        try:
            if requests.get(f"{url}/health", timeout=2).ok:
                return
        except requests.RequestException:
            pass
        time.sleep(1)
    raise TimeoutError("mlflow server did not start")


def test_server_reads_params_metrics_artifacts(server, write_spec, tiny_spec, tmp_path,
                                               monkeypatch, capsys):
    db, url, start = server
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(write_spec(tiny_spec)), "--no-progress",
                 "--tracking-uri", f"sqlite:///{db}"]) == 0
    run_id = capsys.readouterr().out.split("run ")[1].split()[0]
    proc = start()
    try:
        wait_healthy(url, proc)
        api = f"{url}/api/2.0/mlflow"
        run = requests.get(f"{api}/runs/get", params={"run_id": run_id}, timeout=30).json()["run"]
        params = {p["key"]: p["value"] for p in run["data"]["params"]}
        assert params["model.field.kind"] == "ncde" and params["train.epochs"] == "2"
        metrics = {m["key"] for m in run["data"]["metrics"]}
        assert {"train/loss", "val/accuracy", "test/accuracy"} <= metrics
        history = requests.get(f"{api}/metrics/get-history",
                               params={"run_id": run_id, "metric_key": "train/loss"},
                               timeout=30).json()["metrics"]
        assert sorted(m["step"] for m in history) == [1, 2]
        listed = requests.get(f"{api}/artifacts/list", params={"run_id": run_id},
                              timeout=30).json()
        assert {"spec.yaml", "checkpoints", "plots"} <= {f["path"] for f in listed["files"]}
        spec = requests.get(f"{url}/get-artifact", params={"path": "spec.yaml",
                                                          "run_uuid": run_id}, timeout=30)
        assert spec.ok and "kind: ncde" in spec.text
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_run_logs_to_a_server_by_uri(server, write_spec, tiny_spec, tmp_path, monkeypatch,
                                     capsys):
    db, url, start = server
    monkeypatch.chdir(tmp_path)
    proc = start()
    try:
        wait_healthy(url, proc)
        assert main(["run", str(write_spec(tiny_spec)), "--no-progress",
                     "--tracking-uri", url]) == 0
        out = capsys.readouterr().out
        assert f"open {url} in a browser" in out
        run_id = out.split("run ")[1].split()[0]
        run = requests.get(f"{url}/api/2.0/mlflow/runs/get", params={"run_id": run_id},
                           timeout=30).json()["run"]
        assert run["info"]["status"] == "FINISHED"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
